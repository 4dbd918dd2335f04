//! File formats that hold requests: a bare protobuf message (EAS `warm_up.bin`, a
//! captured TF Serving request), TFRecord files of `PredictionLog` (TF Serving warm-up
//! files and request logs) and EAS text warm-ups (one string request per line).
//!
//! [`load`] is the one entry point commands use to read requests: it detects the
//! container and returns every request in it, each with a label saying where it came
//! from. [`load_detailed`] also lists what is not a request (other log kinds, text
//! lines) and the warm-up loader's findings; [`entries`] walks a file lazily, record by
//! record, for logs too big to collect. [`write()`] writes messages as a bare message or
//! a TFRecord warm-up.

pub mod compression;
pub mod convert;
pub mod detect;
pub mod prediction_log;
pub mod rest_json;
pub mod scrub_log;
pub mod text;
pub mod text_format;
pub mod tfrecord;

use std::path::Path;

pub mod savedmodel;

use bytes::Bytes;

use crate::decode::{decode_with, DecodeOptions};
use crate::encode::{encode, TfsEncoding};
use crate::error::{Error, ErrorDetail};
use crate::finding::{Code, Finding};
use crate::model::{Kind, Message, WireFormat};
use prediction_log::{LogKind, PredictionLog};
use tfrecord::Records;

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
    /// A decoded request or response (a bare message, or a `predict_log` request).
    Message(Message),
    /// A `PredictionLog` of another kind (or a `predict_log` without a request).
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
    /// The entry's own bytes, viewed in place: the message (for a `predict_log`, its
    /// request), a record's data, or a line.
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
    /// [`crate::analysis::warmup::file_findings`]).
    pub findings: Vec<Finding>,
}

/// How to read a file whose kind the bytes alone may not settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hint {
    /// Detect from the bytes.
    #[default]
    Auto,
    /// A text warm-up (the file name ends in `.txt`).
    Text,
}

impl Hint {
    /// The hint a file name gives: `.txt` means a text warm-up.
    pub fn for_path(path: &Path) -> Hint {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("txt") => Hint::Text,
            _ => Hint::Auto,
        }
    }
}

impl From<Hint> for detect::Source {
    fn from(h: Hint) -> Self {
        detect::Source {
            txt_name: h == Hint::Text,
            ..Default::default()
        }
    }
}

