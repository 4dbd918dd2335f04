//! The `tf.Example` features a SavedModel parses, read from its graph, as
//! the generator declared them to TensorFlow (`tests/data/gen/make_examples.py`,
//! `feature_spec()`, written out as tests/data/examples/models/feature_spec.json): a TF1
//! graph's own `ParseExampleV2`, the same graph with the V1 op `ParseExample`
//! (tf1_examples_v1), and a Keras export's inside the function its signature calls.

use serde_json::Value;
use tfreq::formats::read_model;

fn dir() -> std::path::PathBuf {
    crate::common::root().join("tests/data/examples/models")
}

#[test]
fn every_example_signature_parses_the_generators_features() {
    let want: Value =
        serde_json::from_slice(&std::fs::read(dir().join("feature_spec.json")).unwrap()).unwrap();
    for model in ["tf1_examples", "tf1_examples_v1", "keras_examples"] {
        let (m, _) = read_model(&dir().join(model)).unwrap();
        let mut seen = 0;
        for (key, sig) in &m.meta_graphs[0].signatures {
            if key.starts_with("__") {
                assert!(sig.examples.is_none(), "{model} {key}");
                continue;
            }
            let spec = sig
                .examples
                .as_ref()
                .unwrap_or_else(|| panic!("{model} {key}: no spec"));
            seen += 1;
            let mut dense = spec.dense.clone();
            dense.sort_by(|a, b| a.key.cmp(&b.key));
            let wd = want["dense"].as_array().unwrap();
            assert_eq!(dense.len(), wd.len(), "{model} {key}");
            for (got, w) in dense.iter().zip(wd) {
                assert_eq!(got.key, w["key"].as_str().unwrap());
                assert_eq!(
                    got.dtype.to_string(),
                    w["dtype"].as_str().unwrap(),
                    "{model} {key} {}",
                    got.key
                );
                let shape: Vec<i64> = w["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_i64().unwrap())
                    .collect();
                assert_eq!(got.shape, shape, "{model} {key} {}", got.key);
                match w["default"].as_array() {
                    None => assert_eq!(got.default, None, "{model} {key} {} is required", got.key),
                    Some(d) if d.len() == 1 => {
                        assert_eq!(got.default.as_deref(), Some(d[0].to_string().as_str()))
                    }
                    Some(d) => {
                        let text: Vec<String> = d.iter().map(|v| v.to_string()).collect();
                        assert_eq!(got.default, Some(format!("[{}]", text.join(", "))));
                    }
                }
            }
            let sparse: Vec<(String, String)> = spec
                .sparse
                .iter()
                .map(|f| (f.key.clone(), f.dtype.to_string()))
                .collect();
            let ws: Vec<(String, String)> = want["sparse"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    (
                        f["key"].as_str().unwrap().into(),
                        f["dtype"].as_str().unwrap().into(),
                    )
                })
                .collect();
            assert_eq!(sparse, ws, "{model} {key}");
            assert!(spec.ragged.is_empty());
        }
        assert_eq!(
            seen, 3,
            "{model}: classify, regress and predict over examples"
        );
    }
}

#[test]
fn a_model_without_parse_example_has_no_spec_and_the_text_round_trips() {
    let (m, _) = read_model(&dir().join("batch_x2")).unwrap();
    assert!(
        m.meta_graphs[0]
            .signatures
            .values()
            .all(|s| s.examples.is_none())
    );
    // `tfreq signature` shows the features; its text reads back to the same model.
    let bin = env!("CARGO_BIN_EXE_tfreq");
    let out = std::process::Command::new(bin)
        .args(["signature", "--examples"])
        .arg(dir().join("tf1_examples"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("    x: DT_FLOAT [2], required"), "{text}");
    assert!(text.contains("    age: DT_INT64 [1], default 0"), "{text}");
    assert!(
        text.contains("    tags: DT_STRING, variable length (sparse)"),
        "{text}"
    );
    let back = tfreq::formats::from_saved_model_cli(&text, "t").unwrap();
    let (pb, _) = read_model(&dir().join("tf1_examples")).unwrap();
    assert_eq!(back, pb);
}

/// The graph's op name, as the generator asserted it: tf1_examples_v1 parses with
/// `ParseExample` only, tf1_examples with `ParseExampleV2` only, so the spec test above
/// reads each op's inputs and attributes.
#[test]
fn the_v1_model_parses_with_the_v1_op() {
    for (model, want, not) in [
        ("tf1_examples_v1", "ParseExample", "ParseExampleV2"),
        ("tf1_examples", "ParseExampleV2", "ParseExample"),
    ] {
        let bytes = std::fs::read(dir().join(model).join("saved_model.pb")).unwrap();
        // Each op name is stored as a length-delimited string in a NodeDef (field 2, tag 0x12).
        let has = |op: &str| {
            let mut pat = vec![0x12, op.len() as u8];
            pat.extend_from_slice(op.as_bytes());
            bytes.windows(pat.len()).any(|w| w == pat.as_slice())
        };
        assert!(has(want), "{model}: no {want} node");
        assert!(!has(not), "{model}: a {not} node");
    }
}

/// `tfreq signature --examples` prints the same signatures and features for the V1 graph as
/// for the V2 one (the tensor names are the same in both).
#[test]
fn signature_examples_shows_the_same_spec_for_the_v1_graph() {
    let show = |model: &str| {
        let out = crate::common::bin()
            .args(["signature", "--examples"])
            .arg(dir().join(model))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let v1 = show("tf1_examples_v1");
    assert_eq!(v1.matches("Parses tf.Example features").count(), 3, "{v1}");
    assert_eq!(v1, show("tf1_examples"));
}
