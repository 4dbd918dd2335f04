//! Where an input's bytes enter: one function, [`open`], that looks at a path (`-`:
//! standard input) and says how it is to be read — a TFRecord log as a stream, or
//! everything whole (a large file mapped, a compressed one inflated) — with one set of
//! size rules. The command line, [`crate::scan`] and the Python module read through it;
//! bytes a caller already holds go through [`inflated`].

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bytes::Bytes;

use crate::error::Error;
use crate::formats::compression::{self, Compression};
use crate::formats::tfrecord;
use crate::formats::{InputFormat, InputOptions};

/// How [`open`] reads the inputs that are TFRecord logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogReading {
    /// Every input whole, a compressed one inflated (under the size cap, counted after
    /// inflating).
    Whole,
    /// A log walked record by record where it lies: a plain log file mapped (from
    /// [`crate::LOG_MAP_THRESHOLD`] bytes, and whatever its size unless
    /// [`crate::ReadOptions::max_streamed`] set a cap), a gzip log and a log on
    /// standard input or a pipe as a stream.
    Walk,
    /// Every log as a stream, a plain log file too (a caller that writes each record as
    /// it reads it).
    Stream,
}

/// An input as [`open`] found it.
pub enum Opened {
    /// A TFRecord log, plain or gzip, to read as a stream: the input's bytes (those
    /// looked at put back in front) and their compression, to inflate with
    /// [`crate::formats::reader`]. Its size is not checked: a reader bounds each record
    /// (and the whole stream, when [`crate::ReadOptions::max_streamed`] says so).
    Stream {
        /// The bytes as they come.
        reader: Box<dyn Read + Send>,
        /// What they are compressed with, if anything.
        compression: Option<Compression>,
    },
    /// Anything else, read whole.
    Whole {
        /// The bytes (inflated when the input was compressed; a mapping of a large file).
        bytes: Bytes,
        /// What the input was compressed with, if anything.
        compression: Option<Compression>,
        /// A plain log file read past the cap of an input read whole, to be walked
        /// where it lies: its reading is not held to that cap either (decode it with
        /// [`InputOptions::max_size`] `u64::MAX`).
        past_cap: bool,
    },
}

impl Opened {
    /// What the input is compressed with, if anything.
    pub fn compression(&self) -> Option<Compression> {
        match self {
            Opened::Stream { compression, .. } | Opened::Whole { compression, .. } => *compression,
        }
    }
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Opened::Stream { compression, .. } => f
                .debug_struct("Stream")
                .field("compression", compression)
                .finish_non_exhaustive(),
            Opened::Whole {
                bytes,
                compression,
                past_cap,
            } => f
                .debug_struct("Whole")
                .field("len", &bytes.len())
                .field("compression", compression)
                .field("past_cap", past_cap)
                .finish(),
        }
    }
}

/// Bytes looked at to tell a TFRecord log or a compressed stream.
const HEAD: usize = 16;

