//! `build` of TF Serving REST `:classify` / `:regress` bodies (docs/formats.md), held to what
//! tests/data/gen/make_examples.py recorded for each body of tests/data/examples/rest/: the
//! request TF Serving makes of it (`rest/NAME.pb`, which the generator requires to equal the
//! same request built with `tf.train.Example` and tensorflow-serving-api, every feature's kind
//! spelled out), or TF Serving's error while it reads the JSON; and, for the requests
//! TensorFlow ran, `check`'s verdict against TensorFlow's answer.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use serde_json::Value;
use tfreq::analysis::{CheckOptions, Severity, check};
use tfreq::formats::read_model;
use tfreq::formats::{InputOptions, read};
use tfreq::formats::{RestCall, examples_from_json};
use tfreq::{FeatureValues, Method, TfsEncoding, WireFormat, encode};

fn dir() -> PathBuf {
    crate::common::root().join("tests/data/examples")
}

/// answers.json's rows for the REST bodies.
fn rest_rows() -> Vec<Value> {
    let all: Value =
        serde_json::from_slice(&std::fs::read(dir().join("answers.json")).unwrap()).unwrap();
    let rows: Vec<Value> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["type"].as_str().is_some_and(|t| t.starts_with("REST :")))
        .cloned()
        .collect();
    let on_disk = std::fs::read_dir(dir().join("rest"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".json")
        })
        .count();
    assert_eq!(rows.len(), on_disk, "every rest/*.json has its answer");
    assert!(rows.len() >= 14, "{} bodies", rows.len());
    rows
}

fn url(row: &Value) -> String {
    format!("http://localhost:8501{}", row["url"].as_str().unwrap())
}

#[test]
fn each_body_builds_the_request_tf_serving_makes_or_its_error() {
    let (mut same, mut refused) = (0, 0);
    for row in rest_rows() {
        let file = row["file"].as_str().unwrap();
        let body = std::fs::read(dir().join(file)).unwrap();
        let call = RestCall::parse(&url(&row)).unwrap();
        assert_eq!(
            call.method,
            if row["type"] == "REST :classify body" {
                Method::Classify
            } else {
                Method::Regress
            }
        );
        assert_eq!(call.model, row["model"].as_str().unwrap());
        let built = examples_from_json(&body, &call);
        match row["request"].as_str() {
            Some(req) => {
                let msg = built.unwrap_or_else(|e| panic!("{file}: {e}"));
                let bytes = encode(&msg, WireFormat::TfServing, TfsEncoding::AsIs).unwrap();
                assert_eq!(
                    bytes,
                    std::fs::read(dir().join(req)).unwrap(),
                    "{file}: the bytes of {req}"
                );
                same += 1;
            }
            None => {
                assert_eq!(row["source"], "tf_serving_source", "{file}");
                let e = built.expect_err(file).to_string();
                let want = row["message"].as_str().unwrap();
                assert!(
                    e.contains(want),
                    "{file}: {e:?} lacks TF Serving's {want:?}"
                );
                refused += 1;
            }
        }
    }
    assert!(same >= 9 && refused >= 5, "{same} built, {refused} refused");
}

