//! A pseudo-terminal for tests that need one (progress display, writes into a
//! character device), opened with the C library's calls.
#![allow(dead_code)]

use std::ffi::CStr;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

/// Both ends of a pseudo-terminal: the master (read what is written to the terminal)
/// and the slave (the terminal a program sees), in raw mode (no `\n` → `\r\n`), 100
/// columns wide.
pub struct Pty {
    pub master: File,
    pub slave: File,
    pub slave_path: PathBuf,
}

pub fn open() -> Pty {
    // SAFETY: plain libc calls on descriptors this function owns; every result is checked.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = OwnedFd::from_raw_fd(m);
        assert_eq!(libc::grantpt(m), 0, "grantpt");
        assert_eq!(libc::unlockpt(m), 0, "unlockpt");
        let mut buf = [0 as libc::c_char; 256];
        assert_eq!(
            libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()),
            0,
            "ptsname_r"
        );
        let slave_path = PathBuf::from(CStr::from_ptr(buf.as_ptr()).to_str().unwrap());
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&slave_path)
            .expect("open pty slave");
        let fd = slave.as_raw_fd();
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(fd, &mut t), 0, "tcgetattr");
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(fd, libc::TCSANOW, &t), 0, "tcsetattr");
        let ws = libc::winsize {
            ws_row: 24,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        assert_eq!(libc::ioctl(fd, libc::TIOCSWINSZ, &ws), 0, "TIOCSWINSZ");
        Pty {
            master: File::from(master),
            slave,
            slave_path,
        }
    }
}

/// Reads the master end on a thread until `want` bytes came, or every slave closed.
pub fn read_master(master: File, want: Option<usize>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut master = master;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if want.is_some_and(|w| got.len() >= w) {
                break;
            }
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break, // EIO once the last slave descriptor closes
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        got
    })
}