/// Opens the input `path` names (`-`: standard input) and tells how to read it, as
/// `how` asks and `opts` allows: a log is read as a stream or mapped only when
/// `opts.format` is [`InputFormat::Auto`] or [`InputFormat::TfRecord`]; everything read
/// whole is refused past `opts.read`'s cap ([`crate::read_file`]'s rules). A gzip or
/// zlib file streams only when what it inflates to starts as a log (a compressed request
/// or JSON body is read whole); on standard input a gzip stream is taken for a log (zlib's
/// two-byte mark is too weak to tell without reading on: a zlib input there is read
/// whole).
///
/// ```
/// use tfreq::formats::{open, InputOptions, LogReading, Opened};
/// let opts = InputOptions::new();
/// let log = "tests/data/tfrecord/warmup_predict.tfrecord".as_ref();
/// assert!(matches!(open(log, &opts, LogReading::Stream)?, Opened::Stream { .. }));
/// assert!(matches!(open(log, &opts, LogReading::Whole)?, Opened::Whole { .. }));
/// let one = open("tests/data/eas/faq_prod.bin".as_ref(), &opts, LogReading::Stream)?;
/// assert!(matches!(one, Opened::Whole { compression: None, .. }));
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn open(path: &Path, opts: &InputOptions, how: LogReading) -> Result<Opened, Error> {
    let read = &opts.read;
    let logs = how != LogReading::Whole
        && matches!(opts.format, InputFormat::Auto | InputFormat::TfRecord);
    let stdin = path == Path::new("-");
    let file = if stdin {
        None
    } else {
        let f = File::open(path).map_err(|e| crate::io::io_err(path, e))?;
        let meta = f.metadata().map_err(|e| crate::io::io_err(path, e))?;
        // A directory is refused, a pipe or a device read as standard input is.
        if meta.is_dir() {
            return whole(path, opts);
        }
        Some((f, meta.is_file().then_some(meta.len())))
    };
    if !logs {
        return whole(path, opts);
    }
    let (mut input, size): (Box<dyn Read + Send>, Option<u64>) = match file {
        None => (Box::new(io::stdin()), None),
        Some((f, size)) => (Box::new(f), size),
    };
    let mut head = Vec::with_capacity(HEAD);
    (&mut input)
        .take(HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|e| crate::io::io_err(path, e))?;
    let c = compression::sniff(&head);
    let framed = tfrecord::is_tfrecord(&head);
    let stream = |input: Box<dyn Read + Send>, compression| Opened::Stream {
        reader: Box::new(io::Cursor::new(head.clone()).chain(input)),
        compression,
    };
    match (size, c) {
        // Standard input, a pipe, a device: a log streams, anything else is read whole.
        (None, Some(Compression::Gzip)) => Ok(stream(input, c)),
        (None, None) if framed => Ok(stream(input, None)),
        (None, _) => {
            let bytes =
                crate::io::read_from(io::Cursor::new(head.clone()).chain(input), path, read)?;
            inflated(bytes, read.limit()).map(|(bytes, compression)| Opened::Whole {
                bytes,
                compression,
                past_cap: false,
            })
        }
        // A compressed file: a stream when it inflates to a log.
        (Some(_), Some(comp)) if inflates_to_log(path, comp) => Ok(stream(input, c)),
        (Some(_), None) if framed && how == LogReading::Stream => Ok(stream(input, None)),
        (Some(_), None) if framed => {
            drop(input);
            // A log file is walked where it lies, whatever its size (unless a cap on
            // streams was given): mapped from a few megabytes.
            let past_cap = read.streamed_limit().is_none() && read.maps_large_files();
            let read = if past_cap {
                read.max_size(u64::MAX)
            } else {
                *read
            };
            let bytes = crate::io::read_mapping_from(path, &read, crate::io::LOG_MAP_THRESHOLD)?;
            Ok(Opened::Whole {
                bytes,
                compression: None,
                past_cap,
            })
        }
        (Some(_), _) => {
            drop(input);
            whole(path, opts)
        }
    }
}

/// Whether the file at `path`, compressed with `c`, inflates to bytes that start as a
/// TFRecord log.
fn inflates_to_log(path: &Path, c: Compression) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(12);
    compression::reader(f, c)
        .take(12)
        .read_to_end(&mut head)
        .is_ok()
        && tfrecord::is_tfrecord(&head)
}

/// The input at `path` read whole under the cap, inflated when compressed.
fn whole(path: &Path, opts: &InputOptions) -> Result<Opened, Error> {
    let bytes = crate::io::read_file(path, &opts.read)?;
    inflated(bytes, opts.read.limit()).map(|(bytes, compression)| Opened::Whole {
        bytes,
        compression,
        past_cap: false,
    })
}

