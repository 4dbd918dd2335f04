//! Compressed logs: TFRecord files written with `TFRecordOptions(compression_type='GZIP')`
//! or `'ZLIB'` (TFX's BulkInferrer writes `prediction_logs-*.gz`), and gzip files of
//! anything else tfreq reads. Detected from the bytes, never from the file name.
//!
//! - **gzip**: the magic `1f 8b 08`. A protobuf message cannot start with `1f` (field 3,
//!   wire type 7, which does not exist), so this never takes a request for gzip.
//!   Concatenated members (what `cat a.gz b.gz` and parallel gzip writers make) are read
//!   as one stream, as `gzip -d` does.
//! - **zlib**: TensorFlow's ZLIB TFRecord files are one zlib stream (RFC 1950): a header
//!   whose first byte is `78` and whose first two bytes, read big-endian, are a multiple
//!   of 31. `78` is also how a protobuf field 15 starts, so a zlib reading is taken only
//!   when the stream inflates without error and what it holds is a TFRecord file.
//!
//! TF Serving's warm-up loader reads warm-up files uncompressed
//! (tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc opens a
//! `RecordReader` with default options): a compressed warm-up is reported by
//! `check` and `diff` (`WARMUP_COMPRESSED`).
//!
//! Inflating is done by `flate2` with the `zlib-rs` backend.
//!
//! ```
//! use tfreq::formats::{self, Compression};
//! let log = std::fs::read("tests/data/tfrecord/warmup_predict.tfrecord")?;
//! let gz = formats::compress(&log, Compression::Gzip)?;
//! assert_eq!(formats::sniff(&gz), Some(Compression::Gzip));
//! assert_eq!(formats::sniff(&log), None);
//! assert_eq!(formats::inflate(&gz, Compression::Gzip, 1 << 20)?, log);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read, Write};

use crate::error::{Category, Error};

/// A compression tfreq reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// gzip (RFC 1952), one or more members.
    Gzip,
    /// zlib (RFC 1950), as TensorFlow's `ZLIB` TFRecord option writes it.
    Zlib,
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
        })
    }
}

/// Whether the bytes start like gzip or zlib data: the gzip magic `1f 8b 08`, or one of
/// the four headers zlib writes without a preset dictionary (`78 01`, `78 5e`, `78 9c`,
/// `78 da`, one per compression level). A zlib header is only a hint: [`inflate_any`]
/// inflates to decide, and `formats::detect::compression` asks that the bytes not be a
/// clean protobuf message.
pub fn sniff(b: &[u8]) -> Option<Compression> {
    match b {
        [0x1f, 0x8b, 0x08, ..] => Some(Compression::Gzip),
        [0x78, 0x01 | 0x5e | 0x9c | 0xda, ..] => Some(Compression::Zlib),
        _ => None,
    }
}

/// The compression of `b`, when it is compressed: gzip from its magic; zlib only when
/// the whole stream inflates (under `limit` bytes) to a TFRecord file. Returns the
/// inflated bytes too, so they are not inflated twice. A gzip stream that does not
/// inflate is an error (the magic leaves no other reading).
pub fn inflate_any(b: &[u8], limit: u64) -> Result<Option<(Compression, Vec<u8>)>, Error> {
    match sniff(b) {
        Some(Compression::Gzip) => Ok(Some((
            Compression::Gzip,
            inflate(b, Compression::Gzip, limit)?,
        ))),
        Some(Compression::Zlib) => match inflate(b, Compression::Zlib, limit) {
            Ok(v) if crate::formats::tfrecord::is_tfrecord(&v) => Ok(Some((Compression::Zlib, v))),
            // Over the limit: a zlib stream of a TFRecord log says so (rather than
            // being read as the bytes of something else).
            Err(e) if inflates_past(b, Compression::Zlib, limit) && zlib_log(b) => Err(e),
            _ => Ok(None),
        },
        None => Ok(None),
    }
}

