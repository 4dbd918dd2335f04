//! Fidelity to what TensorFlow, TF Serving and the EAS processor do
//! (docs/warmup.md, docs/codes.md).

use crate::common::run3 as run;

use serde_json::Value;

/// two_sigs' metadata without `serving_default` (a model like TF Serving's
/// saved_model_half_plus_two_counter, whose signatures have other names).
fn model_without_serving_default(dir: &std::path::Path) -> String {
    let mut m: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::common::data("models/two_sigs.metadata.json")).unwrap(),
    )
    .unwrap();
    let sigs = m["metadata"]["signature_def"]["signature_def"]
        .as_object_mut()
        .unwrap();
    assert!(sigs.remove("serving_default").is_some());
    let p = dir.join("no_default.metadata.json");
    std::fs::write(&p, m.to_string()).unwrap();
    p.display().to_string()
}

#[test]
fn check_uses_the_signature_the_request_names() {
    let dir = tempfile::tempdir().unwrap();
    let model = model_without_serving_default(dir.path());
    // A TF Serving request naming predict_images, which TensorFlow ran
    // (tests/data/check/manifest.json: two_sigs_images_rank3.bin, "ok").
    let (code, out, err) = run(&[
        "check",
        "tests/data/check/two_sigs_images_rank3.bin",
        "--model",
        &model,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("serving_default"), "{err}");
    assert!(out.contains("predict_images"), "{out}");
}

#[test]
fn build_reads_each_body_against_the_signature_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("two.jsonl");
    std::fs::write(
        &body,
        concat!(
            r#"{"instances": [{"x": [0,1,2,3,4,5,6,7,8,9]}]}"#,
            "\n",
            r#"{"signature_name": "predict_images", "instances": [{"images": [[[0.5]]]}]}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("w.tfrecord");
    let (code, _, err) = run(&[
        "build",
        body.to_str().unwrap(),
        "--model",
        "tests/data/models/two_sigs",
        "--wire",
        "tfrecord",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, summary, _) = run(&["keys", "--format", "json", out.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&summary).unwrap();
    let mut sigs: Vec<&str> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["signature"].as_str().unwrap())
        .collect();
    sigs.sort();
    assert_eq!(sigs, ["predict_images", "serving_default"]);
    // A body naming a signature the model lacks: TF Serving's words.
    std::fs::write(
        &body,
        r#"{"signature_name": "nope", "instances": [{"x": [1]}]}"#,
    )
    .unwrap();
    let (code, _, err) = run(&[
        "build",
        body.to_str().unwrap(),
        "--model",
        "tests/data/models/two_sigs",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("\"nope\" not found in signature def"), "{err}");
}

/// An EAS request with one DT_BFLOAT16 feed `b` of float_val [3.0e38, 1.00390625].
fn eas_bf16_request() -> Vec<u8> {
    use tfreq::wire::{put_bytes_field, put_varint_field};
    let mut values = Vec::new();
    for x in [3.0e38f32, 1.003_906_2] {
        values.extend_from_slice(&x.to_le_bytes());
    }
    let mut shape = Vec::new();
    put_varint_field(&mut shape, 1, 2);
    let mut array = Vec::new();
    put_varint_field(&mut array, 1, 14);
    put_bytes_field(&mut array, 2, &shape);
    put_bytes_field(&mut array, 3, &values);
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, b"b");
    put_bytes_field(&mut entry, 2, &array);
    let mut req = Vec::new();
    put_bytes_field(&mut req, 1, b"s");
    put_bytes_field(&mut req, 2, &entry);
    put_bytes_field(&mut req, 3, b"y");
    req
}

#[test]
fn eas_bfloat16_values_are_what_the_processor_computes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bf16.bin");
    std::fs::write(&p, eas_bf16_request()).unwrap();
    let (code, out, _) = run(&[
        "inspect",
        "--format",
        "json",
        "--values",
        "all",
        p.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let vals = v["inputs"][0]["values"].as_array().unwrap();
    // FloatToBFloat16 keeps the upper 16 bits: 3.0e38 becomes 2.9907629905160607e38
    // (round to nearest would give 3.0040...e38).
    assert_eq!(vals[0].as_f64().unwrap(), 2.990_762_990_516_060_7e38);
    assert_eq!(vals[1].as_f64().unwrap(), 1.0);
    let (_, human, _) = run(&["inspect", p.to_str().unwrap()]);
    assert!(human.contains("2.990763e+38"), "{human}");
}

#[test]
fn warmup_from_eas_requests_is_the_bare_eas_request_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warm_up.bin");
    let o = out.to_str().unwrap();
    let (code, _, err) = run(&["warmup", "tests/data/eas/faq_prod.bin", "-o", o]);
    assert_eq!(code, 0, "{err}");
    let (_, head, _) = run(&["inspect", o]);
    assert!(head.contains(": EAS PredictRequest"), "{head}");
    // TF Serving requests: TF Serving's TFRecord warm-up.
    let (code, _, err) = run(&["warmup", "tests/data/tfs/faq_prod.bin", "-o", o]);
    assert_eq!(code, 0, "{err}");
    let (_, head, _) = run(&["inspect", o]);
    assert!(head.contains("TFRecord of PredictionLog"), "{head}");
    // Several EAS keys do not fit one bare request: said, with the way out.
    let (code, _, err) = run(&[
        "warmup",
        "tests/data/eas/faq_prod.bin",
        "tests/data/eas/seed_warm_up.bin",
        "-o",
        o,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--wire tfrecord"), "{err}");
    // --wire still chooses.
    let (code, _, err) = run(&[
        "warmup",
        "tests/data/eas/faq_prod.bin",
        "--wire",
        "tfrecord",
        "-o",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
}
