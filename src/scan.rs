//! Reading many request files and logs into [`crate::analysis::coverage`]'s tables: the
//! file access and the worker threads the pure analysis layer leaves to its callers.
//!
//! [`count_files`] reads bare request files, TF Serving TFRecord `PredictionLog` logs,
//! text-format requests and (with dtypes, [`count_files_with`]) REST JSON lines. One
//! worker per core (`workers`) shares out the files. A TFRecord log is streamed: the
//! file is memory-mapped, one thread walks the framing (8-byte length checks only) and
//! hands batches of record positions to the workers, which check the data CRC, decode
//! (zero-copy views under a reference count of their own) and count into their own
//! tables; nothing but the per-key counts (and one
//! representative request per key) is kept, so memory stays bounded whatever the log's
//! size. Results do not depend on thread timing: counts are sums, and the
//! representative of a key is its first occurrence in file order.
//!
//! ```
//! let files = ["tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_reordered.bin",
//!              "tests/data/eas/faq_prod_batch4.bin"];
//! let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_ref()).collect();
//! let cov = tfreq::scan::count_files(&paths, Default::default())?;
//! assert_eq!(cov.requests, 3);
//! assert_eq!(cov.executor_keys().len(), 1); // same feed and fetch sets
//! assert_eq!(cov.shape_keys().len(), 2);    // batch 1 and batch 4
//! # Ok::<(), tfreq::Error>(())
//! ```

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use bytes::Bytes;

use crate::analysis::coverage::{KeyCounts, Origin};
use crate::analysis::report::Unreadable;
use crate::decode::DecodeOptions;
use crate::error::{Error, ErrorDetail};
use crate::formats::detect::{self, InputFormat, Source};
use crate::formats::rest_json::{self, Dtypes};
use crate::formats::tfrecord::{Frame, Records};
use crate::formats::{self, ContainerKind, Hint};
use crate::model::WireFormat;

/// Records per batch handed to a worker.
const BATCH: usize = 512;
/// Batches in flight: bounds memory to a few thousand record slices.
const IN_FLIGHT: usize = 4;
/// Worker threads when the number of cores cannot be learnt (the machine tfreq is
/// written for has two cores).
pub(crate) const WORKERS: usize = 2;
/// At most this many worker threads.
const MAX_WORKERS: usize = 8;

/// Worker threads: one per core this process may run on (so `taskset -c 0` gives
/// one), at most eight.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(WORKERS, |n| n.get().min(MAX_WORKERS))
}

/// Counts every request in `paths` (see the module docs). With `keep`, the first
/// request of each shape key is kept as its representative (for warm-ups).
pub fn count_files(paths: &[&Path], keep: bool) -> Result<KeyCounts, Error> {
    count_files_with(paths, keep, None)
}

/// As [`count_files`], also reading TF Serving REST JSON (`.json`,
/// `.jsonl`: one request or JSON lines) with the input dtypes `rest` gives
/// (JSON carries none).
pub fn count_files_with(
    paths: &[&Path],
    keep: bool,
    rest: Option<&Dtypes>,
) -> Result<KeyCounts, Error> {
    count_files_from(paths, keep, rest, InputFormat::Auto)
}

/// As [`count_files_with`], reading every file as `format` (or
/// detecting what each is, with [`InputFormat::Auto`]).
pub fn count_files_from(
    paths: &[&Path],
    keep: bool,
    rest: Option<&Dtypes>,
    format: InputFormat,
) -> Result<KeyCounts, Error> {
    let (total, errors) =
        count_files_inner(paths, keep, rest, format, crate::io::DEFAULT_MAX_SIZE, true);
    // The first failing file in the order given, whichever worker met it.
    match errors.into_iter().min_by_key(|(i, _)| *i) {
        Some((_, e)) => Err(e),
        None => Ok(total),
    }
}

/// As [`count_files_from`], going on past files that cannot be read (or are larger
/// than `max_size` bytes): the counts cover the files that could be read, and
/// [`KeyCounts::unreadable`] lists the others, in the order given, each with the error
/// that set it aside in the words of `message` (given the error and the file;
/// [`Error::message_without`] is the plain wording, a program may add its own hints).
pub fn count_files_lenient(
    paths: &[&Path],
    keep: bool,
    rest: Option<&Dtypes>,
    format: InputFormat,
    max_size: u64,
    message: &dyn Fn(&Error, &str) -> String,
) -> KeyCounts {
    let (mut total, mut errors) = count_files_inner(paths, keep, rest, format, max_size, false);
    errors.sort_by_key(|(i, _)| *i);
    total.unreadable = errors
        .into_iter()
        .map(|(i, e)| {
            let file = paths
                .get(i)
                .map_or_else(|| "?".to_string(), |p| p.display().to_string());
            let error = message(&e, &file);
            Unreadable { file, error }
        })
        .collect();
    total
}

/// Adds a worker's counts and errors to the totals; a worker that panicked is an
/// error (placed after every file's own).
fn merge_worker<E: IntoIterator<Item = (usize, Error)>>(
    total: &mut KeyCounts,
    errors: &mut Vec<(usize, Error)>,
    r: std::thread::Result<(KeyCounts, E)>,
) {
    match r {
        Ok((c, e)) => {
            total.merge(c);
            errors.extend(e);
        }
        Err(_) => errors.push((
            usize::MAX,
            Error::from(ErrorDetail::Format("a worker thread panicked".into())),
        )),
    }
}

