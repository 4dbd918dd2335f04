//! The tf.Example reference data of `tests/data/examples/` (made by
//! `tests/data/gen/make_examples.py` with TensorFlow and tensorflow-serving-api) is whole and
//! of the types it claims: every request file is named in `answers.json` and exists; every
//! bare `.pb` walks as its message type (ClassificationRequest, RegressionRequest,
//! MultiInferenceRequest: by the field numbers and wire types of TF Serving's `.proto` files,
//! a reading independent of the crate's decoder, which cli/tests/interop/examples_requests.rs holds to
//! the same files; PredictRequest with the crate's prost type) and holds as
//! many examples as TensorFlow ran; every log is TFRecord framing of `PredictionLog`s with the
//! log types and batch sizes `answers.json` records; `batch/expected.json` agrees with the log's
//! 0th dimensions and with TF Serving's padding rule; `tfreq inspect` never panics on any file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use prost::Message;
use serde_json::Value;
use tfreq::formats::Records;
use tfreq::wire::tfs;

fn dir() -> PathBuf {
    crate::common::data_dir().join("examples")
}

fn answers() -> Vec<Value> {
    let text = std::fs::read_to_string(dir().join("answers.json")).expect("answers.json");
    serde_json::from_str::<Value>(&text)
        .expect("answers.json is JSON")
        .as_array()
        .expect("answers.json is a list")
        .clone()
}

fn files_under(sub: &str) -> Vec<String> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir(), &dir().join(sub), &mut out);
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// A small protobuf walker: fields by number and wire type, checked against a schema.
// ---------------------------------------------------------------------------------------------

/// One field: number, wire type, payload (LEN: the bytes; varint/fixed: empty).
type Field<'a> = (u32, u8, &'a [u8]);

fn varint(b: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b
            .get(*pos)
            .ok_or_else(|| format!("varint runs past the end at {pos}"))?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(format!("varint longer than 10 bytes before {pos}"))
}

