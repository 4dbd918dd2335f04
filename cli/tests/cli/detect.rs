//! What a file is, decided in one place and the same in every command
//! (`src/formats/detect.rs`), on files made by the real software
//! (`tests/data/gen/make_detect_*.py`, README there).

use crate::common::{run3 as run, s as path};

use bytes::Bytes;
use serde_json::Value;
use tfreq::formats::text_depth;
use tfreq::formats::{self, ContainerKind, Content, InputFormat, InputOptions, detect, read};

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tfreq-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Every command that reads requests, each reading `file` (with what it needs besides).
fn every_command(file: &str) -> Vec<Vec<String>> {
    let model = path("models/faq.metadata.json");
    let out = tmp("out.bin").display().to_string();
    let other = path("eas/faq_prod.bin");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        s(&["inspect", file]),
        s(&["diff", file, &other]),
        s(&["diff", &other, file]),
        s(&["check", file, "--model", &model]),
        s(&["keys", file]),
        s(&["warmup", file, "-o", &out]),
        s(&["scrub", file, "-o", &out]),
        s(&["convert", file, "--wire", "eas", "-o", &out]),
    ]
}

fn each_command_fails(file: &str, says: &[&str]) {
    for args in every_command(file) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {err}");
        for s in says {
            assert!(err.contains(s), "{a:?}: {err}");
        }
    }
}

#[test]
fn unframed_prediction_logs_are_refused_with_the_fix_in_every_command() {
    let file = path("detect/unframed_logs.bin");
    // What TensorFlow itself said when it read the file as a TFRecord.
    let m: Value =
        serde_json::from_slice(&crate::common::read("detect", "unframed_logs.json")).unwrap();
    let tf_err = m["tf_record_dataset"]["error"].as_str().unwrap();
    assert!(tf_err.contains("Is this even a TFRecord file?"), "{tf_err}");
    assert_eq!(m["tf_record_dataset"]["records_read"], 0);
    for args in every_command(&file) {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&a);
        if a[0] == "convert" {
            // convert reads them (it is the fix); a bare EAS file holds one request,
            // and the records it has no room for are each named.
            assert_eq!(code, 2, "{a:?}: {err}");
            assert!(err.contains("would leave out"), "{a:?}: {err}");
            assert!(
                err.contains("a bare request file holds one"),
                "{a:?}: {err}"
            );
            continue;
        }
        assert_eq!(code, 2, "{a:?}: {out}{err}");
        assert!(
            err.contains("4 PredictionLog messages concatenated without TFRecord framing"),
            "{a:?}: {err}"
        );
        assert!(err.contains("Is this even a TFRecord file?"), "{err}");
        assert!(err.contains("tfreq convert FILE --wire tfrecord"), "{err}");
        assert!(err.contains("--from unframed-logs"), "{err}");
        assert!(!err.contains("problems: none") && !out.contains("problems: none"));
    }
}

