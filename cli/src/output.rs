//! Writing outputs the way `cp` users expect ([`write_atomic`]).
//!
//! A regular file (new, or existing) is written to a temporary file in the same directory
//! and renamed over the target, so a reader never sees half a file and a failed run leaves
//! the old file in place. A new file gets `0666 & !umask` like any file `cp` or a shell
//! creates; a file that is replaced keeps its permission bits and (where the process may
//! set them) its owner and group. An existing file the shell's `>` could not write (a
//! read-only file, another user's file in a world-writable folder) is refused and left
//! as it is; another user's file that this (non-root) process may write is written into
//! in place, as `>` does, so it keeps its owner (root gives the replacement the old
//! owner instead). A symbolic link is followed and its target replaced; the
//! link stays. Anything that is not a regular file — a character device (`/dev/null`,
//! `/dev/full`), a FIFO, `/dev/stdout` — is opened and written into, never replaced. On
//! `SIGINT`, `SIGTERM`, `SIGHUP` or `SIGQUIT` the temporary file is removed before the
//! process ends with that signal. Error messages name the output or its directory, never the temporary
//! file. Inputs are never opened for writing.
//!
//! This lives in the command line, not the library: removing temporaries on a signal
//! means installing signal handlers and ending the process, which is the program's
//! decision, not a library's.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use tfreq::Error;

fn io_err(path: &Path, source: io::Error) -> Error {
    tfreq::ErrorDetail::Io {
        path: path.display().to_string(),
        source,
    }
    .into()
}

/// Writes `data` to `path`: `-` (and `/dev/stdout`) is standard output; the rest is
/// described in the module documentation (atomic replacement of regular files, kept
/// modes, links followed, devices and FIFOs written into).
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, &mut |w| {
        w.write_all(data).map_err(|e| io_err(path, e))
    })
}

/// What writes an output as it is made: given the destination, it writes everything
/// or fails (an error from the writer or from making the data).
pub type Produce<'a> = dyn FnMut(&mut dyn Write) -> Result<(), Error> + 'a;

/// [`write_atomic`] for output made as it is written (a log converted record by
/// record): `produce` writes it. When it fails, a replaced regular file is left as it
/// was (the temporary is removed); a device, FIFO or standard output has what was
/// written before the failure.
pub fn write_atomic_with(path: &Path, produce: &mut Produce) -> Result<(), Error> {
    if path == Path::new("-") || path == Path::new("/dev/stdout") {
        // Our own descriptor: reopening /dev/stdout would start at offset 0 and lose
        // O_APPEND when the shell redirected with `>>`.
        let mut out = io::BufWriter::new(io::stdout().lock());
        produce(&mut out)?;
        return out.flush().map_err(|e| io_err(path, e));
    }
    if path == Path::new("/dev/stderr") {
        let mut out = io::stderr().lock();
        produce(&mut out)?;
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
            ));
        }
        Some(m) if !m.is_file() => return write_in_place(path, &target, produce),
        Some(m) => {
            // What the shell's `>` could not write is not replaced by a rename either
            // (a read-only file, another user's file in a world-writable folder:
            // cli/tests/cli/cli_outputs.rs): opening it for writing, without truncating, asks the kernel
            // exactly what `>` asks (mode bits, ACLs, root's override, a read-only
            // file system, the immutable flag).
            if let Err(e) = std::fs::OpenOptions::new().write(true).open(&target) {
                return Err(io_err(
                    path,
                    io::Error::new(
                        e.kind(),
                        format!(
                            "{e}: not writable by this user, as with the shell's >; left as it is"
                        ),
                    ),
                ));
            }
            if owned_by_another(m) {
                // We may write it but not give a replacement its owner: write into it,
                // as `>` does, so it keeps its owner (not atomic, as `>` is not).
                return write_over(path, &target, produce);
            }
        }
        None => {}
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
            ));
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
            ));
        }
        Err(e) => return Err(io_err(&dir, e)),
    }
    let tmp = TempOutput::create(&dir).map_err(|e| io_err(path, e))?;
    tmp.finish(path, produce, existing.as_ref(), &target)
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
fn write_in_place(path: &Path, target: &Path, produce: &mut Produce) -> Result<(), Error> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|e| io_err(path, e))?;
    let mut w = io::BufWriter::new(f);
    produce(&mut w)?;
    w.flush().map_err(|e| io_err(path, e))
}

/// Writes over an existing regular file in place (truncating it), as the shell's `>`.
fn write_over(path: &Path, target: &Path, produce: &mut Produce) -> Result<(), Error> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(target)
        .map_err(|e| io_err(path, e))?;
    let mut w = io::BufWriter::new(f);
    produce(&mut w)?;
    let f = w.into_inner().map_err(|e| io_err(path, e.into_error()))?;
    f.sync_all().map_err(|e| io_err(path, e))
}

/// The file belongs to another user and this process cannot give a file away (it is
/// not root): a replacement by rename would change its owner.
#[cfg(unix)]
fn owned_by_another(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    me != 0 && m.uid() != me
}

#[cfg(not(unix))]
fn owned_by_another(_m: &std::fs::Metadata) -> bool {
    false
}

/// Temporary files being written, removed by the signal handler.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary output file, registered for removal on SIGINT/SIGTERM/SIGHUP/SIGQUIT while it
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
        path: &Path,
        produce: &mut Produce,
        existing: Option<&std::fs::Metadata>,
        target: &Path,
    ) -> Result<(), Error> {
        // On failure `self` is dropped, which removes the temporary.
        {
            let mut w = io::BufWriter::new(&mut self.file);
            produce(&mut w)?;
            w.flush().map_err(|e| io_err(path, e))?;
        }
        let io = |e| io_err(path, e);
        if let Some(m) = existing {
            keep_mode_and_owner(self.file.as_file(), m).map_err(io)?;
        }
        self.file.as_file().sync_all().map_err(io)?;
        self.file.persist(target).map(drop).map_err(|e| io(e.error))
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

/// Set by a command that handles SIGINT and SIGTERM itself and ends only after its
/// writes are complete (`tfreq record`): the cleanup thread then leaves them alone.
static DEFERRED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How many SIGINT and SIGTERM a deferring program ([`defer_signals`]) handles itself:
/// the next one removes the temporaries and ends the process at once.
#[cfg(unix)]
const DEFERRED_SIGNALS: u32 = 2;

/// Says that the program ends itself on its first two SIGINT or SIGTERM, after finishing
/// any write under way (so no temporary file is left): the cleanup thread then ignores
/// them. A third one, SIGHUP or SIGQUIT still remove the temporaries and end the process
/// (an earlier complete output stays as it was).
#[cfg(feature = "net")]
pub fn defer_signals() {
    DEFERRED.store(true, std::sync::atomic::Ordering::SeqCst);
    install_cleanup();
}

/// Installs, once, the thread that removes pending temporary files on SIGINT, SIGTERM,
/// SIGHUP or SIGQUIT and then ends the process as that signal would have.
fn install_cleanup() {
    if !crate::process::handlers() {
        return;
    }
    #[cfg(unix)]
    {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
            let Ok(mut signals) =
                signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
            else {
                return;
            };
            let _ = std::thread::Builder::new()
                .name("tfreq-signals".into())
                .spawn(move || {
                    let mut deferred = 0;
                    for sig in signals.forever() {
                        if (sig == SIGINT || sig == SIGTERM)
                            && DEFERRED.load(std::sync::atomic::Ordering::SeqCst)
                        {
                            deferred += 1;
                            if deferred <= DEFERRED_SIGNALS {
                                continue;
                            }
                        }
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
