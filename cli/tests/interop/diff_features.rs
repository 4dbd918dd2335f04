//! `diff` of classify, regress and multi-inference requests whose examples
//! carry other features than the warm-up's. The executor key is the same whatever the
//! features; what matters is whether the model's `ParseExample` refuses a request that
//! lacks one. Held to TensorFlow's answers (tests/data/examples/answers.json, written by
//! `tests/data/gen/make_examples.py`): with the model, `diff` says a side lacks a required
//! feature (an error naming it) exactly when TensorFlow refused that side's request with
//! "Feature: NAME (data type: ...) is required but could not be found."

use std::collections::BTreeSet;
use std::path::PathBuf;

use bytes::Bytes;
use serde_json::Value;
use tfreq::Message;
use tfreq::analysis::Verdict;
use tfreq::analysis::{DiffOptions, Finding, Severity, diff};
use tfreq::formats::read_model;
use tfreq::formats::{InputOptions, read};
use tfreq::signature::ModelSignatures;

fn dir() -> PathBuf {
    crate::common::root().join("tests/data/examples")
}

fn answers() -> Vec<Value> {
    serde_json::from_slice::<Value>(&std::fs::read(dir().join("answers.json")).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn bare(rel: &str) -> Message {
    let b = Bytes::from(std::fs::read(dir().join(rel)).unwrap());
    read(b, &InputOptions::new())
        .unwrap()
        .into_records()
        .unwrap()
        .remove(0)
        .message
}

fn model(name: &str) -> ModelSignatures {
    read_model(&dir().join("models").join(name)).unwrap().0
}

/// The feature TensorFlow said was required but missing, from its answer.
fn required_missing(answer: &Value) -> Option<String> {
    let m = answer["message"].as_str()?;
    let rest = m.split("Feature: ").nth(1)?;
    rest.contains("is required but could not be found")
        .then(|| rest.split(' ').next().unwrap().to_string())
}

/// The feature findings of a report, as (code, severity, name).
fn feature_findings(r: &tfreq::analysis::Report) -> Vec<(String, Severity, String)> {
    r.findings()
        .filter(|f: &&Finding| f.code.as_str().starts_with("FEATURE_NOT_IN_"))
        .map(|f| {
            (
                f.code.as_str().to_string(),
                f.severity,
                f.name.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Every request of the same model, method and signature as a reference request that
/// TensorFlow ran, diffed both ways against it.
#[test]
fn a_required_feature_one_side_lacks_is_an_error_exactly_when_tensorflow_refused_it() {
    let answers = answers();
    let mut pairs = 0;
    let mut errors = 0;
    for (model_name, reference) in [
        ("tf1_examples", "requests/classify_valid.pb"),
        ("tf1_examples", "requests/regress_valid.pb"),
        ("tf1_examples", "requests/multi_valid.pb"),
        ("keras_examples", "requests/keras_classify_valid.pb"),
    ] {
        let sigs = model(model_name);
        let mg = sigs.meta_graph("serve").unwrap();
        let with_model = DiffOptions {
            model: Some(mg),
            ..Default::default()
        };
        let r = bare(reference);
        for a in &answers {
            let file = a["file"].as_str().unwrap();
            if !file.starts_with("requests/") || a["model"] != model_name || file == reference {
                continue;
            }
            let c = bare(file);
            if c.method != r.method || c.input.as_ref().is_none_or(|i| i.examples.is_empty()) {
                continue;
            }
            // The candidate as the warm-up, then as production.
            for (warm, prod, code) in [
                (&c, &r, "FEATURE_NOT_IN_WARMUP"),
                (&r, &c, "FEATURE_NOT_IN_PRODUCTION"),
            ] {
                let report = diff([warm], prod, &with_model);
                if report.requests[0].verdict != Verdict::SameExecutor {
                    // Another signature (UNKNOWN_SIGNATURE, WRONG_METHOD cases): not a
                    // feature comparison.
                    continue;
                }
                pairs += 1;
                let found = feature_findings(&report);
                let errs: BTreeSet<String> = found
                    .iter()
                    .filter(|(k, s, _)| k == code && *s == Severity::Error)
                    .map(|(_, _, n)| n.clone())
                    .collect();
                let want: BTreeSet<String> = required_missing(a).into_iter().collect();
                assert_eq!(
                    errs, want,
                    "{file} as {code}: tfreq {found:?}, TensorFlow {:?}",
                    a["message"]
                );
                errors += errs.len();
                assert!(
                    found.iter().all(|(_, s, _)| *s != Severity::Warning),
                    "{file}: with the model every feature is judged: {found:?}"
                );
                assert_eq!(report.failed, !want.is_empty(), "{file} as {code}");
            }
        }
    }
    assert!(pairs >= 30, "only {pairs} pairs compared");
    assert!(errors >= 8, "only {errors} required features found missing");
}

#[test]
fn features_not_required_are_notes_saying_why() {
    let sigs = model("tf1_examples");
    let opts = DiffOptions {
        model: sigs.meta_graph("serve"),
        ..Default::default()
    };
    // classify_defaults: x only; the model gives age a default, tags is sparse.
    let report = diff(
        [&bare("requests/classify_defaults.pb")],
        &bare("requests/classify_valid.pb"),
        &opts,
    );
    assert_eq!(report.requests[0].verdict, Verdict::SameExecutor);
    assert!(!report.failed);
    let found = feature_findings(&report);
    assert_eq!(
        found,
        [
            ("FEATURE_NOT_IN_WARMUP".into(), Severity::Note, "age".into()),
            (
                "FEATURE_NOT_IN_WARMUP".into(),
                Severity::Note,
                "tags".into()
            ),
        ]
    );
    let msgs: Vec<&str> = report.findings().map(|f| f.message.as_str()).collect();
    assert!(
        msgs.iter().any(|m| m.contains("with a default (0)")),
        "{msgs:?}"
    );
    assert!(msgs.iter().any(|m| m.contains("sparse")), "{msgs:?}");
    let differ: Vec<_> = report
        .findings()
        .filter(|f| f.code.as_str() == "FEATURES_DIFFER")
        .collect();
    assert_eq!(differ.len(), 1);
    assert_eq!(differ[0].severity, Severity::Note);
    assert_eq!(
        (differ[0].left.as_deref(), differ[0].right.as_deref()),
        (Some("x"), Some("age, tags, x"))
    );
    // Features the spec does not read at all (classify_extra_feature's).
    let report = diff(
        [&bare("requests/classify_valid.pb")],
        &bare("requests/classify_extra_feature.pb"),
        &opts,
    );
    let spec = sigs.meta_graph("serve").unwrap().signatures["serving_default"]
        .examples
        .clone()
        .unwrap();
    let read: BTreeSet<&str> = spec
        .dense
        .iter()
        .map(|d| d.key.as_str())
        .chain(spec.sparse.iter().map(|v| v.key.as_str()))
        .collect();
    let extra: Vec<_> = report
        .findings()
        .filter(|f| f.code.as_str() == "FEATURE_NOT_IN_WARMUP")
        .collect();
    assert!(!extra.is_empty());
    for f in extra {
        assert!(!read.contains(f.name.as_deref().unwrap()), "{f:?}");
        assert_eq!(f.severity, Severity::Note);
        assert!(f.message.contains("does not read"), "{}", f.message);
    }
}

/// Without the feature spec (no model, or a model file without the graph) nothing tells
/// whether a feature is required: warnings that say so, never errors.
#[test]
fn without_the_spec_it_cannot_be_told() {
    let meta = read_model(&dir().join("models/tf1_examples.metadata.json"))
        .unwrap()
        .0;
    for opts in [
        DiffOptions::default(),
        DiffOptions {
            model: meta.meta_graph("serve"),
            ..Default::default()
        },
    ] {
        let report = diff(
            [&bare("requests/classify_missing_x.pb")],
            &bare("requests/classify_valid.pb"),
            &opts,
        );
        assert_eq!(report.requests[0].verdict, Verdict::SameExecutor);
        let found = feature_findings(&report);
        assert!(
            found.contains(&(
                "FEATURE_NOT_IN_WARMUP".into(),
                Severity::Warning,
                "x".into()
            )),
            "{found:?}"
        );
        assert!(found.iter().all(|(_, s, _)| *s == Severity::Warning));
        assert!(
            report
                .findings()
                .filter(|f| f.code.as_str().starts_with("FEATURE"))
                .all(|f| f.message.contains("cannot be told"))
        );
        assert!(!report.failed);
    }
}

/// x in the context counts as x in each example (TF Serving merges the context into every
/// example it serializes): a warm-up whose x is only in its context lacks nothing
/// production's examples carry one by one.
#[test]
fn the_context_counts_as_each_example_s() {
    let sigs = model("tf1_examples");
    let opts = DiffOptions {
        model: sigs.meta_graph("serve"),
        ..Default::default()
    };
    let warm = bare("requests/classify_context_only_x.pb");
    let input = warm.input.as_ref().unwrap();
    assert!(input.examples.iter().all(|e| e.feature("x").is_none()));
    assert!(input.context.as_ref().unwrap().feature("x").is_some());
    let report = diff([&warm], &bare("requests/classify_valid.pb"), &opts);
    let found = feature_findings(&report);
    assert!(!found.is_empty(), "the warm-up lacks age or tags");
    assert!(found.iter().all(|(_, _, n)| n != "x"), "{found:?}");
    assert!(!report.failed, "{found:?}");
}

/// A log of classify requests against itself: every record finds its own features among
/// the warm-up's (the warm-up closest in features is the one compared), so nothing is
/// reported, and every record runs the executor the warm-up built.
#[test]
fn a_log_against_itself_reports_no_feature_change() {
    let log = dir().join("logs/classify_log.tfrecord");
    let m = dir().join("models/tf1_examples");
    let (code, v) = crate::common::json(&[
        "diff",
        log.to_str().unwrap(),
        log.to_str().unwrap(),
        "--model",
        m.to_str().unwrap(),
    ]);
    let requests = v["requests"].as_array().unwrap();
    assert!(requests.len() >= 5);
    for r in requests {
        assert_eq!(r["verdict"], "same-executor", "{r}");
        for f in r["findings"].as_array().unwrap() {
            assert!(!f["code"].as_str().unwrap().starts_with("FEATURE"), "{f}");
        }
    }
    assert_eq!(code, 0, "{v}");
}

/// The command's human and JSON output, and its exit code.
#[test]
fn the_diff_command_reports_them() {
    let d = dir();
    let s = |p: &str| d.join(p).to_str().unwrap().to_string();
    let (warm, prod, m) = (
        s("requests/classify_missing_x.pb"),
        s("requests/classify_valid.pb"),
        s("models/tf1_examples"),
    );
    let r = crate::common::run(&["diff", &warm, &prod, "--model", &m]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(r.out.contains("FEATURE_NOT_IN_WARMUP  ~ x"), "{}", r.out);
    assert!(
        r.out
            .contains("Feature: x (data type: float) is required but could not be found."),
        "{}",
        r.out
    );
    let (code, v) = crate::common::json(&["diff", &warm, &prod, "--model", &m]);
    assert_eq!(code, 1);
    let findings = v["requests"][0]["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["code"] == "FEATURE_NOT_IN_WARMUP")
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert_eq!(
        (&f["severity"], &f["name"]),
        (&Value::from("error"), &Value::from("x"))
    );
    assert_eq!(v["requests"][0]["verdict"], "same-executor");
    // Without the model: exit 0, a warning.
    let (code, v) = crate::common::json(&["diff", &warm, &prod]);
    assert_eq!(code, 0);
    let f = v["requests"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "FEATURE_NOT_IN_WARMUP" && f["name"] == "x")
        .cloned()
        .unwrap();
    assert_eq!(f["severity"], "warning");
}

/// A bare classify or regress request (captured from production: its bytes cannot say
/// which, `ClassificationRequest` and `RegressionRequest` having the same fields) against
/// a warm-up log of `classify_log` records for the same signature runs the executor the
/// warm-up built: no `SIGNATURE_CHANGED`, no `NOT_WARMED`. With the model, the signature's
/// declared method settles it: against `regress_log` records of another signature and
/// method it is not warmed.
#[test]
fn a_bare_classify_or_regress_request_is_warmed_by_a_log_of_the_same_signature() {
    let d = dir();
    let s = |p: &str| d.join(p).to_str().unwrap().to_string();
    let (classify_log, regress_log, prod, m) = (
        s("logs/classify_log.tfrecord"),
        s("logs/regress_log.tfrecord"),
        s("requests/classify_valid.pb"),
        s("models/tf1_examples"),
    );
    for args in [
        vec!["diff", &classify_log, &prod],
        vec!["diff", &classify_log, &prod, "--model", &m],
    ] {
        let (code, v) = crate::common::json(&args);
        assert_eq!(code, 0, "{args:?}: {v}");
        let r = &v["requests"][0];
        assert_eq!(r["verdict"], "same-executor", "{args:?}: {r}");
        for f in r["findings"].as_array().unwrap() {
            assert!(
                f["code"] != "SIGNATURE_CHANGED" && f["code"] != "NOT_WARMED",
                "{args:?}: {f}"
            );
        }
    }
    // With the model the method is the signature's: classify, as the log's records.
    let (_, v) = crate::common::json(&["diff", &classify_log, &prod, "--model", &m]);
    assert_eq!(v["coverage"][0]["key"]["method"], "classify", "{v}");
    let (code, v) = crate::common::json(&["diff", &regress_log, &prod, "--model", &m]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["requests"][0]["verdict"], "new-executor", "{v}");
}
