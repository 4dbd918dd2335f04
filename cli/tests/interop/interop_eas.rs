//! Files written by the real `eas-prediction` SDK (tests/data/eas, made by
//! tests/data/gen/make_eas.py): our builder writes the same bytes, our decoder reads
//! them, our text printer writes what Python's `print(msg)` wrote.

use tfreq::{Kind, WireFormat};

#[test]
fn builder_is_byte_identical_to_the_sdk() {
    let mut checked = 0;
    for e in crate::common::manifest("eas") {
        if !e["builder_equivalent"].as_bool().unwrap_or(false) || e["kind"] != "request" {
            continue;
        }
        let file = e["file"].as_str().unwrap();
        let req = crate::common::request_from_manifest(
            &e,
            e["signature_name"].as_str().unwrap(),
            WireFormat::Eas,
        );
        assert_eq!(
            req.to_bytes().unwrap(),
            crate::common::read("eas", file),
            "{file}: bytes differ from the SDK's"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} builder-equivalent files");
}

#[test]
fn decoder_reads_every_sdk_file() {
    for e in crate::common::manifest("eas") {
        let file = e["file"].as_str().unwrap();
        let bytes = crate::common::read("eas", file);
        let kind = if e["kind"] == "response" {
            Kind::Response
        } else {
            Kind::Request
        };
        let msg = tfreq::decode_as(&bytes, WireFormat::Eas, kind)
            .unwrap_or_else(|err| panic!("{file}: {err}"));
        let feeds = e["feeds"].as_array().unwrap();
        // Names in the file: the manifest lists add_feed calls; a repeated name appends.
        let mut names: Vec<&str> = Vec::new();
        for f in feeds {
            let n = f["name"].as_str().unwrap();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let got: Vec<&str> = msg.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(got, names, "{file}");
        let fetches = crate::common::fetches(&e);
        if kind == Kind::Request {
            assert_eq!(msg.fetches, fetches, "{file}");
        }
        if e["builder_equivalent"].as_bool().unwrap_or(false) {
            for f in feeds {
                let t = msg.tensor(f["name"].as_str().unwrap()).unwrap();
                assert_eq!(t.dtype.to_string(), f["dtype"].as_str().unwrap(), "{file}");
                let shape = crate::common::shape(f);
                assert_eq!(t.shape.sizes(), shape, "{file}");
                let el = t.elements(WireFormat::Eas);
                assert_eq!(
                    el.stored,
                    f["values"].as_array().unwrap().len(),
                    "{file} {}",
                    t.name
                );
            }
        }
    }
}

#[test]
fn detection_finds_eas_for_every_sdk_file() {
    for e in crate::common::manifest("eas") {
        let file = e["file"].as_str().unwrap();
        let bytes = crate::common::read("eas", file);
        match tfreq::decode(&bytes).map_err(tfreq::Error::into_detail) {
            Ok(msg) => {
                assert_eq!(msg.wire, WireFormat::Eas, "{file}");
                assert_eq!(msg.kind.as_str(), e["kind"].as_str().unwrap(), "{file}");
            }
            // Tiny files can be honestly ambiguous; they must say so, never guess wrong.
            Err(tfreq::ErrorDetail::Ambiguous(why)) => {
                assert!(bytes.len() < 8, "{file}: ambiguous: {why}");
            }
            Err(err) => panic!("{file}: {err}"),
        }
    }
}

#[test]
fn text_matches_python_print() {
    for e in crate::common::manifest("eas") {
        let file = e["file"].as_str().unwrap();
        let bytes = crate::common::read("eas", file);
        let name = if e["kind"] == "response" {
            "tfreq.eas.PredictResponse"
        } else {
            "tfreq.eas.PredictRequest"
        };
        let ours = tfreq::render::to_text(&bytes, name).unwrap() + "\n";
        let python =
            String::from_utf8(crate::common::read("eas", e["text"].as_str().unwrap())).unwrap();
        assert_eq!(ours, python, "{file}");
    }
}
