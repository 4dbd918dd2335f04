//! Reading many request files and logs into the tables of [`crate::analysis::KeyCounts`]: the
//! file access and the worker threads the pure analysis layer leaves to its callers.
//!
//! [`count`] reads bare request files, TF Serving TFRecord `PredictionLog` logs (plain
//! or gzip/zlib), text-format requests and (with dtypes) REST JSON lines, each as the
//! caller's [`InputOptions`] say; [`count_reader`] reads one stream. One
//! worker per core (`workers`) shares out the files. A TFRecord log is streamed: the
//! file is memory-mapped and cut into parts of 16 MiB, each starting at a record found
//! by its framing; the workers walk the parts (framing, data CRC), read each record's
//! key from its borrowed bytes (`fingerprint`; a record is decoded in full only the
//! first time its key is met, or when the fast reading declines it) and count into
//! their own tables, giving back each part's pages once read. Nothing but the per-key
//! counts (and one representative request per key) is kept, so memory stays bounded
//! whatever the log's size. Results do not depend on thread timing: counts are sums,
//! the representative of a key is its first occurrence in file order, and a log whose
//! parts do not tile it exactly (damage, or a start found inside data) is walked again
//! from its start on one thread, which names its first bad record.
//!
//! ```
//! let files = ["tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_reordered.bin",
//!              "tests/data/eas/faq_prod_batch4.bin"];
//! let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_ref()).collect();
//! let counted = tfreq::scan::count(&paths, &Default::default(), false);
//! assert!(counted.errors.is_empty());
//! let cov = counted.counts;
//! assert_eq!(cov.requests, 3);
//! assert_eq!(cov.executor_keys().len(), 1); // same feed and fetch sets
//! assert_eq!(cov.shape_keys().len(), 2);    // batch 1 and batch 4
//! ```

use std::io::{BufRead, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;

use crate::analysis::coverage::KeyCounts;
use crate::analysis::report::Unreadable;
use crate::error::{Error, ErrorDetail};
use crate::formats::compression::{self, Compression};
use crate::formats::tfrecord::{self};
use crate::formats::{self, ContainerKind, Content, InputOptions, LogReading, Opened};
use crate::model::Kind;

mod fingerprint;
mod repeats;
mod seen;
mod stream;
mod walk;

use seen::Seen;
use walk::{CHUNK, count_tfrecord_reads};

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

// Distinct shape keys a count holds at most unless told otherwise (`count_capped`):
// the summary's limit, about half a gigabyte of tables for keys of one feed, instead
// of tables that grow with every distinct request until the allocator aborts.
use crate::analysis::summary::DEFAULT_MAX_KEYS;

/// A count met more distinct shape keys than its limit ([`count_capped`]): it stops,
/// and the file it was reading is [`Counted::errors`]' entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("more than {} distinct shape keys, the limit of the tables counted in memory", crate::digits::group_digits(*limit as u64))]
pub struct TooManyKeys {
    /// The limit.
    pub limit: usize,
}

impl TooManyKeys {
    /// Whether `e` is (or wraps) this error.
    pub fn is(e: &Error) -> bool {
        matches!(e.root(), ErrorDetail::Other { source, .. } if source.is::<TooManyKeys>())
    }
}

fn too_many_keys(limit: usize) -> Error {
    Error::other(crate::error::Category::Limit, TooManyKeys { limit })
}

/// `Err` when `c` holds more than `max` keys.
fn check_keys(c: &KeyCounts, max: usize) -> Result<(), Error> {
    if c.keys.len() > max {
        return Err(too_many_keys(max));
    }
    Ok(())
}

/// Why a count stopped, where no error of the file it read says.
///
/// ```
/// use tfreq::scan::ScanError;
/// let e = tfreq::Error::from(ScanError::WorkerPanicked);
/// assert_eq!(e.to_string(), "a worker thread panicked");
/// assert_eq!(e.classify(), tfreq::Category::Container);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// A count that does not fit in a `u64`.
    #[error("{what}: the count overflows 2^64 - 1")]
    Overflow {
        /// What was counted.
        what: String,
    },
    /// A worker thread panicked; its files' counts are lost.
    #[error("a worker thread panicked")]
    WorkerPanicked,
    /// A stream read as a TFRecord log that fails before its first record.
    #[error("not a TFRecord log (it fails before its first record)")]
    NotTfRecordLog,
    /// Reading a stream failed part-way.
    #[error("{what}: {why} (after {} bytes of {} stream)", crate::digits::group_digits(*after), if *inflated { "inflated" } else { "the" })]
    Read {
        /// `input`, or `gzip data` for an inflated stream.
        what: String,
        /// The reader's error.
        why: String,
        /// Bytes read before it (inflated bytes, for an inflated stream).
        after: u64,
        /// Whether the stream was inflated.
        inflated: bool,
    },
}

