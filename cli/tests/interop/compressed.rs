//! Compressed logs written by TensorFlow (tests/data/compressed/, made by
//! tests/data/gen/make_compressed.py with tf.io.TFRecordWriter, GZIP and ZLIB, and a
//! BulkInferrer-style `prediction_logs-*.gz` in two shards): every command reads them, and
//! `keys` counts what TensorFlow read back from them (their manifest.json).

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Stdio;

use serde_json::Value;

const DIR: &str = "tests/data/compressed";
const FILES: &[&str] = &[
    "warmup_gzip.tfrecord.gz",
    "warmup_zlib.tfrecord",
    "prediction_logs-00000-of-00002.gz",
    "prediction_logs-00001-of-00002.gz",
];

fn tfreq(args: &[&str], stdin: Option<&[u8]>) -> (i32, Vec<u8>, String) {
    let mut c = crate::common::bin();
    c.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    if let Some(b) = stdin {
        child.stdin.take().unwrap().write_all(b).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A file of `DIR` as the command is given it (it runs from the repository's root).
fn path(f: &str) -> String {
    format!("{DIR}/{f}")
}

/// A file of `DIR` for this test to read.
fn data_file(f: &str) -> std::path::PathBuf {
    crate::common::root().join(path(f))
}

/// TensorFlow's dtype name (`float32`) as tfreq names it (`DT_FLOAT`).
fn dt(tf: &str) -> &'static str {
    match tf {
        "float32" => "DT_FLOAT",
        "float64" => "DT_DOUBLE",
        "int32" => "DT_INT32",
        "int64" => "DT_INT64",
        "string" => "DT_STRING",
        other => panic!("dtype {other} not in this table"),
    }
}

/// Shape keys as `(signature, feeds, fetches) -> count` from a `keys --format json` summary.
fn keys_of(summary: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for k in summary["keys"].as_array().unwrap() {
        for s in k["shapes"].as_array().unwrap() {
            let feeds: Vec<Value> = s["feeds"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(n, f)| serde_json::json!([n, f["dtype"], f["shape"]]))
                .collect();
            let id = serde_json::json!([k["signature"], feeds, k["fetches"]]).to_string();
            *out.entry(id).or_default() += s["count"].as_u64().unwrap();
        }
    }
    out
}

/// The same from the manifest (what TensorFlow read back).
fn expected(file: &str) -> (u64, BTreeMap<String, u64>) {
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(data_file("manifest.json")).unwrap())
            .unwrap();
    let e = &m[file];
    let mut out = BTreeMap::new();
    for pair in e["shape_keys"].as_array().unwrap() {
        let (key, n) = (&pair[0], pair[1].as_u64().unwrap());
        let feeds: Vec<Value> = key[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!([f[0], dt(f[1].as_str().unwrap()), f[2]]))
            .collect();
        let id = serde_json::json!([key[0], feeds, key[2]]).to_string();
        out.insert(id, n);
    }
    (e["records"].as_u64().unwrap(), out)
}

fn summary(args: &[&str], stdin: Option<&[u8]>) -> Value {
    let mut a = vec!["keys", "--format", "json"];
    a.extend_from_slice(args);
    let (code, out, err) = tfreq(&a, stdin);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn keys_counts_what_tensorflow_reads() {
    for f in FILES {
        let s = summary(&[&path(f)], None);
        let (records, want) = expected(f);
        assert_eq!(s["requests"].as_u64().unwrap(), records, "{f}");
        assert_eq!(keys_of(&s), want, "{f}");
        // The file's own (compressed) size is the one the summary names.
        let size = std::fs::metadata(data_file(f)).unwrap().len();
        assert_eq!(s["files"][0]["bytes"].as_u64().unwrap(), size, "{f}");
    }
}

#[test]
fn a_compressed_log_on_standard_input_is_the_same_log() {
    for f in FILES {
        let bytes = std::fs::read(data_file(f)).unwrap();
        let by_path = summary(&[&path(f)], None);
        let piped = summary(&["-"], Some(&bytes));
        assert_eq!(keys_of(&piped), keys_of(&by_path), "{f}");
        assert_eq!(piped["requests"], by_path["requests"], "{f}");
    }
}

/// A plain log large enough to be mapped (over `tfreq::MAP_THRESHOLD`), whose parts
/// the workers read from the file for themselves: the same counts as TensorFlow's,
/// times the copies, and as the same log streamed from standard input.
#[test]
fn a_log_too_large_to_copy_counts_as_tensorflow_read_it() {
    // The ZLIB log inflated: the plain TFRecord stream TensorFlow's writer framed.
    let f = "warmup_zlib.tfrecord";
    let mut one = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::ZlibDecoder::new(&std::fs::read(data_file(f)).unwrap()[..]),
        &mut one,
    )
    .unwrap();
    // TFRecord files concatenated are one TFRecord file.
    let copies = (tfreq::MAP_THRESHOLD as usize).div_ceil(one.len()) + 3;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.tfrecord");
    std::fs::write(&big, one.repeat(copies)).unwrap();
    let by_path = summary(&[big.to_str().unwrap()], None);
    let (records, want) = expected(f);
    let want: BTreeMap<String, u64> = want
        .into_iter()
        .map(|(k, n)| (k, n * copies as u64))
        .collect();
    assert_eq!(
        by_path["requests"].as_u64().unwrap(),
        records * copies as u64
    );
    assert_eq!(keys_of(&by_path), want);
    let piped = summary(&["-"], Some(&std::fs::read(&big).unwrap()));
    assert_eq!(keys_of(&piped), want);
}

#[test]
fn shard_summaries_merge_into_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let shards = [
        path("prediction_logs-00000-of-00002.gz"),
        path("prediction_logs-00001-of-00002.gz"),
    ];
    let mut names = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let (code, out, err) = tfreq(&["keys", "--format", "json", s], None);
        assert_eq!(code, 0, "{err}");
        let p = dir.path().join(format!("{i}.json"));
        std::fs::write(&p, out).unwrap();
        names.push(p.display().to_string());
    }
    let (code, merged, err) = tfreq(&["keys", "merge", &names[1], &names[0]], None);
    assert_eq!(code, 0, "{err}");
    let (_, whole, _) = tfreq(&["keys", "--format", "json", &shards[0], &shards[1]], None);
    assert_eq!(
        String::from_utf8(merged).unwrap(),
        String::from_utf8(whole).unwrap()
    );
}