/// Bytes inflated when they are gzip or zlib (at most `limit` bytes of output; the
/// bytes themselves otherwise), and the compression they were in.
///
/// ```
/// let gz = std::fs::read("tests/data/compressed/warmup_gzip.tfrecord.gz")?;
/// let (b, c) = tfreq::formats::inflated(gz.into(), 1 << 20)?;
/// assert_eq!(c, Some(tfreq::formats::Compression::Gzip));
/// assert!(tfreq::formats::is_tfrecord(&b));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn inflated(bytes: Bytes, limit: u64) -> Result<(Bytes, Option<Compression>), Error> {
    Ok(match compression::inflate_any(&bytes, limit)? {
        Some((c, v)) => (Bytes::from(v), Some(c)),
        None => (bytes, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::tfrecord::frame;
    use crate::io::ReadOptions;
    use std::io::Write;

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(b).unwrap();
        z.finish().unwrap()
    }

    fn temp(dir: &tempfile::TempDir, name: &str, b: &[u8]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        p
    }

    fn kind(o: &Opened) -> (&'static str, Option<Compression>) {
        match o {
            Opened::Stream { .. } => ("stream", o.compression()),
            Opened::Whole { .. } => ("whole", o.compression()),
        }
    }

    #[test]
    fn a_compressed_file_streams_only_when_it_inflates_to_a_log() {
        let log = frame([&b"record one"[..], b"two"]);
        let opts = InputOptions::new();
        let dir = tempfile::tempdir().unwrap();
        let gz_log = temp(&dir, "log.gz", &gzip(&log));
        let gz_body = temp(&dir, "body.json.gz", &gzip(br#"{"instances": [1]}"#));
        for how in [LogReading::Walk, LogReading::Stream] {
            let o = open(&gz_log, &opts, how).unwrap();
            assert_eq!(kind(&o), ("stream", Some(Compression::Gzip)));
            let Opened::Stream { reader, .. } = o else {
                unreachable!()
            };
            // The bytes looked at are put back: the stream inflates to the whole log.
            let mut all = Vec::new();
            compression::reader(reader, Compression::Gzip)
                .read_to_end(&mut all)
                .unwrap();
            assert_eq!(all, log);
            let o = open(&gz_body, &opts, how).unwrap();
            assert_eq!(kind(&o), ("whole", Some(Compression::Gzip)));
            let Opened::Whole { bytes, .. } = o else {
                unreachable!()
            };
            assert_eq!(&bytes[..], br#"{"instances": [1]}"#);
        }
        let whole = open(&gz_log, &opts, LogReading::Whole).unwrap();
        assert_eq!(kind(&whole), ("whole", Some(Compression::Gzip)));
    }

    #[test]
    fn a_plain_log_file_is_mapped_to_walk_and_streamed_to_stream() {
        let log = frame([&b"a"[..], b"b"]);
        let dir = tempfile::tempdir().unwrap();
        let p = temp(&dir, "plain.tfrecord", &log);
        let opts = InputOptions::new();
        assert_eq!(
            kind(&open(&p, &opts, LogReading::Walk).unwrap()),
            ("whole", None)
        );
        assert_eq!(
            kind(&open(&p, &opts, LogReading::Stream).unwrap()),
            ("stream", None)
        );
        // A format other than auto or tfrecord reads everything whole.
        let eas = InputOptions::new().format(InputFormat::Eas);
        assert_eq!(
            kind(&open(&p, &eas, LogReading::Stream).unwrap()),
            ("whole", None)
        );
    }

    #[test]
    fn the_size_cap_holds_for_what_is_read_whole_and_a_log_cap_when_given() {
        let log = frame([&[7u8; 4096][..]]);
        let dir = tempfile::tempdir().unwrap();
        let p = temp(&dir, "capped.tfrecord", &log);
        let small = InputOptions::new().read_options(ReadOptions::default().max_size(100));
        let e = open(&p, &small, LogReading::Whole).unwrap_err().to_string();
        assert!(e.contains("over the size limit of 100 bytes"), "{e}");
        // Walked where it lies (no cap on a stream given): not refused, when mapped.
        // SAFETY: the file is this test's own and is not changed while mapped.
        let mapped = unsafe { ReadOptions::default().max_size(100).map_large_files() };
        let walk = InputOptions::new().read_options(mapped);
        assert_eq!(
            kind(&open(&p, &walk, LogReading::Walk).unwrap()),
            ("whole", None)
        );
        let capped = InputOptions::new().read_options(mapped.max_streamed(Some(100)));
        let e = open(&p, &capped, LogReading::Walk).unwrap_err().to_string();
        assert!(e.contains("over the size limit of 100 bytes"), "{e}");
    }

    #[test]
    fn a_directory_is_refused_by_name() {
        let dir = std::env::temp_dir();
        let e = open(&dir, &InputOptions::new(), LogReading::Walk)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory"), "{e}");
        assert!(e.contains(&dir.display().to_string()), "{e}");
    }
}
