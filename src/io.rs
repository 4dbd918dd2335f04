//! Reading inputs under a size cap.
//!
//! Every input — a file, a pipe, a device, `-` for standard input — is read
//! under one size cap ([`DEFAULT_MAX_SIZE`] unless the caller gives another), so
//! `/dev/zero` is refused instead of filling memory. Regular files under
//! [`MAP_THRESHOLD`] are read into memory: a copy of a few megabytes costs less than a
//! mapping and cannot fault. Larger regular files are memory-mapped, so gigabyte logs are
//! never copied; if another process truncates such a file while it is mapped, touching
//! the lost pages raises `SIGBUS`, and a handler installed with the first mapping turns
//! that into an error message naming the mapped files and exit status 2 (instead of the
//! process dying from the signal).
//!
//! The handler is a plain `sigaction(2)` (through `libc`), so reading needs no signal
//! crate. Writing output files atomically is the command line's job (its `output`
//! module), since it installs handlers for `SIGINT` and friends and ends the process.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
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
    // Listed, so that long passes over it can give back pages once read.
    Ok(Bytes::from_owner(crate::par::Mapped::new(map)))
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
        // SAFETY: `on_sigbus` only loads an atomic pointer to leaked, immutable bytes and
        // calls write(2) and _exit(2), all async-signal-safe. It never returns, so the
        // faulting access is not retried. The `sigaction` struct is zeroed (an empty
        // mask, no flags) before the handler is set.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            let _ = libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// The `SIGBUS` handler [`guard_mapped`] installs: print the message, exit with status 2.
#[cfg(unix)]
extern "C" fn on_sigbus(_sig: libc::c_int) {
    let p = SIGBUS_MESSAGE.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: see `guard_mapped`; the pointer is null or points to leaked bytes.
    unsafe {
        if !p.is_null() {
            let msg: &[u8] = *p;
            libc::write(2, msg.as_ptr().cast(), msg.len());
        }
        libc::_exit(2);
    }
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
