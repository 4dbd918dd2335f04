//! Reading inputs under a size cap.
//!
//! Every input — a file, a pipe, a device, `-` for standard input — is read
//! under one size cap ([`DEFAULT_MAX_SIZE`] unless the caller gives another), so
//! `/dev/zero` is refused instead of filling memory.
//!
//! By default every input is read into memory. A caller that reads gigabyte logs can let
//! regular files of [`MAP_THRESHOLD`] bytes or more be memory-mapped instead
//! ([`ReadOptions::map_large_files`]), so they are never copied. That choice is the
//! caller's because it has a process-wide consequence the library must not decide for
//! its host: if another process truncates a mapped file, touching the lost pages raises
//! `SIGBUS`, which kills the process unless the process handles it. The `tfreq` command
//! installs such a handler (it reports the file and exits with status 2) before it asks
//! for mapping; the library itself installs no signal handler and never ends the process.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bytes::Bytes;

use crate::digits::group_digits;
use crate::error::{Error, ErrorDetail};

/// The size cap of [`read_input`]: 2 GiB. Callers with other needs use
/// [`read_input_limited`] (the command line's `--max-size`).
pub const DEFAULT_MAX_SIZE: u64 = 2 << 30;

/// Regular files of at least this many bytes (64 MiB) are memory-mapped; smaller ones,
/// and every pipe or device, are read into memory.
pub const MAP_THRESHOLD: u64 = 64 << 20;

/// A TFRecord log of at least this many bytes (4 MiB) is mapped too, when large files
/// may be ([`ReadOptions::map_large_files`]), by the readers that walk a log in parts
/// read from the file itself (`tfreq keys`, [`crate::scan`]): they read a part at a
/// time into a small buffer of their own, so a 56 MB log is not copied whole into
/// memory first (which cost more than the walk, and its size in resident memory).
pub const LOG_MAP_THRESHOLD: u64 = 4 << 20;

pub(crate) fn io_err(path: &Path, source: io::Error) -> Error {
    Error::from(ErrorDetail::Io {
        path: path.display().to_string(),
        source,
    })
}

fn too_large(path: &Path, size: Option<u64>, limit: u64) -> Error {
    let msg = match size {
        Some(s) => format!(
            "input is {} bytes, over the size limit of {} bytes",
            group_digits(s),
            group_digits(limit)
        ),
        None => format!(
            "input is larger than the size limit of {} bytes",
            group_digits(limit)
        ),
    };
    io_err(path, io::Error::new(io::ErrorKind::FileTooLarge, msg))
}

/// How [`read_file`] reads an input: the size cap, and whether large regular files may be
/// memory-mapped.
///
/// ```
/// let opts = tfreq::ReadOptions::default().max_size(1 << 20);
/// assert_eq!(opts.limit(), 1 << 20);
/// assert!(!opts.maps_large_files());
/// let b = tfreq::read_file("tests/data/eas/spec_vector.bin".as_ref(), &opts)?;
/// assert_eq!(b.len(), 45);
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    max_size: u64,
    map: bool,
    streamed: Option<u64>,
}

impl Default for ReadOptions {
    /// [`DEFAULT_MAX_SIZE`], read into memory.
    fn default() -> Self {
        ReadOptions {
            max_size: DEFAULT_MAX_SIZE,
            map: false,
            streamed: None,
        }
    }
}

impl ReadOptions {
    /// Refuse an input of more than `max_size` bytes.
    pub fn max_size(self, max_size: u64) -> Self {
        ReadOptions { max_size, ..self }
    }

    /// Memory-maps regular files of [`MAP_THRESHOLD`] bytes or more instead of copying
    /// them (TFRecord logs that [`crate::scan`] walks: from [`LOG_MAP_THRESHOLD`]).
    ///
    /// # Safety
    ///
    /// The returned bytes read a file the operating system may change under them. If
    /// another process truncates a mapped file while the bytes (or any slice of them)
    /// are alive, reading the lost pages raises `SIGBUS`, whose default action ends the
    /// process; if it rewrites the file in place, the bytes change. The caller promises
    /// that neither happens, or handles `SIGBUS` itself (the `tfreq` command does, in
    /// `cli/src/sigbus.rs`: it names the file and exits with status 2).
    pub unsafe fn map_large_files(self) -> Self {
        ReadOptions { map: true, ..self }
    }

