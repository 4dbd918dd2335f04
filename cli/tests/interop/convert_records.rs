//! `convert` and `scrub` keep every record of a TFRecord file, and every conversion
//! that cannot carry something says what, where (they once dropped records and fields
//! without a word).
//!
//! The warm-ups were written by `tf.io.TFRecordWriter` (tests/data/gen/make_tfrecord.py);
//! what `tfreq convert` / `tfreq scrub` wrote from them was read back by TensorFlow
//! (tests/data/gen/check_tfreq_tfrecord.sh → tfreq_written/every_kind.jsonl, one JSON
//! object per record: every field, and each tensor's values by `tf.make_ndarray`).

use crate::common::{s as path, tfreq};

use crate::common::{data_dir, read};
use base64::Engine;
use bytes::Bytes;
use serde_json::Value;
use tfreq::FillMode;
use tfreq::formats::{ConvertOptions, convert_file};
use tfreq::formats::{InputOptions, Layout};

fn run(args: &[&str]) -> (i32, String) {
    let r = crate::common::run(args);
    (r.code, r.err)
}

fn kinds(bytes: Vec<u8>) -> Vec<&'static str> {
    tfreq::formats::read(Bytes::from(bytes), &InputOptions::new())
        .and_then(|e| e.into_container())
        .unwrap()
        .entries
        .iter()
        .map(|e| e.log_kind.unwrap().name())
        .collect()
}

const MIXED: [&str; 6] = [
    "predict_log",
    "classify_log",
    "regress_log",
    "multi_inference_log",
    "none",
    "none",
];

#[test]
fn convert_and_scrub_keep_all_six_records_of_the_mixed_warmup() {
    // Before: 1 record out (the predict_log), exit 0, nothing said.
    let dir = tempfile::tempdir().unwrap();
    let src = path("tfrecord/warmup_mixed.tfrecord");
    for cmd in ["convert", "scrub"] {
        let out = dir.path().join(format!("{cmd}.tfrecord"));
        let o = out.display().to_string();
        let mut args = vec![cmd, src.as_str(), "-o", o.as_str()];
        if cmd == "convert" {
            args.extend(["--wire", "tfrecord"]);
        }
        let (code, err) = run(&args);
        assert_eq!(code, 0, "{cmd}: {err}");
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(kinds(bytes.clone()), MIXED, "{cmd}");
        if cmd == "convert" {
            // Nothing to convert from TF Serving to TF Serving: the same bytes.
            assert_eq!(bytes, read("tfrecord", "warmup_mixed.tfrecord"));
        }
    }
}

#[test]
fn every_kind_is_kept_by_convert_and_scrub() {
    let src = read("tfrecord", "warmup_every_kind.tfrecord");
    let want = [
        "predict_log",
        "classify_log",
        "regress_log",
        "multi_inference_log",
        "session_run_log",
        "predict_streamed_log",
        "none",
    ];
    assert_eq!(kinds(src.clone()), want);
    for scrub in [
        None,
        Some(FillMode::Zeros),
        Some(FillMode::Random { seed: 3 }),
    ] {
        let opts = ConvertOptions {
            scrub,
            ..Default::default()
        };
        let out = convert_file(Bytes::from(src.clone()), &Default::default(), None, &opts).unwrap();
        assert_eq!(out.records, 7);
        assert_eq!(kinds(out.data.clone()), want, "{scrub:?}");
        if scrub.is_some() {
            // The responses, client_id: named, never silently dropped.
            for gone in [
                "record 0: client_id",
                "record 0: predict_log.response",
                "record 1: classify_log.response",
                "record 4: session_run_log.response",
            ] {
                assert!(
                    out.scrubbed_out.iter().any(|g| g == gone),
                    "{gone}: {:?}",
                    out.scrubbed_out
                );
            }
        } else {
            assert_eq!(out.data, src);
            assert!(out.scrubbed_out.is_empty());
        }
    }
}

/// TensorFlow's reading of each record of `file`, from every_kind.jsonl.
fn tf_read(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("tfrecord/tfreq_written/every_kind.jsonl"))
        .unwrap();
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["file"] == file)
        .collect();
    assert!(!recs.is_empty(), "{file} not in every_kind.jsonl");
    recs
}

