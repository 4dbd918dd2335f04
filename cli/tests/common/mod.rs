//! Helpers of the command line's test binaries (`cli/tests/*/main.rs` load this file with
//! `#[path]`): the repository's data files and the rest of `tests/common/` (shared with the
//! library's tests), and running the built `tfreq` from the repository's root, so that the
//! paths the tests name (`tests/data/...`) and the golden outputs are those of a user there.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
mod shared;

pub use shared::*;

use serde_json::Value;
use std::time::{Duration, Instant};

/// Waits (at most `limit`, polling every 10 ms) until `cond` holds; whether it did. For a
/// test that needs something to have happened elsewhere (a peer wrote, a process got
/// somewhere) before it goes on: a fixed sleep would hope for it, too short on a loaded
/// machine and too long on an idle one.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

/// `tfreq convert - --wire tfrecord -o DIR/out/warmup.tfrecord` reading a pipe that stays
/// open: two requests of a log are written to it, then nothing, so the run waits for more
/// with its temporary output in `DIR/out` for as long as the caller likes. A signal test
/// needs no input so large that the run is still going when the signal lands (and no
/// retry when it was not). Returns the child, the pipe's writing end (dropping it ends the
/// input) and `DIR/out`, once the temporary file is there.
pub fn convert_held_open(
    dir: &std::path::Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::path::PathBuf,
) {
    use std::io::Write;
    use std::process::Stdio;
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tfreq"))
        .args(["convert", "-", "--wire", "tfrecord", "-o"])
        .arg(out_dir.join("warmup.tfrecord"))
        // A core dump, if any, goes to the test's directory.
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut req = tfreq::TFRequest::new("serving_default");
    req.add_feed("x", &[2], tfreq::DType::Float, vec![1.0f32, 2.0])
        .unwrap();
    req.add_fetch("y");
    let log = tfreq::formats::encode_predict_log(&req.to_tf_serving_bytes("m").unwrap());
    let mut records = Vec::new();
    tfreq::formats::write_record(&mut records, &log);
    tfreq::formats::write_record(&mut records, &log);
    input.write_all(&records).unwrap();
    input.flush().unwrap();
    let appeared = wait_until(Duration::from_secs(60), || {
        std::fs::read_dir(&out_dir).unwrap().next().is_some()
    });
    assert!(
        appeared,
        "no temporary output appeared in {}",
        out_dir.display()
    );
    (child, input, out_dir)
}

/// The built `tfreq`, run from the repository's root.
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_tfreq"));
    c.current_dir(root());
    c
}

/// The `tfreq` binary, colour off, run from the repository's root.
pub fn tfreq() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("tfreq").unwrap();
    c.env("NO_COLOR", "1").current_dir(root());
    c
}
/// A finished command's exit code, stdout and stderr, for an assertion's message.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// What a `tfreq` run gave.
pub struct Run {
    pub code: i32,
    pub out: String,
    pub err: String,
}

/// Runs `tfreq` with these arguments.
pub fn run(args: &[&str]) -> Run {
    let o = tfreq().args(args).output().unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs `tfreq` with these arguments: (exit code, stdout, stderr).
pub fn run3(args: &[&str]) -> (i32, String, String) {
    let r = run(args);
    (r.code, r.out, r.err)
}

/// Runs `tfreq ... --format json`: the exit code and the document.
pub fn json(args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let r = run(&a);
    let v: Value = serde_json::from_str(&r.out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", r.out, r.err));
    (r.code, v)
}

/// Runs `tfreq ARGS` (standard input from `stdin` when given, the output thrown away):
/// its exit code and peak resident set in KiB, its `VmHWM` (/proc/PID/status) read every
/// 2 ms until it exits. Not `ru_maxrss`:
/// a child spawned as `Command` spawns it (posix_spawn: the child shares the parent's
/// memory until it execs) is charged at its exec with the parent's own peak
/// (`exec_mmap` in <https://github.com/torvalds/linux/blob/master/fs/exec.c>), that of
/// the test process, which the other tests running in it raise. `VmHWM` is the new
/// program's alone; it only grows, so a read misses no more than the last 2 ms.
pub fn own_peak_kib(args: &[&str], stdin: Option<&std::path::Path>) -> (i32, u64) {
    let input = match stdin {
        Some(p) => std::process::Stdio::from(std::fs::File::open(p).unwrap()),
        None => std::process::Stdio::null(),
    };
    // Reaped by waitpid below.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_tfreq"))
        .args(args)
        .stdin(input)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (mut status, mut peak) = (0, 0);
    loop {
        // SAFETY: polls our own child; `status` outlives the call.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "waitpid");
        let hwm = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                let line = s.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
                line.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            });
        peak = peak.max(hwm.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(peak > 0, "no VmHWM read of tfreq {args:?}");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    (code, peak)
}