#[test]
fn convert_frames_unframed_logs_keeping_every_record() {
    let file = path("detect/unframed_logs.bin");
    let out = tmp("framed.tfrecord");
    let (code, _, err) = run(&[
        "convert",
        &file,
        "--wire",
        "tfrecord",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The records are the messages tensorflow-serving-api serialised, byte for byte,
    // log_metadata with the record it preceded.
    let m: Value =
        serde_json::from_slice(&crate::common::read("detect", "unframed_logs.json")).unwrap();
    let want: Vec<String> = m["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hex"].as_str().unwrap().to_string())
        .collect();
    let framed = Bytes::from(std::fs::read(&out).unwrap());
    let got: Vec<String> = formats::Records::new(framed)
        .map(|r| r.unwrap().data.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    assert_eq!(got, want);
    // And the result reads as the warm-up it should have been.
    let (code, stdout, err) = run(&["inspect", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("TFRecord of PredictionLog, 4 records (3 predict_log, 1 classify_log)"),
        "{stdout}"
    );
    // Forcing a bare wire format does not make them one request.
    let (code, _, err) = run(&["inspect", "--from", "tf-serving", &file]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("without TFRecord framing"), "{err}");
    // --model-name would need the records decoded and re-encoded: refused, with the way.
    let (code, _, err) = run(&[
        "convert",
        &file,
        "--wire",
        "tfrecord",
        "--model-name",
        "m",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--model-name"), "{err}");
    // --from unframed-logs reads them as they are.
    let (code, stdout, err) = run(&["inspect", "--from", "unframed-logs", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("without TFRecord framing"), "{stdout}");
    assert!(stdout.contains("record 3"), "{stdout}");
}

#[test]
fn the_warmup_file_must_be_a_tfrecord_in_every_command() {
    let file = path("detect/unframed_model/assets.extra/tf_serving_warmup_requests");
    for args in every_command(&file) {
        if args[0] == "convert" {
            continue; // converting is the fix: below
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {err}");
        assert!(err.contains("not a TFRecord"), "{a:?}: {err}");
        assert!(err.contains("fails to load the model"), "{a:?}: {err}");
        assert!(
            err.contains("tfreq convert FILE --wire tfrecord"),
            "{a:?}: {err}"
        );
    }
    // The fix the error names works on the file where it is.
    let out = tmp("w.tfrecord");
    let (code, _, err) = run(&[
        "convert",
        &file,
        "--wire",
        "tfrecord",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, stdout, err) = run(&["inspect", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("4 records"), "{stdout}");
    // A bare TF Serving request (TensorFlow's bytes) put where the warm-up file goes:
    // refused, and converted in place (which -o onto the input asks to be said
    // explicitly, with --overwrite-input).
    let dir = tmp("model/assets.extra");
    std::fs::create_dir_all(&dir).unwrap();
    let w = dir.join("tf_serving_warmup_requests");
    std::fs::write(&w, crate::common::read("tfs", "faq_prod.bin")).unwrap();
    let w = w.to_str().unwrap();
    let (code, _, err) = run(&["inspect", w]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("one bare TF Serving request"), "{err}");
    let (code, _, err) = run(&["convert", w, "--wire", "tfrecord", "-o", w]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--overwrite-input"), "{err}");
    let (code, _, err) = run(&[
        "convert",
        w,
        "--wire",
        "tfrecord",
        "-o",
        w,
        "--overwrite-input",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, stdout, err) = run(&["inspect", w]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("TFRecord of PredictionLog, 1 record"),
        "{stdout}"
    );
}

#[test]
fn an_empty_warmup_file_is_zero_records_with_a_warning() {
    let m: Value =
        serde_json::from_slice(&crate::common::read("detect", "unframed_logs.json")).unwrap();
    // TensorFlow reads 0 records from it, with no error.
    assert_eq!(m["empty_warmup_tf_record_dataset"]["records_read"], 0);
    assert!(m["empty_warmup_tf_record_dataset"]["error"].is_null());
    let file = path("detect/empty_model/assets.extra/tf_serving_warmup_requests");
    let (code, out, err) = run(&["inspect", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("0 records"), "{out}");
    assert!(out.contains("warning EMPTY_WARMUP"), "{out}");
    assert!(!err.contains("empty input"), "{err}");
}

#[test]
fn compressed_input_is_read_by_every_command() {
    let m: Value =
        serde_json::from_slice(&crate::common::read("detect", "compressed.json")).unwrap();
    for file in ["warmup_predict.tfrecord.gz", "warmup_predict.tfrecord.zz"] {
        // TensorFlow reads it with the compression named (3 records); uncompressed, as
        // TF Serving's warm-up reads, it fails.
        assert_eq!(m[file]["compressed_read"]["records_read"], 3);
        assert!(
            m[file]["uncompressed_read"]["error"]
                .as_str()
                .unwrap()
                .contains("corrupted record at 0")
        );
        let p = path(&format!("detect/{file}"));
        // Every command reads the 3 records inflated: none refuses the file.
        for args in every_command(&p) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, _, err) = run(&a);
            assert!(!err.contains("compressed data"), "{a:?}: {err}");
            if a[0] == "convert" {
                // Three requests do not fit one bare EAS file: each left out is named.
                assert_eq!(code, 2, "{a:?}: {err}");
                assert!(err.contains("would leave out"), "{a:?}: {err}");
            }
        }
        let (code, out, err) = run(&["inspect", &p]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("3 records"), "{out}");
        let (code, out, err) = run(&["keys", &p]);
        assert_eq!(code, 0, "{err}");
        assert!(out.starts_with("3 requests"), "{out}");
    }
}

#[test]
fn the_empty_file_is_the_empty_request() {
    let file = path("detect/empty_request.bin");
    let (code, out, err) = run(&["inspect", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("warning EMPTY_REQUEST"), "{out}");
    assert!(out.contains("no feeds and no fetches"), "{out}");
    // --format text prints what Python prints for it: a lone newline.
    let (code, out, _) = run(&["inspect", "-f", "text", &file]);
    assert_eq!(code, 0);
    let python = String::from_utf8(crate::common::read("detect", "empty_request.txt")).unwrap();
    assert_eq!(out, python);
    assert_eq!(out, "\n");
    let (code, out, err) = run(&["inspect", "-f", "json", &file]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.to_string().contains("EMPTY_REQUEST"), "{v}");
}

#[test]
fn a_request_that_reads_the_same_in_both_wires_decodes_with_a_note() {
    let file = path("detect/output_filter_only.bin");
    let (code, out, err) = run(&["inspect", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("note READINGS_AGREE"), "{out}");
    assert!(out.contains("fetches (1): y"), "{out}");
    let (code, out, _) = run(&["inspect", "-f", "text", &file]);
    assert_eq!(code, 0);
    let python =
        String::from_utf8(crate::common::read("detect", "output_filter_only.txt")).unwrap();
    assert_eq!(out.trim_end(), python.trim_end());
}

#[test]
fn rest_json_is_shown_as_rest_json() {
    let file = path("rest/faq_prod.json");
    let model = path("models/faq.metadata.json");
    let (code, out, err) = run(&["inspect", &file, "--model", &model]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("TF Serving REST JSON predict body, 1 request"),
        "{out}"
    );
    assert!(out.contains("input_holder  DT_STRING"), "{out}");
    assert!(!out.contains("EAS text warm-up"), "{out}");
    // Its text format is the request's (the bytes are its encoding: JSON keeps none).
    let (code, out, err) = run(&["inspect", "-f", "text", &file, "--model", &model]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("string_val: \"gostei muito do produto\""),
        "{out}"
    );
    // With an explicit dtype instead of the model.
    let (code, out, err) = run(&[
        "inspect",
        &file,
        "--dtype",
        "input_holder=DT_STRING",
        "--dtype",
        "threshold=DT_FLOAT",
        "--dtype",
        "model_id=DT_STRING",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("threshold     DT_FLOAT"), "{out}");
    // Without dtypes: recognised, and the options that give them are named.
    let (code, _, err) = run(&["inspect", &file]);
    assert_eq!(code, 2);
    assert!(err.contains("REST JSON"), "{err}");
    assert!(err.contains("--model") && err.contains("--dtype"), "{err}");
    // Commands without --model/--dtype name the command that reads REST JSON.
    let out = tmp("r.bin").display().to_string();
    for args in [
        vec!["convert", file.as_str(), "--wire", "eas", "-o", &out],
        vec!["scrub", file.as_str(), "-o", &out],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("REST JSON") && err.contains("tfreq build"),
            "{err}"
        );
        assert!(!err.contains("--dtype"), "{err}");
    }
    // diff and check take --dtype as well as --model.
    let (code, _, err) = run(&[
        "diff",
        &file,
        &file,
        "--dtype",
        "input_holder=DT_STRING",
        "--dtype",
        "threshold=DT_FLOAT",
        "--dtype",
        "model_id=DT_STRING",
    ]);
    assert_eq!(code, 0, "{err}");
    // check takes the dtypes from its own --model.
    let (code, out, err) = run(&["check", &file, "--model", &model]);
    assert!(code == 0 || code == 1, "{out}{err}");
}

#[test]
fn text_that_is_no_request_file_is_refused() {
    let root = crate::common::root();
    for (file, looks) in [("Cargo.toml", "TOML"), ("README.md", "Markdown")] {
        let p = root.join(file).display().to_string();
        let built = tmp("built.bin").display().to_string();
        let build = vec!["build".to_string(), p.clone(), "-o".into(), built];
        for args in every_command(&p).into_iter().chain([build]) {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, _, err) = run(&a);
            assert_eq!(code, 2, "{a:?}: {err}");
            assert!(err.contains("not a request file"), "{a:?}: {err}");
            assert!(!err.contains(" column "), "{a:?}: {err}");
            assert!(err.contains(looks), "{a:?}: {err}");
        }
    }
    // Said to be an EAS text warm-up, it is read as one.
    let p = root.join("Cargo.toml").display().to_string();
    let (code, out, err) = run(&["inspect", "--from", "eas-text", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("EAS text warm-up"), "{out}");
}

#[test]
fn deeply_nested_text_is_refused_not_a_crash_in_every_command() {
    // 1,600 nested `variant_val { tensors {`: prost-reflect's parser overflowed the
    // stack on it (exit 134).
    let file = path("detect/nested_variant.pbtxt");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text_depth(&text) > 3000);
    each_command_fails(&file, &["nests deeper than 100 levels"]);
    let (code, _, err) = run(&["inspect", "--from", "text", &file]);
    assert_eq!(code, 2, "{err}");
    let out = tmp("b.bin");
    let (code, _, err) = run(&["build", &file, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nests deeper"), "{err}");
    // The library's text parser itself refuses it.
    assert!(tfreq::formats::from_text(&text, None).is_err());
}

#[test]
fn every_command_takes_from() {
    let file = path("eas/faq_prod.bin");
    let model = path("models/faq.metadata.json");
    let out = tmp("f.bin").display().to_string();
    for args in [
        vec!["inspect", "--from", "eas", &file],
        vec!["diff", "--from", "eas", &file, &file],
        vec!["check", "--from", "eas", &file, "--model", &model],
        vec!["keys", "--from", "eas", &file],
        vec!["warmup", "--from", "eas", &file, "-o", &out],
        vec!["scrub", "--from", "eas", &file, "-o", &out],
        vec![
            "convert", "--from", "eas", &file, "--wire", "eas", "-o", &out,
        ],
    ] {
        let (code, o, err) = run(&args);
        assert!(code == 0 || code == 1, "{args:?}: {o}{err}");
    }
    let (code, _, err) = run(&[
        "build",
        "--from",
        "json",
        &path("rest/faq_prod.json"),
        "--model",
        &model,
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    // Forcing a format the bytes are not is an error, not a guess.
    let (code, _, err) = run(&["inspect", "--from", "tfrecord", &file]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn detection_in_the_library() {
    let src = InputOptions::new();
    let b = Bytes::from(crate::common::read("detect", "unframed_logs.bin"));
    assert!(detect(&b, &src).is_err());
    let accept = InputOptions::new().accept_unframed(true);
    let c = read(b.clone(), &accept).unwrap().into_container().unwrap();
    assert_eq!(c.kind, ContainerKind::UnframedLogs);
    assert_eq!(c.entries.len(), 4);
    // log_metadata belongs to the record it precedes.
    assert_eq!(c.entries[0].log_model_spec.as_ref().unwrap().name, "m");
    assert!(c.entries[1].log_model_spec.is_none());
    // The classify_log record's request is decoded, with its examples.
    match &c.entries[2].content {
        Content::Message(m) => {
            assert_eq!(m.method, tfreq::Method::Classify);
            assert_eq!(m.input.as_ref().map(|i| i.examples.len()), Some(1));
        }
        other => panic!("{other:?}"),
    }
    let forced = InputOptions::new().format(InputFormat::UnframedLogs);
    assert_eq!(detect(&b, &forced).unwrap(), ContainerKind::UnframedLogs);
    // Read as one bare message, no reading of concatenated logs is clean: a singular
    // field repeated (client_id, the number of predict_log) and a client_id that holds
    // a PredictLog around a request are anomalies.
    let tfs = tfreq::DecodeOptions {
        wire: Some(tfreq::WireFormat::TfServing),
        kind: Some(tfreq::Kind::Request),
        ..Default::default()
    };
    for opts in [Default::default(), tfs] {
        if let Ok((_, det)) = tfreq::decode_with(b.clone(), opts) {
            assert!(
                det.candidates.iter().all(|c| !matches!(c.2, Ok(0))),
                "{}",
                det.describe()
            );
        }
    }
    // Two predict_log records alone (no classify_log, which breaks the reading as a
    // request) do read as one TF Serving request: client_id twice, each holding a
    // PredictLog around a request, so three anomalies.
    let m: Value =
        serde_json::from_slice(&crate::common::read("detect", "unframed_logs.json")).unwrap();
    let mut two = Vec::new();
    for r in &m["records"].as_array().unwrap()[1..2] {
        let h = r["hex"].as_str().unwrap();
        two.extend(
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()),
        );
    }
    let two = [two.clone(), two].concat();
    let (_, det) = tfreq::decode_with(Bytes::from(two), tfs).unwrap();
    assert!(
        matches!(det.candidates[0].2, Ok(n) if n >= 2),
        "{}",
        det.describe()
    );
    // Real requests are never taken for unframed logs.
    for dir in ["eas", "tfs", "validator"] {
        for e in std::fs::read_dir(crate::common::data_dir().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "bin") {
                let b = Bytes::from(std::fs::read(&p).unwrap());
                let d = detect(&b, &src);
                assert!(
                    !matches!(&d, Err(e) if e.to_string().contains("PredictionLog")),
                    "{}: {d:?}",
                    p.display()
                );
            }
        }
    }
}

mod text_depth_props {
    use proptest::prelude::*;
    use tfreq::formats::text_depth;
    use tfreq::formats::{InputFormat, InputOptions, read};

    /// Openers protobuf text format nests with, around a field that may hold strings
    /// and comments with brackets in them (which do not nest).
    fn nested() -> impl Strategy<Value = (String, usize)> {
        (
            prop::collection::vec(
                prop::sample::select(vec![
                    ("variant_val { tensors { ", 2),
                    ("x < ", 1),
                    ("y: [ { ", 2),
                    ("a { # } } }\n", 1),
                    ("s: \"{{{\" b { ", 1),
                ]),
                0..400,
            ),
            prop::bool::ANY,
        )
            .prop_map(|(opens, close)| {
                let mut s = String::from("inputs { key: \"x\" value { ");
                let mut depth = 2;
                for (o, d) in &opens {
                    s.push_str(o);
                    depth += d;
                }
                if close {
                    for _ in 0..depth {
                        s.push_str(" }");
                    }
                }
                (s, depth)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn depth_is_bounded_before_parsing((text, depth) in nested()) {
            prop_assert_eq!(text_depth(&text), depth);
            let bytes = bytes::Bytes::from(text.clone());
            for format in [InputFormat::Auto, InputFormat::Text] {
                let src = InputOptions::new().format(format).for_path("x.pbtxt".as_ref());
                let r = read(bytes.clone(), &src).and_then(|e| e.into_container());
                if depth > 100 {
                    let err = r.unwrap_err().to_string();
                    prop_assert!(err.contains("nests deeper"), "{}", err);
                }
            }
            if depth > 100 {
                prop_assert!(tfreq::formats::from_text(&text, None).is_err());
            }
        }
    }
}

/// `inspect saved_model.pb` once said "EAS PredictResponse … exit 0" and a
/// `fingerprint.pb` read as a TF Serving request. A message whose every top-level field
/// is unknown to, or of a wire type impossible in, every request and response schema
/// (the kept-raw `client_id` / `request_options` alone make no request) is refused in
/// every command, saying what it looks like.
#[test]
fn savedmodel_and_fingerprint_files_are_not_requests_in_every_command() {
    for (file, looks) in [
        (
            "models/faq/saved_model.pb",
            "the bytes look like a SavedModel (saved_model.pb: schema version 1, 1 MetaGraphDef)",
        ),
        ("models/half_plus_two/saved_model.pb", "a SavedModel"),
        (
            "models/faq/fingerprint.pb",
            "the bytes look like a SavedModel fingerprint (fingerprint.pb",
        ),
        ("models/two_sigs/fingerprint.pb", "a SavedModel fingerprint"),
    ] {
        each_command_fails(
            &path(file),
            &["not a TensorFlow request or response", looks],
        );
    }
}

/// Protobuf encoding by hand (field number, wire type): enough for the sniff tests.
fn varint(mut n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

fn len_field(n: u32, body: &[u8]) -> Vec<u8> {
    let mut out = varint(u64::from(n) << 3 | 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

/// A tf.train.Example, a GraphDef and a TFRecord whose header checksum is wrong (laid
/// out by https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/example/example.proto, feature.proto there,
/// https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/graph.proto, node_def.proto there, and
/// https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/lib/io/record_writer.cc) are named as such, not decoded (the
/// Example read as an ambiguous response, the GraphDef as an EAS request whose
/// signature name holds a node).
#[test]
fn other_tensorflow_messages_are_named() {
    // Example { features { feature { key: "age" value { int64_list { value: 5 } } }
    //                      feature { key: "name" value { bytes_list { value: "bob" } } } } }
    let age = [
        len_field(1, b"age"),
        len_field(2, &len_field(3, &len_field(1, &varint(5)))),
    ]
    .concat();
    let name = [
        len_field(1, b"name"),
        len_field(2, &len_field(1, &len_field(1, b"bob"))),
    ]
    .concat();
    let example = len_field(1, &[len_field(1, &age), len_field(1, &name)].concat());
    // GraphDef { node { name: "x" op: "Placeholder" } node { name: "y" op: "Identity" input: "x" }
    //            versions { producer: 1 } }
    let graph = [
        len_field(
            1,
            &[len_field(1, b"x"), len_field(2, b"Placeholder")].concat(),
        ),
        len_field(
            1,
            &[
                len_field(1, b"y"),
                len_field(2, b"Identity"),
                len_field(3, b"x"),
            ]
            .concat(),
        ),
        len_field(4, &[0x08, 0x01]),
    ]
    .concat();
    // One record framing a real request, its length checksum zeroed.
    let req = std::fs::read(path("eas/faq_prod.bin")).unwrap();
    let mut rec = (req.len() as u64).to_le_bytes().to_vec();
    rec.extend([0; 4]);
    rec.extend(&req);
    rec.extend([0; 4]);
    for (bytes, says) in [
        (
            example,
            "the bytes look like a tf.train.Example (2 features)",
        ),
        (graph, "the bytes look like a GraphDef (a graph of 2 nodes"),
        (
            rec,
            "the bytes look like a TFRecord file with a bad header (1 record by its length fields, but the length checksum at byte 8 is wrong",
        ),
    ] {
        let e = tfreq::decode(&bytes).unwrap_err().to_string();
        assert!(e.starts_with("not a TensorFlow request or response"), "{e}");
        assert!(e.contains(says), "{e}");
        let f = tmp("other.pb");
        std::fs::write(&f, &bytes).unwrap();
        let (code, _, err) = run(&["inspect", &f.display().to_string()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// What keeps decoding as before: the empty request and the one-field messages the SDKs
/// write, a request of `client_id` alone (no anomaly), and a request whose only content
/// field holds an unknown field (decoded, the unknown field a warning).
#[test]
fn one_field_messages_keep_decoding() {
    for f in [
        "detect/empty_request.bin",
        "detect/output_filter_only.bin",
        "eas/fetch_only.bin",
        "eas/no_signature.bin",
    ] {
        let (code, out, err) = run(&["inspect", &path(f)]);
        assert_eq!(code, 0, "{f}: {out}{err}");
    }
    let client_id = len_field(6, b"abc");
    let m = tfreq::decode(&client_id).unwrap();
    assert_eq!(m.wire, tfreq::WireFormat::TfServing);
    // model_spec { name: "m" } with field 9 inside it: a message of the schemas (which
    // one, ambiguous), not "not a request".
    let spec = len_field(1, &[len_field(1, b"m"), len_field(9, b"?")].concat());
    let e = tfreq::decode(&spec).unwrap_err();
    assert!(
        matches!(e.detail(), tfreq::ErrorDetail::Ambiguous(_)),
        "{e}"
    );
    // One input whose tensor has dtype 0 and 8 bytes of double_val (from a property
    // test's shrunk case): field 2 of messages is no SavedModel without its schema
    // version.
    let one = len_field(
        2,
        &[
            len_field(1, b"x"),
            len_field(
                2,
                &[[0x08, 0x00].as_slice(), &len_field(6, &[0; 8])].concat(),
            ),
        ]
        .concat(),
    );
    let e = tfreq::decode(&one).unwrap_err();
    assert!(
        matches!(e.detail(), tfreq::ErrorDetail::Ambiguous(_)),
        "{e}"
    );
}

/// Text gets binary's rule: a request whose EAS and TF Serving readings say the same
/// thing (fetches only) reads as EAS, from its text as from its bytes. The text was
/// refused as ambiguous, exit 2, while the bytes read with READINGS_AGREE.
#[test]
fn text_and_bytes_of_an_agreeing_request_read_alike() {
    let (code, from_bytes, err) =
        run(&["inspect", "--format", "json", &path("eas/fetch_only.bin")]);
    assert_eq!(code, 0, "{err}");
    let (code, from_text, err) = run(&["inspect", "--format", "json", &path("eas/fetch_only.txt")]);
    assert_eq!(code, 0, "{err}");
    let (a, b): (Value, Value) = (
        serde_json::from_str(&from_bytes).unwrap(),
        serde_json::from_str(&from_text).unwrap(),
    );
    for field in ["wire", "signature_name", "fetches", "inputs"] {
        assert_eq!(a[field], b[field], "{field}: {a} {b}");
    }
    assert_eq!(a["wire"], "eas", "{a}");
    // A text whose readings differ is still refused, in words that read.
    let t = tmp("ambiguous.txt");
    std::fs::write(
        &t,
        "inputs { key: \"x\" value { dtype: DT_FLOAT } }\noutput_filter: \"y\"\n",
    )
    .unwrap();
    let (code, _, err) = run(&["inspect", t.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ambiguous: the bytes are valid as an EAS and a TF Serving PredictRequest in text format, which differ")
            && err.contains("--from eas"),
        "{err}"
    );
}

/// Standard base64 with `=` padding, lines of `width` characters (0: one line).
fn base64(b: &[u8], width: usize) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    if width == 0 {
        return s;
    }
    let lines: Vec<&str> = s
        .as_bytes()
        .chunks(width)
        .map(|l| std::str::from_utf8(l).unwrap())
        .collect();
    lines.join("\n") + "\n"
}

/// `warm_up.bin` written as base64 of the request (PaiRec's WarmUpData writes that form
/// beside the raw one) is read decoded and named: WARMUP_BASE64, an error, since the EAS
/// processor parses the file as raw protobuf. It was "not a request file".
#[test]
fn a_base64_warm_up_is_read_and_named() {
    let raw = std::fs::read(path("eas/faq_warmup.bin")).unwrap();
    for (name, width) in [("b64_one_line.bin", 0), ("b64_wrapped.bin", 76)] {
        let f = tmp(name);
        std::fs::write(&f, base64(&raw, width)).unwrap();
        let (code, out, err) = run(&["inspect", "--format", "json", f.to_str().unwrap()]);
        assert_eq!(code, 1, "{out} {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let (code2, want, _) = run(&["inspect", "--format", "json", &path("eas/faq_warmup.bin")]);
        assert_eq!(code2, 0);
        let want: Value = serde_json::from_str(&want).unwrap();
        assert_eq!(v["inputs"], want["inputs"], "{name}");
        assert_eq!(v["fetches"], want["fetches"], "{name}");
        assert!(out.contains("WARMUP_BASE64"), "{out}");
        // convert writes the decoded request, byte for byte the original.
        let o = tmp(&format!("{name}.decoded"));
        let (code, _, err) = run(&[
            "convert",
            f.to_str().unwrap(),
            "--wire",
            "eas",
            "-o",
            o.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(std::fs::read(&o).unwrap(), raw, "{name}");
    }
}

/// tfreq's own `inspect --format json` given back is named for what it is (it was called
/// "a TF Serving REST JSON predict body: JSON carries no dtypes", though it has dtypes).
#[test]
fn inspect_json_given_back_is_named() {
    for files in [
        vec![path("eas/faq_prod.bin")],
        vec![path("tfrecord/warmup_predict.tfrecord")],
        vec![
            path("eas/faq_prod.bin"),
            path("tfrecord/warmup_predict.tfrecord"),
        ],
    ] {
        let mut args = vec!["inspect".to_string(), "--format".into(), "json".into()];
        args.extend(files.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, _) = run(&args);
        assert_eq!(code, 0);
        let f = tmp("report.json");
        std::fs::write(&f, out).unwrap();
        let (code, _, err) = run(&["diff", f.to_str().unwrap(), &path("eas/faq_prod.bin")]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("this is tfreq's inspect report in JSON"),
            "{err}"
        );
        assert!(err.contains(&format!("{:?}", files[0])), "{err}");
    }
}

/// The fix a refusal names is a command that does the fix: run as printed (FILE the
/// file), it rewrites the warm-up in place, and the file then reads. The hint used to
/// write to standard output.
#[test]
fn the_fix_hint_is_a_command_that_fixes() {
    for src in ["detect/unframed_logs.bin", "eas/faq_warmup.bin"] {
        let dir = tempfile::tempdir().unwrap();
        let warm = dir.path().join("1/assets.extra");
        std::fs::create_dir_all(&warm).unwrap();
        let f = warm.join("tf_serving_warmup_requests");
        std::fs::copy(path(src), &f).unwrap();
        let file = f.to_str().unwrap();
        let (code, _, err) = run(&["inspect", file]);
        assert_eq!(code, 2, "{err}");
        let hint = err
            .split("fix: tfreq ")
            .nth(1)
            .and_then(|h| h.split(" (").next())
            .unwrap_or_else(|| panic!("no fix in {err}"));
        let args: Vec<String> = hint
            .split(' ')
            .map(|w| {
                if w == "FILE" {
                    file.to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&args);
        assert_eq!((code, out.as_str()), (0, ""), "{args:?}: {err}");
        let (code, out, err) = run(&["inspect", file]);
        assert_eq!(code, 0, "{src}: {out} {err}");
        assert!(out.contains("TFRecord of PredictionLog"), "{out}");
    }
}
