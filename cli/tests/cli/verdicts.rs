//! Verdicts a CI job can believe (docs/codes.md): one verdict, derived from the
//! findings and the unreadable inputs, never contradicting the exit code; every format
//! reports unreadable inputs; one fact, one severity, as TensorFlow answered.

use crate::common::run3 as run;

use serde_json::Value;

/// The exit code a verdict stands for.
fn exit_of(verdict: &str) -> i32 {
    match verdict {
        "ok" | "same-executor" => 0,
        "undecided" | "new-executor" | "incompatible" | "fail" => 1,
        "unreadable" => 2,
        v => panic!("verdict {v}"),
    }
}

fn json(args: &[&str]) -> (i32, Value) {
    let (code, out, err) = run(args);
    let v: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out} {err}"));
    (code, v)
}

#[test]
fn a_warmup_the_server_refuses_is_a_failing_verdict() {
    let args = [
        "check",
        "tests/data/check/warmup_classify_empty.tfrecord",
        "--model",
        "tests/data/models/half_plus_two",
    ];
    let (code, out, _) = run(&args);
    assert_eq!(code, 1);
    assert!(out.contains("result: fail ("), "{out}");
    let (code, v) = json(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(
        (code, v["verdict"].as_str(), v["failed"].as_bool()),
        (1, Some("fail"), Some(true))
    );
}

#[test]
fn verdict_and_exit_code_agree_over_the_test_data() {
    let files: Vec<String> = ["eas", "tfs", "check"]
        .iter()
        .flat_map(|d| std::fs::read_dir(crate::common::data(d)).unwrap())
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".bin") || p.ends_with(".tfrecord"))
        .collect();
    let faq = "tests/data/eas/faq_prod.bin";
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        for args in [
            vec!["diff", f.as_str(), faq, "--format", "json"],
            vec!["diff", faq, f.as_str(), "--format", "json"],
            vec![
                "check",
                f.as_str(),
                "--model",
                "tests/data/models/half_plus_two",
                "--format",
                "json",
            ],
        ] {
            let (code, out, _) = run(&args);
            let Ok(v) = serde_json::from_str::<Value>(&out) else {
                panic!("{args:?}: no JSON document (exit {code}): {out}");
            };
            let verdict = v["verdict"].as_str().unwrap().to_string();
            assert_eq!(exit_of(&verdict), code, "{args:?}: verdict {verdict}");
            let errors = v["counts"]["errors"].as_u64().unwrap();
            if code == 1 {
                assert!(v["failed"].as_bool().unwrap(), "{args:?}");
            }
            if errors > 0 && code != 2 {
                assert_eq!(code, 1, "{args:?}: {errors} errors");
            }
            // The human output's last line says the same verdict in the same word.
            let human: Vec<&str> = args[..args.len() - 2].to_vec();
            let (hcode, hout, _) = run(&human);
            assert_eq!(hcode, code, "{human:?}");
            let last = hout.lines().last().unwrap_or_default();
            // A warm-up (or model) that cannot be read ends a human run with the error
            // alone, on stderr.
            assert!(
                !hout.is_empty() || verdict == "unreadable",
                "{human:?}: no output"
            );
            assert!(
                hout.is_empty() || last.starts_with(&format!("result: {verdict} (")),
                "{human:?}: {last:?} against JSON's {verdict:?}"
            );
            seen.insert(verdict);
        }
    }
    // The data reaches every verdict but `undecided`.
    for v in [
        "same-executor",
        "new-executor",
        "incompatible",
        "ok",
        "fail",
        "unreadable",
    ] {
        assert!(seen.contains(v), "no case gave {v}: {seen:?}");
    }
}

