//! Whole-file conversion and scrubbing with nothing left out silently.
//!
//! [`convert_file`] writes every entry of a file for a target layout: the one request
//! of a bare file, each request of a text-format file, and **every** record of a
//! TFRecord file. A `predict_log` record has its request converted (or scrubbed) in
//! place, its `log_metadata` and other fields kept; classify, regress,
//! multi-inference, session-run, streamed and log-type-less records are copied as they
//! are, or scrubbed when scrubbing (`src/formats/scrub_log.rs`).
//!
//! What the target cannot carry — a dtype EAS lacks, TF Serving's `model_spec` name and
//! version, `client_id` / `request_options` / `predict_streamed_options`, tensor
//! `version_number`, dim names, unknown fields, records a bare file has no room for —
//! is an `Error::from(ErrorDetail::WouldLose)` listing each item with where it is, unless the caller
//! allows a lossy conversion: then the output leaves those out and
//! [`Converted::left_out`] lists them.
//!
//! ```
//! use tfreq::formats::{convert_file, ConvertOptions};
//! use tfreq::formats::Layout;
//! let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
//! let out = convert_file(bytes.clone(), &Default::default(), Some(Layout::TfRecord),
//!     &ConvertOptions::default())?;
//! assert_eq!(out.records, 6); // every record, whatever its kind
//! assert_eq!(out.data, bytes); // a TFRecord copied to a TFRecord is unchanged
//!
//! // A bare request has room for one PredictRequest only.
//! let err = convert_file(bytes, &Default::default(), Some(Layout::TfServing),
//!     &ConvertOptions::default()).unwrap_err();
//! assert!(err.to_string().contains("record 1: classify_log"), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;

use bytes::Bytes;

use crate::dtype::{DType, ValueField};
use crate::encode::encode;
use crate::error::{Error, ErrorDetail};
use crate::formats::detect::unframed_records;
use crate::formats::prediction_log::{LogKind, beside_request, replace_predict_request};
use crate::formats::scrub_log::scrub_log_record;
use crate::formats::tfrecord::{RecordReader, Records, write_record};
use crate::formats::{
    ContainerKind, Content, InputOptions, Layout, log_entry, read, set_model_name, style_for,
};
use crate::model::{Ints, Kind, Message, Tensor, Values, WireFormat};
use crate::scrub::{FillMode, scrub};

/// What to do besides converting.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// TF Serving `model_spec.name` for requests that have none.
    pub model_name: Option<String>,
    /// Scrub every request's values (see [`crate::scrub`]).
    pub scrub: Option<FillMode>,
    /// Write even when the target cannot carry everything, listing what was left out
    /// in [`Converted::left_out`] (otherwise that is an `Error::from(ErrorDetail::WouldLose)`).
    pub lossy: bool,
}

/// A converted file.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The output bytes.
    pub data: Vec<u8>,
    /// The layout written.
    pub target: Layout,
    /// Entries written (records of a TFRecord output; 1 for a bare request).
    pub records: usize,
    /// What the target could not carry (only with [`ConvertOptions::lossy`]), each
    /// `where: what`.
    pub left_out: Vec<String>,
    /// What scrubbing removed by design (unknown fields, `client_id`,
    /// `request_options`, responses), each `where: what`.
    pub scrubbed_out: Vec<String>,
}

/// One entry to write.
enum Item {
    /// A request, and for a `predict_log` record the record's own bytes.
    Request {
        at: String,
        msg: Box<Message>,
        record: Option<Bytes>,
    },
    /// A record of another kind, as bytes.
    Record {
        at: String,
        kind: LogKind,
        data: Bytes,
    },
}

/// Why a conversion or scrub cannot write its output.
///
/// ```
/// use tfreq::formats::ConvertError;
///
/// let e = ConvertError::NoPredictRequest { target: "eas" };
/// assert_eq!(e.to_string(), "holds no PredictRequest to write as a bare eas request");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// Writing the output failed.
    #[error("writing the output: {why}")]
    Write {
        /// What the writer said.
        why: String,
    },
    /// An EAS text warm-up: strings, no protobuf request.
    #[error("an EAS text warm-up (one string per line) holds no protobuf request to convert")]
    TextWarmup,
    /// One entry (a request, a record) cannot be written: `at` names it (empty for a
    /// single request).
    #[error("{}", self::at(.at, .why))]
    Entry {
        /// The entry (`record 3`, a file's label), or empty.
        at: String,
        /// Why.
        why: String,
    },
    /// A message other than a request where requests are written.
    #[error("only requests can be written as {target}; got a {kind}")]
    NotRequest {
        /// The output layout (`eas`, `tf-serving`, `tfrecord`).
        target: &'static str,
        /// What it is.
        kind: crate::model::Kind,
    },
    /// A bare ClassificationRequest or RegressionRequest written as a warm-up record:
    /// its bytes do not say which it is, and the PredictionLog's type must.
    #[error(
        "a bare ClassificationRequest or RegressionRequest cannot be written as a warm-up record: its bytes do not say which it is, and the PredictionLog's type must (write it from a classify_log or regress_log record)"
    )]
    BareExampleRequest,
    /// Nothing to write as a bare request.
    #[error("holds no PredictRequest to write as a bare {target} request")]
    NoPredictRequest {
        /// The output layout (`eas`, `tf-serving`).
        target: &'static str,
    },
}

