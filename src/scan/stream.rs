//! Counting a TFRecord log read as a stream — a gzip or zlib log, or a log on standard
//! input — in constant memory: one record's data at a time, never the whole log.
//!
//! A compressed log is inflated on a thread of its own, a block at a time, into a
//! bounded queue, while this thread frames the records, checks their CRCs and reads
//! their keys (the same prints and table as the parallel walk of a plain log: records
//! whose print was seen before are not decoded). So on two cores `keys` goes as fast as
//! inflating does. Offsets and record numbers are those of the inflated stream.

use std::io::{self, Read};
use std::sync::mpsc;

use crate::analysis::coverage::{KeyCounts, Origin};
use crate::error::{Error, ErrorDetail, TfRecordError};
use crate::formats::compression::{self, Compression};
use crate::formats::tfrecord::RecordReader;
use crate::formats::{self, Content};

use super::{Seen, fingerprint};

/// Inflated bytes handed from the inflating thread at a time.
const BLOCK: usize = 1 << 20;
/// Blocks queued between the threads (so at most this many MiB are in flight).
const QUEUE: usize = 4;

/// Counts the TFRecord log that `r` holds, compressed as `compression` (or not),
/// refusing a record longer than `max_record` bytes and, with `max_total`, a stream of
/// more than that many (inflated) bytes. Returns the counts and the bytes of
/// the (inflated) stream. `Ok(None)` when the stream fails before its first record is
/// read (it is not a log of this kind: the caller reads the input as usual).
pub(crate) fn count_stream(
    r: impl Read + Send,
    compression: Option<Compression>,
    file: usize,
    keep: bool,
    max_record: u64,
    max_total: Option<u64>,
    max_keys: usize,
) -> Result<Option<(KeyCounts, u64)>, Error> {
    // Where threads cannot be started (wasm32-unknown-unknown: the browser page in web/),
    // the same blocks are read on this thread, as the walk asks for them.
    if cfg!(all(target_family = "wasm", not(target_feature = "atomics"))) {
        let mut src = BlockSource::new(r, compression, max_total);
        let mut reader = Blocks {
            next: Box::new(move || src.next()),
            block: Vec::new(),
            pos: 0,
            read: 0,
            what: compression,
        };
        return walk_stream(&mut reader, file, keep, max_record, max_keys);
    }
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(QUEUE);
        s.spawn(move || {
            let mut src = BlockSource::new(r, compression, max_total);
            while let Some(block) = src.next() {
                if tx.send(block).is_err() {
                    return;
                }
            }
        });
        let mut reader = Blocks {
            next: Box::new(move || rx.recv().ok()),
            block: Vec::new(),
            pos: 0,
            read: 0,
            what: compression,
        };
        let r = walk_stream(&mut reader, file, keep, max_record, max_keys);
        // Dropping the receiver ends the inflating thread at its next block.
        drop(reader);
        r
    })
}

/// The (inflated) stream of a log, [`BLOCK`] bytes at a time.
struct BlockSource<'a> {
    src: Box<dyn Read + 'a>,
    /// The error that ended the stream after the block handed out last.
    failed: Option<io::Error>,
    done: bool,
}

