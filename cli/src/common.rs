//! What every subcommand shares: colour choice, `--quiet`, progress, stdout, outputs,
//! and the typed error a command fails with, mapped to an exit code in one place.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

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

static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `--quiet`: nothing on stderr but errors, no progress.
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

static DTYPE_OPTIONS: AtomicBool = AtomicBool::new(false);

/// Says that the running command takes `--model` and `--dtype`, so the hint for REST
/// JSON without dtypes names them (otherwise it names `tfreq build`).
pub fn set_dtype_options(on: bool) {
    DTYPE_OPTIONS.store(on, Ordering::Relaxed);
}

/// What the command line adds after a library error's message: the option that
/// settles it (the library's messages name no option). Empty for most errors.
pub fn hint(e: &tfreq::Error) -> String {
    use tfreq::ErrorDetail as D;
    match e.root() {
        D::Ambiguous(_) => "; pass --from eas or --from tf-serving to choose".into(),
        D::TooLarge { .. } => " (--max-size)".into(),
        D::Io { source, .. } if source.kind() == io::ErrorKind::OutOfMemory => {
            "; give a lower --max-size".into()
        }
        D::NoDtypeFor { input } => {
            format!(": give --dtype {input}=DT_... or --model METADATA.json")
        }
        D::NotRequestText(_) => " or read with --from eas-text".into(),
        D::BareInputs => ": give one --dtype or a model with one input".into(),
        D::OneRequestOnly { .. } => " (write --wire tfrecord for several)".into(),
        D::NoDtypes if DTYPE_OPTIONS.load(Ordering::Relaxed) => {
            "; give --model PATH (the signature's dtypes) or --dtype NAME=DT_...".into()
        }
        D::NoDtypes => "; tfreq build FILE --model PATH -o OUT makes a request file of it".into(),
        D::WarmupNotTfRecord {
            convertible: true, ..
        } => "; fix: tfreq convert FILE --wire tfrecord -o FILE --overwrite-input (rewrites it in place)".into(),
        D::Unframed(_) => ". Fix: tfreq convert FILE --wire tfrecord -o tf_serving_warmup_requests (or read the records as they are with --from unframed-logs)".into(),
        D::Other { source, .. }
            if source.is::<tfreq::scan::TooManyKeys>()
                || source.is::<tfreq::analysis::TooManyShapeKeys>() =>
        {
            " (--max-keys: a higher one holds more keys in memory)".into()
        }
        _ => String::new(),
    }
}

/// A library error's message with the command line's [`hint`] after it.
pub fn with_hint(e: &tfreq::Error) -> String {
    format!("{e}{}", hint(e))
}

/// A network error's message in this command line's terms: the flag that sets the
/// option the library's message describes.
#[cfg(feature = "net")]
pub fn net_text(e: &tfreq::net::NetError) -> String {
    use tfreq::net::NetError;
    let s = tfreq::sanitize;
    match e {
        NetError::Timeout(_) => format!("{e} (--timeout)"),
        NetError::TooLarge { .. } => e.to_string().replacen(
            "; reading stopped",
            " (--max-response-size); reading stopped",
            1,
        ),
        NetError::UnknownProtocol => format!("{e}; give --protocol"),
        NetError::NoModelName(_) => format!("{e}; give --model-name"),
        NetError::Untrusted(t) => format!(
            "could not reach the service: {} (the server's TLS certificate is not trusted: a certificate from a private CA needs --cacert FILE, that CA's PEM certificate)",
            s(t)
        ),
        _ => e.to_string(),
    }
}

/// Standard output with colour codes kept or stripped as the terminal and
/// `NO_COLOR` / `--color` say, buffered.
pub fn stdout() -> io::BufWriter<anstream::AutoStream<io::Stdout>> {
    io::BufWriter::with_capacity(1 << 16, anstream::AutoStream::auto(io::stdout()))
}

