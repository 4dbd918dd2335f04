//! The warm-up commands as a user runs them: inspect on TFRecord files, convert, scrub,
//! keys, warmup and build, on files the real software wrote, and on bad input.

use crate::common::{run3 as run, s as path};

#[test]
fn inspect_lists_every_record_of_tf_servings_warmup() {
    let (code, s, _) = run(&[
        "inspect",
        &path("models/half_plus_two/assets.extra/tf_serving_warmup_requests"),
    ]);
    assert_eq!(code, 0);
    assert!(
        s.contains(
            "5 records (1 predict_log, 1 classify_log, 2 regress_log, 1 multi_inference_log)"
        ),
        "{s}"
    );
    for i in 0..5 {
        assert!(s.contains(&format!("record {i}")), "record {i}: {s}");
    }
    let (code, j, _) = run(&[
        "inspect",
        "-f",
        "json",
        &path("tfrecord/warmup_mixed.tfrecord"),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["container"], "tfrecord");
    let kinds: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["log_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "predict_log",
            "classify_log",
            "regress_log",
            "multi_inference_log",
            "none",
            "none"
        ]
    );
    assert_eq!(v["entries"][0]["message"]["inputs"][0]["name"], "x");
    assert_eq!(v["problems"][0]["code"], "NO_LOG_TYPE");
}