impl<'a> BlockSource<'a> {
    /// `r` inflated as `compression` says, refused past `max_total` bytes.
    fn new(r: impl Read + 'a, compression: Option<Compression>, max_total: Option<u64>) -> Self {
        let mut src: Box<dyn Read + 'a> = match compression {
            Some(c) => compression::reader(r, c),
            None => Box::new(r),
        };
        if let Some(max) = max_total {
            let what = if compression.is_some() {
                "the inflated stream"
            } else {
                "the input"
            };
            src = Box::new(crate::io::limited(src, max, what));
        }
        BlockSource {
            src,
            failed: None,
            done: false,
        }
    }

    /// The next block (never empty), the error that ended the stream, or `None` at its
    /// end.
    fn next(&mut self) -> Option<io::Result<Vec<u8>>> {
        if let Some(e) = self.failed.take() {
            self.done = true;
            return Some(Err(e));
        }
        if self.done {
            return None;
        }
        let mut block = vec![0u8; BLOCK];
        let mut n = 0;
        let res = loop {
            match self.src.read(&mut block[n..]) {
                Ok(0) => break Ok(()),
                Ok(k) => {
                    n += k;
                    if n == block.len() {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        block.truncate(n);
        match res {
            Err(e) if n == 0 => {
                self.done = true;
                Some(Err(e))
            }
            Err(e) => {
                self.failed = Some(e);
                Some(Ok(block))
            }
            Ok(()) if n == 0 => {
                self.done = true;
                None
            }
            Ok(()) => Some(Ok(block)),
        }
    }
}

/// The inflated stream, block by block, as a reader.
struct Blocks<'a> {
    /// The next block, from the inflating thread or read here.
    next: Box<dyn FnMut() -> Option<io::Result<Vec<u8>>> + 'a>,
    block: Vec<u8>,
    pos: usize,
    /// Bytes handed out so far.
    read: u64,
    what: Option<Compression>,
}

impl Blocks<'_> {
    /// Fills `buf` whole, or returns how much it could before the stream ended.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut n = 0;
        while n < buf.len() {
            if self.pos == self.block.len() {
                match (self.next)() {
                    Some(Ok(b)) => {
                        self.block = b;
                        self.pos = 0;
                    }
                    Some(Err(e)) if e.kind() == io::ErrorKind::FileTooLarge => {
                        return Err(Error::other(crate::error::Category::Limit, e));
                    }
                    Some(Err(e)) => {
                        let what = self
                            .what
                            .map_or("input".to_string(), |c| format!("{c} data"));
                        return Err(super::ScanError::Read {
                            what,
                            why: e.to_string(),
                            after: self.read + n as u64,
                            inflated: self.what.is_some(),
                        }
                        .into());
                    }
                    None => break,
                }
            }
            let k = (self.block.len() - self.pos).min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&self.block[self.pos..self.pos + k]);
            self.pos += k;
            n += k;
        }
        self.read += n as u64;
        Ok(n)
    }
}

impl Read for Blocks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // One block at a time is enough for a reader; `fill` says what failed and where.
        let want = buf.len().min(BLOCK);
        self.fill(&mut buf[..want])
            .map_err(|e| io::Error::other(e.to_string()))
    }
}

fn walk_stream(
    r: &mut Blocks<'_>,
    file: usize,
    keep: bool,
    max_record: u64,
    max_keys: usize,
) -> Result<Option<(KeyCounts, u64)>, Error> {
    let opts = crate::decode::DecodeOptions::default();
    let mut c = KeyCounts::default();
    let mut seen = Seen::new(max_keys);
    let mut print = Vec::new();
    let mut data = Vec::new();
    let mut records = RecordReader::new(r, max_record);
    let mut index = 0usize;
    loop {
        let (i, at) = match records.next_into(&mut data) {
            Ok(Some(got)) => got,
            Ok(None) => break,
            // Before the first record, a bad header means "not a log of this kind".
            Err(e)
                if index == 0
                    && matches!(
                        e.detail(),
                        ErrorDetail::TfRecord(
                            TfRecordError::TruncatedHeader { .. } | TfRecordError::LengthCrc { .. }
                        )
                    ) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        index = i + 1;
        let origin = Origin {
            file,
            entry: i,
            record: true,
        };
        let printed = fingerprint::print(&data, &mut print);
        if printed && seen.count(&print) {
            continue;
        }
        // A new examples request's key is its print's, unless the request is kept.
        if let Some(key) = (printed && !keep)
            .then(|| fingerprint::examples::key(&print))
            .flatten()
        {
            seen.insert_known(&print, std::sync::Arc::new(key), (origin, 0))?;
            continue;
        }
        let e = formats::log_entry(i, at, at + 12, bytes::Bytes::copy_from_slice(&data), opts)?;
        match &e.content {
            Content::Message(m) if printed => seen.insert(&print, m, (origin, 0), keep, None)?,
            _ => {
                let known = c.keys.len();
                c.add_entry(&e, file, true, keep);
                if c.keys.len() > known {
                    super::check_keys(&c, max_keys)?;
                }
            }
        }
    }
    let offset = records.offset();
    if index == 0 {
        return Ok(None);
    }
    let counts = seen.into_counts(c, &[0])?;
    super::check_keys(&counts, max_keys)?;
    Ok(Some((counts, offset)))
}
