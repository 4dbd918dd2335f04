//! Reading inputs under a size cap, and writing outputs the way `cp` users expect.
//!
//! **Reading.** Every input — a file, a pipe, a device, `-` for standard input — is read
//! under one size cap ([`DEFAULT_MAX_SIZE`] unless the caller gives another), so
//! `/dev/zero` is refused instead of filling memory. Regular files under
//! [`MAP_THRESHOLD`] are read into memory: a copy of a few megabytes costs less than a
//! mapping and cannot fault. Larger regular files are memory-mapped, so gigabyte logs are
//! never copied; if another process truncates such a file while it is mapped, touching
//! the lost pages raises `SIGBUS`, and a handler installed with the first mapping turns
//! that into an error message naming the mapped files and exit status 2 (instead of the
//! process dying from the signal).
//!
//! **Writing** ([`write_atomic`]). A regular file (new, or existing) is written to a
//! temporary file in the same directory and renamed over the target, so a reader never
//! sees half a file and a failed run leaves the old file in place. A new file gets
//! `0666 & !umask` like any file `cp` or a shell creates; a file that is replaced keeps
//! its permission bits and (where the process may set them) its owner and group. A
//! symbolic link is followed and its target replaced; the link stays. Anything that is
//! not a regular file — a character device (`/dev/null`, `/dev/full`), a FIFO,
//! `/dev/stdout` — is opened and written into, never replaced. On `SIGINT`, `SIGTERM` or
//! `SIGHUP` the temporary file is removed before the process ends with that signal.
//! Error messages name the output or its directory, never the temporary file. Inputs are
//! never opened for writing.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use bytes::Bytes;

use crate::error::{Error, ErrorDetail};

pub use crate::digits::group_digits;

/// The size cap of [`read_input`]: 2 GiB. Callers with other needs use
/// [`read_input_limited`] (the command line's `--max-size`).
pub const DEFAULT_MAX_SIZE: u64 = 2 << 30;

/// Regular files of at least this many bytes (64 MiB) are memory-mapped; smaller ones,
/// and every pipe or device, are read into memory.
pub const MAP_THRESHOLD: u64 = 64 << 20;

fn io_err(path: &Path, source: io::Error) -> Error {
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

/// Reads a whole input under the [`DEFAULT_MAX_SIZE`] cap: a file or `-` for standard
/// input (see the module documentation for when a file is mapped).
///
/// ```
/// let b = tfreq::io::read_input("tests/data/eas/spec_vector.bin".as_ref())?;
/// assert_eq!(b.len(), 45);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn read_input(path: &Path) -> Result<Bytes, Error> {
    read_input_limited(path, DEFAULT_MAX_SIZE)
}

/// Reads a whole input, refusing one of more than `max_size` bytes, whatever it is
/// (regular file, pipe, device or standard input).
///
/// ```
/// let err = tfreq::io::read_input_limited("tests/data/eas/spec_vector.bin".as_ref(), 10)
///     .unwrap_err();
/// assert!(err.to_string().contains("over the size limit of 10 bytes"), "{err}");
/// ```
pub fn read_input_limited(path: &Path, max_size: u64) -> Result<Bytes, Error> {
    if path == Path::new("-") {
        return read_capped(io::stdin().lock(), path, max_size);
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
        return read_capped(&file, path, max_size);
    }
    if meta.len() > max_size {
        return Err(too_large(path, Some(meta.len()), max_size));
    }
    if meta.len() < MAP_THRESHOLD {
        // Small: a copy is cheap and cannot fault if the file changes under us. The cap
        // still applies, for a file that grows while it is read.
        return read_capped(&file, path, max_size);
    }
    guard_mapped(path);
    // SAFETY: the map is read-only and lives as long as the Bytes that own it. If
    // another process truncates the file while it is mapped, reading a lost page raises
    // SIGBUS; `guard_mapped` (above) has installed the handler that reports it and exits
    // with status 2 instead of leaving memory in an undefined state.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_err(path, e))?;
    Ok(Bytes::from_owner(map))
}