/// The command: `tfreq build BODY --url URL -o OUT` writes the same bytes; `--method`
/// without a model name writes the request without one; a refused body fails with TF
/// Serving's words and writes nothing.
#[test]
fn the_build_command_writes_them() {
    let out = tempfile::tempdir().unwrap();
    for row in rest_rows() {
        let file = row["file"].as_str().unwrap();
        let path = dir().join(file);
        let dst = out.path().join("out.pb");
        let _ = std::fs::remove_file(&dst);
        let r = crate::common::run(&[
            "build",
            path.to_str().unwrap(),
            "--url",
            &url(&row),
            "-o",
            dst.to_str().unwrap(),
        ]);
        match row["request"].as_str() {
            Some(req) => {
                assert_eq!(r.code, 0, "{file}: {}", r.err);
                assert_eq!(
                    std::fs::read(&dst).unwrap(),
                    std::fs::read(dir().join(req)).unwrap(),
                    "{file}"
                );
            }
            None => {
                assert_eq!(r.code, 2, "{file}: {}", r.err);
                assert!(
                    r.err.contains(row["message"].as_str().unwrap()),
                    "{}",
                    r.err
                );
                assert!(!dst.exists(), "{file}: nothing written");
            }
        }
    }
    // --method and --model-name give the same request as the URL.
    let dst = out.path().join("m.pb");
    let body = dir().join("rest/regress_valid.json");
    let r = crate::common::run(&[
        "build",
        body.to_str().unwrap(),
        "--method",
        "regress",
        "--model-name",
        "tf1_examples",
        "-o",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        std::fs::read(&dst).unwrap(),
        std::fs::read(dir().join("rest/regress_valid.pb")).unwrap()
    );
}

#[test]
fn build_says_how_to_name_the_method() {
    let body = dir().join("rest/classify_valid.json");
    let r = crate::common::run(&["build", body.to_str().unwrap(), "-o", "-"]);
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("--method classify|regress") && r.err.contains("\"examples\""),
        "{}",
        r.err
    );
    let r = crate::common::run(&[
        "build",
        body.to_str().unwrap(),
        "--method",
        "regress",
        "--url",
        "http://h/v1/models/m:classify",
        "-o",
        "-",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("disagree"), "{}", r.err);
    // TF Serving dispatches only the lowercase method.
    let r = crate::common::run(&[
        "build",
        body.to_str().unwrap(),
        "--url",
        "http://h/v1/models/m:Classify",
        "-o",
        "-",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.err.contains("Malformed request"), "{}", r.err);
}

#[test]
fn the_url_gives_model_spec_version_and_label() {
    let body = br#"{"signature_name": "s", "examples": [{"a": 1}]}"#;
    let m = examples_from_json(
        body,
        &RestCall::parse("https://h:1/v1/models/m%2Fx/versions/7:classify").unwrap(),
    )
    .unwrap();
    let spec = m.model_spec.unwrap();
    assert_eq!(
        (
            spec.name.as_str(),
            spec.version,
            spec.signature_name.as_str()
        ),
        ("m/x", Some(7), "s")
    );
    let m = examples_from_json(
        body,
        &RestCall::parse("/v1/models/m/labels/canary:regress").unwrap(),
    )
    .unwrap();
    assert_eq!(m.method, Method::Regress);
    assert_eq!(
        m.model_spec.unwrap().version_label.as_deref(),
        Some("canary")
    );
    for bad in [
        "/v1/models/m",
        "/v1/models/:classify",
        "/v1/models/m/versions/x:classify",
        "/v2/models/m:classify",
        "/v1/models/m:explain",
    ] {
        assert!(RestCall::parse(bad).is_err(), "{bad}");
    }
}

/// Values TF Serving's reader takes that no generated body holds (NaN and the
/// infinities, which Python's json would put into the answers as bare NaN): each is a
/// float_list value, as rapidjson's IsDouble says.
#[test]
fn non_finite_numbers_are_floats() {
    let body = br#"{"examples": [{"x": [NaN, Infinity, -Infinity]}]}"#;
    let m = examples_from_json(body, &RestCall::method(Method::Classify)).unwrap();
    let FeatureValues::Float(v) = &m.input.unwrap().examples[0].features[0].values else {
        panic!()
    };
    assert!(v[0].is_nan() && v[1] == f32::INFINITY && v[2] == f32::NEG_INFINITY);
    // A string "NaN" stays bytes.
    let body = br#"{"examples": [{"x": ["NaN"]}]}"#;
    let m = examples_from_json(body, &RestCall::method(Method::Classify)).unwrap();
    assert_eq!(
        m.input.unwrap().examples[0].features[0].values,
        FeatureValues::Bytes(vec![Bytes::from_static(b"NaN")])
    );
    for (body, want) in [
        (
            &br#"{"examples": [{"x": null}]}"#[..],
            "unexpected JSON type: Null",
        ),
        (
            br#"{"examples": [7]}"#,
            "Example must be JSON object but got JSON Number",
        ),
        (
            br#"{"examples": {}}"#,
            "Expecting 'examples' value to be an list/array",
        ),
        (
            br#"{"context": []}"#,
            "context: Example must be JSON object but got JSON Array",
        ),
        (
            br#"{"signature_name": 1, "examples": [{}]}"#,
            "'signature_name' key must be a string",
        ),
        (
            br#"{"examples": [{"b": {"b64": "!!"}}]}"#,
            "Unable to base64 decode",
        ),
        (br#"[]"#, "Is not object"),
    ] {
        let e = examples_from_json(body, &RestCall::method(Method::Regress))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }
}

/// A body built, then held to the model: `check` finds what TensorFlow answered (the
/// same codes and words as for the bare requests, cli/tests/interop/examples_check.rs).
#[test]
fn check_of_a_built_body_matches_what_tensorflow_answered() {
    let mut compared = 0;
    for row in rest_rows() {
        if row["source"] != "tensorflow_run" {
            continue;
        }
        let file = row["file"].as_str().unwrap();
        let body = std::fs::read(dir().join(file)).unwrap();
        let msg = examples_from_json(&body, &RestCall::parse(&url(&row)).unwrap()).unwrap();
        let model = dir().join("models").join(row["model"].as_str().unwrap());
        let (sigs, _) = read_model(&model).unwrap();
        let report = check(&msg, &sigs, &CheckOptions::default());
        let errors: Vec<_> = report
            .findings()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        match (
            row["result"].as_str().unwrap(),
            row["case"].as_str().unwrap(),
        ) {
            ("ok", _) => assert!(errors.is_empty(), "{file}: {errors:?}"),
            ("error", case) => {
                let want = row["message"].as_str().unwrap();
                let want = want.strip_prefix("Name: <unknown>, ").unwrap_or(want);
                let code = if case == "MISSING_FEATURE" {
                    "FEATURE_MISSING"
                } else {
                    case
                };
                let first = errors
                    .iter()
                    .find(|f| f.code.as_str().starts_with("FEATURE_"))
                    .unwrap_or_else(|| panic!("{file}: no error, TensorFlow said {want}"));
                assert_eq!(
                    (first.code.as_str(), first.message.as_str()),
                    (code, want),
                    "{file}"
                );
            }
            other => panic!("{file}: {other:?}"),
        }
        compared += 1;
    }
    assert!(compared >= 9, "{compared}");
}

/// `scrub` of a request built from a REST body keeps every feature's name, kind and
/// length and replaces its values.
#[test]
fn scrub_of_a_built_body_keeps_names_kinds_and_lengths() {
    let out = tempfile::tempdir().unwrap();
    for name in ["classify_valid", "classify_context", "classify_json_kinds"] {
        let body = dir().join(format!("rest/{name}.json"));
        let built = out.path().join("b.pb");
        let scrubbed = out.path().join("s.pb");
        for args in [
            vec![
                "build",
                body.to_str().unwrap(),
                "--url",
                "/v1/models/tf1_examples:classify",
                "-o",
                built.to_str().unwrap(),
            ],
            vec![
                "scrub",
                built.to_str().unwrap(),
                "--fill",
                "zeros",
                "-o",
                scrubbed.to_str().unwrap(),
            ],
        ] {
            let r = crate::common::run(&args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.err);
        }
        let one = |p: &Path| {
            let b = Bytes::from(std::fs::read(p).unwrap());
            read(b, &InputOptions::new())
                .unwrap()
                .into_records()
                .unwrap()
                .remove(0)
                .message
        };
        let (a, b) = (one(&built), one(&scrubbed));
        let (ia, ib) = (a.input.unwrap(), b.input.unwrap());
        assert_eq!(ia.with_context, ib.with_context, "{name}");
        let all = |i: &tfreq::ExampleInput| -> Vec<tfreq::Example> {
            i.examples.iter().chain(i.context.iter()).cloned().collect()
        };
        let (ea, eb) = (all(&ia), all(&ib));
        assert_eq!(ea.len(), eb.len(), "{name}");
        let mut changed = false;
        for (x, y) in ea.iter().zip(&eb) {
            let shape = |e: &tfreq::Example| -> Vec<(String, &'static str, usize)> {
                e.features
                    .iter()
                    .map(|f| (f.name.clone(), f.values.kind(), f.values.len()))
                    .collect()
            };
            assert_eq!(shape(x), shape(y), "{name}");
            changed |= x != y;
            for f in &y.features {
                match &f.values {
                    FeatureValues::Float(v) => assert!(v.iter().all(|x| *x == 0.0)),
                    FeatureValues::Int64(v) => assert!(v.iter().all(|x| *x == 0)),
                    FeatureValues::Bytes(v) => {
                        assert!(v.iter().all(|s| s.iter().all(|c| *c == b'x')))
                    }
                    FeatureValues::None => {}
                }
            }
        }
        assert!(changed, "{name}: values replaced");
    }
}

/// JSON lines of bodies write a TFRecord of `classify_log` records, each the request of its
/// line; a `:predict` URL makes a REST predict body a TF Serving request with the URL's
/// model_spec.
#[test]
fn json_lines_and_a_predict_url() {
    let out = tempfile::tempdir().unwrap();
    let lines = out.path().join("bodies.jsonl");
    let mut text = String::new();
    for n in ["classify_valid", "classify_context"] {
        let body = std::fs::read_to_string(dir().join(format!("rest/{n}.json"))).unwrap();
        text.push_str(&body.replace('\n', ""));
        text.push('\n');
    }
    std::fs::write(&lines, text).unwrap();
    let dst = out.path().join("log.tfrecord");
    let r = crate::common::run(&[
        "build",
        lines.to_str().unwrap(),
        "--url",
        "http://h/v1/models/tf1_examples:classify",
        "-o",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let c = read(
        Bytes::from(std::fs::read(&dst).unwrap()),
        &InputOptions::new(),
    )
    .unwrap()
    .into_container()
    .unwrap();
    assert_eq!(c.entries.len(), 2);
    for (e, n) in c.entries.iter().zip(["classify_valid", "classify_context"]) {
        assert_eq!(e.log_kind.map(|k| k.name()), Some("classify_log"));
        let tfreq::formats::Content::Message(m) = &e.content else {
            panic!("{:?}", e.content)
        };
        assert_eq!(m.method, Method::Classify);
        let want = std::fs::read(dir().join(format!("rest/{n}.pb"))).unwrap();
        assert_eq!(
            encode(m, WireFormat::TfServing, TfsEncoding::AsIs).unwrap(),
            want,
            "{n}"
        );
    }
    let body = crate::common::root().join("tests/data/rest/faq_prod.json");
    let model = crate::common::root().join("tests/data/models/faq.metadata.json");
    let dst = out.path().join("p.pb");
    let r = crate::common::run(&[
        "build",
        body.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--url",
        "http://h:8501/v1/models/faq/versions/2:predict",
        "-o",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let m = read(
        Bytes::from(std::fs::read(&dst).unwrap()),
        &InputOptions::new(),
    )
    .unwrap()
    .into_records()
    .unwrap()
    .remove(0)
    .message;
    assert_eq!(m.wire, WireFormat::TfServing);
    let spec = m.model_spec.unwrap();
    assert_eq!((spec.name.as_str(), spec.version), ("faq", Some(2)));
}

/// The commands read a `:classify`/`:regress` body as it is, without `build`: `check
/// --model` of each body TensorFlow ran gives TensorFlow's verdict (exit 0, or exit 1
/// with the feature error it named), and a body TF Serving refuses is an unreadable file
/// (exit 2) quoting TF Serving's words. The body alone cannot say whether it classifies
/// or regresses: `inspect --format json` says `classify_or_regress`.
#[test]
fn check_and_inspect_read_the_bodies_themselves() {
    let (mut ran, mut refused) = (0, 0);
    for row in rest_rows() {
        let file = dir().join(row["file"].as_str().unwrap());
        let file = file.to_str().unwrap();
        let model = dir().join("models").join(row["model"].as_str().unwrap());
        let r = crate::common::run(&["check", "--model", model.to_str().unwrap(), file]);
        match (row["source"].as_str().unwrap(), row["result"].as_str()) {
            ("tensorflow_run", Some("ok")) => {
                assert_eq!(r.code, 0, "{file}: {}{}", r.out, r.err);
                ran += 1;
            }
            ("tensorflow_run", Some("error")) => {
                assert_eq!(r.code, 1, "{file}: {}{}", r.out, r.err);
                let case = row["case"].as_str().unwrap();
                let code = if case == "MISSING_FEATURE" {
                    "FEATURE_MISSING"
                } else {
                    case
                };
                assert!(r.out.contains(code), "{file}: {code} in {}", r.out);
                ran += 1;
            }
            ("tf_serving_source", _) => {
                assert_eq!(r.code, 2, "{file}: {}{}", r.out, r.err);
                let want = row["message"].as_str().unwrap();
                assert!(r.err.contains(want), "{file}: {want:?} in {}", r.err);
                refused += 1;
            }
            other => panic!("{file}: {other:?}"),
        }
    }
    assert!(ran >= 9 && refused >= 5, "{ran} ran, {refused} refused");
    let body = dir().join("rest/classify_context.json");
    let (code, v) = crate::common::json(&["inspect", body.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    let text = v.to_string();
    assert!(text.contains("classify_or_regress"), "{text}");
}
