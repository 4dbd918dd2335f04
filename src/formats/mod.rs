//! File formats that hold requests: a bare protobuf message (EAS `warm_up.bin`, a
//! captured TF Serving request), TFRecord files of `PredictionLog` (TF Serving warm-up
//! files and request logs), protobuf text format, TF Serving REST JSON and EAS text
//! warm-ups (one string request per line).
//!
//! [`read`] is the one way in: given the bytes and [`InputOptions`] (what the caller
//! says the input is, its size limit, the dtypes for JSON, and what the file's name and
//! place say), it detects the container and walks its [`Entries`] lazily, record by
//! record, so a log of any size is read in bounded memory; [`Entries::into_container`]
//! collects them and [`Entries::into_records`] keeps the messages. [`write()`] writes
//! messages as a bare message or a TFRecord warm-up.
//!
//! # Detection
//!
//! One place decides what a file is, for every command, from the bytes (and the file's
//! name and place): TFRecord of `PredictionLog`, one bare message, protobuf text
//! format, TF Serving REST JSON, an EAS text warm-up, or `PredictionLog` messages
//! concatenated without framing — or why it is none of them. The parse that decided
//! is the one the entries come from. It is honest about what the server would do:
//!
//! - **Unframed `PredictionLog`s** (what TF Serving's test helper
//!   `WriteWarmupDataAsSerializedProtos` writes: each `SerializeAsString()` appended,
//!   [saved_model_warmup_test_util.cc]) read as one TF Serving request whose `client_id`
//!   occurs several times. TF Serving refuses the file (`corrupted record at 0 (Is this
//!   even a TFRecord file?)`), so detection refuses it too, naming the fix
//!   (`tfreq convert FILE --wire tfrecord`), unless the caller accepts it
//!   ([`InputOptions::accept_unframed`], or `--from unframed-logs`).
//! - A file at `assets.extra/tf_serving_warmup_requests` must be a TFRecord: anything
//!   else fails the model load. A 0-byte file there is 0 records (TF Serving loads the
//!   model and warms nothing): a warning.
//! - gzip and zlib data is named from its magic bytes (TF Serving's warm-up reader
//!   opens the file uncompressed).
//! - Text is a request file only in a known form: protobuf text format, REST JSON (an
//!   object with `inputs` or `instances`), or an EAS text warm-up — the last only when
//!   the file is named `*.txt` or the user says so. Anything else is refused, saying
//!   what it looks like.
//! - The empty file is the empty request every SDK writes for `TFRequest()` with
//!   nothing added: one bare request, with a warning.
//! - Protobuf text is checked for nesting depth before it reaches prost-reflect's
//!   recursive parser (deep nesting overflowed the stack).
//!
//! [saved_model_warmup_test_util.cc]: https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/saved_model_warmup_test_util.cc

pub(crate) mod batching_params;
pub(crate) mod compression;
pub(crate) mod convert;
mod detect;
mod example_spec;
mod open;
mod options;
pub(crate) mod prediction_log;
pub(crate) mod rest_json;
pub(crate) mod scrub_log;
pub(crate) mod text;
pub(crate) mod text_format;
pub(crate) mod tfrecord;

pub(crate) mod savedmodel;

pub use batching_params::{BatchingParameters, MAX_LEN, ParamsError, parse_params};
pub use compression::{
    Compression, CompressionError, Compressor, compress, inflate, inflate_any, reader, sniff,
};
pub use convert::{ConvertError, ConvertOptions, Converted, convert_file, convert_stream, fit};
pub use prediction_log::{
    LogKind, PredictionLog, beside_request, encode_predict_log, encode_request_log,
    replace_predict_request,
};
pub use rest_json::{
    Dtypes, Json, RestCall, RestJsonError, dtypes_for_model, dtypes_from_metadata,
    dtypes_from_model, examples_from_json, examples_from_json_lines, examples_from_value,
    for_each_json_line, from_json, from_json_lines, from_value, parse_json, to_rest_json,
};
pub use savedmodel::{
    ModelError, ModelSource, from_metadata_json, from_saved_model_cli, from_saved_model_pb,
    model_source, read_model, read_model_bytes, signatures,
};
pub use text::{Lines, TextSummary, looks_like_text, summary};
pub use text_format::{
    TextError, TextRequests, from_text, looks_like_text_format, requests_from_text, text_depth,
};
pub use tfrecord::{
    FOOTER_LEN, HEADER_LEN, RawRecord, RecordReader, Records, TfRecordError, frame, is_tfrecord,
    mask, masked_crc, unmask, write_record,
};