/// A [`ConvertError`] is a container problem, as other unreadable inputs are.
impl From<ConvertError> for Error {
    fn from(e: ConvertError) -> Self {
        Error::other(crate::error::Category::Container, e)
    }
}

/// [`ConvertError::Entry`] as the crate's error.
fn in_entry(label: &str, why: impl std::fmt::Display) -> Error {
    ConvertError::Entry {
        at: label.to_string(),
        why: why.to_string(),
    }
    .into()
}

fn at(label: &str, what: impl std::fmt::Display) -> String {
    if label.is_empty() {
        what.to_string()
    } else {
        format!("{label}: {what}")
    }
}

/// Converts (or scrubs) every entry of `bytes` (read as `src` says, see
/// [`read`]) for `target` (`None`: the input's own layout). See the module docs.
pub fn convert_file(
    bytes: Bytes,
    src: &InputOptions,
    target: Option<Layout>,
    opts: &ConvertOptions,
) -> Result<Converted, Error> {
    let entries = read(bytes.clone(), src)?;
    let kind = entries.kind();
    let items = items_of(entries, bytes, src)?;
    let first_wire = items.iter().find_map(|i| match i {
        Item::Request { msg, .. } => Some(msg.wire),
        Item::Record { .. } => None,
    });
    let target = target.unwrap_or(match (kind, first_wire) {
        (ContainerKind::TfRecord | ContainerKind::UnframedLogs, _) => Layout::TfRecord,
        (_, Some(WireFormat::Eas)) => Layout::Eas,
        _ => Layout::TfServing,
    });
    let mut out = Conversion::new(target, opts);
    let mut items = items;
    // Scrub and name, before anything is written.
    for item in &mut items {
        out.prepare(item)?;
    }
    let (data, records) = match target {
        Layout::TfRecord => {
            let mut data = Vec::new();
            for item in &items {
                out.write_record(item, &mut data)?;
            }
            (data, items.len())
        }
        Layout::Eas | Layout::TfServing => (out.bare(&items)?, 1),
    };
    out.finish(data, records)
}

/// Converts (or scrubs) a TFRecord log read from `r` record by record, in constant
/// memory whatever its length, writing a TFRecord to `w` as it goes (`compression`: the
/// log is gzip or zlib; offsets and record numbers are those of the inflated stream; a
/// record longer than `max_record` bytes is refused). Fails as [`convert_file`] does,
/// and then `w` holds part of the output: write it somewhere that is discarded on
/// error (the command line writes to a temporary file renamed into place).
/// [`Converted::data`] is empty.
///
/// ```
/// use tfreq::formats::{convert_stream, ConvertOptions};
/// let f = std::fs::File::open("tests/data/tfrecord/warmup_mixed.tfrecord")?;
/// let mut out = Vec::new();
/// let c = convert_stream(f, None, 1 << 20, &ConvertOptions::default(), &mut out)?;
/// assert_eq!(c.records, 6);
/// assert_eq!(out, std::fs::read("tests/data/tfrecord/warmup_mixed.tfrecord")?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_stream(
    r: impl std::io::Read,
    compression: Option<crate::formats::compression::Compression>,
    max_record: u64,
    opts: &ConvertOptions,
    w: &mut dyn std::io::Write,
) -> Result<Converted, Error> {
    let mut src: Box<dyn std::io::Read + '_> = match compression {
        Some(c) => crate::formats::compression::reader(r, c),
        None => Box::new(r),
    };
    let mut out = Conversion::new(Layout::TfRecord, opts);
    let mut records = 0;
    let mut buf = Vec::new();
    for rec in RecordReader::new(&mut src, max_record) {
        let rec = rec?;
        let mut item = record_item(
            rec.index,
            rec.offset,
            rec.data_offset(),
            rec.data,
            opts_decode(),
        )?;
        out.prepare(&mut item)?;
        buf.clear();
        out.write_record(&item, &mut buf)?;
        w.write_all(&buf)
            .map_err(|e| Error::from(ConvertError::Write { why: e.to_string() }))?;
        records += 1;
    }
    out.finish(Vec::new(), records)
}

