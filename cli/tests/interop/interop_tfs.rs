//! Files written by TensorFlow 2.21 / tensorflow-serving-api (tests/data/tfs, made by
//! tests/data/gen/make_tfs.py): our builder writes the same bytes as
//! `tf.make_tensor_proto` (or the typed fields filled by hand), our decoder reads them,
//! our text printer writes what `text_format.MessageToString` wrote.

use tfreq::{DType, Kind, ModelSpec, TfsEncoding, WireFormat};

fn spec_of(e: &serde_json::Value) -> ModelSpec {
    let s = &e["model_spec"];
    ModelSpec {
        name: s["name"].as_str().unwrap_or("").into(),
        version: s["version"].as_i64(),
        version_label: s["version_label"].as_str().map(String::from),
        signature_name: s["signature_name"].as_str().unwrap_or("").into(),
    }
}

#[test]
fn builder_is_byte_identical_to_tensorflow() {
    let mut checked = 0;
    for e in crate::common::manifest("tfs") {
        if !e["builder_equivalent"].as_bool().unwrap_or(false) || e["kind"] != "request" {
            continue;
        }
        let file = e["file"].as_str().unwrap();
        let spec = spec_of(&e);
        let req =
            crate::common::request_from_manifest(&e, &spec.signature_name, WireFormat::TfServing);
        let feeds = e["feeds"].as_array().unwrap();
        let typed = feeds.iter().all(|f| f["encoding"] == "typed");
        // bool/complex/uint16 content files come from tf.io.serialize_tensor (C++
        // AsProtoTensorContent), which writes content even where Python would not.
        let forced = feeds.iter().any(|f| {
            f["encoding"] == "tensor_content"
                && !DType::from_name(f["dtype"].as_str().unwrap())
                    .unwrap()
                    .info()
                    .python_content
        });
        let style = if typed {
            TfsEncoding::Typed
        } else if forced {
            TfsEncoding::Content
        } else {
            TfsEncoding::Python
        };
        let ours = req.to_tf_serving_bytes_with(&spec, style).unwrap();
        assert_eq!(
            ours,
            crate::common::read("tfs", file),
            "{file}: bytes differ from TensorFlow's ({style:?})"
        );
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} builder-equivalent files");
}

#[test]
fn decoder_reads_and_detects_every_tensorflow_file() {
    for e in crate::common::manifest("tfs") {
        let file = e["file"].as_str().unwrap();
        let bytes = crate::common::read("tfs", file);
        let msg = tfreq::decode(&bytes).unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(msg.wire, WireFormat::TfServing, "{file}");
        let kind = if e["kind"] == "response" {
            Kind::Response
        } else {
            Kind::Request
        };
        assert_eq!(msg.kind, kind, "{file}");
        assert_eq!(
            msg.model_spec.as_ref().map(|s| s.name.as_str()),
            e["model_spec"]["name"].as_str(),
            "{file}"
        );
        for f in e["feeds"].as_array().unwrap() {
            let name = f["name"].as_str().unwrap();
            let t = msg
                .tensor(name)
                .unwrap_or_else(|| panic!("{file}: no {name}"));
            assert_eq!(t.dtype.to_string(), f["dtype"].as_str().unwrap(), "{file}");
            let el = t.elements(WireFormat::TfServing);
            let enc = if f["encoding"] == "tensor_content" {
                "tensor_content"
            } else {
                "typed"
            };
            let got = match el.source {
                tfreq::Source::Content => "tensor_content",
                _ => "typed",
            };
            if !f["values"].as_array().unwrap().is_empty() {
                assert_eq!(got, enc, "{file} {name}");
            }
            let per = if matches!(t.dtype.dtype(), Some(DType::Complex64 | DType::Complex128)) {
                2
            } else {
                1
            };
            assert_eq!(
                el.stored * per,
                f["values"].as_array().unwrap().len(),
                "{file} {name}"
            );
        }
    }
}

#[test]
fn text_matches_python_message_to_string() {
    for e in crate::common::manifest("tfs") {
        let file = e["file"].as_str().unwrap();
        let bytes = crate::common::read("tfs", file);
        let name = if e["kind"] == "response" {
            "tensorflow.serving.PredictResponse"
        } else {
            "tensorflow.serving.PredictRequest"
        };
        let ours = tfreq::render::to_text(&bytes, name).unwrap() + "\n";
        let python =
            String::from_utf8(crate::common::read("tfs", e["text"].as_str().unwrap())).unwrap();
        assert_eq!(ours, python, "{file}");
    }
}

#[test]
fn serialize_tensor_vectors_decode() {
    let list: Vec<serde_json::Value> =
        serde_json::from_slice(&crate::common::read("tfs", "serialize_tensor.json")).unwrap();
    for e in list {
        let file = e["file"].as_str().unwrap();
        let t = tfreq::decode_tensor(
            crate::common::read("tfs", file).into(),
            WireFormat::TfServing,
        )
        .unwrap_or_else(|err| panic!("{file}: {err}"));
        assert_eq!(t.dtype.to_string(), e["dtype"].as_str().unwrap(), "{file}");
        let el = t.elements(WireFormat::TfServing);
        assert_eq!(el.fill, tfreq::Fill::Exact, "{file}");
    }
}
