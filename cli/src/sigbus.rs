//! The command's answer to a mapped input shrinking under it.
//!
//! The library memory-maps large files only when asked (`tfreq::ReadOptions::
//! map_large_files`, an `unsafe fn`: if another process truncates a mapped file, reading
//! the lost pages raises `SIGBUS`). The command asks, for speed and memory on gigabyte
//! logs, and so takes on the signal: [`read_options`] installs, once, a handler that
//! prints which files were mapped and exits with status 2, instead of the process dying
//! from the signal (`cli/tests/cli/cli_outputs.rs`,
//! `a_mapped_file_truncated_under_us_is_exit_2_not_sigbus`).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use tfreq::{LOG_MAP_THRESHOLD, MAP_THRESHOLD, ReadOptions};

/// The files that may be mapped, and the message the handler prints (leaked, so the
/// handler reads it without locking or allocating).
static MAPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());
static MESSAGE: AtomicPtr<&'static [u8]> = AtomicPtr::new(std::ptr::null_mut());

/// Options that read `paths` under `max_size`, mapping the large regular files among
/// them, with the handler installed and those files named in its message.
pub fn read_options<'a>(max_size: u64, paths: impl IntoIterator<Item = &'a Path>) -> ReadOptions {
    let opts = ReadOptions::default().max_size(max_size);
    if !crate::process::handlers() {
        // Not this command's process to install a SIGBUS handler in: read, never map.
        return opts;
    }
    if !cfg!(unix) {
        // Windows does not let a mapped file be truncated: nothing to guard.
        // SAFETY: see above.
        return unsafe { opts.map_large_files() };
    }
    // A TFRecord log is mapped from the lower threshold (`keys`).
    let from = MAP_THRESHOLD.min(LOG_MAP_THRESHOLD);
    let large: Vec<String> = paths
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() >= from))
        .map(|p| tfreq::escape(&p.display().to_string()))
        .collect();
    if large.is_empty() {
        return opts;
    }
    remember(large);
    install();
    // SAFETY: the handler installed above turns a SIGBUS from a truncated mapping into
    // an error message and exit status 2; a file rewritten in place while it is read is
    // read as it is, as `cat` would.
    unsafe { opts.map_large_files() }
}

fn remember(files: Vec<String>) {
    let mut mapped = MAPPED.lock().unwrap_or_else(|p| p.into_inner());
    let before = mapped.len();
    for f in files {
        if !mapped.contains(&f) {
            mapped.push(f);
        }
    }
    if mapped.len() == before {
        return;
    }
    let msg = format!(
        "tfreq: error: {}: an input shrank while it was being read (another process truncated or rewrote it)\n",
        mapped.join(", ")
    );
    let leaked: &'static [u8] = Box::leak(msg.into_bytes().into_boxed_slice());
    MESSAGE.store(Box::into_raw(Box::new(leaked)), Ordering::SeqCst);
}

#[cfg(unix)]
fn install() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
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

#[cfg(not(unix))]
fn install() {}

/// The handler: print the message, exit with status 2.
#[cfg(unix)]
extern "C" fn on_sigbus(_sig: libc::c_int) {
    let p = MESSAGE.load(Ordering::SeqCst);
    // SAFETY: the pointer is null or points to leaked bytes (see `remember`).
    unsafe {
        if !p.is_null() {
            let msg: &[u8] = *p;
            libc::write(2, msg.as_ptr().cast(), msg.len());
        }
        libc::_exit(2);
    }
}