fn read_capped(r: impl Read, path: &Path, max_size: u64) -> Result<Bytes, Error> {
    let mut v = Vec::new();
    r.take(max_size.saturating_add(1))
        .read_to_end(&mut v)
        .map_err(|e| io_err(path, e))?;
    if v.len() as u64 > max_size {
        return Err(too_large(path, None, max_size));
    }
    Ok(Bytes::from(v))
}

/// The files mapped so far, and the message the SIGBUS handler prints (leaked, so the
/// handler can read it without locking or allocating).
static MAPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SIGBUS_MESSAGE: std::sync::atomic::AtomicPtr<&'static [u8]> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

#[cfg(unix)]
fn guard_mapped(path: &Path) {
    use std::sync::atomic::Ordering;
    static INSTALL: Once = Once::new();
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let name = path.display().to_string();
    if !mapped.contains(&name) {
        mapped.push(name);
        let msg = format!(
            "tfreq: error: {}: an input shrank while it was being read (another process truncated or rewrote it)\n",
            mapped.join(", ")
        );
        let leaked: &'static [u8] = Box::leak(msg.into_bytes().into_boxed_slice());
        SIGBUS_MESSAGE.store(Box::into_raw(Box::new(leaked)), Ordering::SeqCst);
    }
    INSTALL.call_once(|| {
        // SAFETY: the action only loads an atomic pointer to leaked, immutable bytes,
        // calls write(2) and _exit(2), all async-signal-safe. It never returns, so the
        // faulting access is not retried.
        let _ = unsafe {
            signal_hook::low_level::register(signal_hook::consts::SIGBUS, || {
                let p = SIGBUS_MESSAGE.load(Ordering::SeqCst);
                if !p.is_null() {
                    let msg: &[u8] = *p;
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                }
                signal_hook::low_level::exit(2);
            })
        };
    });
}

#[cfg(not(unix))]
fn guard_mapped(_path: &Path) {
    // Windows does not let a mapped file be truncated: nothing to guard.
    let _ = (&MAPPED, &SIGBUS_MESSAGE);
}

/// Whether two paths name the same existing file (after following links).
///
/// ```
/// let p = std::path::Path::new("tests/data/eas/spec_vector.bin");
/// assert!(tfreq::io::same_file(p, &std::path::Path::new(".").join(p)));
/// assert!(!tfreq::io::same_file(p, "tests/data/eas/faq_prod.bin".as_ref()));
/// ```
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        #[cfg(unix)]
        (Ok(ma), Ok(mb)) => {
            use std::os::unix::fs::MetadataExt;
            ma.dev() == mb.dev() && ma.ino() == mb.ino()
        }
        #[cfg(not(unix))]
        (Ok(_), Ok(_)) => match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        },
        _ => false,
    }
}

/// Writes `data` to `path`: `-` (and `/dev/stdout`) is standard output; the rest is
/// described in the module documentation (atomic replacement of regular files, kept
/// modes, links followed, devices and FIFOs written into).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), Error> {
    if path == Path::new("-") || path == Path::new("/dev/stdout") {
        // Our own descriptor: reopening /dev/stdout would start at offset 0 and lose
        // O_APPEND when the shell redirected with `>>`.
        let mut out = io::stdout().lock();
        out.write_all(data).map_err(|e| io_err(path, e))?;
        return out.flush().map_err(|e| io_err(path, e));
    }
    if path == Path::new("/dev/stderr") {
        let mut out = io::stderr().lock();
        out.write_all(data).map_err(|e| io_err(path, e))?;
        return out.flush().map_err(|e| io_err(path, e));
    }
    let target = follow_links(path).map_err(|e| io_err(path, e))?;
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(path, e)),
    };
    match &existing {
        Some(m) if m.is_dir() => {
            return Err(io_err(
                path,
                io::Error::new(io::ErrorKind::IsADirectory, "is a directory"),
            ))
        }
        Some(m) if !m.is_file() => return write_in_place(path, &target, data),
        _ => {}
    }
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(io_err(
                &dir,
                io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("not a directory (the output {} goes there)", path.display()),
                ),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(io_err(
                &dir,
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "no such directory (the output {} goes there)",
                        path.display()
                    ),
                ),
            ))
        }
        Err(e) => return Err(io_err(&dir, e)),
    }
    let tmp = TempOutput::create(&dir).map_err(|e| io_err(path, e))?;
    tmp.finish(data, existing.as_ref(), &target)
        .map_err(|e| io_err(path, e))
}