fn fields(b: &[u8]) -> Result<Vec<Field<'_>>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let at = pos;
        let tag = varint(b, &mut pos)?;
        let (num, wt) = ((tag >> 3) as u32, (tag & 7) as u8);
        if num == 0 {
            return Err(format!("field number 0 at {at}"));
        }
        let payload: &[u8] = match wt {
            0 => {
                varint(b, &mut pos)?;
                &[]
            }
            1 | 5 => {
                let n = if wt == 1 { 8 } else { 4 };
                if pos + n > b.len() {
                    return Err(format!("fixed field {num} runs past the end at {at}"));
                }
                pos += n;
                &[]
            }
            2 => {
                let n = varint(b, &mut pos)? as usize;
                let end = pos
                    .checked_add(n)
                    .filter(|&e| e <= b.len())
                    .ok_or_else(|| format!("field {num} at {at}: length {n} past the end"))?;
                let p = &b[pos..end];
                pos = end;
                p
            }
            _ => return Err(format!("field {num} at {at}: wire type {wt}")),
        };
        out.push((num, wt, payload));
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Kind {
    Msg(&'static Schema),
    /// A UTF-8 string (LEN).
    Str,
    /// Bytes (LEN), anything.
    Bytes,
    /// A varint.
    Varint,
    /// repeated float: packed (LEN, a multiple of 4) or one fixed32.
    Floats,
    /// repeated int64: packed varints (LEN) or one varint.
    Varints,
}

struct Schema {
    name: &'static str,
    fields: &'static [(u32, Kind)],
}

static INT64_VALUE: Schema = Schema {
    name: "Int64Value",
    fields: &[(1, Kind::Varint)],
};
static MODEL_SPEC: Schema = Schema {
    name: "ModelSpec",
    fields: &[
        (1, Kind::Str),
        (2, Kind::Msg(&INT64_VALUE)),
        (3, Kind::Str),
        (4, Kind::Str),
    ],
};
static BYTES_LIST: Schema = Schema {
    name: "BytesList",
    fields: &[(1, Kind::Bytes)],
};
static FLOAT_LIST: Schema = Schema {
    name: "FloatList",
    fields: &[(1, Kind::Floats)],
};
static INT64_LIST: Schema = Schema {
    name: "Int64List",
    fields: &[(1, Kind::Varints)],
};
static FEATURE: Schema = Schema {
    name: "Feature",
    fields: &[
        (1, Kind::Msg(&BYTES_LIST)),
        (2, Kind::Msg(&FLOAT_LIST)),
        (3, Kind::Msg(&INT64_LIST)),
    ],
};
static FEATURE_ENTRY: Schema = Schema {
    name: "Features.FeatureEntry",
    fields: &[(1, Kind::Str), (2, Kind::Msg(&FEATURE))],
};
static FEATURES: Schema = Schema {
    name: "Features",
    fields: &[(1, Kind::Msg(&FEATURE_ENTRY))],
};
static EXAMPLE: Schema = Schema {
    name: "Example",
    fields: &[(1, Kind::Msg(&FEATURES))],
};
static EXAMPLE_LIST: Schema = Schema {
    name: "ExampleList",
    fields: &[(1, Kind::Msg(&EXAMPLE))],
};
static EXAMPLE_LIST_WITH_CONTEXT: Schema = Schema {
    name: "ExampleListWithContext",
    fields: &[(1, Kind::Msg(&EXAMPLE)), (2, Kind::Msg(&EXAMPLE))],
};
static INPUT: Schema = Schema {
    name: "Input",
    fields: &[
        (1, Kind::Msg(&EXAMPLE_LIST)),
        (2, Kind::Msg(&EXAMPLE_LIST_WITH_CONTEXT)),
    ],
};
/// tensorflow_serving/apis/classification.proto and regression.proto: the same two fields.
static CLASSIFICATION_REQUEST: Schema = Schema {
    name: "ClassificationRequest",
    fields: &[(1, Kind::Msg(&MODEL_SPEC)), (2, Kind::Msg(&INPUT))],
};
static REGRESSION_REQUEST: Schema = Schema {
    name: "RegressionRequest",
    fields: &[(1, Kind::Msg(&MODEL_SPEC)), (2, Kind::Msg(&INPUT))],
};
static INFERENCE_TASK: Schema = Schema {
    name: "InferenceTask",
    fields: &[(1, Kind::Msg(&MODEL_SPEC)), (2, Kind::Str)],
};
/// tensorflow_serving/apis/inference.proto.
static MULTI_INFERENCE_REQUEST: Schema = Schema {
    name: "MultiInferenceRequest",
    fields: &[(1, Kind::Msg(&INFERENCE_TASK)), (2, Kind::Msg(&INPUT))],
};
// Responses, as far as the logs hold them.
static CLASS: Schema = Schema {
    name: "Class",
    fields: &[(1, Kind::Str), (2, Kind::Floats)],
};
static CLASSIFICATIONS: Schema = Schema {
    name: "Classifications",
    fields: &[(1, Kind::Msg(&CLASS))],
};
static CLASSIFICATION_RESULT: Schema = Schema {
    name: "ClassificationResult",
    fields: &[(1, Kind::Msg(&CLASSIFICATIONS))],
};
static CLASSIFICATION_RESPONSE: Schema = Schema {
    name: "ClassificationResponse",
    fields: &[
        (1, Kind::Msg(&CLASSIFICATION_RESULT)),
        (2, Kind::Msg(&MODEL_SPEC)),
    ],
};
static REGRESSION: Schema = Schema {
    name: "Regression",
    fields: &[(1, Kind::Floats)],
};
static REGRESSION_RESULT: Schema = Schema {
    name: "RegressionResult",
    fields: &[(1, Kind::Msg(&REGRESSION))],
};
static REGRESSION_RESPONSE: Schema = Schema {
    name: "RegressionResponse",
    fields: &[
        (1, Kind::Msg(&REGRESSION_RESULT)),
        (2, Kind::Msg(&MODEL_SPEC)),
    ],
};
static INFERENCE_RESULT: Schema = Schema {
    name: "InferenceResult",
    fields: &[
        (1, Kind::Msg(&MODEL_SPEC)),
        (2, Kind::Msg(&CLASSIFICATION_RESULT)),
        (3, Kind::Msg(&REGRESSION_RESULT)),
    ],
};
static MULTI_INFERENCE_RESPONSE: Schema = Schema {
    name: "MultiInferenceResponse",
    fields: &[(1, Kind::Msg(&INFERENCE_RESULT))],
};
/// tensorflow_serving/apis/prediction_log.proto ClassifyLog, RegressLog, MultiInferenceLog.
static CLASSIFY_LOG: Schema = Schema {
    name: "ClassifyLog",
    fields: &[
        (1, Kind::Msg(&CLASSIFICATION_REQUEST)),
        (2, Kind::Msg(&CLASSIFICATION_RESPONSE)),
    ],
};
static REGRESS_LOG: Schema = Schema {
    name: "RegressLog",
    fields: &[
        (1, Kind::Msg(&REGRESSION_REQUEST)),
        (2, Kind::Msg(&REGRESSION_RESPONSE)),
    ],
};
static MULTI_INFERENCE_LOG: Schema = Schema {
    name: "MultiInferenceLog",
    fields: &[
        (1, Kind::Msg(&MULTI_INFERENCE_REQUEST)),
        (2, Kind::Msg(&MULTI_INFERENCE_RESPONSE)),
    ],
};

/// Walks `b` as `schema`: every field known, with its wire type, nested messages too.
fn check(b: &[u8], schema: &Schema, path: &str) -> Result<(), String> {
    let here = format!("{path}/{}", schema.name);
    for (num, wt, payload) in fields(b).map_err(|e| format!("{here}: {e}"))? {
        let kind = schema
            .fields
            .iter()
            .find(|(n, _)| *n == num)
            .map(|(_, k)| *k)
            .ok_or_else(|| format!("{here}: unknown field {num}"))?;
        let ok = match kind {
            Kind::Msg(s) => {
                if wt != 2 {
                    false
                } else {
                    check(payload, s, &here)?;
                    true
                }
            }
            Kind::Str => wt == 2 && std::str::from_utf8(payload).is_ok(),
            Kind::Bytes => wt == 2,
            Kind::Varint => wt == 0,
            Kind::Floats => wt == 5 || (wt == 2 && payload.len() % 4 == 0),
            Kind::Varints => {
                wt == 0
                    || (wt == 2 && {
                        let mut p = 0;
                        let mut ok = true;
                        while p < payload.len() && ok {
                            ok = varint(payload, &mut p).is_ok();
                        }
                        ok
                    })
            }
        };
        if !ok {
            return Err(format!("{here}: field {num} has wire type {wt}"));
        }
    }
    Ok(())
}

fn sub(b: &[u8], num: u32) -> Vec<&[u8]> {
    fields(b)
        .unwrap()
        .into_iter()
        .filter(|f| f.0 == num && f.1 == 2)
        .map(|f| f.2)
        .collect()
}

/// Feature names of an Example.
fn feature_names(example: &[u8]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for features in sub(example, 1) {
        for entry in sub(features, 1) {
            for key in sub(entry, 1) {
                out.insert(String::from_utf8(key.to_vec()).unwrap());
            }
        }
    }
    out
}

/// The examples of a request's Input (field 2 of all three request types), each with its
/// feature names (the context's merged in, as TF Serving's concatenation does).
fn examples(request: &[u8]) -> Vec<BTreeSet<String>> {
    let mut out = Vec::new();
    for input in sub(request, 2) {
        for list in sub(input, 1) {
            out.extend(sub(list, 1).into_iter().map(feature_names));
        }
        for with_ctx in sub(input, 2) {
            let ctx: BTreeSet<String> = sub(with_ctx, 2)
                .into_iter()
                .flat_map(feature_names)
                .collect();
            out.extend(sub(with_ctx, 1).into_iter().map(|e| {
                let mut names = feature_names(e);
                names.extend(ctx.iter().cloned());
                names
            }));
        }
    }
    out
}

fn schema_of(type_name: &str) -> Option<&'static Schema> {
    match type_name {
        "tensorflow.serving.ClassificationRequest" => Some(&CLASSIFICATION_REQUEST),
        "tensorflow.serving.RegressionRequest" => Some(&REGRESSION_REQUEST),
        "tensorflow.serving.MultiInferenceRequest" => Some(&MULTI_INFERENCE_REQUEST),
        _ => None,
    }
}

