//! Limits on every input path, tried as an attacker would: a `--max-size` given holds
//! after inflating and on standard input in every command that streams a log; `keys`
//! and `keys merge` hold their tables under `--max-keys`; merged counts never wrap.
//! Each input is made here; each run is a child `tfreq` whose peak resident set
//! (`wait4`'s `ru_maxrss`) is asserted where the limit is about memory, and which is
//! killed if it outlives its deadline.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use tfreq::formats::encode_predict_log;
use tfreq::formats::write_record;
use tfreq::formats::{Compression, compress};
use tfreq::wire::{put_bytes_field, put_varint_field};

/// What a run of `tfreq` gave.
struct Ran {
    code: i32,
    /// Standard output (the first MiB of it).
    out: String,
    /// Bytes written to standard output in all.
    out_len: u64,
    err: String,
    /// Peak resident set, in KiB.
    peak_kib: u64,
}

/// No run may take longer than this (it is killed, and the test fails): a hang, not a
/// slow machine; the uncapped 200,000-key run of a debug build took over 120 s on two
/// cores shared with other builds.
const DEADLINE: Duration = Duration::from_secs(600);

/// Set in the environment of this test binary run again as [`rusage_helper`]: the
/// directory its files go to.
const HELPER_DIR: &str = "TFREQ_HOSTILE_HELPER_DIR";