#[test]
fn every_format_reports_an_unreadable_input() {
    let faq = "tests/data/eas/faq_prod.bin";
    let hp2 = "tests/data/models/half_plus_two";
    for (args, file) in [
        (
            vec!["diff", "no/such/warmup.bin", faq],
            "no/such/warmup.bin",
        ),
        (vec!["diff", faq, "no/such/prod.bin"], "no/such/prod.bin"),
        (
            vec!["check", "no/such/req.bin", "--model", hp2],
            "no/such/req.bin",
        ),
        (
            vec!["check", faq, "--model", "no/such/model"],
            "no/such/model",
        ),
    ] {
        let (code, v) = json(&[&args[..], &["--format", "json"]].concat());
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(v["verdict"], "unreadable", "{args:?}");
        assert_eq!(v["unreadable"][0]["file"], file, "{args:?}");
        let (code, out, _) = run(&[&args[..], &["--format", "github"]].concat());
        assert_eq!(code, 2, "{args:?}");
        assert!(
            out.starts_with(&format!("::error file={file},title=UNREADABLE::")),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn inspect_github_annotates_what_is_wrong_with_the_file() {
    let (code, out, _) = run(&[
        "inspect",
        "--format",
        "github",
        "tests/data/tfrecord/warmup_unsupported.tfrecord",
    ]);
    assert_eq!(code, 1);
    let errors = out.lines().filter(|l| l.starts_with("::error ")).count();
    assert_eq!(errors, 2, "{out}");
    assert!(out.contains("title=UNSUPPORTED_LOG_TYPE"), "{out}");
    assert!(
        out.trim_end().ends_with("2 errors, 0 warnings, 0 notes"),
        "{out}"
    );
}

#[test]
fn a_rank_change_tensorflow_ran_is_a_warning_in_diff_as_in_check() {
    // What TensorFlow answered for the rank-1 request (tests/data/gen/make_check_tf.py).
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::data("check/manifest.json")).unwrap(),
    )
    .unwrap();
    let case = m
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == "hp2_rank1.bin")
        .unwrap();
    assert!(
        case["tf_result"].as_str().unwrap().starts_with("ok"),
        "{case}"
    );
    let (_, check) = json(&[
        "check",
        "tests/data/check/hp2_rank1.bin",
        "--model",
        "tests/data/models/half_plus_two",
        "--format",
        "json",
    ]);
    let check_sev = check["requests"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "SHAPE_INCOMPATIBLE")
        .unwrap()["severity"]
        .clone();
    let diff_args = [
        "diff",
        "tests/data/check/hp2_dim.bin",
        "tests/data/check/hp2_rank1.bin",
        "--format",
        "json",
    ];
    let (code, diff) = json(&diff_args);
    let rank = diff["requests"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "RANK_CHANGED")
        .unwrap()
        .clone();
    assert_eq!(rank["severity"], check_sev);
    assert_eq!(rank["severity"], "warning");
    assert_eq!((code, diff["verdict"].as_str()), (0, Some("same-executor")));
    // A model compiled per shape: --strict-shapes makes it an error.
    let (code, strict) = json(&[&diff_args[..], &["--strict-shapes"]].concat());
    assert_eq!(code, 1);
    assert_eq!(strict["verdict"], "fail");
}

