//! `tfreq`: the command line over the library. It parses arguments, calls the
//! library, renders, and maps errors to exit codes: 0 clean, 1 findings that fail,
//! 2 unreadable input or usage error. A closed pipe ends the program quietly.
//!
//! [`run`] is the whole command: the `tfreq` binary (`cli/src/main.rs`) calls it with
//! [`Process::owned`], the Python package's `tfreq` command (`python/src/lib.rs`) with
//! what its caller allows.
#![warn(missing_docs)]

pub(crate) mod args;
pub(crate) mod batch;
pub(crate) mod build;
pub(crate) mod check;
pub(crate) mod common;
pub(crate) mod convert;
pub(crate) mod diff;
pub(crate) mod input;
pub(crate) mod inspect;
pub(crate) mod keys;
#[cfg(feature = "net")]
pub(crate) mod live;
#[cfg(feature = "net")]
pub(crate) mod load;
pub(crate) mod output;
pub(crate) mod process;
#[cfg(feature = "net")]
pub(crate) mod record;
#[cfg(feature = "net")]
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod scrub;
#[cfg(feature = "net")]
pub(crate) mod send;
pub(crate) mod sigbus;
pub(crate) mod signature;
pub(crate) mod synth;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

pub use process::Process;

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
    /// Print nothing on stderr but errors (no progress, no notes), and results on stdout.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
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
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        after_help = "Install, for example:\n  bash: tfreq completions bash > ~/.local/share/bash-completion/completions/tfreq\n  zsh:  tfreq completions zsh > \"${fpath[1]}/_tfreq\"\n  fish: tfreq completions fish > ~/.config/fish/completions/tfreq.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), of tfreq or of one command.
    #[command(after_help = "Read it with: tfreq man | man -l -")]
    Man {
        /// A command, for its own page (tfreq-inspect(1) and so on).
        command: Option<String>,
    },
    /// Send requests to a live service (EAS, TF Serving gRPC or REST) and show the answers.
    #[cfg(feature = "net")]
    Send(send::Args),
    /// Does the warm-up warm? Send it, then production requests, and time first calls.
    #[cfg(feature = "net")]
    Replay(replay::Args),
    /// Load a live service: throughput, latency percentiles, errors, cold first calls.
    #[cfg(feature = "net")]
    Load(load::Args),
    /// Record a warm-up from live traffic: a proxy keeping one request per key.
    #[cfg(feature = "net")]
    Record(record::Args),
}

/// The whole command: `args` as `std::env::args_os()` gives them (the program name
/// first), in a process the command may treat as `process` says. The Python package's
/// `tfreq` command calls this too (`python/src/lib.rs`).
///
/// ```
/// use std::process::ExitCode;
///
/// let args = ["tfreq", "--version"].map(std::ffi::OsString::from);
/// assert_eq!(tfreq_cli::run(args, tfreq_cli::Process::embedded()), ExitCode::SUCCESS);
/// ```
pub fn run(args: impl IntoIterator<Item = std::ffi::OsString>, process: Process) -> ExitCode {
    process::set(process);
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
            if let Some(name) = network_command(&args) {
                eprintln!(
                    "tfreq: error: `{name}` talks to live services, and this tfreq was built without its network clients (the `net` feature); build it with them: cargo install --locked --path cli (the default features), or pip install . for the Python package's"
                );
                return ExitCode::from(2);
            }
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    cli.color.apply();
    common::set_quiet(cli.quiet);
    common::set_dtype_options(matches!(
        cli.cmd,
        Cmd::Inspect(_) | Cmd::Diff(_) | Cmd::Keys(_) | Cmd::Warmup(_)
    ));
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
        Cmd::Completions { shell } => completions(shell),
        Cmd::Man { command } => man(command.as_deref()),
        #[cfg(feature = "net")]
        Cmd::Send(a) => send::run(a),
        #[cfg(feature = "net")]
        Cmd::Replay(a) => replay::run(a),
        #[cfg(feature = "net")]
        Cmd::Load(a) => load::run(a),
        #[cfg(feature = "net")]
        Cmd::Record(a) => record::run(a),
    };
    common::finish(result)
}

/// The network command `args` names, in a build without them (`send`, `replay`, `load`,
/// `record` need the `net` feature).
fn network_command(args: &[std::ffi::OsString]) -> Option<&'static str> {
    if cfg!(feature = "net") {
        return None;
    }
    // Called only when clap found no command of that name, so any word that names a
    // network command is the one (`tfreq --color never send ...`).
    args.iter().skip(1).find_map(|a| {
        ["send", "replay", "load", "record"]
            .into_iter()
            .find(|n| a == n)
    })
}

fn completions(shell: clap_complete::Shell) -> common::Outcome {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut Cli::command(), "tfreq", &mut out);
    std::io::Write::flush(&mut out)?;
    Ok(0)
}

fn man(command: Option<&str>) -> common::Outcome {
    let mut cmd = Cli::command();
    cmd.build();
    let page = match command {
        None => cmd,
        Some(name) => {
            let sub = cmd
                .find_subcommand(name)
                .ok_or_else(|| {
                    common::Failure::msg(format!("no command {name:?}; see tfreq --help"))
                })?
                .clone();
            // The page of a command is named as man(1) names it: tfreq-inspect.
            let full: &'static str = Box::leak(format!("tfreq-{name}").into_boxed_str());
            sub.name(full).bin_name(full)
        }
    };
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(page).render(&mut out)?;
    std::io::Write::flush(&mut out)?;
    Ok(0)
}
