//! The JSON document `tfreq inspect --format json` writes (schema in docs/formats.md).
//!
//! Values are streamed one by one, so `--values all` on a large tensor never builds
//! the whole document in memory.

use std::io::{self, Write};

use base64::Engine;
use serde::Serialize;
use serde::ser::{Error as _, SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::analysis::Finding;
use crate::model::{
    Elements, Example, ExampleInput, Kind, Message, Method, ModelSpec, Scalar, Tensor,
};

/// How many values the JSON carries per tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValuesMode {
    /// No `values` key.
    None,
    /// The first few stored values (`values_truncated` says whether there are more).
    #[default]
    Preview,
    /// Every stored value (not broadcast: what is on the wire).
    All,
}

/// How many values `Preview` carries.
pub const JSON_PREVIEW: usize = 8;

/// One value as JSON: numbers as numbers (`"nan"`, `"inf"`, `"-inf"` as strings),
/// UTF-8 strings as strings and other bytes as `{"b64": ...}`, complex as `[re, im]`.
pub fn scalar_json(v: &Scalar) -> Value {
    fn f(x: f64) -> Value {
        if x.is_finite() {
            json!(x)
        } else if x.is_nan() {
            json!("nan")
        } else if x > 0.0 {
            json!("inf")
        } else {
            json!("-inf")
        }
    }
    match v {
        // f32 through its shortest decimal, so 0.2f32 prints as 0.2, not 0.20000000298.
        Scalar::F32(x) => {
            if x.is_finite() {
                // Python's repr of a finite float ("0.2", "1e+20", "-3.5e-07") is always
                // a JSON number; the test below holds every kind of f32 to that.
                serde_json::from_str(&crate::render::pyfloat::f32_text(*x))
                    .expect("the repr of a finite f32 is a JSON number")
            } else {
                f(*x as f64)
            }
        }
        Scalar::F64(x) => f(*x),
        Scalar::F16(x) => f(x.to_f64()),
        Scalar::BF16(x) => f(x.to_f64()),
        Scalar::I64(x) => json!(x),
        Scalar::U64(x) => json!(x),
        Scalar::Bool(b) => json!(b),
        Scalar::C64(r, i) => json!([f(*r as f64), f(*i as f64)]),
        Scalar::C128(r, i) => json!([f(*r), f(*i)]),
        Scalar::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => json!(s),
            Err(_) => json!({"b64": base64::engine::general_purpose::STANDARD.encode(b)}),
        },
        Scalar::Byte(b) => json!(b),
        // Every value is exact in f64. With a dtype that is not a minifloat the bits
        // are all there is: the byte, as for `Byte`.
        Scalar::Mini(d, b) => match crate::minifloat::to_f32(*d, *b) {
            Some(x) => f(x as f64),
            None => json!(b),
        },
        Scalar::Opaque(b) => json!({"b64": base64::engine::general_purpose::STANDARD.encode(b)}),
    }
}

fn fill_name(e: &Elements) -> &'static str {
    use crate::model::Fill::*;
    match e.fill {
        Exact => "exact",
        Defaults => "defaults",
        RepeatLast => "repeat_last",
        Truncated => "truncated",
        BadShape => "bad_shape",
        BadContent => "bad_content",
    }
}

/// `model_spec` as the documents show it.
#[derive(Debug, Serialize)]
struct SpecJson<'a> {
    name: &'a str,
    signature_name: &'a str,
    version: Option<i64>,
    version_label: &'a Option<String>,
}

impl<'a> SpecJson<'a> {
    fn of(s: &'a ModelSpec) -> Self {
        SpecJson {
            name: &s.name,
            signature_name: &s.signature_name,
            version: s.version,
            version_label: &s.version_label,
        }
    }
}

/// Findings as the documents have always shown them: each finding's keys in
/// alphabetical order (`code`, `left`, `message`, `name`, `right`, `severity`).
#[derive(Debug, Clone, Copy)]
pub struct FindingsJson<'a>(pub &'a [Finding]);

