//! Protobuf text format, identical to Python's `text_format.MessageToString(msg)`
//! (protobuf 3.20, pure Python — what `print(msg)` writes with `eas_prediction`).
//!
//! The printer walks the wire bytes of any message of `proto/` through its descriptor
//! and streams the text as it goes, so a gigabyte tensor is printed in constant memory:
//! nothing is decoded into a message first. It follows Python's reading of the bytes:
//! fields in number order, repeated values in wire order (packed or not), the last
//! value of a singular field, every occurrence of a singular message merged, the last
//! member of a oneof, map entries by key (the last entry of a key wins), enums by name
//! (unknown numbers as numbers), floats and bytes exactly as that printer writes them
//! (<https://github.com/protocolbuffers/protobuf/blob/v3.20.3/python/google/protobuf/text_format.py>). Unknown fields, and known fields with a wire type their
//! type cannot have, are not printed, as in Python.
//!
//! ```
//! use tfreq::{DType, TFRequest};
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])?;
//! req.add_fetch("y");
//! let text = tfreq::render::to_text(&req.to_bytes()?, "tfreq.eas.PredictRequest")?;
//! assert_eq!(text, "signature_name: \"serving_default\"\ninputs {\n  key: \"x\"\n  value {\n    dtype: DT_FLOAT\n    array_shape {\n      dim: 1\n      dim: 2\n    }\n    float_val: 1.0\n    float_val: 2.0\n  }\n}\noutput_filter: \"y\"\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};

use bytes::Bytes;
use prost_reflect::{FieldDescriptor, Kind as FieldKind, MessageDescriptor};

use super::escape::write_c_escaped;
use super::pyfloat::PyFloat;
use crate::error::{DecodeError, DecodeErrorKind, Error, ErrorDetail};
use crate::wire::reader::{RECURSION_LIMIT, Reader, WireField, WireValue, for_each_varint};

/// Decodes `bytes` as the named message and returns its text (without the trailing
/// newline `print` adds).
pub fn to_text(bytes: &[u8], message_name: &str) -> Result<String, Error> {
    let mut out = Vec::new();
    write_text(&mut out, Bytes::copy_from_slice(bytes), message_name)
        .map_err(|e| Error::from(ErrorDetail::Format(e.to_string())))?;
    String::from_utf8(out).map_err(|e| Error::from(ErrorDetail::Format(e.to_string())))
}

/// Streams the text of `bytes`, read as the named message, into `out`.
///
/// Malformed bytes (a truncated field, a string that is not UTF-8, nesting past
/// [`RECURSION_LIMIT`]) are an `InvalidData` error naming the byte offset; what was
/// written before it stays written.
pub fn write_text(out: &mut dyn Write, bytes: Bytes, message_name: &str) -> io::Result<()> {
    let desc = crate::wire::pool()
        .get_message_by_name(message_name)
        .ok_or_else(|| io::Error::other(format!("no descriptor for {message_name}")))?;
    let parts = [Part { bytes, base: 0 }];
    write_message(out, &parts, &desc, 0, 0)
}

/// One occurrence of a message's bytes; a merged message is several, read in order
/// (protobuf merges a message field that occurs twice as if its bytes were joined).
#[derive(Clone)]
struct Part {
    bytes: Bytes,
    /// Absolute offset of `bytes[0]`, for errors.
    base: usize,
}

