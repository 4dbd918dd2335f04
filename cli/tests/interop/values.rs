//! Values and shapes as TensorFlow reads them, and one severity per finding in every
//! command, on files made by TensorFlow 2.21 and eas-prediction
//! (`tests/data/gen/make_values.py` writes `tests/data/values/` and records what
//! TensorFlow's `ParseTensor` — C++ `Tensor::FromProto`, as TF Serving reads a request —
//! answered for each file).

use crate::common::{json, run, s};
use serde_json::Value;

fn entry(file: &str) -> Value {
    crate::common::manifest("values")
        .into_iter()
        .find(|e| e["file"] == file)
        .unwrap_or_else(|| panic!("{file} not in the manifest"))
}

/// (code, severity, name) of every finding of a `diff` / `check` JSON report,
/// input problems included.
fn report_findings(v: &Value) -> Vec<(String, String, String)> {
    let problems = v["problems"].as_array().cloned().unwrap_or_default();
    let requests = v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["findings"].as_array().unwrap().clone());
    problems
        .into_iter()
        .chain(requests)
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// (code, severity, name) of the findings `inspect --format json` lists for a bare
/// message.
fn inspect_findings(v: &Value) -> Vec<(String, String, String)> {
    v["problems"]
        .as_array()
        .unwrap_or_else(|| panic!("no problems list: {v}"))
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Values the builder refuses are flagged when read
// ---------------------------------------------------------------------------------------

/// TensorFlow keeps the low bits of an out-of-range int_val (ParseTensor: 300 in an int8
/// is 44): the finding is an error, names the value TensorFlow makes of it, and matches
/// TensorFlow input by input.
#[test]
fn out_of_range_int_val_is_flagged_with_what_tensorflow_makes_of_it() {
    let e = entry("int_out_of_range_tfs.bin");
    let (code, v) = json(&["inspect", &s("values/int_out_of_range_tfs.bin")]);
    assert_eq!(code, 1, "{v}");
    let found = inspect_findings(&v);
    let tf_parse = e["tf_parse"].as_object().unwrap();
    for (name, parsed) in tf_parse {
        let f: Vec<_> = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "VALUE_OUT_OF_RANGE" && f["name"] == name.as_str())
            .collect();
        if name == "ok_i8" {
            assert!(f.is_empty(), "{name}: {found:?}");
            continue;
        }
        assert_eq!(f.len(), 1, "{name}: {found:?}");
        assert_eq!(f[0]["severity"], "error");
        // The first value TensorFlow changed, as the message says it becomes.
        let first = parsed[0].as_f64().unwrap();
        let msg = f[0]["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!("becomes {}", first as i64)),
            "{name}: TensorFlow gave {parsed}; {msg}"
        );
    }
    // Python refuses the same tensors outright.
    assert!(
        e["tf_make_ndarray"]["i8"]
            .as_str()
            .unwrap()
            .contains("OverflowError")
    );
}

/// The file eas-prediction writes without a check (`TFRequest.add_feed` of 300 for
/// DT_INT8): every command that reads it says so, at one severity.
#[test]
fn sdk_written_out_of_range_is_an_error_in_inspect_check_and_diff() {
    let f = s("eas/int_out_of_range.bin");
    let (code, v) = json(&["inspect", &f]);
    assert_eq!(code, 1);
    let seen: Vec<String> = inspect_findings(&v)
        .into_iter()
        .filter(|(c, sev, _)| c == "VALUE_OUT_OF_RANGE" && sev == "error")
        .map(|(.., n)| n)
        .collect();
    // The manifest's out-of-range feeds (i8: 300, u8: -1, u16: 70000).
    assert_eq!(seen, ["i8", "u8", "u16"]);
    let (code, v) = json(&["diff", &f, &f]);
    assert_eq!(code, 1, "{v}");
    let all = report_findings(&v);
    // Once as a warm-up problem, once on the production request.
    assert_eq!(
        all.iter()
            .filter(|(c, sev, _)| c == "VALUE_OUT_OF_RANGE" && sev == "error")
            .count(),
        2 * seen.len(),
        "{all:?}"
    );
    assert!(!all.iter().any(|(c, ..)| c == "VALUES_DIFFER"));
}

