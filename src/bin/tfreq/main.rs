//! `tfreq`: the command line over the library. It parses arguments, calls the
//! library, renders, and maps errors to exit codes: 0 clean, 1 findings that fail,
//! 2 unreadable input or usage error. A closed pipe ends the program quietly.

mod build;
mod check;
mod common;
mod convert;
mod diff;
mod inspect;
mod keys;
mod scrub;
mod signature;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tfreq",
    version,
    about = "Build, inspect and validate TensorFlow prediction requests (PAI-EAS and TF Serving) and their warm-up files",
    after_help = "Exit codes: 0 clean, 1 findings that fail, 2 unreadable input or usage error."
)]
struct Cli {
    /// When to colour output: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, global = true, value_enum, default_value_t = common::Color::Auto)]
    color: common::Color,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode a request or response file and show what it holds.
    Inspect(inspect::Args),
    /// Will a warm-up warm the executor production uses? Compare requests.
    Diff(diff::Args),
    /// Check requests against a SavedModel's signatures.
    Check(check::Args),
    /// Print a model's signatures.
    Signature(signature::Args),
    /// Build a request file from REST JSON or text format.
    Build(build::Args),
    /// Convert between EAS, TF Serving and TFRecord warm-up files.
    Convert(convert::Args),
    /// Replace a request's values, keeping its names, dtypes and shapes.
    Scrub(scrub::Args),
    /// Count the distinct executor keys in request logs.
    Keys(keys::KeysArgs),
    /// Write a scrubbed warm-up covering the most frequent production keys.
    Warmup(keys::WarmupArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    cli.color.apply();
    let result = match cli.cmd {
        Cmd::Inspect(a) => inspect::run(a),
        Cmd::Diff(a) => diff::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Signature(a) => signature::run(a),
        Cmd::Convert(a) => convert::run(a),
        Cmd::Build(a) => build::run(a),
        Cmd::Scrub(a) => scrub::run(a),
        Cmd::Keys(a) => keys::run_keys(a),
        Cmd::Warmup(a) => keys::run_warmup(a),
    };
    common::finish(result)
}
