//! `-o` as `cp` users expect: devices, FIFOs and `/dev/stdout` are written
//! into, never replaced; links are followed; new files get `0666 & !umask`, replaced
//! files keep their mode and owner; a missing directory is named; an output that is an
//! input is refused; SIGINT leaves no temporary file; and every input is read under the
//! `--max-size` cap.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tfreq() -> Command {
    crate::common::bin()
}

fn data(rel: &str) -> PathBuf {
    crate::common::data_dir().join(rel)
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    tfreq().args(args).output().expect("tfreq runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap()
}

/// The bytes `convert spec_vector.bin --wire tf-serving` writes to standard output.
fn expected_bytes() -> Vec<u8> {
    let o = tfreq()
        .arg("convert")
        .arg(data("eas/spec_vector.bin"))
        .args(["--wire", "tf-serving", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!o.stdout.is_empty());
    o.stdout
}

fn convert_to(out: &Path) -> Output {
    tfreq()
        .arg("convert")
        .arg(data("eas/spec_vector.bin"))
        .args(["--wire", "tf-serving", "-o"])
        .arg(out)
        .output()
        .unwrap()
}

/// No temporary file of ours is left in `dir`.
fn assert_no_temporary(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name();
        let name = name.to_string_lossy();
        assert!(
            !name.starts_with(".tfreq-") && !name.starts_with(".tmp"),
            "temporary file left: {name}"
        );
    }
}

/// A character device at `name` in `dir` for device `major:minor`: a node made with mknod(2)
/// where the tests run as root, else (no mknod without root) a link to `target`, the same
/// device, which `-o` follows. Either way a writer that replaced what it found by a new file
/// fails the checks below.
fn device_in(dir: &Path, name: &str, (major, minor): (u32, u32), target: &Path) -> PathBuf {
    let node = dir.join(name);
    if is_root() {
        // SAFETY: mknod with a valid C string and mode.
        let r = unsafe {
            libc::mknod(
                cstr(&node).as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(major, minor),
            )
        };
        assert_eq!(r, 0, "mknod: {}", std::io::Error::last_os_error());
    } else {
        std::os::unix::fs::symlink(target, &node).unwrap();
    }
    node
}

/// `node` is still what `device_in` made: a device node, or a link to the device `rdev`.
fn assert_still_the_device(node: &Path, rdev: u64) {
    let link = std::fs::symlink_metadata(node).unwrap();
    assert_eq!(
        link.file_type().is_symlink(),
        !is_root(),
        "replaced by {link:?}"
    );
    let meta = std::fs::metadata(node).unwrap();
    assert!(meta.file_type().is_char_device(), "replaced by {meta:?}");
    assert_eq!(meta.rdev(), rdev);
}

#[test]
fn character_device_is_written_into_and_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    // A node for device 5:0, "the controlling terminal of the process that opens it",
    // run with a pseudo-terminal as its controlling terminal: the bytes written to the
    // node can be read back from the master. (A node for the pty slave itself would not
    // do: a devpts instance refuses nodes made outside it.) Without root: a link to the
    // slave itself.
    let p = crate::common::pty::open();
    let node = device_in(dir.path(), "tty", (5, 0), &p.slave_path);
    let rdev = std::fs::metadata(&node).unwrap().rdev();
    let want = expected_bytes();
    let reader = crate::common::pty::read_master(p.master, Some(want.len()));
    let mut c = tfreq();
    c.arg("convert")
        .arg(data("eas/spec_vector.bin"))
        .args(["--wire", "tf-serving", "-o"])
        .arg(&node)
        .stdin(p.slave.try_clone().unwrap());
    // SAFETY: setsid and ioctl are async-signal-safe; they make standard input (the pty
    // slave) the child's controlling terminal.
    unsafe {
        c.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_still_the_device(&node, rdev);
    drop(p.slave);
    let got = reader.join().unwrap();
    assert_eq!(got, want, "the device received other bytes");
    assert_no_temporary(dir.path());

    // A null device (1:3, the memory devices' null): written into, still a device, and
    // nothing else appears beside it.
    let null = device_in(dir.path(), "null", (1, 3), Path::new("/dev/null"));
    let o = convert_to(&null);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_still_the_device(&null, libc::makedev(1, 3));
    assert_no_temporary(dir.path());
}

/// Linux's `/dev/full` (every write fails with ENOSPC).
#[test]
#[cfg(target_os = "linux")]
fn disk_full_is_exit_2_with_the_reason() {
    let o = convert_to(Path::new("/dev/full"));
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("/dev/full: No space left on device"), "{e}");
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn fifo_is_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(cstr(&fifo).as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = convert_to(&fifo);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap(), expected_bytes());
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_no_temporary(dir.path());
}