fn opts_decode() -> crate::decode::DecodeOptions {
    crate::decode::DecodeOptions::default()
}

/// The entries of a file as items to write: every record of a log (of any kind), the
/// requests of anything else.
fn items_of(
    entries: crate::formats::Entries,
    bytes: Bytes,
    src: &InputOptions,
) -> Result<Vec<Item>, Error> {
    let kind = entries.kind();
    let mut items = Vec::new();
    match kind {
        ContainerKind::Text => return Err(Error::from(ConvertError::TextWarmup)),
        ContainerKind::TfRecord | ContainerKind::UnframedLogs => {
            // (index, offset of the record, offset of its data, its data)
            let records: Vec<(usize, usize, usize, Bytes)> = if kind == ContainerKind::TfRecord {
                Records::new(bytes)
                    .map(|r| r.map(|r| (r.index, r.offset, r.data_offset(), r.data)))
                    .collect::<Result<_, _>>()?
            } else {
                unframed_records(&bytes)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, (span, data))| (i, span.offset, span.offset, data))
                    .collect()
            };
            for (index, offset, data_offset, data) in records {
                items.push(record_item(index, offset, data_offset, data, src.decode)?);
            }
        }
        ContainerKind::Bare | ContainerKind::TextFormat | ContainerKind::RestJson => {
            for e in entries {
                let e = e?;
                let label = e.label(kind);
                if let Content::Message(msg) = e.content {
                    items.push(Item::Request {
                        at: label,
                        msg: Box::new(msg),
                        record: None,
                    });
                }
            }
        }
    }
    Ok(items)
}

/// One record of a log as an item: its predict request, or the record as it is.
fn record_item(
    index: usize,
    offset: usize,
    data_offset: usize,
    data: Bytes,
    decode: crate::decode::DecodeOptions,
) -> Result<Item, Error> {
    let label = format!("record {index}");
    let e = log_entry(index, offset, data_offset, data.clone(), decode)?;
    Ok(match e.content {
        // A classify, regress or multi-inference record is copied (or scrubbed) whole,
        // as a record, by `scrub_log_record`.
        Content::Message(msg) if !msg.method.takes_examples() => Item::Request {
            at: label,
            msg: Box::new(msg),
            record: Some(data),
        },
        _ => Item::Record {
            at: label,
            kind: e.log_kind.unwrap_or(LogKind::None),
            data,
        },
    })
}

/// A conversion under way: the target, the options, and what was left out so far.
struct Conversion<'a> {
    target: Layout,
    opts: &'a ConvertOptions,
    left_out: Vec<String>,
    scrubbed_out: Vec<String>,
}

impl<'a> Conversion<'a> {
    fn new(target: Layout, opts: &'a ConvertOptions) -> Self {
        Conversion {
            target,
            opts,
            left_out: Vec::new(),
            scrubbed_out: Vec::new(),
        }
    }