/// Checks one request's bytes as `type_name`; returns its batch size (examples, or the 0th
/// dimension of a PredictRequest's inputs).
fn check_request(bytes: &[u8], type_name: &str, what: &str) -> usize {
    if type_name == "tensorflow.serving.PredictRequest" {
        let r = tfs::PredictRequest::decode(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            r.encode_to_vec().len(),
            bytes.len(),
            "{what}: unknown fields"
        );
        let dims: BTreeSet<i64> = r
            .inputs
            .values()
            .map(|t| t.tensor_shape.as_ref().unwrap().dim[0].size)
            .collect();
        assert_eq!(
            dims.len(),
            1,
            "{what}: inputs disagree on the 0th dimension"
        );
        return *dims.iter().next().unwrap() as usize;
    }
    let schema = schema_of(type_name).unwrap_or_else(|| panic!("{what}: type {type_name}"));
    check(bytes, schema, "").unwrap_or_else(|e| panic!("{what}: {e}"));
    examples(bytes).len()
}

// ---------------------------------------------------------------------------------------------

/// Every file the generator wrote is there, answers.json names every request file (bare,
/// text, REST body and the request made of it, log) and every file it names exists.
#[test]
fn answers_name_every_request_file() {
    let answers = answers();
    let mut named = BTreeSet::new();
    for a in &answers {
        for key in ["file", "text", "request", "request_text"] {
            if let Some(f) = a[key].as_str() {
                assert!(
                    dir().join(f).is_file(),
                    "answers.json names {f}, which is missing"
                );
                assert!(named.insert(f.to_string()), "{f} named twice");
            }
        }
        let result = a["result"].as_str();
        let records = a["records"].as_array();
        assert!(
            result.is_some() || records.is_some(),
            "{a}: neither a result nor records"
        );
        for r in records.into_iter().flatten().chain(std::iter::once(a)) {
            match r["result"].as_str() {
                Some("ok") => assert!(r["source"] == "tensorflow_run", "{r}"),
                Some("error") => {
                    assert!(r["message"].as_str().is_some_and(|m| !m.is_empty()), "{r}");
                    let src = r["source"].as_str().unwrap();
                    assert!(src == "tensorflow_run" || src == "tf_serving_source", "{r}");
                    if src == "tf_serving_source" {
                        assert!(
                            r["cited"].as_str().is_some_and(|c| c.contains(".cc")),
                            "{r}"
                        );
                    }
                }
                None if r.get("records").is_some() => {}
                other => panic!("{r}: result {other:?}"),
            }
        }
    }
    let mut on_disk = Vec::new();
    for d in ["requests", "rest", "logs"] {
        on_disk.extend(files_under(d));
    }
    on_disk.extend(
        files_under("batch")
            .into_iter()
            .filter(|f| f.ends_with(".tfrecord")),
    );
    assert!(on_disk.len() >= 100, "only {} request files", on_disk.len());
    for f in &on_disk {
        assert!(named.contains(f), "{f} is not named in answers.json");
    }
    for m in [
        "tf1_examples",
        "tf1_examples_v1",
        "keras_examples",
        "batch_x2",
    ] {
        assert!(
            dir()
                .join("models")
                .join(m)
                .join("saved_model.pb")
                .is_file(),
            "{m}"
        );
        assert!(
            dir()
                .join(format!("models/{m}.saved_model_cli.txt"))
                .is_file(),
            "{m}"
        );
        assert!(
            dir().join(format!("models/{m}.metadata.json")).is_file(),
            "{m}"
        );
    }
    for f in ["batch/expected.json", "batch/batching_parameters.txt"] {
        assert!(dir().join(f).is_file(), "{f}");
    }
    let total: u64 = files_under("")
        .iter()
        .map(|f| std::fs::metadata(dir().join(f)).unwrap().len())
        .sum();
    assert!(total < 3 << 20, "tests/data/examples holds {total} bytes");
}