/// Whether `b` inflates to more than `limit` bytes (reading at most one past it).
fn inflates_past(b: &[u8], c: Compression, limit: u64) -> bool {
    let mut sink = io::sink();
    io::copy(&mut reader(b, c).take(limit.saturating_add(1)), &mut sink).is_ok_and(|n| n > limit)
}

/// Whether the zlib stream `b` starts with a TFRecord header.
fn zlib_log(b: &[u8]) -> bool {
    let mut head = Vec::with_capacity(12);
    let _ = reader(b, Compression::Zlib).take(12).read_to_end(&mut head);
    crate::formats::tfrecord::is_tfrecord(&head)
}

/// A reader of the inflated stream of `r`.
pub fn reader<'a>(r: impl Read + 'a, c: Compression) -> Box<dyn Read + 'a> {
    match c {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(r)),
        Compression::Zlib => Box::new(flate2::read::ZlibDecoder::new(r)),
    }
}

/// Inflates all of `b`, refusing more than `limit` bytes of output (a small file can
/// claim to hold gigabytes). Errors say how far the inflated stream got.
pub fn inflate(b: &[u8], c: Compression, limit: u64) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut r = reader(b, c).take(limit.saturating_add(1));
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(CompressionError::Corrupt {
                    compression: c,
                    why: e.to_string(),
                    inflated: out.len(),
                }
                .into());
            }
        }
    }
    if out.len() as u64 > limit {
        return Err(CompressionError::OverLimit {
            compression: c,
            limit,
        }
        .into());
    }
    Ok(out)
}

/// A writer that compresses what it is given into `w`, as TensorFlow's writer does
/// (the default level), for output that is written as it is made. [`Compressor::finish`]
/// writes the trailer and hands `w` back.
///
/// ```
/// use std::io::Write;
/// use tfreq::formats::{inflate, Compression, Compressor};
/// let mut z = Compressor::new(Vec::new(), Compression::Gzip);
/// z.write_all(b"hello")?;
/// let gz = z.finish()?;
/// assert_eq!(inflate(&gz, Compression::Gzip, 100)?, b"hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum Compressor<W: Write> {
    /// gzip.
    Gzip(flate2::write::GzEncoder<W>),
    /// zlib.
    Zlib(flate2::write::ZlibEncoder<W>),
}

impl<W: Write> Compressor<W> {
    /// Compresses into `w`.
    pub fn new(w: W, c: Compression) -> Self {
        match c {
            Compression::Gzip => Compressor::Gzip(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )),
            Compression::Zlib => Compressor::Zlib(flate2::write::ZlibEncoder::new(
                w,
                flate2::Compression::default(),
            )),
        }
    }

    /// Ends the compressed stream and returns the writer.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Compressor::Gzip(z) => z.finish(),
            Compressor::Zlib(z) => z.finish(),
        }
    }
}

impl<W: Write> Write for Compressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Compressor::Gzip(z) => z.write(buf),
            Compressor::Zlib(z) => z.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Compressor::Gzip(z) => z.flush(),
            Compressor::Zlib(z) => z.flush(),
        }
    }
}

/// Why compressed data cannot be read or written.
///
/// ```
/// use tfreq::formats::{inflate, Compression, CompressionError};
///
/// let e = inflate(b"\x1f\x8b\x08 not gzip", Compression::Gzip, 1 << 20).unwrap_err();
/// let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<CompressionError>());
/// assert!(matches!(why, Some(CompressionError::Corrupt { compression: Compression::Gzip, .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompressionError {
    /// The stream does not inflate: `why` is what the inflater said.
    #[error("{compression} data: {why} (after {inflated} bytes of inflated output)")]
    Corrupt {
        /// The stream's compression.
        compression: Compression,
        /// What the inflater said.
        why: String,
        /// Bytes inflated before it failed.
        inflated: usize,
    },
    /// The stream inflates past the size limit (where inflating stopped).
    #[error("{compression} data inflates to more than the size limit of {} bytes", crate::digits::group_digits(*limit))]
    OverLimit {
        /// The stream's compression.
        compression: Compression,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Compressing failed.
    #[error("{compression} compression: {why}")]
    Compress {
        /// The compression asked for.
        compression: Compression,
        /// What the compressor said.
        why: String,
    },
    /// A compressed file where TF Serving's warm-up reads uncompressed TFRecord only: the
    /// message says how to decompress it.
    #[error("{}", warmup_message(*.0))]
    Warmup(Compression),
}