impl Serialize for FindingsJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn absent(o: &&Option<String>) -> bool {
            o.is_none()
        }
        #[derive(Serialize)]
        struct One<'a> {
            code: &'a crate::finding::Code,
            #[serde(skip_serializing_if = "absent")]
            left: &'a Option<String>,
            message: &'a str,
            #[serde(skip_serializing_if = "absent")]
            name: &'a Option<String>,
            #[serde(skip_serializing_if = "absent")]
            right: &'a Option<String>,
            severity: &'a crate::finding::Severity,
        }
        s.collect_seq(self.0.iter().map(|f| One {
            code: &f.code,
            left: &f.left,
            message: &f.message,
            name: &f.name,
            right: &f.right,
            severity: &f.severity,
        }))
    }
}

/// One entry of `unknown_fields`.
#[derive(Debug, Serialize)]
struct UnknownJson<'a> {
    number: u32,
    offset: usize,
    path: &'a str,
    wire_type: u8,
}

/// One tensor of `inputs` / `outputs`: its description, then (unless
/// [`ValuesMode::None`]) its stored values, streamed one by one. Fields are in the
/// order the documents have always had (alphabetical, then the values).
#[derive(Debug, Serialize)]
struct TensorJson<'a> {
    dtype: String,
    dtype_number: i32,
    encoding: String,
    fill: &'static str,
    name: &'a str,
    num_elements: Option<u64>,
    shape: Vec<i64>,
    stored: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unknown_rank: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<StoredValues<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    values_truncated: Option<bool>,
}

/// The first `n` stored values of a tensor, serialised as a JSON array one value at
/// a time (never the whole array in memory).
#[derive(Debug)]
struct StoredValues<'a> {
    name: &'a str,
    elements: Elements<'a>,
    n: usize,
}

impl Serialize for StoredValues<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = &self.elements;
        let mut seq = s.serialize_seq(Some(self.n))?;
        for j in 0..self.n {
            // j < n <= e.stored, and stored_get answers every index below stored.
            let v = e.stored_get(j).ok_or_else(|| {
                S::Error::custom(format!(
                    "{}: no stored value {j} of {}",
                    self.name, e.stored
                ))
            })?;
            seq.serialize_element(&scalar_json(&v))?;
        }
        seq.end()
    }
}

impl<'a> TensorJson<'a> {
    fn of(t: &'a Tensor, wire: crate::WireFormat, mode: ValuesMode) -> Self {
        let e = t.elements(wire);
        let n = match mode {
            ValuesMode::None => None,
            ValuesMode::All => Some(e.stored),
            ValuesMode::Preview => Some(e.stored.min(JSON_PREVIEW)),
        };
        TensorJson {
            dtype: t.dtype.to_string(),
            dtype_number: t.dtype.0,
            encoding: e.source.to_string(),
            fill: fill_name(&e),
            name: &t.name,
            num_elements: e.expected,
            shape: t.shape.sizes(),
            stored: e.stored,
            unknown_rank: t.shape.unknown_rank,
            values_truncated: n.map(|n| n < e.stored),
            values: n.map(|n| StoredValues {
                name: &t.name,
                elements: e,
                n,
            }),
        }
    }
}

/// One feature of an example: its name, kind (`bytes`, `float`, `int64`, `none`),
/// number of values and (unless [`ValuesMode::None`]) its values.
#[derive(Debug, Serialize)]
struct FeatureJson<'a> {
    kind: &'static str,
    length: usize,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    values_truncated: Option<bool>,
}

fn example_json(e: &Example, mode: ValuesMode) -> Vec<FeatureJson<'_>> {
    e.features
        .iter()
        .map(|f| {
            let n = match mode {
                ValuesMode::None => None,
                ValuesMode::All => Some(f.values.len()),
                ValuesMode::Preview => Some(f.values.len().min(JSON_PREVIEW)),
            };
            FeatureJson {
                kind: f.values.kind(),
                length: f.values.len(),
                name: &f.name,
                values: n.map(|n| f.values.preview(n).iter().map(scalar_json).collect()),
                values_truncated: n.map(|n| n < f.values.len()),
            }
        })
        .collect()
}

/// A classify, regress or multi-inference request's `input`.
#[derive(Debug, Serialize)]
struct InputJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<Vec<FeatureJson<'a>>>,
    examples: Vec<Vec<FeatureJson<'a>>>,
    list: &'static str,
}