#[test]
fn dev_stdout_writes_to_standard_output() {
    let o = convert_to(Path::new("/dev/stdout"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, expected_bytes());
}

#[test]
fn symlink_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let target = dir.path().join("real/warmup.bin");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.bin");
    std::os::unix::fs::symlink("real/warmup.bin", &link).unwrap();
    let o = convert_to(&link);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), expected_bytes());
    // A dangling link: its target is created.
    let dangling = dir.path().join("dangling.bin");
    std::os::unix::fs::symlink("real/new.bin", &dangling).unwrap();
    let o = convert_to(&dangling);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read(dir.path().join("real/new.bin")).unwrap(),
        expected_bytes()
    );
}

fn convert_with_umask(out: &Path, mask: libc::mode_t) -> Output {
    let mut c = tfreq();
    c.arg("convert")
        .arg(data("eas/spec_vector.bin"))
        .args(["--wire", "tf-serving", "-o"])
        .arg(out);
    // SAFETY: umask is async-signal-safe and touches only the child.
    unsafe {
        c.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
    c.output().unwrap()
}

#[test]
fn new_files_get_0666_under_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    for (mask, mode) in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)] {
        let out = dir.path().join(format!("new-{mask:03o}.bin"));
        let o = convert_with_umask(&out, mask);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let got = std::fs::metadata(&out).unwrap().permissions().mode() & 0o7777;
        assert_eq!(got, mode, "umask {mask:03o}: mode {got:03o}");
    }
}

#[test]
fn replaced_files_keep_mode_and_owner() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warmup.bin");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let owner = if is_root() {
        std::os::unix::fs::chown(&out, Some(1234), Some(5678)).unwrap();
        (1234, 5678)
    } else {
        let m = std::fs::metadata(&out).unwrap();
        (m.uid(), m.gid())
    };
    // The umask would give 0600 to a new file: the old mode must win.
    let o = convert_with_umask(&out, 0o077);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let m = std::fs::metadata(&out).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o640);
    assert_eq!((m.uid(), m.gid()), owner);
    assert_eq!(std::fs::read(&out).unwrap(), expected_bytes());
}