    /// Refuse a stream read record by record (a log on standard input, the inflated
    /// stream of a compressed log) of more than `max` bytes, counted after inflating;
    /// `None` (the default) reads such a stream to its end, in constant memory,
    /// [`ReadOptions::limit`] then bounding each record.
    ///
    /// ```
    /// let opts = tfreq::ReadOptions::default().max_streamed(Some(1 << 20));
    /// assert_eq!(opts.streamed_limit(), Some(1 << 20));
    /// ```
    pub fn max_streamed(self, max: Option<u64>) -> Self {
        ReadOptions {
            streamed: max,
            ..self
        }
    }

    /// The cap on a stream read record by record, if any (see
    /// [`ReadOptions::max_streamed`]).
    pub fn streamed_limit(&self) -> Option<u64> {
        self.streamed
    }

    /// The size cap, in bytes.
    pub fn limit(&self) -> u64 {
        self.max_size
    }

    /// Whether large regular files are memory-mapped.
    pub fn maps_large_files(&self) -> bool {
        self.map
    }
}

/// Reads a whole input as `opts` says: a file or `-` for standard input, refusing one of
/// more than [`ReadOptions::limit`] bytes, whatever it is (regular file, pipe, device or
/// standard input).
///
/// ```
/// let opts = tfreq::ReadOptions::default().max_size(10);
/// let err = tfreq::read_file("tests/data/eas/spec_vector.bin".as_ref(), &opts).unwrap_err();
/// assert!(err.to_string().contains("over the size limit of 10 bytes"), "{err}");
/// ```
pub fn read_file(path: &Path, opts: &ReadOptions) -> Result<Bytes, Error> {
    read_mapping_from(path, opts, MAP_THRESHOLD)
}

/// [`read_file`], mapping regular files from `threshold` bytes on (when `opts` maps files).
pub(crate) fn read_mapping_from(
    path: &Path,
    opts: &ReadOptions,
    threshold: u64,
) -> Result<Bytes, Error> {
    let max_size = opts.max_size;
    if path == Path::new("-") {
        return read_capped(io::stdin().lock(), path, max_size, None);
    }
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let meta = file.metadata().map_err(|e| io_err(path, e))?;
    if meta.is_dir() {
        return Err(io_err(
            path,
            io::Error::new(io::ErrorKind::IsADirectory, "is a directory"),
        ));
    }
    if !meta.is_file() {
        // Pipes and devices have no length to check: read at most one byte past the cap.
        return read_capped(&file, path, max_size, None);
    }
    if meta.len() > max_size {
        return Err(too_large(path, Some(meta.len()), max_size));
    }
    if !opts.map || meta.len() < threshold {
        // A copy: small files cost less copied than mapped, and a copy cannot fault if
        // the file changes under us. The cap still applies, for a file that grows while
        // it is read.
        return read_capped(&file, path, max_size, Some(meta.len()));
    }
    // SAFETY: the map is read-only and lives as long as the Bytes that own it. The
    // caller of `map_large_files` (an unsafe fn) took on the file changing under it.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_err(path, e))?;
    // Listed, so that long passes over it can give back pages once read.
    Ok(Bytes::from_owner(crate::par::Mapped::new(map)))
}

/// Reads a whole input into memory under the [`DEFAULT_MAX_SIZE`] cap: a file or `-`
/// for standard input.
///
/// ```
/// let b = tfreq::read_input("tests/data/eas/spec_vector.bin".as_ref())?;
/// assert_eq!(b.len(), 45);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn read_input(path: &Path) -> Result<Bytes, Error> {
    read_file(path, &ReadOptions::default())
}

/// Reads a whole input into memory, refusing one of more than `max_size` bytes,
/// whatever it is (regular file, pipe, device or standard input).
///
/// ```
/// let err = tfreq::read_input_limited("tests/data/eas/spec_vector.bin".as_ref(), 10)
///     .unwrap_err();
/// assert!(err.to_string().contains("over the size limit of 10 bytes"), "{err}");
/// ```
pub fn read_input_limited(path: &Path, max_size: u64) -> Result<Bytes, Error> {
    read_file(path, &ReadOptions::default().max_size(max_size))
}

/// Bytes read per step by [`read_capped`] when its buffer is full; the buffer grows as
/// data arrives (doubling, never past the cap), so the cap is never allocated up front.
const CHUNK: usize = 64 << 10;