use bytes::Bytes;

use crate::decode::{DecodeOptions, decode_message, decode_with};
use crate::encode::{TfsEncoding, encode};
use crate::error::{Error, ErrorDetail};
use crate::finding::{Code, Finding};
use crate::model::{Kind, Message, Method, WireFormat};

pub use detect::DetectError;
use detect::Kept;
pub use open::{LogReading, Opened, inflated, open};
pub use options::{InputFormat, InputOptions};

/// One message found in a file.
#[derive(Debug, Clone)]
pub struct Record {
    /// Where it came from inside the file (`""` for a bare message, `record 3`, ...).
    pub label: String,
    /// The message.
    pub message: Message,
}

/// What kind of file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContainerKind {
    /// One serialized request or response, no framing.
    Bare,
    /// TFRecord of `PredictionLog`.
    TfRecord,
    /// EAS text warm-up: one string request per line.
    Text,
    /// Protobuf text format of a request (what `tfreq inspect --format text` and
    /// Python's `text_format` print), one or several `# record N` sections.
    TextFormat,
    /// `PredictionLog` messages concatenated without TFRecord framing (read only when
    /// asked for: TF Serving refuses such a file).
    UnframedLogs,
    /// TF Serving REST predict JSON: one body, or JSON lines.
    RestJson,
}

impl ContainerKind {
    /// `bare`, `tfrecord` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerKind::Bare => "bare",
            ContainerKind::TfRecord => "tfrecord",
            ContainerKind::Text => "text",
            ContainerKind::TextFormat => "text_format",
            ContainerKind::UnframedLogs => "unframed_logs",
            ContainerKind::RestJson => "rest_json",
        }
    }
}

/// What one entry of a file holds.
#[derive(Debug, Clone)]
pub enum Content {
    /// A decoded request or response (a bare message, or the request of a
    /// `predict_log`, `classify_log`, `regress_log` or `multi_inference_log`: see
    /// [`Message::method`]).
    Message(Message),
    /// A `PredictionLog` of another kind (session-run, streamed, none), or a log without
    /// a request.
    Log(PredictionLog),
    /// One line of a text warm-up: a string request.
    Line(Bytes),
}

/// One entry of a file: a message, a log record of another kind, or a text line.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Entry number, from 0 (the TFRecord record number, the line number - 1).
    pub index: usize,
    /// Byte offset in the file.
    pub offset: usize,
    /// Bytes it takes (the record's data, the line without its newline).
    pub size: usize,
    /// The `PredictionLog` kind (TFRecord files only).
    pub log_kind: Option<LogKind>,
    /// `log_metadata.model_spec` of a TFRecord record.
    pub log_model_spec: Option<crate::model::ModelSpec>,
    /// The entry's own bytes, viewed in place: the message (for a log record with a
    /// request, its request), a record's data, or a line.
    pub bytes: Bytes,
    /// What it holds.
    pub content: Content,
}

impl Entry {
    /// `record N`, `line N` (from 1), or `""` for a bare message.
    pub fn label(&self, container: ContainerKind) -> String {
        match container {
            ContainerKind::Bare => String::new(),
            ContainerKind::TfRecord
            | ContainerKind::TextFormat
            | ContainerKind::UnframedLogs
            | ContainerKind::RestJson => format!("record {}", self.index),
            ContainerKind::Text => format!("line {}", self.index + 1),
        }
    }
}

/// A whole file: its kind, every entry, and what detection found about the file as a
/// whole (an empty warm-up file, readings that agree).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Container {
    /// What kind of file it is.
    pub kind: ContainerKind,
    /// Every entry, in file order.
    pub entries: Vec<Entry>,
    /// Detection's findings about the file as a whole (TF Serving's warm-up limits are
    /// [`crate::analysis::file_findings`]).
    pub findings: Vec<Finding>,
    /// The compression the file was read through (`None` for plain bytes; set by the
    /// caller that inflated them, [`compression::inflate_any`]).
    pub compression: Option<compression::Compression>,
}