/// A [`ScanError`] is a container problem, as other unreadable files are.
impl From<ScanError> for Error {
    fn from(e: ScanError) -> Self {
        Error::other(crate::error::Category::Container, e)
    }
}

/// A count that does not fit in a `u64`.
fn overflow(what: &str) -> Error {
    ScanError::Overflow {
        what: what.to_string(),
    }
    .into()
}

/// What [`count`] read: the counts over every file that could be read, and the error
/// of each file that could not (in the order given, one for each entry of
/// [`KeyCounts::unreadable`], whose messages are [`Error::message_without`] the file).
#[derive(Debug)]
#[non_exhaustive]
pub struct Counted {
    /// The counts (and the files read, their sizes, the files set aside).
    pub counts: KeyCounts,
    /// Why each file in `counts.unreadable` could not be read, in the same order.
    pub errors: Vec<Error>,
}

/// Counts every request in `paths` (see the module docs), each read as `opts` says (its
/// format, size cap, REST dtypes, whether large files are mapped; `-` is standard input,
/// streamed), going on past files that cannot be read: the counts cover the files that
/// could be read, and [`Counted::errors`] says why the others could not. With `keep`,
/// the first request of each shape key is kept as its representative (for warm-ups).
pub fn count(paths: &[&Path], opts: &InputOptions, keep: bool) -> Counted {
    count_capped(paths, opts, keep, DEFAULT_MAX_KEYS)
}

/// [`count`] holding at most `max_keys` distinct shape keys: past them the count stops
/// with [`TooManyKeys`] (the error of the file it was reading; the files not yet read
/// are not read), so the tables' memory stays bounded whatever the inputs hold. The
/// check is made only when a key new to a table is added, never per record.
///
/// ```
/// let files = ["tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_batch4.bin"];
/// let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_ref()).collect();
/// let counted = tfreq::scan::count_capped(&paths, &Default::default(), false, 1);
/// assert!(tfreq::scan::TooManyKeys::is(&counted.errors[0]), "{:?}", counted.errors);
/// ```
pub fn count_capped(paths: &[&Path], opts: &InputOptions, keep: bool, max_keys: usize) -> Counted {
    let (mut counts, mut errors) = count_files_inner(paths, keep, opts, false, max_keys);
    errors.sort_by_key(|(i, _)| *i);
    counts.unreadable = errors
        .iter()
        .map(|(i, e)| {
            let file = paths
                .get(*i)
                .map_or_else(|| "?".to_string(), |p| p.display().to_string());
            let error = e.message_without(&file);
            Unreadable { file, error }
        })
        .collect();
    Counted {
        counts,
        errors: errors.into_iter().map(|(_, e)| e).collect(),
    }
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
        Err(_) => errors.push((usize::MAX, Error::from(ScanError::WorkerPanicked))),
    }
}

