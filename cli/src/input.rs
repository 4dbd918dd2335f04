//! The command line's one input layer. Every command that reads requests names its
//! inputs as files, `-` (standard input) or directories (every file under them, in
//! name order) and reads them through [`Inputs`], with the same flags ([`InputArgs`]:
//! `--from`, `--max-size`, `--dtype`) and the same rule: a file that cannot be read is
//! reported in its place (`tfreq: error: FILE: …`), the run goes on with the others,
//! and the command exits 2 at the end (README, "Conventions of every command").

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bytes::Bytes;
use tfreq::analysis::Finding;
use tfreq::analysis::Unreadable;
use tfreq::formats::Compression;
use tfreq::formats::Dtypes;
use tfreq::formats::{Container, ContainerKind, Content, InputOptions, LogReading, Opened};
use tfreq::{Kind, Message};

use crate::args::InputFrom;
use crate::common::{Failure, Progress, human_size, in_file, report_error};

/// The flags of every command that reads requests.
#[derive(clap::Args, Clone, Debug)]
pub struct InputArgs {
    /// What the inputs are, instead of detecting it.
    #[arg(long = "from", value_enum, default_value_t = InputFrom::Auto)]
    pub from: InputFrom,
    /// Refuse an input larger than this, whether a file, a pipe, a device or standard
    /// input, counted after inflating a gzip or zlib input: bytes, or a number with K,
    /// M or G (powers of 1024). Default 2G for an input read whole; a log streamed
    /// record by record (standard input, a gzip log) is then bounded per record only,
    /// unless --max-size is given.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_size: Option<u64>,
    /// A REST JSON input's dtype (JSON carries none; a --model gives the rest):
    /// NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    pub dtypes: Vec<String>,
}

/// What the commands that write a converted input share (build, convert, scrub):
/// `--lossy`, `--overwrite-input` and the input's size cap. Each command words
/// `--lossy`'s help for what it can leave out (`mut_arg` on its `Args`).
#[derive(clap::Args, Clone, Debug)]
pub struct RewriteArgs {
    /// Write even when the output cannot carry everything the input says, listing what
    /// was left out on stderr.
    #[arg(long)]
    pub lossy: bool,
    /// Allow -o to name an input file and replace it (refused otherwise).
    #[arg(long)]
    pub overwrite_input: bool,
    #[command(flatten)]
    pub input: InputArgs,
}

impl RewriteArgs {
    /// Reads `input` whole (see [`Inputs::bytes`]), after refusing an
    /// `output` that would replace it without `--overwrite-input`; `model` gives REST
    /// JSON its dtypes. The bytes and the options to read them with.
    pub fn read(
        &self,
        input: &Path,
        output: Option<&Path>,
        model: Option<&Path>,
    ) -> Result<(bytes::Bytes, tfreq::formats::InputOptions), Failure> {
        crate::common::refuse_same_file(output, &[input], self.overwrite_input)?;
        let inputs = Inputs::new(&self.input, model);
        let (bytes, _) = inputs.bytes(input)?;
        let opts = inputs.options_for(input, &bytes)?;
        Ok((bytes, opts))
    }
}

impl InputArgs {
    /// The cap on an input read whole, and on one record of a streamed log:
    /// `--max-size`, or 2 GiB.
    pub fn limit(&self) -> u64 {
        self.max_size.unwrap_or(tfreq::DEFAULT_MAX_SIZE)
    }
}

/// `4096`, `64K`, `100M`, `2G` (also `KiB`, `MiB`, `GiB`) as bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of bytes, e.g. 4096, 64K, 100M, 2G"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{s:?}: unknown unit (use K, M, G or T)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?}: too large"))
}

/// A request read from a file, with where it came from.
// `stem` and `bytes` are read by the network commands only (send, replay, load).
#[cfg_attr(not(feature = "net"), allow(dead_code))]
pub struct Loaded {
    /// The file, as given.
    pub file: String,
    /// The file, and the record when the file holds records (`log (record 3)`).
    pub label: String,
    /// A short name for files saved per request (`faq_prod`, `warmup.3`).
    pub stem: String,
    /// The request.
    pub message: Message,
    /// Its own bytes in the file (for a `predict_log`, its request; for text or JSON,
    /// the encoding of what it says).
    pub bytes: Bytes,
}

/// What [`Inputs::requests_into`] hands each request to, and takes back what it was
/// given of a file that fails.
pub trait Sink {
    /// Where the sink is, to go back to.
    type Mark;
    /// Takes one request.
    fn put(&mut self, l: Loaded);
    /// Where the sink is now.
    fn mark(&mut self) -> Self::Mark;
    /// Forgets every request put since `mark`.
    fn rollback(&mut self, mark: Self::Mark);
}