/// What the head of a log's listing counts, gathered entry by entry (for a caller that
/// does not keep the entries): how many, and how many of each `PredictionLog` kind in
/// the order they first occur (`none` for a record without one).
///
/// ```
/// use tfreq::formats::{read, InputOptions, LogTally};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
/// let mut tally = LogTally::default();
/// for e in read(bytes, &InputOptions::new())? {
///     tally.add(&e?);
/// }
/// assert_eq!(tally.entries, 6);
/// assert_eq!(tally.kinds.iter().map(|(_, n)| n).sum::<usize>(), 6);
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogTally {
    /// Entries seen.
    pub entries: usize,
    /// Entries of each log kind, in the order each kind first occurs.
    pub kinds: Vec<(&'static str, usize)>,
}

impl LogTally {
    /// Counts one more entry.
    pub fn add(&mut self, e: &Entry) {
        self.entries += 1;
        let k = e.log_kind.map_or("none", |k| k.name());
        match self.kinds.iter_mut().find(|(n, _)| *n == k) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((k, 1)),
        }
    }

    /// The tally of every entry of `c`.
    pub fn of(c: &Container) -> LogTally {
        let mut t = LogTally::default();
        for e in &c.entries {
            t.add(e);
        }
        t
    }
}

/// Walks a file's entries lazily: a TFRecord file record by record (each decoded when
/// reached, its bytes viewed in place), so memory stays bounded whatever the size.
pub struct Entries {
    kind: ContainerKind,
    inner: EntriesInner,
    opts: DecodeOptions,
    findings: Vec<Finding>,
}

impl std::fmt::Debug for Entries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entries")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A bare message detection decoded, with how.
type KeptBare = Box<(Message, crate::decode::Detection)>;

enum EntriesInner {
    /// The message's bytes, and the decode detection already made of them.
    Bare(Option<(Bytes, Option<KeptBare>)>),
    TfRecord(Records),
    Text(text::Lines),
    Unframed(std::vec::IntoIter<(detect::LogSpan, Bytes)>, usize),
    List(std::vec::IntoIter<Result<Entry, Error>>),
}

impl Entries {
    /// What kind of file it is.
    pub fn kind(&self) -> ContainerKind {
        self.kind
    }

    /// Findings detection made about the file as a whole (an empty request, an empty
    /// warm-up file).
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Whether the entries are walked from the bytes record by record (a TFRecord file):
    /// the others (text format, JSON, unframed logs) are parsed whole by [`read`].
    pub fn is_walked(&self) -> bool {
        matches!(self.inner, EntriesInner::TfRecord(_))
    }

    /// For a caller that drops each entry before asking for the next: a TFRecord file
    /// mapped in memory gives its pages back behind the walk
    /// ([`tfrecord::Records::release_behind`]), so reading a log of any size keeps a
    /// resident set of megabytes. Other files are read as before.
    ///
    /// ```
    /// use tfreq::formats::{read, InputOptions};
    /// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
    /// let entries = read(bytes, &InputOptions::new())?.release_behind();
    /// assert_eq!(entries.count(), 6);
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn release_behind(mut self) -> Self {
        if let EntriesInner::TfRecord(r) = self.inner {
            self.inner = EntriesInner::TfRecord(r.release_behind());
        }
        self
    }
}