/// What kind of file `bytes` is ([`detect::detect`] with a [`Hint`]); a file that is
/// no request file at all (see [`detect::detect`]'s errors) is reported as
/// [`ContainerKind::Bare`], whose decoding then fails.
pub fn detect(bytes: &Bytes, opts: DecodeOptions, hint: Hint) -> ContainerKind {
    detect::detect(bytes, opts, &hint.into()).map_or(ContainerKind::Bare, |d| d.kind)
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

enum EntriesInner {
    Bare(Option<Bytes>),
    TfRecord(Records),
    Text(text::Lines),
    Unframed(std::vec::IntoIter<(detect::LogSpan, Bytes)>, usize),
    List(std::vec::IntoIter<Result<Entry, Error>>),
    Failed(Option<Error>),
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
}

impl Iterator for Entries {
    type Item = Result<Entry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            EntriesInner::Bare(b) => {
                let b = b.take()?;
                let size = b.len();
                let m = if b.is_empty() {
                    // The empty request: every field absent, in either wire format.
                    let mut m =
                        Message::new(self.opts.wire.unwrap_or(WireFormat::Eas), Kind::Request);
                    m.kind = self.opts.kind.unwrap_or(Kind::Request);
                    Ok(m)
                } else {
                    decode_with(b.clone(), self.opts).map(|(m, det)| {
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
            EntriesInner::Failed(e) => e.take().map(Err),
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
    let (content, bytes) = match (log.kind, log.requests.first()) {
        (LogKind::Predict, Some(b)) => {
            let (m, _) = decode_with(b.clone(), opts).map_err(in_record)?;
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
        .map_err(|e| {
            Error::from(ErrorDetail::Format(format!(
                "text format must be UTF-8: {e}"
            )))
        })
        .and_then(|s| text_format::from_text(s, opts.wire));
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

/// Starts walking the entries of `bytes` (see [`Entries`]). A file detection refuses
/// yields that error as its one entry; [`entries_from`] returns it instead.
pub fn entries(bytes: Bytes, opts: DecodeOptions, hint: Hint) -> Entries {
    entries_from(bytes, opts, &hint.into()).unwrap_or_else(|e| Entries {
        kind: ContainerKind::Bare,
        inner: EntriesInner::Failed(Some(e)),
        opts,
        findings: Vec::new(),
    })
}

/// Starts walking the entries of `bytes` from `src` (its name, place and the format
/// the user gave), after [`detect::detect`] has said what it is.
pub fn entries_from(
    bytes: Bytes,
    opts: DecodeOptions,
    src: &detect::Source,
) -> Result<Entries, Error> {
    let d = detect::detect(&bytes, opts, src)?;
    let opts = DecodeOptions {
        wire: opts.wire.or(src.format.wire()),
        ..opts
    };
    let inner = match d.kind {
        ContainerKind::Bare => EntriesInner::Bare(Some(bytes)),
        ContainerKind::TfRecord => EntriesInner::TfRecord(Records::new(bytes)),
        ContainerKind::Text => EntriesInner::Text(text::Lines::new(bytes)),
        ContainerKind::TextFormat => EntriesInner::List(text_format_entries(&bytes, opts)),
        ContainerKind::UnframedLogs => {
            EntriesInner::Unframed(detect::unframed_records(&bytes)?.into_iter(), 0)
        }
        ContainerKind::RestJson => {
            let d = detect::need_dtypes(src)?;
            let wire = opts.wire.unwrap_or(WireFormat::TfServing);
            let mut out = Vec::new();
            rest_json::for_each_json_line(&bytes, d, &[], wire, |index, m| {
                // JSON keeps no byte layout: the bytes are the request's encoding.
                out.push(rebuilt_entry(index, m))
            })?;
            EntriesInner::List(out.into_iter())
        }
    };
    Ok(Entries {
        kind: d.kind,
        inner,
        opts,
        findings: d.findings,
    })
}

/// Reads a whole file: every entry, and what detection found about the file (TF
/// Serving's warm-up limits are verdicts: [`crate::analysis::warmup::file_findings`]).
///
/// ```
/// use tfreq::formats::{load_detailed, ContainerKind, Hint};
/// let bytes = tfreq::io::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
/// let c = load_detailed(bytes, Default::default(), Hint::Auto)?;
/// assert_eq!(c.kind, ContainerKind::TfRecord);
/// assert_eq!(c.entries.len(), 6);
/// let limits = tfreq::analysis::warmup::file_findings(&c);
/// assert!(limits.iter().any(|f| f.code.as_str() == "NO_LOG_TYPE"));
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn load_detailed(bytes: Bytes, opts: DecodeOptions, hint: Hint) -> Result<Container, Error> {
    load_detailed_from(bytes, opts, &hint.into())
}

/// [`load_detailed`] from a [`detect::Source`].
pub fn load_detailed_from(
    bytes: Bytes,
    opts: DecodeOptions,
    src: &detect::Source,
) -> Result<Container, Error> {
    let mut it = entries_from(bytes, opts, src)?;
    let kind = it.kind();
    let entries: Vec<Entry> = it.by_ref().collect::<Result<_, _>>()?;
    let findings = it.findings().to_vec();
    Ok(Container {
        kind,
        entries,
        findings,
    })
}

/// Reads every request or response in `bytes`: a bare message, each `predict_log`
/// request of a TFRecord file (labelled `record N`), or the requests of a text-format
/// file. Other log kinds and text-warm-up lines are not messages and are left out;
/// [`load_detailed`] lists them.
///
/// ```
/// let bytes = tfreq::io::read_input("tests/data/eas/seed_warm_up.bin".as_ref())?;
/// let records = tfreq::formats::load(bytes, Default::default())?;
/// assert_eq!(records.len(), 1);
/// assert_eq!(records[0].message.tensors.len(), 5);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn load(bytes: Bytes, opts: DecodeOptions) -> Result<Vec<Record>, Error> {
    load_from(bytes, opts, &detect::Source::default())
}

/// [`load`] from a [`detect::Source`].
pub fn load_from(
    bytes: Bytes,
    opts: DecodeOptions,
    src: &detect::Source,
) -> Result<Vec<Record>, Error> {
    let it = entries_from(bytes, opts, src)?;
    let kind = it.kind();
    let mut out = Vec::new();
    for e in it {
        let e = e?;
        let label = e.label(kind);
        if let Content::Message(message) = e.content {
            out.push(Record { label, message });
        }
    }
    Ok(out)
}

/// Output layout for [`write()`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One bare EAS `PredictRequest`.
    Eas,
    /// One bare TF Serving `PredictRequest`.
    TfServing,
    /// A TF Serving warm-up file: TFRecord of `PredictionLog{predict_log{request}}`.
    TfRecord,
}

impl Target {
    /// `eas`, `tf-serving` or `tfrecord`.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Eas => "eas",
            Target::TfServing => "tf-serving",
            Target::TfRecord => "tfrecord",
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
/// use tfreq::formats::{load, write, Target};
/// let bytes = tfreq::io::read_input("tests/data/eas/faq_prod.bin".as_ref())?;
/// let msgs: Vec<_> = load(bytes, Default::default())?.into_iter().map(|r| r.message).collect();
/// let file = write(&msgs, Target::TfRecord)?;
/// let back = load(file.into(), Default::default())?;
/// assert_eq!(back[0].label, "record 0");
/// assert_eq!(back[0].message.tensors.len(), msgs[0].tensors.len());
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn write(msgs: &[Message], target: Target) -> Result<Vec<u8>, Error> {
    write_with(msgs, target, false).map(|(data, _)| data)
}

/// As [`write()`]; with `lossy`, what the target cannot carry is left out of the output
/// and listed (each item `where: what`) instead of refused.
///
/// ```
/// use tfreq::formats::{write_with, Target};
/// let m = tfreq::decode(&std::fs::read("tests/data/tfs/spec_vector.bin")?)?;
/// let (eas, lost) = write_with(&[m], Target::Eas, true)?;
/// assert_eq!(lost.len(), 2); // model_spec.name and version
/// assert!(tfreq::decode(&eas)?.model_spec.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_with(
    msgs: &[Message],
    target: Target,
    lossy: bool,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    for m in msgs {
        if m.kind != Kind::Request {
            return Err(Error::from(ErrorDetail::Format(format!(
                "only requests can be written as {}; got a {}",
                target.as_str(),
                m.kind
            ))));
        }
    }
    let wire = if target == Target::Eas {
        WireFormat::Eas
    } else {
        WireFormat::TfServing
    };
    if target != Target::TfRecord && msgs.len() != 1 {
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
        if target == Target::TfRecord {
            tfrecord::write_record(&mut out, &prediction_log::encode_predict_log(&bytes));
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
    let sig = m.signature_name.clone();
    let spec = m.model_spec.get_or_insert_with(|| crate::model::ModelSpec {
        signature_name: sig,
        ..Default::default()
    });
    if spec.name.is_empty() {
        spec.name = name.to_string();
    }
}
