//! TF Serving's tf.Example requests (ClassificationRequest, RegressionRequest,
//! MultiInferenceRequest) read as first-class requests, held to what TensorFlow and
//! tensorflow-serving-api wrote and answered (`tests/data/examples/`, made by
//! `tests/data/gen/make_examples.py`; `answers.json` records each file's message type,
//! TensorFlow's batch size and TF Serving's verdict):
//! - every bare request decodes as its message, with as many examples as TensorFlow ran;
//! - `inspect --format text` is Python's `str(request)` byte for byte;
//! - log records decode with the method their log type says;
//! - `keys` counts them by method and signature, whatever their features; `diff`
//!   compares them by that key; `check` names the signatures TF Serving does not find;
//! - decoding then encoding gives back Python's bytes.

use std::path::PathBuf;

use bytes::Bytes;
use serde_json::Value;
use tfreq::formats::{Content, InputOptions, read};
use tfreq::{FeatureValues, Message, Method};

fn dir() -> PathBuf {
    crate::common::data_dir().join("examples")
}

fn answers() -> Vec<Value> {
    let text = std::fs::read_to_string(dir().join("answers.json")).unwrap();
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

/// The one message of a bare file, read the way every command reads it.
fn bare(rel: &str) -> Message {
    let b = Bytes::from(std::fs::read(dir().join(rel)).unwrap());
    let c = read(b, &InputOptions::new())
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .into_container()
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(c.entries.len(), 1, "{rel}");
    match c.entries.into_iter().next().unwrap().content {
        Content::Message(m) => m,
        other => panic!("{rel}: {other:?}"),
    }
}

fn request_files() -> Vec<String> {
    let mut out: Vec<String> = ["requests", "rest"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(dir().join(d))
                .unwrap()
                .map(move |e| format!("{d}/{}", e.unwrap().file_name().to_string_lossy()))
        })
        .filter(|f| f.ends_with(".pb"))
        .collect();
    out.sort();
    out
}

/// The method detection gives a bare file of this protobuf type.
fn method_of(type_name: &str) -> Method {
    match type_name {
        "tensorflow.serving.ClassificationRequest" | "tensorflow.serving.RegressionRequest" => {
            Method::ClassifyOrRegress
        }
        "tensorflow.serving.MultiInferenceRequest" => Method::MultiInference,
        "tensorflow.serving.PredictRequest" => Method::Predict,
        other => panic!("{other}"),
    }
}

#[test]
fn every_bare_request_decodes_as_its_message_with_the_examples_tensorflow_ran() {
    let mut seen = 0;
    for a in answers() {
        let file = a["file"].as_str().unwrap();
        if !file.starts_with("requests/") {
            continue;
        }
        let m = bare(file);
        let want = method_of(a["type"].as_str().unwrap());
        if file == "requests/classify_no_input.pb" {
            // A model_spec alone reads as well as a PredictRequest: it stays one (the
            // examples readings win only with fewer anomalies).
            assert_eq!(m.method, Method::Predict, "{file}");
            let forced = tfreq::decode_request(
                std::fs::read(dir().join(file)).unwrap().into(),
                Method::Classify,
            )
            .unwrap();
            assert!(forced.input.is_none(), "{file}");
            continue;
        }
        assert_eq!(m.method, want, "{file}");
        if let Some(n) = a["batch_size"].as_u64() {
            let got = match m.method {
                Method::Predict => m.tensors[0].shape.sizes()[0] as u64,
                _ => m.input.as_ref().unwrap().examples.len() as u64,
            };
            assert_eq!(got, n, "{file}: TensorFlow ran a batch of {n}");
        }
        if a["case"] == "EMPTY_INPUT" {
            assert!(
                m.input.as_ref().is_none_or(|i| i.examples.is_empty()),
                "{file}"
            );
        }
        if want == Method::MultiInference {
            assert!(!m.tasks.is_empty(), "{file}");
            for t in &m.tasks {
                assert!(t.method_name.starts_with("tensorflow/serving/"), "{file}");
            }
        }
        seen += 1;
    }
    assert!(seen >= 45, "{seen}");
}

