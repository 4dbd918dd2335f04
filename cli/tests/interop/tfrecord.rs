//! TFRecord warm-up files written by `tf.io.TFRecordWriter` (tests/data/tfrecord,
//! tests/data/models/half_plus_two/assets.extra): framing, PredictionLog kinds, the
//! warm-up loader's limits, and errors naming the record.

use crate::common::{data_dir, manifest, read};
use bytes::Bytes;
use serde_json::Value;
use tfreq::analysis;
use tfreq::formats::{
    self, Container, ContainerKind, Content, InputOptions, Layout, Record, write,
};

fn load_detailed(b: Bytes) -> Result<Container, Error> {
    tfreq::formats::read(b, &InputOptions::new()).and_then(|e| e.into_container())
}

fn load(b: Bytes) -> Result<Vec<Record>, Error> {
    tfreq::formats::read(b, &InputOptions::new()).and_then(|e| e.into_records())
}
use tfreq::{DecodeOptions, Error, ErrorDetail};

fn detailed(bytes: Vec<u8>) -> tfreq::formats::Container {
    load_detailed(Bytes::from(bytes)).expect("loads")
}

#[test]
fn manifest_files_list_every_record_with_its_kind() {
    for f in manifest("tfrecord") {
        let file = f["file"].as_str().unwrap();
        let c = detailed(read("tfrecord", file));
        assert_eq!(c.kind, ContainerKind::TfRecord, "{file}");
        let recs = f["records"].as_array().unwrap();
        assert_eq!(c.entries.len(), recs.len(), "{file}");
        for (i, (e, r)) in c.entries.iter().zip(recs).enumerate() {
            let kind = e.log_kind.unwrap().name();
            assert_eq!(kind, r["kind"].as_str().unwrap(), "{file} record {i}");
            assert_eq!(
                e.size as u64,
                r["length"].as_u64().unwrap(),
                "{file} record {i}"
            );
            assert_eq!(
                e.log_model_spec.is_some(),
                r.get("log_metadata").is_some(),
                "{file} record {i}"
            );
            if let Content::Log(log) = &e.content {
                let specs = log.request_model_specs();
                if let Some(tasks) = r.get("tasks") {
                    let want: Vec<(&str, &str)> = tasks
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| {
                            (
                                t["model_name"].as_str().unwrap(),
                                t["signature_name"].as_str().unwrap(),
                            )
                        })
                        .collect();
                    let got: Vec<(&str, &str)> = specs
                        .iter()
                        .map(|s| (s.name.as_str(), s.signature_name.as_str()))
                        .collect();
                    assert_eq!(got, want, "{file} record {i}");
                } else if let Some(sig) = r.get("signature_name") {
                    assert_eq!(
                        specs[0].signature_name,
                        sig.as_str().unwrap(),
                        "{file} record {i}"
                    );
                    assert_eq!(
                        specs[0].name,
                        r["model_name"].as_str().unwrap(),
                        "{file} record {i}"
                    );
                }
            }
            if kind == "predict_log" {
                let Content::Message(m) = &e.content else {
                    panic!("{file} record {i}: predict_log not decoded")
                };
                assert_eq!(
                    m.model_spec.as_ref().unwrap().name,
                    r["model_name"].as_str().unwrap()
                );
                assert_eq!(m.signature_name, r["signature_name"].as_str().unwrap());
                let fetches: Vec<&str> = r["fetches"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                assert_eq!(m.fetches, fetches);
                for inp in r["inputs"].as_array().unwrap() {
                    let t = m.tensor(inp["name"].as_str().unwrap()).expect("input");
                    assert_eq!(t.dtype.to_string(), inp["dtype"].as_str().unwrap());
                    let shape: Vec<i64> = inp["shape"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_i64().unwrap())
                        .collect();
                    assert_eq!(t.shape.sizes(), shape);
                }
            }
        }
    }
}