/// Shapes at TensorFlow's limits: BAD_SHAPE exactly where ParseTensor refuses.
#[test]
fn bad_shape_exactly_where_tensorflow_refuses() {
    let shapes: Vec<Value> = crate::common::manifest("values")
        .into_iter()
        .filter(|e| e["file"].as_str().unwrap().starts_with("shape_"))
        .collect();
    assert_eq!(shapes.len(), 7);
    for e in shapes {
        let file = e["file"].as_str().unwrap();
        let tf_refuses = e["tf_parse"]["x"].as_str().unwrap().starts_with("error");
        let (code, v) = json(&["inspect", &s(&format!("values/{file}"))]);
        let bad = inspect_findings(&v)
            .iter()
            .any(|(c, sev, _)| c == "BAD_SHAPE" && sev == "error");
        assert_eq!(bad, tf_refuses, "{file}: {v}");
        assert_eq!(code, i32::from(tf_refuses), "{file}");
    }
    let (_, v) = json(&["inspect", &s("values/shape_overflow_before_zero.bin")]);
    let msg = v["problems"][0]["message"].as_str().unwrap();
    assert!(msg.contains("overflows int64 at dim 62"), "{msg}");
    let (_, v) = json(&["inspect", &s("values/shape_rank_255.bin")]);
    let msg = v["problems"][0]["message"].as_str().unwrap();
    assert!(msg.contains("255 dims"), "{msg}");
}

/// The builder refuses what TensorFlow refuses, and takes what it takes.
#[test]
fn builder_shape_limits_follow_tensorflow() {
    use tfreq::{BuildError, DType, TFRequest};
    let mut r = TFRequest::for_wire("s", tfreq::WireFormat::TfServing);
    let mut dims = vec![2i64; 63];
    dims.push(0);
    assert!(matches!(
        r.add_feed("a", &dims, DType::Float, Vec::<f32>::new()),
        Err(BuildError::ShapeOverflow { .. })
    ));
    assert!(matches!(
        r.add_feed("b", &[1; 255], DType::Float, vec![1.0f32]),
        Err(BuildError::TooManyDims { rank: 255, .. })
    ));
    assert!(matches!(
        r.add_feed("c", &[i64::MAX, 2], DType::Float, Vec::<f32>::new()),
        Err(BuildError::ShapeOverflow { .. })
    ));
    r.add_feed("d", &[1; 254], DType::Float, vec![1.0f32])
        .unwrap();
    r.add_feed("e", &[0, 1 << 62, 4], DType::Float, Vec::<f32>::new())
        .unwrap();
}

/// Size errors say what was found and what was needed.
#[test]
fn content_size_error_says_found_and_needed() {
    let mut req = tfreq::TFRequest::for_wire("s", tfreq::WireFormat::TfServing);
    req.add_feed("x", &[2, 3], tfreq::DType::Float, vec![0.0f32; 6])
        .unwrap();
    let mut m = req.into_message();
    m.tensors[0].fields.clear();
    m.tensors[0].content = Some(bytes::Bytes::from(vec![0u8; 20]));
    let f = tfreq::analysis::lint(&m);
    let bad = f.iter().find(|f| f.code == "BAD_CONTENT").unwrap();
    assert!(
        bad.message
            .contains("tensor_content is 20 bytes; 6 elements of DT_FLOAT need 24"),
        "{}",
        bad.message
    );
}

// ---------------------------------------------------------------------------------------
// diff compares what TensorFlow reads
// ---------------------------------------------------------------------------------------

/// A one-value warm-up tensor and the full production tensor TensorFlow makes the same
/// (ParseTensor equal) are equal for `diff`; one other element is VALUES_DIFFER.
#[test]
fn splat_warmup_and_full_production_tensor_are_equal() {
    let eq = entry("splat_equal")["tf_equal"].clone();
    for (pair, tf_equal) in eq.as_object().unwrap() {
        let (w, p) = pair.split_once('=').unwrap();
        let (code, v) = json(&[
            "diff",
            &s(&format!("values/{w}")),
            &s(&format!("values/{p}")),
        ]);
        let all = report_findings(&v);
        let differ = all.iter().any(|(c, ..)| c == "VALUES_DIFFER");
        assert_eq!(differ, !tf_equal.as_bool().unwrap(), "{pair}: {all:?}");
        // The splat is a note on TF Serving (TensorFlow fills it): nothing fails.
        assert_eq!(code, 0, "{pair}: {all:?}");
        assert_eq!(v["verdict"], "same-executor");
    }
}

// ---------------------------------------------------------------------------------------
// One finding, one severity, in every command
// ---------------------------------------------------------------------------------------

/// TF Serving refuses a request that lists an output twice: an error in inspect as in
/// check (and diff), with exit 1.
#[test]
fn duplicate_fetch_is_an_error_everywhere_on_tf_serving() {
    let f = s("validator/tfs_faq_duplicate_fetch.bin");
    let (code, v) = json(&["inspect", &f]);
    assert_eq!(code, 1);
    assert!(
        inspect_findings(&v)
            .iter()
            .any(|(c, sev, n)| c == "DUPLICATE_FETCH" && sev == "error" && n == "sorted_labels")
    );
    let (code, v) = json(&["check", &f, "--model", &s("models/faq")]);
    assert_eq!(code, 1);
    let all = report_findings(&v);
    assert_eq!(
        all.iter().filter(|(c, ..)| c == "DUPLICATE_FETCH").count(),
        1,
        "reported once: {all:?}"
    );
    assert!(
        all.iter()
            .any(|(c, sev, _)| c == "DUPLICATE_FETCH" && sev == "error")
    );
    let (code, v) = json(&["diff", &f, &f]);
    assert_eq!(code, 1);
    assert!(
        report_findings(&v)
            .iter()
            .any(|(c, sev, _)| c == "DUPLICATE_FETCH" && sev == "error")
    );
}

