//! Typed errors of the library.
//!
//! A [`DecodeError`] says what was expected, where (byte offset and field path such as
//! `inputs["images"].array_shape.dim[1]`) and what was found. A [`BuildError`] says which
//! feed a builder call refused and why. [`Error`] gathers them for the functions that
//! read whole files.

use crate::dtype::DTypeCode;
use crate::model::WireFormat;
pub use crate::wire::error::{DecodeError, DecodeErrorKind};

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
    /// Fewer values than the shape going to EAS, which takes only the full count,
    /// when that count is more than `limit` (the encoder's `MAX_EXPAND`).
    #[error("feed {name:?}: shape {shape:?} holds {expected} values, got {got}; EAS takes only the full count, and tfreq writes at most {limit} values for one feed")]
    TooLargeToExpand {
        /// Feed name.
        name: String,
        /// The shape.
        shape: Vec<i64>,
        /// Product of the shape.
        expected: u64,
        /// Values given.
        got: usize,
        /// The most values the encoder writes out for one feed.
        limit: u64,
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

/// Why a TFRecord file could not be read (the framing `formats::tfrecord` reads). Every variant names the record (counted
/// from 0) and the byte offset in the file where that record starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TfRecordError {
    /// The file ends inside a record's 12-byte header.
    #[error(
        "TFRecord record {record} at byte {offset}: truncated header ({available} of 12 bytes)"
    )]
    TruncatedHeader {
        /// Record number.
        record: usize,
        /// Byte offset of the record.
        offset: usize,
        /// Bytes left in the file.
        available: usize,
    },
    /// The masked CRC of the length does not match: corrupted, or not a TFRecord file.
    #[error("TFRecord record {record} at byte {offset}: length checksum mismatch (stored {stored:#010x}, computed {computed:#010x}){hint}",
        hint = if *offset == 0 { "; is this a TFRecord file?" } else { "" })]
    LengthCrc {
        /// Record number.
        record: usize,
        /// Byte offset of the record.
        offset: usize,
        /// Masked CRC stored in the file.
        stored: u32,
        /// Masked CRC of the 8 length bytes.
        computed: u32,
    },
    /// The length claims more bytes than the file has left (a truncated file, or an
    /// absurd length).
    #[error("TFRecord record {record} at byte {offset}: truncated: length {length} needs {needed} more bytes, only {available} left")]
    Truncated {
        /// Record number.
        record: usize,
        /// Byte offset of the record.
        offset: usize,
        /// The data length claimed.
        length: u64,
        /// Bytes needed after the header (data + footer).
        needed: u64,
        /// Bytes left after the header.
        available: usize,
    },
    /// The masked CRC of the data does not match.
    #[error("TFRecord record {record} at byte {offset}: data checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); the record is corrupted")]
    DataCrc {
        /// Record number.
        record: usize,
        /// Byte offset of the record.
        offset: usize,
        /// Masked CRC stored in the file.
        stored: u32,
        /// Masked CRC of the data.
        computed: u32,
    },
}

impl TfRecordError {
    /// The record number (from 0).
    pub fn record(&self) -> usize {
        match self {
            TfRecordError::TruncatedHeader { record, .. }
            | TfRecordError::LengthCrc { record, .. }
            | TfRecordError::Truncated { record, .. }
            | TfRecordError::DataCrc { record, .. } => *record,
        }
    }

    /// The byte offset of the record in the file.
    pub fn offset(&self) -> usize {
        match self {
            TfRecordError::TruncatedHeader { offset, .. }
            | TfRecordError::LengthCrc { offset, .. }
            | TfRecordError::Truncated { offset, .. }
            | TfRecordError::DataCrc { offset, .. } => *offset,
        }
    }
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
    TfRecord(#[from] TfRecordError),
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
