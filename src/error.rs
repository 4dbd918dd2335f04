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
    /// A classify, regress or multi-inference request that cannot be written as asked
    /// (to EAS, or with fields no schema knows).
    #[error("{0}")]
    Examples(String),
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
    #[error(
        "feed {name:?}: shape {shape:?} holds {expected} values, got {got}; EAS takes only the full count, and tfreq writes at most {limit} values for one feed"
    )]
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
    #[error(
        "feed {name:?}: the element count of shape {shape:?} overflows int64, which TensorFlow refuses"
    )]
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
    /// The length is over the reader's limit on one record.
    #[error("TFRecord record {record} at byte {offset}: length {length} is over the size limit of {} bytes", crate::digits::group_digits(*limit))]
    TooLong {
        /// Record number.
        record: usize,
        /// Byte offset of the record.
        offset: usize,
        /// The data length claimed.
        length: u64,
        /// The limit, in bytes.
        limit: u64,
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
    #[error(
        "TFRecord record {record} at byte {offset}: truncated: length {length} needs {needed} more bytes, only {available} left"
    )]
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
    #[error(
        "TFRecord record {record} at byte {offset}: data checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); the record is corrupted"
    )]
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
            | TfRecordError::TooLong { record, .. }
            | TfRecordError::LengthCrc { record, .. }
            | TfRecordError::Truncated { record, .. }
            | TfRecordError::DataCrc { record, .. } => *record,
        }
    }

    /// The byte offset of the record in the file.
    pub fn offset(&self) -> usize {
        match self {
            TfRecordError::TruncatedHeader { offset, .. }
            | TfRecordError::TooLong { offset, .. }
            | TfRecordError::LengthCrc { offset, .. }
            | TfRecordError::Truncated { offset, .. }
            | TfRecordError::DataCrc { offset, .. } => *offset,
        }
    }
}

/// Any error of the library: reading, detecting, decoding, building, converting.
///
/// As `serde_json::Error`, one type a caller can match on by its category
/// ([`Error::classify`]), with the byte offset, field path, record and file as data
/// ([`Error::offset`], [`Error::field_path`], [`Error::record`], [`Error::file`]), and the
/// details behind one pointer ([`Error::detail`]), so a `Result<T, Error>` stays small.
/// The messages say what, where and what was expected; they name no command-line
/// option (a program adds its own hints).
///
/// ```
/// use tfreq::{Category, Error};
///
/// // One byte: a field tag whose length-delimited value is missing.
/// let err: Error = tfreq::decode(&[0x12]).unwrap_err();
/// assert_eq!(err.classify(), Category::Unrecognised);
///
/// // A truncated EAS request, read as one: where it broke, and in which field.
/// let err = tfreq::decode_as(&[0x12, 0x05, 0x0a], tfreq::WireFormat::Eas, tfreq::Kind::Request)
///     .map_err(|e| Error::decode(tfreq::WireFormat::Eas, tfreq::Kind::Request, e))
///     .unwrap_err();
/// assert_eq!(err.classify(), Category::Decode);
/// assert_eq!(err.offset(), Some(2));
/// assert_eq!(err.field_path().as_deref(), Some("inputs"));
/// assert!(std::mem::size_of::<Error>() <= 2 * std::mem::size_of::<usize>());
/// ```
pub struct Error {
    detail: Box<ErrorDetail>,
}

/// The kinds of [`Error`] a caller tells apart (what [`Error::classify`] returns).
///
/// ```
/// let err = tfreq::decode(b"").unwrap_err();
/// assert_eq!(err.classify(), tfreq::Category::Unrecognised);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// Reading or writing a file failed.
    Io,
    /// Protobuf bytes of a known message are malformed (truncated, bad varint, wrong
    /// wire type…).
    Decode,
    /// The input is none of the formats tfreq reads, is empty, or fits more than one
    /// and nothing tells them apart.
    Unrecognised,
    /// A container or text format around the messages is broken: TFRecord framing,
    /// JSON, protobuf text, unframed logs, compressed data.
    Container,
    /// A request cannot be built or written as asked: a builder refusal, values without
    /// dtypes, a conversion that would leave something out.
    Build,
    /// The input is over a size or nesting limit.
    Limit,
    /// A model's signatures could not be read (a `SavedModel`, metadata JSON or
    /// `saved_model_cli` text that is missing or malformed).
    Model,
    /// A network call failed: no connection, no answer in time, a refusal or an
    /// unreadable answer.
    Network,
}

