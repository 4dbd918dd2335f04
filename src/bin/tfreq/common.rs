//! What every subcommand shares: colour choice, stdout, error → exit code.

use std::io::{self, Write};
use std::process::ExitCode;

/// Colour choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

impl Color {
    pub fn apply(self) {
        match self {
            Color::Auto => {}
            Color::Always => anstream::ColorChoice::Always.write_global(),
            Color::Never => anstream::ColorChoice::Never.write_global(),
        }
    }
}

/// Standard output with colour codes kept or stripped as the terminal and
/// `NO_COLOR` / `--color` say, buffered.
pub fn stdout() -> io::BufWriter<anstream::AutoStream<io::Stdout>> {
    io::BufWriter::with_capacity(1 << 16, anstream::AutoStream::auto(io::stdout()))
}

/// A failure a command reports: exit 2 with this message, unless a broken pipe.
pub struct Failure(pub String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

pub type Outcome = Result<u8, Failure>;

fn is_broken_pipe(msg: &str) -> bool {
    msg.contains("Broken pipe") || msg.contains("os error 32")
}

/// Maps a command's outcome to the process exit code.
pub fn finish(r: Outcome) -> ExitCode {
    match r {
        Ok(code) => ExitCode::from(code),
        Err(Failure(msg)) if is_broken_pipe(&msg) => ExitCode::from(0),
        Err(Failure(msg)) => {
            let mut err = anstream::stderr();
            let _ = writeln!(err, "tfreq: error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Prefixes an error with the file it is about.
pub fn in_file(file: &str, e: impl std::fmt::Display) -> Failure {
    Failure(format!("{file}: {e}"))
}

/// Writes a command's binary output: to `-o FILE` atomically, to standard output for
/// `-o -`, and with no `-o` to standard output only when it is not a terminal.
pub fn write_output(out: Option<&std::path::Path>, data: &[u8]) -> Result<(), Failure> {
    use std::io::IsTerminal;
    match out {
        Some(p) => tfreq::io::write_atomic(p, data).map_err(Failure::from),
        None if io::stdout().is_terminal() => Err(Failure(
            "refusing to write binary output to a terminal; give -o FILE, or -o - to force".into(),
        )),
        None => tfreq::io::write_atomic(std::path::Path::new("-"), data).map_err(Failure::from),
    }
}

/// The output layout `--wire` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutWire {
    /// One bare EAS PredictRequest.
    Eas,
    /// One bare TF Serving PredictRequest.
    TfServing,
    /// A TF Serving warm-up file: TFRecord of PredictionLog{predict_log}.
    Tfrecord,
}

impl From<OutWire> for tfreq::formats::Target {
    fn from(w: OutWire) -> Self {
        match w {
            OutWire::Eas => tfreq::formats::Target::Eas,
            OutWire::TfServing => tfreq::formats::Target::TfServing,
            OutWire::Tfrecord => tfreq::formats::Target::TfRecord,
        }
    }
}