#[test]
fn damaged_tfrecord_is_exit_2_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(path("tfrecord/warmup_predict.tfrecord")).unwrap();
    b[78 + 30] ^= 4; // a data byte of record 1
    let p = dir.path().join("bad.tfrecord");
    std::fs::write(&p, &b).unwrap();
    let (code, _, err) = run(&["inspect", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("record 1 at byte 78") && err.contains("checksum"),
        "{err}"
    );
    std::fs::write(&p, &b[..100]).unwrap();
    let (code, _, err) = run(&["inspect", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("record 1") && err.contains("truncated"),
        "{err}"
    );
}

#[test]
fn convert_scrub_keys_warmup_build_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = |n: &str| dir.path().join(n).display().to_string();
    // convert EAS -> TFRecord -> EAS gives the SDK's bytes back.
    assert_eq!(
        run(&[
            "convert",
            &path("eas/faq_prod.bin"),
            "--wire",
            "tfrecord",
            "-o",
            &out("a.tfrecord")
        ])
        .0,
        0
    );
    assert_eq!(
        run(&[
            "convert",
            &out("a.tfrecord"),
            "--wire",
            "eas",
            "-o",
            &out("a.bin")
        ])
        .0,
        0
    );
    assert_eq!(
        std::fs::read(out("a.bin")).unwrap(),
        std::fs::read(path("eas/faq_prod.bin")).unwrap()
    );
    // A dtype EAS cannot carry.
    let (code, _, err) = run(&[
        "convert",
        &path("tfs/dtype_uint32_typed.bin"),
        "--wire",
        "eas",
        "-o",
        &out("u.bin"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("DT_UINT32"), "{err}");
    assert!(!dir.path().join("u.bin").exists());
    // scrub, then diff against the source passes.
    assert_eq!(
        run(&["scrub", &path("eas/faq_prod.bin"), "-o", &out("s.bin")]).0,
        0
    );
    let s = std::fs::read(out("s.bin")).unwrap();
    assert!(!s.windows(7).any(|w| w == b"model_a"));
    let (code, d, _) = run(&["diff", &out("s.bin"), &path("eas/faq_prod.bin")]);
    assert_eq!(code, 0, "{d}");
    // keys
    let (code, j, _) = run(&[
        "keys",
        "-f",
        "json",
        &path("eas/faq_prod.bin"),
        &path("eas/faq_prod_batch4.bin"),
        &path("tfrecord/warmup_predict.tfrecord"),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&j).unwrap();
    assert_eq!(
        (
            v["requests"].as_u64(),
            v["executor_keys"].as_u64(),
            v["shape_keys"].as_u64()
        ),
        (Some(5), Some(3), Some(5))
    );
    // warmup --top 1 as a bare EAS file: the most frequent key.
    let (code, _, err) = run(&[
        "warmup",
        &path("eas/faq_prod.bin"),
        &path("eas/faq_prod_reordered.bin"),
        &path("eas/faq_prod_batch4.bin"),
        "--top",
        "1",
        "--wire",
        "eas",
        "-o",
        &out("w.bin"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("covering 2 of 3"), "{err}");
    let (code, d, _) = run(&["diff", &out("w.bin"), &path("eas/faq_prod.bin")]);
    assert_eq!(code, 0, "{d}");
    // build from REST JSON: the SDK's bytes.
    let (code, _, err) = run(&[
        "build",
        &path("rest/faq_prod.json"),
        "--model",
        &path("models/faq.metadata.json"),
        "--fetch",
        "sorted_labels",
        "--fetch",
        "sorted_probs",
        "--fetch",
        "model_version_id",
        "-o",
        &out("b.bin"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(out("b.bin")).unwrap(),
        std::fs::read(path("eas/faq_prod.bin")).unwrap()
    );
    // build from the text inspect prints.
    let (_, text, _) = run(&["inspect", "--format", "text", &path("eas/seed_warm_up.bin")]);
    std::fs::write(out("seed.txt"), text).unwrap();
    assert_eq!(
        run(&[
            "build",
            &out("seed.txt"),
            "--from",
            "text",
            "-o",
            &out("seed.bin")
        ])
        .0,
        0
    );
    let (code, d, _) = run(&[
        "diff",
        &out("seed.bin"),
        &path("eas/seed_warm_up.bin"),
        "--strict-shapes",
    ]);
    assert_eq!(code, 0, "{d}");
}

/// `(code, name)` of every problem in a `--format json` report, and its exit code.
fn problems(args: &[&str]) -> (i32, Vec<(String, String)>) {
    let (code, out, err) = run(args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let found = v["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems array: {out}"))
        .iter()
        .map(|p| {
            (
                p["code"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (code, found)
}

/// A TF Serving warm-up without a single predict request is still a warm-up the server
/// loads (or refuses for its own reasons): `check` and `diff` judge it by its findings,
/// as `inspect` does, instead of refusing it as "holds no request" (exit 2).
#[test]
fn warmups_without_predict_records_are_judged_by_their_findings() {
    let model = path("models/half_plus_two");
    let prod = path("models/half_plus_two/assets.extra/tf_serving_warmup_requests");

    // 0 bytes at the warm-up path: TF Serving reads 0 records, loads the model, warms nothing.
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("1/assets.extra");
    std::fs::create_dir_all(&extra).unwrap();
    let empty = extra.join("tf_serving_warmup_requests");
    std::fs::write(&empty, b"").unwrap();
    let empty = empty.display().to_string();
    let (code, found) = problems(&["check", "--model", &model, &empty, "--format", "json"]);
    assert_eq!(
        (code, found),
        (0, vec![("EMPTY_WARMUP".into(), String::new())])
    );
    // Nothing warms production's executor: diff fails on that, and says why.
    let (code, out, _) = run(&["diff", &empty, &prod, "--format", "json"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("\"EMPTY_WARMUP\"") && out.contains("\"NOT_WARMED\""),
        "{out}"
    );

    // Only classify records whose Input is empty: "Input is empty." fails the load.
    let classify = path("check/warmup_classify_empty.tfrecord");
    for cmd in [
        vec!["check", "--model", &model, &classify, "--format", "json"],
        vec!["diff", &classify, &prod, "--format", "json"],
    ] {
        let (code, found) = problems(&cmd);
        assert_eq!(code, 1, "{cmd:?}");
        let input_empty: Vec<_> = found.iter().filter(|(c, _)| c == "EMPTY_INPUT").collect();
        assert_eq!(input_empty.len(), 2, "{cmd:?}: {found:?}");
    }

    // A mixed warm-up (TensorFlow's): its classify, regress and multi-inference records
    // are decoded and checked as requests (their signatures exist in half_plus_two), each
    // keyed by method and signature; their features are held to the ParseExample spec
    // read from the graph (they match it), so none is set aside as not compared.
    let mixed = path("tfrecord/warmup_mixed.tfrecord");
    let (code, found) = problems(&["check", "--model", &model, &mixed, "--format", "json"]);
    assert_eq!(code, 0);
    assert!(
        !found.iter().any(|(c, _)| c == "RECORD_NOT_COMPARED"),
        "{found:?}"
    );
    let (_, out, _) = run(&["check", "--model", &model, &mixed, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<(String, String, bool)> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"]["method"].as_str().unwrap_or("predict").to_string(),
                r["key"]["signature"].as_str().unwrap().to_string(),
                r["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["code"] == "RECORD_NOT_COMPARED"),
            )
        })
        .collect();
    let want = [
        ("predict", "serving_default", false),
        ("classify", "classify_x_to_y", false),
        ("regress", "regress_x_to_y", false),
        ("multi_inference", "classify_x_to_y,regress_x_to_y", false),
    ];
    assert_eq!(
        keys,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c)),
        "{out}"
    );

    // Any other file without a request is still not a request file.
    let (code, _, err) = run(&["check", "--model", &model, &path("tfs/response.bin")]);
    assert_eq!(code, 2, "{err}");
}

/// `keys` once counted an EAS response among request files as a request (its
/// outputs shown as feeds), and `warmup` stopped the whole run on it. A response is
/// named and set aside like any unreadable file: the rest is counted, exit 2 at the end.
#[test]
fn a_response_among_request_files_is_named_and_skipped() {
    let prod = path("eas/faq_prod.bin");
    let resp = path("eas/response.bin");
    let (code, out, err) = run(&["keys", &prod, &resp]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains(
            "1 request in 2 files: 1 executor key, 1 shape key (1 unreadable file skipped"
        ),
        "{out}"
    );
    assert!(
        !out.contains("sorted_labels DT_STRING"),
        "outputs as feeds: {out}"
    );
    assert!(
        err.contains("response.bin: holds a PredictResponse (EAS), not a request"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.tfrecord").display().to_string();
    let (code, _, err) = run(&["warmup", &prod, &resp, "-o", &w]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a request"), "{err}");
    assert!(
        err.contains("wrote 1 request covering 1 of 1 request"),
        "{err}"
    );
    let (code, out, err) = run(&["keys", &w]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("input_holder DT_STRING [1]"), "{out}");
}