#[test]
fn every_command_reads_them() {
    for f in FILES {
        let p = path(f);
        let (code, out, err) = tfreq(&["inspect", &p], None);
        assert_eq!(code, 0, "inspect {f}: {err}");
        assert!(
            String::from_utf8_lossy(&out).contains("TFRecord of PredictionLog"),
            "{f}"
        );
        // Against itself: the same executors, but as a warm-up TF Serving cannot load it.
        let (code, out, err) = tfreq(&["diff", &p, &p], None);
        assert_eq!(code, 1, "diff {f} against itself: {err}");
        let out = String::from_utf8_lossy(&out);
        assert!(out.contains("WARMUP_COMPRESSED"), "{out}");
        assert!(out.contains("same-executor"), "{out}");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("plain.tfrecord");
        let o = out.display().to_string();
        let (code, _, err) = tfreq(&["convert", &p, "--wire", "tfrecord", "-o", &o], None);
        assert_eq!(code, 0, "convert {f}: {err}");
        assert_eq!(
            keys_of(&summary(&[&o], None)),
            keys_of(&summary(&[&p], None)),
            "{f}"
        );
        let scrubbed = dir.path().join("scrubbed.tfrecord");
        let s = scrubbed.display().to_string();
        let (code, _, err) = tfreq(&["scrub", &p, "-o", &s], None);
        assert_eq!(code, 0, "scrub {f}: {err}");
    }
}

#[test]
fn damaged_gzip_is_an_error_naming_the_file() {
    let mut bytes = std::fs::read(data_file("prediction_logs-00000-of-00002.gz")).unwrap();
    let n = bytes.len();
    bytes.truncate(n - 20);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.gz");
    std::fs::write(&p, &bytes).unwrap();
    let p = p.display().to_string();
    for cmd in ["keys", "inspect"] {
        let (code, _, err) = tfreq(&[cmd, &p], None);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("cut.gz"), "{cmd}: {err}");
    }
}

#[test]
fn convert_writes_either_compression_and_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = "tests/data/tfrecord/warmup_predict.tfrecord";
    let plain = summary(&[src], None);
    for (c, magic) in [("gzip", &[0x1f, 0x8b][..]), ("zlib", &[0x78][..])] {
        let out = dir.path().join(format!("w.{c}"));
        let o = out.display().to_string();
        let (code, _, err) = tfreq(
            &[
                "convert",
                src,
                "--wire",
                "tfrecord",
                "--compress",
                c,
                "-o",
                &o,
            ],
            None,
        );
        assert_eq!(code, 0, "{c}: {err}");
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.starts_with(magic), "{c}");
        assert_eq!(keys_of(&summary(&[&o], None)), keys_of(&plain), "{c}");
    }
}

