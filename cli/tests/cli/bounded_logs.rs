//! `inspect`, `diff`, `check` and `convert` walk a TFRecord log record by record, from a
//! file or from standard input: a run's peak resident set stays far under the log's
//! size (docs/performance.md, "`inspect`, `diff`, `check` and `convert` of a realistic
//! log"). A log file read whole was mapped and every record's request held, so its run
//! peaked above the file's size.

use std::io::Write;
use std::path::Path;

/// Records in the log: every sixth a small predict request, the others 4 MiB
/// `session_run_log`s (shown, counted and given back, not decoded further: the test's
/// run stays short in a debug build), 120 MiB in all, so the file is mapped
/// (`tfreq::MAP_THRESHOLD`).
const RECORDS: usize = 36;
/// The bytes of each large record.
const LARGE: usize = 4 << 20;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field(num: u64, payload: &[u8], out: &mut Vec<u8>) {
    varint(num << 3 | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A TF Serving `PredictRequest` for tests/data/models/half_plus_two: `x`, `DT_FLOAT`
/// of shape `[n]`, fetch `y`, written by the library's builder.
fn request(n: usize) -> Vec<u8> {
    let mut req = tfreq::TFRequest::new("serving_default");
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    req.add_feed("x", &[n as i64], tfreq::DType::Float, values)
        .unwrap();
    req.add_fetch("y");
    req.to_tf_serving_bytes("half_plus_two").unwrap()
}

/// A log of `records` records, every sixth a predict request of `n` floats (from the
/// first), the others `session_run_log`s of `large` bytes; its size.
fn write_log(path: &Path, n: usize, records: usize, large: usize) -> u64 {
    let predict = tfreq::formats::encode_predict_log(&request(n));
    let mut session = Vec::new();
    field(15, &vec![0u8; large], &mut session); // a field the reader skips
    let mut run = Vec::new();
    field(1, &session, &mut run); // SessionRunLog.request
    let mut log = Vec::new();
    field(5, &run, &mut log); // PredictionLog.session_run_log
    let (mut small, mut big) = (Vec::new(), Vec::new());
    tfreq::formats::write_record(&mut small, &predict);
    tfreq::formats::write_record(&mut big, &log);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut size = 0;
    for i in 0..records {
        let one = if i % 6 == 0 { &small } else { &big };
        f.write_all(one).unwrap();
        size += one.len() as u64;
    }
    f.flush().unwrap();
    size
}

/// A log of `records` predict requests of `n` floats.
fn write_requests(path: &Path, n: usize, records: usize) {
    let predict = tfreq::formats::encode_predict_log(&request(n));
    let mut one = Vec::new();
    tfreq::formats::write_record(&mut one, &predict);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..records {
        f.write_all(&one).unwrap();
    }
    f.flush().unwrap();
}

#[test]
fn inspect_diff_check_and_convert_of_a_log_keep_far_less_than_the_log_resident() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.tfrecord");
    let size = write_log(&log, 4, RECORDS, LARGE);
    let warmup = dir.path().join("warmup.tfrecord");
    write_log(&warmup, 4, 1, 0);
    let out = dir.path().join("out.tfrecord");
    let model = crate::common::data_dir().join("models/half_plus_two.metadata.json");
    let model = model.to_str().unwrap();
    let (l, w, o) = (
        log.to_str().unwrap(),
        warmup.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    // Three quarters of the log: a run that holds the log, mapped or read, is over it
    // (the commands before this walk peaked at 130 MB and more here). Every run here
    // stays under half the log. (Read as wait4's `ru_maxrss`, `check` once seemed to
    // reach 72 MiB with the whole suite beside it: that figure charged the child with
    // the test process's own peak; see `common::own_peak_kib`.)
    let bound = size * 3 / 4 / 1024;
    let runs: [(&[&str], bool); 6] = [
        (&["inspect", l], false),
        (&["inspect", "-f", "json", l], false),
        (&["diff", w, l], false),
        (&["diff", w, "-"], true),
        (&["check", l, "--model", model], false),
        (&["convert", l, "--wire", "tfrecord", "-o", o], false),
    ];
    for (args, stdin) in runs {
        let (code, kib) = crate::common::own_peak_kib(args, stdin.then_some(log.as_path()));
        let run = format!("tfreq {args:?}{}", if stdin { " < LOG" } else { "" });
        // The session_run_log records are errors (UNSUPPORTED_LOG_TYPE): exit 1.
        assert!((0..=1).contains(&code), "{run}: exit {code}");
        assert!(
            kib < bound,
            "{run}: peak RSS {kib} KiB, over {bound} KiB (the log is {} KiB)",
            size / 1024
        );
    }
}

/// Predict requests in the log of many requests (1.7 MB): each judged request's report
/// was held until the end (some 2 KiB each for `diff` here: `diff` peaked at 110 MiB on
/// 40,000 of them, 30 MiB of it the program); it is written as it is judged.
const MANY: usize = 20_000;
/// The peak resident set `diff` and `check` of that log stay under, in KiB: the report
/// of one request at a time, the spool's 8 MiB and the program, with room to spare
/// (alone, each run here peaks at 29 to 33 MiB in a debug build).
const MANY_BOUND_KIB: u64 = 48 << 10;

#[test]
fn diff_and_check_of_a_log_of_many_requests_write_each_report_as_it_is_judged() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("many.tfrecord");
    // Three floats where the warm-up has four: each request has a finding.
    write_requests(&log, 3, MANY);
    let warmup = dir.path().join("warmup.tfrecord");
    write_log(&warmup, 4, 1, 0);
    let model = crate::common::data_dir().join("models/half_plus_two.metadata.json");
    let (l, w, m) = (
        log.to_str().unwrap(),
        warmup.to_str().unwrap(),
        model.to_str().unwrap(),
    );
    let runs: [(&[&str], bool); 5] = [
        (&["diff", w, l], false),
        (&["diff", w, l, "-f", "json"], false),
        (&["diff", w, "-", "-f", "github"], true),
        (&["check", l, "--model", m], false),
        (&["check", "-", "--model", m, "-f", "json"], true),
    ];
    for (args, stdin) in runs {
        let (code, kib) = crate::common::own_peak_kib(args, stdin.then_some(log.as_path()));
        let run = format!("tfreq {args:?}{}", if stdin { " < LOG" } else { "" });
        assert!((0..=1).contains(&code), "{run}: exit {code}");
        eprintln!("{run}: peak RSS {kib} KiB");
        assert!(
            kib < MANY_BOUND_KIB,
            "{run}: peak RSS {kib} KiB, over {MANY_BOUND_KIB} KiB"
        );
    }
}
