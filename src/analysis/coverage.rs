//! Production coverage: which executor keys (and shapes) a set of request files really
//! sends, and how often — what a warm-up has to cover.
//!
//! [`KeyCounts::count_files`] reads bare request files, TF Serving TFRecord
//! `PredictionLog` logs, text-format requests and (with dtypes) REST JSON lines. Two
//! workers share out the files. A TFRecord log is streamed: the file is
//! memory-mapped, one thread walks the framing (8-byte length checks only) and hands
//! batches of zero-copy record slices to two workers, which check the data CRC, decode
//! and count into their own tables; nothing but the per-key counts (and one
//! representative request per key) is kept, so memory stays bounded whatever the log's
//! size. Results do not depend on thread timing: counts are sums, and the
//! representative of a key is its first occurrence in file order.
//!
//! ```
//! use tfreq::analysis::coverage::KeyCounts;
//! let files = ["tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_reordered.bin",
//!              "tests/data/eas/faq_prod_batch4.bin"];
//! let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_ref()).collect();
//! let cov = KeyCounts::count_files(&paths, Default::default())?;
//! assert_eq!(cov.requests, 3);
//! assert_eq!(cov.executor_keys().len(), 1); // same feed and fetch sets
//! assert_eq!(cov.shape_keys().len(), 2);    // batch 1 and batch 4
//! # Ok::<(), tfreq::Error>(())
//! ```

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use bytes::Bytes;
use serde::Serialize;

use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::decode::DecodeOptions;
use crate::error::Error;
use crate::formats::detect::{self, InputFormat, Source};
use crate::formats::rest_json::{self, Dtypes};
use crate::formats::tfrecord::{RawRecord, Records};
use crate::formats::{self, ContainerKind, Content, Hint};
use crate::model::{Message, WireFormat};

/// Records per batch handed to a worker.
const BATCH: usize = 512;
/// Batches in flight: bounds memory to a few thousand record slices.
const IN_FLIGHT: usize = 4;
/// Worker threads (the machine tfreq is written for has two cores).
pub const WORKERS: usize = 2;

/// Where a request came from: file number (in the order given) and entry index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Origin {
    /// Index of the file in the list given.
    pub file: usize,
    /// Entry (record) index in that file.
    pub entry: usize,
    /// Whether the file holds several entries (a TFRecord log), so `entry` is a record number.
    pub record: bool,
}

/// One shape key's count and its first request.
#[derive(Debug, Clone)]
pub struct KeyStat {
    /// How many requests had this key.
    pub count: u64,
    /// Where the first one is.
    pub first: Origin,
    /// The first one (kept only when asked for).
    pub representative: Option<Message>,
}

/// Counts by shape key over many requests (what `tfreq keys` prints).
#[derive(Debug, Clone, Default)]
pub struct KeyCounts {
    /// Requests counted.
    pub requests: u64,
    /// Entries that are not predict requests (other log kinds, text lines).
    pub skipped: u64,
    /// Count per shape key.
    pub keys: HashMap<ShapeKey, KeyStat>,
    /// The files read, in order.
    pub files: Vec<String>,
    /// Files that could not be read, in the order given ([`KeyCounts::count_files_lenient`]).
    pub unreadable: Vec<crate::analysis::report::Unreadable>,
}

/// An executor key with its total and its shape keys, most frequent first.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorGroup {
    /// The key.
    pub key: ExecutorKey,
    /// Requests with it.
    pub count: u64,
    /// Its shape keys, most frequent first.
    pub shapes: Vec<(ShapeKey, u64, Origin)>,
}

impl KeyCounts {
    /// Counts one request.
    pub fn add(&mut self, msg: &Message, at: Origin, keep: bool) {
        self.requests += 1;
        let k = ShapeKey::of(msg);
        match self.keys.get_mut(&k) {
            Some(s) => {
                s.count += 1;
                if at < s.first {
                    s.first = at;
                    if keep {
                        s.representative = Some(msg.clone());
                    }
                }
            }
            None => {
                self.keys.insert(
                    k,
                    KeyStat {
                        count: 1,
                        first: at,
                        representative: keep.then(|| msg.clone()),
                    },
                );
            }
        }
    }