/// The requests themselves, in order.
impl Sink for Vec<Loaded> {
    type Mark = usize;
    fn put(&mut self, l: Loaded) {
        self.push(l);
    }
    fn mark(&mut self) -> usize {
        self.len()
    }
    fn rollback(&mut self, mark: usize) {
        self.truncate(mark);
    }
}

/// The requests read from files, the findings about the files themselves (TF
/// Serving's warm-up loader limits, what detection found), by file, and the files that
/// could not be read.
#[derive(Default)]
pub struct Requests {
    /// Every request, in file order.
    pub requests: Vec<Loaded>,
    /// File findings, by file.
    pub problems: Vec<(String, Vec<Finding>)>,
    /// The files set aside, each with its error (already reported on stderr).
    pub unreadable: Vec<Unreadable>,
}

impl Requests {
    /// Adds the file findings and the unreadable files to a report.
    pub fn report_problems(&self, report: &mut tfreq::analysis::Report) {
        for (file, found) in &self.problems {
            report.add_problems(file, file, found.clone());
        }
        report.add_unreadable(self.unreadable.iter().cloned());
    }
}

/// How a command reads its inputs: its [`InputArgs`], and the model whose signatures
/// give REST JSON inputs their dtypes.
pub struct Inputs<'a> {
    args: &'a InputArgs,
    model: Option<&'a Path>,
    kind: Option<Kind>,
    rest: OnceLock<Result<Option<Dtypes>, String>>,
}

impl<'a> Inputs<'a> {
    /// Reads as `args` say; `model` (a `--model` path) gives REST JSON its dtypes.
    pub fn new(args: &'a InputArgs, model: Option<&'a Path>) -> Self {
        Inputs {
            args,
            model,
            kind: None,
            rest: OnceLock::new(),
        }
    }

    /// Reads every message as `kind` (request or response) instead of detecting it.
    pub fn kind(mut self, kind: Option<Kind>) -> Self {
        self.kind = kind;
        self
    }

    /// The input paths, each directory replaced by the files under it (in name order,
    /// hidden ones left out); standard input may be named once. Usage errors (a missing
    /// file is not one: it is reported when it is read).
    pub fn expand(&self, paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
        let mut out = Vec::new();
        for p in paths {
            if p.is_dir() {
                let before = out.len();
                walk(p, &mut out, 0)?;
                out[before..].sort();
                if out.len() == before {
                    return Err(Failure::msg(format!(
                        "{}: a directory with no files in it",
                        p.display()
                    )));
                }
            } else {
                out.push(p.clone());
            }
        }
        crate::common::stdin_at_most_once(out.iter().map(PathBuf::as_path))?;
        Ok(out)
    }

