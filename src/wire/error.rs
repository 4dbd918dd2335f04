//! The wire layer's error: what went wrong while reading protobuf bytes, at which
//! byte offset, under which field path. The library's other errors wrap it
//! ([`crate::error`] re-exports it).

use std::fmt;

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
