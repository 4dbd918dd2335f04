//! Typed errors of the library.
//!
//! A [`DecodeError`] says what was expected, where (byte offset and field path such as
//! `inputs["images"].array_shape.dim[1]`) and what was found. A [`BuildError`] says which
//! feed a builder call refused and why. [`Error`] gathers them for the functions that
//! read whole files.

use std::fmt;

use crate::dtype::DTypeCode;
use crate::model::WireFormat;

/// What went wrong while decoding protobuf bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ended inside a value.
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes left.
        available: u64,
    },
    /// A varint longer than 10 bytes, or overflowing 64 bits.
    BadVarint,
    /// Wire type 6 or 7, which protobuf does not define, or an end-group tag with no group.
    BadWireType(u8),
    /// Field number 0 (or above 2^29 - 1).
    BadFieldNumber(u64),
    /// A known field with a wire type its declaration does not allow.
    WrongWireType {
        /// The field's name.
        field: &'static str,
        /// Wire type found.
        found: u8,
    },
    /// A packed field whose byte length is not a multiple of the element size.
    PackedLength {
        /// The field's name.
        field: &'static str,
        /// Byte length found.
        len: usize,
        /// Element size.
        elem: usize,
    },
    /// A `string` field that is not UTF-8 (the error's offset is the first bad byte).
    InvalidUtf8 {
        /// The first byte that is not part of a valid UTF-8 sequence.
        byte: u8,
    },
    /// Nesting deeper than the recursion limit.
    TooDeep(usize),
    /// The input is larger than the configured limit.
    TooLarge {
        /// Input size in bytes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Anything else, in words.
    Other(String),
}

/// A decode failure: what, at which byte offset, under which field path.
///
/// ```
/// let err = tfreq::decode_as(&[0x12, 0x05, 0x0a], tfreq::WireFormat::Eas, tfreq::Kind::Request)
///     .unwrap_err();
/// assert_eq!(err.offset(), 2);
/// assert!(err.to_string().contains("inputs"), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    offset: usize,
    path: Vec<String>,
}

impl DecodeError {
    /// A new error at an absolute byte offset.
    pub fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        DecodeError {
            kind,
            offset,
            path: Vec::new(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.kind
    }

    /// Byte offset in the input where it went wrong.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The field path, outermost first (`inputs["x"].array_shape.dim`).
    pub fn path(&self) -> String {
        let mut s = String::new();
        for seg in self.path.iter().rev() {
            if !s.is_empty() && !seg.starts_with('[') {
                s.push('.');
            }
            s.push_str(seg);
        }
        s
    }

    /// Adds an enclosing path segment (called while the error travels outwards).
    pub(crate) fn within(mut self, seg: impl Into<String>) -> Self {
        self.path.push(seg.into());
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DecodeErrorKind::Truncated {
                what,
                needed,
                available,
            } => write!(
                f,
                "truncated: {what} needs {needed} bytes, only {available} left"
            )?,
            DecodeErrorKind::BadVarint => f.write_str("malformed varint (over 10 bytes)")?,
            DecodeErrorKind::BadWireType(w) => write!(f, "invalid wire type {w}")?,
            DecodeErrorKind::BadFieldNumber(n) => write!(f, "invalid field number {n}")?,
            DecodeErrorKind::WrongWireType { field, found } => write!(
                f,
                "field {field} has wire type {found}, which it cannot have"
            )?,
            DecodeErrorKind::PackedLength { field, len, elem } => {
                write!(f, "packed {field} is {len} bytes, not a multiple of {elem}")?
            }
            DecodeErrorKind::InvalidUtf8 { byte } => {
                write!(f, "string field is not valid UTF-8 (byte 0x{byte:02x})")?
            }
            DecodeErrorKind::TooDeep(n) => write!(f, "nesting deeper than {n} levels")?,
            DecodeErrorKind::TooLarge { size, limit } => {
                write!(f, "input is {size} bytes, over the limit of {limit}")?
            }
            DecodeErrorKind::Other(s) => f.write_str(s)?,
        }
        write!(f, " at byte {}", self.offset)?;
        let path = self.path();
        if !path.is_empty() {
            write!(f, " (in {path})")?;
        }
        Ok(())
    }
}

impl std::error::Error for DecodeError {}