#[test]
fn features_are_what_python_wrote() {
    // requests/classify_valid_context.txt (Python's text of the same bytes).
    let m = bare("requests/classify_valid_context.pb");
    let input = m.input.as_ref().unwrap();
    assert!(input.with_context);
    let ctx = input.context.as_ref().unwrap();
    let names: Vec<&str> = ctx.features.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["age", "tags"]);
    assert_eq!(
        ctx.feature("age").unwrap().values,
        FeatureValues::Int64(vec![40])
    );
    assert_eq!(
        ctx.feature("tags").unwrap().values,
        FeatureValues::Bytes(vec![Bytes::from_static(b"ctx")])
    );
    let xs: Vec<FeatureValues> = input
        .examples
        .iter()
        .map(|e| e.feature("x").unwrap().values.clone())
        .collect();
    assert_eq!(
        xs,
        [
            FeatureValues::Float(vec![1.0, 2.0]),
            FeatureValues::Float(vec![3.0, 4.0]),
            FeatureValues::Float(vec![5.0, 6.0]),
        ]
    );
    assert_eq!(
        input.examples[2].feature("tags").unwrap().values,
        FeatureValues::Bytes(vec![Bytes::from_static(b"own")])
    );
    // The broken requests TensorFlow refused are decoded as they are.
    let kind = bare("requests/classify_wrong_kind_x.pb");
    let x = kind.input.as_ref().unwrap().examples[0]
        .feature("x")
        .unwrap();
    assert_eq!(x.values.kind(), "int64");
    // Its second example's x has 3 values (the first has 2).
    let len = bare("requests/classify_wrong_length_x.pb");
    let lens: Vec<usize> = len
        .input
        .as_ref()
        .unwrap()
        .examples
        .iter()
        .map(|e| e.feature("x").unwrap().values.len())
        .collect();
    assert_eq!(lens, [2, 3]);
    let missing = bare("requests/classify_missing_x.pb");
    assert!(
        missing.input.as_ref().unwrap().examples[0]
            .feature("x")
            .is_none()
    );
}

#[test]
fn text_is_python_text_format_byte_for_byte() {
    let mut n = 0;
    for f in request_files() {
        let txt = dir().join(f.replace(".pb", ".txt"));
        let Ok(want) = std::fs::read_to_string(&txt) else {
            continue;
        };
        let path = dir().join(&f);
        let r = crate::common::run(&["inspect", "--format", "text", path.to_str().unwrap()]);
        // 1 for the requests TF Serving refuses (EMPTY_INPUT): the text is printed.
        assert!(r.code == 0 || r.code == 1, "{f}: {}", r.err);
        // print(str(request)): the text and print's newline.
        assert_eq!(r.out, format!("{want}\n"), "{f}");
        // The library printer, by the message the decoder found.
        let m = bare(&f);
        let name = if m.method.takes_examples() {
            m.method.request_message()
        } else {
            tfreq::wire::message_name(m.wire, m.kind)
        };
        let text = tfreq::render::to_text(&std::fs::read(&path).unwrap(), name).unwrap();
        assert_eq!(text, want, "{f}");
        n += 1;
    }
    assert_eq!(n, 55, "files compared");
}

#[test]
fn reencoding_gives_back_pythons_bytes() {
    for f in request_files() {
        let bytes = std::fs::read(dir().join(&f)).unwrap();
        let m = bare(&f);
        let out = tfreq::encode(&m, tfreq::WireFormat::TfServing, tfreq::TfsEncoding::AsIs)
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(out, bytes, "{f}");
    }
    // A tf.Example request has no EAS form.
    let m = bare("requests/classify_valid.pb");
    assert!(tfreq::encode(&m, tfreq::WireFormat::Eas, tfreq::TfsEncoding::AsIs).is_err());
}

