//! The JSON document `tfreq inspect --format json` writes (schema in the README).
//!
//! Values are streamed one by one, so `--values all` on a large tensor never builds
//! the whole document in memory.

use std::io::{self, Write};

use base64::Engine;
use serde_json::{json, Value};

use crate::analysis::Finding;
use crate::model::{Elements, Kind, Message, Scalar, Tensor};

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
        Scalar::Mini(d, b) => match crate::minifloat::decode(*d, *b) {
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

/// The tensor's description without values.
pub fn tensor_head(t: &Tensor, wire: crate::WireFormat) -> serde_json::Map<String, Value> {
    let e = t.elements(wire);
    let mut m = serde_json::Map::new();
    m.insert("name".into(), json!(t.name));
    m.insert("dtype".into(), json!(t.dtype.to_string()));
    m.insert("dtype_number".into(), json!(t.dtype.0));
    m.insert("shape".into(), json!(t.shape.sizes()));
    if t.shape.unknown_rank {
        m.insert("unknown_rank".into(), json!(true));
    }
    m.insert("num_elements".into(), json!(e.expected));
    m.insert("stored".into(), json!(e.stored));
    m.insert("encoding".into(), json!(e.source.to_string()));
    m.insert("fill".into(), json!(fill_name(&e)));
    m
}

/// Streams one message's document (one JSON object, no trailing newline).
pub fn write_message(
    out: &mut dyn Write,
    file: &str,
    msg: &Message,
    problems: &[Finding],
    mode: ValuesMode,
) -> io::Result<()> {
    let mut head = serde_json::Map::new();
    head.insert("file".into(), json!(file));
    head.insert("wire".into(), json!(msg.wire.as_str()));
    head.insert("kind".into(), json!(msg.kind.as_str()));
    head.insert("size".into(), json!(msg.size));
    head.insert("signature_name".into(), json!(msg.signature_name));
    head.insert(
        "model_spec".into(),
        match &msg.model_spec {
            Some(s) => json!({"name": s.name, "version": s.version, "version_label": s.version_label, "signature_name": s.signature_name}),
            None => Value::Null,
        },
    );
    if msg.kind == Kind::Request {
        head.insert("fetches".into(), json!(msg.fetches));
    }
    head.insert("problems".into(), serde_json::to_value(problems)?);
    let unknown: Vec<Value> = msg
        .all_unknown()
        .map(|u| json!({"path": u.path, "number": u.number, "wire_type": u.wire_type, "offset": u.offset}))
        .collect();
    head.insert("unknown_fields".into(), json!(unknown));
    // Write the head without its closing brace, then stream the tensors.
    let head = serde_json::to_string(&Value::Object(head))?;
    out.write_all(&head.as_bytes()[..head.len() - 1])?;
    let key = if msg.kind == Kind::Request {
        "inputs"
    } else {
        "outputs"
    };
    write!(out, ",\"{key}\":[")?;
    for (i, t) in msg.tensors.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        let m = tensor_head(t, msg.wire);
        let s = serde_json::to_string(&Value::Object(m))?;
        if mode == ValuesMode::None {
            out.write_all(s.as_bytes())?;
            continue;
        }
        out.write_all(&s.as_bytes()[..s.len() - 1])?;
        let e = t.elements(msg.wire);
        let n = match mode {
            ValuesMode::All => e.stored,
            _ => e.stored.min(JSON_PREVIEW),
        };
        out.write_all(b",\"values\":[")?;
        for j in 0..n {
            if j > 0 {
                out.write_all(b",")?;
            }
            // j < n <= e.stored, and stored_get answers every index below stored.
            let v = e.stored_get(j).map(|s| scalar_json(&s)).ok_or_else(|| {
                io::Error::other(format!("{}: no stored value {j} of {}", t.name, e.stored))
            })?;
            serde_json::to_writer(&mut *out, &v)?;
        }
        write!(out, "],\"values_truncated\":{}}}", n < e.stored)?;
    }
    out.write_all(b"]}")
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
    let head = json!({
        "file": file,
        "container": c.kind.as_str(),
        "entries_count": c.entries.len(),
        "problems": serde_json::to_value(&c.findings)?,
    });
    let head = serde_json::to_string(&head)?;
    out.write_all(&head.as_bytes()[..head.len() - 1])?;
    out.write_all(b",\"entries\":[")?;
    for (i, e) in c.entries.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        let mut m = serde_json::Map::new();
        m.insert("index".into(), json!(e.index));
        m.insert("offset".into(), json!(e.offset));
        m.insert("size".into(), json!(e.size));
        if let Some(k) = e.log_kind {
            m.insert("log_type".into(), json!(k.name()));
        }
        if let Some(s) = &e.log_model_spec {
            m.insert("log_metadata_model_spec".into(), json!({"name": s.name, "version": s.version, "version_label": s.version_label, "signature_name": s.signature_name}));
        }
        match &e.content {
            Content::Line(l) => {
                m.insert(
                    "line".into(),
                    json!(String::from_utf8_lossy(l).into_owned()),
                );
            }
            Content::Log(log) => {
                m.insert("requests".into(), json!(log.requests.len()));
                let specs: Vec<Value> = log
                    .request_model_specs()
                    .iter()
                    .map(|s| json!({"name": s.name, "version": s.version, "version_label": s.version_label, "signature_name": s.signature_name}))
                    .collect();
                m.insert("model_specs".into(), json!(specs));
            }
            Content::Message(_) => {}
        }
        let s = serde_json::to_string(&Value::Object(m))?;
        if let Content::Message(msg) = &e.content {
            out.write_all(&s.as_bytes()[..s.len() - 1])?;
            out.write_all(b",\"message\":")?;
            let p = problems.get(i).map(Vec::as_slice).unwrap_or(&[]);
            write_message(out, &format!("{file} {}", e.label(c.kind)), msg, p, mode)?;
            out.write_all(b"}")?;
        } else {
            out.write_all(s.as_bytes())?;
        }
    }
    out.write_all(b"]}")
}

/// The `tfreq keys` document: totals, then each executor key with its count and shape
/// keys (`{"feed": {"dtype": .., "shape": [..]}}`), most frequent first.
pub fn write_coverage(
    out: &mut dyn Write,
    cov: &crate::analysis::coverage::KeyCounts,
) -> io::Result<()> {
    let keys: Vec<Value> = cov
        .executor_keys()
        .into_iter()
        .map(|g| {
            let shapes: Vec<Value> = g
                .shapes
                .iter()
                .map(|(k, n, first)| {
                    let feeds: serde_json::Map<String, Value> = k
                        .shapes
                        .iter()
                        .map(|(name, (dt, dims))| {
                            (name.clone(), json!({"dtype": dt, "shape": dims}))
                        })
                        .collect();
                    json!({"count": n, "feeds": feeds, "first": cov.describe(*first)})
                })
                .collect();
            json!({
                "signature": g.key.signature,
                "feeds": g.key.feeds,
                "fetches": g.key.fetches,
                "fetch_all": g.key.fetch_all,
                "count": g.count,
                "shapes": shapes,
            })
        })
        .collect();
    let mut doc = json!({
        "files": cov.files,
        "requests": cov.requests,
        "skipped": cov.skipped,
        "executor_keys": keys.len(),
        "shape_keys": cov.keys.len(),
        "keys": keys,
    });
    if !cov.unreadable.is_empty() {
        doc["unreadable"] = serde_json::to_value(&cov.unreadable)?;
    }
    serde_json::to_writer(&mut *out, &doc)?;
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