/// Why a builder call was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The number of values is not the product of the shape.
    #[error("feed {name:?}: shape {shape:?} holds {expected} values, got {got}")]
    CountMismatch {
        /// Feed name.
        name: String,
        /// The shape given.
        shape: Vec<i64>,
        /// Product of the shape.
        expected: u64,
        /// Values given.
        got: usize,
    },
    /// A dim below zero.
    #[error("feed {name:?}: dim {index} of shape {shape:?} is negative")]
    NegativeDim {
        /// Feed name.
        name: String,
        /// The shape given.
        shape: Vec<i64>,
        /// Which dim.
        index: usize,
    },
    /// The shape's running product leaves int64 (TensorFlow refuses it, even when a
    /// later dim is 0).
    #[error("feed {name:?}: the element count of shape {shape:?} overflows int64, which TensorFlow refuses")]
    ShapeOverflow {
        /// Feed name.
        name: String,
        /// The shape given.
        shape: Vec<i64>,
    },
    /// More dims than TensorFlow's `TensorShape` takes (254).
    #[error("feed {name:?}: {rank} dims; TensorFlow takes at most 254")]
    TooManyDims {
        /// Feed name.
        name: String,
        /// The rank given.
        rank: usize,
    },
    /// Values of a Rust type the dtype cannot hold without loss.
    #[error("feed {name:?}: {dtype} cannot hold {got} values (it takes {takes})")]
    WrongType {
        /// Feed name.
        name: String,
        /// The dtype asked for.
        dtype: DTypeCode,
        /// The Rust element type given.
        got: &'static str,
        /// What it takes.
        takes: &'static str,
    },
    /// An integer outside the dtype's range.
    #[error(
        "feed {name:?}: value {value} at index {index} is out of range for {dtype} ({min}..={max})"
    )]
    OutOfRange {
        /// Feed name.
        name: String,
        /// The dtype.
        dtype: DTypeCode,
        /// Element index.
        index: usize,
        /// The value.
        value: i128,
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// `add_feed` called twice with one name.
    #[error("feed {0:?} was added already")]
    DuplicateFeed(String),
    /// The target wire format has no way to carry this dtype.
    #[error("feed {name:?}: {wire} cannot carry {dtype}")]
    Unsupported {
        /// Feed name.
        name: String,
        /// The dtype.
        dtype: DTypeCode,
        /// Target wire format.
        wire: WireFormat,
    },
    /// A `Message::extra` entry whose name is not one of the TF Serving
    /// `PredictRequest` fields kept raw (`predict_streamed_options`, `client_id`,
    /// `request_options`): its field number is unknown, so it cannot be written.
    #[error("extra field {0:?} is not a PredictRequest field kept raw")]
    UnknownRawField(&'static str),
    /// A dtype with no values of its own (invalid, resource, variant, `_REF`).
    #[error("feed {name:?}: {dtype} tensors cannot be built from values")]
    NotBuildable {
        /// Feed name.
        name: String,
        /// The dtype.
        dtype: DTypeCode,
    },
}

/// Any error of the library's file-level functions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Malformed protobuf in the named format.
    #[error("not a valid {wire} {kind}: {source}")]
    Decode {
        /// Format tried.
        wire: WireFormat,
        /// Message kind tried.
        kind: crate::model::Kind,
        /// The failure.
        #[source]
        source: DecodeError,
    },
    /// The bytes parse as more than one format and nothing tells them apart.
    #[error("ambiguous: the bytes are valid as {}; pass --from eas or --from tf-serving to choose", one_line(.0))]
    Ambiguous(String),
    /// The bytes parse as none of the formats.
    #[error("not a prediction request or response in any known wire format: {}", one_line(.0))]
    Unrecognised(String),
    /// The input is empty.
    #[error("empty input: an empty message carries no request")]
    Empty,
    /// A builder refusal.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A TFRecord framing problem (bad checksum, truncated record), naming the record.
    #[error(transparent)]
    TfRecord(#[from] crate::formats::tfrecord::TfRecordError),
    /// A record of a multi-record file that does not decode.
    #[error("record {record} (at byte {offset}): {source}")]
    InRecord {
        /// Record number, from 0.
        record: usize,
        /// Byte offset of the record in the file.
        offset: usize,
        /// What went wrong inside it.
        #[source]
        source: Box<Error>,
    },
    /// A problem in one of several files read together.
    #[error("{file}: {source}")]
    InFile {
        /// The file.
        file: String,
        /// What went wrong in it.
        #[source]
        source: Box<Error>,
    },
    /// A file-format problem outside protobuf (TFRecord framing, JSON, text).
    #[error("{0}")]
    Format(String),
    /// A conversion would leave something out (a dtype or field the target cannot
    /// carry, records a bare file has no room for). Each item says where and what.
    #[error("writing {target} would leave out:{}", list(.left_out))]
    WouldLose {
        /// The output layout (`eas`, `tf-serving`, `tfrecord`).
        target: &'static str,
        /// What would be left out, each `where: what`.
        left_out: Vec<String>,
    },
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

/// One indented line per item.
fn list(items: &[String]) -> String {
    items.iter().map(|i| format!("\n  {i}")).collect()
}

/// Detection's per-candidate lines joined into one, so a CLI prints each error on one line.
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