#[test]
fn log_records_decode_with_their_log_types_method() {
    for a in answers() {
        let Some(records) = a["records"].as_array() else {
            continue;
        };
        let file = a["file"].as_str().unwrap();
        let b = Bytes::from(std::fs::read(dir().join(file)).unwrap());
        let c = read(b, &InputOptions::new())
            .unwrap()
            .into_container()
            .unwrap();
        assert_eq!(c.entries.len(), records.len(), "{file}");
        for (e, want) in c.entries.iter().zip(records) {
            let Content::Message(m) = &e.content else {
                panic!("{file} record {}: {:?}", e.index, e.content)
            };
            let method = match want["log_type"].as_str().unwrap() {
                "classify_log" => Method::Classify,
                "regress_log" => Method::Regress,
                "multi_inference_log" => Method::MultiInference,
                _ => Method::Predict,
            };
            assert_eq!(m.method, method, "{file} record {}", e.index);
            if let (Some(n), true) = (want["batch_size"].as_u64(), method.takes_examples()) {
                assert_eq!(
                    m.input.as_ref().unwrap().examples.len() as u64,
                    n,
                    "{file} record {}",
                    e.index
                );
            }
        }
    }
}

/// `keys` counts classify, regress and multi-inference requests beside predict ones, one
/// executor key per method and signature whatever the features, their shape key the
/// number of examples.
#[test]
fn keys_count_examples_requests_by_method_and_signature() {
    let logs = [
        "classify_log",
        "regress_log",
        "multi_inference_log",
        "mixed",
    ]
    .map(|l| {
        dir()
            .join(format!("logs/{l}.tfrecord"))
            .display()
            .to_string()
    });
    let mut args = vec!["keys"];
    args.extend(logs.iter().map(String::as_str));
    let (code, v) = crate::common::json(&args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["requests"], 16, "{v}");
    assert_eq!(v["skipped"], 0, "{v}");
    let keys: Vec<(String, String, u64)> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["method"].as_str().unwrap_or("predict").to_string(),
                k["signature"].as_str().unwrap().to_string(),
                k["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut keys_sorted = keys.clone();
    keys_sorted.sort();
    let want = [
        // classify_log's 5 records, and mixed records 1 and 4: record 4 lacks x, and
        // shares the key (TF Serving feeds every example as one serialized string).
        ("classify", "serving_default", 7),
        // mixed record 5, to keras_examples' classify signature.
        ("classify", "classify", 1),
        ("multi_inference", "regress,serving_default", 3),
        ("predict", "predict", 1),
        ("regress", "regress", 4),
    ];
    let mut want: Vec<(String, String, u64)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), *c))
        .collect();
    want.sort();
    assert_eq!(keys_sorted, want, "{v}");
    // The shape keys of classify_log.tfrecord: its records' batch sizes (answers.json).
    let (_, one) = crate::common::json(&["keys", &logs[0]]);
    let mut sizes: Vec<(i64, u64)> = one["keys"][0]["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["feeds"]["(serialized examples)"]["shape"][0]
                    .as_i64()
                    .unwrap(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    sizes.sort();
    assert_eq!(sizes, [(1, 3), (2, 1), (3, 1)]);
    // The human key says what it is without the model's tensor names.
    let r = crate::common::run(&["keys", &logs[0]]);
    assert!(
        r.out.contains(
            "classify serving_default: (the signature's serialized-examples input) -> (its outputs)"
        ),
        "{}",
        r.out
    );
}

#[test]
fn diff_compares_examples_requests_by_their_key() {
    let warm = dir().join("logs/classify_log.tfrecord");
    let prod = dir().join("logs/mixed.tfrecord");
    let (code, v) = crate::common::json(&["diff", warm.to_str().unwrap(), prod.to_str().unwrap()]);
    assert_eq!(code, 1, "{v}");
    let verdicts: Vec<&str> = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    // 0 predict, 1 classify serving_default (warmed), 2 regress, 3 multi-inference,
    // 4 classify serving_default without x (warmed: the same executor), 5 classify to
    // another signature.
    assert_eq!(
        verdicts,
        [
            "new-executor",
            "same-executor",
            "new-executor",
            "new-executor",
            "same-executor",
            "new-executor"
        ],
        "{v}"
    );
    let text = v.to_string();
    assert!(!text.contains("RECORD_NOT_COMPARED"), "{text}");
    assert!(text.contains("SIGNATURE_CHANGED"), "{text}");
}

/// `check` holds a tf.Example request's signatures to the model as TF Serving does: the
/// requests TF Serving refused with "Serving signature key ... not found" (answers.json
/// case UNKNOWN_SIGNATURE) are errors, and so are those it refused with "Input is empty."
/// (EMPTY_INPUT); no other request of the tf1_examples model is (their features are not
/// checked: a note says so).
#[test]
fn check_names_the_signatures_tf_serving_does_not_find() {
    let model = dir().join("models/tf1_examples");
    for a in answers() {
        let file = a["file"].as_str().unwrap();
        if !file.starts_with("requests/") || a["model"] != "tf1_examples" {
            continue;
        }
        let m = bare(file);
        if !m.method.takes_examples() {
            continue;
        }
        let path = dir().join(file);
        let (_, v) = crate::common::json(&[
            "check",
            "--model",
            model.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        // The request's findings, then the file's.
        let codes: Vec<&str> = v["requests"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .chain(v["problems"].as_array().map(Vec::as_slice).unwrap_or(&[]))
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        assert_eq!(
            codes.contains(&"UNKNOWN_SIGNATURE"),
            a["case"] == "UNKNOWN_SIGNATURE",
            "{file}: {codes:?}"
        );
        assert_eq!(
            codes.contains(&"EMPTY_INPUT"),
            a["case"] == "EMPTY_INPUT",
            "{file}: {codes:?}"
        );
        // The features are compared whenever a signature it names is in the model
        // (cli/tests/interop/examples_check.rs); only a request naming none of them is not.
        if a["case"] != "UNKNOWN_SIGNATURE" {
            assert!(!codes.contains(&"RECORD_NOT_COMPARED"), "{file}: {codes:?}");
        }
    }
}

#[test]
fn inspect_json_and_github_show_the_features() {
    let path = dir().join("requests/multi_valid.pb");
    let (code, v) = crate::common::json(&["inspect", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["method"], "multi_inference");
    assert_eq!(v["tasks"][1]["method_name"], "tensorflow/serving/regress");
    assert_eq!(v["tasks"][1]["model_spec"]["signature_name"], "regress");
    assert_eq!(v["input"]["list"], "example_list_with_context");
    assert_eq!(
        v["input"]["context"][0],
        serde_json::json!({"kind": "int64", "length": 1, "name": "age", "values": [40], "values_truncated": false})
    );
    assert_eq!(
        v["input"]["examples"][2][1]["values"],
        serde_json::json!([5.0, 6.0])
    );
    assert!(
        v.get("inputs").is_none() && v.get("fetches").is_none(),
        "{v}"
    );
    // A predict request's document has no method key (unchanged).
    let p = dir().join("requests/predict_examples_valid.pb");
    let (_, pv) = crate::common::json(&["inspect", p.to_str().unwrap()]);
    assert!(
        pv.get("method").is_none() && pv.get("input").is_none(),
        "{pv}"
    );

    let r = crate::common::run(&["inspect", "--format", "github", path.to_str().unwrap()]);
    assert!(
        r.out.contains("title=EXAMPLES::MultiInferenceRequest, example_list_with_context of 3 examples; context: age int64[1] 40, tags bytes[1] \"ctx\"; example 0: x float[2] 1.0 2.0;"),
        "{}",
        r.out
    );
    let r = crate::common::run(&["inspect", path.to_str().unwrap()]);
    assert!(
        r.out
            .contains("  regress: method tensorflow/serving/regress (model \"tf1_examples\")")
            && r.out.contains("    age   int64  1       40"),
        "{}",
        r.out
    );
}

#[test]
fn scrub_keeps_names_kinds_and_lengths_of_features() {
    let m = bare("requests/classify_valid.pb");
    let s = tfreq::scrub(&m, tfreq::FillMode::Zeros).unwrap();
    assert_eq!(s.method, m.method);
    let (a, b) = (m.input.as_ref().unwrap(), s.input.as_ref().unwrap());
    assert_eq!(a.examples.len(), b.examples.len());
    for (ea, eb) in a.examples.iter().zip(&b.examples) {
        for (fa, fb) in ea.features.iter().zip(&eb.features) {
            assert_eq!(
                (&fa.name, fa.values.kind(), fa.values.len()),
                (&fb.name, fb.values.kind(), fb.values.len())
            );
            match &fb.values {
                FeatureValues::Float(v) => assert!(v.iter().all(|x| *x == 0.0)),
                FeatureValues::Int64(v) => assert!(v.iter().all(|x| *x == 0)),
                FeatureValues::Bytes(v) => {
                    assert!(v.iter().all(|x| x.iter().all(|c| *c == b'x')), "{v:?}")
                }
                FeatureValues::None => {}
            }
        }
    }
    assert_ne!(a, b);
}

/// `warmup` writes one record per key of a log of classify requests: a `classify_log`
/// (TF Serving's warm-up runs it: saved_model_warmup.cc RunClassify), its features'
/// names, kinds and lengths kept and their values scrubbed.
#[test]
fn warmup_writes_examples_requests_in_their_own_log_type() {
    let src = dir().join("logs/classify_log.tfrecord");
    let out = tempfile::tempdir().unwrap();
    let dst = out.path().join("w.tfrecord");
    let r = crate::common::run(&[
        "warmup",
        src.to_str().unwrap(),
        "--by",
        "shape",
        "-o",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let b = Bytes::from(std::fs::read(&dst).unwrap());
    let c = read(b, &InputOptions::new())
        .unwrap()
        .into_container()
        .unwrap();
    assert_eq!(c.entries.len(), 3, "one per shape key: 1, 2 and 3 examples");
    let mut sizes = Vec::new();
    for e in &c.entries {
        assert_eq!(e.log_kind.map(|k| k.name()), Some("classify_log"));
        let Content::Message(m) = &e.content else {
            panic!("{:?}", e.content)
        };
        assert_eq!(m.method, Method::Classify);
        let input = m.input.as_ref().unwrap();
        sizes.push(input.examples.len());
        for ex in &input.examples {
            for f in &ex.features {
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
    }
    sizes.sort();
    assert_eq!(sizes, [1, 2, 3]);
}

/// `inspect --format text` of a log, then `build`: every classify, regress and
/// multi-inference record comes back as a record of its log type with its request's
/// bytes (the text holds no response or log_metadata).
#[test]
fn text_of_a_log_builds_back_its_requests() {
    let src = dir().join("logs/mixed.tfrecord");
    let out = tempfile::tempdir().unwrap();
    let txt = out.path().join("mixed.txt");
    let r = crate::common::run(&["inspect", "--format", "text", src.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("# record 1: classify_log request\n"),
        "{}",
        r.out
    );
    std::fs::write(&txt, &r.out).unwrap();
    let dst = out.path().join("back.tfrecord");
    let r = crate::common::run(&[
        "build",
        txt.to_str().unwrap(),
        "--wire",
        "tfrecord",
        "-o",
        dst.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let entries = |p: &std::path::Path| {
        read(Bytes::from(std::fs::read(p).unwrap()), &InputOptions::new())
            .unwrap()
            .into_container()
            .unwrap()
            .entries
    };
    let (a, b) = (entries(&src), entries(&dst));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.log_kind, y.log_kind, "record {}", x.index);
        assert_eq!(x.bytes, y.bytes, "record {}", x.index);
    }
}

/// `warmup --allowed-batch-sizes` on classify requests: the batch of a tf.Example request
/// is its number of examples (TF Serving feeds them as one DT_STRING [n] tensor), so one
/// record per allowed size holds that many (scrubbed) examples.
#[test]
fn warmup_batch_sizes_of_examples_requests_are_example_counts() {
    let src = dir().join("logs/classify_log.tfrecord");
    let out = tempfile::tempdir().unwrap();
    let dst = out.path().join("w.tfrecord");
    let r = crate::common::run(&[
        "warmup",
        src.to_str().unwrap(),
        "--allowed-batch-sizes",
        "1,8,32",
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
    let sizes: Vec<usize> = c
        .entries
        .iter()
        .map(|e| match &e.content {
            Content::Message(m) if m.method == Method::Classify => {
                m.input.as_ref().unwrap().examples.len()
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(sizes, [1, 8, 32]);
}
