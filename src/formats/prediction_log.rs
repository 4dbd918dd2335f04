//! TF Serving's `PredictionLog` (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/apis/prediction_log.proto>): one record of a warm-up file or a
//! request log.
//!
//! The envelope is decoded by hand with the wire reader, so the `PredictRequest` bytes
//! stay a zero-copy slice of the record until [`PredictionLog::predict_request`]
//! decodes them. Every `log_type` is recognised by name; only `predict_log` (and the
//! requests of `predict_streamed_log`) are decoded further.
//!
//! ```
//! use tfreq::formats::{encode_predict_log, LogKind, PredictionLog};
//! let mut req = tfreq::TFRequest::for_wire("serving_default", tfreq::WireFormat::TfServing);
//! req.add_feed("x", &[1, 2], tfreq::DType::Float, vec![1.0f32, 2.0])?;
//! let bytes = req.to_tf_serving_bytes("m")?;
//! let log = PredictionLog::decode(encode_predict_log(&bytes).into(), 0)?;
//! assert_eq!(log.kind, LogKind::Predict);
//! assert_eq!(log.predict_request().unwrap()?.tensors[0].name, "x");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use bytes::Bytes;

use crate::decode::{DecodeOptions, decode_message};
use crate::error::{DecodeError, Error};
use crate::fields::{log_metadata, predict_log, prediction_log};
use crate::model::{Kind, Message, ModelSpec, WireFormat};
use crate::wire::reader::{Reader, WireValue};
use crate::wire::writer::{len_field_size, put_len_header};

/// Which `log_type` a `PredictionLog` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LogKind {
    /// No `log_type` set.
    None,
    /// `classify_log` (field 2).
    Classify,
    /// `regress_log` (field 3).
    Regress,
    /// `multi_inference_log` (field 4).
    MultiInference,
    /// `session_run_log` (field 5).
    SessionRun,
    /// `predict_log` (field 6).
    Predict,
    /// `predict_streamed_log` (field 7).
    PredictStreamed,
}

impl LogKind {
    /// The oneof member's name (`predict_log`, ...), or `none`.
    pub fn name(self) -> &'static str {
        match self {
            LogKind::None => "none",
            LogKind::Classify => "classify_log",
            LogKind::Regress => "regress_log",
            LogKind::MultiInference => "multi_inference_log",
            LogKind::SessionRun => "session_run_log",
            LogKind::Predict => "predict_log",
            LogKind::PredictStreamed => "predict_streamed_log",
        }
    }

    /// The kind of a `PredictionLog` field number, if it is a `log_type` member.
    pub fn from_field(n: u32) -> Option<LogKind> {
        Some(match n {
            prediction_log::CLASSIFY_LOG => LogKind::Classify,
            prediction_log::REGRESS_LOG => LogKind::Regress,
            prediction_log::MULTI_INFERENCE_LOG => LogKind::MultiInference,
            prediction_log::SESSION_RUN_LOG => LogKind::SessionRun,
            prediction_log::PREDICT_LOG => LogKind::Predict,
            prediction_log::PREDICT_STREAMED_LOG => LogKind::PredictStreamed,
            _ => return None,
        })
    }

    /// Whether TF Serving's classic (SavedModelBundle) warm-up runs it (`RunWarmupRequest` in
    /// <https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/saved_model_warmup.cc>):
    /// classify, regress, multi_inference and predict do; session_run and
    /// predict_streamed fail the model load; no kind is silently skipped.
    pub fn classic_warmup_runs(self) -> bool {
        matches!(
            self,
            LogKind::Classify | LogKind::Regress | LogKind::MultiInference | LogKind::Predict
        )
    }
}

impl fmt::Display for LogKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One decoded `PredictionLog` envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionLog {
    /// Which log type it holds.
    pub kind: LogKind,
    /// `log_metadata.model_spec`, when present.
    pub model_spec: Option<ModelSpec>,
    /// The log body (the bytes of the oneof member), a view into the record.
    pub body: Bytes,
    /// `predict_log.request` (or the classify, regress or multi-inference log's), or
    /// each `predict_streamed_log.request`: undecoded views.
    pub requests: Vec<Bytes>,
    /// The log's `response`, undecoded.
    pub response: Option<Bytes>,
    /// Absolute byte offset of each request's bytes (as given to [`PredictionLog::decode`]).
    pub request_offsets: Vec<usize>,
}

