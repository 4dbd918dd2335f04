//! Protobuf text format, identical to Python's `text_format.MessageToString(msg)`
//! (protobuf 3.20, pure Python — what `print(msg)` writes with `eas_prediction`).
//!
//! The printer walks any message of `proto/` through its descriptor: fields in number
//! order, map entries sorted by key, enums by name (unknown numbers as numbers), floats
//! and bytes exactly as that printer writes them (`../spec/text-format.md`). Unknown
//! fields are not printed, as in Python.
//!
//! ```
//! use tfreq::{DType, TFRequest};
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])?;
//! req.add_fetch("y");
//! let text = tfreq::render::text::to_text(&req.to_bytes(), "tfreq.eas.PredictRequest")?;
//! assert_eq!(text, "signature_name: \"serving_default\"\ninputs {\n  key: \"x\"\n  value {\n    dtype: DT_FLOAT\n    array_shape {\n      dim: 1\n      dim: 2\n    }\n    float_val: 1.0\n    float_val: 2.0\n  }\n}\noutput_filter: \"y\"\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Write};

use prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind as FieldKind, MapKey, ReflectMessage, Value,
};

use super::escape::c_escape;
use super::pyfloat::{f32_text, f64_repr};
use crate::error::Error;

/// Decodes `bytes` as the named message and returns its text (without the trailing
/// newline `print` adds).
pub fn to_text(bytes: &[u8], message_name: &str) -> Result<String, Error> {
    let mut out = Vec::new();
    write_text(&mut out, bytes, message_name).map_err(|e| Error::Format(e.to_string()))?;
    String::from_utf8(out).map_err(|e| Error::Format(e.to_string()))
}

/// Streams the text of `bytes`, decoded as the named message, into `out`.
pub fn write_text(out: &mut dyn Write, bytes: &[u8], message_name: &str) -> io::Result<()> {
    let desc = crate::wire::pool()
        .get_message_by_name(message_name)
        .ok_or_else(|| io::Error::other(format!("no descriptor for {message_name}")))?;
    let msg = DynamicMessage::decode(desc, bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    write_message(out, &msg, 0)
}

/// Streams the text of an already decoded dynamic message.
pub fn write_message(out: &mut dyn Write, msg: &DynamicMessage, indent: usize) -> io::Result<()> {
    let mut fields: Vec<(FieldDescriptor, &Value)> = msg.fields().collect();
    fields.sort_by_key(|(f, _)| f.number());
    for (field, value) in fields {
        if field.is_map() {
            let Value::Map(map) = value else { continue };
            let FieldKind::Message(entry) = field.kind() else {
                continue;
            };
            let value_field = entry.map_entry_value_field();
            let mut keys: Vec<&MapKey> = map.keys().collect();
            keys.sort();
            for k in keys {
                pad(out, indent)?;
                writeln!(out, "{} {{", field.name())?;
                if !is_default_key(k) {
                    pad(out, indent + 2)?;
                    write!(out, "key: ")?;
                    write_key(out, k)?;
                    writeln!(out)?;
                }
                let v = &map[k];
                if matches!(value_field.kind(), FieldKind::Message(_)) || !is_default(v) {
                    write_field(out, &value_field, v, indent + 2)?;
                }
                pad(out, indent)?;
                writeln!(out, "}}")?;
            }
        } else if let Value::List(items) = value {
            for v in items {
                write_field(out, &field, v, indent)?;
            }
        } else {
            if !field.supports_presence() && is_default(value) {
                continue;
            }
            write_field(out, &field, value, indent)?;
        }
    }
    Ok(())
}

fn pad(out: &mut dyn Write, n: usize) -> io::Result<()> {
    write!(out, "{:n$}", "")
}

fn is_default_key(k: &MapKey) -> bool {
    match k {
        MapKey::Bool(b) => !b,
        MapKey::I32(v) => *v == 0,
        MapKey::I64(v) => *v == 0,
        MapKey::U32(v) => *v == 0,
        MapKey::U64(v) => *v == 0,
        MapKey::String(s) => s.is_empty(),
    }
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::I32(x) => *x == 0,
        Value::I64(x) => *x == 0,
        Value::U32(x) => *x == 0,
        Value::U64(x) => *x == 0,
        // -0.0 is not the default in Python (it compares bits for presence).
        Value::F32(x) => x.to_bits() == 0,
        Value::F64(x) => x.to_bits() == 0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::EnumNumber(n) => *n == 0,
        Value::Message(_) => false,
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
    }
}

fn write_key(out: &mut dyn Write, k: &MapKey) -> io::Result<()> {
    match k {
        MapKey::Bool(b) => write!(out, "{b}"),
        MapKey::I32(v) => write!(out, "{v}"),
        MapKey::I64(v) => write!(out, "{v}"),
        MapKey::U32(v) => write!(out, "{v}"),
        MapKey::U64(v) => write!(out, "{v}"),
        MapKey::String(s) => write!(out, "\"{}\"", c_escape(s.as_bytes())),
    }
}

fn write_field(
    out: &mut dyn Write,
    field: &FieldDescriptor,
    v: &Value,
    indent: usize,
) -> io::Result<()> {
    pad(out, indent)?;
    match v {
        Value::Message(m) => {
            writeln!(out, "{} {{", field.name())?;
            write_message(out, m, indent + 2)?;
            pad(out, indent)?;
            writeln!(out, "}}")
        }
        _ => {
            write!(out, "{}: ", field.name())?;
            write_scalar(out, field, v)?;
            writeln!(out)
        }
    }
}

fn write_scalar(out: &mut dyn Write, field: &FieldDescriptor, v: &Value) -> io::Result<()> {
    match v {
        Value::Bool(b) => write!(out, "{b}"),
        Value::I32(x) => write!(out, "{x}"),
        Value::I64(x) => write!(out, "{x}"),
        Value::U32(x) => write!(out, "{x}"),
        Value::U64(x) => write!(out, "{x}"),
        Value::F32(x) => write!(out, "{}", f32_text(*x)),
        Value::F64(x) => write!(out, "{}", f64_repr(*x)),
        Value::String(s) => write!(out, "\"{}\"", c_escape(s.as_bytes())),
        Value::Bytes(b) => write!(out, "\"{}\"", c_escape(b)),
        Value::EnumNumber(n) => match field.kind() {
            FieldKind::Enum(e) => match e.get_value(*n) {
                Some(ev) => write!(out, "{}", ev.name()),
                None => write!(out, "{n}"),
            },
            _ => write!(out, "{n}"),
        },
        Value::Message(m) => write!(out, "{}", m.descriptor().name()),
        Value::List(_) | Value::Map(_) => Ok(()),
    }
}
