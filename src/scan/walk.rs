//! The parallel walk of a plain TFRecord log: the mapped file cut into parts, each walked
//! by a worker from a record found by its framing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::analysis::coverage::{KeyCounts, Origin};
use crate::decode::DecodeOptions;
use crate::error::Error;
use crate::formats::tfrecord::{self, Records};
use crate::formats::{self, Content};

use super::fingerprint;
use super::seen::{KnownKeys, Seen, Share};
use super::{TooManyKeys, check_keys, io_error, workers};

/// [`count_tfrecord_in`], and how many records were read in full (decoded) rather than
/// by their print. With `disk` (the file `bytes` map), each worker reads its parts from
/// the file into a buffer of its own ([`walk_read`]) instead of through the mapping.
pub(super) fn count_tfrecord_reads(
    bytes: Bytes,
    file: usize,
    keep: bool,
    chunk: usize,
    disk: Option<&Path>,
    max_keys: usize,
) -> Result<(KeyCounts, usize), Error> {
    let disk = disk.and_then(|p| std::fs::File::open(p).ok());
    let n = bytes.len();
    let chunk = chunk.max(1);
    let parts = (n / chunk).max(1);
    // Where part k's walk starts: `None` when no record starts near its beginning.
    // Each is looked for once, by the first worker that needs it.
    let found: Vec<OnceLock<Option<usize>>> = (0..parts).map(|_| OnceLock::new()).collect();
    let start_of = |buf: &[u8], k: usize| -> Option<usize> {
        match (k, found.get(k)) {
            (0, _) => Some(0),
            (_, None) => Some(n),
            (k, Some(f)) => *f.get_or_init(|| {
                let from = k * chunk;
                let found = tfrecord::sync_at(buf, from, from + SYNC_WINDOW.min(chunk));
                // The search's reads may have mapped pages around it (the kernel maps
                // a whole large folio on a fault; a successor's header may lie a
                // folio past the window): give them back; the walks map what they read
                // again.
                let around = from..(from + SYNC_WINDOW + crate::par::FOLIO).min(n);
                crate::par::release(buf.get(around).unwrap_or_default());
                found
            }),
        }
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let known = KnownKeys::default();
    let worker = || -> (Vec<Walked>, Seen) {
        // A reference count of this worker's own (see `Share`).
        let mine = Bytes::from_owner(Share(bytes.clone()));
        let mut seen = Seen::new(max_keys);
        let mut out = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= parts {
                break;
            }
            let Some(from) = start_of(&mine, k) else {
                out.push((k, None));
                continue;
            };
            let to = (k + 1..=parts)
                .find_map(|j| start_of(&mine, j))
                .unwrap_or(n);
            let at = Walk {
                file,
                keep,
                stop: &stop,
                part: k,
                known: Some(&known),
                max_keys,
            };
            let r = match &disk {
                Some(f) => walk_read(f, &mine, from, to, &at, &mut seen),
                None => walk(&mine, from, to, &at, &mut seen),
            };
            if !matches!(&r, Ok(p) if !p.damaged) {
                stop.store(true, Ordering::Relaxed);
            }
            out.push((k, Some(r)));
        }
        (out, seen)
    };
    let threads = workers().min(parts);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(worker)).collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    // Each part: walked and whole (`Some(Some)`), without a start (`Some(None)`).
    let mut done: Vec<Option<Option<Part>>> = (0..parts).map(|_| None).collect();
    let mut whole = true;
    let mut seens = Vec::new();
    for r in results {
        let Ok((list, seen)) = r else {
            whole = false;
            continue;
        };
        seens.push(seen);
        for (k, p) in list {
            match p {
                None => done[k] = Some(None),
                Some(Ok(p)) if !p.damaged => done[k] = Some(Some(p)),
                // Over the key limit: a walk from the start would only meet it again.
                Some(Err(e)) if TooManyKeys::is(&e) => return Err(e),
                Some(_) => whole = false,
            }
        }
    }
    if !whole || done.iter().any(Option::is_none) {
        // Damaged, or a part's start was not a record boundary: one plain walk.
        #[cfg(test)]
        super::tests::PLAIN_WALKS.with(|w| w.set(w.get() + 1));
        let mut seen = Seen::new(max_keys);
        let at = Walk {
            file,
            keep,
            stop: &AtomicBool::new(false),
            part: 0,
            known: None,
            max_keys,
        };
        let p = walk(&bytes, 0, n, &at, &mut seen)?;
        return Ok((seen.into_counts(p.counts, &[0])?, p.full_reads));
    }
    // Record numbers: each part's are counted from its start.
    let mut total = KeyCounts::default();
    let mut before = vec![0usize; parts];
    let mut so_far = 0usize;
    let mut full_reads = 0usize;
    for (k, p) in done.into_iter().enumerate() {
        before[k] = so_far;
        let Some(Some(p)) = p else { continue };
        full_reads += p.full_reads;
        let mut c = p.counts;
        for s in c.keys.values_mut() {
            s.first.entry += so_far;
        }
        so_far += p.records;
        total.merge(c);
        check_keys(&total, max_keys)?;
    }
    // The workers' tables joined by print first (hashing a print is cheap; a shape key,
    // with its names and shapes, is not), then counted by shape key once.
    // The workers' keys are theirs alone again (joining moves them, not copies).
    drop(known);
    let mut seens = seens.into_iter();
    if let Some(mut all) = seens.next() {
        for seen in seens {
            all.absorb(seen)?;
        }
        total = all.into_counts(total, &before)?;
        check_keys(&total, max_keys)?;
    }
    Ok((total, full_reads))
}