    /// The library's options for reading `paths` (for the scan of `keys`): the format,
    /// the size cap, mapping of large files, the dtypes for REST JSON.
    pub fn options<'p>(
        &self,
        paths: impl IntoIterator<Item = &'p Path>,
    ) -> Result<InputOptions, Failure> {
        let read =
            crate::sigbus::read_options(self.args.limit(), paths).max_streamed(self.args.max_size);
        let mut opts = InputOptions::new()
            .format(self.args.from.format())
            .read_options(read);
        opts.rest = self.dtypes()?;
        Ok(opts)
    }

    fn dtypes(&self) -> Result<Option<Dtypes>, Failure> {
        let r = self.rest.get_or_init(|| {
            crate::common::rest_dtypes(self.model, &self.args.dtypes).map_err(|e| e.to_string())
        });
        r.clone().map_err(Failure::msg)
    }

    /// Reads one input whole under the cap, inflating a gzip or zlib file (a compressed
    /// TFRecord log; offsets and record numbers are then those of the inflated
    /// stream). The error names the file.
    pub fn bytes(&self, path: &Path) -> Result<(Bytes, Option<Compression>), Failure> {
        match self.open_as(path, LogReading::Whole)? {
            Opened::Whole {
                bytes, compression, ..
            } => Ok((bytes, compression)),
            // Not asked for: every input is read whole.
            Opened::Stream { .. } => Err(Failure::msg(format!(
                "{}: read as a stream where it was to be read whole",
                path.display()
            ))),
        }
    }

    /// Opens `path` through the library's one opener ([`tfreq::formats::open`]) with
    /// this command's format and size cap (large files mapped where a bus error is
    /// handled: [`crate::sigbus`]). The error names the file.
    fn open_as(&self, path: &Path, how: LogReading) -> Result<Opened, Failure> {
        let read =
            crate::sigbus::read_options(self.args.limit(), [path]).max_streamed(self.args.max_size);
        let opts = InputOptions::new()
            .format(self.args.from.format())
            .read_options(read);
        tfreq::formats::open(path, &opts, how).map_err(|e| in_file(&path.display().to_string(), e))
    }

    /// The library's options for `bytes` read from `path`: its name and place, and the
    /// dtypes for REST JSON when the bytes look like JSON (other inputs name their own
    /// signature, which the model need not have: a broken --model does not stop them).
    pub fn options_for(&self, path: &Path, bytes: &[u8]) -> Result<InputOptions, Failure> {
        let mut opts = InputOptions::new()
            .format(self.args.from.format())
            .max_size(self.args.limit())
            .for_path(path);
        opts.decode.kind = self.kind;
        if looks_like_json(bytes) {
            opts.rest = self.dtypes()?;
        }
        Ok(opts)
    }

    /// The container of bytes already read whole from `path`: every entry, detection's
    /// findings and TF Serving's warm-up limits. The error names the file.
    pub fn container_of(&self, path: &Path, bytes: Bytes) -> Result<Container, Failure> {
        let opts = self.options_for(path, &bytes)?;
        let mut c = tfreq::formats::read(bytes, &opts)
            .and_then(|e| e.into_container())
            .map_err(|e| in_file(&path.display().to_string(), e))?;
        let limits = tfreq::analysis::file_findings(&c);
        c.findings.extend(limits);
        Ok(c)
    }

    /// The stream of a log opened as one (see [`Inputs::open`]), inflated when `c`
    /// says so; a `--max-size` given bounds what it holds after inflating (the
    /// default bounds each record only: [`Inputs::records`]).
    pub fn stream(
        &self,
        r: Box<dyn std::io::Read>,
        c: Option<Compression>,
    ) -> Box<dyn std::io::Read> {
        let (r, what) = match c {
            Some(c) => (tfreq::formats::reader(r, c), "the inflated stream"),
            None => (r, "the input"),
        };
        match self.args.max_size {
            Some(max) => Box::new(tfreq::limited(r, max, what)),
            None => r,
        }
    }

    /// The records of a log opened as a stream (see [`Inputs::open`] and
    /// [`Inputs::stream`]), decoded one at a time, each with its TFRecord framing
    /// checked; the size cap ([`InputArgs::limit`]) bounds each record.
    pub fn records(
        &self,
        r: Box<dyn std::io::Read>,
        c: Option<Compression>,
    ) -> impl Iterator<Item = Result<tfreq::formats::Entry, tfreq::Error>> + use<> {
        let r = self.stream(r, c);
        let opts = tfreq::DecodeOptions {
            kind: self.kind,
            ..Default::default()
        };
        tfreq::formats::RecordReader::new(r, self.args.limit())
            .map(move |rec| rec.and_then(|rec| tfreq::formats::record_entry(rec, opts)))
    }

    /// Reads every request of each input (a file may hold several, e.g. a TFRecord
    /// warm-up). An input that cannot be read, holds no request or holds a response is
    /// reported on stderr and set aside; the others are read. `warmup`: the files are
    /// warm-ups (what TF Serving's loader reads), so a compressed one is a finding.
    pub fn requests(&self, paths: &[PathBuf], progress: &Progress, warmup: bool) -> Requests {
        let mut found = Vec::new();
        let mut out = self.requests_into(paths, progress, warmup, &mut found);
        out.requests = found;
        out
    }

    /// [`Inputs::requests`] for a caller that does not keep the requests: each is
    /// handed to `sink`, in order, and dropped (a TFRecord log is walked record by
    /// record, in bounded memory whatever its size); what `sink` was given of a file
    /// that fails is taken back again ([`Sink::rollback`]). The [`Requests`] returned
    /// hold no requests.
    pub fn requests_into<S: Sink>(
        &self,
        paths: &[PathBuf],
        progress: &Progress,
        warmup: bool,
        sink: &mut S,
    ) -> Requests {
        let mut out = Requests::default();
        for p in paths {
            let file = p.display().to_string();
            let mark = sink.mark();
            if let Err(e) = self.requests_of(&mut out, p, progress, warmup, &mut |l| sink.put(l)) {
                sink.rollback(mark);
                progress.suspend(|| report_error(&e));
                out.unreadable.push(Unreadable {
                    error: e.message_without(&file),
                    file,
                });
            }
        }
        out
    }

    /// Reads the requests of one warm-up file, which a command cannot go on without:
    /// its error is the caller's to report.
    pub fn warmup(&self, path: &Path, progress: &Progress) -> Result<Requests, Failure> {
        let (mut out, mut found) = (Requests::default(), Vec::new());
        self.requests_of(&mut out, path, progress, true, &mut |l| found.push(l))?;
        out.requests = found;
        Ok(out)
    }

    /// Reads every request of one file, each handed to `add` as it is read, and the
    /// file's findings into `out`; a file that fails adds no findings (the caller takes
    /// back what `add` was given).
    fn requests_of(
        &self,
        out: &mut Requests,
        p: &Path,
        progress: &Progress,
        as_warmup: bool,
        add: &mut dyn FnMut(Loaded),
    ) -> Result<(), Failure> {
        let file = p.display().to_string();
        let stem = file_stem(p);
        let mut findings;
        let mut any = false;
        let mut one = |e: tfreq::formats::Entry, kind: ContainerKind| -> Result<(), Failure> {
            let label = e.label(kind);
            if let Content::Message(message) = e.content {
                if message.kind != Kind::Request {
                    let at = if label.is_empty() {
                        String::new()
                    } else {
                        format!(" ({label})")
                    };
                    return Err(in_file(
                        &file,
                        Failure::msg(
                            format!("{at} holds a {}, not a request", message.kind).trim_start(),
                        ),
                    ));
                }
                let (label, stem) = if label.is_empty() {
                    (file.clone(), stem.clone())
                } else {
                    (format!("{file} ({label})"), format!("{stem}.{}", e.index))
                };
                any = true;
                add(Loaded {
                    file: file.clone(),
                    label,
                    stem,
                    message,
                    bytes: e.bytes,
                });
            }
            Ok(())
        };
        let records_file = match self.walk(p, progress)? {
            Walk::Log(mut log) => {
                let mut check = tfreq::analysis::FileFindings::default();
                for e in &mut log.entries {
                    let e = e.map_err(|e| in_file(&file, e))?;
                    check.entry(&e);
                    one(e, ContainerKind::TfRecord)?;
                }
                let not_compared = check.take_not_compared();
                findings = log.findings(check);
                findings_tail(&mut findings, log.compression, as_warmup, p, not_compared);
                true
            }
            Walk::Whole(c, compressed) => {
                let not_compared = tfreq::analysis::not_compared(&c.entries);
                findings = c.findings;
                findings_tail(&mut findings, compressed, as_warmup, p, not_compared);
                // A warm-up file may hold no predict request (0 bytes, or only
                // classify/regress records) and still be what TF Serving loads: its
                // findings say so. Any other file without a request is not a request
                // file.
                let records_file = matches!(
                    c.kind,
                    ContainerKind::TfRecord | ContainerKind::UnframedLogs
                );
                for e in c.entries {
                    one(e, c.kind)?;
                }
                records_file
            }
        };
        if !any && !records_file {
            return Err(in_file(&file, Failure::msg("holds no request")));
        }
        if !findings.is_empty() {
            out.problems.push((file, findings));
        }
        Ok(())
    }

    /// Reads one input for a command that walks it: a TFRecord log entry by entry (a
    /// file mapped when large, its pages given back behind the walk; standard input
    /// as it comes), anything else whole (every entry, detection's findings and TF
    /// Serving's warm-up limits). The error names the file.
    pub fn walk(&self, path: &Path, progress: &Progress) -> Result<Walk, Failure> {
        let file = path.display().to_string();
        progress.step(format!("reading {file}"));
        let (bytes, compressed, past_cap) = match self.open_as(path, LogReading::Walk)? {
            Opened::Stream {
                reader,
                compression,
            } => {
                return Ok(Walk::Log(Log {
                    entries: Box::new(self.records(reader, compression)),
                    compression,
                    findings: Vec::new(),
                    warmup_path: is_warmup_path(path),
                }));
            }
            Opened::Whole {
                bytes,
                compression,
                past_cap,
            } => (bytes, compression, past_cap),
        };
        if path == Path::new("-") {
            let mut container = self.container_of(path, bytes)?;
            container.compression = compressed;
            return Ok(Walk::Whole(container, compressed));
        }
        progress.step(format!(
            "decoding {file} ({})",
            human_size(bytes.len() as u64)
        ));
        let mut opts = self.options_for(path, &bytes)?;
        if past_cap {
            // A plain log file is walked whatever its size (`formats::open` mapped it
            // past the default cap of an input read whole); --max-size given holds.
            opts = opts.max_size(u64::MAX);
        }
        let entries = tfreq::formats::read(bytes, &opts).map_err(|e| in_file(&file, e))?;
        if entries.is_walked() {
            return Ok(Walk::Log(Log {
                findings: entries.findings().to_vec(),
                entries: Box::new(entries.release_behind()),
                compression: compressed,
                warmup_path: is_warmup_path(path),
            }));
        }
        let mut c = entries.into_container().map_err(|e| in_file(&file, e))?;
        let limits = tfreq::analysis::file_findings(&c);
        c.findings.extend(limits);
        c.compression = compressed;
        if let Some(comp) = compressed.filter(|_| is_warmup_path(path)) {
            c.findings.push(compressed_warmup(comp));
        }
        Ok(Walk::Whole(c, compressed))
    }
}