#[test]
fn tensorflow_reads_converted_files_as_their_sources() {
    // What TensorFlow read from tfreq's output is what it read from the source,
    // record for record, field for field.
    for (src, out) in [
        ("warmup_mixed.tfrecord", "from_mixed.tfrecord"),
        ("warmup_every_kind.tfrecord", "from_every_kind.tfrecord"),
    ] {
        let a = tf_read(src);
        let b = tf_read(out);
        assert_eq!(a.len(), b.len(), "{out}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x["message"], y["message"], "{out} record {}", y["record"]);
            assert_eq!(x["tensors"], y["tensors"], "{out} record {}", y["record"]);
        }
        // And tfreq wrote the bytes that are committed.
        let bytes = read("tfrecord", &format!("tfreq_written/{out}"));
        assert_eq!(kinds(bytes).len(), b.len());
    }
}

/// Holds a scrubbed record (as TensorFlow read it) to its source: the same structure,
/// names and counts; bytes values replaced by `x` strings of the same length, numbers
/// by zeros; responses and client_id gone.
fn same_but_scrubbed(src: &Value, out: &Value, key: &str, path: &str, checked: &mut usize) {
    let field = path.trim_end_matches(|c: char| c == ']' || c.is_ascii_digit());
    let field = field.strip_suffix('[').unwrap_or(field);
    let is_bytes = key == "string_val" || field.ends_with("bytes_list.value");
    let is_number = matches!(
        key,
        "float_val" | "int64_val" | "double_val" | "int_val" | "tensor_content"
    ) || field.ends_with("float_list.value")
        || field.ends_with("int64_list.value");
    match (src, out) {
        (Value::Object(a), Value::Object(b)) if a.contains_key("dtype") => {
            // A TensorProto: its values are checked through TensorFlow's reading
            // ("tensors"); the layout (tensor_content or a typed field) may differ.
            assert_eq!(a["dtype"], b["dtype"], "{path}");
            assert_eq!(a.get("tensor_shape"), b.get("tensor_shape"), "{path}");
            *checked += 1;
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                if matches!(k.as_str(), "response" | "client_id") {
                    assert!(!b.contains_key(k), "{path}.{k} kept");
                    continue;
                }
                let w = b.get(k).unwrap_or_else(|| panic!("{path}.{k} missing"));
                same_but_scrubbed(v, w, k, &format!("{path}.{k}"), checked);
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: count");
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                same_but_scrubbed(v, w, key, &format!("{path}[{i}]"), checked);
            }
        }
        (Value::String(a), Value::String(b)) if is_bytes => {
            let b64 = base64::engine::general_purpose::STANDARD;
            let (a, b) = (b64.decode(a).unwrap(), b64.decode(b).unwrap());
            assert_eq!(a.len(), b.len(), "{path}");
            assert!(b.iter().all(|&c| c == b'x'), "{path}: {b:?}");
            *checked += 1;
        }
        (Value::String(_), Value::String(b)) if key == "tensor_content" => {
            let b = base64::engine::general_purpose::STANDARD.decode(b).unwrap();
            assert!(b.iter().all(|&c| c == 0), "{path}");
            *checked += 1;
        }
        (_, b) if is_number => {
            assert!(
                b.as_f64() == Some(0.0) || b.as_str() == Some("0"),
                "{path}: {b}"
            );
            *checked += 1;
        }
        (a, b) => assert_eq!(a, b, "{path}"),
    }
}

#[test]
fn tensorflow_reads_scrubbed_files_with_every_value_replaced() {
    for (src, out) in [
        ("warmup_mixed.tfrecord", "scrubbed_mixed.tfrecord"),
        ("warmup_every_kind.tfrecord", "scrubbed_every_kind.tfrecord"),
    ] {
        let a = tf_read(src);
        let b = tf_read(out);
        assert_eq!(a.len(), b.len(), "{out}");
        let mut checked = 0;
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x["kind"], y["kind"]);
            let at = format!("{out} record {}", y["record"]);
            same_but_scrubbed(&x["message"], &y["message"], "", &at, &mut checked);
            // TensorFlow's values of every tensor: zeros and x strings.
            let tensors = y["tensors"].as_object().unwrap();
            for (name, vals) in tensors {
                if name.starts_with("response") {
                    panic!("{at}: {name} kept");
                }
                for v in vals.as_array().unwrap() {
                    assert!(
                        v.as_f64() == Some(0.0)
                            || v.as_str().is_some_and(|s| s.bytes().all(|c| c == b'x')),
                        "{at} {name}: {v}"
                    );
                }
                assert_eq!(
                    vals.as_array().unwrap().len(),
                    x["tensors"][name].as_array().unwrap().len(),
                    "{at} {name}"
                );
            }
        }
        assert!(checked >= 5, "{out}: only {checked} values checked");
        // tfreq's scrub today writes the committed bytes.
        let opts = ConvertOptions {
            scrub: Some(FillMode::Zeros),
            ..Default::default()
        };
        let now = convert_file(
            Bytes::from(read("tfrecord", src)),
            &Default::default(),
            None,
            &opts,
        )
        .unwrap();
        assert_eq!(now.data, read("tfrecord", &format!("tfreq_written/{out}")));
    }
}