/// A part of a log as a worker left it: walked (or failed), or without a start.
type Walked = (usize, Option<Result<Part, Error>>);

/// Parts of a log walked by one worker at a time.
pub(super) const CHUNK: usize = 16 << 20;
/// How far past a part's nominal start its first record is looked for.
const SYNC_WINDOW: usize = 256 << 10;

/// One part of a log, walked.
struct Part {
    counts: KeyCounts,
    /// Records walked.
    records: usize,
    /// The walk did not land on its end (stopped early, or a record ran past it).
    damaged: bool,
    /// Records read in full: new prints, and records the print does not cover.
    full_reads: usize,
}

/// What a walk of one part needs besides its bytes.
struct Walk<'a> {
    /// The file's number in [`Origin`].
    file: usize,
    /// Keep each new key's first request as its representative.
    keep: bool,
    /// Set when any worker met an error: the walk ends.
    stop: &'a AtomicBool,
    /// The part's number.
    part: usize,
    /// The keys the log's workers decoded (none for a plain walk).
    known: Option<&'a KnownKeys>,
    /// The most keys (and prints) a table may hold.
    max_keys: usize,
}

impl Walk<'_> {
    /// Counts one record, `(data, crc)`: its data and its masked CRC-32C (checked), number
    /// `at.entry` in the part: by its print
    /// when `seen` (or, for a print new to this worker, another worker) knows it, else
    /// read in full by `full` (which gives its entry). `true` when it was read in full.
    fn record(
        &self,
        (data, crc): (&[u8], u32),
        at: Origin,
        print: &mut Vec<u8>,
        seen: &mut Seen,
        c: &mut KeyCounts,
        full: impl FnOnce() -> Result<formats::Entry, Error>,
    ) -> Result<bool, Error> {
        let printed = seen.repeats.print(data, crc, print);
        if printed && seen.count(print) {
            return Ok(false);
        }
        // A print new to this worker, unless the request itself is kept: its key from
        // the print when it is an examples request's, else from another worker when one
        // has it, else the request read in full (also a record the fast reading leaves
        // to the full one).
        let other = (printed && !self.keep)
            .then(|| {
                fingerprint::examples::key(print)
                    .map(Arc::new)
                    .or_else(|| self.known?.lock().ok()?.get(print.as_slice()).cloned())
            })
            .flatten();
        if let Some(key) = other {
            seen.insert_known(print, key, (at, self.part))?;
            return Ok(false);
        }
        let mut e = full()?;
        // The record's number is the walk's: a record read where it lies in the mapping
        // is framed on its own, and its entry counts from 0.
        e.index = at.entry;
        match &e.content {
            Content::Message(m) if printed => {
                seen.insert(print, m, (at, self.part), self.keep, self.known)?
            }
            _ => {
                let known = c.keys.len();
                c.add_entry(&e, self.file, true, self.keep);
                if c.keys.len() > known {
                    check_keys(c, self.max_keys)?;
                }
            }
        }
        Ok(true)
    }
}