#[test]
fn quiet_silences_what_scrub_and_convert_leave_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.tfrecord");
    let o = out.to_str().unwrap();
    let src = "tests/data/tfrecord/warmup_every_kind.tfrecord";
    let (_, _, err) = run(&["scrub", src, "-o", o]);
    assert!(err.contains("tfreq: warning:"), "{err}");
    let (code, _, err) = run(&["-q", "scrub", src, "-o", o]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(&[
        "-q",
        "convert",
        "tests/data/eas/int_out_of_range.bin",
        "--wire",
        "tf-serving",
        "--lossy",
        "-o",
        o,
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// Writes `text` (protobuf text of one request) as a bare request of `wire` in `dir`.
fn build_text(dir: &std::path::Path, name: &str, text: &str, wire: &str) -> String {
    let src = dir.join(format!("{name}.txt"));
    std::fs::write(&src, text).unwrap();
    let out = dir.join(format!("{name}.bin"));
    let (code, _, err) = run(&[
        "build",
        src.to_str().unwrap(),
        "--wire",
        wire,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    out.display().to_string()
}

/// `DirectSession::GetOrCreateExecutors` sorts the fetch names without removing repeats
/// (src/analysis/key.rs cites the lines), and the EAS processor passes `output_filter` to
/// `Session::Run` as given: fetching "a_first" twice is another executor than fetching it
/// once. It was `same-executor`, exit 0, with a false ORDER_ONLY note.
#[test]
fn a_repeated_fetch_is_another_executor() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text, _) = run(&[
        "inspect",
        "--format",
        "text",
        "tests/data/eas/many_fetches.bin",
    ]);
    assert_eq!(text.matches("output_filter: \"a_first\"").count(), 2);
    let mut seen = false;
    let once: String = text
        .lines()
        .filter(|l| {
            let dup = *l == "output_filter: \"a_first\"" && seen;
            seen |= *l == "output_filter: \"a_first\"";
            !dup
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let warm = build_text(dir.path(), "once", &once, "eas");
    let (code, v) = json(&[
        "diff",
        &warm,
        "tests/data/eas/many_fetches.bin",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{v}");
    let req = &v["requests"][0];
    assert_eq!(req["verdict"], "new-executor", "{v}");
    let codes: Vec<&str> = req["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"FETCH_ADDED"), "{codes:?}");
    assert!(!codes.contains(&"ORDER_ONLY"), "{codes:?}");
    // The other way round: production fetches it once, the warm-up twice.
    let (code, out, _) = run(&["diff", "tests/data/eas/many_fetches.bin", &warm]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FETCH_MISSING") && out.contains("\"a_first\" once, the warm-up twice"),
        "{out}"
    );
    // The same request on both sides is the same executor.
    let (code, out, _) = run(&[
        "diff",
        "tests/data/eas/many_fetches.bin",
        "tests/data/eas/many_fetches.bin",
    ]);
    assert_eq!(code, 0, "{out}");
    // keys counts them apart, repeats listed.
    let (_, v) = json(&[
        "keys",
        &warm,
        "tests/data/eas/many_fetches.bin",
        "--format",
        "json",
    ]);
    assert_eq!(v["executor_keys"], 2, "{v}");
    let fetches: Vec<String> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["fetches"].to_string())
        .collect();
    assert!(
        fetches.contains(&r#"["a_first","a_first","b","m","out:0","z_last"]"#.to_string()),
        "{fetches:?}"
    );
}

/// One session per model: requests of two models with the same names are two executor
/// keys; `--model-name` picks one; a warm-up record naming another model than production
/// is a note (TF Serving ignores model_spec.name in warm-up records), not an error.
#[test]
fn the_model_is_part_of_the_key() {
    let shards = [
        "tests/data/compressed/prediction_logs-00000-of-00002.gz",
        "tests/data/compressed/prediction_logs-00001-of-00002.gz",
    ];
    let (code, v) = json(&["keys", shards[0], shards[1], "--format", "json"]);
    assert_eq!(code, 0);
    let models: Vec<&str> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["faq", "my_model"], "{v}");
    let all = v["requests"].as_u64().unwrap();
    let faq = v["keys"][0]["count"].as_u64().unwrap();
    let (code, out, err) = run(&[
        "keys",
        shards[0],
        shards[1],
        "--format",
        "json",
        "--model-name",
        "faq",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["requests"].as_u64(), Some(faq));
    assert_eq!(v["executor_keys"], 1);
    assert!(
        err.contains(&format!(
            "{} requests of other models left out (\"my_model\")",
            all - faq
        )),
        "{err}"
    );

    // The same request naming another model: another key for keys, a note for diff.
    let dir = tempfile::tempdir().unwrap();
    let (_, text, _) = run(&["inspect", "--format", "text", "tests/data/tfs/faq_prod.bin"]);
    assert!(text.contains("name: \"faq\""));
    let v2 = build_text(
        dir.path(),
        "v2",
        &text.replace("name: \"faq\"", "name: \"faq_v2\""),
        "tf-serving",
    );
    let (_, v) = json(&[
        "keys",
        "tests/data/tfs/faq_prod.bin",
        &v2,
        "--format",
        "json",
    ]);
    assert_eq!(v["executor_keys"], 2, "{v}");
    let (code, v) = json(&[
        "diff",
        "tests/data/tfs/faq_prod.bin",
        &v2,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{v}");
    let req = &v["requests"][0];
    assert_eq!(req["verdict"], "same-executor", "{v}");
    let f = req["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "MODEL_NAME_CHANGED")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(f["severity"], "note");
}

/// One rule for a request that names no signature: `check` checks it against
/// `serving_default`, so `diff` compares it as `serving_default` too, each with a
/// SIGNATURE_DEFAULTED note. `diff` called it SIGNATURE_CHANGED, new-executor, exit 1.
#[test]
fn diff_and_check_default_the_signature_alike() {
    let model = "tests/data/models/half_plus_two";
    let (code, v) = json(&[
        "check",
        "tests/data/eas/no_signature.bin",
        "--model",
        model,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{v}");
    let checked = v["requests"][0]["key"]["signature"].clone();
    assert_eq!(checked, "serving_default", "{v}");
    let (code, v) = json(&[
        "diff",
        "tests/data/eas/spec_vector.bin",
        "tests/data/eas/no_signature.bin",
        "--model",
        model,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{v}");
    let req = &v["requests"][0];
    assert_eq!(req["verdict"], "same-executor", "{v}");
    assert_eq!(req["key"]["signature"], checked, "{v}");
    let codes: Vec<&str> = req["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["SIGNATURE_DEFAULTED"], "{v}");
}

/// The warm-up of `diff` is one file; a SavedModel directory stands for the warm-up TF
/// Serving loads from it (assets.extra/tf_serving_warmup_requests), any other directory
/// is refused in words that say so (it was "is a directory", where docs/commands.md
/// promises directories).
#[test]
fn a_savedmodel_directory_stands_for_its_warmup() {
    let dir = "tests/data/models/half_plus_two";
    let file = "tests/data/models/half_plus_two/assets.extra/tf_serving_warmup_requests";
    let prod = "tests/data/eas/spec_vector.bin";
    let (c1, from_dir, _) = run(&["diff", dir, prod, "--format", "json"]);
    let (c2, from_file, _) = run(&["diff", file, prod, "--format", "json"]);
    assert_eq!((c1, &from_dir), (c2, &from_file));
    let (code, _, err) = run(&["diff", "tests/data/tfrecord", prod]);
    assert_eq!(code, 2);
    assert!(
        err.contains("is a directory without assets.extra/tf_serving_warmup_requests"),
        "{err}"
    );
}
