//! `check` and `build` held to what TensorFlow and TF Serving do: requests run through
//! real TensorFlow 2.21 as TF Serving runs them (`tests/data/gen/make_check_tf.py` records
//! the answer for each in `tests/data/check/manifest.json`), a warm-up whose classify
//! record holds no examples, and REST bodies with NaN / Infinity or for a signature with
//! no inputs.

use crate::common::{json, run, s};
use serde_json::Value;

/// tests/data/models/<model>, or a model make_check_tf.py made under tests/data/check/models/.
fn model_path(model: &str) -> String {
    let own = crate::common::data_dir().join("check/models").join(model);
    if own.is_dir() {
        own.display().to_string()
    } else {
        s(&format!("models/{model}"))
    }
}

fn finding<'a>(v: &'a Value, code: &str) -> Option<&'a Value> {
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap())
        .find(|f| f["code"] == code)
}

/// TF Serving does not check a signature's declared shape: SHAPE_INCOMPATIBLE is a
/// warning saying the model may still run, and check passes where TensorFlow ran the
/// request. A signature without tensor outputs cannot be called: an error, as TensorFlow
/// answered.
#[test]
fn check_verdicts_follow_what_tensorflow_answered() {
    let cases: Vec<Value> = crate::common::manifest("check")
        .into_iter()
        .filter(|e| e["file"].as_str().unwrap().ends_with(".bin"))
        .collect();
    assert_eq!(cases.len(), 7);
    for e in cases {
        let file = e["file"].as_str().unwrap();
        let model = e["model"].as_str().unwrap();
        let tf = e["tf_result"].as_str().unwrap();
        let (code, v) = json(&[
            "check",
            &s(&format!("check/{file}")),
            "--model",
            &model_path(model),
        ]);
        match e["expect"].as_str().unwrap() {
            // A request naming the one signature of a model without serving_default:
            // the request's signature_name is looked up, as TF Serving does.
            "OK" => {
                assert!(tf.starts_with("ok"), "{file}: {tf}");
                assert_eq!(code, 0, "{file}: TensorFlow ran it ({tf}): {v}");
                assert!(!v.to_string().contains("serving_default"), "{file}: {v}");
            }
            // No signature_name: TF Serving looks up serving_default and refuses.
            "UNKNOWN_SIGNATURE" => {
                assert!(tf.contains("\"serving_default\" not found"), "{file}: {tf}");
                let f = finding(&v, "UNKNOWN_SIGNATURE").unwrap_or_else(|| panic!("{file}: {v}"));
                assert_eq!(f["severity"], "error");
                assert_eq!(code, 1, "{file}");
            }
            "SHAPE_INCOMPATIBLE" => {
                let f = finding(&v, "SHAPE_INCOMPATIBLE").unwrap_or_else(|| panic!("{file}: {v}"));
                assert_eq!(f["severity"], "warning", "{file}");
                assert!(f["message"].as_str().unwrap().contains("may still run"));
                if tf.starts_with("ok") {
                    assert_eq!(code, 0, "{file}: TensorFlow ran it ({tf}): {v}");
                } else {
                    // TensorFlow refused it in an op (MatMul), which tfreq cannot see
                    // without the graph: the warning is what it can honestly say.
                    assert!(tf.starts_with("InvalidArgumentError"), "{file}: {tf}");
                    assert_eq!(code, 0, "{file}");
                }
            }
            "SIGNATURE_NOT_CALLABLE" => {
                assert!(tf.contains("does not have output 0"), "{file}: {tf}");
                let f =
                    finding(&v, "SIGNATURE_NOT_CALLABLE").unwrap_or_else(|| panic!("{file}: {v}"));
                assert_eq!(f["severity"], "error");
                assert_eq!(code, 1, "{file}");
            }
            other => panic!("{file}: unknown expectation {other}"),
        }
    }
}

/// `--strict-shapes` is for models that are compiled per shape, or whose ops refuse other
/// shapes (MatMul refused `two_sigs_bad_dim.bin` in TensorFlow): the same finding becomes
/// an error and check fails; a request that matches the signature still passes.
#[test]
fn strict_shapes_make_an_incompatible_shape_fail() {
    let (code, v) = json(&[
        "check",
        &s("check/two_sigs_bad_dim.bin"),
        "--model",
        &s("models/two_sigs"),
        "--strict-shapes",
    ]);
    let f = finding(&v, "SHAPE_INCOMPATIBLE").unwrap_or_else(|| panic!("{v}"));
    assert_eq!(f["severity"], "error");
    assert_eq!(code, 1, "{v}");
    let (code, v) = json(&[
        "check",
        &s("models/half_plus_two/assets.extra/tf_serving_warmup_requests"),
        "--model",
        &s("models/half_plus_two"),
        "--strict-shapes",
    ]);
    assert!(finding(&v, "SHAPE_INCOMPATIBLE").is_none(), "{v}");
    assert_eq!(code, 0, "{v}");
}

/// A warm-up whose classify_log holds no examples fails TF Serving's load ("Input is
/// empty."): inspect says so and fails.
#[test]
fn classify_record_without_examples_is_an_error() {
    let (code, v) = json(&["inspect", &s("check/warmup_classify_empty.tfrecord")]);
    assert_eq!(code, 1, "{v}");
    let found: Vec<_> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "EMPTY_INPUT" && f["severity"] == "error")
        .collect();
    assert_eq!(found.len(), 2, "{v}");
    // TF Serving's own warm-up of half_plus_two has examples everywhere: nothing.
    let (code, v) = json(&[
        "inspect",
        &s("models/half_plus_two/assets.extra/tf_serving_warmup_requests"),
    ]);
    assert_eq!(code, 0);
    assert!(!v.to_string().contains("EMPTY_INPUT"));
}

/// TF Serving's REST layer reads NaN, Infinity and -Infinity as numbers.
#[test]
fn rest_json_takes_nan_and_infinity() {
    let o = crate::common::tfreq()
        .args([
            "build",
            &s("rest/nan_inf.json"),
            "--model",
            &s("models/half_plus_two"),
            "--wire",
            "tf-serving",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let msg = tfreq::decode_as(
        &o.stdout,
        tfreq::WireFormat::TfServing,
        tfreq::Kind::Request,
    )
    .unwrap();
    let e = msg.tensors[0].elements(msg.wire);
    let v: Vec<f32> = (0..3)
        .map(|i| match e.get(i) {
            Some(tfreq::Scalar::F32(x)) => x,
            o => panic!("{o:?}"),
        })
        .collect();
    assert!(
        v[0].is_nan() && v[1] == f32::INFINITY && v[2] == f32::NEG_INFINITY,
        "{v:?}"
    );
}

/// A body for a signature with no inputs is refused as TF Serving refuses it.
#[test]
fn rest_json_for_a_signature_without_inputs_is_refused() {
    let r = run(&[
        "build",
        &s("rest/init_op.json"),
        "--model",
        &s("models/faq"),
        "-o",
        "-",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.err
            .contains("Failed to get input map for signature: __saved_model_init_op"),
        "{}",
        r.err
    );
}
