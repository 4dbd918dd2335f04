//! `build` from TF Serving REST JSON and from text format gives the bytes the SDKs wrote.

use crate::common::{data_dir, read};
use tfreq::formats::from_text;
use tfreq::formats::{Dtypes, dtypes_from_metadata, from_json};
use tfreq::{TFRequest, TfsEncoding, WireFormat, encode};

fn fetches(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn rest_json_gives_the_sdk_bytes_faq() {
    // dtypes from the model's GetModelMetadata JSON (written by TF Serving's format).
    let meta = std::fs::read(data_dir().join("models/faq.metadata.json")).unwrap();
    let d = dtypes_from_metadata(&meta, "serving_default").unwrap();
    let json = read("rest", "faq_prod.json");
    let f = fetches(&["sorted_labels", "sorted_probs", "model_version_id"]);
    let msg = from_json(&json, &d, &f, WireFormat::Eas).unwrap();
    let bytes = encode(&msg, WireFormat::Eas, TfsEncoding::Python).unwrap();
    assert_eq!(bytes, read("eas", "faq_prod.bin"));
    // The same from explicit annotations.
    let mut d = Dtypes::default();
    for a in [
        "input_holder=DT_STRING",
        "threshold=float32",
        "model_id=DT_STRING",
    ] {
        d.annotate(a).unwrap();
    }
    let msg = from_json(&json, &d, &f, WireFormat::Eas).unwrap();
    assert_eq!(
        encode(&msg, WireFormat::Eas, TfsEncoding::Python).unwrap(),
        read("eas", "faq_prod.bin")
    );
}

#[test]
fn rest_json_gives_the_sdk_bytes_seed() {
    let mut d = Dtypes::default();
    for a in [
        "sentence1=DT_INT32",
        "sentence2=DT_INT32",
        "y=DT_INT32",
        "keep_rate=DT_FLOAT",
        "images=DT_FLOAT",
    ] {
        d.annotate(a).unwrap();
    }
    let msg = from_json(
        &read("rest", "seed_warm_up.json"),
        &d,
        &fetches(&["sorted_labels", "sorted_probs"]),
        WireFormat::Eas,
    )
    .unwrap();
    assert_eq!(
        encode(&msg, WireFormat::Eas, TfsEncoding::Python).unwrap(),
        read("eas", "seed_warm_up.bin")
    );
}

#[test]
fn rest_json_row_format_and_errors() {
    let mut d = Dtypes::default();
    d.annotate("x=DT_FLOAT").unwrap();
    // Row format: instances stacked on a new 0th dim.
    let m = from_json(
        br#"{"instances": [[1, 2], [3, 4], [5, 6]]}"#,
        &d,
        &[],
        WireFormat::TfServing,
    )
    .unwrap();
    assert_eq!(m.tensors[0].shape.sizes(), vec![3, 2]);
    assert_eq!(m.signature_name, "serving_default");
    let m = from_json(
        br#"{"instances": [{"x": [1, 2]}, {"x": [3, 4]}]}"#,
        &d,
        &[],
        WireFormat::TfServing,
    )
    .unwrap();
    assert_eq!(m.tensors[0].shape.sizes(), vec![2, 2]);
    let e = |j: &str, d: &Dtypes| {
        from_json(j.as_bytes(), d, &[], WireFormat::Eas)
            .unwrap_err()
            .to_string()
    };
    assert!(e(r#"{"inputs": {"x": [[1, 2], [3]]}}"#, &d).contains("unexpected size"));
    assert!(e(r#"{"inputs": {"x": 1}, "instances": [1]}"#, &d).contains("only one of"));
    assert!(e(r#"{"signature_name": 3, "inputs": {"x": 1}}"#, &d).contains("must be a string"));
    assert!(e(r#"{"inputs": {"x": "a"}}"#, &d).contains("is not of expected type: DT_FLOAT"));
    assert!(e(r#"{"inputs": {"z": 1}}"#, &d).contains("no dtype"));
    let mut i = Dtypes::default();
    i.annotate("k=DT_INT8").unwrap();
    assert!(e(r#"{"inputs": {"k": [1.5]}}"#, &i).contains("not of expected type"));
    assert!(e(r#"{"inputs": {"k": [300]}}"#, &i).contains("out of range"));
    let meta = std::fs::read(data_dir().join("models/faq.metadata.json")).unwrap();
    let full = dtypes_from_metadata(&meta, "serving_default").unwrap();
    assert!(e(r#"{"inputs": {"threshold": 0.5}}"#, &full).contains("Missing named input"));
    assert!(
        dtypes_from_metadata(&meta, "nope")
            .unwrap_err()
            .to_string()
            .contains("not found")
    );
}

#[test]
fn text_format_round_trips_sdk_and_tensorflow_files() {
    // The .txt next to each .bin is Python's text_format of it.
    for (dir, wire) in [("eas", WireFormat::Eas), ("tfs", WireFormat::TfServing)] {
        for f in [
            "faq_prod",
            "seed_warm_up",
            "seed_content",
            "strings_binary",
            "unicode_names",
        ] {
            let Ok(text) = std::fs::read_to_string(data_dir().join(dir).join(format!("{f}.txt")))
            else {
                continue;
            };
            let bin = read(dir, &format!("{f}.bin"));
            let msgs = from_text(&text, Some(wire)).unwrap_or_else(|e| panic!("{dir}/{f}: {e}"));
            let req = TFRequest::from_message(&msgs[0], wire)
                .unwrap_or_else(|e| panic!("{dir}/{f}: {e}"));
            let m = req.message();
            let style = TfsEncoding::Typed;
            let got = encode(m, wire, style).unwrap();
            let orig = tfreq::decode_as(&bin, wire, tfreq::Kind::Request).unwrap();
            let back = tfreq::decode_as(&got, wire, tfreq::Kind::Request).unwrap();
            assert_eq!(
                tfreq::analysis::ShapeKey::of(&back),
                tfreq::analysis::ShapeKey::of(&orig),
                "{dir}/{f}"
            );
            // Text format sorts map keys: the same request with its feeds in name order.
            let mut sorted = orig.clone();
            sorted.tensors.sort_by(|a, b| a.name.cmp(&b.name));
            assert!(
                got == encode(&sorted, wire, style).unwrap(),
                "{dir}/{f}: bytes differ"
            );
        }
    }
}