/// Counts the records from byte `from` (a record boundary) up to the first record that
/// starts at or past `to`, part `w.part` of the log: records read by their print into
/// `seen` (the worker's, across its parts), the others into the part's counts; record
/// numbers in origins and errors count from `from` (exact when `from` is 0). The first
/// error met ends the walk.
fn walk(
    file_bytes: &Bytes,
    from: usize,
    to: usize,
    w: &Walk<'_>,
    seen: &mut Seen,
) -> Result<Part, Error> {
    let opts = DecodeOptions::default();
    let mut c = KeyCounts::default();
    let mut print = Vec::new();
    let mut frames = Records::starting_at(file_bytes.clone(), from).defer_data_check();
    let mut records = 0usize;
    let mut full_reads = 0usize;
    // Read: a mapped log's pages can go behind the walk (a view kept for a
    // representative maps them in again when read).
    let mut trail = crate::par::Trail::new(file_bytes.get(from..).unwrap_or_default());
    while frames.offset() < to {
        if w.stop.load(Ordering::Relaxed) {
            break;
        }
        let Some(f) = frames.next_frame() else { break };
        let f = f.map_err(Error::from)?;
        records += 1;
        f.verify(file_bytes).map_err(Error::from)?;
        let at = Origin {
            file: w.file,
            entry: f.index,
            record: true,
        };
        let full = || formats::record_entry(f.record_in(file_bytes), opts);
        full_reads += usize::from(w.record(
            (f.data(file_bytes), f.stored_crc),
            at,
            &mut print,
            seen,
            &mut c,
            full,
        )?);
        trail.read_to(frames.offset().saturating_sub(from));
    }
    Ok(Part {
        counts: c,
        records,
        full_reads,
        damaged: frames.offset() != to,
    })
}

/// [`walk`] over the file itself: the part's bytes read with `pread` into a buffer of
/// this worker's, which stays in the core's cache while its records are checked and
/// read in place, instead of through the mapping, where every page costs a fault to
/// map it and a give-back to unmap it (on a log in the page cache, mapping and
/// unmapping a gigabyte cost more than copying it). Each record is checked as
/// [`Records`] checks it (the length's CRC, the length within the part, the data's
/// CRC); anything wrong is `damaged`, for the caller to name by a plain [`walk`].
fn walk_read(
    f: &std::fs::File,
    map: &Bytes,
    from: usize,
    to: usize,
    w: &Walk<'_>,
    seen: &mut Seen,
) -> Result<Part, Error> {
    const HEADER: usize = 12;
    const FOOTER: usize = 4;
    let opts = DecodeOptions::default();
    let mut c = KeyCounts::default();
    let mut print = Vec::new();
    let mut buf = Buffer {
        f,
        bytes: vec![0u8; READ_BUFFER],
        lo: 0,
        hi: 0,
        next: from as u64,
        end: to as u64,
    };
    // The file offset of `buf.bytes[buf.lo]`: the next record's header.
    let mut offset = from;
    let mut records = 0usize;
    let mut full_reads = 0usize;
    let le_u32 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let damaged = loop {
        if offset == to || w.stop.load(Ordering::Relaxed) {
            break offset != to;
        }
        if !buf
            .fill(HEADER)
            .map_err(|e| io_error(Path::new("(log)"), e))?
        {
            break true;
        }
        let head = &buf.bytes[buf.lo..buf.lo + HEADER];
        if tfrecord::masked_crc(&head[..8]) != le_u32(&head[8..]) {
            break true;
        }
        let len = u64::from_le_bytes(head[..8].try_into().unwrap_or_default());
        let Some(whole) = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(HEADER + FOOTER))
            .filter(|&t| t <= to - offset)
        else {
            break true;
        };
        let origin = Origin {
            file: w.file,
            entry: records,
            record: true,
        };
        if whole > MAPPED_RECORD {
            // Read where it lies in the mapping (its CRC checked a step at a time, the
            // pages given back behind), not copied whole into the buffer.
            let mut one = Records::starting_at(map.clone(), offset).defer_data_check();
            let Some(Ok(r)) = one.next_frame() else {
                break true;
            };
            if r.verify(map).is_err() {
                break true;
            }
            let full = || formats::record_entry(r.record_in(map), opts);
            full_reads += usize::from(w.record(
                (r.data(map), r.stored_crc),
                origin,
                &mut print,
                seen,
                &mut c,
                full,
            )?);
            crate::par::release(map.get(offset..offset + whole).unwrap_or_default());
            records += 1;
            offset += whole;
            buf.skip_to(offset as u64);
            continue;
        }
        if !buf
            .fill(whole)
            .map_err(|e| io_error(Path::new("(log)"), e))?
        {
            break true;
        }
        let record = &buf.bytes[buf.lo..buf.lo + whole];
        let data = &record[HEADER..whole - FOOTER];
        let crc = le_u32(&record[whole - FOOTER..]);
        if tfrecord::masked_crc(data) != crc {
            break true;
        }
        let full = || {
            let d = Bytes::copy_from_slice(data);
            formats::log_entry(records, offset, offset + HEADER, d, opts)
        };
        full_reads += usize::from(w.record((data, crc), origin, &mut print, seen, &mut c, full)?);
        records += 1;
        buf.lo += whole;
        offset += whole;
    };
    Ok(Part {
        counts: c,
        records,
        full_reads,
        damaged,
    })
}

