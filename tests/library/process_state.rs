//! The library leaves its host process alone (a Python interpreter, a server): reading a file larger than the
//! mapping threshold installs no signal handler, copies the file unless the caller asked
//! for a mapping, and counting a log does the same.

use std::io::{Seek, SeekFrom, Write};

#[cfg(unix)]
fn sigbus_handler() -> libc::sighandler_t {
    // SAFETY: a query (null new action) of the current disposition into a zeroed struct.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        assert_eq!(libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old), 0);
        old.sa_sigaction
    }
}

/// A 100 MB file whose first byte is `b'a'`.
fn big_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let p = dir.path().join("big.bin");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(b"a").unwrap();
    f.set_len(100 << 20).unwrap();
    p
}

fn rewrite_first_byte(p: &std::path::Path) {
    let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.write_all(b"b").unwrap();
    f.sync_all().unwrap();
}

#[test]
fn reading_100_mb_installs_no_handler_and_copies() {
    let dir = tempfile::tempdir().unwrap();
    let p = big_file(&dir);
    // Rust's runtime has its own SIGBUS handler (stack-overflow detection): the one in
    // place now must be the one in place after reading.
    #[cfg(unix)]
    let before = sigbus_handler();

    let bytes = tfreq::read_input(&p).unwrap();
    assert_eq!(bytes.len(), 100 << 20);
    let opts = tfreq::ReadOptions::default();
    let again = tfreq::read_file(&p, &opts).unwrap();
    #[cfg(unix)]
    assert_eq!(sigbus_handler(), before, "reading installed a handler");

    // A copy: the file changing afterwards does not change what was read.
    rewrite_first_byte(&p);
    assert_eq!((bytes[0], again[0]), (b'a', b'a'));

    // A log counted by `scan` the same way (the file is no request: it is set aside,
    // and still no handler is installed).
    let cov = tfreq::scan::count(
        &[p.as_path()],
        &tfreq::formats::InputOptions::new().read_options(opts),
        false,
    )
    .counts;
    assert_eq!(cov.unreadable.len(), 1);
    #[cfg(unix)]
    assert_eq!(sigbus_handler(), before);
}

#[test]
fn mapping_is_the_callers_choice() {
    let dir = tempfile::tempdir().unwrap();
    let p = big_file(&dir);
    #[cfg(unix)]
    let before = sigbus_handler();
    // SAFETY: this test rewrites the file in place (never truncates it) on purpose, to
    // see that the bytes are the file's own pages.
    let opts = unsafe { tfreq::ReadOptions::default().map_large_files() };
    assert!(opts.maps_large_files());
    let bytes = tfreq::read_file(&p, &opts).unwrap();
    rewrite_first_byte(&p);
    assert_eq!(bytes[0], b'b', "a mapping sees the file change");
    #[cfg(unix)]
    assert_eq!(sigbus_handler(), before, "the library installs no handler");
}