/// The findings [`Inputs::requests`] adds after a file's own: a warm-up read through
/// compression (where TF Serving does not look for one, the file's own findings said
/// nothing of it), and the log records without a request.
fn findings_tail(
    findings: &mut Vec<Finding>,
    compressed: Option<Compression>,
    as_warmup: bool,
    p: &Path,
    not_compared: Vec<Finding>,
) {
    if let (Some(comp), true) = (compressed, as_warmup && !is_warmup_path(p)) {
        findings.push(compressed_warmup(comp));
    }
    findings.extend(not_compared);
}

/// A TFRecord log as [`Inputs::walk`] reads it.
pub struct Log {
    /// Its entries, one at a time.
    pub entries: Box<dyn Iterator<Item = Result<tfreq::formats::Entry, tfreq::Error>>>,
    /// The compression it was inflated from.
    pub compression: Option<Compression>,
    /// What detection found about the file.
    findings: Vec<Finding>,
    /// Whether the file is where TF Serving loads a warm-up from.
    warmup_path: bool,
}

impl Log {
    /// The file's findings once `found` has seen every entry: those of the file read
    /// whole ([`Walk::Whole`]), in the same order.
    pub fn findings(&mut self, found: tfreq::analysis::FileFindings) -> Vec<Finding> {
        let mut out = std::mem::take(&mut self.findings);
        out.extend(found.finish());
        if let Some(comp) = self.compression.filter(|_| self.warmup_path) {
            out.push(compressed_warmup(comp));
        }
        out
    }
}

