//! `check` holds each classify, regress and multi-inference request's
//! `tf.train.Example`s to the features the signature's `ParseExample` reads, and its
//! verdict matches what TensorFlow answered when the generator ran the request
//! (tests/data/examples/answers.json, `tests/data/gen/make_examples.py`), case by case:
//! a request TensorFlow ran has no feature finding, a request it refused for a feature
//! has that finding first, in TensorFlow's words.

use serde_json::Value;
use tfreq::analysis::{CheckOptions, Severity, check};
use tfreq::formats::read_model;
use tfreq::formats::{InputOptions, read};

fn dir() -> std::path::PathBuf {
    crate::common::root().join("tests/data/examples")
}

const FEATURE_CODES: [&str; 3] = ["FEATURE_MISSING", "FEATURE_KIND", "FEATURE_LENGTH"];

#[test]
fn check_matches_what_tensorflow_answered() {
    holds_check_to("answers.json", None, 3);
}

/// The same requests against tf1_examples_v1, whose graph parses the same features with the
/// V1 op `ParseExample` (tests/data/examples/answers_v1.json).
#[test]
fn check_matches_what_tensorflow_answered_with_the_v1_parse_op() {
    holds_check_to("answers_v1.json", Some("tf1_examples_v1"), 2);
}

/// `check` of each request in `answers` against the model that answered it; `only`: every
/// row must be for that model; at least `min_predicts` of them predict over examples.
fn holds_check_to(answers: &str, only: Option<&str>, min_predicts: usize) {
    let answers: Value =
        serde_json::from_slice(&std::fs::read(dir().join(answers)).unwrap()).unwrap();
    let (mut compared, mut predicts) = (0, 0);
    for a in answers.as_array().unwrap() {
        let ty = a["type"].as_str().unwrap_or("");
        let file = a["file"].as_str().unwrap();
        if a["source"] != "tensorflow_run"
            || !file.ends_with(".pb")
            || !(ty.ends_with("ClassificationRequest")
                || ty.ends_with("RegressionRequest")
                || ty.ends_with("MultiInferenceRequest")
                || ty.ends_with("PredictRequest"))
        {
            continue;
        }
        // A predict request over serialized examples: its string feed's examples are
        // held to the same spec.
        predicts += usize::from(ty.ends_with("PredictRequest"));
        if let Some(m) = only {
            assert_eq!(a["model"], m, "{file}");
        }
        let model = dir().join("models").join(a["model"].as_str().unwrap());
        let (sigs, _) = read_model(&model).unwrap();
        let bytes = tfreq::read_input(&dir().join(file)).unwrap();
        let records = read(bytes, &InputOptions::new())
            .unwrap()
            .into_records()
            .unwrap();
        let report = check(&records[0].message, &sigs, &CheckOptions::default());
        let found: Vec<_> = report
            .findings()
            .filter(|f| FEATURE_CODES.contains(&f.code.as_str()))
            .collect();
        assert!(
            report
                .findings()
                .all(|f| f.code.as_str() != "RECORD_NOT_COMPARED"),
            "{file}: the spec is read from the SavedModel"
        );
        match (a["result"].as_str().unwrap(), a["case"].as_str().unwrap()) {
            ("ok", _) => {
                assert!(
                    found.is_empty(),
                    "{file}: TensorFlow ran it; tfreq says {found:?}"
                );
                assert!(
                    report.findings().all(|f| f.severity != Severity::Error),
                    "{file}: {:?}",
                    report.findings().collect::<Vec<_>>()
                );
            }
            ("error", case) => {
                let want = a["message"].as_str().unwrap();
                let want = want.strip_prefix("Name: <unknown>, ").unwrap_or(want);
                let first = found
                    .first()
                    .unwrap_or_else(|| panic!("{file}: {case} not found"));
                let code = match case {
                    "MISSING_FEATURE" => "FEATURE_MISSING",
                    c => c,
                };
                assert_eq!(first.code.as_str(), code, "{file}");
                assert_eq!(first.message, want, "{file}: TensorFlow's words");
            }
            other => panic!("{file}: {other:?}"),
        }
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} requests compared");
    assert!(
        predicts >= min_predicts,
        "only {predicts} predict requests over examples"
    );
}

#[test]
fn the_check_command_fails_a_request_missing_a_required_feature() {
    let out = crate::common::bin()
        .args(["check", "--format", "json", "--model"])
        .arg(dir().join("models/tf1_examples"))
        .arg(dir().join("requests/classify_missing_x.pb"))
        .arg(dir().join("requests/classify_valid.pb"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<&str> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["incompatible", "ok"], "{v:#}");
}