/// Each bare request walks as its type and holds as many examples as TensorFlow ran; the
/// requests whose answer is a missing `x` lack it in some example (context included), the
/// others that TensorFlow ran have it in every one.
#[test]
fn each_request_is_its_type() {
    let mut seen = 0;
    for a in answers() {
        let Some(ty) = a["type"]
            .as_str()
            .filter(|t| t.starts_with("tensorflow.serving."))
        else {
            // REST bodies: the request TF Serving makes of them is checked instead
            let Some(req) = a["request"].as_str() else {
                continue;
            };
            let bytes = std::fs::read(dir().join(req)).unwrap();
            let ty = if a["type"] == "REST :classify body" {
                "tensorflow.serving.ClassificationRequest"
            } else {
                "tensorflow.serving.RegressionRequest"
            };
            let n = check_request(&bytes, ty, req);
            if let Some(b) = a["batch_size"].as_u64() {
                assert_eq!(n as u64, b, "{req}");
            }
            seen += 1;
            continue;
        };
        let file = a["file"].as_str().unwrap();
        let bytes = std::fs::read(dir().join(file)).unwrap();
        let n = check_request(&bytes, ty, file);
        if let Some(b) = a["batch_size"].as_u64() {
            assert_eq!(n as u64, b, "{file}: examples vs TensorFlow's batch");
        }
        if a["source"] == "tensorflow_run" && ty != "tensorflow.serving.PredictRequest" {
            let with_x = examples(&bytes).iter().filter(|e| e.contains("x")).count();
            let missing = a["message"]
                .as_str()
                .is_some_and(|m| m.contains("Feature: x (data type: float) is required"));
            assert_eq!(with_x < n, missing, "{file}: x present in {with_x} of {n}");
        }
        if a["message"] == "Input is empty." {
            assert_eq!(n, 0, "{file}");
        }
        seen += 1;
    }
    assert!(seen >= 50, "{seen} requests checked");
}

