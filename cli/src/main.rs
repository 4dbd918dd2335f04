//! The `tfreq` binary: the command of `tfreq_cli` (src/lib.rs) in a process of its own.

use std::process::ExitCode;

fn main() -> ExitCode {
    tfreq_cli::run(std::env::args_os(), tfreq_cli::Process::owned())
}