fn len_of(v: &WireValue) -> Option<&Bytes> {
    match v {
        WireValue::Len(b) => Some(b),
        _ => None,
    }
}

impl PredictionLog {
    /// Decodes the envelope of one record; `base` is the record data's byte offset in
    /// the file, so errors and offsets are absolute. Fields it does not know are
    /// skipped, as protobuf does; a field with a wrong wire type is an error.
    pub fn decode(data: Bytes, base: usize) -> Result<PredictionLog, DecodeError> {
        let mut r = Reader::new(Bytes::new()).nested(data, base)?;
        let names = prediction_log::FIELDS;
        let mut log = PredictionLog {
            kind: LogKind::None,
            model_spec: None,
            body: Bytes::new(),
            requests: Vec::new(),
            response: None,
            request_offsets: Vec::new(),
        };
        while let Some(f) = r.next_field_named(names)? {
            let wrong = |name: &'static str| {
                DecodeError::new(
                    crate::error::DecodeErrorKind::WrongWireType {
                        field: name,
                        found: f.value.wire_type(),
                    },
                    f.offset,
                )
            };
            if f.number == prediction_log::LOG_METADATA {
                let b = len_of(&f.value).ok_or_else(|| wrong("log_metadata"))?;
                let mut m = r.nested(b.clone(), f.value_offset)?;
                while let Some(g) = m.next_field().map_err(|e| e.within("log_metadata"))? {
                    if g.number == log_metadata::MODEL_SPEC {
                        let b = len_of(&g.value).ok_or_else(|| wrong("model_spec"))?;
                        let sub = m.nested(b.clone(), g.value_offset)?;
                        let spec = crate::decode::decode_model_spec(sub)
                            .map_err(|e| e.within("model_spec").within("log_metadata"))?;
                        log.model_spec = Some(spec);
                    }
                }
                continue;
            }
            let Some(kind) = LogKind::from_field(f.number) else {
                continue; // unknown field: protobuf skips it
            };
            let name = kind.name();
            let body = len_of(&f.value).ok_or_else(|| wrong(name))?.clone();
            // A oneof: the last member set wins.
            log.kind = kind;
            log.requests.clear();
            log.request_offsets.clear();
            log.response = None;
            // ClassifyLog, RegressLog and MultiInferenceLog have PredictLog's two numbers.
            if matches!(
                kind,
                LogKind::Predict
                    | LogKind::PredictStreamed
                    | LogKind::Classify
                    | LogKind::Regress
                    | LogKind::MultiInference
            ) {
                let mut sub = r.nested(body.clone(), f.value_offset)?;
                while let Some(g) = sub.next_field().map_err(|e| e.within(name))? {
                    match (g.number, &g.value) {
                        (predict_log::REQUEST, WireValue::Len(b)) => {
                            if kind != LogKind::PredictStreamed {
                                // Not repeated: the last one wins (merging two is not modelled).
                                log.requests.clear();
                                log.request_offsets.clear();
                            }
                            log.requests.push(b.clone());
                            log.request_offsets.push(g.value_offset);
                        }
                        (predict_log::RESPONSE, WireValue::Len(b)) => {
                            log.response = Some(b.clone())
                        }
                        (predict_log::REQUEST | predict_log::RESPONSE, _) => {
                            return Err(DecodeError::new(
                                crate::error::DecodeErrorKind::WrongWireType {
                                    field: if g.number == predict_log::REQUEST {
                                        "request"
                                    } else {
                                        "response"
                                    },
                                    found: g.value.wire_type(),
                                },
                                g.offset,
                            )
                            .within(name));
                        }
                        _ => {}
                    }
                }
            }
            log.body = body;
        }
        Ok(log)
    }

    /// The `predict_log` request decoded as a TF Serving `PredictRequest`, or `None` for
    /// other kinds (and a `predict_log` without a request).
    pub fn predict_request(&self) -> Option<Result<Message, Error>> {
        if self.kind != LogKind::Predict {
            return None;
        }
        let b = self.requests.first()?;
        let opts = DecodeOptions {
            wire: Some(WireFormat::TfServing),
            kind: Some(Kind::Request),
            max_size: None,
        };
        Some(decode_message(b.clone(), opts))
    }
}