/// The logs are TFRecord framing of PredictionLogs, one per answers.json record, with the
/// recorded log types and batch sizes.
#[test]
fn logs_are_prediction_logs() {
    let mut logs = 0;
    for a in answers() {
        let Some(records) = a["records"].as_array() else {
            continue;
        };
        let file = a["file"].as_str().unwrap();
        let buf = bytes::Bytes::from(std::fs::read(dir().join(file)).unwrap());
        let raws: Vec<_> = Records::new(buf)
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(raws.len(), records.len(), "{file}");
        for (raw, want) in raws.iter().zip(records) {
            let what = format!("{file} record {}", raw.index);
            let log = tfs::PredictionLog::decode(raw.data.clone())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            use tfs::prediction_log::LogType;
            let (kind, n) = match log.log_type.expect("a log_type") {
                LogType::ClassifyLog(b) => {
                    let b = b.encode_to_vec();
                    check(&b, &CLASSIFY_LOG, "").unwrap_or_else(|e| panic!("{what}: {e}"));
                    ("classify_log", examples(sub(&b, 1)[0]).len())
                }
                LogType::RegressLog(b) => {
                    let b = b.encode_to_vec();
                    check(&b, &REGRESS_LOG, "").unwrap_or_else(|e| panic!("{what}: {e}"));
                    ("regress_log", examples(sub(&b, 1)[0]).len())
                }
                LogType::MultiInferenceLog(b) => {
                    let b = b.encode_to_vec();
                    check(&b, &MULTI_INFERENCE_LOG, "").unwrap_or_else(|e| panic!("{what}: {e}"));
                    ("multi_inference_log", examples(sub(&b, 1)[0]).len())
                }
                LogType::PredictLog(p) => {
                    let req = p.request.expect("a request").encode_to_vec();
                    (
                        "predict_log",
                        check_request(&req, "tensorflow.serving.PredictRequest", &what),
                    )
                }
                other => panic!("{what}: {other:?}"),
            };
            assert_eq!(want["log_type"], kind, "{what}");
            if let Some(b) = want["batch_size"].as_u64() {
                assert_eq!(n as u64, b, "{what}");
            }
        }
        logs += 1;
    }
    assert_eq!(logs, 6, "logs in answers.json");
}