    /// Adds another count (from another worker or file) into this one.
    pub fn merge(&mut self, other: KeyCounts) {
        self.requests += other.requests;
        self.skipped += other.skipped;
        for (k, s) in other.keys {
            match self.keys.get_mut(&k) {
                Some(m) => {
                    m.count += s.count;
                    if s.first < m.first {
                        m.first = s.first;
                        m.representative = s.representative;
                    }
                }
                None => {
                    self.keys.insert(k, s);
                }
            }
        }
    }

    /// Shape keys, most frequent first (ties: first seen first).
    pub fn shape_keys(&self) -> Vec<(&ShapeKey, &KeyStat)> {
        let mut v: Vec<_> = self.keys.iter().collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.1.first.cmp(&b.1.first)));
        v
    }

    /// Executor keys with their shapes, most frequent first (ties: first seen first).
    pub fn executor_keys(&self) -> Vec<ExecutorGroup> {
        let mut groups: HashMap<&ExecutorKey, ExecutorGroup> = HashMap::new();
        for (k, s) in self.shape_keys() {
            let g = groups.entry(&k.key).or_insert_with(|| ExecutorGroup {
                key: k.key.clone(),
                count: 0,
                shapes: Vec::new(),
            });
            g.count += s.count;
            g.shapes.push((k.clone(), s.count, s.first));
        }
        let mut v: Vec<ExecutorGroup> = groups.into_values().collect();
        let first = |g: &ExecutorGroup| g.shapes.iter().map(|s| s.2).min();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(first(a).cmp(&first(b))));
        v
    }

    /// `FILE record N` (or just `FILE` for a bare message) for an origin.
    pub fn describe(&self, at: Origin) -> String {
        let file = self.files.get(at.file).map_or("?", String::as_str);
        if at.record {
            format!("{file} record {}", at.entry)
        } else {
            file.to_string()
        }
    }

    /// Counts every request in `paths` (see the module docs). With `keep`, the first
    /// request of each shape key is kept as its representative (for warm-ups).
    pub fn count_files(paths: &[&Path], keep: bool) -> Result<KeyCounts, Error> {
        Self::count_files_with(paths, keep, None)
    }

    /// As [`KeyCounts::count_files`], also reading TF Serving REST JSON (`.json`,
    /// `.jsonl`: one request or JSON lines) with the input dtypes `rest` gives
    /// (JSON carries none).
    pub fn count_files_with(
        paths: &[&Path],
        keep: bool,
        rest: Option<&Dtypes>,
    ) -> Result<KeyCounts, Error> {
        Self::count_files_from(paths, keep, rest, InputFormat::Auto)
    }

    /// As [`KeyCounts::count_files_with`], reading every file as `format` (or
    /// detecting what each is, with [`InputFormat::Auto`]).
    pub fn count_files_from(
        paths: &[&Path],
        keep: bool,
        rest: Option<&Dtypes>,
        format: InputFormat,
    ) -> Result<KeyCounts, Error> {
        let (total, errors) =
            Self::count_files_inner(paths, keep, rest, format, crate::io::DEFAULT_MAX_SIZE, true);
        // The first failing file in the order given, whichever worker met it.
        match errors.into_iter().min_by_key(|(i, _)| *i) {
            Some((_, e)) => Err(e),
            None => Ok(total),
        }
    }

    /// As [`KeyCounts::count_files_from`], going on past files that cannot be read
    /// (or are larger than `max_size` bytes): the counts cover the files that could
    /// be read, and [`KeyCounts::unreadable`] lists the others, in the order given,
    /// each with the error that set it aside.
    pub fn count_files_lenient(
        paths: &[&Path],
        keep: bool,
        rest: Option<&Dtypes>,
        format: InputFormat,
        max_size: u64,
    ) -> KeyCounts {
        let (mut total, mut errors) =
            Self::count_files_inner(paths, keep, rest, format, max_size, false);
        errors.sort_by_key(|(i, _)| *i);
        total.unreadable = errors
            .into_iter()
            .map(|(i, e)| {
                let file = paths
                    .get(i)
                    .map_or_else(|| "?".to_string(), |p| p.display().to_string());
                let error = match e {
                    Error::InFile { file: f, source } if f == file => source.to_string(),
                    Error::Io { path, source } if path == file => source.to_string(),
                    e => e.to_string(),
                };
                crate::analysis::report::Unreadable { file, error }
            })
            .collect();
        total
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
        let workers = WORKERS.min(paths.len()).max(1);
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
            match r {
                Ok((c, e)) => {
                    total.merge(c);
                    errors.extend(e);
                }
                Err(_) => {
                    errors.push((usize::MAX, Error::Format("a worker thread panicked".into())))
                }
            }
        }
        (total, errors)
    }
}