    /// Scrubs and names one item, and refuses a response.
    fn prepare(&mut self, item: &mut Item) -> Result<(), Error> {
        if let Some(fill) = self.opts.scrub {
            match item {
                Item::Request { at: label, msg, .. } => {
                    self.scrubbed_out.extend(
                        crate::scrub::left_out(msg)
                            .into_iter()
                            .map(|g| at(label, g)),
                    );
                    **msg = scrub(msg, fill).map_err(|e| in_entry(label, e))?;
                }
                Item::Record {
                    at: label, data, ..
                } => {
                    let (b, gone) = scrub_log_record(data, fill).map_err(|e| in_entry(label, e))?;
                    self.scrubbed_out
                        .extend(gone.into_iter().map(|g| at(label, g)));
                    *data = Bytes::from(b);
                }
            }
        }
        if let Item::Request { at: label, msg, .. } = item {
            if let Some(name) = &self.opts.model_name {
                set_model_name(msg, name);
            }
            if msg.kind != Kind::Request {
                return Err(in_entry(
                    label,
                    format!(
                        "only requests can be written as {}; got a {}",
                        self.target.as_str(),
                        msg.kind
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Appends one item to a TFRecord output, framed.
    fn write_record(&mut self, item: &Item, data: &mut Vec<u8>) -> Result<(), Error> {
        match item {
            Item::Request {
                at: label,
                msg,
                record,
            } => {
                let (m, lost) = fit(msg, WireFormat::TfServing);
                self.left_out.extend(lost.into_iter().map(|l| at(label, l)));
                let req = encode(&m, WireFormat::TfServing, style_for(&m))?;
                let rec = match record {
                    Some(r) => replace_predict_request(r, &req, self.opts.scrub.is_some())
                        .map_err(|e| in_entry(label, e))?,
                    None => crate::formats::prediction_log::encode_request_log(m.method, &req)
                        .ok_or_else(|| {
                            in_entry(
                                label,
                                "a bare ClassificationRequest or RegressionRequest: its bytes do not say which it is, and a warm-up record's log type must",
                            )
                        })?,
                };
                if record.as_ref().is_some_and(has_response) && self.opts.scrub.is_some() {
                    self.scrubbed_out.push(at(label, "predict_log.response"));
                }
                write_record(data, &rec);
            }
            Item::Record { data: d, .. } => write_record(data, d),
        }
        Ok(())
    }

    /// The one request a bare output holds (the first), naming what else is left out.
    fn bare(&mut self, items: &[Item]) -> Result<Vec<u8>, Error> {
        let target = self.target;
        let wire = if target == Layout::Eas {
            WireFormat::Eas
        } else {
            WireFormat::TfServing
        };
        let mut chosen = None;
        for item in items {
            match item {
                Item::Request {
                    at: label,
                    msg,
                    record,
                } if chosen.is_none() => {
                    if let Some(r) = record {
                        let beside = beside_request(r)
                            .map_err(|e| in_entry(label, e))?;
                        self.left_out.extend(beside.into_iter().map(|b| at(label, b)));
                    }
                    let (m, lost) = fit(msg, wire);
                    self.left_out.extend(lost.into_iter().map(|l| at(label, l)));
                    chosen = Some(m.into_owned());
                }
                Item::Request { at: label, .. } => self.left_out.push(at(
                    label,
                    "a further PredictRequest (a bare request file holds one; write a TFRecord for several)",
                )),
                Item::Record {
                    at: label, kind, ..
                } => self.left_out.push(at(
                    label,
                    format!(
                        "{} (a bare request file holds one PredictRequest)",
                        if *kind == LogKind::None {
                            "a record with no log_type".to_string()
                        } else {
                            format!("{kind} record")
                        }
                    ),
                )),
            }
        }
        let Some(m) = chosen else {
            return Err(Error::from(ConvertError::NoPredictRequest {
                target: target.as_str(),
            }));
        };
        Ok(encode(&m, wire, style_for(&m))?)
    }

    /// The result, or the items the target could not carry when a lossy conversion was
    /// not allowed.
    fn finish(self, data: Vec<u8>, records: usize) -> Result<Converted, Error> {
        if !self.left_out.is_empty() && !self.opts.lossy {
            return Err(Error::from(ErrorDetail::WouldLose {
                target: self.target.as_str(),
                left_out: self.left_out,
            }));
        }
        Ok(Converted {
            data,
            target: self.target,
            records,
            left_out: self.left_out,
            scrubbed_out: self.scrubbed_out,
        })
    }
}

fn has_response(record: &Bytes) -> bool {
    beside_request(record).is_ok_and(|b| b.iter().any(|p| p == "predict_log.response"))
}

/// `msg` made encodable as `wire`, and what that leaves out, in words (see the module
/// docs). Nothing is lost within one wire format.
///
/// ```
/// let bytes = std::fs::read("tests/data/tfs/spec_vector.bin")?;
/// let m = tfreq::decode(&bytes)?;
/// let (_, lost) = tfreq::formats::fit(&m, tfreq::WireFormat::Eas);
/// assert_eq!(lost, ["model_spec.name \"m\" (EAS requests name no model)",
///                   "model_spec.version 3"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit(msg: &Message, wire: WireFormat) -> (Cow<'_, Message>, Vec<String>) {
    if msg.wire == wire {
        return (Cow::Borrowed(msg), Vec::new());
    }
    let mut lost = Vec::new();
    for u in msg.all_unknown() {
        lost.push(if u.path.is_empty() {
            format!("unknown field {}", u.number)
        } else {
            format!("unknown field {} in {}", u.number, u.path)
        });
    }
    if wire == WireFormat::Eas {
        if let Some(s) = &msg.model_spec {
            if !s.name.is_empty() {
                lost.push(format!(
                    "model_spec.name {:?} (EAS requests name no model)",
                    s.name
                ));
            }
            if let Some(v) = s.version {
                lost.push(format!("model_spec.version {v}"));
            }
            if let Some(l) = &s.version_label {
                lost.push(format!("model_spec.version_label {l:?}"));
            }
        }
        for (name, _) in &msg.extra {
            lost.push(name.to_string());
        }
    }
    let map = if msg.kind == Kind::Request {
        "inputs"
    } else {
        "outputs"
    };
    let mut keep = Vec::with_capacity(msg.tensors.len());
    let mut wrapped: Vec<(usize, Vec<i32>)> = Vec::new();
    for (i, t) in msg.tensors.iter().enumerate() {
        let path = format!("{map}[{:?}]", t.name);
        let d = t.dtype.dtype().filter(|d| *d != DType::Invalid);
        match d {
            None => {
                lost.push(format!(
                    "{path}: dtype {} (no values to convert), the whole tensor",
                    t.dtype
                ));
                continue;
            }
            Some(d) if wire == WireFormat::Eas && !d.eas_can_carry() => {
                lost.push(format!(
                    "{path}: {d} (EAS has no such dtype), the whole tensor"
                ));
                continue;
            }
            _ => {}
        }
        if wire == WireFormat::Eas {
            if t.version_number != 0 {
                lost.push(format!("{path}.version_number {}", t.version_number));
            }
            for (j, dim) in t.shape.dims.iter().enumerate() {
                if !dim.name.is_empty() {
                    lost.push(format!("{path}.tensor_shape.dim[{j}].name {:?}", dim.name));
                }
            }
            if t.shape.unknown_rank {
                lost.push(format!("{path}.tensor_shape.unknown_rank"));
            }
        }
        if let Some(d) = d
            && let Some(w) = wrapped_ints(t, d, &path, &mut lost)
        {
            wrapped.push((i, w));
        }
        keep.push(i);
    }
    if lost.is_empty() {
        return (Cow::Borrowed(msg), lost);
    }
    let mut m = msg.clone();
    m.unknown.clear();
    m.tensors = keep
        .into_iter()
        .filter_map(|i| {
            let mut t = msg.tensors.get(i).cloned()?;
            if let Some((_, w)) = wrapped.iter().find(|(j, _)| *j == i) {
                for (f, v) in &mut t.fields {
                    if *f == ValueField::Int {
                        *v = Values::I32(Ints::Vec(w.clone()));
                    }
                }
            }
            Some(t)
        })
        .map(|mut t| {
            t.unknown.clear();
            t
        })
        .collect();
    (Cow::Owned(m), lost)
}

/// Out-of-range values listed one by one per tensor, then counted.
const LIST_CHANGED: usize = 8;

/// The `int_val` of a narrow integer dtype (int8, uint16, ...) with values outside the
/// dtype's range, which a conversion to the other wire format would change (TF Serving's
/// `tensor_content` holds the narrow type itself) or carry on unchanged into a file the
/// builder would refuse. Each such value is named in `lost` (`from`, and `to`: what
/// TensorFlow's C++ reader keeps, the low bits, as `VALUE_OUT_OF_RANGE` says), and the
/// values as TensorFlow reads them are returned for a lossy conversion to write.
fn wrapped_ints(t: &Tensor, d: DType, path: &str, lost: &mut Vec<String>) -> Option<Vec<i32>> {
    let (lo, hi) = d.info().int_range?;
    let Some(Values::I32(v)) = t.field(ValueField::Int) else {
        return None;
    };
    let bits = (hi - lo + 1).trailing_zeros();
    let signed = lo < 0;
    let wrap = |x: i64| -> i64 {
        let shift = 64 - bits;
        if signed {
            (x << shift) >> shift
        } else {
            ((x as u64) << shift >> shift) as i64
        }
    };
    let mut out: Vec<i32> = Vec::new();
    let mut changed = 0usize;
    for (j, x) in v.iter().enumerate() {
        let x64 = i64::from(x);
        if x64 < lo || x64 > hi {
            let to = wrap(x64);
            if changed < LIST_CHANGED {
                lost.push(format!(
                    "{path}.int_val[{j}]: the value {x}, outside {} ({lo}..={hi}); a lossy conversion writes {to}, the value TensorFlow reads",
                    d.name()
                ));
            }
            changed += 1;
            out.push(to as i32);
        } else {
            out.push(x);
        }
    }
    if changed == 0 {
        return None;
    }
    if changed > LIST_CHANGED {
        lost.push(format!(
            "{path}.int_val: {} more values outside {} ({lo}..={hi}), {changed} of {} in all; a lossy conversion writes each as the value TensorFlow reads (the low {bits} bits)",
            changed - LIST_CHANGED,
            d.name(),
            out.len()
        ));
    }
    Some(out)
}