/// The colour a human report is written in on standard output: none when colour is off
/// there (a pipe or a file, `NO_COLOR`, `--color never`), so the writers leave the codes
/// out themselves and nothing scans their text for codes to strip.
pub fn human_color() -> tfreq::render::Color {
    if anstream::AutoStream::choice(&io::stdout()) == anstream::ColorChoice::Never {
        tfreq::render::Color::Never
    } else {
        tfreq::render::Color::Always
    }
}

/// Standard output for a human report and the colour to write it in ([`human_color`]):
/// [`stdout_plain`] when colour is off, [`stdout`] when it is on.
pub fn human_stdout() -> (
    io::BufWriter<anstream::AutoStream<io::Stdout>>,
    tfreq::render::Color,
) {
    match human_color() {
        tfreq::render::Color::Never => (stdout_plain(), tfreq::render::Color::Never),
        tfreq::render::Color::Always => (stdout(), tfreq::render::Color::Always),
    }
}

/// Standard output for a format that never writes colour codes (text format, JSON):
/// passed through as written, so nothing scans it for codes to strip. The same type
/// as [`stdout`], so a command picks one by its `--format`.
pub fn stdout_plain() -> io::BufWriter<anstream::AutoStream<io::Stdout>> {
    io::BufWriter::with_capacity(1 << 16, anstream::AutoStream::always_ansi(io::stdout()))
}

/// A failure a command reports: exit 2 with its message, unless standard output was
/// closed under us (a reader such as `head` went away), which ends the run quietly.
/// It stays typed until [`finish`], which looks for the closed pipe by the I/O error's
/// kind, never by its text.
#[derive(Debug)]
pub enum Failure {
    /// An error of the library or of I/O, which names its file where it has one.
    Error(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Something wrong with a file, whose error does not name it.
    InFile { file: String, source: Box<Failure> },
    /// A usage error or other condition, in words.
    Msg(String),
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Error(Box::new(e))
    }
}

impl Failure {
    /// A failure in words.
    pub fn msg(s: impl Into<String>) -> Self {
        Failure::Msg(s.into())
    }

    /// Whether the message already starts by naming `file`.
    fn names(&self, file: &str) -> bool {
        match self {
            Failure::InFile { file: f, .. } => f == file,
            Failure::Error(e) => match e.downcast_ref::<tfreq::Error>().map(tfreq::Error::detail) {
                Some(tfreq::ErrorDetail::Io { path, .. }) => path == file,
                Some(tfreq::ErrorDetail::InFile { file: f, .. }) => f == file,
                _ => false,
            },
            Failure::Msg(_) => false,
        }
    }

    /// The message without the leading `file: ` when it names `file` (for reports that
    /// show the file in a field of its own).
    pub fn message_without(&self, file: &str) -> String {
        match self {
            Failure::InFile { file: f, source } if f == file => source.to_string(),
            Failure::Error(e) => match e.downcast_ref::<tfreq::Error>() {
                Some(e) => format!("{}{}", e.message_without(file), hint(e)),
                None => self.to_string(),
            },
            _ => self.to_string(),
        }
    }

    /// Whether this is a write to a closed pipe (`io::ErrorKind::BrokenPipe` anywhere
    /// in the chain of causes).
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Failure::InFile { source, .. } => source.is_broken_pipe(),
            Failure::Msg(_) => false,
            Failure::Error(e) => {
                let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e.as_ref());
                while let Some(err) = cur {
                    if let Some(io) = err.downcast_ref::<io::Error>()
                        && io.kind() == io::ErrorKind::BrokenPipe
                    {
                        return true;
                    }
                    cur = err.source();
                }
                false
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Error(e) => match e.downcast_ref::<tfreq::Error>() {
                Some(e) => f.write_str(&with_hint(e)),
                #[cfg(feature = "net")]
                None if e.is::<tfreq::net::NetError>() => {
                    let net = e.downcast_ref::<tfreq::net::NetError>();
                    f.write_str(&net.map(net_text).unwrap_or_default())
                }
                None => write!(f, "{e}"),
            },
            Failure::InFile { file, source } => {
                write!(f, "{}: {source}", tfreq::sanitize(file))
            }
            Failure::Msg(s) => f.write_str(s),
        }
    }
}