impl Iterator for Entries {
    type Item = Result<Entry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            EntriesInner::Bare(b) => {
                let (b, kept) = b.take()?;
                let size = b.len();
                let m = if b.is_empty() {
                    // The empty request: every field absent, in either wire format.
                    let mut m =
                        Message::new(self.opts.wire.unwrap_or(WireFormat::Eas), Kind::Request);
                    m.kind = self.opts.kind.unwrap_or(Kind::Request);
                    Ok(m)
                } else {
                    let decoded = match kept {
                        Some(k) => Ok(*k),
                        None => decode_with(b.clone(), self.opts),
                    };
                    decoded.map(|(m, det)| {
                        if det.agree {
                            self.findings.push(Finding::new(
                                Code::ReadingsAgree,
                                crate::finding::Severity::Note,
                                "the bytes read the same as an EAS and a TF Serving request (the same signature and fetches, no feeds); shown as EAS",
                            ));
                        }
                        m
                    })
                };
                Some(m.map(|m| Entry {
                    index: 0,
                    offset: 0,
                    size,
                    log_kind: None,
                    log_model_spec: None,
                    bytes: b,
                    content: Content::Message(m),
                }))
            }
            EntriesInner::TfRecord(r) => {
                let rec = match r.next()? {
                    Ok(rec) => rec,
                    Err(e) => return Some(Err(e.into())),
                };
                Some(record_entry(rec, self.opts))
            }
            EntriesInner::Unframed(it, index) => {
                let (span, data) = it.next()?;
                let i = *index;
                *index += 1;
                Some(log_entry(i, span.offset, span.offset, data, self.opts))
            }
            EntriesInner::List(it) => it.next(),
            EntriesInner::Text(l) => {
                let (index, offset, line) = l.next()?;
                Some(Ok(Entry {
                    index,
                    offset,
                    size: line.len(),
                    log_kind: None,
                    log_model_spec: None,
                    bytes: line.clone(),
                    content: Content::Line(line),
                }))
            }
        }
    }
}

/// Decodes one TFRecord record as a `PredictionLog`, and its predict request.
pub fn record_entry(rec: tfrecord::RawRecord, opts: DecodeOptions) -> Result<Entry, Error> {
    let data_offset = rec.data_offset();
    log_entry(rec.index, rec.offset, data_offset, rec.data, opts)
}

/// Decodes one `PredictionLog` (record `index`, at byte `offset`, its data at
/// `data_offset`), and its predict request.
pub(crate) fn log_entry(
    index: usize,
    offset: usize,
    data_offset: usize,
    data: Bytes,
    opts: DecodeOptions,
) -> Result<Entry, Error> {
    let in_record = |e: Error| e.in_record(index, offset);
    let log = PredictionLog::decode(data.clone(), data_offset).map_err(|e| {
        in_record(Error::from(ErrorDetail::Decode {
            wire: WireFormat::TfServing,
            kind: Kind::Request,
            source: e,
        }))
    })?;
    let opts = DecodeOptions {
        wire: Some(WireFormat::TfServing),
        kind: Some(Kind::Request),
        ..opts
    };
    let method = match log.kind {
        LogKind::Classify => Some(Method::Classify),
        LogKind::Regress => Some(Method::Regress),
        LogKind::MultiInference => Some(Method::MultiInference),
        _ => None,
    };
    let (content, bytes) = match (log.kind, log.requests.first()) {
        (LogKind::Predict, Some(b)) => {
            let m = decode_message(b.clone(), opts).map_err(in_record)?;
            (Content::Message(m), b.clone())
        }
        // The classify, regress and multi-inference requests (the log type says which
        // of the first two it is).
        (_, Some(b)) if method.is_some() => {
            let method = method.unwrap_or_default();
            let at = log.request_offsets.first().copied().unwrap_or(data_offset);
            if let Some(limit) = opts.max_size.filter(|&l| b.len() as u64 > l) {
                return Err(in_record(Error::from(ErrorDetail::Decode {
                    wire: WireFormat::TfServing,
                    kind: Kind::Request,
                    source: crate::error::DecodeError::new(
                        crate::error::DecodeErrorKind::TooLarge {
                            size: b.len() as u64,
                            limit,
                        },
                        at,
                    ),
                })));
            }
            let m = crate::decode::decode_request(b.clone(), method).map_err(|e| {
                in_record(Error::from(ErrorDetail::Decode {
                    wire: WireFormat::TfServing,
                    kind: Kind::Request,
                    source: e.within(log.kind.name()),
                }))
            })?;
            (Content::Message(m), b.clone())
        }
        _ => (Content::Log(log.clone()), data.clone()),
    };
    Ok(Entry {
        index,
        offset,
        size: data.len(),
        log_kind: Some(log.kind),
        log_model_spec: log.model_spec,
        bytes,
        content,
    })
}

