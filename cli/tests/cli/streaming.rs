//! A log on standard input is streamed by `inspect` and `convert` (and
//! `keys`, cli/tests/interop/compressed.rs), never read whole: without `--max-size` the default cap
//! bounds one record, so a log of any length goes through, record by record; a
//! `--max-size` given bounds the whole stream (cli/tests/cli/hostile_inputs.rs).

use std::io::Write;
use std::process::Stdio;

fn data(p: &str) -> Vec<u8> {
    std::fs::read(crate::common::root().join("tests/data").join(p)).unwrap()
}

/// Runs `tfreq ARGS` with `stdin` on standard input: (exit code, stdout, stderr).
fn run(args: &[&str], stdin: Vec<u8>) -> (i32, Vec<u8>, String) {
    let mut child = crate::common::bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut i = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = i.write_all(&stdin);
    });
    let o = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        o.status.code().unwrap_or(-1),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn gzip(b: &[u8]) -> Vec<u8> {
    tfreq::formats::compress(b, tfreq::formats::Compression::Gzip).unwrap()
}

/// A log of `n` copies of the mixed warm-up's records (6 each, every kind).
fn big_log(n: usize) -> Vec<u8> {
    data("tfrecord/warmup_mixed.tfrecord").repeat(n)
}

#[test]
fn convert_streams_a_log_from_standard_input() {
    let log = big_log(20_000); // 8.9 MB, 120,000 records
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.tfrecord");
    let o = out.to_str().unwrap();
    // A cap given bounds the whole stream; without one, it all goes through.
    for input in [log.clone(), gzip(&log)] {
        let _ = std::fs::remove_file(&out);
        let capped = [
            "convert",
            "-",
            "--wire",
            "tfrecord",
            "-o",
            o,
            "--max-size",
            "1M",
        ];
        let (code, _, err) = run(&capped, input.clone());
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("over the size limit of 1,048,576 bytes"),
            "{err}"
        );
        assert!(!out.exists());
        let (code, _, err) = run(&["convert", "-", "--wire", "tfrecord", "-o", o], input);
        assert_eq!(code, 0, "{err}");
        assert!(
            std::fs::read(&out).unwrap() == log,
            "a TFRecord converted to a TFRecord is unchanged"
        );
    }
    // Compressed on the way out, as TensorFlow's writer does.
    let (code, _, err) = run(
        &[
            "convert",
            "-",
            "--wire",
            "tfrecord",
            "--compress",
            "gzip",
            "-o",
            o,
        ],
        log.clone(),
    );
    assert_eq!(code, 0, "{err}");
    let z = std::fs::read(&out).unwrap();
    let back = tfreq::formats::inflate(&z, tfreq::formats::Compression::Gzip, 1 << 30).unwrap();
    assert!(back == log);
    // A damaged record ends the run with its number, and the old output stays.
    let before = std::fs::read(&out).unwrap();
    let mut bad = log.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x55;
    let (code, _, err) = run(&["convert", "-", "--wire", "tfrecord", "-o", o], bad);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("record "), "{err}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        before,
        "a failed run leaves the output as it was"
    );
}

#[test]
fn inspect_streams_a_log_from_standard_input() {
    let log = big_log(5_000); // 2.2 MB, 30,000 records
    let (code, out, err) = run(&["inspect", "-", "-f", "json"], log.clone());
    assert_eq!(code, 1, "TOO_MANY_RECORDS fails the run: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["streamed"], true);
    assert_eq!(v["entries_count"], 30_000);
    assert_eq!(v["entries"].as_array().unwrap().len(), 30_000);
    let whole: Vec<&str> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap())
        .collect();
    assert_eq!(whole, ["TOO_MANY_RECORDS"]);
    // The same findings as the file read whole, record by record.
    let one = data("tfrecord/warmup_mixed.tfrecord");
    let (_, streamed, _) = run(&["inspect", "-", "-f", "json"], one.clone());
    let s: serde_json::Value = serde_json::from_slice(&streamed).unwrap();
    let p = crate::common::root().join("tests/data/tfrecord/warmup_mixed.tfrecord");
    let o = crate::common::bin()
        .args(["inspect", "-f", "json"])
        .arg(&p)
        .output()
        .unwrap();
    let f: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        s["entries"].as_array().unwrap().len(),
        f["entries"].as_array().unwrap().len()
    );
    assert!(!all_codes(&f).is_empty());
    assert_eq!(all_codes(&s), all_codes(&f), "{s:#}");
    // Human output names every record, gzip too.
    let (code, out, err) = run(&["inspect", "-"], gzip(&one));
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("gzip-compressed TFRecord"), "{text}");
    for i in 0..6 {
        assert!(text.contains(&format!("- record {i}")), "{text}");
    }
}

/// Every finding code anywhere in a document (under any `problems`), sorted.
fn all_codes(v: &serde_json::Value) -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    if k == "problems" {
                        for p in x.as_array().into_iter().flatten() {
                            out.push(p["code"].as_str().unwrap_or("?").to_string());
                        }
                    } else {
                        walk(x, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut out);
    out.sort();
    out
}