pub type Outcome = Result<u8, Failure>;

/// Prints an error on stderr as every command does (`tfreq: error: …`).
pub fn report_error(e: &Failure) {
    let mut err = anstream::stderr();
    // File names, field paths and what a server said come from outside: shown escaped
    // (src/escape.rs). The file names in a message are escaped where it is made, so the
    // line breaks left are the message's own (a list of what a conversion leaves out).
    let text = e.to_string();
    let lines: Vec<_> = text.split('\n').map(tfreq::sanitize).collect();
    let _ = writeln!(err, "tfreq: error: {}", lines.join("\n"));
}

/// Maps a command's outcome to the process exit code.
pub fn finish(r: Outcome) -> ExitCode {
    match r {
        Ok(code) => ExitCode::from(code),
        Err(f) if f.is_broken_pipe() => ExitCode::from(0),
        Err(f) => {
            report_error(&f);
            ExitCode::from(2)
        }
    }
}

/// An error about `file`, naming it once: not again when the error names it already.
pub fn in_file(file: &str, e: impl Into<Failure>) -> Failure {
    let f = e.into();
    if f.names(file) {
        f
    } else {
        Failure::InFile {
            file: file.to_string(),
            source: Box::new(f),
        }
    }
}

/// `n thing` or `n things`, with `n` in digit groups (`1 error`, `12,345 requests`):
/// the library's renderers' own.
pub use tfreq::render::plural as count;

/// Refuses standard input (`-`) named more than once among a command's inputs: it can
/// be read only once, and the second reading would see it empty (a usage error, exit 2).
pub fn stdin_at_most_once<'a>(inputs: impl IntoIterator<Item = &'a Path>) -> Result<(), Failure> {
    let n = inputs.into_iter().filter(|p| *p == Path::new("-")).count();
    if n > 1 {
        return Err(Failure::msg(format!(
            "standard input (-) is named {n} times among the inputs: it can be read only once; save it to a file and name that"
        )));
    }
    Ok(())
}