/// Reads all of `r` (a pipe, a socket, standard input already partly read) into memory
/// under `opts`' size cap; `name` names the input in errors.
///
/// ```
/// let opts = tfreq::ReadOptions::default().max_size(4);
/// assert_eq!(&tfreq::read_from(&b"abc"[..], "-".as_ref(), &opts)?[..], b"abc");
/// assert!(tfreq::read_from(&b"abcdef"[..], "-".as_ref(), &opts).is_err());
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn read_from(r: impl Read, name: &Path, opts: &ReadOptions) -> Result<Bytes, Error> {
    read_capped(r, name, opts.max_size, None)
}

/// Reads `r` to its end, refusing more than `max_size` bytes. `size_hint` (a regular
/// file's length) is reserved at once; past it, and for pipes and devices, the buffer
/// grows as data arrives, doubling and never past the cap, so the cap is checked as the
/// bytes come and never allocated up front. Growing with `try_reserve` turns a failed
/// allocation into an error, instead of the allocator's abort; `read_to_end` alone
/// doubled past the cap (to 512 MiB for a 256 MiB cap and one byte more), so under
/// `ulimit -v` the error was "out of memory" instead of the size limit
/// (cli/tests/cli/cli_outputs.rs holds it to the limit).
pub(crate) fn read_capped(
    mut r: impl Read,
    path: &Path,
    max_size: u64,
    size_hint: Option<u64>,
) -> Result<Bytes, Error> {
    let cap = usize::try_from(max_size).unwrap_or(usize::MAX);
    let mut v: Vec<u8> = Vec::new();
    let grow = |v: &mut Vec<u8>, to: usize| -> Result<(), Error> {
        v.try_reserve_exact(to.saturating_sub(v.len()))
            .map_err(|_| {
                io_err(
                    path,
                    io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        format!(
                        "out of memory after reading {} bytes, below the size limit of {} bytes",
                        group_digits(v.len() as u64),
                        group_digits(max_size)
                    ),
                    ),
                )
            })
    };
    if let Some(h) = size_hint {
        grow(&mut v, usize::try_from(h).unwrap_or(usize::MAX).min(cap))?;
    }
    let mut chunk: Vec<u8> = Vec::new();
    loop {
        let room = v.capacity() - v.len();
        if room > 0 {
            // Straight into the spare capacity: `take` stops at it, so `read_to_end`
            // never grows the buffer (it probes on the stack when the buffer is full).
            let n = (&mut r)
                .take(room as u64)
                .read_to_end(&mut v)
                .map_err(|e| io_err(path, e))?;
            if n < room {
                return Ok(Bytes::from(v));
            }
            continue;
        }
        // Full: one chunk says whether there is more, and how much room to make.
        if chunk.is_empty() {
            chunk = vec![0u8; CHUNK];
        }
        let got = match r.read(&mut chunk) {
            Ok(0) => return Ok(Bytes::from(v)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(path, e)),
        };
        if got > cap - v.len() {
            return Err(too_large(path, None, max_size));
        }
        let need = v.len() + got;
        let to = v.capacity().saturating_mul(2).clamp(need, cap);
        grow(&mut v, to)?;
        v.extend_from_slice(&chunk[..got]);
    }
}

/// A reader that gives the bytes of another up to a size cap and fails past it: what
/// bounds a stream read record by record (a log on standard input, the inflated stream
/// of a gzip or zlib log), whose total is never held in memory but which the user
/// capped with `--max-size`. Made by [`limited`].
///
/// ```
/// use std::io::Read;
/// let mut r = tfreq::limited(&b"abcdef"[..], 4, "the input");
/// let mut got = Vec::new();
/// let err = r.read_to_end(&mut got).unwrap_err();
/// assert_eq!(got, b"abcd");
/// assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge);
/// assert!(err.to_string().contains("over the size limit of 4 bytes"), "{err}");
/// ```
#[derive(Debug)]
pub struct Limited<R> {
    inner: R,
    limit: u64,
    read: u64,
    what: &'static str,
}

/// `r` refusing more than `limit` bytes: its reads end with an error of kind
/// [`io::ErrorKind::FileTooLarge`] naming `what` (`"the input"`, `"the inflated
/// stream"`), the limit and the byte reached, as soon as a byte past the limit arrives
/// (a stream of exactly `limit` bytes reads to its end).
pub fn limited<R: Read>(r: R, limit: u64, what: &'static str) -> Limited<R> {
    Limited {
        inner: r,
        limit,
        read: 0,
        what,
    }
}

