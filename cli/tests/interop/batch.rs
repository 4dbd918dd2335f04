//! Batch sizes that really run (docs/warmup.md, "Batch sizes"): `diff`, `keys` and `warmup` with
//! `--allowed-batch-sizes` / `--batching-parameters-file`, held to
//! tests/data/examples/batch/expected.json, which tests/data/gen/make_examples.py wrote
//! from the 0th dimensions of the requests TensorFlow ran and TF Serving's rule (cited
//! in its `rule` field), not from tfreq's output.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn tfreq() -> Command {
    crate::common::bin()
}

fn ex(rel: &str) -> String {
    crate::common::data_dir()
        .join("examples")
        .join(rel)
        .display()
        .to_string()
}

fn expected() -> Value {
    let text = std::fs::read_to_string(ex("batch/expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

fn run(args: &[&str]) -> Output {
    tfreq().args(args).output().expect("tfreq runs")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("a size"))
        .collect()
}

/// The rows of expected.json for a file as tfreq's `batching.requests` rows:
/// (batch_size, padded sizes, refused message).
fn expected_rows(file: &str) -> Vec<(u64, Vec<u64>, Option<String>)> {
    let e = expected();
    e["files"][file]["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r["batch_size"].as_u64().expect("batch_size"),
                r["padded_batch_size"].as_u64().into_iter().collect(),
                r["refused"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn rows(v: &Value) -> Vec<(u64, Vec<u64>, Option<String>)> {
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["batch_size"].as_u64().expect("batch_size"),
                u64s(&r["padded_batch_sizes"]),
                r["refused"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// The two ways to give the rule: the generator's parameters file, and its allowed
/// sizes on the command line.
fn rules() -> Vec<Vec<String>> {
    let allowed: Vec<String> = u64s(&expected()["allowed_batch_sizes"])
        .iter()
        .map(u64::to_string)
        .collect();
    vec![
        vec![
            "--batching-parameters-file".into(),
            ex("batch/batching_parameters.txt"),
        ],
        vec!["--allowed-batch-sizes".into(), allowed.join(",")],
    ]
}

fn codes_by_record(report: &Value) -> Vec<Vec<String>> {
    report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["severity"] != "note")
                .map(|f| f["code"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn diff_reports_the_padded_sizes_expected_json_records() {
    let e = expected();
    for rule in rules() {
        let mut args = vec![
            "diff".to_string(),
            ex("batch/warmup.tfrecord"),
            ex("batch/predict_log.tfrecord"),
            "-f".into(),
            "json".into(),
        ];
        args.extend(rule.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        // Record 5 (33 > max_batch_size 32) is refused: an error, exit 1.
        assert_eq!(o.status.code(), Some(1), "{rule:?}");
        let r = json(&o);
        let b = &r["batching"];
        assert_eq!(
            rows(&b["requests"]),
            expected_rows("batch/predict_log.tfrecord"),
            "{rule:?}"
        );
        assert_eq!(
            rows(&b["warmup"]),
            expected_rows("batch/warmup.tfrecord"),
            "{rule:?}"
        );
        assert_eq!(
            u64s(&b["production_padded_sizes"]),
            u64s(&e["files"]["batch/predict_log.tfrecord"]["padded_sizes_reached"])
        );
        assert_eq!(
            u64s(&b["warmup_padded_sizes"]),
            u64s(&e["files"]["batch/warmup.tfrecord"]["padded_sizes_reached"])
        );
        assert_eq!(u64s(&b["not_warmed"]), u64s(&e["warmup_misses"]));
        assert_eq!(b["rule"]["max_batch_size"], e["max_batch_size"]);
        assert_eq!(b["rule"]["allowed_batch_sizes"], e["allowed_batch_sizes"]);
        // The findings: the refused record is BATCH_TOO_LARGE, the record that pads to
        // the size the warm-up misses is BATCH_SIZE_NOT_WARMED; sizes 5 and 8 pad to 8,
        // which the warm-up's 3 reaches: their BATCH_SIZE_CHANGED is only a note.
        let want: Vec<Vec<String>> = expected_rows("batch/predict_log.tfrecord")
            .iter()
            .map(|(_, padded, refused)| {
                if refused.is_some() {
                    vec!["BATCH_TOO_LARGE".to_string()]
                } else if padded.iter().any(|p| {
                    !u64s(&e["files"]["batch/warmup.tfrecord"]["padded_sizes_reached"]).contains(p)
                }) {
                    vec!["BATCH_SIZE_NOT_WARMED".to_string()]
                } else {
                    Vec::new()
                }
            })
            .collect();
        assert_eq!(codes_by_record(&r), want, "{rule:?}");
        let refused = &r["requests"][5]["findings"];
        assert!(
            refused.to_string().contains(
                e["files"]["batch/predict_log.tfrecord"]["records"][5]["refused"]
                    .as_str()
                    .unwrap()
            ),
            "{refused}"
        );
    }
}

#[test]
fn without_batching_parameters_nothing_changes() {
    let o = run(&[
        "diff",
        &ex("batch/warmup.tfrecord"),
        &ex("batch/predict_log.tfrecord"),
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let r = json(&o);
    assert!(r.get("batching").is_none());
    let text = r.to_string();
    assert!(!text.contains("BATCH_TOO_LARGE") && !text.contains("BATCH_SIZE_NOT_WARMED"));
    assert!(text.contains("BATCH_SIZE_CHANGED"));
}

#[test]
fn diff_exit_codes() {
    let warm = ex("batch/warmup.tfrecord");
    let params = ex("batch/batching_parameters.txt");
    // The warm-up against itself: every padded size is warmed, nothing refused.
    let o = run(&["diff", &warm, &warm, "--batching-parameters-file", &params]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A padded size the warm-up misses: a warning, an error with --strict-shapes.
    let dir = tempfile::tempdir().unwrap();
    let w1 = dir.path().join("w1.tfrecord");
    let o = run(&[
        "warmup",
        &warm,
        "--allowed-batch-sizes",
        "1",
        "-o",
        w1.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (strict, code) in [(false, 0), (true, 1)] {
        let mut args = vec![
            "diff",
            w1.to_str().unwrap(),
            &warm,
            "--allowed-batch-sizes",
            "1,8",
        ];
        if strict {
            args.push("--strict-shapes");
        }
        let o = run(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(code), "strict {strict}: {out}");
        assert!(out.contains("BATCH_SIZE_NOT_WARMED"), "{out}");
    }
    // Usage: both flags; a parameters file that does not parse (line and column); one
    // TF Serving refuses to load a model with; a 0 size.
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "max_batch_size { value: 32 }\nallowed_batch_size: 8\n",
    )
    .unwrap();
    let refused = dir.path().join("refused.txt");
    std::fs::write(
        &refused,
        "max_batch_size { value: 32 }\nallowed_batch_sizes: [1, 8]\n",
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "--allowed-batch-sizes",
                "1,8",
                "--batching-parameters-file",
                &params,
            ],
            "cannot be used with",
        ),
        (
            vec!["--batching-parameters-file", bad.to_str().unwrap()],
            "line 2, column 1: message tensorflow.serving.BatchingParameters has no field named allowed_batch_size",
        ),
        (
            vec!["--batching-parameters-file", refused.to_str().unwrap()],
            "Last entry in allowed_batch_sizes must match max_batch_size; last entry was 8; expected 32",
        ),
        (vec!["--allowed-batch-sizes", "0,8"], "is 0"),
        (vec!["--allowed-batch-sizes", "8,x"], "invalid"),
    ];
    for (extra, want) in cases {
        for cmd in ["diff", "keys", "warmup"] {
            let mut args = vec![cmd, &warm];
            if cmd == "diff" {
                args.push(&warm);
            }
            if cmd == "warmup" {
                args.extend(["-o", "-"]);
            }
            args.extend(extra.iter().copied());
            let o = run(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{cmd} {extra:?}: {err}");
            assert!(err.contains(want), "{cmd} {extra:?}: {err}");
            assert!(o.stdout.is_empty(), "{cmd} {extra:?}");
        }
    }
}

#[test]
fn keys_counts_padded_sizes_as_expected_json() {
    let e = expected();
    let want_rows = expected_rows("batch/predict_log.tfrecord");
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for (_, padded, _) in &want_rows {
        for p in padded {
            *want.entry(p.to_string()).or_default() += 1;
        }
    }
    let too_large = want_rows.iter().filter(|r| r.2.is_some()).count() as u64;
    for rule in rules() {
        let mut args = vec![
            "keys".to_string(),
            ex("batch/predict_log.tfrecord"),
            "-f".into(),
            "json".into(),
        ];
        args.extend(rule.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0));
        let s = json(&o);
        let b = &s["batching"];
        assert_eq!(
            u64s(&b["production_padded_sizes"]),
            u64s(&e["files"]["batch/predict_log.tfrecord"]["padded_sizes_reached"])
        );
        assert_eq!(b["too_large"].as_u64(), Some(too_large));
        let got: BTreeMap<String, u64> =
            serde_json::from_value(b["groups"][0]["production"].clone()).unwrap();
        assert_eq!(got, want);
        assert_eq!(b["groups"].as_array().unwrap().len(), 1);
        // The human table says the same.
        let human: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "-f" && *a != "json")
            .collect();
        let o = run(&human);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains(
                "production runs padded to: 1 (2 requests), 8 (4 requests), 32 (1 request)"
            ),
            "{text}"
        );
        assert!(
            text.contains("refused: 1 request larger than max_batch_size 32"),
            "{text}"
        );
    }
}

#[test]
fn keys_merge_recomputes_the_batch_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let summary = |files: &[String], out: &str| -> PathBuf {
        let p = dir.path().join(out);
        let mut args = vec!["keys".to_string()];
        args.extend(files.iter().cloned());
        args.extend([
            "-f".into(),
            "json".into(),
            "--allowed-batch-sizes".into(),
            "1,8,32".into(),
        ]);
        let o = tfreq().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        std::fs::write(&p, &o.stdout).unwrap();
        p
    };
    let (a, b) = (
        ex("batch/predict_log.tfrecord"),
        ex("batch/warmup.tfrecord"),
    );
    let whole = summary(&[a.clone(), b.clone()], "whole.json");
    let pa = summary(&[a], "a.json");
    let pb = summary(&[b], "b.json");
    let o = tfreq()
        .args(["keys", "merge"])
        .arg(&pb)
        .arg(&pa)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let merged: Value = serde_json::from_slice(&o.stdout).unwrap();
    let whole: Value = serde_json::from_slice(&std::fs::read(whole).unwrap()).unwrap();
    assert_eq!(merged["batching"], whole["batching"]);
    assert_eq!(
        whole["batching"]["groups"][0]["production"],
        serde_json::json!({"1": 3, "8": 5, "32": 1})
    );
}

/// The requests of a warm-up file tfreq wrote: (model name, feed name, dtype, shape).
fn records(path: &std::path::Path) -> Vec<(String, String, String, Vec<i64>)> {
    let o = tfreq()
        .arg("inspect")
        .arg(path)
        .args(["-f", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| {
            let m = &e["message"];
            let model = m["model_spec"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |i| {
                    (
                        model.clone(),
                        i["name"].as_str().unwrap().to_string(),
                        i["dtype"].as_str().unwrap().to_string(),
                        serde_json::from_value(i["shape"].clone()).unwrap(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn warmup_writes_every_allowed_size_and_then_nothing_is_cold() {
    let e = expected();
    let allowed = u64s(&e["allowed_batch_sizes"]);
    let dir = tempfile::tempdir().unwrap();
    for (i, rule) in rules().into_iter().enumerate() {
        let out = dir.path().join(format!("warm{i}.tfrecord"));
        let mut args = vec![
            "warmup".to_string(),
            ex("batch/predict_log.tfrecord"),
            "-o".into(),
            out.display().to_string(),
        ];
        args.extend(rule.iter().cloned());
        let o = tfreq().args(&args).output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Every request the server runs is covered; the refused one cannot be.
        let rows = expected_rows("batch/predict_log.tfrecord");
        let served = rows.iter().filter(|r| r.2.is_none()).count();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("covering {served} of {} requests", rows.len())),
            "{err}"
        );
        let want: Vec<(String, String, String, Vec<i64>)> = allowed
            .iter()
            .map(|&n| {
                (
                    "batch_x2".into(),
                    "x".into(),
                    "DT_FLOAT".into(),
                    vec![n as i64, 2],
                )
            })
            .collect();
        assert_eq!(records(&out), want);
        // The new warm-up reaches every padded size production does.
        let mut args = vec![
            "diff".to_string(),
            out.display().to_string(),
            ex("batch/predict_log.tfrecord"),
            "-f".into(),
            "json".into(),
            "--strict-shapes".into(),
        ];
        args.extend(rule.iter().cloned());
        let o = tfreq().args(&args).output().unwrap();
        let r = json(&o);
        assert_eq!(u64s(&r["batching"]["not_warmed"]), Vec::<u64>::new());
        assert!(!r.to_string().contains("BATCH_SIZE_NOT_WARMED"));
        // Only the refused request fails.
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(r["counts"]["errors"], 1);
    }
}

#[test]
fn warmup_stays_within_the_loaders_record_limit() {
    let sizes: Vec<String> = (1..=1001).map(|n| n.to_string()).collect();
    let o = run(&[
        "warmup",
        &ex("batch/predict_log.tfrecord"),
        "-o",
        "-",
        "--allowed-batch-sizes",
        &sizes.join(","),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 1000 records"), "{err}");
    assert!(o.stdout.is_empty());
    // 1000 sizes for one key: exactly the limit.
    let o = run(&[
        "warmup",
        &ex("batch/predict_log.tfrecord"),
        "-o",
        "-",
        "--allowed-batch-sizes",
        &sizes[..1000].join(","),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_warmup_record_too_large_fails_the_model_load() {
    // The log as the warm-up: its record 5 (33 rows) is refused by the batch scheduler,
    // and a warm-up request that fails fails the model load.
    let o = run(&[
        "diff",
        &ex("batch/predict_log.tfrecord"),
        &ex("batch/warmup.tfrecord"),
        "--allowed-batch-sizes",
        "1,8,32",
        "-f",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let r = json(&o);
    let problems = r["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["code"], "BATCH_TOO_LARGE");
    assert!(
        problems[0]["label"]
            .as_str()
            .unwrap()
            .ends_with("(record 5)")
    );
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("fails the model load")
    );
    assert_eq!(r["verdict"], "fail");
}

#[test]
fn inputs_without_one_batch_dimension_are_not_batchable() {
    use tfreq::analysis::BatchRule;
    use tfreq::analysis::Labeled;
    use tfreq::analysis::{DiffOptions, diff_batches, diff_labeled};
    use tfreq::{DType, TFRequest, WireFormat};
    let req = |shapes: &[(&str, &[i64])]| {
        let mut r = TFRequest::for_wire("", WireFormat::TfServing);
        for (n, s) in shapes {
            let count: i64 = s.iter().product();
            r.add_feed(*n, s, DType::Float, vec![0f32; count as usize])
                .unwrap();
        }
        r.add_fetch("y");
        r.into_message()
    };
    let warm = req(&[("x", &[1, 2]), ("k", &[1])]);
    let rows = req(&[("x", &[3, 2]), ("k", &[4])]);
    let scalar = req(&[("x", &[3, 2]), ("k", &[])]);
    let ok = req(&[("x", &[3, 2]), ("k", &[3])]);
    let w = [Labeled::new("w", "w", &warm)];
    let p = [
        Labeled::new("p", "rows", &rows),
        Labeled::new("p", "scalar", &scalar),
        Labeled::new("p", "ok", &ok),
    ];
    let mut report = diff_labeled(&w, &p, &DiffOptions::default());
    let rule = BatchRule::from_allowed(&[1, 4, 8]).unwrap();
    diff_batches(&mut report, &rule, "test", &w, &p, false);
    let codes: Vec<Vec<&str>> = report
        .requests
        .iter()
        .map(|r| {
            r.findings
                .iter()
                .filter(|f| f.code.as_str().contains("BATCH"))
                .map(|f| f.code.as_str())
                .collect()
        })
        .collect();
    assert_eq!(
        codes,
        [
            vec!["NOT_BATCHABLE"],
            vec!["NOT_BATCHABLE"],
            vec!["BATCH_SIZE_NOT_WARMED"]
        ]
    );
    let msg = &report.requests[0]
        .findings
        .iter()
        .find(|f| f.code == "NOT_BATCHABLE")
        .unwrap()
        .message;
    assert!(
        msg.contains("Batching Run() input tensors must have equal 0th-dimension size"),
        "{msg}"
    );
    let msg = &report.requests[1]
        .findings
        .iter()
        .find(|f| f.code == "NOT_BATCHABLE")
        .unwrap()
        .message;
    assert!(msg.contains("must have at least one dimension"), "{msg}");
    let b = report.batching.as_ref().unwrap();
    assert_eq!((b.not_batchable, b.too_large), (2, 0));
    assert_eq!(b.production_padded_sizes, [4]);
    assert!(report.failed);
}