/// An input as [`Inputs::walk`] reads it.
pub enum Walk {
    /// A TFRecord log, walked entry by entry.
    Log(Log),
    /// Anything else, read whole, with the compression it was inflated from.
    Whole(Container, Option<Compression>),
}

impl Inputs<'_> {
    /// Opens `path` (`-`: standard input) for a command that writes or shows each record
    /// as it reads it: a TFRecord log (plain or compressed, recognised from its first
    /// bytes) as a stream, read record by record in constant memory, anything else
    /// whole ([`tfreq::formats::open`]). `--from` other than `auto` or `tfrecord` reads
    /// it whole.
    pub fn open(&self, path: &Path) -> Result<Opened, Failure> {
        self.open_as(path, LogReading::Stream)
    }
}

/// Whether `path` is where TF Serving reads a model's warm-up from
/// (`assets.extra/tf_serving_warmup_requests`).
fn is_warmup_path(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "tf_serving_warmup_requests")
}

/// `WARMUP_COMPRESSED`, with the command that writes the file uncompressed.
fn compressed_warmup(comp: Compression) -> Finding {
    let mut f = tfreq::analysis::compressed(comp);
    f.message
        .push_str(" (tfreq convert FILE --wire tfrecord -o tf_serving_warmup_requests)");
    f
}

/// Whether the bytes start (after white space) like a JSON object or array.
fn looks_like_json(b: &[u8]) -> bool {
    matches!(
        b.iter().find(|c| !c.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stdin".into())
}

/// Directories nest at most this deep under an input directory.
const MAX_DEPTH: usize = 32;

/// The files under `dir`, hidden ones (`.name`) left out; symbolic links to files are
/// files, links to directories are not followed (no cycles).
fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::msg(format!(
            "{}: directories nest deeper than {MAX_DEPTH} levels",
            dir.display()
        )));
    }
    let rd = std::fs::read_dir(dir).map_err(|e| in_file(&dir.display().to_string(), e))?;
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        let link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if p.is_dir() {
            if !link {
                walk(&p, out, depth + 1)?;
            }
        } else {
            out.push(p);
        }
    }
    Ok(())
}