fn count_files_inner(
    paths: &[&Path],
    keep: bool,
    opts: &InputOptions,
    stop_at_error: bool,
    max_keys: usize,
) -> (KeyCounts, Vec<(usize, Error)>) {
    // Files are shared out to the workers one at a time; a TFRecord file is
    // itself split over the workers (see `count_tfrecord`).
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let sizes: Vec<AtomicU64> = paths.iter().map(|_| AtomicU64::new(0)).collect();
    let worker = || -> (KeyCounts, Vec<(usize, Error)>) {
        let mut c = KeyCounts::default();
        let mut errors = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = paths.get(i) else { break };
            let counted = count_file(p, i, keep, opts, max_keys).and_then(|(f, size)| {
                c.merge(f);
                check_keys(&c, max_keys).map_err(|e| e.in_file(p.display().to_string()))?;
                Ok(size)
            });
            match counted {
                Ok(size) => sizes[i].store(size, Ordering::Relaxed),
                Err(e) => {
                    // Past the key limit, the other files could only add keys.
                    let full = TooManyKeys::is(&e);
                    if stop_at_error || full {
                        stop.store(true, Ordering::Relaxed);
                    }
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
        file_sizes: sizes.iter().map(|s| s.load(Ordering::Relaxed)).collect(),
        ..KeyCounts::default()
    };
    let mut errors = Vec::new();
    for r in results {
        merge_worker(&mut total, &mut errors, r);
    }
    let capped = errors.iter().any(|(_, e)| TooManyKeys::is(e));
    if !capped && check_keys(&total, max_keys).is_err() {
        // Each worker's files were under the limit, all of them are not: the last file
        // read is named (the message says what was over).
        let last = paths.len().saturating_sub(1);
        let file = paths.get(last).map(|p| p.display().to_string());
        errors.push((
            last,
            too_many_keys(max_keys).in_file(file.unwrap_or_default()),
        ));
    }
    (total, errors)
}

/// Counts one file of [`count`]; errors name the file.
fn count_file(
    p: &Path,
    i: usize,
    keep: bool,
    opts: &InputOptions,
    max_keys: usize,
) -> Result<(KeyCounts, u64), Error> {
    let read = &opts.read;
    let in_file = |e: Error| e.in_file(p.display().to_string());
    if p == Path::new("-") {
        return count_stdin(i, keep, opts, max_keys).map_err(in_file);
    }
    // A compressed log is read as a stream, in constant memory (`stream`); a plain log
    // file is mapped and walked in parts read from the file, in bounded memory whatever
    // its size (`formats::open`).
    let size = || std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    match formats::open(p, opts, LogReading::Walk).map_err(in_file)? {
        Opened::Stream {
            reader,
            compression,
        } => {
            let counted = stream::count_stream(
                reader,
                compression,
                i,
                keep,
                read.limit(),
                read.streamed_limit(),
                max_keys,
            )
            .map_err(in_file)?;
            if let Some((counts, _)) = counted {
                return Ok((counts, size()));
            }
            // Not a log after all (its first record fails): read whole, for the
            // reading's own words.
            match formats::open(p, opts, LogReading::Whole).map_err(in_file)? {
                Opened::Whole { bytes, .. } => {
                    count_bytes(bytes, p, i, keep, opts, None, max_keys).map(|c| (c, size()))
                }
                Opened::Stream { .. } => Err(ScanError::NotTfRecordLog.into()),
            }
            .map_err(in_file)
        }
        Opened::Whole {
            bytes,
            compression,
            past_cap,
        } => {
            // A mapped log's parts are read from the file by the workers (`walk_read`).
            let disk = (compression.is_none() && crate::par::is_mapped(&bytes)).then_some(p);
            let n = match compression {
                Some(_) => size(),
                None => bytes.len() as u64,
            };
            let unbounded;
            let opts = if past_cap {
                unbounded = opts.clone().read_options(read.max_size(u64::MAX));
                &unbounded
            } else {
                opts
            };
            count_bytes(bytes, p, i, keep, opts, disk, max_keys)
                .map(|c| (c, n))
                .map_err(in_file)
        }
    }
}

/// Counts the requests of one input read whole (`p` names it, for detection), inflated
/// first when it is a gzip or zlib log (under `limit` bytes). Also the size read.
fn count_read(
    bytes: Bytes,
    p: &Path,
    i: usize,
    keep: bool,
    opts: &InputOptions,
    max_keys: usize,
) -> Result<(KeyCounts, u64), Error> {
    let size = bytes.len() as u64;
    let (bytes, _) = formats::inflated(bytes, opts.read.limit())?;
    count_bytes(bytes, p, i, keep, opts, None, max_keys).map(|c| (c, size))
}

/// Counts the requests of one input's bytes (`p` names it, for detection). `disk`: the
/// file the bytes are a mapping of, whose parts a TFRecord log's workers read for
/// themselves.
fn count_bytes(
    bytes: Bytes,
    p: &Path,
    i: usize,
    keep: bool,
    opts: &InputOptions,
    disk: Option<&Path>,
    max_keys: usize,
) -> Result<KeyCounts, Error> {
    let src = opts.for_path(p);
    let entries = formats::read(bytes.clone(), &src)?;
    count_entries(entries, bytes, i, keep, disk, max_keys)
}

fn io_error(p: &Path, source: std::io::Error) -> Error {
    ErrorDetail::Io {
        path: p.display().to_string(),
        source,
    }
    .into()
}

/// Counts standard input: see [`count_reader`].
fn count_stdin(
    i: usize,
    keep: bool,
    opts: &InputOptions,
    max_keys: usize,
) -> Result<(KeyCounts, u64), Error> {
    count_reader_as(std::io::stdin(), Path::new("-"), i, keep, opts, max_keys)
}

/// Counts the requests of one input read from `r` (a pipe, a socket, a file in an
/// object store opened by another library), named `name`: a TFRecord log, plain or
/// gzip-compressed, is read as a stream, one record at a time, in constant memory
/// whatever its size; anything else (a bare request, text, JSON, a zlib log) is read
/// whole under the size limit, as a file is. `KeyCounts::files` is `[name]` and
/// `file_sizes` the bytes read from `r`.
///
/// ```
/// let f = std::fs::File::open("tests/data/tfrecord/warmup_predict.tfrecord")?;
/// let opts = tfreq::formats::InputOptions::new();
/// let c = tfreq::scan::count_reader(f, "warmup", &opts)?;
/// assert_eq!((c.requests, c.files[0].as_str()), (3, "warmup"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn count_reader(
    r: impl Read + Send,
    name: &str,
    opts: &InputOptions,
) -> Result<KeyCounts, Error> {
    let path = Path::new(name);
    let (mut c, size) =
        count_reader_as(r, path, 0, false, opts, DEFAULT_MAX_KEYS).map_err(|e| e.in_file(name))?;
    c.files = vec![name.to_string()];
    c.file_sizes = vec![size];
    Ok(c)
}

fn count_reader_as(
    r: impl Read + Send,
    p: &Path,
    i: usize,
    keep: bool,
    opts: &InputOptions,
    max_keys: usize,
) -> Result<(KeyCounts, u64), Error> {
    let read = &opts.read;
    let n = std::sync::Arc::new(AtomicU64::new(0));
    let counted = ByteCounter {
        inner: r,
        n: n.clone(),
    };
    let mut r = std::io::BufReader::with_capacity(64 << 10, counted);
    let head = r.fill_buf().map_err(|e| io_error(p, e))?.to_vec();
    let framed = head.len() >= 12
        && u32::from_le_bytes([head[8], head[9], head[10], head[11]])
            == tfrecord::masked_crc(&head[..8]);
    let c = compression::sniff(&head);
    if c == Some(Compression::Gzip) || (c.is_none() && framed) {
        let total = read.streamed_limit();
        return match stream::count_stream(r, c, i, keep, read.limit(), total, max_keys)? {
            Some((counts, _)) => Ok((counts, n.load(Ordering::Relaxed))),
            None => Err(ScanError::NotTfRecordLog.into()),
        };
    }
    // Under the cap as every input is read (crate::io): the buffer grows as bytes come.
    let v = crate::io::read_capped(&mut r, p, read.limit(), None)?;
    let (counts, _) = count_read(v, p, i, keep, opts, max_keys)?;
    Ok((counts, n.load(Ordering::Relaxed)))
}

/// A reader that counts the bytes read through it.
struct ByteCounter<R> {
    inner: R,
    n: std::sync::Arc<AtomicU64>,
}

impl<R: Read> Read for ByteCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
}