fn count_files_inner(
    paths: &[&Path],
    keep: bool,
    rest: Option<&Dtypes>,
    format: InputFormat,
    max_size: u64,
    stop_at_error: bool,
) -> (KeyCounts, Vec<(usize, Error)>) {
    // Files are shared out to the workers one at a time; a TFRecord file is
    // itself split over the workers (see `count_tfrecord`).
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let worker = || -> (KeyCounts, Vec<(usize, Error)>) {
        let mut c = KeyCounts::default();
        let mut errors = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = paths.get(i) else { break };
            match count_file(p, i, keep, rest, format, max_size) {
                Ok(f) => c.merge(f),
                Err(e) => {
                    stop.store(stop_at_error, Ordering::Relaxed);
                    errors.push((i, e));
                }
            }
        }
        (c, errors)
    };
    let workers = workers().min(paths.len()).max(1);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers).map(|_| s.spawn(worker)).collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let mut total = KeyCounts {
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        ..KeyCounts::default()
    };
    let mut errors = Vec::new();
    for r in results {
        merge_worker(&mut total, &mut errors, r);
    }
    (total, errors)
}

/// Counts one file of [`count_files_with`]; errors name the file.
fn count_file(
    p: &Path,
    i: usize,
    keep: bool,
    rest: Option<&Dtypes>,
    format: InputFormat,
    max_size: u64,
) -> Result<KeyCounts, Error> {
    let in_file = |e: Error| e.in_file(p.display().to_string());
    let bytes = crate::io::read_input_limited(p, max_size)?;
    let src = Source {
        rest: rest.cloned(),
        ..Source::for_path(p, format)
    };
    let kind = detect::detect(&bytes, DecodeOptions::default(), &src)
        .map_err(in_file)?
        .kind;
    if kind != ContainerKind::RestJson {
        return count_source(bytes, i, &src, keep).map_err(in_file);
    }
    let d = detect::need_dtypes(&src).map_err(in_file)?;
    let mut c = KeyCounts::default();
    rest_json::for_each_json_line(&bytes, d, &[], WireFormat::TfServing, |n, m| {
        c.add(
            &m,
            Origin {
                file: i,
                entry: n,
                record: true,
            },
            keep,
        )
    })
    .map_err(in_file)?;
    Ok(c)
}

/// Counts the requests of one file (`file` is its number in [`Origin`]).
pub fn count_bytes(bytes: Bytes, file: usize, hint: Hint, keep: bool) -> Result<KeyCounts, Error> {
    count_source(bytes, file, &hint.into(), keep)
}

/// [`count_bytes`] for a file read as `src` says.
fn count_source(bytes: Bytes, file: usize, src: &Source, keep: bool) -> Result<KeyCounts, Error> {
    let opts = DecodeOptions::default();
    let it = formats::entries_from(bytes.clone(), opts, src)?;
    if it.kind() == ContainerKind::TfRecord {
        return count_tfrecord(bytes, file, keep);
    }
    let record = it.kind() != ContainerKind::Bare;
    let mut c = KeyCounts::default();
    for e in it {
        c.add_entry(&e?, file, record, keep);
    }
    Ok(c)
}

/// The buffer of a file, shared by its workers under one reference count per worker:
/// slicing a [`Bytes`] bumps its count, and one count shared by every core would
/// bounce its cache line between them on each record's every field.
struct Share(Bytes);

impl AsRef<[u8]> for Share {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

fn count_tfrecord(bytes: Bytes, file: usize, keep: bool) -> Result<KeyCounts, Error> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Frame>>(IN_FLIGHT);
    let rx = Mutex::new(rx);
    let stop = AtomicBool::new(false);
    let opts = DecodeOptions::default();
    let worker = || -> (KeyCounts, Option<(usize, Error)>) {
        let mine = Bytes::from_owner(Share(bytes.clone()));
        let mut c = KeyCounts::default();
        loop {
            let batch = match rx.lock() {
                Ok(r) => r.recv(),
                Err(_) => return (c, None),
            };
            let Ok(batch) = batch else {
                return (c, None);
            };
            let span = match (batch.first(), batch.last()) {
                (Some(a), Some(b)) => a.offset..b.end(),
                _ => 0..0,
            };
            for f in batch {
                let r = f
                    .verify(&mine)
                    .map_err(Error::from)
                    .and_then(|_| formats::record_entry(f.record_in(&mine), opts));
                match r {
                    Ok(e) => c.add_entry(&e, file, true, keep),
                    Err(err) => {
                        stop.store(true, Ordering::Relaxed);
                        return (c, Some((f.index, err)));
                    }
                }
            }
            // Read: a mapped log's pages can go (a view kept for a representative
            // maps them in again when read).
            crate::par::release(mine.get(span).unwrap_or_default());
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers()).map(|_| s.spawn(worker)).collect();
        // This thread walks the framing and feeds the workers.
        let mut frame_err = None;
        let mut batch = Vec::with_capacity(BATCH);
        // Frames, not views: the walk touches no reference count.
        let mut frames = Records::new(bytes.clone()).defer_data_check();
        while let Some(r) = frames.next_frame() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            match r {
                Ok(rec) => {
                    batch.push(rec);
                    if batch.len() == BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        if tx.send(full).is_err() {
                            break;
                        }
                    }
                }
                Err(e) => {
                    frame_err = Some((e.record(), Error::from(e)));
                    break;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(batch);
        }
        drop(tx);
        let mut total = KeyCounts::default();
        let mut errors: Vec<(usize, Error)> = frame_err.into_iter().collect();
        for h in handles {
            merge_worker(&mut total, &mut errors, h.join());
        }
        // Report the first bad record in file order, whichever thread met it.
        match errors.into_iter().min_by_key(|(i, _)| *i) {
            Some((_, e)) => Err(e),
            None => Ok(total),
        }
    })
}