impl PredictionLog {
    /// The `model_spec` of the request inside a log of any kind: `predict_log`,
    /// `classify_log`, `regress_log`, `session_run_log` (one), `multi_inference_log`
    /// (one per task), `predict_streamed_log` (one per request). Read from the raw
    /// body: field 1 (the request), then its `model_spec` (field 1; for
    /// multi_inference, each task's field 1). Specs that do not decode are left out.
    ///
    /// ```
    /// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
    /// let rec = tfreq::formats::Records::new(bytes).nth(1).unwrap()?;
    /// let log = tfreq::formats::PredictionLog::decode(rec.data, 0)?;
    /// assert_eq!(log.request_model_specs()[0].signature_name, "classify_x_to_y");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_model_specs(&self) -> Vec<ModelSpec> {
        let requests: Vec<Bytes> = match self.kind {
            LogKind::None => return Vec::new(),
            LogKind::Predict | LogKind::PredictStreamed => self.requests.clone(),
            _ => fields(&self.body, 1),
        };
        let mut out = Vec::new();
        for req in requests {
            let specs = if self.kind == LogKind::MultiInference {
                fields(&req, 1)
                    .iter()
                    .flat_map(|task| fields(task, 1))
                    .collect()
            } else {
                fields(&req, 1)
            };
            for b in specs {
                if let Ok(spec) = crate::decode::decode_model_spec(Reader::new(b)) {
                    out.push(spec);
                }
            }
        }
        out
    }
}

/// The LEN payloads of field `n` of a message (stops quietly at malformed bytes).
fn fields(msg: &Bytes, n: u32) -> Vec<Bytes> {
    let mut r = Reader::new(msg.clone());
    let mut out = Vec::new();
    while let Ok(Some(f)) = r.next_field() {
        if let (true, WireValue::Len(b)) = (f.number == n, f.value) {
            out.push(b);
        }
    }
    out
}

/// A `PredictionLog { predict_log { request } }` around TF Serving `PredictRequest`
/// bytes: one warm-up record's data.
///
/// ```
/// // `tests/data/gen/README.md`: the envelope is 32 3c 0a 3a + the 58-byte request.
/// let log = tfreq::formats::encode_predict_log(&[0u8; 58]);
/// assert_eq!(&log[..4], &[0x32, 0x3c, 0x0a, 0x3a]);
/// ```
pub fn encode_predict_log(request: &[u8]) -> Vec<u8> {
    encode_log(prediction_log::PREDICT_LOG, request)
}

/// A `PredictionLog` holding one request of `method` in its own log type
/// (`predict_log`, `classify_log`, `regress_log`, `multi_inference_log`: each has the
/// request in field 1), or `None` for a bare classify-or-regress request, whose log type
/// its bytes cannot tell.
///
/// ```
/// use tfreq::formats::{encode_request_log, LogKind, PredictionLog};
/// let log = encode_request_log(tfreq::Method::Regress, b"").unwrap();
/// assert_eq!(PredictionLog::decode(log.into(), 0)?.kind, LogKind::Regress);
/// assert!(encode_request_log(tfreq::Method::ClassifyOrRegress, b"").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_request_log(method: crate::model::Method, request: &[u8]) -> Option<Vec<u8>> {
    use crate::model::Method;
    let field = match method {
        Method::Predict => prediction_log::PREDICT_LOG,
        Method::Classify => prediction_log::CLASSIFY_LOG,
        Method::Regress => prediction_log::REGRESS_LOG,
        Method::MultiInference => prediction_log::MULTI_INFERENCE_LOG,
        Method::ClassifyOrRegress => return None,
    };
    Some(encode_log(field, request))
}