impl<'a> InputJson<'a> {
    fn of(i: &'a ExampleInput, mode: ValuesMode) -> Self {
        InputJson {
            context: i.context.as_ref().map(|c| example_json(c, mode)),
            examples: i.examples.iter().map(|e| example_json(e, mode)).collect(),
            list: if i.with_context {
                "example_list_with_context"
            } else {
                "example_list"
            },
        }
    }
}

/// One task of a multi-inference request.
#[derive(Debug, Serialize)]
struct TaskJson<'a> {
    method_name: &'a str,
    model_spec: Option<SpecJson<'a>>,
}

/// One message's document ([`write_message`]), as a value to serialise or to embed in
/// a larger document. Fields are in the order the documents have always had
/// (alphabetical, then the tensors).
#[derive(Debug, Serialize)]
pub struct MessageJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    fetches: Option<&'a [String]>,
    file: &'a str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Method::is_predict")]
    method: Method,
    model_spec: Option<SpecJson<'a>>,
    problems: FindingsJson<'a>,
    signature_name: &'a str,
    size: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<Vec<TaskJson<'a>>>,
    unknown_fields: Vec<UnknownJson<'a>>,
    wire: &'static str,
    /// The examples of a classify, regress or multi-inference request (`null` when it
    /// has no `input`).
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<Option<InputJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inputs: Option<Vec<TensorJson<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<Vec<TensorJson<'a>>>,
}

impl<'a> MessageJson<'a> {
    /// The document of `msg` read from `file`, with its findings and `mode`'s values.
    pub fn new(file: &'a str, msg: &'a Message, problems: &'a [Finding], mode: ValuesMode) -> Self {
        let request = msg.kind == Kind::Request;
        let tensors: Vec<TensorJson<'a>> = msg
            .tensors
            .iter()
            .map(|t| TensorJson::of(t, msg.wire, mode))
            .collect();
        let examples = msg.method.takes_examples();
        let (inputs, outputs) = if examples {
            (None, None)
        } else if request {
            (Some(tensors), None)
        } else {
            (None, Some(tensors))
        };
        MessageJson {
            fetches: (request && !examples).then_some(msg.fetches.as_slice()),
            file,
            kind: msg.kind.as_str(),
            method: msg.method,
            tasks: (msg.method == Method::MultiInference).then(|| {
                msg.tasks
                    .iter()
                    .map(|t| TaskJson {
                        method_name: &t.method_name,
                        model_spec: t.model_spec.as_ref().map(SpecJson::of),
                    })
                    .collect()
            }),
            input: examples.then(|| msg.input.as_ref().map(|i| InputJson::of(i, mode))),
            model_spec: msg.model_spec.as_ref().map(SpecJson::of),
            problems: FindingsJson(problems),
            signature_name: &msg.signature_name,
            size: msg.size,
            unknown_fields: msg
                .all_unknown()
                .map(|u| UnknownJson {
                    number: u.number,
                    offset: u.offset,
                    path: &u.path,
                    wire_type: u.wire_type,
                })
                .collect(),
            wire: msg.wire.as_str(),
            inputs,
            outputs,
        }
    }
}

/// Streams one message's document (one JSON object, no trailing newline).
pub fn write_message(
    out: &mut dyn Write,
    file: &str,
    msg: &Message,
    problems: &[Finding],
    mode: ValuesMode,
) -> io::Result<()> {
    crate::escape::json_write(out, &MessageJson::new(file, msg, problems, mode), false)?;
    Ok(())
}

/// The document of a multi-entry file.
#[derive(Debug, Serialize)]
struct ContainerJson<'a> {
    container: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    compression: Option<String>,
    entries_count: usize,
    file: &'a str,
    problems: FindingsJson<'a>,
    entries: Vec<EntryJson<'a>>,
}

/// One record or line of a multi-entry file.
#[derive(Debug, Serialize)]
struct EntryJson<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_metadata_model_spec: Option<SpecJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    log_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_specs: Option<Vec<SpecJson<'a>>>,
    offset: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    requests: Option<usize>,
    size: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<MessageJson<'a>>,
    /// A streamed record that is not a message: what the warm-up loader makes of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    problems: Option<FindingsJson<'a>>,
}

