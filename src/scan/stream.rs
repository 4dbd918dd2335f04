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
use crate::formats::{self, Content};

use super::{fingerprint, Seen};

/// Inflated bytes handed from the inflating thread at a time.
const BLOCK: usize = 1 << 20;
/// Blocks queued between the threads (so at most this many MiB are in flight).
const QUEUE: usize = 4;

/// Counts the TFRecord log that `r` holds, compressed as `compression` (or not),
/// refusing a record longer than `max_record` bytes. Returns the counts and the bytes of
/// the (inflated) stream. `Ok(None)` when the stream fails before its first record is
/// read (it is not a log of this kind: the caller reads the input as usual).
pub(crate) fn count_stream(
    r: impl Read + Send,
    compression: Option<Compression>,
    file: usize,
    keep: bool,
    max_record: u64,
) -> Result<Option<(KeyCounts, u64)>, Error> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::sync_channel::<io::Result<Vec<u8>>>(QUEUE);
        s.spawn(move || {
            let mut src: Box<dyn Read> = match compression {
                Some(c) => compression::reader(r, c),
                None => Box::new(r),
            };
            loop {
                let mut block = vec![0u8; BLOCK];
                let mut n = 0;
                let res = loop {
                    match src.read(&mut block[n..]) {
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
                let end = n == 0;
                if n > 0 && tx.send(Ok(block)).is_err() {
                    return;
                }
                if let Err(e) = res {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        });
        let mut reader = Blocks {
            rx,
            block: Vec::new(),
            pos: 0,
            read: 0,
            what: compression,
        };
        let r = walk_stream(&mut reader, file, keep, max_record);
        // Dropping the receiver ends the inflating thread at its next block.
        drop(reader);
        r
    })
}

/// The inflated stream, block by block, as a reader.
struct Blocks {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    block: Vec<u8>,
    pos: usize,
    /// Bytes handed out so far.
    read: u64,
    what: Option<Compression>,
}

impl Blocks {
    /// Fills `buf` whole, or returns how much it could before the stream ended.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut n = 0;
        while n < buf.len() {
            if self.pos == self.block.len() {
                match self.rx.recv() {
                    Ok(Ok(b)) => {
                        self.block = b;
                        self.pos = 0;
                    }
                    Ok(Err(e)) => {
                        let what = self
                            .what
                            .map_or("input".to_string(), |c| format!("{c} data"));
                        return Err(ErrorDetail::Format(format!(
                            "{what}: {e} (after {} bytes of {} stream)",
                            crate::digits::group_digits(self.read + n as u64),
                            if self.what.is_some() {
                                "inflated"
                            } else {
                                "the"
                            },
                        ))
                        .into());
                    }
                    Err(_) => break,
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

fn walk_stream(
    r: &mut Blocks,
    file: usize,
    keep: bool,
    max_record: u64,
) -> Result<Option<(KeyCounts, u64)>, Error> {
    let opts = crate::decode::DecodeOptions::default();
    let mut c = KeyCounts::default();
    let mut seen = Seen::default();
    let mut print = Vec::new();
    let mut data = Vec::new();
    let mut header = [0u8; 12];
    let mut footer = [0u8; 4];
    let mut index = 0usize;
    let mut offset = 0u64;
    // Before the first record, a failure means "not a log of this kind".
    let first = |index: usize, e: Error| if index == 0 { Ok(None) } else { Err(e) };
    loop {
        let got = match r.fill(&mut header) {
            Ok(n) => n,
            Err(e) => return first(index, e),
        };
        if got == 0 {
            break;
        }
        let at = offset as usize;
        if got < header.len() {
            let e = TfRecordError::TruncatedHeader {
                record: index,
                offset: at,
                available: got,
            };
            return first(index, e.into());
        }
        let stored = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        let computed = formats::tfrecord::masked_crc(&header[..8]);
        if stored != computed {
            let e = TfRecordError::LengthCrc {
                record: index,
                offset: at,
                stored,
                computed,
            };
            return first(index, e.into());
        }
        let mut len8 = [0u8; 8];
        len8.copy_from_slice(&header[..8]);
        let length = u64::from_le_bytes(len8);
        if length > max_record {
            return Err(ErrorDetail::Format(format!(
                "TFRecord record {index} at byte {at}: length {length} is over the size limit of {} bytes",
                crate::digits::group_digits(max_record)
            ))
            .into());
        }
        data.resize(length as usize, 0);
        let n = r.fill(&mut data)?;
        let m = if n == data.len() {
            r.fill(&mut footer)?
        } else {
            0
        };
        if n < data.len() || m < footer.len() {
            let e = TfRecordError::Truncated {
                record: index,
                offset: at,
                length,
                needed: length + 4,
                available: n + m,
            };
            return Err(e.into());
        }
        let stored = u32::from_le_bytes(footer);
        let computed = formats::tfrecord::masked_crc(&data);
        if stored != computed {
            let e = TfRecordError::DataCrc {
                record: index,
                offset: at,
                stored,
                computed,
            };
            return Err(e.into());
        }
        let origin = Origin {
            file,
            entry: index,
            record: true,
        };
        let printed = fingerprint::print(&data, &mut print);
        if !(printed && seen.count(&print)) {
            let e = formats::log_entry(
                index,
                at,
                at + 12,
                bytes::Bytes::copy_from_slice(&data),
                opts,
            )?;
            match &e.content {
                Content::Message(m) if printed => seen.insert(&print, m, origin, 0, keep),
                _ => c.add_entry(&e, file, true, keep),
            }
        }
        index += 1;
        offset += 12 + length + 4;
    }
    if index == 0 {
        return Ok(None);
    }
    Ok(Some((seen.into_counts(c, &[0]), offset)))
}