/// Resolves a chain of symbolic links (at most 40, as the kernel allows) to the path
/// they end at, which need not exist yet.
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Writes into an existing file that is not a regular file (device, FIFO, socket).
fn write_in_place(path: &Path, target: &Path, data: &[u8]) -> Result<(), Error> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|e| io_err(path, e))?;
    f.write_all(data).map_err(|e| io_err(path, e))?;
    f.flush().map_err(|e| io_err(path, e))
}

/// Temporary files being written, removed by the signal handler.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary output file, registered for removal on SIGINT/SIGTERM/SIGHUP while it
/// exists, and removed on drop (by `NamedTempFile`) if it was not renamed into place.
struct TempOutput {
    file: tempfile::NamedTempFile,
    _registered: Registered,
}

/// A path in [`PENDING`], taken out again on drop.
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        lock_pending().retain(|q| *q != self.0);
    }
}

impl TempOutput {
    fn create(dir: &Path) -> io::Result<TempOutput> {
        install_cleanup();
        let mut b = tempfile::Builder::new();
        b.prefix(".tfreq-");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The mode goes to open(2), so the umask applies as for any new file.
            b.permissions(std::fs::Permissions::from_mode(0o666));
        }
        // Created and registered under the lock, so a signal cannot fall in between: the
        // cleanup thread takes the same lock before it removes anything.
        let mut pending = lock_pending();
        let file = b.tempfile_in(dir).map_err(without_path)?;
        let path = file.path().to_path_buf();
        pending.push(path.clone());
        drop(pending);
        Ok(TempOutput {
            file,
            _registered: Registered(path),
        })
    }

    fn finish(
        mut self,
        data: &[u8],
        existing: Option<&std::fs::Metadata>,
        target: &Path,
    ) -> io::Result<()> {
        self.file.write_all(data)?;
        if let Some(m) = existing {
            keep_mode_and_owner(self.file.as_file(), m)?;
        }
        self.file.as_file().sync_all()?;
        // On failure the returned file is dropped, which removes the temporary.
        self.file.persist(target).map(drop).map_err(|e| e.error)
    }
}

fn lock_pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// tempfile's creation errors name the temporary path; keep only the OS error.
fn without_path(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.kind().to_string()),
    }
}

#[cfg(unix)]
fn keep_mode_and_owner(f: &File, m: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    f.set_permissions(m.permissions())?;
    match std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid())) {
        // Only root may give a file away; an unprivileged user's replacement is theirs,
        // as with any editor that saves by rename.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
        r => r,
    }
}

#[cfg(not(unix))]
fn keep_mode_and_owner(f: &File, m: &std::fs::Metadata) -> io::Result<()> {
    f.set_permissions(m.permissions())
}

/// Installs, once, the thread that removes pending temporary files on SIGINT, SIGTERM
/// or SIGHUP and then ends the process as that signal would have.
fn install_cleanup() {
    #[cfg(unix)]
    {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("tfreq-signals".into())
                .spawn(move || {
                    if let Some(sig) = signals.forever().next() {
                        // The lock stays held until the process ends, so no new
                        // temporary file can be created after this sweep.
                        let mut pending = lock_pending();
                        for p in pending.drain(..) {
                            let _ = std::fs::remove_file(p);
                        }
                        let _ = signal_hook::low_level::emulate_default_handler(sig);
                        std::process::exit(128 + sig);
                    }
                });
        });
    }
}
