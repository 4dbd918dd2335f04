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

/// Standard output for a format that never writes colour codes (text format, JSON):
/// passed through as written, so nothing scans it for codes to strip. The same type
/// as [`stdout`], so a command picks one by its `--format`.
pub fn stdout_plain() -> io::BufWriter<anstream::AutoStream<io::Stdout>> {
    io::BufWriter::with_capacity(1 << 16, anstream::AutoStream::always_ansi(io::stdout()))
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

/// What an input file is (`--from`), for every command that reads requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFrom {
    /// Detect from the bytes, the file name and its place.
    #[default]
    Auto,
    /// One bare EAS request or response.
    Eas,
    /// One bare TF Serving request or response.
    TfServing,
    /// TFRecord of PredictionLog (a TF Serving warm-up file or request log).
    Tfrecord,
    /// PredictionLog messages concatenated without TFRecord framing.
    UnframedLogs,
    /// Protobuf text format (what `inspect --format text` prints).
    Text,
    /// EAS text warm-up: one string request per line.
    EasText,
    /// TF Serving REST predict JSON (one body, or JSON lines).
    Json,
}

impl InputFrom {
    /// The library's input format.
    pub fn format(self) -> tfreq::formats::detect::InputFormat {
        use tfreq::formats::detect::InputFormat as F;
        match self {
            InputFrom::Auto => F::Auto,
            InputFrom::Eas => F::Eas,
            InputFrom::TfServing => F::TfServing,
            InputFrom::Tfrecord => F::TfRecord,
            InputFrom::UnframedLogs => F::UnframedLogs,
            InputFrom::Text => F::Text,
            InputFrom::EasText => F::EasText,
            InputFrom::Json => F::Json,
        }
    }
}

/// Dtypes for REST JSON inputs: from a model's signature and `NAME=DTYPE` annotations;
/// `None` when neither is given.
pub fn rest_dtypes(
    model: Option<&std::path::Path>,
    signature: &str,
    dtypes: &[String],
) -> Result<Option<tfreq::formats::rest_json::Dtypes>, Failure> {
    use tfreq::formats::rest_json::{dtypes_from_model, Dtypes};
    if dtypes.is_empty() && model.is_none() {
        return Ok(None);
    }
    let mut d = match model {
        Some(p) => {
            let (model, _) = tfreq::formats::savedmodel::read_model(p)?;
            dtypes_from_model(&model, signature)
                .map_err(|e| Failure(format!("{}: {e}", p.display())))?
        }
        None => Dtypes::default(),
    };
    for s in dtypes {
        d.annotate(s)?;
    }
    Ok(Some(d))
}

/// The `signature_name` of the first REST JSON body in `bytes` (`serving_default`
/// when it names none), for picking the model's signature.
pub fn json_signature(bytes: &[u8]) -> String {
    let first = serde_json::Deserializer::from_slice(bytes)
        .into_iter::<serde_json::Value>()
        .next();
    match first {
        Some(Ok(v)) => v
            .get("signature_name")
            .and_then(|s| s.as_str())
            .unwrap_or("serving_default")
            .to_string(),
        _ => "serving_default".to_string(),
    }
}

/// The library's error, with the option that allows a lossy conversion named.
pub fn lossy_hint(e: tfreq::Error) -> String {
    match e {
        e @ tfreq::Error::WouldLose { .. } => {
            format!("{e}\n(--lossy writes it without them, listing them on stderr)")
        }
        e => e.to_string(),
    }
}

/// Lists on stderr what a conversion or scrub left out of `file`.
pub fn report_left_out(file: &str, why: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let mut err = anstream::stderr();
    let _ = writeln!(err, "tfreq: warning: {file}: {why}:");
    for i in items {
        let _ = writeln!(err, "  {i}");
    }
}