/// What went wrong, in detail: the variants behind an [`Error`] ([`Error::detail`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorDetail {
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
    #[error("ambiguous: the bytes are valid as {}", one_line(.0))]
    Ambiguous(String),
    /// The bytes parse as none of the formats.
    #[error("not a prediction request or response in any known wire format: {}", one_line(.0))]
    Unrecognised(String),
    /// The bytes are a protobuf message, but no request or response: every top-level
    /// field is unknown to, or has a wire type impossible in, every request and response
    /// schema, in every reading (a SavedModel, a fingerprint, a GraphDef...). Holds what
    /// the bytes look like, when a cheap look at their structure says.
    #[error("not a TensorFlow request or response{}", .0.as_ref().map(|w| format!(": the bytes look like {w}")).unwrap_or_default())]
    NotTensorFlow(Option<String>),
    /// A response where requests are read (`keys`, `warmup`): it names no feed.
    #[error(
        "holds a PredictResponse ({wire}), not a request: its outputs are not feeds, so it is not counted"
    )]
    ResponseNotRequest {
        /// Its wire format.
        wire: WireFormat,
    },
    /// The input is empty.
    #[error("empty input: an empty message carries no request")]
    Empty,
    /// The input is larger than the limit it is read with.
    #[error("input is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// Input size in bytes.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A builder refusal.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A TFRecord framing problem (bad checksum, truncated record), naming the record.
    #[error(transparent)]
    TfRecord(#[from] TfRecordError),
    /// A REST JSON body read without dtypes (JSON carries none).
    #[error("a TF Serving REST JSON predict body: JSON carries no dtypes")]
    NoDtypes,
    /// A REST JSON input whose dtype the given dtypes do not name.
    #[error("input {input:?} has no dtype")]
    NoDtypeFor {
        /// The input's name.
        input: String,
    },
    /// REST JSON `inputs` as a bare value, with dtypes for other than exactly one input.
    #[error("'inputs' is a bare value, which needs exactly one input")]
    BareInputs,
    /// Text that is neither protobuf text format nor REST JSON, in a file not named
    /// as an EAS text warm-up; what it looks like (see `formats::detect::looks_like`).
    #[error(
        "not a request file (looks like {0}); an EAS text warm-up (one string request per line) must be named *.txt"
    )]
    NotRequestText(String),
    /// Several requests for an output layout that holds one.
    #[error("a bare {target} file holds exactly one request; got {got}")]
    OneRequestOnly {
        /// The output layout (`eas`, `tf-serving`).
        target: &'static str,
        /// Requests given.
        got: usize,
    },
    /// PredictionLog messages concatenated without TFRecord framing, where a TFRecord
    /// file or a request is read. The text says how many of which log type.
    #[error("{0}")]
    Unframed(String),
    /// A record of a multi-record file that does not decode.
    #[error("record {record} (at byte {offset}): {source}")]
    InRecord {
        /// Record number, from 0.
        record: usize,
        /// Byte offset of the record in the file.
        offset: usize,
        /// What went wrong inside it.
        #[source]
        source: Error,
    },
    /// A request of a JSON-lines file (one REST JSON body a line) that cannot be read.
    #[error("request {request} (at byte {offset}): {source}")]
    InRequest {
        /// Request number, from 0.
        request: usize,
        /// Byte offset of the request's JSON in the file.
        offset: usize,
        /// What went wrong in it.
        #[source]
        source: Error,
    },
    /// A problem in one of several files read together.
    #[error("{}: {source}", crate::escape::sanitize(file))]
    InFile {
        /// The file.
        file: String,
        /// What went wrong in it.
        #[source]
        source: Error,
    },
    /// TF Serving's warm-up file (`assets.extra/tf_serving_warmup_requests`) that is not
    /// a TFRecord, which fails the model's load.
    #[error(
        "this is TF Serving's warm-up file (assets.extra/tf_serving_warmup_requests) and it is not a TFRecord: TF Serving fails to load the model ('corrupted record at 0 ... Please verify your warmup data is in TFRecord format'); the file is {looks_like}"
    )]
    WarmupNotTfRecord {
        /// What the file looks like (`formats::detect::looks_like`).
        looks_like: String,
        /// Whether converting it to TFRecord keeps what it holds (PredictionLog
        /// messages without framing, or one bare request).
        convertible: bool,
    },
    /// A file-format problem outside protobuf (JSON, text, compressed data), in words.
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
    /// Malformed protobuf read by a caller that did not say as which message
    /// ([`decode_as`](crate::decode_as)'s error, converted with `?`).
    #[error(transparent)]
    Wire(#[from] DecodeError),
    /// An error of a module above this one — a model file
    /// ([`formats::ModelError`](crate::formats::ModelError)), a scrub
    /// ([`scrub::ScrubError`](crate::scrub::ScrubError)), a network call (`net::NetError`) —
    /// kept whole: [`std::error::Error::source`] gives it back to downcast.
    #[error("{source}")]
    Other {
        /// What kind of error it is.
        category: Category,
        /// The error itself.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// Reading or writing a file.
    #[error("{}: {source}", crate::escape::sanitize(path))]
    Io {
        /// The file.
        path: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A decode failure of `wire`'s `kind` message.
    pub fn decode(wire: WireFormat, kind: crate::model::Kind, source: DecodeError) -> Self {
        ErrorDetail::Decode { wire, kind, source }.into()
    }

    /// The same error, as having happened in `file` (`file: ` before its message), unless
    /// it names that file already.
    ///
    /// ```
    /// let e = tfreq::Error::from(tfreq::ErrorDetail::Empty).in_file("a.pb");
    /// assert_eq!(e.to_string(), "a.pb: empty input: an empty message carries no request");
    /// assert_eq!(e.in_file("a.pb").to_string(), "a.pb: empty input: an empty message carries no request");
    /// ```
    pub fn in_file(self, file: impl Into<String>) -> Self {
        let file = file.into();
        if self.file() == Some(file.as_str()) {
            return self;
        }
        ErrorDetail::InFile { file, source: self }.into()
    }

    /// The same error, as having happened in record `record` starting at byte `offset`.
    pub fn in_record(self, record: usize, offset: usize) -> Self {
        ErrorDetail::InRecord {
            record,
            offset,
            source: self,
        }
        .into()
    }

    /// What kind of error this is, for a caller that acts on it.
    ///
    /// ```
    /// let err = tfreq::Error::from(tfreq::ErrorDetail::Empty).in_file("a.pb");
    /// assert_eq!(err.classify(), tfreq::Category::Unrecognised);
    /// ```
    pub fn classify(&self) -> Category {
        use crate::wire::error::DecodeErrorKind as K;
        match self.root() {
            ErrorDetail::Decode { source, .. } => match source.kind() {
                K::TooDeep(_) | K::TooLarge { .. } => Category::Limit,
                _ => Category::Decode,
            },
            ErrorDetail::Ambiguous(_)
            | ErrorDetail::Unrecognised(_)
            | ErrorDetail::NotRequestText(_)
            | ErrorDetail::NotTensorFlow(_)
            | ErrorDetail::ResponseNotRequest { .. }
            | ErrorDetail::Empty => Category::Unrecognised,
            ErrorDetail::TooLarge { .. } => Category::Limit,
            ErrorDetail::TfRecord(_)
            | ErrorDetail::Unframed(_)
            | ErrorDetail::WarmupNotTfRecord { .. }
            | ErrorDetail::Format(_) => Category::Container,
            ErrorDetail::Build(_)
            | ErrorDetail::NoDtypes
            | ErrorDetail::NoDtypeFor { .. }
            | ErrorDetail::BareInputs
            | ErrorDetail::OneRequestOnly { .. }
            | ErrorDetail::WouldLose { .. } => Category::Build,
            ErrorDetail::Io { .. } => Category::Io,
            ErrorDetail::Wire(e) => match e.kind() {
                K::TooDeep(_) | K::TooLarge { .. } => Category::Limit,
                _ => Category::Decode,
            },
            ErrorDetail::Other { category, .. } => *category,
            // root() looks through these.
            ErrorDetail::InRecord { source, .. }
            | ErrorDetail::InRequest { source, .. }
            | ErrorDetail::InFile { source, .. } => source.classify(),
        }
    }

    /// The details, outermost first: an error in a file or record is
    /// [`ErrorDetail::InFile`] / [`ErrorDetail::InRecord`] around the cause.
    pub fn detail(&self) -> &ErrorDetail {
        &self.detail
    }

    /// Takes the details out.
    pub fn into_detail(self) -> ErrorDetail {
        *self.detail
    }

    /// The cause, below any file and record it happened in.
    ///
    /// ```
    /// use tfreq::ErrorDetail;
    /// let err = tfreq::Error::from(ErrorDetail::Empty).in_record(3, 120).in_file("w.tfrecord");
    /// assert!(matches!(err.root(), ErrorDetail::Empty));
    /// assert_eq!(err.record(), Some(3));
    /// assert_eq!(err.file(), Some("w.tfrecord"));
    /// ```
    pub fn root(&self) -> &ErrorDetail {
        match &*self.detail {
            ErrorDetail::InRecord { source, .. }
            | ErrorDetail::InRequest { source, .. }
            | ErrorDetail::InFile { source, .. } => source.root(),
            d => d,
        }
    }

    /// The byte offset where it went wrong, where the error has one: in a decode error,
    /// the offset in the message's bytes (within its record, for a record of a file);
    /// in TFRecord framing, the offset of the record in the file.
    pub fn offset(&self) -> Option<usize> {
        match self.root() {
            ErrorDetail::Decode { source, .. } | ErrorDetail::Wire(source) => Some(source.offset()),
            ErrorDetail::TfRecord(e) => Some(e.offset()),
            _ => None,
        }
    }

    /// The protobuf field path where decoding stopped (`inputs["x"].array_shape.dim`),
    /// for a decode error inside a field.
    pub fn field_path(&self) -> Option<String> {
        match self.root() {
            ErrorDetail::Decode { source, .. } | ErrorDetail::Wire(source) => {
                Some(source.path()).filter(|p| !p.is_empty())
            }
            _ => None,
        }
    }

    /// The record (counted from 0) of a multi-record file it happened in: a TFRecord
    /// or log record, or a line of a JSON-lines file.
    pub fn record(&self) -> Option<usize> {
        match &*self.detail {
            ErrorDetail::InRecord { record, .. } => Some(*record),
            ErrorDetail::InRequest { request, .. } => Some(*request),
            ErrorDetail::TfRecord(e) => Some(e.record()),
            ErrorDetail::InFile { source, .. } => source.record(),
            _ => None,
        }
    }

    /// The file it happened in, where known.
    pub fn file(&self) -> Option<&str> {
        match &*self.detail {
            ErrorDetail::InFile { file, .. } => Some(file),
            ErrorDetail::Io { path, .. } => Some(path),
            ErrorDetail::InRecord { source, .. } | ErrorDetail::InRequest { source, .. } => {
                source.file()
            }
            _ => None,
        }
    }

    /// The message without a leading `file: ` when the error names `file` (for
    /// reports that show the file in a field of their own).
    pub fn message_without(&self, file: &str) -> String {
        match &*self.detail {
            ErrorDetail::InFile { file: f, source } if f == file => source.to_string(),
            ErrorDetail::Io { path, source } if path == file => source.to_string(),
            _ => self.to_string(),
        }
    }
}

impl From<ErrorDetail> for Error {
    fn from(detail: ErrorDetail) -> Self {
        Error {
            detail: Box::new(detail),
        }
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        ErrorDetail::Build(e).into()
    }
}

impl From<TfRecordError> for Error {
    fn from(e: TfRecordError) -> Self {
        ErrorDetail::TfRecord(e).into()
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        ErrorDetail::Wire(e).into()
    }
}

impl Error {
    /// An error of a module above this one, of `category`, kept whole
    /// ([`ErrorDetail::Other`]); the `From` conversions of the upper modules' errors use it.
    pub(crate) fn other(
        category: Category,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        ErrorDetail::Other {
            category,
            source: Box::new(source),
        }
        .into()
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.detail, f)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.detail, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.detail)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_two_words_at_most() {
        // As prost's DecodeError: the details sit behind one pointer.
        assert!(std::mem::size_of::<Error>() <= 2 * std::mem::size_of::<usize>());
        assert!(std::mem::size_of::<Result<(), Error>>() <= 2 * std::mem::size_of::<usize>());
    }

    #[test]
    fn wrappers_keep_category_offset_and_path() {
        let inner = crate::decode_as(&[0x12, 0x05, 0x0a], WireFormat::Eas, crate::Kind::Request)
            .unwrap_err();
        let e = Error::decode(WireFormat::Eas, crate::Kind::Request, inner)
            .in_record(2, 40)
            .in_file("w");
        assert_eq!(e.classify(), Category::Decode);
        assert_eq!(e.offset(), Some(2));
        assert_eq!(e.field_path().as_deref(), Some("inputs"));
        assert_eq!(e.record(), Some(2));
        assert_eq!(e.file(), Some("w"));
        assert!(
            e.to_string()
                .starts_with("w: record 2 (at byte 40): not a valid EAS")
        );
        let src = std::error::Error::source(&e).unwrap();
        assert!(src.to_string().starts_with("record 2"), "{src}");
    }
}