/// Runs a command that must refuse (exit 2, naming `names`), then with `--lossy`
/// succeeds with a warning naming the same.
fn refused_then_lossy(args: &[&str], names: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").display().to_string();
    let mut a = args.to_vec();
    a.extend(["-o", out.as_str()]);
    let (code, err) = run(&a);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains("would leave out"), "{err}");
    assert!(err.contains("--lossy"), "{err}");
    for n in names {
        assert!(err.contains(n), "{args:?}: {n} not named: {err}");
    }
    assert!(!std::path::Path::new(&out).exists(), "written anyway");
    a.push("--lossy");
    let (code, err) = run(&a);
    assert_eq!(code, 0, "{args:?} --lossy: {err}");
    assert!(err.contains("warning") && err.contains("left out"), "{err}");
    for n in names {
        assert!(err.contains(n), "{args:?} --lossy: {n} not listed: {err}");
    }
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
}

#[test]
fn dtype_eas_lacks_is_an_error_or_a_listed_loss() {
    // Before: error for the dtype (kept), no way to convert the rest.
    refused_then_lossy(
        &[
            "convert",
            &path("tfs/dtype_uint32_typed.bin"),
            "--wire",
            "eas",
        ],
        &["inputs[\"x\"]: DT_UINT32 (EAS has no such dtype)"],
    );
}

#[test]
fn model_spec_to_eas_is_an_error_or_a_listed_loss() {
    // Before: exit 0, the model name and version silently gone.
    refused_then_lossy(
        &["convert", &path("tfs/spec_vector.bin"), "--wire", "eas"],
        &["model_spec.name \"m\"", "model_spec.version 3"],
    );
}

#[test]
fn client_id_and_request_options_to_eas_are_named() {
    refused_then_lossy(
        &["convert", &path("tfs/newer_fields.bin"), "--wire", "eas"],
        &["client_id", "request_options", "predict_streamed_options"],
    );
}

#[test]
fn several_records_into_a_bare_request_are_named() {
    // Before: "holds exactly one request; got 3" for predict records, but other kinds
    // were dropped first without a word (the mixed warm-up became one bare request).
    refused_then_lossy(
        &[
            "convert",
            &path("tfrecord/warmup_predict.tfrecord"),
            "--wire",
            "tf-serving",
        ],
        &["record 1: a further PredictRequest", "record 2"],
    );
    refused_then_lossy(
        &[
            "convert",
            &path("tfrecord/warmup_mixed.tfrecord"),
            "--wire",
            "tf-serving",
        ],
        &[
            "record 0: log_metadata",
            "record 1: classify_log record",
            "record 4: a record with no log_type",
        ],
    );
}

#[test]
fn scrub_names_what_it_drops() {
    // Before: client_id, request_options and predict_streamed_options vanished silently.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.bin").display().to_string();
    let (code, err) = run(&["scrub", &path("tfs/newer_fields.bin"), "-o", &out]);
    assert_eq!(code, 0, "{err}");
    for n in ["client_id", "request_options", "predict_streamed_options"] {
        assert!(err.contains(n), "{n}: {err}");
    }
    let m = tfreq::decode(&std::fs::read(&out).unwrap()).unwrap();
    assert!(m.extra.is_empty());
    // A scrub with nothing to drop says nothing.
    let (code, err) = run(&["scrub", &path("eas/faq_prod.bin"), "-o", &out]);
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn lossless_conversions_stay_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o").display().to_string();
    for (src, wire) in [
        ("eas/faq_prod.bin", "tf-serving"),
        ("eas/faq_prod.bin", "tfrecord"),
        ("tfs/seed_content.bin", "tfrecord"),
        ("tfrecord/warmup_predict.tfrecord", "tfrecord"),
    ] {
        let (code, err) = run(&["convert", &path(src), "--wire", wire, "-o", &out]);
        assert_eq!((code, err.as_str()), (0, ""), "{src} → {wire}");
    }
}

#[test]
fn library_write_refuses_what_it_cannot_carry() {
    let m = tfreq::decode(&read("tfs", "spec_vector.bin")).unwrap();
    let err = tfreq::formats::write(&[m], Layout::Eas).unwrap_err();
    assert!(
        matches!(err.detail(), tfreq::ErrorDetail::WouldLose { left_out, .. } if left_out.len() == 2),
        "{err}"
    );
}