#[test]
fn loader_limits_are_findings() {
    let limits = analysis::file_findings;
    let codes = |file: &str| -> Vec<&'static str> {
        limits(&detailed(read("tfrecord", file)))
            .iter()
            .map(|f| f.code.as_str())
            .collect()
    };
    assert_eq!(codes("warmup_predict.tfrecord"), Vec::<&str>::new());
    assert_eq!(
        codes("warmup_mixed.tfrecord"),
        vec!["NO_LOG_TYPE", "NO_LOG_TYPE"]
    );
    assert_eq!(
        codes("warmup_unsupported.tfrecord"),
        vec!["UNSUPPORTED_LOG_TYPE", "UNSUPPORTED_LOG_TYPE"]
    );
    // 1001 records: one over TF Serving's limit.
    let rec = &read("tfrecord", "warmup_predict.tfrecord")[..12 + 62 + 4];
    let many: Vec<u8> = rec.repeat(1001);
    let c = detailed(many);
    assert_eq!(c.entries.len(), 1001);
    assert_eq!(
        limits(&c)
            .iter()
            .map(|f| f.code.as_str())
            .collect::<Vec<_>>(),
        vec!["TOO_MANY_RECORDS"]
    );
    let exactly: Vec<u8> = rec.repeat(1000);
    assert!(limits(&detailed(exactly)).is_empty());
}