/// `PredictionLog { <field> { request } }`; every log type's request is its field 1.
fn encode_log(field: u32, request: &[u8]) -> Vec<u8> {
    let inner = len_field_size(predict_log::REQUEST, request.len());
    let mut out = Vec::with_capacity(len_field_size(field, inner));
    put_len_header(&mut out, field, inner);
    put_len_header(&mut out, predict_log::REQUEST, request.len());
    out.extend_from_slice(request);
    out
}

/// Each field of `msg` with its raw bytes (tag to end of value), in order.
pub(crate) fn raw_fields(msg: &Bytes) -> Result<Vec<(WireValue, u32, Bytes)>, DecodeError> {
    let mut r = Reader::new(msg.clone());
    let mut out = Vec::new();
    while let Some(f) = r.next_field()? {
        let raw = msg.slice(f.offset..r.offset());
        out.push((f.value, f.number, raw));
    }
    Ok(out)
}

/// What a `predict_log` record holds besides its request, in words: `log_metadata`,
/// the `predict_log.response`, and fields the schema does not know. A bare request
/// file has no room for these.
///
/// ```
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
/// let rec = tfreq::formats::Records::new(bytes).next().unwrap()?;
/// let parts = tfreq::formats::beside_request(&rec.data)?;
/// assert_eq!(parts, ["log_metadata"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn beside_request(data: &Bytes) -> Result<Vec<String>, DecodeError> {
    let mut out = Vec::new();
    for (v, n, _) in raw_fields(data)? {
        match (n, v) {
            (prediction_log::LOG_METADATA, _) => out.push("log_metadata".to_string()),
            (prediction_log::PREDICT_LOG, WireValue::Len(body)) => {
                for (_, m, _) in raw_fields(&body)? {
                    match m {
                        predict_log::REQUEST => {}
                        predict_log::RESPONSE => out.push("predict_log.response".to_string()),
                        m => out.push(format!("predict_log field {m} (unknown)")),
                    }
                }
            }
            (n, _) => match LogKind::from_field(n) {
                Some(k) => out.push(format!("{k} (another log_type member)")),
                None => out.push(format!("PredictionLog field {n} (unknown)")),
            },
        }
    }
    Ok(out)
}

/// The record `data` (a `PredictionLog` holding a `predict_log`) with its request
/// replaced by `request`. Every other field is kept byte for byte (`log_metadata`,
/// unknown fields, the response unless `drop_response`). The new request goes into
/// the last `predict_log`, the one the record's request was read from.
///
/// ```
/// use tfreq::formats::{encode_predict_log, replace_predict_request};
/// let rec = encode_predict_log(b"\x1a\x01y");
/// let out = replace_predict_request(&rec.into(), b"\x1a\x01z", false)?;
/// assert_eq!(out, encode_predict_log(b"\x1a\x01z"));
/// # Ok::<(), tfreq::DecodeError>(())
/// ```
pub fn replace_predict_request(
    data: &Bytes,
    request: &[u8],
    drop_response: bool,
) -> Result<Vec<u8>, DecodeError> {
    let fields = raw_fields(data)?;
    let last = fields
        .iter()
        .rposition(|(_, n, _)| *n == prediction_log::PREDICT_LOG);
    let mut out = Vec::with_capacity(data.len() + request.len() + 8);
    for (i, (v, n, raw)) in fields.into_iter().enumerate() {
        let WireValue::Len(body) = v else {
            out.extend_from_slice(&raw);
            continue;
        };
        if n != prediction_log::PREDICT_LOG {
            out.extend_from_slice(&raw);
            continue;
        }
        let mut inner = Vec::with_capacity(body.len() + request.len());
        if Some(i) == last {
            crate::wire::writer::put_bytes_field(&mut inner, predict_log::REQUEST, request);
        }
        for (_, m, raw) in raw_fields(&body)? {
            if m == predict_log::REQUEST || (m == predict_log::RESPONSE && drop_response) {
                continue;
            }
            inner.extend_from_slice(&raw);
        }
        crate::wire::writer::put_bytes_field(&mut out, prediction_log::PREDICT_LOG, &inner);
    }
    Ok(out)
}