#[test]
fn a_compressed_warmup_is_a_finding_a_compressed_log_is_not() {
    let gz = path("warmup_gzip.tfrecord.gz");
    let plain = "tests/data/tfrecord/warmup_predict.tfrecord";
    let codes = |args: &[&str]| -> (i32, Vec<String>) {
        let mut a = args.to_vec();
        a.extend(["--format", "json"]);
        let (code, out, err) = tfreq(&a, None);
        let v: Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        let problems = v["problems"].as_array().cloned().unwrap_or_default();
        (
            code,
            problems
                .iter()
                .map(|p| p["code"].as_str().unwrap_or("").to_string())
                .collect(),
        )
    };
    // As the warm-up of diff, and as what check checks: TF Serving could not load it.
    let (code, found) = codes(&["diff", &gz, plain]);
    assert_eq!(code, 1);
    assert!(
        found.contains(&"WARMUP_COMPRESSED".to_string()),
        "{found:?}"
    );
    let (code, found) = codes(&[
        "check",
        &gz,
        "--model",
        "tests/data/models/faq.metadata.json",
    ]);
    assert_eq!(code, 1);
    assert!(
        found.contains(&"WARMUP_COMPRESSED".to_string()),
        "{found:?}"
    );
    // As production traffic it is just a log.
    let (code, found) = codes(&["diff", plain, &gz]);
    assert_eq!(code, 0, "{found:?}");
    assert!(
        !found.contains(&"WARMUP_COMPRESSED".to_string()),
        "{found:?}"
    );
}

#[test]
fn warmup_takes_summaries_for_the_logs_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let shards = [
        path("prediction_logs-00000-of-00002.gz"),
        path("prediction_logs-00001-of-00002.gz"),
    ];
    let mut parts = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let (_, out, _) = tfreq(&["keys", "--format", "json", s], None);
        let p = dir.path().join(format!("{i}.json"));
        std::fs::write(&p, out).unwrap();
        parts.push(p.display().to_string());
    }
    let merged = dir.path().join("all.json");
    let (_, out, _) = tfreq(&["keys", "merge", &parts[0], &parts[1]], None);
    std::fs::write(&merged, out).unwrap();
    let from_summary = dir.path().join("a.tfrecord");
    let from_logs = dir.path().join("b.tfrecord");
    // The shards hold requests of two models; a warm-up file belongs to one.
    let (code, _, err) = tfreq(
        &[
            "warmup",
            merged.to_str().unwrap(),
            "--wire",
            "tfrecord",
            "-o",
            from_summary.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(r#"2 models ("faq", "my_model")"#) && err.contains("--model-name"),
        "{err}"
    );
    assert!(!from_summary.exists());
    let (code, _, err) = tfreq(
        &[
            "warmup",
            merged.to_str().unwrap(),
            "--model-name",
            "faq",
            "--wire",
            "tfrecord",
            "-o",
            from_summary.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = tfreq(
        &[
            "warmup",
            &shards[0],
            &shards[1],
            "--model-name",
            "faq",
            "--wire",
            "tfrecord",
            "-o",
            from_logs.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    // Only faq's requests: its one executor key, two shape keys.
    let (_, out, _) = tfreq(&["keys", from_logs.to_str().unwrap()], None);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("2 requests in 1 file: 1 executor key, 2 shape keys"),
        "{out}"
    );
    assert!(
        out.contains(r#"model "faq""#) && !out.contains("my_model"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(from_summary).unwrap(),
        std::fs::read(from_logs).unwrap()
    );
}

/// `inspect` names the compression it read through (human and JSON), and a compressed file
/// where TF Serving loads its warm-up is WARMUP_COMPRESSED in every command (once in
/// `diff`): TF Serving's loader reads it as an uncompressed TFRecord and fails the model
/// load. The header said nothing of the compression.
#[test]
fn inspect_names_the_compression_and_a_compressed_warmup_is_an_error() {
    let gz = path("warmup_gzip.tfrecord.gz");
    let (code, out, _) = tfreq(&["inspect", &gz], None);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with(": gzip-compressed TFRecord of PredictionLog, 3 records (3 predict_log)"),
        "{out}"
    );
    let (_, out, _) = tfreq(&["inspect", "--format", "json", &gz], None);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["compression"], "gzip", "{v}");
    let (_, out, _) = tfreq(
        &[
            "inspect",
            "--format",
            "json",
            "tests/data/tfrecord/warmup_predict.tfrecord",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v.get("compression").is_none(), "{v}");

    let dir = tempfile::tempdir().unwrap();
    let warm = dir.path().join("1/assets.extra");
    std::fs::create_dir_all(&warm).unwrap();
    let w = warm.join("tf_serving_warmup_requests");
    std::fs::copy(crate::common::root().join(&gz), &w).unwrap();
    let w = w.to_str().unwrap();
    let (code, out, _) = tfreq(&["inspect", w], None);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error WARMUP_COMPRESSED"), "{out}");
    let (code, out, _) = tfreq(
        &["diff", w, "tests/data/tfrecord/warmup_predict.tfrecord"],
        None,
    );
    let out = String::from_utf8(out).unwrap();
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("WARMUP_COMPRESSED").count(), 1, "{out}");
}
