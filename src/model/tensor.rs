//! A tensor as stored on the wire, its unknown fields, and one element's value and display.

use std::fmt;

use bytes::Bytes;
use half::{bf16, f16};

use super::shape::Shape;
use super::values::Values;
use crate::dtype::{DType, DTypeCode, ValueField};

/// A field kept as it was, because no schema here knows it (or it had a wire type its
/// declaration does not allow). Never dropped: shown by the printers.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownField {
    /// Field path of the enclosing message (`inputs["x"]`), for people; cut at
    /// [`UnknownField::MAX_PATH`] characters so that many unknown fields under a long
    /// name cost memory linear in the input, not quadratic.
    pub path: String,
    /// The message the field was found in, for writing it back there.
    pub scope: Scope,
    /// Field number.
    pub number: u32,
    /// Wire type.
    pub wire_type: u8,
    /// Absolute byte offset of the tag.
    pub offset: usize,
    /// The value as read.
    pub value: crate::wire::reader::WireValue,
}

/// Which message of a request an unknown field sits in: set by the decoder, which
/// reads that message, and used by the encoder to write the field back there (no
/// path text is parsed for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// The request or response itself.
    Top,
    /// `model_spec`.
    ModelSpec,
    /// `model_spec.version` (the `Int64Value`).
    ModelSpecVersion,
    /// A map entry (`inputs` / `outputs`), beside its key and value.
    Entry,
    /// The tensor (`TensorProto` / `ArrayProto`).
    Tensor,
    /// The tensor's shape message.
    Shape,
    /// Dim `i` of a TF Serving shape.
    Dim(usize),
    /// Inside the `input` of a classify, regress or multi-inference request (its
    /// examples, features and value lists), or one of its `tasks`: shown, never written
    /// back (tfreq encodes predict requests only).
    Input,
}

impl UnknownField {
    /// The longest path kept, in characters.
    pub const MAX_PATH: usize = 160;

    /// `path`, cut to [`UnknownField::MAX_PATH`] characters.
    pub fn display_path(path: &str) -> String {
        if path.chars().count() <= Self::MAX_PATH {
            path.to_string()
        } else {
            let mut s: String = path.chars().take(Self::MAX_PATH).collect();
            s.push('…');
            s
        }
    }
}

/// One named tensor of a request (an input) or response (an output).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Map key: the input or output name.
    pub name: String,
    /// dtype number as on the wire.
    pub dtype: DTypeCode,
    /// Shape as on the wire.
    pub shape: Shape,
    /// TensorProto `version_number` (TF Serving only).
    pub version_number: i32,
    /// `tensor_content`, when present and non-empty (TF Serving only).
    pub content: Option<Bytes>,
    /// Typed value fields present, in field-number order.
    pub fields: Vec<(ValueField, Values)>,
    /// Fields no schema knows.
    pub unknown: Vec<UnknownField>,
    /// Absolute byte offset of this map entry in the input (0 when built).
    pub offset: usize,
}

/// How a run of stored values is encoded (see [`Elements::stored_run`](super::Elements::stored_run)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawRun {
    /// Fixed-width little-endian elements.
    Le,
    /// Packed varints.
    Varint,
}

/// Where a tensor's values are read from, by TensorFlow's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// From `tensor_content`.
    Content,
    /// From this typed field.
    Field(ValueField),
    /// No values: TensorFlow fills zeros / "" / false.
    Empty,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Content => f.write_str("tensor_content"),
            Source::Field(v) => f.write_str(v.name()),
            Source::Empty => f.write_str("none"),
        }
    }
}

/// One element, converted to its logical type.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// float32
    F32(f32),
    /// float64
    F64(f64),
    /// fp16
    F16(f16),
    /// bfloat16
    BF16(bf16),
    /// Any signed integer type.
    I64(i64),
    /// uint32 / uint64.
    U64(u64),
    /// bool
    Bool(bool),
    /// complex64 (re, im)
    C64(f32, f32),
    /// complex128 (re, im)
    C128(f64, f64),
    /// A string element.
    Bytes(Bytes),
    /// One raw byte of a dtype with no reading of its own.
    Byte(u8),
    /// An 8- or 4-bit float (`DT_FLOAT8_*`, `DT_FLOAT4_E2M1FN`): its dtype and bit
    /// pattern. Shown as the number TensorFlow (ml_dtypes) decodes it to
    /// ([`crate::minifloat::to_f32`]): `1.5`, `-0.0`, `nan`; with a dtype that is not one
    /// of those, as the byte (`0x3c`), since the bits are all it holds.
    Mini(DType, u8),
    /// A resource handle or variant (raw message bytes).
    Opaque(Bytes),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
            Scalar::F16(v) => write!(f, "{v}"),
            Scalar::BF16(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::C64(r, i) => write!(f, "({r}{i:+}j)"),
            Scalar::C128(r, i) => write!(f, "({r}{i:+}j)"),
            Scalar::Bytes(b) => write!(f, "\"{}\"", short_bytes(b)),
            Scalar::Byte(b) => write!(f, "0x{b:02x}"),
            // Every value is exact in f64: Python's repr of float(x).
            Scalar::Mini(d, b) => match crate::minifloat::to_f32(*d, *b) {
                Some(x) => f.write_str(&crate::pyfloat::f64_repr(x as f64)),
                // Not a minifloat dtype: the bits, as a `Byte` shows them.
                None => write!(f, "0x{b:02x}"),
            },
            Scalar::Opaque(b) => write!(f, "<{} bytes>", b.len()),
        }
    }
}

/// A string element for summaries, to be shown between double quotes. One rule, so
/// the text says which bytes were there: printable UTF-8 text as is; a backslash as
/// `\\` and a double quote as `\"`; newline, carriage return and tab as `\n`, `\r`,
/// `\t`, other control characters as `\u{1b}` (Rust's escapes); bytes that are not
/// UTF-8 as `\xNN`. Cut at 40 characters (`…`).
pub fn short_bytes(b: &[u8]) -> String {
    crate::escape::escape_short(b, 40)
}