fn invalid(e: DecodeError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// Every field of a message (all its parts), in wire order, with its running index.
fn for_each_field(
    parts: &[Part],
    depth: usize,
    mut f: impl FnMut(usize, WireField) -> io::Result<()>,
) -> io::Result<()> {
    let mut seq = 0usize;
    for p in parts {
        let mut r = Reader::at(p.bytes.clone(), p.base, depth).map_err(invalid)?;
        while let Some(field) = r.next_field().map_err(invalid)? {
            f(seq, field)?;
            seq += 1;
        }
    }
    Ok(())
}

/// Whether Python's parser reads this wire value as `field` (anything else is an
/// unknown field to it): the type's own wire type, or a packed run for a repeated number.
fn accepts(field: &FieldDescriptor, v: &WireValue) -> bool {
    let own = match field.kind() {
        FieldKind::Double | FieldKind::Fixed64 | FieldKind::Sfixed64 => 1,
        FieldKind::Float | FieldKind::Fixed32 | FieldKind::Sfixed32 => 5,
        FieldKind::String | FieldKind::Bytes | FieldKind::Message(_) => 2,
        _ => 0,
    };
    v.wire_type() == own || (field.is_list() && own != 2 && v.wire_type() == 2)
}

/// What one pass over a message learned: which fields occur, and for each oneof member
/// the index from which its occurrences count (a later other member clears it).
struct Presence {
    present: BTreeMap<u32, usize>,
}

fn presence(parts: &[Part], desc: &MessageDescriptor, depth: usize) -> io::Result<Presence> {
    // Field number → index of its first counted occurrence.
    let mut present: BTreeMap<u32, usize> = BTreeMap::new();
    // Oneof name → its current member.
    let mut oneof_member: BTreeMap<String, u32> = BTreeMap::new();
    for_each_field(parts, depth, |seq, wf| {
        let Some(field) = desc.get_field(wf.number) else {
            return Ok(());
        };
        if !accepts(&field, &wf.value) {
            return Ok(());
        }
        if let Some(o) = field.containing_oneof()
            && let Some(prev) = oneof_member.insert(o.name().to_string(), wf.number)
            && prev != wf.number
        {
            // Setting another member clears this one: it counts from here.
            present.remove(&prev);
            present.insert(wf.number, seq);
            return Ok(());
        }
        present.entry(wf.number).or_insert(seq);
        Ok(())
    })?;
    Ok(Presence { present })
}

fn write_message(
    out: &mut dyn Write,
    parts: &[Part],
    desc: &MessageDescriptor,
    indent: usize,
    depth: usize,
) -> io::Result<()> {
    if depth > RECURSION_LIMIT {
        let at = parts.first().map_or(0, |p| p.base);
        return Err(invalid(DecodeError::new(
            DecodeErrorKind::TooDeep(RECURSION_LIMIT),
            at,
        )));
    }
    let Presence { present } = presence(parts, desc, depth)?;
    for (&number, &from) in &present {
        let Some(field) = desc.get_field(number) else {
            continue;
        };
        // The occurrences of this field that count, in wire order.
        let occurrences = |f: &mut dyn FnMut(WireField) -> io::Result<()>| {
            for_each_field(parts, depth, |seq, wf| {
                if wf.number == number && seq >= from && accepts(&field, &wf.value) {
                    f(wf)?;
                }
                Ok(())
            })
        };
        if field.is_map() {
            write_map(out, &field, &occurrences, indent, depth)?;
        } else if field.is_list() {
            occurrences(&mut |wf| write_repeated(out, &field, wf, indent, depth))?;
        } else {
            match field.kind() {
                FieldKind::Message(m) => {
                    let mut merged = Vec::new();
                    occurrences(&mut |wf| {
                        if let WireValue::Len(bytes) = wf.value {
                            merged.push(Part {
                                bytes,
                                base: wf.value_offset,
                            });
                        }
                        Ok(())
                    })?;
                    write_submessage(out, field.name(), &merged, &m, indent, depth)?;
                }
                _ => {
                    let mut last = None;
                    occurrences(&mut |wf| {
                        last = Some(wf);
                        Ok(())
                    })?;
                    if let Some(wf) = last {
                        let v = scalar(&field.kind(), &wf.value, wf.value_offset)?;
                        if field.supports_presence() || !v.is_default() {
                            write_line(out, field.name(), &v, indent)?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn write_submessage(
    out: &mut dyn Write,
    name: &str,
    parts: &[Part],
    desc: &MessageDescriptor,
    indent: usize,
    depth: usize,
) -> io::Result<()> {
    pad(out, indent)?;
    writeln!(out, "{name} {{")?;
    write_message(out, parts, desc, indent + 2, depth + 1)?;
    pad(out, indent)?;
    writeln!(out, "}}")
}

/// One occurrence of a repeated field: a message, a string, or one value or a packed run.
fn write_repeated(
    out: &mut dyn Write,
    field: &FieldDescriptor,
    wf: WireField,
    indent: usize,
    depth: usize,
) -> io::Result<()> {
    let kind = field.kind();
    match (&kind, wf.value) {
        (FieldKind::Message(m), WireValue::Len(bytes)) => {
            let part = [Part {
                bytes,
                base: wf.value_offset,
            }];
            write_submessage(out, field.name(), &part, m, indent, depth)
        }
        (FieldKind::String | FieldKind::Bytes, v) => {
            let s = scalar(&kind, &v, wf.value_offset)?;
            write_line(out, field.name(), &s, indent)
        }
        (_, WireValue::Len(run)) => write_packed(out, field, &run, wf.value_offset, indent),
        (_, v) => {
            let s = scalar(&kind, &v, wf.value_offset)?;
            write_line(out, field.name(), &s, indent)
        }
    }
}

/// A packed run, element after element, as it is read (never collected).
fn write_packed(
    out: &mut dyn Write,
    field: &FieldDescriptor,
    run: &[u8],
    base: usize,
    indent: usize,
) -> io::Result<()> {
    let kind = field.kind();
    let size = match kind {
        FieldKind::Double | FieldKind::Fixed64 | FieldKind::Sfixed64 => 8,
        FieldKind::Float | FieldKind::Fixed32 | FieldKind::Sfixed32 => 4,
        _ => 0,
    };
    if size == 0 {
        // Varints, printed as they are read; a malformed one ends the run with an error.
        let mut result = Ok(());
        for_each_varint(run, base, |v| {
            if result.is_ok() {
                result = scalar(&kind, &WireValue::Varint(v), base)
                    .and_then(|s| write_line(out, field.name(), &s, indent));
            }
        })
        .map_err(invalid)?;
        return result;
    }
    if !run.len().is_multiple_of(size) {
        return Err(invalid(DecodeError::new(
            DecodeErrorKind::Other(format!(
                "packed {} is {} bytes, not a multiple of {size}",
                field.name(),
                run.len()
            )),
            base,
        )));
    }
    if matches!(kind, FieldKind::Float | FieldKind::Double) {
        return write_packed_floats(out, field.name(), run, size, indent);
    }
    for chunk in run.chunks_exact(size) {
        let v = if size == 4 {
            let mut a = [0u8; 4];
            a.copy_from_slice(chunk);
            WireValue::I32(u32::from_le_bytes(a))
        } else {
            let mut a = [0u8; 8];
            a.copy_from_slice(chunk);
            WireValue::I64(u64::from_le_bytes(a))
        };
        write_line(out, field.name(), &scalar(&kind, &v, base)?, indent)?;
    }
    Ok(())
}

/// The lines of a packed `float` (`size` 4) or `double` (8) run, as [`write_line`]
/// writes them, laid out in a buffer and written 32 KiB at a time (one
/// `write_all` per line went through `dyn Write` four times per value).
fn write_packed_floats(
    out: &mut dyn Write,
    name: &str,
    run: &[u8],
    size: usize,
    indent: usize,
) -> io::Result<()> {
    const FLUSH_AT: usize = 1 << 15;
    let mut prefix = vec![b' '; indent];
    prefix.extend_from_slice(name.as_bytes());
    prefix.extend_from_slice(b": ");
    // A line is the prefix and at most 25 bytes of number and newline.
    let line = prefix.len() + 26;
    let lines = run.len() / size;
    let mut buf = Vec::with_capacity(lines.saturating_mul(line).min(FLUSH_AT) + line);
    for chunk in run.chunks_exact(size) {
        let text = if size == 4 {
            let mut a = [0u8; 4];
            a.copy_from_slice(chunk);
            PyFloat::f32(f32::from_le_bytes(a))
        } else {
            let mut a = [0u8; 8];
            a.copy_from_slice(chunk);
            PyFloat::f64(f64::from_le_bytes(a))
        };
        buf.extend_from_slice(&prefix);
        buf.extend_from_slice(text.as_str().as_bytes());
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

/// Hands each counted occurrence of one field to a callback.
type Occurrences<'a> = dyn Fn(&mut dyn FnMut(WireField) -> io::Result<()>) -> io::Result<()> + 'a;

/// A map key, ordered as Python's `sorted` orders them.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum SortKey {
    Int(i128),
    Str(Vec<u8>),
}

/// The entries of a map field: the last entry of each key, by key.
fn write_map(
    out: &mut dyn Write,
    field: &FieldDescriptor,
    occurrences: &Occurrences<'_>,
    indent: usize,
    depth: usize,
) -> io::Result<()> {
    let FieldKind::Message(entry) = field.kind() else {
        return Ok(());
    };
    let key_field = entry.map_entry_key_field();
    let value_field = entry.map_entry_value_field();
    let mut entries: BTreeMap<SortKey, (Scalar, Part)> = BTreeMap::new();
    occurrences(&mut |wf| {
        let WireValue::Len(bytes) = wf.value else {
            return Ok(());
        };
        let part = [Part {
            bytes,
            base: wf.value_offset,
        }];
        // The entry's key: its last occurrence, or the default.
        let mut key = None;
        for_each_field(&part, depth + 1, |_, kf| {
            if kf.number == key_field.number() && accepts(&key_field, &kf.value) {
                key = Some(scalar(&key_field.kind(), &kf.value, kf.value_offset)?);
            }
            Ok(())
        })?;
        let key = match key {
            Some(k) => k,
            None => Scalar::default_of(&key_field.kind()),
        };
        let [part] = part;
        entries.insert(key.sort_key(), (key, part));
        Ok(())
    })?;
    for (key, entry_part) in entries.values() {
        pad(out, indent)?;
        writeln!(out, "{} {{", field.name())?;
        if !key.is_default() {
            write_line(out, "key", key, indent + 2)?;
        }
        // The entry as a message of its own: its value is printed as any field is, but
        // a message value is printed even when empty (Python writes `value {\n}`).
        let part = std::slice::from_ref(entry_part);
        let mut merged = Vec::new();
        let mut last = None;
        for_each_field(part, depth + 1, |_, vf| {
            if vf.number == value_field.number() && accepts(&value_field, &vf.value) {
                if let WireValue::Len(bytes) = &vf.value {
                    merged.push(Part {
                        bytes: bytes.clone(),
                        base: vf.value_offset,
                    });
                }
                last = Some(vf);
            }
            Ok(())
        })?;
        match value_field.kind() {
            FieldKind::Message(m) => {
                write_submessage(out, value_field.name(), &merged, &m, indent + 2, depth + 1)?
            }
            kind => {
                if let Some(vf) = last {
                    let v = scalar(&kind, &vf.value, vf.value_offset)?;
                    if !v.is_default() {
                        write_line(out, value_field.name(), &v, indent + 2)?;
                    }
                }
            }
        }
        pad(out, indent)?;
        writeln!(out, "}}")?;
    }
    Ok(())
}

/// One scalar value, read as its field's type.
enum Scalar {
    Bool(bool),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    Str(Bytes),
    Bytes(Bytes),
    Enum(prost_reflect::EnumDescriptor, i32),
}

impl Scalar {
    fn default_of(kind: &FieldKind) -> Scalar {
        scalar(kind, &WireValue::Varint(0), 0)
            .or_else(|_| scalar(kind, &WireValue::Len(Bytes::new()), 0))
            .unwrap_or(Scalar::I64(0))
    }

    fn is_default(&self) -> bool {
        match self {
            Scalar::Bool(b) => !b,
            Scalar::I64(v) => *v == 0,
            Scalar::U64(v) => *v == 0,
            // -0.0 is not the default in Python (it compares bits for presence).
            Scalar::F32(x) => x.to_bits() == 0,
            Scalar::F64(x) => x.to_bits() == 0,
            Scalar::Str(b) | Scalar::Bytes(b) => b.is_empty(),
            Scalar::Enum(_, n) => *n == 0,
        }
    }

    fn sort_key(&self) -> SortKey {
        match self {
            Scalar::Bool(b) => SortKey::Int(i128::from(*b)),
            Scalar::I64(v) => SortKey::Int(i128::from(*v)),
            Scalar::U64(v) => SortKey::Int(i128::from(*v)),
            Scalar::Enum(_, n) => SortKey::Int(i128::from(*n)),
            Scalar::F32(x) => SortKey::Int(i128::from(x.to_bits())),
            Scalar::F64(x) => SortKey::Int(i128::from(x.to_bits())),
            Scalar::Str(b) | Scalar::Bytes(b) => SortKey::Str(b.to_vec()),
        }
    }
}

/// Reads a wire value as a scalar of `kind`, as Python does: 32-bit integers are the
/// low 32 bits, booleans any non-zero varint, strings must be UTF-8.
fn scalar(kind: &FieldKind, v: &WireValue, offset: usize) -> io::Result<Scalar> {
    let zigzag = |n: u64| ((n >> 1) as i64) ^ -((n & 1) as i64);
    Ok(match (kind, v) {
        (FieldKind::Bool, WireValue::Varint(n)) => Scalar::Bool(*n != 0),
        (FieldKind::Int32, WireValue::Varint(n)) => Scalar::I64(i64::from(*n as i32)),
        (FieldKind::Int64, WireValue::Varint(n)) => Scalar::I64(*n as i64),
        (FieldKind::Uint32, WireValue::Varint(n)) => Scalar::U64(u64::from(*n as u32)),
        (FieldKind::Uint64, WireValue::Varint(n)) => Scalar::U64(*n),
        (FieldKind::Sint32, WireValue::Varint(n)) => {
            Scalar::I64(i64::from(zigzag(u64::from(*n as u32)) as i32))
        }
        (FieldKind::Sint64, WireValue::Varint(n)) => Scalar::I64(zigzag(*n)),
        (FieldKind::Enum(e), WireValue::Varint(n)) => Scalar::Enum(e.clone(), *n as i32),
        (FieldKind::Fixed32, WireValue::I32(n)) => Scalar::U64(u64::from(*n)),
        (FieldKind::Sfixed32, WireValue::I32(n)) => Scalar::I64(i64::from(*n as i32)),
        (FieldKind::Float, WireValue::I32(n)) => Scalar::F32(f32::from_bits(*n)),
        (FieldKind::Fixed64, WireValue::I64(n)) => Scalar::U64(*n),
        (FieldKind::Sfixed64, WireValue::I64(n)) => Scalar::I64(*n as i64),
        (FieldKind::Double, WireValue::I64(n)) => Scalar::F64(f64::from_bits(*n)),
        (FieldKind::String, WireValue::Len(b)) => {
            if let Err(e) = std::str::from_utf8(b) {
                return Err(invalid(DecodeError::new(
                    DecodeErrorKind::InvalidUtf8 {
                        byte: b.get(e.valid_up_to()).copied().unwrap_or(0),
                    },
                    offset + e.valid_up_to(),
                )));
            }
            Scalar::Str(b.clone())
        }
        (FieldKind::Bytes, WireValue::Len(b)) => Scalar::Bytes(b.clone()),
        _ => {
            return Err(invalid(DecodeError::new(
                DecodeErrorKind::Other("value of the wrong wire type".into()),
                offset,
            )));
        }
    })
}

fn write_line(out: &mut dyn Write, name: &str, v: &Scalar, indent: usize) -> io::Result<()> {
    pad(out, indent)?;
    out.write_all(name.as_bytes())?;
    out.write_all(b": ")?;
    match v {
        Scalar::Bool(b) => write!(out, "{b}"),
        Scalar::I64(x) => write!(out, "{x}"),
        Scalar::U64(x) => write!(out, "{x}"),
        Scalar::F32(x) => out.write_all(PyFloat::f32(*x).as_str().as_bytes()),
        Scalar::F64(x) => out.write_all(PyFloat::f64(*x).as_str().as_bytes()),
        Scalar::Str(b) | Scalar::Bytes(b) => {
            out.write_all(b"\"")?;
            // Straight into the output, a buffer at a time (a `tensor_content` can be
            // gigabytes), its pages of a mapped input given back behind.
            for piece in b.chunks(crate::par::RELEASE_STEP) {
                write_c_escaped(out, piece)?;
                crate::par::release(piece);
            }
            out.write_all(b"\"")
        }
        Scalar::Enum(e, n) => match e.get_value(*n) {
            Some(ev) => write!(out, "{}", ev.name()),
            None => write!(out, "{n}"),
        },
    }?;
    out.write_all(b"\n")
}

fn pad(out: &mut dyn Write, n: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}