/// batch/expected.json: the batch sizes are the 0th dimensions of x in the logs, and each
/// padded size is TF Serving's (the smallest allowed size not below the batch, refused above
/// max_batch_size: tensorflow_serving/batching/batching_util.cc RoundToLowestAllowedBatchSize,
/// tensorflow/core/kernels/batching_util/shared_batch_scheduler.h), re-derived here from
/// batching_parameters.txt.
#[test]
fn batch_expectations_follow_the_logs_and_the_rule() {
    let params = std::fs::read_to_string(dir().join("batch/batching_parameters.txt")).unwrap();
    let mut max = None;
    let mut allowed = Vec::new();
    for line in params.lines() {
        if let Some(v) = line.strip_prefix("max_batch_size { value: ") {
            max = Some(v.trim_end_matches(" }").parse::<u64>().unwrap());
        } else if let Some(v) = line.strip_prefix("allowed_batch_sizes: ") {
            allowed.push(v.parse::<u64>().unwrap());
        }
    }
    let max = max.expect("max_batch_size");
    assert_eq!((max, allowed.as_slice()), (32, &[1, 8, 32][..]));
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("batch/expected.json")).unwrap())
            .unwrap();
    let mut reached_all = Vec::new();
    for file in ["batch/predict_log.tfrecord", "batch/warmup.tfrecord"] {
        let buf = bytes::Bytes::from(std::fs::read(dir().join(file)).unwrap());
        let dims: Vec<u64> = Records::new(buf)
            .map(|r| {
                let log = tfs::PredictionLog::decode(r.unwrap().data).unwrap();
                let Some(tfs::prediction_log::LogType::PredictLog(p)) = log.log_type else {
                    panic!("{file}: not a predict_log")
                };
                p.request.unwrap().inputs["x"]
                    .tensor_shape
                    .as_ref()
                    .unwrap()
                    .dim[0]
                    .size as u64
            })
            .collect();
        let rows = expected["files"][file]["records"].as_array().unwrap();
        assert_eq!(rows.len(), dims.len(), "{file}");
        let mut reached = BTreeSet::new();
        for (row, &n) in rows.iter().zip(&dims) {
            assert_eq!(row["batch_size"], n, "{file}: {row}");
            let padded = (n <= max).then(|| *allowed.iter().find(|&&a| a >= n).unwrap());
            assert_eq!(row["padded_batch_size"].as_u64(), padded, "{file}: {row}");
            assert_eq!(
                row.get("refused").is_some(),
                padded.is_none(),
                "{file}: {row}"
            );
            reached.extend(padded);
        }
        let listed: BTreeSet<u64> = expected["files"][file]["padded_sizes_reached"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(listed, reached, "{file}");
        reached_all.push(reached);
    }
    assert_eq!(
        reached_all[0].iter().copied().collect::<Vec<_>>(),
        [1, 8, 32]
    );
    let misses: Vec<u64> = reached_all[0]
        .difference(&reached_all[1])
        .copied()
        .collect();
    assert_eq!(expected["warmup_misses"], serde_json::json!(misses));
}

/// `tfreq inspect` reads every request, body and log without panicking (exit 0, 1 or 2).
#[test]
fn inspect_never_panics_on_the_examples() {
    let mut files = Vec::new();
    for d in ["requests", "rest", "logs", "batch"] {
        files.extend(files_under(d));
    }
    for f in files {
        let path = dir().join(&f);
        let r = crate::common::run(&["inspect", path.to_str().unwrap()]);
        assert!((0..=2).contains(&r.code), "{f}: exit {} {}", r.code, r.err);
        assert!(!r.err.contains("panicked"), "{f}: {}", r.err);
    }
}