/// Streams the document of a multi-entry file (TFRecord or text warm-up): the file's
/// kind and findings, then an `entries` array with one object per record or line; a
/// message entry carries its [`write_message`] document under `message`. `problems`
/// holds each entry's findings, in entry order.
pub fn write_container(
    out: &mut dyn Write,
    file: &str,
    c: &crate::formats::Container,
    problems: &[Vec<Finding>],
    mode: ValuesMode,
) -> io::Result<()> {
    use crate::formats::Content;
    // What the entries' documents borrow: each message's label, each log's specs.
    let labels: Vec<String> = c
        .entries
        .iter()
        .map(|e| format!("{file} {}", e.label(c.kind)))
        .collect();
    let specs: Vec<Vec<ModelSpec>> = c
        .entries
        .iter()
        .map(|e| match &e.content {
            Content::Log(log) => log.request_model_specs(),
            _ => Vec::new(),
        })
        .collect();
    let entries = c
        .entries
        .iter()
        .zip(labels.iter().zip(&specs))
        .enumerate()
        .map(|(i, (e, (label, specs)))| {
            let p = problems.get(i).map(Vec::as_slice).unwrap_or(&[]);
            entry_json(e, label, specs, p, mode)
        })
        .collect();
    let doc = ContainerJson {
        container: c.kind.as_str(),
        compression: c.compression.map(|z| z.to_string()),
        entries_count: c.entries.len(),
        file,
        problems: FindingsJson(&c.findings),
        entries,
    };
    crate::escape::json_write(out, &doc, false)?;
    Ok(())
}

/// The document of [`write_container`] for a TFRecord log whose entries are not kept,
/// written in two parts: [`write_log_start`] (the file's kind, compression, entry
/// count and findings, which the caller gathered first) opens it, then each entry
/// ([`write_log_entry`], `first` for the first), then [`write_log_end`]. The bytes are
/// those [`write_container`] writes for the same file.
pub fn write_log_start(
    out: &mut dyn Write,
    file: &str,
    compression: Option<crate::formats::compression::Compression>,
    entries: usize,
    findings: &[Finding],
) -> io::Result<()> {
    write!(out, "{{\"container\":")?;
    crate::escape::json_write(
        &mut *out,
        &crate::formats::ContainerKind::TfRecord.as_str(),
        false,
    )?;
    if let Some(z) = compression {
        out.write_all(b",\"compression\":")?;
        crate::escape::json_write(&mut *out, &z.to_string(), false)?;
    }
    write!(out, ",\"entries_count\":{entries},\"file\":")?;
    crate::escape::json_write(&mut *out, &file, false)?;
    out.write_all(b",\"problems\":")?;
    crate::escape::json_write(&mut *out, &FindingsJson(findings), false)?;
    out.write_all(b",\"entries\":[")
}

/// One entry of a log's document (see [`write_log_start`]), with its findings.
pub fn write_log_entry(
    out: &mut dyn Write,
    file: &str,
    e: &crate::formats::Entry,
    problems: &[Finding],
    mode: ValuesMode,
    first: bool,
) -> io::Result<()> {
    use crate::formats::Content;
    if !first {
        out.write_all(b",")?;
    }
    let label = format!(
        "{file} {}",
        e.label(crate::formats::ContainerKind::TfRecord)
    );
    let specs = match &e.content {
        Content::Log(log) => log.request_model_specs(),
        _ => Vec::new(),
    };
    crate::escape::json_write(out, &entry_json(e, &label, &specs, problems, mode), false)
}

/// Closes a log's document (see [`write_log_start`]).
pub fn write_log_end(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"]}")
}

/// One entry's object in a container document.
fn entry_json<'a>(
    e: &'a crate::formats::Entry,
    label: &'a str,
    specs: &'a [ModelSpec],
    problems: &'a [Finding],
    mode: ValuesMode,
) -> EntryJson<'a> {
    use crate::formats::Content;
    let mut j = EntryJson {
        index: e.index,
        line: None,
        log_metadata_model_spec: e.log_model_spec.as_ref().map(SpecJson::of),
        log_type: e.log_kind.map(|k| k.name()),
        model_specs: None,
        offset: e.offset,
        requests: None,
        size: e.size,
        message: None,
        problems: None,
    };
    match &e.content {
        Content::Line(l) => j.line = Some(String::from_utf8_lossy(l).into_owned()),
        Content::Log(log) => {
            j.requests = Some(log.requests.len());
            j.model_specs = Some(specs.iter().map(SpecJson::of).collect());
            if !problems.is_empty() {
                j.problems = Some(FindingsJson(problems));
            }
        }
        Content::Message(msg) => j.message = Some(MessageJson::new(label, msg, problems, mode)),
    }
    j
}