#[test]
fn a_splat_goes_to_eas_as_the_full_count() {
    // tests/data/tfs/splat.bin: make_tensor_proto(7.0, shape=[2, 3]), one float_val.
    // TensorFlow repeats the last value; EAS's open-source processor takes exactly the
    // shape's count and aborts otherwise (DeepRec-AI/DeepRec
    // serving/processor/serving/util.cc, Proto2Tensor), so EAS gets all six.
    let out = tfreq()
        .args([
            "convert",
            "--wire",
            "eas",
            "--lossy",
            &path("tfs/splat.bin"),
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let m = tfreq::decode(&out.stdout).unwrap();
    assert_eq!(m.wire, tfreq::WireFormat::Eas);
    let e = m.tensors[0].elements(m.wire);
    assert_eq!((e.stored, e.fill), (6, tfreq::Fill::Exact));
    assert_eq!(
        (0..6).map(|i| e.get(i)).collect::<Vec<_>>(),
        vec![Some(tfreq::Scalar::F32(7.0)); 6]
    );

    // No values at all: TensorFlow's zeros, written out.
    let mut m = tfreq::decode(&read("tfs", "splat.bin")).unwrap();
    m.model_spec = None;
    m.tensors[0].fields.clear();
    let (eas, _) = tfreq::formats::write_with(&[m.clone()], Layout::Eas, false).unwrap();
    let back = tfreq::decode(&eas).unwrap();
    let e = back.tensors[0].elements(back.wire);
    assert_eq!((e.stored, e.get(5)), (6, Some(tfreq::Scalar::F32(0.0))));

    // A splat too large to write out is an error, not an allocation that kills the process.
    let mut big = tfreq::decode(&read("tfs", "splat.bin")).unwrap();
    big.model_spec = None;
    big.tensors[0].shape = tfreq::Shape::from_sizes(&[1 << 20, 1 << 20]);
    let err = tfreq::formats::write_with(&[big], Layout::Eas, false).unwrap_err();
    assert!(
        err.to_string().contains("EAS takes only the full count"),
        "{err}"
    );
}

/// Converting an EAS request whose int8/uint8/uint16 `int_val` holds values
/// outside the dtype wrote -129 as 127 (TF Serving's `tensor_content` holds the narrow
/// type) and dropped two of the three VALUE_OUT_OF_RANGE errors, exit 0. Now it is
/// refused, every value named; `--lossy` writes the value TensorFlow reads (the low
/// bits, as `tests/data/values/manifest.json` records `ParseTensor` keeping them) and
/// names each change; `-q` silences that list.
#[test]
fn out_of_range_ints_are_refused_or_each_change_named() {
    let values = [
        "inputs[\"i8\"].int_val[0]: the value -129, outside DT_INT8 (-128..=127); a lossy conversion writes 127",
        "inputs[\"i8\"].int_val[1]: the value 128, outside DT_INT8 (-128..=127); a lossy conversion writes -128",
        "inputs[\"u8\"].int_val[0]: the value -1, outside DT_UINT8 (0..=255); a lossy conversion writes 255",
        "inputs[\"u8\"].int_val[1]: the value 256, outside DT_UINT8 (0..=255); a lossy conversion writes 0",
        "inputs[\"u16\"].int_val[0]: the value -1, outside DT_UINT16 (0..=65535); a lossy conversion writes 65535",
        "inputs[\"u16\"].int_val[1]: the value 65536, outside DT_UINT16 (0..=65535); a lossy conversion writes 0",
    ];
    for wire in ["tf-serving", "tfrecord"] {
        refused_then_lossy(
            &["convert", &path("eas/int_out_of_range.bin"), "--wire", wire],
            &values,
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bin").display().to_string();
    let r = crate::common::run(&[
        "-q",
        "convert",
        &path("eas/int_out_of_range.bin"),
        "--wire",
        "tf-serving",
        "--lossy",
        "-o",
        &out,
    ]);
    assert_eq!((r.code, r.err.as_str()), (0, ""));
    // What was written is what TensorFlow reads, and nothing is out of range any more.
    let r = crate::common::run(&["inspect", &out]);
    assert_eq!(r.code, 0, "{}", r.out);
    for v in ["127, -128", "255, 0", "65535, 0"] {
        assert!(r.out.contains(v), "{v}: {}", r.out);
    }
    // Within one wire format nothing changes and nothing is refused.
    let r = crate::common::run(&[
        "convert",
        &path("eas/int_out_of_range.bin"),
        "--wire",
        "eas",
        "-o",
        &out,
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(path("eas/int_out_of_range.bin")).unwrap()
    );
}