/// A worker's window on part of a file: `bytes[lo..hi]` holds the file's bytes from
/// the next record on; `next` is the offset of the next byte to read, `end` where the
/// part ends.
struct Buffer<'a> {
    f: &'a std::fs::File,
    bytes: Vec<u8>,
    lo: usize,
    hi: usize,
    next: u64,
    end: u64,
}

impl Buffer<'_> {
    /// Drops what the buffer holds; the next read starts at `next`.
    fn skip_to(&mut self, next: u64) {
        self.lo = 0;
        self.hi = 0;
        self.next = next;
    }

    /// Makes `bytes[lo..lo + need]` hold file bytes, reading as much as fits; `false`
    /// when the part ends first.
    fn fill(&mut self, need: usize) -> std::io::Result<bool> {
        if self.hi - self.lo >= need {
            return Ok(true);
        }
        self.bytes.copy_within(self.lo..self.hi, 0);
        self.hi -= self.lo;
        self.lo = 0;
        if need > self.bytes.len() {
            // A record larger than the buffer (at most the part, checked by the caller).
            self.bytes.resize(need, 0);
        }
        while self.hi < need {
            let left = usize::try_from(self.end - self.next).unwrap_or(usize::MAX);
            let want = (self.bytes.len() - self.hi).min(left);
            if want == 0 {
                return Ok(false);
            }
            let n = read_at(self.f, &mut self.bytes[self.hi..self.hi + want], self.next)?;
            if n == 0 {
                return Ok(false);
            }
            self.hi += n;
            self.next += n as u64;
        }
        Ok(true)
    }
}

/// A record longer than this (header and footer included) is read by [`walk_read`]
/// through the mapping, so that a log of huge records keeps a small resident set.
pub(super) const MAPPED_RECORD: usize = 1 << 20;

/// The buffer [`walk_read`] reads the file into, as much as fits at a time: small enough
/// to stay in a core's cache while its records are checked and read.
const READ_BUFFER: usize = 256 << 10;

#[cfg(unix)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, at)
}

#[cfg(windows)]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, at)
}

// Elsewhere (wasm32-unknown-unknown, where the library is built for the browser page in
// web/): a seek and a read. Nothing reads the file at the same time there.
#[cfg(not(any(unix, windows)))]
fn read_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f;
    f.seek(SeekFrom::Start(at))?;
    f.read(buf)
}

#[cfg(test)]
/// [`count_tfrecord`] in parts of `chunk` bytes (smaller in tests).
///
/// Part `k` is walked from the first record that starts in its first [`SYNC_WINDOW`]
/// bytes, found by its framing ([`tfrecord::sync_at`]), up to where the next part that
/// has one starts. Each start is looked for once, by the first worker that needs it,
/// before the walks that read those pages and give them back. The walks must tile the
/// file exactly (each lands on its end, the last on the end of the file) and meet no
/// error; otherwise (a damaged file, or a start found by chance inside data) the file is
/// walked again from its start on this thread, which names the first bad record exactly
/// as a plain walk does.
pub(super) fn count_tfrecord_in(
    bytes: Bytes,
    file: usize,
    keep: bool,
    chunk: usize,
) -> Result<KeyCounts, Error> {
    count_tfrecord_reads(bytes, file, keep, chunk, None, usize::MAX).map(|(c, _)| c)
}