/// The document of a TFRecord log read as a stream (standard input), written a record
/// at a time so that memory does not grow with the log: the keys of
/// [`write_container`]'s document, with `"streamed": true`, and the count and the
/// findings about the log as a whole after the entries (they are known only at the end).
///
/// ```
/// use tfreq::formats::{read, InputOptions};
/// use tfreq::render::StreamedContainer;
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_predict.tfrecord".as_ref())?;
/// let mut out = Vec::new();
/// let mut doc = StreamedContainer::start(&mut out, "-", Default::default())?;
/// for e in read(bytes, &InputOptions::new())? {
///     doc.entry(&mut out, &e?, &[])?;
/// }
/// doc.finish(&mut out, &[])?;
/// let v: serde_json::Value = serde_json::from_slice(&out)?;
/// assert_eq!((v["entries_count"].as_u64(), v["streamed"].as_bool()), (Some(3), Some(true)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StreamedContainer {
    file: String,
    mode: ValuesMode,
    entries: usize,
}

impl StreamedContainer {
    /// Writes the head of the document of `file` (a TFRecord log).
    pub fn start(out: &mut dyn Write, file: &str, mode: ValuesMode) -> io::Result<Self> {
        write!(out, "{{\"container\":\"tfrecord\",\"file\":")?;
        crate::escape::json_write(&mut *out, &file, false)?;
        write!(out, ",\"streamed\":true,\"entries\":[")?;
        Ok(StreamedContainer {
            file: file.to_string(),
            mode,
            entries: 0,
        })
    }

    /// Writes one entry, with its findings.
    pub fn entry(
        &mut self,
        out: &mut dyn Write,
        e: &crate::formats::Entry,
        problems: &[Finding],
    ) -> io::Result<()> {
        use crate::formats::Content;
        if self.entries > 0 {
            out.write_all(b",")?;
        }
        self.entries += 1;
        let label = format!("{} record {}", self.file, e.index);
        let specs = match &e.content {
            Content::Log(log) => log.request_model_specs(),
            _ => Vec::new(),
        };
        let j = entry_json(e, &label, &specs, problems, self.mode);
        crate::escape::json_write(out, &j, false)
    }

    /// Ends the document with the entry count and the findings about the log as a
    /// whole.
    pub fn finish(self, out: &mut dyn Write, problems: &[Finding]) -> io::Result<()> {
        write!(out, "],\"entries_count\":{},\"problems\":", self.entries)?;
        crate::escape::json_write(&mut *out, &FindingsJson(problems), false)?;
        out.write_all(b"}")
    }
}

/// The `tfreq keys` document: the summary of
/// [`crate::analysis::Summary`] (schema 1), which `tfreq keys merge` combines.
pub fn write_coverage_json(
    out: &mut dyn Write,
    cov: &crate::analysis::coverage::KeyCounts,
) -> io::Result<()> {
    write_summary_json(out, &crate::analysis::summary::Summary::of(cov))
}

/// A summary document (one line, no newline after it).
pub fn write_summary_json(
    out: &mut dyn Write,
    s: &crate::analysis::summary::Summary,
) -> io::Result<()> {
    crate::escape::json_write(&mut *out, s, false)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_finite_f32_prints_as_a_json_number() {
        let mut xs = vec![
            0.0f32,
            -0.0,
            0.2,
            1.0,
            -3.5e-7,
            1e16,
            1e17,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::from_bits(1), // smallest subnormal
            f32::EPSILON,
        ];
        // A spread over every exponent.
        xs.extend((0..=u32::from(u8::MAX - 1)).map(|e| f32::from_bits((e << 23) | 0x12345)));
        for x in xs {
            let v = scalar_json(&Scalar::F32(x));
            assert!(v.is_number(), "{x:?} -> {v}");
            assert_eq!(v.as_f64().map(|y| y as f32), Some(x), "{x:?}");
        }
    }
}