#[test]
fn tf_serving_half_plus_two_warmup() {
    let p = data_dir().join("models/half_plus_two/assets.extra/tf_serving_warmup_requests");
    let want: Vec<Value> = serde_json::from_slice(
        &std::fs::read(data_dir().join("models/half_plus_two.warmup.json")).unwrap(),
    )
    .unwrap();
    let c = detailed(std::fs::read(&p).unwrap());
    let kinds: Vec<&str> = c
        .entries
        .iter()
        .map(|e| e.log_kind.unwrap().name())
        .collect();
    let want_kinds: Vec<&str> = want.iter().map(|w| w["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, want_kinds);
    for (e, w) in c.entries.iter().zip(&want) {
        let Content::Log(log) = &e.content else {
            continue;
        };
        let sigs: Vec<String> = log
            .request_model_specs()
            .into_iter()
            .map(|s| s.signature_name)
            .collect();
        let want: Vec<String> = match (w.get("signature_names"), w.get("signature_name")) {
            (Some(v), _) => v
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect(),
            (None, Some(s)) => vec![s.as_str().unwrap().to_string()],
            _ => vec![],
        };
        assert_eq!(sigs, want);
    }
    let recs = load(Bytes::from(std::fs::read(&p).unwrap())).unwrap();
    // Every record with a request is one: the predict request, and the classify, regress
    // and multi-inference ones with their method.
    let methods: Vec<&str> = recs.iter().map(|r| r.message.method.as_str()).collect();
    let want_methods: Vec<&str> = want_kinds
        .iter()
        .filter_map(|k| match *k {
            "predict_log" => Some("predict"),
            "classify_log" => Some("classify"),
            "regress_log" => Some("regress"),
            "multi_inference_log" => Some("multi_inference"),
            _ => None,
        })
        .collect();
    assert_eq!(methods, want_methods);
    assert_eq!(recs[0].label, "record 0");
    let x = recs[0].message.tensor("x").unwrap();
    assert_eq!(x.shape.sizes(), vec![3, 1]);
    assert_eq!(recs[0].message.fetches, vec!["y"]);
}

#[test]
fn flipped_byte_and_truncation_name_the_record() {
    let file = read("tfrecord", "warmup_predict.tfrecord");
    // Record 1 starts at 78 (12 + 62 + 4); flip a byte of its data.
    let mut bad = file.clone();
    bad[78 + 20] ^= 0x01;
    let err = load(Bytes::from(bad)).unwrap_err();
    match err.detail() {
        ErrorDetail::TfRecord(e) => {
            assert!(matches!(e, formats::TfRecordError::DataCrc { .. }), "{e}");
            assert_eq!((e.record(), e.offset()), (1, 78));
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("record 1"), "{err}");
    // Truncated inside record 2.
    let cut = &file[..file.len() - 10];
    let err = load(Bytes::copy_from_slice(cut)).unwrap_err();
    match err.detail() {
        ErrorDetail::TfRecord(e) => {
            assert!(matches!(e, formats::TfRecordError::Truncated { .. }), "{e}");
            assert_eq!(e.record(), 2);
        }
        other => panic!("{other}"),
    }
    // A flipped length byte.
    let mut bad = file.clone();
    bad[78 + 1] ^= 0x80;
    let err = load(Bytes::from(bad)).unwrap_err();
    assert!(
        err.to_string().contains("record 1") && err.to_string().contains("length checksum"),
        "{err}"
    );
}

#[test]
fn written_file_matches_tensorflow_writer_bytes() {
    // Re-encoding the three predict requests tf.io.TFRecordWriter wrote gives its bytes.
    let file = read("tfrecord", "warmup_predict.tfrecord");
    let msgs: Vec<_> = load(Bytes::from(file.clone()))
        .unwrap()
        .into_iter()
        .map(|r| r.message)
        .collect();
    assert_eq!(msgs.len(), 3);
    assert_eq!(write(&msgs, Layout::TfRecord).unwrap(), file);
}

#[test]
fn tfreq_written_file_read_by_tensorflow() {
    // Written by `tfreq convert` and read back by TensorFlow with read_tfrecord.py
    // (tests/data/gen/check_tfreq_tfrecord.sh records TensorFlow's output next to it).
    let dir = data_dir().join("tfrecord/tfreq_written");
    let tf_out = std::fs::read_to_string(dir.join("read_tfrecord.out")).unwrap();
    for line in tf_out.lines() {
        let mut cols = line.split('\t');
        let loc = cols.next().unwrap();
        let kind = cols.next().unwrap();
        let (file, idx) = loc.rsplit_once(':').unwrap();
        let name = std::path::Path::new(file)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let c = detailed(std::fs::read(dir.join(name)).unwrap());
        let i: usize = idx.parse().unwrap();
        let e = &c.entries[i];
        assert_eq!(e.log_kind.unwrap().name(), kind, "{line}");
        let Content::Message(m) = &e.content else {
            // Other kinds are copied whole; cli/tests/interop/convert_records.rs compares them.
            assert_ne!(kind, "predict_log", "{line}");
            continue;
        };
        let inputs = cols.find(|c| c.starts_with("inputs=")).unwrap();
        if m.method.takes_examples() {
            // read_tfrecord.py lists a classify/regress/multi-inference Input as
            // examples:N (+context for example_list_with_context).
            let want = match &m.input {
                Some(i) if i.with_context => {
                    format!("inputs=[examples:{}+context]", i.examples.len())
                }
                Some(i) => format!("inputs=[examples:{}]", i.examples.len()),
                None => "inputs=[]".to_string(),
            };
            assert_eq!(inputs, want, "{line}");
            continue;
        }
        let mut names: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
        names.sort();
        assert_eq!(inputs, format!("inputs=[{}]", names.join(",")), "{line}");
    }
    assert!(tf_out.lines().count() >= 2);
}

#[test]
fn tfreq_warmup_file_holds_no_production_strings() {
    // Written by `tfreq warmup` from faq_prod, faq_prod_batch4 and strings_binary
    // (check_tfreq_tfrecord.sh); TensorFlow read it (read_tfrecord.out).
    let file =
        std::fs::read(data_dir().join("tfrecord/tfreq_written/warmup_scrubbed.tfrecord")).unwrap();
    for src in [
        "eas/faq_prod.bin",
        "eas/faq_prod_batch4.bin",
        "eas/strings_binary.bin",
    ] {
        let m = tfreq::decode(&std::fs::read(data_dir().join(src)).unwrap()).unwrap();
        for t in &m.tensors {
            let e = t.elements(m.wire);
            for i in 0..e.stored {
                if let Some(tfreq::Scalar::Bytes(b)) = e.stored_get(i)
                    && b.len() >= 4
                {
                    assert!(
                        !file.windows(b.len()).any(|w| w == &b[..]),
                        "{src}: {:?} kept",
                        String::from_utf8_lossy(&b)
                    );
                }
            }
        }
    }
    assert_eq!(detailed(file).entries.len(), 3);
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any bytes: the TFRecord reader and PredictionLog decoder return errors, never panic.
        #[test]
        fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = load_detailed(Bytes::from(data.clone()));
            for rec in formats::Records::new(Bytes::from(data.clone())).flatten() {
                let _ = tfreq::formats::record_entry(rec, DecodeOptions::default());
            }
            let _ = tfreq::formats::PredictionLog::decode(Bytes::from(data), 0)
                .map(|l| l.request_model_specs());
        }

        /// A real warm-up file with one byte changed or cut short: an error or a clean
        /// read, never a panic; a framing error names a record that exists.
        #[test]
        fn damaged_real_file(pos in 0usize..454, bit in 0u8..8, cut in 0usize..454) {
            let mut b = read("tfrecord", "warmup_mixed.tfrecord");
            let p = pos % b.len();
            b[p] ^= 1 << bit;
            b.truncate(cut.max(1));
            if let Err(ErrorDetail::TfRecord(e)) = load_detailed(Bytes::from(b)).map_err(Error::into_detail) {
                prop_assert!(e.record() < 6);
            }
        }
    }
}