/// An entry for a request parsed from a form that keeps no byte layout (text format,
/// JSON): its bytes are the canonical encoding of what it says.
fn rebuilt_entry(index: usize, mut m: Message) -> Result<Entry, Error> {
    let b = Bytes::from(encode(&m, m.wire, TfsEncoding::AsIs)?);
    m.size = b.len();
    Ok(Entry {
        index,
        offset: 0,
        size: b.len(),
        log_kind: None,
        log_model_spec: None,
        bytes: b,
        content: Content::Message(m),
    })
}

/// The requests of a text-format file, each with its bytes re-encoded (text format
/// keeps no byte layout; this is the canonical encoding of what it says).
fn text_format_entries(
    bytes: &Bytes,
    opts: DecodeOptions,
) -> std::vec::IntoIter<Result<Entry, Error>> {
    let parsed = std::str::from_utf8(bytes)
        .map_err(|e| Error::from(text_format::TextError::NotUtf8 { why: e.to_string() }))
        .and_then(|s| text_format::from_text(s, opts.wire));
    rebuilt_entries(parsed)
}

/// The entries of parsed text format (or JSON), each re-encoded.
fn rebuilt_entries(
    parsed: Result<Vec<Message>, Error>,
) -> std::vec::IntoIter<Result<Entry, Error>> {
    let out: Vec<Result<Entry, Error>> = match parsed {
        Err(e) => vec![Err(e)],
        Ok(msgs) => msgs
            .into_iter()
            .enumerate()
            .map(|(index, m)| rebuilt_entry(index, m))
            .collect(),
    };
    out.into_iter()
}

/// Reads an input: detects what `bytes` is (from the bytes, and the name and place
/// [`InputOptions::for_path`] gave) and walks its entries (see [`Entries`]). The one way
/// into a file for every command; [`crate::scan::count`] is its counterpart for logs.
/// Errors say what the bytes look like and what to do (see [`detect`](self#detection)).
///
/// ```
/// use tfreq::formats::{read, ContainerKind, InputOptions};
/// let path = std::path::Path::new("tests/data/tfrecord/warmup_mixed.tfrecord");
/// let bytes = tfreq::read_input(path)?;
/// let c = read(bytes, &InputOptions::new().for_path(path))?.into_container()?;
/// assert_eq!(c.kind, ContainerKind::TfRecord);
/// assert_eq!(c.entries.len(), 6);
/// let limits = tfreq::analysis::file_findings(&c);
/// assert!(limits.iter().any(|f| f.code.as_str() == "NO_LOG_TYPE"));
///
/// // Only the requests and responses, labelled by where they are:
/// let bytes = tfreq::read_input("tests/data/eas/seed_warm_up.bin".as_ref())?;
/// let records = read(bytes, &InputOptions::new())?.into_records()?;
/// assert_eq!((records.len(), records[0].message.tensors.len()), (1, 5));
///
/// // Concatenated PredictionLogs are refused, saying how many of which log type.
/// let bytes = tfreq::read_input("tests/data/detect/unframed_logs.bin".as_ref())?;
/// let err = read(bytes, &InputOptions::new()).unwrap_err();
/// assert!(matches!(err.detail(), tfreq::ErrorDetail::Unframed(_)));
/// assert!(err.to_string().contains("without TFRecord framing"), "{err}");
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn read(bytes: Bytes, opts: &InputOptions) -> Result<Entries, Error> {
    let d = detect::detect(&bytes, opts)?;
    let dopts = DecodeOptions {
        wire: opts.decode.wire.or(opts.format.wire()),
        ..opts.decode
    };
    let bytes = d.decoded.unwrap_or(bytes);
    let inner = match (d.kind, d.kept) {
        (ContainerKind::Bare, Some(Kept::Bare(kept))) => {
            EntriesInner::Bare(Some((bytes, Some(kept))))
        }
        (ContainerKind::Bare, _) => EntriesInner::Bare(Some((bytes, None))),
        (ContainerKind::TfRecord, _) => EntriesInner::TfRecord(Records::new(bytes)),
        (ContainerKind::Text, _) => EntriesInner::Text(text::Lines::new(bytes)),
        (ContainerKind::TextFormat, Some(Kept::Text(msgs))) => {
            EntriesInner::List(rebuilt_entries(Ok(msgs)))
        }
        (ContainerKind::TextFormat, _) => EntriesInner::List(text_format_entries(&bytes, dopts)),
        (ContainerKind::UnframedLogs, _) => {
            EntriesInner::Unframed(detect::unframed_records(&bytes)?.into_iter(), 0)
        }
        (ContainerKind::RestJson, _) => {
            let wire = dopts.wire.unwrap_or(WireFormat::TfServing);
            let mut out = Vec::new();
            rest_json::for_each_request_line(&bytes, opts.rest.as_ref(), wire, |index, m| {
                // JSON keeps no byte layout: the bytes are the request's encoding.
                out.push(rebuilt_entry(index, m))
            })?;
            EntriesInner::List(out.into_iter())
        }
    };
    Ok(Entries {
        kind: d.kind,
        inner,
        opts: dopts,
        findings: d.findings,
    })
}