/// Runs `tfreq args`, `stdin` written to its standard input (the write may fail once
/// the child has stopped reading: that is the point of a limit).
///
/// The child's peak resident set comes from `wait4`, which reports for a process the
/// high-water mark of every address space it had, including the one it was spawned
/// in: spawned from this test process (by vfork), that would be this process's,
/// hundreds of MB with the other tests' inputs. So `tfreq` is spawned by a small
/// process, this test binary run again as [`rusage_helper`], which writes the child's
/// output, exit status and peak to files.
fn run(args: &[&str], stdin: Option<Vec<u8>>) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    // The helper's name in this test binary: its module path without the crate's.
    let helper_name = concat!(module_path!(), "::rusage_helper")
        .split_once("::")
        .unwrap()
        .1;
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", helper_name, "--test-threads=1", "--quiet"])
        .env(HELPER_DIR, dir.path())
        .env("TFREQ_HOSTILE_ARGS", args.join("\u{1f}"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(mut w) = helper.stdin.take() {
        let _ = w.write_all(&stdin.unwrap_or_default());
    }
    let status = helper.wait().unwrap();
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap_or_default();
    let result = String::from_utf8(read("result")).unwrap();
    assert!(
        status.success() && !result.is_empty(),
        "helper: {status:?} {result}"
    );
    let mut it = result.split_whitespace().map(|v| v.parse::<i64>().unwrap());
    let (code, peak_kib, out_len) = (
        it.next().unwrap() as i32,
        it.next().unwrap() as u64,
        it.next().unwrap() as u64,
    );
    let out = read("out");
    Ran {
        code,
        out: String::from_utf8_lossy(&out[..out.len().min(1 << 20)]).into_owned(),
        out_len,
        err: String::from_utf8_lossy(&read("err")).into_owned(),
        peak_kib,
    }
}

/// Not a test: the small parent of [`run`] (does nothing unless [`HELPER_DIR`] is
/// set). Runs `tfreq` with its standard input, output and error in files, kills it
/// past [`DEADLINE`], and writes its exit code (minus the signal when killed), peak
/// resident set in KiB and output bytes.
#[test]
fn rusage_helper() {
    let Some(dir) = std::env::var_os(HELPER_DIR) else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let args = std::env::var("TFREQ_HOSTILE_ARGS").unwrap();
    let file = |n: &str| std::fs::File::create(dir.join(n)).unwrap();
    // Reaped by wait4 below, which `Child::wait` cannot stand in for (no rusage).
    #[allow(clippy::zombie_processes)]
    let child = crate::common::bin()
        .args(args.split('\u{1f}'))
        .env("NO_COLOR", "1")
        .stdin(Stdio::inherit())
        .stdout(file("out"))
        .stderr(file("err"))
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (done, watch) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if watch.recv_timeout(DEADLINE).is_err() {
            // SAFETY: kill(2) of our own child, not yet reaped (wait4 below reaps it).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; `status` and `usage` outlive the call.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let _ = done.send(());
    watchdog.join().unwrap();
    assert_eq!(r, pid, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    let out_len = std::fs::metadata(dir.join("out")).unwrap().len();
    std::fs::write(
        dir.join("result"),
        format!("{code} {} {out_len}", usage.ru_maxrss),
    )
    .unwrap();
}

/// A TF Serving `PredictRequest` with one `DT_FLOAT [1]` input named `name`.
fn request(name: &str) -> Vec<u8> {
    let mut dim = Vec::new();
    put_varint_field(&mut dim, 1, 1);
    let mut shape = Vec::new();
    put_bytes_field(&mut shape, 2, &dim);
    let mut tensor = Vec::new();
    put_varint_field(&mut tensor, 1, 1); // DT_FLOAT
    put_bytes_field(&mut tensor, 2, &shape);
    put_bytes_field(&mut tensor, 5, &[0, 0, 0, 0]); // float_val, packed
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, name.as_bytes());
    put_bytes_field(&mut entry, 2, &tensor);
    let mut req = Vec::new();
    put_bytes_field(&mut req, 2, &entry); // inputs
    req
}

/// A TFRecord log of `n` predict logs, each request with its own input name (so `n`
/// distinct shape keys), or all with one name.
fn log(n: usize, distinct: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let name = if distinct {
            format!("feed_{i:08}")
        } else {
            "x".to_string()
        };
        write_record(&mut out, &encode_predict_log(&request(&name)));
    }
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

fn assert_refused(r: &Ran, what: &str, limit: &str) {
    assert_eq!(r.code, 2, "{what}: exit {}\nstderr: {}", r.code, r.err);
    assert!(
        r.err.contains(&format!("size limit of {limit} bytes")),
        "{what}: {}",
        r.err
    );
}

/// Row 10: `--max-size 1M` given for a 4 MB log, gzipped, zlib'd and on standard
/// input: refused by every command that reads it, with the limit named; `convert`
/// leaves no output file. (Before: refused as a plain file only.)
#[test]
fn a_max_size_given_holds_after_inflating_and_on_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let plain = log(60_000, false);
    assert!(plain.len() > 2 << 20, "{}", plain.len());
    let gz = compress(&plain, Compression::Gzip).unwrap();
    let zz = compress(&plain, Compression::Zlib).unwrap();
    assert!(gz.len() < 1 << 20 && zz.len() < 1 << 20);
    let gz_file = write(dir.path(), "log.gz", &gz);
    let zz_file = write(dir.path(), "log.zz", &zz);
    let limit = "1,048,576";
    let files = [("gzip", &gz_file), ("zlib", &zz_file)];
    let warmup = dir.path().join("warmup.tfrecord").display().to_string();
    for cmd in [&["inspect"][..], &["keys"], &["warmup", "-o", &warmup]] {
        for (how, f) in files {
            let r = run(&[cmd, &["--max-size", "1M", f]].concat(), None);
            assert_refused(&r, &format!("{cmd:?} of a {how} file"), limit);
        }
        for (how, bytes) in [("plain", &plain), ("gzip", &gz), ("zlib", &zz)] {
            let r = run(
                &[cmd, &["--max-size", "1M", "-"]].concat(),
                Some(bytes.clone()),
            );
            assert_refused(&r, &format!("{cmd:?} of {how} standard input"), limit);
        }
    }
    for (how, bytes) in [("plain", &plain), ("gzip", &gz)] {
        let out = dir.path().join(format!("out-{how}.tfrecord"));
        let o = out.display().to_string();
        let r = run(
            &[
                "convert",
                "--max-size",
                "1M",
                "-",
                "--wire",
                "tfrecord",
                "-o",
                &o,
            ],
            Some(bytes.clone()),
        );
        assert_refused(&r, &format!("convert of {how} standard input"), limit);
        assert!(!out.exists(), "convert left {o}");
    }
    let r = run(
        &[
            "convert",
            "--max-size",
            "1M",
            &gz_file,
            "--wire",
            "tfrecord",
            "-o",
            "-",
        ],
        None,
    );
    assert_refused(&r, "convert of a gzip file", limit);
    // Nothing left beside the outputs (no temporary file).
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "log.gz" && n != "log.zz")
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // Without --max-size, the streaming commands read the whole stream (each record
    // under the default cap): a limit the user did not give is not imposed.
    let r = run(&["keys", "-"], Some(gz.clone()));
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("60,000 requests"), "{}", r.out);
}