/// Counts one file of [`KeyCounts::count_files_with`]; errors name the file.
fn count_file(
    p: &Path,
    i: usize,
    keep: bool,
    rest: Option<&Dtypes>,
    format: InputFormat,
    max_size: u64,
) -> Result<KeyCounts, Error> {
    let in_file = |e: Error| Error::InFile {
        file: p.display().to_string(),
        source: Box::new(e),
    };
    let bytes = crate::io::read_input_limited(p, max_size)?;
    let src = Source {
        rest: rest.cloned(),
        dtype_options: true,
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
        let e = e?;
        match &e.content {
            Content::Message(m) => c.add(
                m,
                Origin {
                    file,
                    entry: e.index,
                    record,
                },
                keep,
            ),
            _ => c.skipped += 1,
        }
    }
    Ok(c)
}

fn count_tfrecord(bytes: Bytes, file: usize, keep: bool) -> Result<KeyCounts, Error> {
    let (tx, rx) = mpsc::sync_channel::<Vec<RawRecord>>(IN_FLIGHT);
    let rx = Mutex::new(rx);
    let stop = AtomicBool::new(false);
    let opts = DecodeOptions::default();
    let worker = || -> (KeyCounts, Option<(usize, Error)>) {
        let mut c = KeyCounts::default();
        loop {
            let batch = match rx.lock() {
                Ok(r) => r.recv(),
                Err(_) => return (c, None),
            };
            let Ok(batch) = batch else {
                return (c, None);
            };
            for rec in batch {
                let index = rec.index;
                let r = rec
                    .verify()
                    .map_err(Error::from)
                    .and_then(|_| formats::record_entry(rec, opts));
                match r {
                    Ok(e) => match &e.content {
                        Content::Message(m) => c.add(
                            m,
                            Origin {
                                file,
                                entry: e.index,
                                record: true,
                            },
                            keep,
                        ),
                        _ => c.skipped += 1,
                    },
                    Err(err) => {
                        stop.store(true, Ordering::Relaxed);
                        return (c, Some((index, err)));
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..WORKERS).map(|_| s.spawn(worker)).collect();
        // This thread walks the framing and feeds the workers.
        let mut frame_err = None;
        let mut batch = Vec::with_capacity(BATCH);
        for r in Records::new(bytes).defer_data_check() {
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
            match h.join() {
                Ok((c, err)) => {
                    total.merge(c);
                    errors.extend(err);
                }
                Err(_) => {
                    errors.push((usize::MAX, Error::Format("a worker thread panicked".into())))
                }
            }
        }
        // Report the first bad record in file order, whichever thread met it.
        match errors.into_iter().min_by_key(|(i, _)| *i) {
            Some((_, e)) => Err(e),
            None => Ok(total),
        }
    })
}