/// What kind of input `bytes` is, as [`read`] decides it, without reading its entries
/// (for a command that takes only some kinds). Errors as [`read`]'s.
///
/// ```
/// use tfreq::formats::{detect, ContainerKind, InputOptions};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_predict.tfrecord".as_ref())?;
/// assert_eq!(detect(&bytes, &InputOptions::new())?, ContainerKind::TfRecord);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn detect(bytes: &Bytes, opts: &InputOptions) -> Result<ContainerKind, Error> {
    detect::detect(bytes, opts).map(|d| d.kind)
}

impl Entries {
    /// Reads every entry: the whole file, with what detection found about it (TF
    /// Serving's warm-up limits are verdicts: [`crate::analysis::file_findings`]).
    /// The first entry that fails to decode is the error.
    pub fn into_container(mut self) -> Result<Container, Error> {
        let kind = self.kind;
        let entries: Vec<Entry> = self.by_ref().collect::<Result<_, _>>()?;
        Ok(Container {
            kind,
            entries,
            findings: self.findings,
            compression: None,
        })
    }

    /// Every request or response: a bare message, each request of a TFRecord file's
    /// `predict_log`, `classify_log`, `regress_log` and `multi_inference_log` records
    /// (labelled `record N`), or the requests of a text-format or JSON file. Other log
    /// kinds and text-warm-up lines are not messages and are left out;
    /// [`Entries::into_container`] lists them.
    pub fn into_records(self) -> Result<Vec<Record>, Error> {
        let kind = self.kind;
        let mut out = Vec::new();
        for e in self {
            let e = e?;
            let label = e.label(kind);
            if let Content::Message(message) = e.content {
                out.push(Record { label, message });
            }
        }
        Ok(out)
    }
}

/// Output layout for [`write()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One bare EAS `PredictRequest`.
    Eas,
    /// One bare TF Serving `PredictRequest`.
    TfServing,
    /// A TF Serving warm-up file: TFRecord of `PredictionLog{predict_log{request}}`.
    TfRecord,
}

impl Layout {
    /// `eas`, `tf-serving` or `tfrecord`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Eas => "eas",
            Layout::TfServing => "tf-serving",
            Layout::TfRecord => "tfrecord",
        }
    }
}

/// Encodes requests for `target`, keeping names, dtypes, shapes, fetches and values
/// (converting EAS ↔ TF Serving as needed). A bare format holds exactly one request;
/// anything the target cannot carry (a dtype EAS lacks, a TF Serving `model_spec`
/// name going to EAS, unknown fields, ...) is an `Error::from(ErrorDetail::WouldLose)` naming each
/// item ([`convert::fit`] lists them). [`convert::convert_file`] converts whole files,
/// records of every kind included.
///
/// ```
/// use tfreq::formats::{read, write, InputOptions, Layout};
/// let bytes = tfreq::read_input("tests/data/eas/faq_prod.bin".as_ref())?;
/// let records = read(bytes, &InputOptions::new())?.into_records()?;
/// let msgs: Vec<_> = records.into_iter().map(|r| r.message).collect();
/// let file = write(&msgs, Layout::TfRecord)?;
/// let back = read(file.into(), &InputOptions::new())?.into_records()?;
/// assert_eq!(back[0].label, "record 0");
/// assert_eq!(back[0].message.tensors.len(), msgs[0].tensors.len());
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn write(msgs: &[Message], target: Layout) -> Result<Vec<u8>, Error> {
    write_with(msgs, target, false).map(|(data, _)| data)
}