#[test]
fn missing_directory_is_named_and_no_temporary_path_shows() {
    let dir = tempfile::Builder::new().prefix("t").tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let o = convert_to(&missing.join("out.bin"));
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}: no such directory", missing.display())),
        "{e}"
    );
    assert!(!e.contains(".tmp") && !e.contains(".tfreq-"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn output_onto_an_input_is_refused_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.bin");
    let original = std::fs::read(data("eas/spec_vector.bin")).unwrap();
    std::fs::write(&x, &original).unwrap();
    let alias = dir.path().join("alias.bin");
    std::os::unix::fs::symlink("x.bin", &alias).unwrap();
    for (cmd, out) in [("convert", &x), ("scrub", &x), ("convert", &alias)] {
        let mut c = tfreq();
        c.arg(cmd).arg(&x).arg("-o").arg(out);
        if cmd == "convert" {
            c.args(["--wire", "tf-serving"]);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        assert!(stderr(&o).contains("--overwrite-input"), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(&x).unwrap(),
            original,
            "{cmd} touched the input"
        );
    }
    let o = tfreq()
        .arg("scrub")
        .arg(&x)
        .arg("-o")
        .arg(&x)
        .arg("--overwrite-input")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(std::fs::read(&x).unwrap(), original, "scrubbed in place");
}

/// A SIGINT while `convert` writes removes its temporary output and ends the run as
/// SIGINT does (the run is held mid-log on an open pipe, so the signal always lands
/// while the temporary file exists).
#[test]
fn sigint_during_a_convert_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, input, out_dir) = crate::common::convert_held_open(dir.path());
    // SAFETY: kill with a pid of our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    drop(input);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Under an address-space limit that holds the cap but not twice it, reading
/// `/dev/zero` ends in the size limit, not in "out of memory": the buffer grows as data
/// arrives and never past the cap (the old `read_to_end` doubled to 512 MiB for the
/// 256 MiB + 1st byte).
#[cfg(target_os = "linux")]
#[test]
fn a_device_past_the_cap_is_the_size_limit_under_ulimit_v() {
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" inspect --max-size 256M /dev/zero")
        .arg(env!("CARGO_BIN_EXE_tfreq"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("/dev/zero: input is larger than the size limit of 268,435,456 bytes"),
        "{e}"
    );
    assert!(!e.contains("out of memory"), "{e}");
    // keys reads standard input that is no TFRecord the same way.
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 400000 && exec \"$0\" keys --max-size 256M - < /dev/zero")
        .arg(env!("CARGO_BIN_EXE_tfreq"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("input is larger than the size limit of 268,435,456 bytes"),
        "{e}"
    );
    assert!(!e.contains("out of memory"), "{e}");
}

#[test]
fn devices_and_pipes_are_read_under_the_size_cap() {
    let o = tfreq()
        .args(["inspect", "--max-size", "1M", "/dev/zero"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("/dev/zero: input is larger than the size limit of 1,048,576 bytes"),
        "{e}"
    );
    // Standard input too.
    let mut child = tfreq()
        .args(["inspect", "--max-size", "10", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(&[0u8; 4096]);
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("over the size limit")
            || stderr(&o).contains("larger than the size limit"),
        "{}",
        stderr(&o)
    );
    // A regular file over the cap is refused from its length.
    let o = run(&[
        "inspect".as_ref(),
        "--max-size".as_ref(),
        "40".as_ref(),
        data("eas/spec_vector.bin").as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("input is 45 bytes, over the size limit of 40 bytes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_missing_file_named_broken_pipe_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = tfreq()
        .current_dir(dir.path())
        .args(["inspect", "Broken pipe.bin"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // The file is named once.
    assert_eq!(
        stderr(&o).trim_end(),
        "tfreq: error: Broken pipe.bin: No such file or directory (os error 2)"
    );
}

#[test]
fn a_closed_stdout_ends_quietly() {
    // `head -c 1` closes the pipe after one byte; the rest of the output hits EPIPE.
    let mut child = tfreq()
        .arg("inspect")
        .arg(data("eas/seed_warm_up.bin"))
        .args(["-f", "json", "--values", "all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    use std::io::Read;
    out.read_exact(&mut one).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn a_mapped_file_truncated_under_us_is_exit_2_not_sigbus() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("shrinks.bin");
    for attempt in 0..3 {
        std::fs::write(&input, crate::common::bigreq::big_request(40_000_000)).unwrap(); // 160 MB: mapped
        let mut child = tfreq()
            .args(["inspect", "--format", "text"])
            .arg(&input)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the file is mapped in the child, then cut it to nothing.
        let maps = format!("/proc/{}/maps", child.id());
        let name = input.display().to_string();
        let start = std::time::Instant::now();
        let mut mapped = false;
        while start.elapsed() < std::time::Duration::from_secs(60) {
            if std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(&name)) {
                mapped = true;
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if mapped {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&input)
                .unwrap()
                .set_len(0)
                .unwrap();
        }
        let o = child.wait_with_output().unwrap();
        if o.status.code() == Some(0) {
            println!("attempt {attempt}: finished before the truncation, again");
            continue;
        }
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            o.status.signal(),
            None,
            "killed by a signal: {:?}",
            o.status
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains(&format!("{name}: an input shrank while it was being read")),
            "{}",
            stderr(&o)
        );
        return;
    }
    panic!("inspect finished before the truncation three times");
}

/// `convert ... -o out` run as `uid` (dropping root in the child when the test runs as
/// root; as this user otherwise), or `None` when that user cannot run the binary.
fn convert_as(uid: u32, out: &Path) -> Option<Output> {
    let mut c = tfreq();
    c.arg("convert")
        .arg(data("eas/spec_vector.bin"))
        .args(["--wire", "tf-serving", "-o"])
        .arg(out);
    if is_root() {
        // SAFETY: setgroups, setgid and setuid are async-signal-safe and change only
        // the child.
        unsafe {
            c.pre_exec(move || {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(uid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let o = c.output().ok()?;
    // The binary or the input may not be reachable by that user on this machine.
    if stderr(&o).contains(&*data("eas/spec_vector.bin").display().to_string())
        && !stderr(&o).contains(&*out.display().to_string())
    {
        return None;
    }
    Some(o)
}

/// `-o` onto a file the shell's `>` could not write (read-only; another user's
/// file in a world-writable folder) was once replaced by the atomic rename, and the other
/// user's file changed owner. It is refused (exit 2, the file untouched); another user's
/// file we may write is written in place, keeping its owner, as `>` does; root writes a
/// read-only file, as `>` does, keeping its owner.
#[test]
fn outputs_the_shell_could_not_write_are_refused() {
    let (me, other) = if is_root() {
        (65534u32, 1234u32) // nobody, and someone else
    } else {
        // SAFETY: geteuid has no preconditions.
        (unsafe { libc::geteuid() }, 0)
    };
    let dir = tempfile::tempdir().unwrap();
    // A world-writable folder, not sticky: the rename was allowed there.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let make = |name: &str, owner: u32, mode: u32| {
        let p = dir.path().join(name);
        std::fs::write(&p, b"old").unwrap();
        if is_root() {
            std::os::unix::fs::chown(&p, Some(owner), Some(owner)).unwrap();
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    };
    let read_only = make("read_only.bin", me, 0o444);
    let o = convert_as(me, &read_only).unwrap_or_else(|| {
        panic!(
            "uid {me} cannot run the binary or read the input: as root, this test runs \
             `tfreq` as the user nobody, which needs a checkout every user can read"
        )
    });
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("read_only.bin: Permission denied")
            && stderr(&o).contains("as with the shell's >; left as it is"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&read_only).unwrap(), b"old");
    let m = std::fs::metadata(&read_only).unwrap();
    assert_eq!((m.uid(), m.permissions().mode() & 0o777), (me, 0o444));
    assert_no_temporary(dir.path());
    if !is_root() {
        return; // the cases below need a file of another user
    }
    // Another user's file, 0644: not ours to write.
    let theirs = make("theirs.bin", other, 0o644);
    let o = convert_as(me, &theirs).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&theirs).unwrap(), b"old");
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), other);
    // Another user's file, 0666: written in place, still theirs.
    let shared = make("shared.bin", other, 0o666);
    let o = convert_as(me, &shared).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&shared).unwrap(), expected_bytes());
    let m = std::fs::metadata(&shared).unwrap();
    assert_eq!((m.uid(), m.permissions().mode() & 0o777), (other, 0o666));
    // Root writes a read-only file, as `>` does, and it keeps its owner and mode.
    let o = convert_to(&read_only);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&read_only).unwrap(), expected_bytes());
    let m = std::fs::metadata(&read_only).unwrap();
    assert_eq!((m.uid(), m.permissions().mode() & 0o777), (me, 0o444));
    assert_no_temporary(dir.path());
}