/// TF Serving's warm-up loader stops at 1000 records: the 1001-record file fails
/// inspect, check and diff; the 1000-record file passes all three.
#[test]
fn warmup_record_limit_is_reported_by_inspect_check_and_diff() {
    assert_eq!(entry("warmup_1001.tfrecord")["records"], 1001);
    assert_eq!(entry("warmup_1000.tfrecord")["records"], 1000);
    let model = s("models/half_plus_two");
    for (file, fails) in [
        ("warmup_1001.tfrecord", true),
        ("warmup_1000.tfrecord", false),
    ] {
        let f = s(&format!("values/{file}"));
        let r = run(&["inspect", &f]);
        assert_eq!(r.code, i32::from(fails), "inspect {file}: {}", r.err);
        assert_eq!(r.out.contains("TOO_MANY_RECORDS"), fails);
        let (code, v) = json(&["check", &f, "--model", &model]);
        let too_many = report_findings(&v)
            .iter()
            .any(|(c, sev, _)| c == "TOO_MANY_RECORDS" && sev == "error");
        assert_eq!(too_many, fails, "check {file}");
        assert_eq!(code, i32::from(fails), "check {file}: {}", v["counts"]);
        // Production: the file's first predict request (half_plus_two's warm-up also
        // holds classify, regress and multi-inference requests, which a predict-only
        // warm-up does not warm).
        let dir = tempfile::tempdir().unwrap();
        let prod = dir.path().join("prod.bin");
        let first = tfreq::formats::read(
            bytes::Bytes::from(std::fs::read(&f).unwrap()),
            &Default::default(),
        )
        .and_then(|e| e.into_records())
        .unwrap()
        .remove(0)
        .message;
        std::fs::write(
            &prod,
            tfreq::formats::write(&[first], tfreq::formats::Layout::TfServing).unwrap(),
        )
        .unwrap();
        let (code, v) = json(&["diff", &f, prod.to_str().unwrap(), "--model", &model]);
        let too_many = report_findings(&v)
            .iter()
            .any(|(c, sev, _)| c == "TOO_MANY_RECORDS" && sev == "error");
        assert_eq!(too_many, fails, "diff {file}");
        assert_eq!(code, i32::from(fails), "diff {file}");
    }
    // Human and GitHub output name it too.
    let r = run(&[
        "check",
        &s("values/warmup_1001.tfrecord"),
        "--model",
        &model,
        "--format",
        "github",
    ]);
    assert!(
        r.out.lines().next().unwrap().starts_with("::error file=")
            && r.out.contains("title=TOO_MANY_RECORDS"),
        "{}",
        r.out
    );
}

/// inspect: 0 when nothing is an error, 1 when a finding is, 2 when unreadable.
#[test]
fn inspect_exit_codes() {
    assert_eq!(run(&["inspect", &s("tfs/faq_prod.bin")]).code, 0);
    // A note (TF Serving fills short lists) does not fail.
    assert_eq!(run(&["inspect", &s("values/splat_warmup.bin")]).code, 0);
    assert_eq!(run(&["inspect", &s("values/shape_rank_255.bin")]).code, 1);
    assert_eq!(run(&["inspect", &s("values/no_such_file.bin")]).code, 2);
}

// ---------------------------------------------------------------------------------------
// 8- and 4-bit floats: the numbers TensorFlow (ml_dtypes) decodes them to
// ---------------------------------------------------------------------------------------