/// The size of the parts a log of `n` bytes is walked in: [`CHUNK`], or for a log of
/// fewer than eight of them per worker, an eighth of a worker's share (at least
/// [`MIN_CHUNK`]): a 56 MB log in three 16 MiB parts kept one worker busy for two of
/// them while the other had one.
fn part_size(n: usize) -> usize {
    CHUNK.min((n / (workers() * 8)).max(MIN_CHUNK))
}

/// The smallest part [`part_size`] cuts.
const MIN_CHUNK: usize = 1 << 20;

/// Counts the entries of one file read whole (`file` is its number in [`Origin`]);
/// `bytes` are the file's, for the parallel TFRecord walk.
fn count_entries(
    it: formats::Entries,
    bytes: Bytes,
    file: usize,
    keep: bool,
    disk: Option<&Path>,
    max_keys: usize,
) -> Result<KeyCounts, Error> {
    if it.kind() == ContainerKind::TfRecord {
        let chunk = part_size(bytes.len());
        return count_tfrecord_reads(bytes, file, keep, chunk, disk, max_keys).map(|(c, _)| c);
    }
    let record = it.kind() != ContainerKind::Bare;
    let mut c = KeyCounts::default();
    for e in it {
        let e = e?;
        // A response's outputs would count as feeds: the file is set aside,
        // as an unreadable one is.
        if let Content::Message(m) = &e.content
            && m.kind == Kind::Response
        {
            return Err(Error::from(ErrorDetail::ResponseNotRequest {
                wire: m.wire,
            }));
        }
        let known = c.keys.len();
        c.add_entry(&e, file, record, keep);
        if c.keys.len() > known {
            check_keys(&c, max_keys)?;
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::walk::{MAPPED_RECORD, count_tfrecord_in};
    use super::*;
    use crate::formats::prediction_log::encode_predict_log;
    use crate::formats::tfrecord::{frame, write_record};

    thread_local! {
        /// Logs this thread walked again in one part after their parts failed to tile them.
        pub(super) static PLAIN_WALKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn data(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// What a count says, in a comparable form: totals, and per key its count, first
    /// origin and representative.
    fn summary(r: Result<KeyCounts, Error>) -> Result<String, String> {
        let c = r.map_err(|e| e.to_string())?;
        let mut keys: Vec<String> = c
            .keys
            .iter()
            .map(|(k, s)| format!("{k:?} {} {:?} {:?}", s.count, s.first, s.representative))
            .collect();
        keys.sort();
        Ok(format!("{} {} {keys:?}", c.requests, c.skipped))
    }

    /// The count in one part: the plain walk the parts must agree with.
    fn plain(log: &[u8], keep: bool) -> Result<String, String> {
        summary(count_tfrecord_in(
            Bytes::copy_from_slice(log),
            0,
            keep,
            usize::MAX,
        ))
    }

    fn parted(log: &[u8], keep: bool, chunk: usize) -> Result<String, String> {
        summary(count_tfrecord_in(
            Bytes::copy_from_slice(log),
            0,
            keep,
            chunk,
        ))
    }

    /// [`count_tfrecord_reads`] with the workers reading `log` from a file (`walk_read`),
    /// as for a mapped log: the summary and the number of full reads.
    fn from_disk(log: &[u8], keep: bool, chunk: usize) -> (Result<String, String>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.tfrecord");
        std::fs::write(&path, log).unwrap();
        let bytes = Bytes::copy_from_slice(log);
        match count_tfrecord_reads(bytes, 0, keep, chunk, Some(&path), usize::MAX) {
            Ok((c, full)) => (summary(Ok(c)), full),
            Err(e) => (summary(Err(e)), 0),
        }
    }

    /// A log of a few MiB is mapped (its parts then read from the file), a file that
    /// is not a log of the same size is read into memory, and nothing is mapped unless
    /// mapping is allowed.
    #[test]
    fn a_log_of_a_few_mib_is_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let (log, bare) = (dir.path().join("log"), dir.path().join("bare"));
        let mut one = Vec::new();
        write_record(&mut one, &encode_predict_log(&data("tfs/faq_prod.bin")));
        let n = (crate::io::LOG_MAP_THRESHOLD as usize).div_ceil(one.len()) + 1;
        std::fs::write(&log, one.repeat(n)).unwrap();
        std::fs::write(&bare, vec![7u8; one.len() * n]).unwrap();
        assert!(one.len() * n < crate::io::MAP_THRESHOLD as usize);
        // SAFETY: the files are this test's own; nothing truncates them while mapped.
        let maps = unsafe { crate::io::ReadOptions::default().map_large_files() };
        let mapped = |p: &Path, read| {
            let opts = InputOptions::new().read_options(read);
            match formats::open(p, &opts, LogReading::Walk).unwrap() {
                Opened::Whole { bytes, .. } => crate::par::is_mapped(&bytes),
                Opened::Stream { .. } => panic!("{}: streamed", p.display()),
            }
        };
        assert!(mapped(&log, maps));
        assert!(!mapped(&bare, maps));
        assert!(!mapped(&log, crate::io::ReadOptions::default()));
        // Counted from the file, as the copy is.
        let opts = InputOptions::new().read_options(maps);
        let counted = count(&[log.as_path()], &opts, false);
        assert!(counted.errors.is_empty(), "{:?}", counted.errors);
        assert_eq!(counted.counts.requests, n as u64);
    }

    /// Small logs are cut into parts enough for the workers to share; large ones into
    /// [`CHUNK`]s.
    #[test]
    fn small_logs_are_cut_into_smaller_parts() {
        let w = workers();
        assert_eq!(part_size(1 << 40), CHUNK);
        assert_eq!(part_size(1000), MIN_CHUNK);
        let n = 56_000_000;
        assert!(
            n / part_size(n) >= (4 * w).min(n / MIN_CHUNK),
            "{} parts",
            n / part_size(n)
        );
    }

    #[test]
    fn parts_read_from_the_file_count_and_fail_as_the_mapping_does() {
        let recs = records();
        let walks = || PLAIN_WALKS.with(|w| w.get());
        // Every kind of record, a large one (seed_content) now and then; the second mix
        // has records framed inside another's data (a part may start at no record).
        // A record over MAPPED_RECORD, read through the mapping.
        let huge = {
            use crate::wire::{tf, tfs};
            use prost::Message as _;
            let n = MAPPED_RECORD / 4 + 1000;
            let t = tf::TensorProto {
                dtype: 1,
                tensor_shape: Some(tf::TensorShapeProto {
                    dim: vec![tf::tensor_shape_proto::Dim {
                        size: n as i64,
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                tensor_content: vec![7u8; n * 4].into(),
                ..Default::default()
            };
            let req = tfs::PredictRequest {
                inputs: [("x".to_string(), t)].into_iter().collect(),
                ..Default::default()
            };
            encode_predict_log(&req.encode_to_vec())
        };
        for (m, mix) in [[0, 1, 0, 2, 1, 4, 0, 1], [0, 1, 0, 2, 1, 4, 0, 5]]
            .iter()
            .enumerate()
        {
            let mut log = Vec::new();
            for i in 0..400usize {
                write_record(&mut log, &recs[mix[i % 8]]);
                if i % 97 == 96 {
                    write_record(&mut log, &recs[3]);
                }
                if i % 150 == 149 {
                    write_record(&mut log, &huge);
                }
            }
            for keep in [false, true] {
                let want = plain(&log, keep);
                assert!(want.is_ok(), "{want:?}");
                for chunk in [4000, 64 << 10, usize::MAX] {
                    let before = walks();
                    let (got, full) = from_disk(&log, keep, chunk);
                    assert_eq!(got, want, "mix {m} chunk {chunk}");
                    let disk_walks = walks() - before;
                    count_tfrecord_reads(
                        Bytes::copy_from_slice(&log),
                        0,
                        keep,
                        chunk,
                        None,
                        usize::MAX,
                    )
                    .unwrap();
                    // Walked in parts exactly when the mapping is; always in parts when
                    // every part starts at a record, most records counted by their print
                    // (which worker decodes a print first depends on timing, so the
                    // number of full reads is not exact).
                    assert_eq!(walks() - before - disk_walks, disk_walks, "mix {m}");
                    if m == 0 {
                        assert_eq!(disk_walks, 0, "chunk {chunk}");
                        assert!(full * 4 < 400, "{full} full reads, chunk {chunk}");
                    }
                }
            }
            // A damaged record deep in the log, a cut last record, a bad length: the
            // same error as the plain walk's, which names the record.
            let mut bad_data = log.clone();
            let mid = bad_data.len() * 2 / 3;
            bad_data[mid] ^= 0x40;
            let mut cut = log.clone();
            cut.truncate(log.len() - 3);
            let mut bad_len = log.clone();
            bad_len[log.len() / 2..]
                .iter_mut()
                .take(64)
                .for_each(|b| *b = 0xff);
            for broken in [bad_data, cut, bad_len] {
                let want = plain(&broken, false);
                assert!(want.is_err(), "{want:?}");
                for chunk in [4000, 64 << 10] {
                    assert_eq!(from_disk(&broken, false, chunk).0, want, "chunk {chunk}");
                }
            }
        }
    }

    /// Predict logs of the test requests, a classify log and a log whose response holds
    /// framed records (a start found by chance inside data).
    fn records() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = [
            "tfs/faq_prod.bin",
            "tfs/faq_prod_batch4.bin",
            "tfs/seed_typed.bin",
            "tfs/seed_content.bin",
        ]
        .iter()
        .map(|f| encode_predict_log(&data(f)))
        .collect();
        v.push(vec![0x12, 0x00]); // classify_log {}
        // predict_log { request, response: two framed records }
        let inner = frame([&v[0][..], &v[1][..]]);
        let mut body = Vec::new();
        use crate::fields::{predict_log, prediction_log};
        crate::wire::put_bytes_field(&mut body, predict_log::REQUEST, &data("tfs/faq_prod.bin"));
        crate::wire::put_bytes_field(&mut body, predict_log::RESPONSE, &inner);
        let mut log = Vec::new();
        crate::wire::put_bytes_field(&mut log, prediction_log::PREDICT_LOG, &body);
        v.push(log);
        v
    }

    /// A log of `n` requests, each with an input of its own name (`n` shape keys).
    fn distinct(n: usize) -> Vec<u8> {
        use crate::wire::{put_bytes_field, put_varint_field};
        let mut log = Vec::new();
        for i in 0..n {
            let mut tensor = Vec::new();
            put_varint_field(&mut tensor, 1, 1);
            let mut entry = Vec::new();
            put_bytes_field(&mut entry, 1, format!("in_{i}").as_bytes());
            put_bytes_field(&mut entry, 2, &tensor);
            let mut req = Vec::new();
            put_bytes_field(&mut req, 2, &entry);
            write_record(&mut log, &encode_predict_log(&req));
        }
        log
    }

    #[test]
    fn the_key_cap_holds_in_parts_in_one_walk_and_on_a_stream() {
        let log = distinct(3000);
        for chunk in [2000, 20_000, usize::MAX] {
            let count = |max| {
                count_tfrecord_reads(Bytes::copy_from_slice(&log), 0, false, chunk, None, max)
            };
            let e = count(2999).unwrap_err();
            assert!(TooManyKeys::is(&e), "chunk {chunk}: {e}");
            assert_eq!(
                e.to_string(),
                "more than 2,999 distinct shape keys, the limit of the tables counted in memory"
            );
            assert_eq!(count(3000).unwrap().0.keys.len(), 3000, "chunk {chunk}");
        }
        for (max, ok) in [(2999, false), (3000, true)] {
            let r = stream::count_stream(&log[..], None, 0, false, 1 << 20, None, max);
            assert_eq!(r.is_ok(), ok, "{max}: {:?}", r.err());
        }
        // The whole stream is bounded when asked, after inflating.
        let gz = compression::compress(&log, Compression::Gzip).unwrap();
        let capped = Some(log.len() as u64 - 1);
        let e = stream::count_stream(
            &gz[..],
            Some(Compression::Gzip),
            0,
            false,
            1 << 20,
            capped,
            5000,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("the inflated stream goes on past byte"), "{e}");
        let exact = Some(log.len() as u64);
        assert!(
            stream::count_stream(
                &gz[..],
                Some(Compression::Gzip),
                0,
                false,
                1 << 20,
                exact,
                5000
            )
            .is_ok()
        );
    }

    #[test]
    fn parts_count_as_one_walk_does() {
        for name in [
            "values/warmup_1000.tfrecord",
            "tfrecord/warmup_mixed.tfrecord",
        ] {
            let log = data(name);
            for keep in [false, true] {
                let want = plain(&log, keep);
                assert!(want.is_ok(), "{name}: {want:?}");
                for chunk in [1, 7, 100, 1000, 4096] {
                    assert_eq!(
                        parted(&log, keep, chunk),
                        want,
                        "{name} in parts of {chunk}"
                    );
                }
            }
        }
    }

    /// The cost of a record must not grow with how many distinct requests a
    /// log holds. Each distinct print is read in full once per worker, however many
    /// parts the log is walked in (it was once per part: 60 parts here, 600 full reads).
    #[test]
    fn each_distinct_request_is_read_in_full_once_per_worker() {
        let recs = records();
        let mut log = Vec::new();
        for i in 0..600 {
            write_record(&mut log, &recs[i % 4]);
        }
        let chunk = log.len() / 60;
        let (c, full) =
            count_tfrecord_reads(Bytes::from(log), 0, false, chunk, None, usize::MAX).unwrap();
        assert_eq!(c.requests, 600);
        assert!(
            full <= 4 * workers(),
            "{full} full reads for 4 distinct requests"
        );
    }

    /// A record over [`MAPPED_RECORD`] that the fast reading declines (a classify
    /// request) is read in full where it lies in the mapping; its first request is its
    /// own record, not the part's first (it pointed at record 0, a predict request).
    #[test]
    fn a_large_record_read_in_full_keeps_its_record_number() {
        use crate::model::Method;
        // ClassificationRequest { model_spec { name: "m" } input { example_list {
        //   examples { features { feature { key: "x" value { bytes_list { value: 2 MiB } } } } } } } }
        let big = vec![b'a'; 2 << 20];
        let request =
            fingerprint::examples::one_feature_classify_request(Some(b"m"), b"x", 1, &big);
        let classify =
            crate::formats::prediction_log::encode_request_log(Method::Classify, &request).unwrap();
        assert!(classify.len() > MAPPED_RECORD);
        let recs = records();
        let mut log = Vec::new();
        for i in 0..7 {
            write_record(&mut log, &recs[i % 2]);
        }
        write_record(&mut log, &classify);
        write_record(&mut log, &recs[0]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.tfrecord");
        std::fs::write(&path, &log).unwrap();
        for chunk in [usize::MAX, 1 << 20] {
            let (c, _) = count_tfrecord_reads(
                Bytes::from(log.clone()),
                0,
                false,
                chunk,
                Some(&path),
                usize::MAX,
            )
            .unwrap();
            let first = c
                .keys
                .iter()
                .find(|(k, _)| k.key.method == Method::Classify)
                .map(|(_, s)| s.first)
                .expect("the classify key");
            assert_eq!(first.entry, 7, "parts of {chunk}");
        }
    }

    #[test]
    fn keys_first_met_in_later_parts_keep_their_record_numbers() {
        let recs = records();
        let mut log = Vec::new();
        for i in 0..300 {
            write_record(&mut log, &recs[usize::from(i % 50 == 49)]);
        }
        write_record(&mut log, &recs[2]);
        write_record(&mut log, &recs[3]);
        let want = plain(&log, true);
        let walks = PLAIN_WALKS.with(|w| w.get());
        assert_eq!(parted(&log, true, 4000), want);
        let c = count_tfrecord_in(Bytes::from(log), 0, false, 4000).unwrap();
        let mut firsts: Vec<usize> = c.keys.values().map(|s| s.first.entry).collect();
        firsts.sort();
        assert_eq!(firsts, [0, 49, 300]); // seed_typed and seed_content share a key
        // Both were counted in parts, not by the walk that stands in for them.
        assert_eq!(PLAIN_WALKS.with(|w| w.get()), walks);
    }

    #[test]
    fn damaged_logs_name_the_same_first_bad_record() {
        for name in ["flipped", "truncated"] {
            let log = data(&format!("tfrecord/tfreq_written/damaged/{name}.tfrecord"));
            let want = plain(&log, false);
            assert!(want.is_err(), "{name}");
            for chunk in [1, 50, 300] {
                assert_eq!(
                    parted(&log, false, chunk),
                    want,
                    "{name} in parts of {chunk}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any sequence of records, cut anywhere, damaged or not: the parts say what one
        /// walk says, errors included.
        #[test]
        fn any_log_in_any_parts_counts_as_one_walk(
            order in proptest::collection::vec(
                proptest::prop_oneof![10 => 0usize..5, 1 => proptest::strategy::Just(5usize)],
                1..40,
            ),
            chunk in 1usize..3000,
            damage in proptest::option::weighted(0.3, (0usize..1 << 20, 1u8..=255)),
            keep: bool,
        ) {
            let recs = records();
            let mut log = Vec::new();
            for &i in &order {
                write_record(&mut log, &recs[i]);
            }
            if let Some((at, x)) = damage {
                let at = at % log.len();
                log[at] ^= x;
            }
            proptest::prop_assert_eq!(parted(&log, keep, chunk), plain(&log, keep));
        }
    }
}
