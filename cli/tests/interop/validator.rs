//! `tfreq diff` / `check` / `signature` on files made by the real software: requests by
//! eas-prediction and tensorflow-serving-api (tests/data/{eas,tfs,validator}), models
//! exported by TensorFlow 2.21 with their `saved_model_cli show --all` output and TF
//! Serving metadata JSON (tests/data/models).

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use tfreq::Message;
use tfreq::analysis::{CheckOptions, check_labeled};
use tfreq::analysis::{DiffOptions, diff_labeled};
use tfreq::analysis::{Labeled, Verdict};
use tfreq::formats::{ModelSource, model_source, read_model};

const MODELS: [&str; 3] = ["faq", "two_sigs", "half_plus_two"];

fn msg(p: &str) -> Message {
    let b = tfreq::read_input(&data(p)).unwrap();
    tfreq::decode(&b).unwrap()
}

use crate::common::{data, json, run, s};

/// Every (code, name) of a JSON report.
fn codes(v: &Value) -> Vec<(String, String)> {
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn has(v: &Value, code: &str, name: &str) -> bool {
    codes(v).iter().any(|(c, n)| c == code && n == name)
}

fn severity_of(v: &Value, code: &str) -> String {
    v["requests"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .map(|f| f["severity"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Model readers
// ---------------------------------------------------------------------------------------

#[test]
fn three_model_readers_agree() {
    for m in MODELS {
        let (dir, s1) = read_model(&data(&format!("models/{m}"))).unwrap();
        let (pb, _) = read_model(&data(&format!("models/{m}/saved_model.pb"))).unwrap();
        let (meta, s2) = read_model(&data(&format!("models/{m}.metadata.json"))).unwrap();
        let (cli, s3) = read_model(&data(&format!("models/{m}.saved_model_cli.txt"))).unwrap();
        assert_eq!(
            (s1, s2, s3),
            (
                ModelSource::SavedModel,
                ModelSource::Metadata,
                ModelSource::SavedModelCli
            )
        );
        assert_eq!(dir, pb, "{m}");
        assert!(!dir.meta_graphs.is_empty(), "{m}");
        // Only the graph says which tf.Example features a signature parses
        // (cli/tests/interop/example_spec.rs): the other two readers have the rest.
        let mut dir = dir;
        for g in &mut dir.meta_graphs {
            for s in g.signatures.values_mut() {
                s.examples = None;
            }
        }
        assert_eq!(dir, meta, "{m}: SavedModel vs metadata JSON");
        // saved_model_cli does not print defaults; these models have none.
        assert!(
            dir.meta_graphs
                .iter()
                .all(|g| g.signatures.values().all(|s| s.defaults.is_empty()))
        );
        assert_eq!(dir, cli, "{m}: SavedModel vs saved_model_cli text");
    }
}

#[test]
fn faq_signature_is_the_faq_model() {
    let (m, _) = read_model(&data("models/faq")).unwrap();
    let g = m.meta_graph("serve").unwrap();
    assert_eq!(g.tags, vec!["serve"]);
    let s = &g.signatures["serving_default"];
    assert_eq!(s.method_name, "tensorflow/serving/predict");
    let shape = |a: &str| s.inputs[a].shape.clone();
    assert_eq!(shape("threshold"), Some(vec![]));
    assert_eq!(shape("model_id"), Some(vec![]));
    assert_eq!(shape("input_holder"), Some(vec![-1]));
    assert_eq!(s.inputs["threshold"].dtype.to_string(), "DT_FLOAT");
    let outs: Vec<_> = s.outputs.keys().cloned().collect();
    assert_eq!(outs, ["model_version_id", "sorted_labels", "sorted_probs"]);
    assert_eq!(s.outputs["sorted_labels"].shape, Some(vec![-1, 3]));
    // TF2's init op: DT_INVALID, unknown rank.
    let init = &g.signatures["__saved_model_init_op"].outputs["__saved_model_init_op"];
    assert_eq!((init.name.as_str(), init.shape.clone()), ("NoOp", None));
}

#[test]
fn sniff_tells_the_formats_apart() {
    assert_eq!(
        model_source(&data("models/two_sigs")).unwrap(),
        ModelSource::SavedModel
    );
    assert_eq!(
        model_source(&data("models/two_sigs.metadata.json")).unwrap(),
        ModelSource::Metadata
    );
    assert_eq!(
        model_source(&data("models/two_sigs.saved_model_cli.txt")).unwrap(),
        ModelSource::SavedModelCli
    );
    assert!(model_source(&data("eas/faq_prod.bin")).is_err());
}

/// `tfreq signature` prints what saved_model_cli printed, up to the ops line (which
/// needs the graph).
#[test]
fn signature_command_prints_like_saved_model_cli() {
    for m in MODELS {
        let want =
            std::fs::read_to_string(data(&format!("models/{m}.saved_model_cli.txt"))).unwrap();
        let cut = want.find("The MetaGraph with tag set").expect("ops line");
        let r = run(&["signature", &s(&format!("models/{m}"))]);
        assert_eq!(r.code, 0, "{}", r.err);
        assert_eq!(r.out, want[..cut], "{m}");
    }
    let (code, v) = json(&["signature", &s("models/two_sigs.metadata.json")]);
    assert_eq!(code, 0);
    let sig = &v["meta_graphs"][0]["signatures"]["predict_images"];
    assert_eq!(
        sig["inputs"]["images"]["shape"],
        serde_json::json!([-1, 28, 28, 1])
    );
    assert_eq!(sig["inputs"]["images"]["dtype"], "DT_FLOAT");
}

// ---------------------------------------------------------------------------------------
// diff: production requests against their warm-up
// ---------------------------------------------------------------------------------------

#[test]
fn faq_case_fails_and_names_model_version_id() {
    for w in ["eas", "tfs"] {
        let r = run(&[
            "diff",
            &s(&format!("{w}/faq_warmup.bin")),
            &s(&format!("{w}/faq_prod.bin")),
        ]);
        assert_eq!(r.code, 1, "{w}: {}", r.out);
        assert!(r.out.contains("new-executor"), "{}", r.out);
        assert!(
            r.out.contains("FETCH_ADDED  + model_version_id"),
            "{}",
            r.out
        );
        let (code, v) = json(&[
            "diff",
            &s(&format!("{w}/faq_warmup.bin")),
            &s(&format!("{w}/faq_prod.bin")),
        ]);
        assert_eq!(code, 1);
        assert_eq!(v["verdict"], "new-executor");
        assert_eq!(
            codes(&v),
            [("FETCH_ADDED".to_string(), "model_version_id".to_string())]
        );
    }
}

#[test]
fn reordered_fetches_pass_with_an_order_note() {
    for w in ["eas", "tfs"] {
        let args = [
            "diff",
            &s(&format!("{w}/faq_prod.bin")),
            &s(&format!("{w}/faq_prod_reordered.bin")),
        ];
        let r = run(&args);
        assert_eq!(r.code, 0, "{w}: {}", r.out);
        assert!(r.out.contains("same-executor"), "{}", r.out);
        assert!(r.out.contains("order does not matter"), "{}", r.out);
        let (_, v) = json(&args);
        assert_eq!(v["verdict"], "same-executor");
        assert!(has(&v, "ORDER_ONLY", "output_filter"), "{v}");
        assert_eq!(severity_of(&v, "ORDER_ONLY"), "note");
    }
}

#[test]
fn dtype_change_is_incompatible() {
    for w in ["eas", "tfs"] {
        let (code, v) = json(&[
            "diff",
            &s(&format!("{w}/faq_prod.bin")),
            &s(&format!("{w}/faq_prod_dtype_changed.bin")),
        ]);
        assert_eq!(code, 1);
        assert_eq!(v["verdict"], "incompatible");
        assert!(has(&v, "DTYPE_CHANGED", "threshold"), "{v}");
        let f = &v["requests"][0]["findings"][0];
        assert_eq!(
            (f["left"].as_str(), f["right"].as_str()),
            (Some("DT_FLOAT"), Some("DT_DOUBLE"))
        );
    }
}

#[test]
fn missing_and_extra_feeds_fail() {
    for w in ["eas", "tfs"] {
        let (code, v) = json(&[
            "diff",
            &s(&format!("{w}/faq_prod.bin")),
            &s(&format!("{w}/faq_prod_missing_feed.bin")),
        ]);
        assert_eq!(code, 1);
        assert_eq!(v["verdict"], "new-executor");
        assert_eq!(
            codes(&v),
            [("FEED_MISSING".to_string(), "model_id".to_string())]
        );
    }
    let (code, v) = json(&[
        "diff",
        &s("eas/faq_prod.bin"),
        &s("validator/eas_faq_extra_feed.bin"),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        codes(&v),
        [("FEED_ADDED".to_string(), "user_id".to_string())]
    );
    let r = run(&[
        "diff",
        &s("eas/faq_prod.bin"),
        &s("validator/eas_faq_extra_feed.bin"),
    ]);
    assert!(r.out.contains("FEED_ADDED  + user_id"), "{}", r.out);
}

#[test]
fn another_signature_fails() {
    for (w, p) in [
        ("eas", "eas_faq_other_signature"),
        ("tfs", "tfs_faq_other_signature"),
    ] {
        let (code, v) = json(&[
            "diff",
            &s(&format!("{w}/faq_prod.bin")),
            &s(&format!("validator/{p}.bin")),
        ]);
        assert_eq!(code, 1);
        assert_eq!(v["verdict"], "new-executor");
        assert!(has(&v, "SIGNATURE_CHANGED", "serving_v2"), "{v}");
        let f = &v["requests"][0]["findings"][0];
        assert_eq!(f["left"], "serving_default");
    }
}

#[test]
fn batch_size_change_warns_and_fails_when_strict() {
    for w in ["eas", "tfs"] {
        let args = [
            "diff",
            &s(&format!("{w}/faq_prod.bin")),
            &s(&format!("{w}/faq_prod_batch4.bin")),
        ];
        let (code, v) = json(&args);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["verdict"], "same-executor");
        assert!(has(&v, "BATCH_SIZE_CHANGED", "input_holder"));
        assert_eq!(severity_of(&v, "BATCH_SIZE_CHANGED"), "warning");
        let mut strict = args.to_vec();
        strict.push("--strict-shapes");
        let (code, v) = json(&strict);
        assert_eq!(code, 1, "{v}");
        assert_eq!(severity_of(&v, "BATCH_SIZE_CHANGED"), "error");
        assert_eq!(v["strict_shapes"], true);
    }
}

#[test]
fn empty_output_filter_needs_the_model() {
    let args = [
        "diff",
        &s("tfs/faq_prod.bin"),
        &s("validator/tfs_faq_fetch_all.bin"),
    ];
    let (code, v) = json(&args);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "undecided");
    assert!(has(&v, "FETCH_ALL_UNRESOLVED", ""));
    assert!(run(&args).out.contains("--model"));
    // With the model (any of its three forms): every output, so the same executor.
    for m in [
        "models/faq",
        "models/faq.metadata.json",
        "models/faq.saved_model_cli.txt",
    ] {
        let mut a = args.to_vec();
        let mp = s(m);
        a.extend(["--model", &mp]);
        let (code, v) = json(&a);
        assert_eq!(code, 0, "{m}: {v}");
        assert_eq!(v["verdict"], "same-executor");
        assert!(has(&v, "FETCH_ALL_RESOLVED", ""));
    }
    // Against the FAQ warm-up (two fetches), all outputs is a new fetch set.
    let (code, v) = json(&[
        "diff",
        &s("tfs/faq_warmup.bin"),
        &s("validator/tfs_faq_fetch_all.bin"),
        "--model",
        &s("models/faq"),
    ]);
    assert_eq!(code, 1);
    assert!(has(&v, "FETCH_ADDED", "model_version_id"), "{v}");
}

#[test]
fn several_warmups_cover_production_keys() {
    let w = [msg("eas/faq_warmup.bin"), msg("eas/faq_prod.bin")];
    let p = [
        msg("eas/faq_prod_reordered.bin"),
        msg("eas/faq_prod_batch4.bin"),
        msg("eas/faq_prod_missing_feed.bin"),
    ];
    let wl = ["warm 1", "warm 2"];
    let pl = ["reordered", "batch4", "missing"];
    let warm: Vec<Labeled> = w
        .iter()
        .zip(wl)
        .map(|(m, l)| Labeled::new(l, l, m))
        .collect();
    let prod: Vec<Labeled> = p
        .iter()
        .zip(pl)
        .map(|(m, l)| Labeled::new(l, l, m))
        .collect();
    let r = diff_labeled(&warm, &prod, &DiffOptions::default());
    let cov = r.coverage.as_ref().unwrap();
    assert_eq!(cov.len(), 2);
    let cold: Vec<_> = cov.iter().filter(|c| c.warmed_by.is_empty()).collect();
    assert_eq!(cold.len(), 1);
    assert_eq!(cold[0].requests, ["missing"]);
    assert_eq!(
        r.requests[0].warmed_by.as_deref(),
        Some(&["warm 2".to_string()][..])
    );
    assert_eq!(r.requests[0].verdict, Verdict::SameExecutor);
    assert_eq!(r.requests[2].verdict, Verdict::NewExecutor);
    let c: Vec<_> = r.requests[2]
        .findings
        .iter()
        .map(|f| f.code.as_str())
        .collect();
    assert_eq!(c, ["NOT_WARMED", "FEED_MISSING"]);
    assert_eq!(r.requests[2].compared_with.as_deref(), Some("warm 2"));
    assert!(r.failed && r.unreadable.is_empty());
}

#[test]
fn several_production_files_and_github_annotations() {
    let r = run(&[
        "diff",
        &s("eas/faq_warmup.bin"),
        &s("eas/faq_prod.bin"),
        &s("eas/faq_warmup.bin"),
        "--format",
        "github",
    ]);
    assert_eq!(r.code, 1);
    let first = r.out.lines().next().unwrap();
    let want = format!(
        "::error file={},title=FETCH_ADDED::",
        s("eas/faq_prod.bin")
            .replace(':', "%3A")
            .replace(',', "%2C")
    );
    assert!(first.starts_with(&want), "{first}");
    assert!(first.contains("model_version_id"));
    assert_eq!(r.out.lines().filter(|l| l.starts_with("::")).count(), 1);
}

// ---------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------

const FAQ_MODEL_FORMS: [&str; 3] = [
    "models/faq",
    "models/faq.metadata.json",
    "models/faq.saved_model_cli.txt",
];

#[test]
fn check_accepts_correct_requests() {
    for req in [
        "eas/faq_prod.bin",
        "tfs/faq_prod.bin",
        "eas/faq_warmup.bin",
        "tfs/faq_prod_batch4.bin",
    ] {
        for m in FAQ_MODEL_FORMS {
            let r = run(&["check", &s(req), "--model", &s(m)]);
            assert_eq!(r.code, 0, "{req} vs {m}: {}", r.out);
            assert!(r.out.contains(": ok"), "{}", r.out);
        }
    }
    let (code, v) = json(&[
        "check",
        &s("validator/eas_two_sigs_predict_images.bin"),
        "--model",
        &s("models/two_sigs"),
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["verdict"], "ok");
}

#[test]
fn check_flags_unknown_fetch_and_wrong_dtype() {
    for m in FAQ_MODEL_FORMS {
        for req in [
            "validator/tfs_faq_unknown_fetch.bin",
            "validator/eas_faq_unknown_fetch.bin",
        ] {
            let (code, v) = json(&["check", &s(req), "--model", &s(m)]);
            assert_eq!(code, 1);
            assert_eq!(
                codes(&v),
                [("UNKNOWN_FETCH".to_string(), "sorted_scores".to_string())]
            );
        }
        for req in [
            "tfs/faq_prod_dtype_changed.bin",
            "eas/faq_prod_dtype_changed.bin",
        ] {
            let (code, v) = json(&["check", &s(req), "--model", &s(m)]);
            assert_eq!(code, 1);
            assert_eq!(v["verdict"], "incompatible");
            assert_eq!(
                codes(&v),
                [("DTYPE_MISMATCH".to_string(), "threshold".to_string())]
            );
            let f = &v["requests"][0]["findings"][0];
            assert_eq!(
                (f["left"].as_str(), f["right"].as_str()),
                (Some("DT_DOUBLE"), Some("DT_FLOAT"))
            );
        }
    }
}

/// The same requests against the SavedModel, its metadata JSON and its saved_model_cli
/// text give the same findings.
#[test]
fn check_gives_the_same_findings_from_every_model_form() {
    let mut reqs: Vec<String> = Vec::new();
    for dir in ["eas", "tfs", "validator"] {
        for e in std::fs::read_dir(data(dir)).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".bin") && (name.starts_with("faq") || name.contains("_faq_")) {
                reqs.push(p.display().to_string());
            }
        }
    }
    reqs.sort();
    assert!(reqs.len() >= 20, "{reqs:?}");
    let mut base: Vec<&str> = vec!["check"];
    base.extend(reqs.iter().map(String::as_str));
    let mut results = Vec::new();
    for m in FAQ_MODEL_FORMS {
        let mut a = base.clone();
        let mp = s(m);
        a.extend(["--model", &mp]);
        let (code, mut v) = json(&a);
        assert_eq!(code, 1);
        v.as_object_mut().unwrap().remove("model");
        results.push(v);
    }
    assert_eq!(results[0], results[1], "SavedModel vs metadata JSON");
    assert_eq!(results[0], results[2], "SavedModel vs saved_model_cli");
}

#[test]
fn check_other_findings() {
    let c = |req: &str, model: &str, extra: &[&str]| {
        let mut a = vec!["check", &*Box::leak(s(req).into_boxed_str()), "--model"];
        a.push(Box::leak(s(model).into_boxed_str()));
        a.extend_from_slice(extra);
        json(&a)
    };
    let (code, v) = c("validator/eas_faq_other_signature.bin", "models/faq", &[]);
    assert_eq!(code, 1);
    assert!(has(&v, "UNKNOWN_SIGNATURE", "serving_v2"));
    // --signature overrides the request's.
    let (code, v) = c(
        "validator/eas_faq_other_signature.bin",
        "models/faq",
        &["--signature", "serving_default"],
    );
    assert_eq!(code, 0, "{v}");
    let (code, v) = c(
        "validator/eas_two_sigs_predict_images.bin",
        "models/two_sigs",
        &["--signature", "serving_default"],
    );
    assert_eq!(code, 1);
    assert!(
        has(&v, "UNKNOWN_FEED", "images")
            && has(&v, "MISSING_FEED", "x")
            && has(&v, "UNKNOWN_FETCH", "probs"),
        "{v}"
    );

    let (code, v) = c("validator/eas_faq_extra_feed.bin", "models/faq", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        codes(&v),
        [("UNKNOWN_FEED".to_string(), "user_id".to_string())]
    );
    let (_, v) = c("tfs/faq_prod_missing_feed.bin", "models/faq", &[]);
    assert_eq!(
        codes(&v),
        [("MISSING_FEED".to_string(), "model_id".to_string())]
    );

    let (code, v) = c(
        "validator/eas_two_sigs_bad_rank.bin",
        "models/two_sigs",
        &[],
    );
    // A warning: TF Serving does not check declared shapes (cli/tests/interop/check_tf.rs holds
    // this to what TensorFlow answered).
    assert_eq!(code, 0);
    assert!(has(&v, "SHAPE_INCOMPATIBLE", "x"));
    assert_eq!(severity_of(&v, "SHAPE_INCOMPATIBLE"), "warning");
    let (code, v) = c("validator/eas_two_sigs_bad_dim.bin", "models/two_sigs", &[]);
    assert_eq!(code, 0);
    assert!(has(&v, "SHAPE_INCOMPATIBLE", "x"));
    assert!(
        v["requests"][0]["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("dim 1")
    );
    // -1 matches any batch size.
    let (code, _) = c("validator/tfs_two_sigs_x.bin", "models/two_sigs", &[]);
    assert_eq!(code, 0);

    let (code, v) = c("validator/tfs_faq_duplicate_fetch.bin", "models/faq", &[]);
    assert_eq!(code, 1);
    assert!(has(&v, "DUPLICATE_FETCH", "sorted_labels"));

    // Empty output_filter on TF Serving: a note of what it resolves to.
    let (code, v) = c("validator/tfs_faq_fetch_all.bin", "models/faq", &[]);
    assert_eq!(code, 0);
    let f = &v["requests"][0]["findings"][0];
    assert_eq!(f["code"], "EMPTY_OUTPUT_FILTER");
    assert_eq!(f["right"], "model_version_id, sorted_labels, sorted_probs");
}

#[test]
fn check_accepts_tensor_names_on_eas_only() {
    let (code, v) = json(&[
        "check",
        &s("validator/eas_faq_tensor_names.bin"),
        "--model",
        &s("models/faq"),
    ]);
    assert_eq!(code, 0, "{v}");
    let b = v["requests"][0]["bindings"].as_array().unwrap();
    assert_eq!(b.len(), 6);
    assert!(b.iter().all(|b| b["matched_by"] == "tensor-name"));
    let th = b
        .iter()
        .find(|b| b["name"] == "serving_default_threshold:0")
        .unwrap();
    assert_eq!(th["alias"], "threshold");
    let (_, v) = json(&["check", &s("eas/faq_prod.bin"), "--model", &s("models/faq")]);
    assert!(
        v["requests"][0]["bindings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["matched_by"] == "alias")
    );
    // TF Serving takes aliases only.
    let (code, v) = json(&[
        "check",
        &s("validator/tfs_faq_tensor_name_feed.bin"),
        "--model",
        &s("models/faq"),
    ]);
    assert_eq!(code, 1);
    assert!(
        has(&v, "UNKNOWN_FEED", "serving_default_threshold:0")
            && has(&v, "MISSING_FEED", "threshold")
    );
}

#[test]
fn library_check_matches_cli() {
    let (model, _) = read_model(&data("models/faq")).unwrap();
    let m = msg("tfs/faq_prod_dtype_changed.bin");
    let r = check_labeled(
        &[Labeled::new("f", "f", &m)],
        &model,
        &CheckOptions::default(),
    );
    assert_eq!(r.verdict, Verdict::Incompatible);
    assert_eq!(
        r.findings().map(|f| f.code.as_str()).collect::<Vec<_>>(),
        ["DTYPE_MISMATCH"]
    );
    // An unknown tag set is a finding in the library (the CLI refuses it with exit 2).
    let opts = CheckOptions {
        tag: "gpu".into(),
        ..Default::default()
    };
    let r = check_labeled(&[Labeled::new("f", "f", &m)], &model, &opts);
    assert_eq!(
        r.findings().map(|f| f.code.as_str()).collect::<Vec<_>>(),
        ["UNKNOWN_TAG_SET"]
    );
}

// ---------------------------------------------------------------------------------------
// JSON document, exit codes
// ---------------------------------------------------------------------------------------

#[test]
fn json_carries_every_finding() {
    let files = [
        "eas/faq_prod_reordered.bin",
        "eas/faq_prod_missing_feed.bin",
        "eas/faq_prod_dtype_changed.bin",
        "eas/faq_prod_batch4.bin",
        "validator/eas_faq_extra_feed.bin",
    ];
    let mut args = vec!["diff".to_string(), s("eas/faq_warmup.bin")];
    args.extend(files.iter().map(|f| s(f)));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, v) = json(&a);
    assert_eq!(code, 1);
    assert_eq!(v["command"], "diff");
    let reqs = v["requests"].as_array().unwrap();
    assert_eq!(reqs.len(), files.len());
    let all: Vec<&Value> = reqs
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .collect();
    let n = |sev: &str| all.iter().filter(|f| f["severity"] == sev).count() as u64;
    assert_eq!(v["counts"]["errors"].as_u64(), Some(n("error")));
    assert_eq!(v["counts"]["warnings"].as_u64(), Some(n("warning")));
    assert_eq!(v["counts"]["notes"].as_u64(), Some(n("note")));
    for f in &all {
        assert!(
            f["code"].is_string() && f["severity"].is_string() && f["message"].is_string(),
            "{f}"
        );
    }
    // The human output shows the same findings.
    let human = run(&a[..a.len()]);
    for f in &all {
        assert!(human.out.contains(f["code"].as_str().unwrap()), "{f}");
        assert!(human.out.contains(f["message"].as_str().unwrap()), "{f}");
    }
    assert!(v["coverage"].is_array());
}

#[test]
fn unreadable_inputs_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let bad_json = tmp.path().join("meta.json");
    std::fs::write(
        &bad_json,
        "{\"model_spec\": {}, \"metadata\": {\"signature_def\": ",
    )
    .unwrap();
    let wrong_json = tmp.path().join("wrong.json");
    std::fs::write(
        &wrong_json,
        r#"{"metadata": {"signature_def": {"signature_def": {"s": {"inputs": {"x": {"dtype": "DT_NOPE"}}}}}}}"#,
    )
    .unwrap();
    let bad_cli = tmp.path().join("cli.txt");
    std::fs::write(
        &bad_cli,
        "\nMetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:\n\nsignature_def['s']:\n  what is this\n",
    )
    .unwrap();
    let bad_pb = tmp.path().join("saved_model.pb");
    std::fs::write(&bad_pb, [0x08, 0x01, 0x12, 0x40, 0x0a]).unwrap();
    let empty_dir = tmp.path().join("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    let garbage = data("models/faq/variables/variables.index");
    let missing = tmp.path().join("nope.bin");
    let p = |x: &Path| x.display().to_string();
    let prod = s("eas/faq_prod.bin");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["diff".into(), p(&missing), prod.clone()], "nope.bin"),
        (
            vec!["diff".into(), prod.clone(), p(&garbage)],
            "variables.index",
        ),
        (
            vec![
                "diff".into(),
                prod.clone(),
                prod.clone(),
                "--model".into(),
                p(&missing),
            ],
            "nope.bin",
        ),
        (
            vec!["check".into(), prod.clone(), "--model".into(), p(&bad_json)],
            "line 1",
        ),
        (
            vec![
                "check".into(),
                prod.clone(),
                "--model".into(),
                p(&wrong_json),
            ],
            "DT_NOPE",
        ),
        (
            vec!["check".into(), prod.clone(), "--model".into(), p(&bad_cli)],
            "line 5",
        ),
        (
            vec!["check".into(), prod.clone(), "--model".into(), p(&bad_pb)],
            "SavedModel",
        ),
        (
            vec![
                "check".into(),
                prod.clone(),
                "--model".into(),
                p(&empty_dir),
            ],
            "saved_model.pb",
        ),
        (
            vec!["check".into(), prod.clone(), "--model".into(), prod.clone()],
            "not a SavedModel",
        ),
        (
            vec![
                "check".into(),
                prod.clone(),
                "--model".into(),
                s("models/faq"),
                "--tag".into(),
                "gpu".into(),
            ],
            "gpu",
        ),
        (vec!["check".into(), prod.clone()], "--model"),
        (vec!["signature".into(), p(&missing)], "nope.bin"),
        (vec!["diff".into(), prod.clone()], "PROD"),
        (
            vec!["diff".into(), prod.clone(), s("eas/response.bin")],
            "PredictResponse, not a request",
        ),
        (
            vec![
                "check".into(),
                s("tfs/response.bin"),
                "--model".into(),
                s("models/faq"),
            ],
            "not a request",
        ),
    ];
    for (args, needle) in cases {
        for fmt in ["human", "json"] {
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            if a[0] != "signature" {
                a.extend(["--format", fmt]);
            }
            let r = run(&a);
            assert_eq!(r.code, 2, "{a:?}: {}{}", r.out, r.err);
            assert!(r.err.contains(needle), "{a:?}: {}", r.err);
            assert!(!r.err.contains("panicked"), "{}", r.err);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The validator's own test requests (tests/data/validator) against their manifest
// ---------------------------------------------------------------------------------------

fn validator_manifest() -> Vec<Value> {
    let p = data("validator/manifest.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Each file decodes to what was handed to the SDK (signature, feeds, fetches).
#[test]
fn validator_requests_match_their_manifest() {
    let entries = validator_manifest();
    assert_eq!(entries.len(), 13);
    for e in &entries {
        let file = e["file"].as_str().unwrap();
        let m = msg(&format!("validator/{file}"));
        let wire = if e["wire"] == "eas" {
            "eas"
        } else {
            "tf-serving"
        };
        assert_eq!(m.wire.as_str(), wire, "{file}");
        assert_eq!(
            m.signature_name,
            e["signature_name"].as_str().unwrap(),
            "{file}"
        );
        let fetches = crate::common::fetches(e);
        assert_eq!(m.fetches, fetches, "{file}");
        let feeds = e["feeds"].as_array().unwrap();
        assert_eq!(m.tensors.len(), feeds.len(), "{file}");
        for (t, f) in m.tensors.iter().zip(feeds) {
            assert_eq!(t.name, f["name"].as_str().unwrap(), "{file}");
            assert_eq!(t.dtype.to_string(), f["dtype"].as_str().unwrap(), "{file}");
            let shape = crate::common::shape(f);
            assert_eq!(t.shape.sizes(), shape, "{file}");
        }
    }
}

/// Where the generator ran the request through the exported faq model with TensorFlow
/// (`tf_result`), `check` agrees on whether the model accepts it. Duplicate output
/// aliases are the exception: calling the model directly accepts them, TF Serving's
/// Predict refuses them ("duplicate output tensor alias" in
/// <https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/predict_util.cc>),
/// and `check` follows TF Serving.
#[test]
fn check_agrees_with_tensorflow_on_the_faq_model() {
    let mut n = 0;
    for e in validator_manifest() {
        let Some(tf_result) = e["tf_result"].as_str() else {
            continue;
        };
        let file = e["file"].as_str().unwrap();
        let (code, v) = json(&[
            "check",
            &s(&format!("validator/{file}")),
            "--model",
            &s("models/faq"),
        ]);
        if file == "tfs_faq_duplicate_fetch.bin" {
            assert_eq!((tf_result, code), ("ok", 1));
            continue;
        }
        assert_eq!(
            code == 0,
            tf_result == "ok",
            "{file}: TensorFlow said {tf_result:?}; tfreq: {v}"
        );
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn colour_only_when_asked() {
    let args = ["diff", &s("eas/faq_warmup.bin"), &s("eas/faq_prod.bin")];
    let plain = run(&args);
    assert!(!plain.out.contains('\x1b'), "{}", plain.out);
    let mut a = args.to_vec();
    a.extend(["--color", "always"]);
    let o = Command::cargo_bin("tfreq")
        .unwrap()
        .args(&a)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("\x1b[31m"));
    // JSON never has colour.
    let (_, v) = json(&args);
    assert!(!v.to_string().contains('\x1b'));
}

#[test]
fn tensor_names_and_aliases_of_one_tensor_are_pointed_out_with_the_model() {
    let args = [
        "diff",
        &s("eas/faq_prod.bin"),
        &s("validator/eas_faq_tensor_names.bin"),
    ];
    let (code, v) = json(&args);
    assert_eq!(code, 1);
    assert_eq!(codes(&v).len(), 12);
    assert!(!v.to_string().contains("name the same tensor"));
    let mut a = args.to_vec();
    let m = s("models/faq");
    a.extend(["--model", &m]);
    let (_, v) = json(&a);
    let f = v["requests"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "serving_default_threshold:0")
        .unwrap();
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains(r#""serving_default_threshold:0" and "threshold" name the same tensor"#),
        "{f}"
    );
}