fn minifloat_tables() -> Vec<(tfreq::DType, Value)> {
    let p = crate::common::data("values/ml_dtypes.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    v["tables"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, t)| (tfreq::DType::from_name(k).unwrap(), t.clone()))
        .collect()
}

fn same_float(a: f32, want: &str) -> bool {
    match want {
        "nan" => a.is_nan(),
        "inf" => a == f32::INFINITY,
        "-inf" => a == f32::NEG_INFINITY,
        w => a.to_bits() == w.parse::<f32>().unwrap().to_bits(),
    }
}

/// Every bit pattern decodes to ml_dtypes' value, and every rounding (float32 and
/// float64 inputs: values, midpoints and their neighbours, overflow, infinities, NaN)
/// gives ml_dtypes' bit pattern.
#[test]
fn minifloats_decode_and_round_as_ml_dtypes_does() {
    use tfreq::{from_f64, to_f32};
    let tables = minifloat_tables();
    assert_eq!(tables.len(), 6);
    for (d, t) in tables {
        for (bits, want) in t["values"].as_array().unwrap().iter().enumerate() {
            let got = to_f32(d, bits as u8).unwrap();
            assert!(
                same_float(got, want.as_str().unwrap()),
                "{d} {bits:#04x}: {got} != {want}"
            );
        }
        let mut n = 0;
        for (key, width) in [("round_f32", 8), ("round_f64", 16)] {
            for pair in t[key].as_array().unwrap() {
                let h = u64::from_str_radix(pair[0].as_str().unwrap(), 16).unwrap();
                let x = if width == 8 {
                    f32::from_bits(h as u32) as f64
                } else {
                    f64::from_bits(h)
                };
                let want = pair[1].as_u64().unwrap() as u8;
                assert_eq!(from_f64(d, x), Some(want), "{d} {key} {x:e} ({h:x})");
                n += 1;
            }
        }
        assert!(n > 50, "{d}: {n} roundings");
    }
}

/// Files TensorFlow wrote (tf.make_tensor_proto of ml_dtypes arrays, and float8_val by
/// hand): inspect shows the numbers the manifest gives, not bit patterns; the builder,
/// given those numbers, writes the same bytes.
#[test]
fn minifloat_files_show_numbers_and_build_identically() {
    let mut checked = 0;
    for e in crate::common::manifest("tfs") {
        let file = e["file"].as_str().unwrap();
        let feed = &e["feeds"][0];
        let d = tfreq::DType::from_name(feed["dtype"].as_str().unwrap()).unwrap();
        if !tfreq::is_minifloat(d) {
            continue;
        }
        let (code, v) = json(&["inspect", &s(&format!("tfs/{file}")), "--values", "all"]);
        assert_eq!(code, 0, "{file}");
        let got = v["inputs"][0]["values"].as_array().unwrap();
        let want = feed["values"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{file}");
        for (g, w) in got.iter().zip(want) {
            let g = match g {
                Value::String(s) => s.clone(),
                n => format!("{}", n.as_f64().unwrap()),
            };
            let w = match w {
                Value::String(s) => s.clone(),
                n => format!("{}", n.as_f64().unwrap()),
            };
            assert_eq!(g, w, "{file}");
        }
        // The human preview too: `-0.0` and `1.0`, not `0x80`.
        let r = run(&["inspect", &s(&format!("tfs/{file}"))]);
        assert!(r.out.contains("1.0"), "{file}: {}", r.out);
        assert!(!r.out.contains("0x"), "{file}: {}", r.out);
        // Built from the numbers, the request is the file, byte for byte.
        let spec = tfreq::ModelSpec {
            name: e["model_spec"]["name"].as_str().unwrap().into(),
            signature_name: e["signature_name"].as_str().unwrap().into(),
            ..Default::default()
        };
        let mut req =
            tfreq::TFRequest::for_wire(spec.signature_name.clone(), tfreq::WireFormat::TfServing);
        let numbers: Vec<f64> = want
            .iter()
            .map(|w| match w {
                Value::String(s) => s.parse().unwrap(),
                n => n.as_f64().unwrap(),
            })
            .collect();
        req.add_feed("x", &crate::common::shape(feed), d, numbers)
            .unwrap();
        for f in crate::common::fetches(&e) {
            req.add_fetch(f);
        }
        let style = if feed["encoding"] == "typed" {
            tfreq::TfsEncoding::Typed
        } else {
            tfreq::TfsEncoding::Python
        };
        let built = req.to_tf_serving_bytes_with(&spec, style).unwrap();
        assert_eq!(built, crate::common::read("tfs", file), "{file}");
        checked += 1;
    }
    assert_eq!(checked, 12);
}

/// The bit patterns stay available, through an explicit API.
#[test]
fn minifloat_bits_api() {
    use tfreq::{DType, FeedValues, TFRequest, WireFormat};
    let mut r = TFRequest::for_wire("s", WireFormat::TfServing);
    r.add_feed(
        "x",
        &[2],
        DType::Float8E4m3fn,
        FeedValues::bits(vec![0x3c, 0x80]),
    )
    .unwrap();
    let e = r.message().tensors[0].elements(WireFormat::TfServing);
    assert_eq!(
        e.get(0),
        Some(tfreq::Scalar::Mini(DType::Float8E4m3fn, 0x3c))
    );
    assert_eq!(e.get(0).unwrap().to_string(), "1.5");
    assert_eq!(e.get(1).unwrap().to_string(), "-0.0");
    // u8 numbers are not bit patterns: refused, not guessed.
    assert!(
        r.add_feed("y", &[1], DType::Float8E4m3fn, vec![62u8])
            .is_err()
    );
}