/// Row 10, the output side: `inspect --max-size 1M -` of a gzip log of 40 MB stops at
/// the limit, showing less than it shows of a 2.5 MB log; before, it showed every
/// record (about 190 MB of output).
#[test]
fn inspect_of_a_stream_stops_at_the_limit() {
    let plain = log(60_000, false);
    let mut big = Vec::with_capacity(plain.len() * 16);
    for _ in 0..16 {
        big.extend_from_slice(&plain);
    }
    let gz = compress(&big, Compression::Gzip).unwrap();
    let part = run(&["inspect", "-"], Some(plain));
    assert!(part.out_len > 0 && part.code < 2, "{}", part.err);
    let r = run(&["inspect", "--max-size", "1M", "-"], Some(gz));
    assert_refused(&r, "inspect of gzip standard input", "1,048,576");
    assert!(
        r.out_len < part.out_len,
        "{} bytes of output under a 1M cap, {} for a log of {} bytes",
        r.out_len,
        part.out_len,
        big.len() / 16
    );
}

/// Row 11: distinct keys past `--max-keys` (a gzip log of distinct input names, on
/// standard input, as a file, and a plain log walked in parallel parts): exit 2 with
/// an error that names `--max-keys`, no table, and the memory of the keys held so far
/// only.
#[test]
fn keys_past_max_keys_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let n = 40_000;
    let plain = log(n, true);
    let gz = compress(&plain, Compression::Gzip).unwrap();
    let gz_file = write(dir.path(), "distinct.gz", &gz);
    let plain_file = write(dir.path(), "distinct.tfrecord", &plain);
    let cap = 4_000;
    let mut peaks = Vec::new();
    for (what, args, stdin) in [
        ("a gzip file", vec![gz_file.as_str()], None),
        ("gzip standard input", vec!["-"], Some(gz.clone())),
        ("a plain file", vec![plain_file.as_str()], None),
    ] {
        let mut a = vec!["keys", "--max-keys", "4000"];
        a.extend(args);
        let r = run(&a, stdin);
        assert_eq!(r.code, 2, "{what}: {}", r.err);
        assert!(
            r.err.contains("more than 4,000 distinct shape keys") && r.err.contains("--max-keys"),
            "{what}: {}",
            r.err
        );
        assert_eq!(r.out_len, 0, "{what}: {}", r.out);
        peaks.push((what, r.peak_kib));
    }
    // The whole log, uncapped: what its keys cost.
    let all = run(
        &["keys", "--max-keys", "1000000", "-f", "json", &gz_file],
        None,
    );
    assert_eq!(all.code, 0, "{}", all.err);
    assert!(all.out_len > 0);
    for (what, peak) in &peaks {
        eprintln!(
            "{what}: {peak} KiB at the cap of {cap} keys, {} KiB for all {n}",
            all.peak_kib
        );
        assert!(
            peak * 3 < all.peak_kib,
            "{what}: {peak} KiB at the cap of {cap} keys, {} KiB for all {n}",
            all.peak_kib
        );
    }
}

/// The default `--max-keys` keeps `keys` under about 1 GB: what a key costs, measured
/// on a log of 20,000 distinct one-feed keys (peak resident set above that of a log of
/// one key, per key), times the default.
#[test]
fn the_default_key_cap_bounds_the_tables_to_about_a_gigabyte() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000u64;
    let one = write(
        dir.path(),
        "one.gz",
        &compress(&log(n as usize, false), Compression::Gzip).unwrap(),
    );
    let many = write(
        dir.path(),
        "many.gz",
        &compress(&log(n as usize, true), Compression::Gzip).unwrap(),
    );
    for format in ["human", "json"] {
        let base = run(&["keys", "-f", format, &one], None);
        let full = run(&["keys", "-f", format, &many], None);
        assert_eq!((base.code, full.code), (0, 0), "{}{}", base.err, full.err);
        let per_key = (full.peak_kib.saturating_sub(base.peak_kib) * 1024) / n;
        let at_default = per_key * tfreq::analysis::DEFAULT_MAX_KEYS as u64;
        eprintln!("{format}: {per_key} bytes a key, {at_default} bytes at the default cap");
        assert!(
            at_default < 800_000_000,
            "{format}: {per_key} bytes a key: {at_default} bytes at the default of {}",
            tfreq::analysis::DEFAULT_MAX_KEYS
        );
    }
}

