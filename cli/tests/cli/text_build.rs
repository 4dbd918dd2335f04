//! `tfreq inspect --format text FILE | tfreq build` gives FILE back: for every request the
//! EAS SDK (tests/data/eas) and TensorFlow (tests/data/tfs) wrote — every dtype, both
//! wire formats, TensorFlow's one-value splat — byte for byte where the file's encoding
//! is canonical (fields in number order, map entries in name order), and the same
//! request otherwise. Before: build wrote EAS whatever the text was (a TF Serving dump
//! lost its model_spec) and refused splats ("shape [2, 3] holds 6 values, got 1").

use crate::common::data_dir;
use assert_cmd::Command;
use tfreq::{Kind, TfsEncoding};

fn tfreq() -> Command {
    Command::cargo_bin("tfreq").expect("binary builds")
}

/// Runs tfreq, expecting success (for inspect, exit 1 too: the file has error
/// findings, and its text is still printed); its stdout.
fn ok(args: &[&str]) -> Vec<u8> {
    let out = tfreq().args(args).output().unwrap();
    let code = out.status.code();
    assert!(
        code == Some(0) || (args[0] == "inspect" && code == Some(1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Whether tfreq's own encoding of what the file means (feeds in name order, each
/// tensor's layout as stored) is the file: then build must give the same bytes. Fields
/// kept raw (`client_id`, `request_options`, ...) are not canonicalised, so a file with
/// them only needs to come back equivalent.
fn canonical(bytes: &[u8]) -> bool {
    let Ok(mut m) = tfreq::decode(bytes) else {
        return false;
    };
    if !m.extra.is_empty() {
        return false;
    }
    m.tensors.sort_by(|a, b| a.name.cmp(&b.name));
    tfreq::encode(&m, m.wire, TfsEncoding::AsIs).is_ok_and(|b| b == bytes)
}

#[test]
fn text_of_every_sdk_and_tensorflow_request_builds_back() {
    let dir = tempfile::tempdir().unwrap();
    let (mut identical, mut equivalent) = (Vec::new(), Vec::new());
    for sub in ["eas", "tfs"] {
        let mut files: Vec<_> = std::fs::read_dir(data_dir().join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "bin"))
            .collect();
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let Ok(m) = tfreq::decode(&bytes) else {
                continue; // serialize_tensor_*.bin: a bare TensorProto, not a request
            };
            if m.kind != Kind::Request {
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let p = path.display().to_string();
            // fetch_only has no feeds: its text is valid as both formats.
            let from = if sub == "eas" { "eas" } else { "tf-serving" };
            let text = ok(&["inspect", "--format", "text", "--from", from, &p]);
            let txt = dir.path().join(format!("{name}.txt"));
            std::fs::write(&txt, &text).unwrap();
            let t = txt.display().to_string();
            let mut args = vec!["build", t.as_str(), "-o", "-"];
            if name == "fetch_only.bin" {
                args.extend(["--from", "eas"]);
            }
            let built = ok(&args);
            let back = tfreq::decode(&built).unwrap();
            assert_eq!(back.wire, m.wire, "{sub}/{name}: wire format changed");
            assert_eq!(back.model_spec, m.model_spec, "{sub}/{name}");
            if canonical(&bytes) {
                assert_eq!(built, bytes, "{sub}/{name}: bytes differ");
                identical.push(format!("{sub}/{name}"));
            } else {
                // The same request: its text is the source's text.
                let again = dir.path().join(format!("{name}.back.bin"));
                std::fs::write(&again, &built).unwrap();
                let a = again.display().to_string();
                let text2 = ok(&["inspect", "--format", "text", "--from", from, &a]);
                assert_eq!(
                    String::from_utf8_lossy(&text2),
                    String::from_utf8_lossy(&text),
                    "{sub}/{name}"
                );
                equivalent.push(format!("{sub}/{name}"));
            }
        }
    }
    // Every dtype file of both SDKs, and the splat, come back byte for byte.
    let dtypes = identical.iter().filter(|f| f.contains("/dtype_")).count();
    let all_dtypes = ["eas", "tfs"]
        .iter()
        .flat_map(|d| std::fs::read_dir(data_dir().join(d)).unwrap())
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_str().unwrap();
            n.starts_with("dtype_") && n.ends_with(".bin")
        })
        .count();
    assert_eq!(dtypes, all_dtypes, "not identical: {equivalent:?}");
    assert!(identical.iter().any(|f| f == "tfs/splat.bin"));
    assert!(identical.iter().any(|f| f == "tfs/short_values.bin"));
    assert!(identical.len() > 60, "{identical:?}");
}

#[test]
fn a_tensorflow_splat_builds_as_tensorflow_wrote_it() {
    // tests/data/tfs/splat.txt is Python's text_format of make_tensor_proto(7.0, shape=[2, 3]).
    let p = data_dir().join("tfs/splat.txt").display().to_string();
    let built = ok(&["build", &p, "-o", "-"]);
    assert_eq!(
        built,
        std::fs::read(data_dir().join("tfs/splat.bin")).unwrap()
    );
    let m = tfreq::decode(&built).unwrap();
    let e = m.tensors[0].elements(m.wire);
    assert_eq!(e.stored, 1);
    assert_eq!(
        (0..6).map(|i| e.get(i)).collect::<Vec<_>>(),
        vec![Some(tfreq::Scalar::F32(7.0)); 6],
        "TensorFlow's reading: six 7.0s"
    );
}

#[test]
fn a_tf_serving_dump_keeps_its_model_spec() {
    let p = data_dir().join("tfs/spec_vector.txt").display().to_string();
    let built = ok(&["build", &p, "-o", "-"]);
    assert_eq!(
        built,
        std::fs::read(data_dir().join("tfs/spec_vector.bin")).unwrap()
    );
    // To EAS: the model name and version cannot go, and build says so.
    let out = tfreq()
        .args(["build", &p, "--wire", "eas", "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model_spec.name \"m\""), "{err}");
    let out = tfreq()
        .args(["build", &p, "--wire", "eas", "--lossy", "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("model_spec.version 3"));
}

#[test]
fn text_parse_errors_give_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    // A misspelt field on line 6, column 75 (TF Serving); EAS fails at model_spec.
    std::fs::write(
        &bad,
        "model_spec {\n  name: \"m\"\n}\ninputs {\n  key: \"x\"\n  value { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.0 flot_val: 2 }\n}\n",
    )
    .unwrap();
    let out = tfreq()
        .args(["build", bad.to_str().unwrap(), "-o", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("as TF Serving: line 6 column 75:"), "{err}");
    assert!(err.contains("flot_val"), "{err}");
    assert!(err.contains("as EAS: line 1 column 1:"), "{err}");
    // In the text of a TFRecord, lines count from the top of the file.
    let rec = dir.path().join("rec.txt");
    std::fs::write(
        &rec,
        "# record 0: predict_log request\nmodel_spec {\n  name: \"m\"\n}\n\n# record 1: predict_log request\nmodel_spec {\n  nme: \"m\"\n}\n",
    )
    .unwrap();
    let out = tfreq()
        .args([
            "build",
            rec.to_str().unwrap(),
            "--from",
            "tf-serving",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("record 1: ") && err.contains("line 8 column 3:"),
        "{err}"
    );
}

#[test]
fn json_parse_errors_give_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"inputs\": {\"x\": [1.0,\n 2.0}\n").unwrap();
    let out = tfreq()
        .args([
            "build",
            bad.to_str().unwrap(),
            "--dtype",
            "x=DT_FLOAT",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2 column 5"), "{err}");
}

#[test]
fn text_of_a_mixed_warmup_does_not_build_with_records_silently_dropped() {
    // tests/data/tfrecord/warmup_mixed.tfrecord: 6 records written by tf.io.TFRecordWriter,
    // 1 predict_log, then a classify_log, a regress_log and a multi_inference_log (whose
    // requests the text holds and build writes back in their log types), and two records
    // with no log_type, whose text is only their `# record N: ...` heading.
    // Before: build wrote 1 record, exit 0, nothing said.
    let dir = tempfile::tempdir().unwrap();
    let mixed = data_dir().join("tfrecord/warmup_mixed.tfrecord");
    let text = dir.path().join("mixed.txt");
    std::fs::write(
        &text,
        ok(&["inspect", "--format", "text", mixed.to_str().unwrap()]),
    )
    .unwrap();
    let out_file = dir.path().join("out.tfrecord");
    let build = |lossy: bool| {
        let mut args = vec![
            "build",
            text.to_str().unwrap(),
            "-o",
            out_file.to_str().unwrap(),
        ];
        if lossy {
            args.push("--lossy");
        }
        tfreq().args(&args).output().unwrap()
    };
    let kinds = ["record 4: none", "record 5: none"];
    let out = build(false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!out_file.exists());
    for k in kinds {
        assert!(err.contains(k), "{k}: {err}");
    }
    assert!(err.contains("--lossy"), "{err}");
    assert!(!err.contains("classify_log"), "{err}");
    // --lossy writes the four requests as a TFRecord and lists the two on stderr.
    let out = build(true);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("left out (--lossy)"), "{err}");
    for k in kinds {
        assert!(err.contains(k), "{k}: {err}");
    }
    let bytes = bytes::Bytes::from(std::fs::read(&out_file).unwrap());
    let c = tfreq::formats::read(bytes, &Default::default())
        .and_then(|e| e.into_container())
        .unwrap();
    assert_eq!(c.kind, tfreq::formats::ContainerKind::TfRecord);
    let kinds: Vec<&str> = c
        .entries
        .iter()
        .map(|e| e.log_kind.unwrap().name())
        .collect();
    assert_eq!(
        kinds,
        [
            "predict_log",
            "classify_log",
            "regress_log",
            "multi_inference_log"
        ]
    );
}