impl<R> Limited<R> {
    /// Bytes given so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let left = self.limit - self.read;
        if left == 0 {
            // At the cap: one byte more says whether the stream goes on past it.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::FileTooLarge,
                    format!(
                        "{} goes on past byte {}, over the size limit of {} bytes",
                        self.what,
                        group_digits(self.read),
                        group_digits(self.limit)
                    ),
                )),
            };
        }
        let want = usize::try_from(left).map_or(buf.len(), |l| l.min(buf.len()));
        let n = self.inner.read(&mut buf[..want])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Bytes a [`Spool`] holds in memory before it moves them to its temporary file.
const SPOOL_MEMORY: usize = 8 << 20;

/// Output written now and copied out later, in bounded memory: for a listing whose head
/// needs the whole input (a log's record count comes before its records), written
/// while the input is walked once. It holds up to 8 MiB in memory, then writes to an
/// unnamed temporary file in [`std::env::temp_dir`] (removed as soon as it is made).
///
/// ```
/// use std::io::Write;
/// let mut spool = tfreq::Spool::new();
/// writeln!(spool, "record 0")?;
/// let mut out = b"2 records\n".to_vec();
/// spool.copy_to(&mut out)?;
/// assert_eq!(out, b"2 records\nrecord 0\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Spool {
    held: Vec<u8>,
    file: Option<File>,
    /// Bytes written to the file.
    on_file: u64,
    /// Bytes held in memory before they move to the file: [`SPOOL_MEMORY`].
    memory: usize,
}

impl Default for Spool {
    fn default() -> Spool {
        Spool {
            held: Vec::new(),
            file: None,
            on_file: 0,
            memory: SPOOL_MEMORY,
        }
    }
}

impl Spool {
    /// An empty spool.
    pub fn new() -> Spool {
        Spool::default()
    }

    /// An empty spool that moves to its file past `memory` bytes, for a test that goes
    /// across the move without writing 8 MiB.
    #[cfg(test)]
    pub(crate) fn holding(memory: usize) -> Spool {
        Spool {
            memory,
            ..Spool::default()
        }
    }

    /// How many bytes were written to the spool (and kept: see [`Spool::truncate`]).
    pub fn len(&self) -> u64 {
        self.on_file + self.held.len() as u64
    }

    /// Whether nothing was written (or everything was taken back).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes back everything written after the first `len` bytes (nothing when `len` is
    /// at least [`Spool::len`]): to undo what was written for an input that failed.
    ///
    /// ```
    /// use std::io::Write;
    /// let mut spool = tfreq::Spool::new();
    /// write!(spool, "kept ")?;
    /// let mark = spool.len();
    /// write!(spool, "taken back")?;
    /// spool.truncate(mark)?;
    /// let mut out = Vec::new();
    /// spool.copy_to(&mut out)?;
    /// assert_eq!(out, b"kept ");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn truncate(&mut self, len: u64) -> io::Result<()> {
        use std::io::Seek;
        if len >= self.on_file {
            let keep = usize::try_from(len - self.on_file).unwrap_or(usize::MAX);
            self.held.truncate(keep);
            return Ok(());
        }
        self.held.clear();
        if let Some(f) = &mut self.file {
            f.set_len(len)?;
            f.seek(io::SeekFrom::Start(len))?;
        }
        self.on_file = len;
        Ok(())
    }

    /// Writes everything written to the spool to `out`, in order.
    pub fn copy_to(mut self, out: &mut dyn io::Write) -> io::Result<()> {
        use std::io::{Seek, Write};
        let Some(mut f) = self.file.take() else {
            return out.write_all(&self.held);
        };
        f.write_all(&self.held)?;
        self.held = Vec::new();
        f.seek(io::SeekFrom::Start(0))?;
        io::copy(&mut f, out)?;
        Ok(())
    }

    /// Moves what memory holds to the temporary file (made on the first call).
    fn spill(&mut self) -> io::Result<()> {
        use std::io::Write;
        let f = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(spool_file()?),
        };
        f.write_all(&self.held)?;
        self.on_file += self.held.len() as u64;
        self.held.clear();
        Ok(())
    }
}

impl io::Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(buf);
        if self.held.len() >= self.memory {
            self.spill()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A new temporary file, read and written, its name removed at once (where the system
/// allows it; elsewhere it stays until removed by hand).
fn spool_file() -> io::Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for _ in 0..16 {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".tfreq-spool-{}-{n}-{stamp}", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("a temporary file in {}: {e}", dir.display()),
                ));
            }
        }
    }
    Err(io::Error::other(format!(
        "a temporary file in {}: every name tried is taken",
        dir.display()
    )))
}