/// A summary of `keys` shape keys (one executor key each), every count `count`.
fn summary(keys: usize, count: u64, file: &str) -> String {
    let mut s = format!(
        r#"{{"schema":1,"requests":{},"skipped":0,"executor_keys":{keys},"shape_keys":{keys},"files":[{{"path":"{file}","bytes":1}}],"keys":["#,
        count.saturating_mul(keys as u64)
    );
    for i in 0..keys {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            r#"{{"signature":"serving_default","feeds":["{file}_{i:08}"],"fetches":[],"fetch_all":true,"count":{count},"shapes":[{{"feeds":{{"{file}_{i:08}":{{"dtype":"DT_FLOAT","shape":[1]}}}},"count":{count},"first":{{"file":"{file}","record":{i}}}}}]}}"#
        ));
    }
    s.push_str("]}");
    s
}

/// Row 12: two summaries whose counts are 2^63: an error naming what overflowed, exit 2,
/// no merged summary (before: `"requests": 0`, every count 0, exit 0).
#[test]
fn merged_counts_never_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", summary(1, 1 << 63, "a").as_bytes());
    let b = write(dir.path(), "b.json", summary(1, 1 << 63, "b").as_bytes());
    for format in ["json", "human"] {
        let r = run(&["keys", "merge", "-f", format, &a, &b], None);
        assert_eq!(r.code, 2, "{format}: {}\n{}", r.out, r.err);
        assert!(
            r.err.contains("past the largest count") && r.err.contains("b.json"),
            "{}",
            r.err
        );
        assert_eq!(r.out_len, 0, "{}", r.out);
    }
    // One summary whose own counts add up past 2^64 - 1 is not a summary.
    let two = summary(2, 1 << 63, "c");
    let c = write(dir.path(), "c.json", two.as_bytes());
    let r = run(&["keys", "merge", &c], None);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("add up past 2^64 - 1"), "{}", r.err);
    // Counts that fit still merge.
    let a = write(
        dir.path(),
        "a.json",
        summary(1, (1 << 62) + 1, "a").as_bytes(),
    );
    let b = write(dir.path(), "b.json", summary(1, 1 << 62, "b").as_bytes());
    let r = run(&["keys", "merge", &a, &b], None);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(v["requests"], serde_json::json!((1u64 << 63) + 1));
}

/// Row 13: a summary of more shape keys than `--max-keys` is refused before its keys
/// take memory (a first pass counts them), and a merge that would hold more is an
/// error, not an abort.
#[test]
fn keys_merge_holds_its_tables_under_max_keys() {
    let dir = tempfile::tempdir().unwrap();
    let big = summary(40_000, 1, "big");
    let big_file = write(dir.path(), "big.json", big.as_bytes());
    let small = write(
        dir.path(),
        "small.json",
        summary(1_000, 1, "small").as_bytes(),
    );
    let r = run(&["keys", "merge", "--max-keys", "2000", &big_file], None);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("40,000 shape keys, over the limit of 2,000")
            && r.err.contains("--max-keys"),
        "{}",
        r.err
    );
    // The text is read (and held) once; its keys are not built.
    let text_kib = big.len() as u64 / 1024;
    assert!(
        r.peak_kib < text_kib + 40 * 1024,
        "{} KiB for a {text_kib} KiB summary refused",
        r.peak_kib
    );
    let uncapped = run(&["keys", "merge", "--max-keys", "200000", &big_file], None);
    assert_eq!(uncapped.code, 0, "{}", uncapped.err);
    eprintln!(
        "{} KiB refused, {} KiB merged, a {text_kib} KiB summary",
        r.peak_kib, uncapped.peak_kib
    );
    assert!(
        r.peak_kib * 3 < uncapped.peak_kib,
        "{} KiB refused, {} KiB merged",
        r.peak_kib,
        uncapped.peak_kib
    );
    // Each under the cap, together over it.
    let other = write(
        dir.path(),
        "other.json",
        summary(1_500, 1, "other").as_bytes(),
    );
    let r = run(
        &["keys", "merge", "--max-keys", "2000", &small, &other],
        None,
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("over the limit of 2,000 (--max-keys"),
        "{}",
        r.err
    );
    assert_eq!(r.out_len, 0);
}