/// The fix for a compressed warm-up file, by its compression.
fn warmup_message(c: Compression) -> &'static str {
    match c {
        Compression::Gzip => {
            "gzip-compressed data (as tf.io.TFRecordWriter writes with compression_type=\"GZIP\"): TF Serving's warm-up reads uncompressed TFRecord only. Decompress it first (gunzip -c FILE > tf_serving_warmup_requests)"
        }
        Compression::Zlib => {
            "zlib-compressed data (as tf.io.TFRecordWriter writes with compression_type=\"ZLIB\"): TF Serving's warm-up reads uncompressed TFRecord only. Rewrite it uncompressed (read it with tf.data.TFRecordDataset(FILE, compression_type=\"ZLIB\") and write the records with tf.io.TFRecordWriter)"
        }
    }
}

/// A [`CompressionError`] is a container problem, as other unreadable files are.
impl From<CompressionError> for Error {
    fn from(e: CompressionError) -> Self {
        Error::other(Category::Container, e)
    }
}

/// Compresses `b` as TensorFlow's writer does for this compression (the default level).
pub fn compress(b: &[u8], c: Compression) -> Result<Vec<u8>, Error> {
    let io = |e: io::Error| {
        Error::from(CompressionError::Compress {
            compression: c,
            why: e.to_string(),
        })
    };
    match c {
        Compression::Gzip => {
            let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            w.write_all(b).map_err(io)?;
            w.finish().map_err(io)
        }
        Compression::Zlib => {
            let mut w = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            w.write_all(b).map_err(io)?;
            w.finish().map_err(io)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenated_gzip_members_are_one_stream() {
        let mut two = compress(b"abc", Compression::Gzip).unwrap();
        two.extend(compress(b"def", Compression::Gzip).unwrap());
        assert_eq!(inflate(&two, Compression::Gzip, 100).unwrap(), b"abcdef");
    }

    #[test]
    fn output_is_bounded() {
        let big = compress(&vec![0u8; 1 << 20], Compression::Gzip).unwrap();
        assert!(big.len() < 10_000);
        let e = inflate(&big, Compression::Gzip, 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the size limit of 1,000 bytes"), "{e}");
    }

    #[test]
    fn zlib_is_taken_only_for_a_tfrecord_inside() {
        let log = std::fs::read("tests/data/tfrecord/warmup_predict.tfrecord").unwrap();
        let z = compress(&log, Compression::Zlib).unwrap();
        assert_eq!(sniff(&z), Some(Compression::Zlib));
        assert_eq!(
            inflate_any(&z, 1 << 20).unwrap().map(|d| d.0),
            Some(Compression::Zlib)
        );
        // zlib data of something else, and a protobuf that starts with 0x78 0x9c: no.
        let other = compress(b"hello", Compression::Zlib).unwrap();
        assert!(inflate_any(&other, 1 << 20).unwrap().is_none());
        assert!(inflate_any(&[0x78, 0x9c, 0x01], 1 << 20).unwrap().is_none());
    }

    #[test]
    fn broken_gzip_is_an_error_saying_where() {
        let log = std::fs::read("tests/data/tfrecord/warmup_predict.tfrecord").unwrap();
        let mut gz = compress(&log, Compression::Gzip).unwrap();
        let n = gz.len();
        gz.truncate(n - 12);
        let e = inflate_any(&gz, 1 << 20).unwrap_err().to_string();
        assert!(e.starts_with("gzip data:"), "{e}");
        assert!(e.contains("bytes of inflated output"), "{e}");
    }
}