/// Refuses an `-o` that is one of the inputs (the same file, whatever the path says),
/// unless the user gave `--overwrite-input`. The replacement itself would be safe (the
/// input is read first and the output renamed into place), but it destroys what may be
/// the only copy of a captured request.
pub fn refuse_same_file(
    out: Option<&Path>,
    inputs: &[&Path],
    overwrite: bool,
) -> Result<(), Failure> {
    let Some(out) = out else { return Ok(()) };
    if overwrite || out == Path::new("-") {
        return Ok(());
    }
    let regular = |p: &Path| std::fs::metadata(p).map(|m| m.is_file()).unwrap_or(false);
    for input in inputs {
        if regular(out) && same_file(out, input) {
            return Err(Failure::msg(format!(
                "-o {} is the input {}: writing it would replace the input; give another output, or --overwrite-input to replace it",
                out.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Writes a command's binary output: to `-o FILE` (see `crate::output::write_atomic`), to
/// standard output for `-o -`, and with no `-o` to standard output only when it is not
/// a terminal.
pub fn write_output(out: Option<&Path>, data: &[u8]) -> Result<(), Failure> {
    match out {
        Some(p) => Ok(crate::output::write_atomic(p, data)?),
        None if io::stdout().is_terminal() => Err(Failure::msg(
            "refusing to write binary output to a terminal; give -o FILE, or -o - to force",
        )),
        None => Ok(crate::output::write_atomic(Path::new("-"), data)?),
    }
}

/// [`write_output`] for output made as it is written (see
/// `crate::output::write_atomic_with`).
pub fn write_output_with(
    out: Option<&Path>,
    produce: &mut crate::output::Produce,
) -> Result<(), Failure> {
    match out {
        Some(p) => Ok(crate::output::write_atomic_with(p, produce)?),
        None if io::stdout().is_terminal() => Err(Failure::msg(
            "refusing to write binary output to a terminal; give -o FILE, or -o - to force",
        )),
        None => Ok(crate::output::write_atomic_with(Path::new("-"), produce)?),
    }
}

/// Inputs at least this large (in all) get a progress display.
pub const PROGRESS_MIN_BYTES: u64 = 100 << 20;

/// A progress display on stderr: shown only when stderr is a terminal, `--quiet` was
/// not given, the caller's output is not machine-read (JSON), and the inputs add up to
/// [`PROGRESS_MIN_BYTES`] or more. Otherwise every call is a no-op.
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    /// A spinner for work over `inputs`, unless one of the conditions above says no.
    pub fn new(inputs: &[PathBuf], machine_output: bool) -> Progress {
        if machine_output || quiet() || !io::stderr().is_terminal() {
            return Progress(None);
        }
        let total: u64 = inputs
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum();
        if total < PROGRESS_MIN_BYTES {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Progress(Some(bar))
    }

    /// Says what is being done now.
    pub fn step(&self, msg: impl Into<String>) {
        if let Some(b) = &self.0 {
            b.set_message(msg.into());
        }
    }

    /// Runs `f` with the display hidden, so a message printed on stderr is not torn.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// `1.2 GB`-style size for progress messages.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Dtypes for REST JSON inputs: from a model's signature and `NAME=DTYPE` annotations;
/// `None` when neither is given.
pub fn rest_dtypes(
    model: Option<&std::path::Path>,
    dtypes: &[String],
) -> Result<Option<tfreq::formats::Dtypes>, Failure> {
    use tfreq::formats::{Dtypes, dtypes_for_model};
    if dtypes.is_empty() && model.is_none() {
        return Ok(None);
    }
    // Every signature's: each REST body is read against the one it names.
    let mut d = match model {
        Some(p) => {
            let (model, _) = tfreq::formats::read_model(p)?;
            dtypes_for_model(&model).map_err(|e| in_file(&p.display().to_string(), e))?
        }
        None => Dtypes::default(),
    };
    for s in dtypes {
        d.annotate(s)?;
    }
    Ok(Some(d))
}

/// The library's error, with the option that allows a lossy conversion named.
pub fn lossy_hint(e: tfreq::Error) -> Failure {
    match e.detail() {
        tfreq::ErrorDetail::WouldLose { .. } => Failure::msg(format!(
            "{e}\n(--lossy writes it without them, listing them on stderr)"
        )),
        _ => Failure::from(e),
    }
}

/// Lists on stderr what a conversion or scrub left out of `file`.
pub fn report_left_out(file: &str, why: &str, items: &[String]) {
    if items.is_empty() || quiet() {
        return;
    }
    let mut err = anstream::stderr();
    let _ = writeln!(err, "tfreq: warning: {}: {why}:", tfreq::sanitize(file));
    for i in items {
        let _ = writeln!(err, "  {}", tfreq::sanitize(i));
    }
}

/// `1234567` as `1,234,567`, as the command line prints counts (the library's
/// renderers' own).
pub use tfreq::render::group_digits;

/// Whether two paths name the same existing file (after following links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        (Ok(ma), Ok(mb)) => {
            use std::os::unix::fs::MetadataExt;
            ma.dev() == mb.dev() && ma.ino() == mb.ino()
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_grouped_in_threes() {
        for (n, s) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (2147483648, "2,147,483,648"),
        ] {
            assert_eq!(group_digits(n), s);
        }
    }

    #[test]
    fn the_same_file_by_any_path() {
        // Tests run in the package's directory, cli/.
        let p = Path::new("../tests/data/eas/spec_vector.bin");
        assert!(same_file(p, &Path::new(".").join(p)));
        assert!(!same_file(p, "../tests/data/eas/faq_prod.bin".as_ref()));
    }
}