/// As [`write()`]; with `lossy`, what the target cannot carry is left out of the output
/// and listed (each item `where: what`) instead of refused.
///
/// ```
/// use tfreq::formats::{write_with, Layout};
/// let m = tfreq::decode(&std::fs::read("tests/data/tfs/spec_vector.bin")?)?;
/// let (eas, lost) = write_with(&[m], Layout::Eas, true)?;
/// assert_eq!(lost.len(), 2); // model_spec.name and version
/// assert!(tfreq::decode(&eas)?.model_spec.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_with(
    msgs: &[Message],
    target: Layout,
    lossy: bool,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    for m in msgs {
        if m.kind != Kind::Request {
            return Err(Error::from(convert::ConvertError::NotRequest {
                target: target.as_str(),
                kind: m.kind,
            }));
        }
    }
    let wire = if target == Layout::Eas {
        WireFormat::Eas
    } else {
        WireFormat::TfServing
    };
    if target != Layout::TfRecord && msgs.len() != 1 {
        return Err(Error::from(ErrorDetail::OneRequestOnly {
            target: target.as_str(),
            got: msgs.len(),
        }));
    }
    let several = msgs.len() > 1;
    let mut left_out = Vec::new();
    let mut fitted = Vec::with_capacity(msgs.len());
    for (i, m) in msgs.iter().enumerate() {
        let (f, lost) = convert::fit(m, wire);
        left_out.extend(lost.into_iter().map(|l| {
            if several {
                format!("request {i}: {l}")
            } else {
                l
            }
        }));
        fitted.push(f);
    }
    if !lossy && !left_out.is_empty() {
        return Err(Error::from(ErrorDetail::WouldLose {
            target: target.as_str(),
            left_out,
        }));
    }
    let mut out = Vec::new();
    for m in &fitted {
        let bytes = encode(m, wire, style_for(m))?;
        if target == Layout::TfRecord {
            let log = prediction_log::encode_request_log(m.method, &bytes)
                .ok_or_else(|| Error::from(convert::ConvertError::BareExampleRequest))?;
            tfrecord::write_record(&mut out, &log);
        } else {
            out = bytes;
        }
    }
    Ok((out, left_out))
}

/// A TF Serving message keeps its layout; others are laid out as TensorFlow's Python does.
pub(crate) fn style_for(m: &Message) -> TfsEncoding {
    if m.wire == WireFormat::TfServing {
        TfsEncoding::AsIs
    } else {
        TfsEncoding::Python
    }
}

/// Sets the TF Serving `model_spec.name` of a request that has none (keeping its
/// signature); an existing name is left alone.
///
/// ```
/// let mut m = tfreq::Message::new(tfreq::WireFormat::Eas, tfreq::Kind::Request);
/// m.signature_name = "serving_default".into();
/// tfreq::formats::set_model_name(&mut m, "faq");
/// assert_eq!(m.model_spec.unwrap().name, "faq");
/// ```
pub fn set_model_name(m: &mut Message, name: &str) {
    if m.method == Method::MultiInference {
        // A multi-inference request names its model in each task.
        for t in &mut m.tasks {
            let spec = t.model_spec.get_or_insert_with(Default::default);
            if spec.name.is_empty() {
                spec.name = name.to_string();
            }
        }
        return;
    }
    let sig = m.signature_name.clone();
    let spec = m.model_spec.get_or_insert_with(|| crate::model::ModelSpec {
        signature_name: sig,
        ..Default::default()
    });
    if spec.name.is_empty() {
        spec.name = name.to_string();
    }
}
