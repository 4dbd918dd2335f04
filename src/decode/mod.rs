//! Bytes → [`Message`], for both wire formats, with honest format detection.
//!
//! Decoding is strict: every length is checked against the bytes present, every error
//! names the byte offset and field path, unknown fields are kept (not dropped), and
//! from a [`Bytes`] buffer packed floats/doubles and `tensor_content` are views into
//! the buffer, not copies.
//!
//! Detection (`proto/eas/tf_predict.proto`) decodes the bytes as each candidate — EAS request, EAS
//! response, TF Serving request, TF Serving response — and counts *anomalies*: fields
//! the schema does not know, known fields with impossible wire types, values stored in
//! a field the dtype does not read, names with control characters. The candidate that
//! decodes with strictly the fewest wins; a tie is reported as ambiguous, never guessed.
//! TF Serving's tf.Example requests (`ClassificationRequest` / `RegressionRequest`, one
//! reading since their fields are the same, and `MultiInferenceRequest`) are tried too
//! and win only as [`Detection::examples`] says.
//!
//! ```
//! use tfreq::{decode, WireFormat, Kind};
//! // `tests/data/gen/README.md`: an EAS request written by eas_prediction.
//! let hex = "0a0f73657276696e675f64656661756c7412170a01781212080112040a0201021a080000803f000000401a0179";
//! let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
//! let msg = decode(&bytes)?;
//! assert_eq!((msg.wire, msg.kind), (WireFormat::Eas, Kind::Request));
//! assert_eq!(msg.signature_name, "serving_default");
//! assert_eq!(msg.tensors[0].shape.sizes(), vec![1, 2]);
//! assert_eq!(msg.fetches, vec!["y"]);
//! # Ok::<(), tfreq::Error>(())
//! ```

use bytes::Bytes;

use crate::dtype::{DTypeCode, Storage, ValueField};
use crate::error::{DecodeError, DecodeErrorKind, Error, ErrorDetail};
use crate::fields::{
    array_proto, array_shape, dim, eas_request, eas_response, int64_value, map_entry, model_spec,
    predict_log, predict_request, predict_response, tensor_proto, tensor_shape,
};
use crate::model::{
    Dim, Elems, Ints, Kind, Message, Method, ModelSpec, Scope, Shape, Tensor, UnknownField, Values,
    WireFormat,
};

mod examples;
use crate::wire::reader::{packed_varints, PackedVarints, Reader, WireField, WireValue};
pub(crate) use examples::decode_example;

/// Packed varint fields from this many bytes up are kept as views of the input and
/// decoded on access ([`crate::Ints::Packed`]); smaller ones are decoded at once.
const LAZY_VARINTS: usize = 1 << 20;

/// What [`decode_with`] may assume.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Force the wire format instead of detecting it.
    pub wire: Option<WireFormat>,
    /// Force request or response instead of detecting it.
    pub kind: Option<Kind>,
    /// Refuse inputs larger than this many bytes.
    pub max_size: Option<u64>,
}

/// How detection went: every candidate tried, with its anomaly count or its error.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Detection {
    /// `(wire, kind, Ok(anomalies) | Err(error))` for each candidate tried.
    pub candidates: Vec<(WireFormat, Kind, Result<usize, DecodeError>)>,
    /// The best readings tied, and they mean the same: the EAS and the TF Serving
    /// request readings carry the same signature, feeds and fetches (e.g. bytes that
    /// hold only `output_filter`, field 3 in both). The EAS reading is returned.
    pub agree: bool,
    /// The TF Serving `tf.train.Example` request readings tried
    /// ([`Method::ClassifyOrRegress`], [`Method::MultiInference`]), with their anomaly
    /// count or error. Such a reading wins only when it reads an `input` (or a task)
    /// without anomaly and has strictly fewer anomalies than every predict reading: bytes
    /// that read as well as a `PredictRequest` (a `model_spec` alone) stay one.
    pub examples: Vec<(Method, Result<usize, DecodeError>)>,
}

impl Detection {
    /// One line per candidate, for error messages and `--explain`.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (w, k, r) in &self.candidates {
            match r {
                Ok(0) => s.push_str(&format!("  as {w} {}: valid\n", k.as_str())),
                Ok(n) => s.push_str(&format!(
                    "  as {w} {}: parses, with {n} anomal{}\n",
                    k.as_str(),
                    if *n == 1 { "y" } else { "ies" }
                )),
                Err(e) => s.push_str(&format!("  as {w} {}: {e}\n", k.as_str())),
            }
        }
        for (m, r) in &self.examples {
            match r {
                Ok(0) => s.push_str(&format!("  as TF Serving {m}: valid\n")),
                Ok(n) => s.push_str(&format!(
                    "  as TF Serving {m}: parses, with {n} anomal{}\n",
                    if *n == 1 { "y" } else { "ies" }
                )),
                Err(e) => s.push_str(&format!("  as TF Serving {m}: {e}\n")),
            }
        }
        s
    }
}

/// Decodes a request or response, detecting the wire format and kind.
pub fn decode(bytes: &[u8]) -> Result<Message, Error> {
    decode_with(Bytes::copy_from_slice(bytes), DecodeOptions::default()).map(|(m, _)| m)
}

/// Decodes from a [`Bytes`] buffer without copying tensor data, with options.
pub fn decode_with(bytes: Bytes, opts: DecodeOptions) -> Result<(Message, Detection), Error> {
    if let Some(limit) = opts.max_size {
        if bytes.len() as u64 > limit {
            return Err(Error::from(ErrorDetail::Decode {
                wire: opts.wire.unwrap_or(WireFormat::Eas),
                kind: opts.kind.unwrap_or(Kind::Request),
                source: DecodeError::new(
                    DecodeErrorKind::TooLarge {
                        size: bytes.len() as u64,
                        limit,
                    },
                    0,
                ),
            }));
        }
    }
    if bytes.is_empty() {
        return Err(Error::from(ErrorDetail::Empty));
    }
    let wires: &[WireFormat] = match opts.wire {
        Some(WireFormat::Eas) => &[WireFormat::Eas],
        Some(WireFormat::TfServing) => &[WireFormat::TfServing],
        None => &[WireFormat::Eas, WireFormat::TfServing],
    };
    let kinds: &[Kind] = match opts.kind {
        Some(Kind::Request) => &[Kind::Request],
        Some(Kind::Response) => &[Kind::Response],
        None => &[Kind::Request, Kind::Response],
    };
    let mut candidates = Vec::new();
    // Only the best message so far is kept (a worse one is dropped at once), so
    // detection holds at most two decoded candidates at a time.
    let mut best: Vec<(usize, Message)> = Vec::new();
    // Whether some reading holds a field of the schema's own content, of its wire type,
    // or has no foreign top-level field (a message of `client_id` alone).
    let (mut any_content, mut any_clean) = (false, false);
    for &w in wires {
        for &k in kinds {
            match decode_top(bytes.clone(), w, k, true) {
                Ok((m, anomalies, content)) => {
                    any_content |= content.fields > 0 || content.foreign == 0;
                    any_clean |= content.clean > 0 || anomalies == 0;
                    candidates.push((w, k, Ok(anomalies)));
                    match best.first().map(|(a, _)| *a) {
                        Some(a) if anomalies > a => {}
                        // A tie makes the input ambiguous: only its name is needed.
                        Some(a) if anomalies == a => best.push((anomalies, Message::new(w, k))),
                        _ => best = vec![(anomalies, m)],
                    }
                }
                Err(e) => candidates.push((w, k, Err(e))),
            }
        }
    }
    // The tf.Example requests: TF Serving requests only.
    let mut det = Detection {
        candidates,
        agree: false,
        examples: Vec::new(),
    };
    if opts.wire != Some(WireFormat::Eas) && opts.kind != Some(Kind::Response) {
        let predict_best = best.first().map(|(a, _)| *a);
        // The predict reading of an `input` holding an `example_list` (an empty one, or
        // one whose bytes read as a map key): inputs with no dtype, no shape and no
        // values, named "" or by bytes with control characters. No client writes that
        // (TF Serving refuses DT_INVALID); an `Input` is what it is, so on a tie the
        // examples reading wins.
        let hollow = match best.as_slice() {
            [(_, m)] => {
                m.wire == WireFormat::TfServing
                    && m.kind == Kind::Request
                    && !m.tensors.is_empty()
                    && m.tensors.iter().all(|t| {
                        (t.name.is_empty() || t.name.chars().any(char::is_control))
                            && t.dtype.0 == 0
                            && !t.shape.present
                            && t.fields.is_empty()
                            && t.content.is_none()
                    })
            }
            _ => false,
        };
        let mut pick: Option<(usize, Message)> = None;
        for method in [Method::ClassifyOrRegress, Method::MultiInference] {
            match examples::decode_examples_top(bytes.clone(), method) {
                Ok((m, anomalies, content)) => {
                    det.examples.push((method, Ok(anomalies)));
                    let better = predict_best
                        .is_none_or(|p| anomalies < p || hollow && anomalies == p)
                        && pick.as_ref().is_none_or(|(a, _)| anomalies < *a);
                    if content.clean > 0 && content.foreign == 0 && better {
                        pick = Some((anomalies, m));
                    }
                }
                Err(e) => det.examples.push((method, Err(e))),
            }
        }
        if let Some((_, m)) = pick {
            return Ok((m, det));
        }
    }
    let det = det;
    if !any_content && !best.is_empty() {
        // In every reading that parses, every top-level field is unknown to, or of a
        // wire type impossible in, the schema's content (the kept-raw fields alone
        // make no request, as in a SavedModel fingerprint read as a TF Serving request).
        return Err(Error::from(ErrorDetail::NotTensorFlow(sniff(&bytes))));
    }
    if !any_clean && !best.is_empty() {
        // No reading has a content field without an anomaly in it, and the bytes have
        // the structure of another TensorFlow message (a tf.train.Example read as a
        // request has its features as a signature name full of control characters).
        if let Some(what) = sniff(&bytes) {
            return Err(Error::from(ErrorDetail::NotTensorFlow(Some(what))));
        }
    }
    let Some(min) = best.iter().map(|(a, _)| *a).min() else {
        if let Some(what) = sniff(&bytes) {
            return Err(Error::from(ErrorDetail::NotTensorFlow(Some(what))));
        }
        if let [(w, k, Err(e))] = det.candidates.as_slice() {
            return Err(Error::from(ErrorDetail::Decode {
                wire: *w,
                kind: *k,
                source: e.clone(),
            }));
        }
        return Err(Error::from(ErrorDetail::Unrecognised(det.describe())));
    };
    let mut winners: Vec<Message> = best
        .into_iter()
        .filter(|(a, _)| *a == min)
        .map(|(_, m)| m)
        .collect();
    if winners.len() > 1 {
        if let Some(m) = agreeing_reading(&bytes, &winners) {
            let mut det = det;
            det.agree = true;
            return Ok((m, det));
        }
        // Tied readings of bytes with another TensorFlow message's structure (a
        // tf.train.Example reads as a valid response of either wire format): that.
        if let Some(what) = sniff(&bytes) {
            return Err(Error::from(ErrorDetail::NotTensorFlow(Some(what))));
        }
        let names: Vec<String> = winners
            .iter()
            .map(|m| format!("{} {}", m.wire, m.kind.as_str()))
            .collect();
        return Err(Error::from(ErrorDetail::Ambiguous(format!(
            "{}\n{}",
            names.join(" and "),
            det.describe()
        ))));
    }
    Ok((winners.remove(0), det))
}

/// What bytes that are no request or response look like, from a cheap look at their
/// structure (top-level field numbers and wire types, one level down where that tells
/// messages apart), or `None`. The layouts are TensorFlow's own protos: [saved_model.proto]
/// (`SavedModel`: 1 schema version, 2 meta graphs), [fingerprint.proto]
/// (`FingerprintDef`: 1-5 uint64 hashes, 6 `VersionDef`, 7 uuid), [graph.proto]
/// (`GraphDef`: 1 nodes with a name and an op, 2 library, 3 version, 4 versions) and
/// [example.proto] (`Example`: 1 features, a map of name to `Feature`); a TFRecord's
/// framing is its 8-byte little-endian lengths ([record_writer.cc]).
///
/// [saved_model.proto]: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/protobuf/saved_model.proto
/// [fingerprint.proto]: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/protobuf/fingerprint.proto
/// [graph.proto]: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/graph.proto
/// [example.proto]: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/example/example.proto
/// [record_writer.cc]: https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/lib/io/record_writer.cc
///
/// ```
/// let b = std::fs::read("tests/data/models/faq/saved_model.pb")?;
/// let e = tfreq::decode(&b).unwrap_err();
/// assert!(e.to_string().starts_with("not a TensorFlow request or response: the bytes look like a SavedModel"), "{e}");
/// # Ok::<(), std::io::Error>(())
/// ```
fn sniff(bytes: &Bytes) -> Option<String> {
    if let Some(n) = tfrecord_framing(bytes) {
        let records = format!(
            "{n} record{} by its length fields",
            if n == 1 { "" } else { "s" }
        );
        // The length's checksum: CRC-32C, masked as src/formats/tfrecord.rs (`mask`)
        // masks it when it checks every record (a layer above this one).
        let crc = crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes.get(..8)?) as u32;
        let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
        let stored = u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?);
        return Some(if masked == stored {
            format!("a TFRecord file ({records}); read it as TFRecord, not as one message")
        } else {
            format!("a TFRecord file with a bad header ({records}, but the length checksum at byte 8 is wrong: damaged, or not written by a TFRecord writer)")
        });
    }
    let fields = top_fields(bytes)?;
    let count = |n: u32| fields.iter().filter(|(m, _)| *m == n).count();
    let only = |allowed: &[(u32, u8)]| {
        fields
            .iter()
            .all(|(n, v)| allowed.contains(&(*n, v.wire_type())))
    };
    // SavedModel: saved_model_schema_version (a varint, which no request or response
    // has at the top) and meta_graphs (messages whose fields are MetaGraphDef's, 1..=7).
    if only(&[(1, 0), (2, 2)])
        && count(1) == 1
        && count(2) >= 1
        && fields.iter().all(|(n, v)| {
            *n != 2 || matches!(v, WireValue::Len(b) if top_fields(b).is_some_and(|f| f.iter().all(|(m, _)| (1..=7).contains(m))))
        })
    {
        let version = fields.iter().find_map(|(n, v)| match (n, v) {
            (1, WireValue::Varint(x)) => Some(*x),
            _ => None,
        });
        return Some(format!(
            "a SavedModel (saved_model.pb: schema version {}, {} MetaGraphDef{}); `tfreq signature DIR` reads its signatures",
            version.unwrap_or_default(),
            count(2),
            if count(2) == 1 { "" } else { "s" }
        ));
    }
    // FingerprintDef: uint64 hashes 1..=5, VersionDef 6, uuid 7.
    let varints = (1..=5).filter(|n| count(*n) == 1).count();
    if only(&[(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 2), (7, 2)]) && varints >= 3 {
        return Some(
            "a SavedModel fingerprint (fingerprint.pb: a FingerprintDef of the model's hashes)"
                .into(),
        );
    }
    // GraphDef: nodes with a name (1) and an op (2), the op a CamelCase identifier.
    let named = |b: &Bytes| {
        top_fields(b).is_some_and(|f| {
            let name = f.iter().any(|(m, v)| *m == 1 && matches!(v, WireValue::Len(s) if printable(s)));
            let op = f.iter().any(|(m, v)| {
                *m == 2
                    && matches!(v, WireValue::Len(s) if s.first().is_some_and(u8::is_ascii_uppercase)
                        && s.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_'))
            });
            name && op
        })
    };
    if only(&[(1, 2), (2, 2), (3, 0), (4, 2)])
        && count(1) >= 1
        && fields
            .iter()
            .all(|(n, v)| *n != 1 || matches!(v, WireValue::Len(b) if named(b)))
    {
        return Some(format!(
            "a GraphDef (a graph of {} node{}, as a frozen graph's .pb holds)",
            count(1),
            if count(1) == 1 { "" } else { "s" }
        ));
    }
    // tf.train.Example: one Features, a map of text names to Feature messages.
    if let [(1, WireValue::Len(features))] = fields.as_slice() {
        let entries = top_fields(features)?;
        // A Feature holds one of bytes_list (1), float_list (2), int64_list (3).
        let is_feature = |b: &Bytes| {
            top_fields(b).is_some_and(|f| matches!(f.as_slice(), [(1..=3, WireValue::Len(_))]))
        };
        let is_entry = |v: &WireValue| {
            match v {
            WireValue::Len(e) => top_fields(e).is_some_and(|f| {
                matches!(f.as_slice(), [(1, WireValue::Len(k)), (2, WireValue::Len(x))] if printable(k) && is_feature(x))
            }),
            _ => false,
        }
        };
        if !entries.is_empty() && entries.iter().all(|(n, v)| *n == 1 && is_entry(v)) {
            return Some(format!(
                "a tf.train.Example ({} feature{}), as tf.io.TFRecordWriter files of training data hold",
                entries.len(),
                if entries.len() == 1 { "" } else { "s" }
            ));
        }
    }
    None
}

/// UTF-8 with no control character, not empty: a name.
fn printable(b: &[u8]) -> bool {
    !b.is_empty() && std::str::from_utf8(b).is_ok_and(|s| !s.chars().any(char::is_control))
}

/// The top-level fields of a message (at most a few thousand are looked at), or `None`
/// when the bytes do not parse as one.
fn top_fields(bytes: &Bytes) -> Option<Vec<(u32, WireValue)>> {
    let mut r = Reader::new(bytes.clone());
    let mut out = Vec::new();
    while let Some(f) = r.next_field().ok()? {
        if out.len() >= 4096 {
            break;
        }
        out.push((f.number, f.value));
    }
    Some(out)
}

/// The number of records when `bytes` walk as TFRecord framing by the length fields
/// alone (8-byte length, 4-byte length checksum, data, 4-byte data checksum), ending
/// exactly at the end; `None` otherwise.
fn tfrecord_framing(bytes: &[u8]) -> Option<usize> {
    let mut at = 0usize;
    let mut n = 0usize;
    while at < bytes.len() {
        let len = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
        let next = usize::try_from(len)
            .ok()?
            .checked_add(16)?
            .checked_add(at)?;
        if next > bytes.len() {
            return None;
        }
        at = next;
        n += 1;
    }
    (n > 0).then_some(n)
}

/// When the tied readings are exactly the EAS and the TF Serving request and both say
/// the same thing (no model_spec, no extra fields, equal signature, feeds and fetches),
/// the EAS reading: the choice of wire changes nothing a server sees.
fn agreeing_reading(bytes: &Bytes, winners: &[Message]) -> Option<Message> {
    let [a, b] = winners else { return None };
    if a.kind != Kind::Request || b.kind != Kind::Request || a.wire == b.wire {
        return None;
    }
    let (eas, _) = decode_inner(bytes.clone(), WireFormat::Eas, Kind::Request).ok()?;
    let (tfs, _) = decode_inner(bytes.clone(), WireFormat::TfServing, Kind::Request).ok()?;
    readings_agree(&eas, &tfs).then_some(eas)
}

/// Whether an EAS and a TF Serving reading of one request say the same thing (no
/// model_spec, no extra or unknown fields, no feeds, equal signature and fetches): the
/// choice of wire changes nothing a server sees, and the EAS reading is shown. The rule
/// for bytes ([`decode`]) and for protobuf text ([`crate::formats::text_format`]).
pub(crate) fn readings_agree(eas: &Message, tfs: &Message) -> bool {
    tfs.model_spec.is_none()
        && tfs.extra.is_empty()
        && eas.unknown.is_empty()
        && tfs.unknown.is_empty()
        && eas.signature_name == tfs.signature_name
        && eas.fetches == tfs.fetches
        && eas.tensors.is_empty()
        && tfs.tensors.is_empty()
}

/// Decodes a TF Serving `tf.train.Example` request as `method` says it is (a
/// `ClassifyLog`'s request is a classify one): a [`Message`] whose
/// [`Message::input`] holds the examples and [`Message::tasks`] a multi-inference
/// request's tasks. [`Method::Predict`] decodes a `PredictRequest`. Unknown fields are
/// kept, not errors.
///
/// ```
/// let b = std::fs::read("tests/data/examples/requests/classify_valid_context.pb")?;
/// let m = tfreq::decode_request(b.into(), tfreq::Method::Classify)?;
/// let input = m.input.as_ref().unwrap();
/// assert_eq!((input.with_context, input.examples.len()), (true, 3));
/// let ctx = input.context.as_ref().unwrap();
/// assert_eq!(ctx.feature("age").unwrap().values, tfreq::FeatureValues::Int64(vec![40]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_request(bytes: Bytes, method: Method) -> Result<Message, DecodeError> {
    match method {
        Method::Predict => {
            decode_inner(bytes, WireFormat::TfServing, Kind::Request).map(|(m, _)| m)
        }
        _ => examples::decode_examples_top(bytes, method).map(|(m, _, _)| m),
    }
}

/// Decodes as one named format, strictly; unknown fields are kept, not errors.
pub fn decode_as(bytes: &[u8], wire: WireFormat, kind: Kind) -> Result<Message, DecodeError> {
    decode_inner(Bytes::copy_from_slice(bytes), wire, kind).map(|(m, _)| m)
}

/// Decodes one tensor message (`TensorProto` or `ArrayProto`) on its own, e.g. the
/// output of `tf.io.serialize_tensor`.
pub fn decode_tensor(bytes: Bytes, wire: WireFormat) -> Result<Tensor, DecodeError> {
    let r = Reader::new(bytes);
    let mut an = 0;
    tensor(r, wire, String::new(), 0, &mut an)
}

fn decode_inner(
    bytes: Bytes,
    wire: WireFormat,
    kind: Kind,
) -> Result<(Message, usize), DecodeError> {
    decode_top(bytes, wire, kind, true).map(|(m, a, _)| (m, a))
}

/// Whether bytes held in a TF Serving request's bytes field are themselves a request:
/// a clean `PredictRequest`, or a `PredictLog` (`request` = field 1) around one. A
/// `client_id` holding one is what concatenated `PredictionLog`s look like when read as
/// one request.
fn holds_request(b: &Bytes) -> bool {
    let clean = |b: Bytes| {
        !b.is_empty()
            && matches!(decode_top(b, WireFormat::TfServing, Kind::Request, false), Ok((m, 0, _)) if !m.tensors.is_empty())
    };
    if clean(b.clone()) {
        return true;
    }
    let mut r = Reader::new(b.clone());
    let mut req = None;
    loop {
        match r.next_field() {
            Ok(Some(f)) => match (f.number, f.value) {
                (predict_log::REQUEST, WireValue::Len(x)) => req = Some(x),
                (predict_log::RESPONSE, WireValue::Len(_)) => {}
                _ => return false,
            },
            Ok(None) => break,
            Err(_) => return false,
        }
    }
    req.is_some_and(clean)
}

/// How many top-level fields of a reading are fields of the schema's own content
/// (signature name, inputs or outputs, output filter, model spec; not the kept-raw
/// `client_id` and friends) with their wire type, how many of those read with no
/// anomaly inside, and how many top-level fields are foreign to the schema (unknown, or
/// of an impossible wire type).
#[derive(Debug, Clone, Copy)]
struct Content {
    fields: usize,
    clean: usize,
    foreign: usize,
}

/// Decodes one top-level message: the message, its anomalies, and its [`Content`]. With `check_bytes`, a TF Serving request's bytes field that
/// holds a request ([`holds_request`]) is an anomaly (checked one level deep only, so
/// the cost stays linear).
fn decode_top(
    bytes: Bytes,
    wire: WireFormat,
    kind: Kind,
    check_bytes: bool,
) -> Result<(Message, usize, Content), DecodeError> {
    let size = bytes.len();
    let mut r = Reader::new(bytes);
    let mut msg = Message::new(wire, kind);
    msg.size = size;
    let mut anomalies = 0usize;
    // Field numbers by (wire, kind).
    let (sig_or_spec, map_field, filter_field, spec_field) = match (wire, kind) {
        (WireFormat::Eas, Kind::Request) => (
            Some(eas_request::SIGNATURE_NAME),
            eas_request::INPUTS,
            Some(eas_request::OUTPUT_FILTER),
            None,
        ),
        (WireFormat::Eas, Kind::Response) => (None, eas_response::OUTPUTS, None, None),
        (WireFormat::TfServing, Kind::Request) => (
            None,
            predict_request::INPUTS,
            Some(predict_request::OUTPUT_FILTER),
            Some(predict_request::MODEL_SPEC),
        ),
        (WireFormat::TfServing, Kind::Response) => (
            None,
            predict_response::OUTPUTS,
            None,
            Some(predict_response::MODEL_SPEC),
        ),
    };
    let map_name = if kind == Kind::Request {
        "inputs"
    } else {
        "outputs"
    };
    let names: &[(u32, &'static str)] = match (wire, kind) {
        (WireFormat::Eas, Kind::Request) => eas_request::FIELDS,
        (WireFormat::Eas, Kind::Response) => eas_response::FIELDS,
        (WireFormat::TfServing, Kind::Request) => predict_request::FIELDS,
        (WireFormat::TfServing, Kind::Response) => predict_response::FIELDS,
    };
    let mut index = 0usize;
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    // Singular fields seen (signature_name / model_spec, and TF Serving's fields 5-7):
    // one that occurs again is legal protobuf (the last wins, or messages merge) but
    // no client writes it, so it counts against this reading.
    let mut seen_singular = [false; predict_request::REQUEST_OPTIONS as usize + 1];
    let (mut content_fields, mut clean_fields, mut foreign_fields) = (0usize, 0usize, 0usize);
    while let Some(f) = r.next_field_named(names)? {
        let n = f.number;
        let before = anomalies;
        // Every field of every schema is length-delimited.
        let len = matches!(f.value, WireValue::Len(_));
        let content = (Some(n) == sig_or_spec
            || n == map_field
            || Some(n) == filter_field
            || Some(n) == spec_field)
            && len;
        let raw = wire == WireFormat::TfServing
            && kind == Kind::Request
            && crate::fields::kept_raw_name(n).is_some();
        if !(content || raw && len) {
            foreign_fields += 1;
        }
        let singular = Some(n) == sig_or_spec
            || Some(n) == spec_field
            || (wire == WireFormat::TfServing
                && kind == Kind::Request
                && crate::fields::kept_raw_name(n).is_some());
        if singular {
            if let Some(s) = seen_singular.get_mut(n as usize) {
                if *s {
                    anomalies += 1;
                }
                *s = true;
            }
        }
        if Some(n) == sig_or_spec {
            let b = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies);
            if let Some(b) = b {
                let s = utf8(&b, f.value_offset).map_err(|e| e.within("signature_name"))?;
                if s.bytes().any(|c| c < 0x20) {
                    anomalies += 1;
                }
                msg.signature_name = s;
            }
        } else if n == map_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                let sub = r.nested(b, f.value_offset)?;
                let t = map_entry(sub, wire, map_name, index, f.offset, &mut anomalies)?;
                index += 1;
                // A hash index of the names: a linear search per entry made many
                // entries quadratic.
                if let Some(&pos) = by_name.get(t.name.as_str()) {
                    msg.duplicate_keys.push((t.name.clone(), f.offset));
                    if let Some(slot) = msg.tensors.get_mut(pos) {
                        *slot = t; // last wins, as protobuf
                    }
                } else {
                    by_name.insert(t.name.clone(), msg.tensors.len());
                    msg.tensors.push(t);
                }
            }
        } else if Some(n) == filter_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                let i = msg.fetches.len();
                let s = utf8(&b, f.value_offset)
                    .map_err(|e| e.within(format!("output_filter[{i}]")))?;
                msg.fetches.push(s);
            }
        } else if Some(n) == spec_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                let sub = r.nested(b, f.value_offset)?;
                let spec = msg.model_spec.take().unwrap_or_default();
                let spec = model_spec(sub, spec, &mut msg.unknown, &mut anomalies)
                    .map_err(|e| e.within("model_spec"))?;
                msg.signature_name = spec.signature_name.clone();
                msg.model_spec = Some(spec);
            }
        } else if let Some(name) = crate::fields::kept_raw_name(n)
            .filter(|_| wire == WireFormat::TfServing && kind == Kind::Request)
        {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                if check_bytes && n == predict_request::CLIENT_ID && holds_request(&b) {
                    anomalies += 1;
                }
                msg.extra.push((name, b));
            }
        } else {
            anomalies += 1;
            msg.unknown.push(unknown(TOP, &f));
        }
        if content {
            content_fields += 1;
            if anomalies == before {
                clean_fields += 1;
            }
        }
    }
    Ok((
        msg,
        anomalies,
        Content {
            fields: content_fields,
            clean: clean_fields,
            foreign: foreign_fields,
        },
    ))
}

/// Where an unknown field sits: its enclosing message's path (for people) and scope
/// (for writing it back), both known to the code that reads that message.
#[derive(Clone, Copy)]
struct Where<'a> {
    path: &'a str,
    scope: Scope,
}

/// The request or response itself.
const TOP: Where<'static> = Where {
    path: "",
    scope: Scope::Top,
};

fn unknown(at: Where<'_>, f: &WireField) -> UnknownField {
    UnknownField {
        path: UnknownField::display_path(at.path),
        scope: at.scope,
        number: f.number,
        wire_type: f.value.wire_type(),
        offset: f.offset,
        value: f.value.clone(),
    }
}

/// The payload of a LEN field, or record the field as unknown (wrong wire type).
fn len_or_unknown(
    f: &WireField,
    unknown_out: &mut Vec<UnknownField>,
    at: Where<'_>,
    anomalies: &mut usize,
) -> Option<Bytes> {
    match &f.value {
        WireValue::Len(b) => Some(b.clone()),
        _ => {
            *anomalies += 1;
            unknown_out.push(unknown(at, f));
            None
        }
    }
}

fn utf8(b: &Bytes, offset: usize) -> Result<String, DecodeError> {
    match std::str::from_utf8(b) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => Err(DecodeError::new(
            DecodeErrorKind::InvalidUtf8 {
                byte: b.get(e.valid_up_to()).copied().unwrap_or(0),
            },
            offset + e.valid_up_to(),
        )),
    }
}

fn varint_or_unknown(
    f: &WireField,
    unknown_out: &mut Vec<UnknownField>,
    at: Where<'_>,
    anomalies: &mut usize,
) -> Option<u64> {
    match f.value {
        WireValue::Varint(v) => Some(v),
        _ => {
            *anomalies += 1;
            unknown_out.push(unknown(at, f));
            None
        }
    }
}

/// Decodes a TF Serving `ModelSpec` on its own (e.g. `LogMetadata.model_spec`); `r`
/// is positioned on the spec's bytes. Unknown fields are skipped.
pub(crate) fn decode_model_spec(r: Reader) -> Result<ModelSpec, DecodeError> {
    let mut unknown = Vec::new();
    let mut anomalies = 0;
    model_spec(r, ModelSpec::default(), &mut unknown, &mut anomalies)
}

fn model_spec(
    mut r: Reader,
    mut spec: ModelSpec,
    unknown_out: &mut Vec<UnknownField>,
    anomalies: &mut usize,
) -> Result<ModelSpec, DecodeError> {
    let at = Where {
        path: "model_spec",
        scope: Scope::ModelSpec,
    };
    let version_at = Where {
        path: "model_spec.version",
        scope: Scope::ModelSpecVersion,
    };
    while let Some(f) = r.next_field_named(model_spec::FIELDS)? {
        match f.number {
            model_spec::NAME | model_spec::SIGNATURE_NAME | model_spec::VERSION_LABEL => {
                let name = match f.number {
                    model_spec::NAME => "name",
                    model_spec::SIGNATURE_NAME => "signature_name",
                    _ => "version_label",
                };
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let s = utf8(&b, f.value_offset).map_err(|e| e.within(name))?;
                    if s.bytes().any(|c| c < 0x20) {
                        *anomalies += 1;
                    }
                    match f.number {
                        model_spec::NAME => spec.name = s,
                        model_spec::SIGNATURE_NAME => spec.signature_name = s,
                        _ => {
                            // The oneof's other member is cleared, with what it held
                            // (as protobuf does).
                            spec.version = None;
                            unknown_out.retain(|u| u.scope != Scope::ModelSpecVersion);
                            spec.version_label = Some(s)
                        }
                    }
                }
            }
            model_spec::VERSION => {
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let mut sub = r.nested(b, f.value_offset)?;
                    let mut v = spec.version.unwrap_or(0);
                    while let Some(g) = sub.next_field().map_err(|e| e.within("version"))? {
                        if g.number == int64_value::VALUE {
                            if let Some(x) =
                                varint_or_unknown(&g, unknown_out, version_at, anomalies)
                            {
                                v = x as i64;
                            }
                        } else {
                            *anomalies += 1;
                            unknown_out.push(unknown(version_at, &g));
                        }
                    }
                    spec.version_label = None;
                    spec.version = Some(v);
                }
            }
            _ => {
                *anomalies += 1;
                unknown_out.push(unknown(at, &f));
            }
        }
    }
    Ok(spec)
}

fn map_entry(
    mut r: Reader,
    wire: WireFormat,
    map_name: &str,
    index: usize,
    entry_offset: usize,
    anomalies: &mut usize,
) -> Result<Tensor, DecodeError> {
    let mut key: Option<String> = None;
    let mut value: Option<(Bytes, usize)> = None;
    let mut unknown_fields = Vec::new();
    let entry_at = Where {
        path: map_name,
        scope: Scope::Entry,
    };
    let seg = |key: &Option<String>| match key {
        Some(k) => format!("{map_name}[{k:?}]"),
        None => format!("{map_name}[#{index}]"),
    };
    while let Some(f) = r
        .next_field_named(map_entry::FIELDS)
        .map_err(|e| e.within(seg(&key)))?
    {
        match f.number {
            map_entry::KEY => {
                if let Some(b) = len_or_unknown(&f, &mut unknown_fields, entry_at, anomalies) {
                    key = Some(
                        utf8(&b, f.value_offset)
                            .map_err(|e| e.within(format!("{}.key", seg(&None))))?,
                    );
                }
            }
            map_entry::VALUE => {
                if let Some(b) = len_or_unknown(&f, &mut unknown_fields, entry_at, anomalies) {
                    // A repeated message field merges; a map value given twice keeps the last
                    // (what protobuf's map parsing does).
                    value = Some((b, f.value_offset));
                }
            }
            _ => {
                *anomalies += 1;
                unknown_fields.push(unknown(entry_at, &f));
            }
        }
    }
    let name = key.clone().unwrap_or_default();
    let path = seg(&Some(name.clone()));
    let mut t = match value {
        Some((b, off)) => {
            let sub = r.nested(b, off)?;
            tensor(sub, wire, path.clone(), entry_offset, anomalies)
                .map_err(|e| e.within(path.clone()))?
        }
        None => Tensor::new(String::new(), DTypeCode(0), Shape::default()),
    };
    t.name = name;
    t.offset = entry_offset;
    t.unknown.extend(unknown_fields);
    Ok(t)
}

/// Accumulates one repeated value field across packed chunks and unpacked elements.
enum Acc {
    Fixed {
        chunks: Vec<Bytes>,
        size: usize,
    },
    Varint(Vec<u64>),
    /// One large packed run, kept as a checked view (decoded on access).
    Packed(PackedVarints),
    Bytes(Vec<Bytes>),
    Single(Bytes),
}

// `tensor` matches an `ArrayProto`'s dtype and shape by the `TensorProto` numbers.
const _: () = assert!(
    array_proto::DTYPE == tensor_proto::DTYPE
        && array_proto::ARRAY_SHAPE == tensor_proto::TENSOR_SHAPE
);

fn tensor(
    mut r: Reader,
    wire: WireFormat,
    path: String,
    _entry_offset: usize,
    anomalies: &mut usize,
) -> Result<Tensor, DecodeError> {
    let mut t = Tensor::new(String::new(), DTypeCode(0), Shape::default());
    let at = Where {
        path: &path,
        scope: Scope::Tensor,
    };
    let mut accs: Vec<(ValueField, Acc)> = Vec::new();
    let names: &[(u32, &'static str)] = match wire {
        WireFormat::Eas => array_proto::FIELDS,
        WireFormat::TfServing => tensor_proto::FIELDS,
    };
    while let Some(f) = r.next_field_named(names)? {
        let field = match wire {
            WireFormat::Eas => ValueField::from_eas_number(f.number),
            WireFormat::TfServing => ValueField::from_tf_number(f.number),
        };
        match (f.number, field) {
            // dtype and the shape have the same numbers in both messages (asserted below).
            (tensor_proto::DTYPE, _) => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    t.dtype = DTypeCode(v as i32);
                }
            }
            (tensor_proto::TENSOR_SHAPE, _) => {
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    let sub = r.nested(b, f.value_offset)?;
                    let name = if wire == WireFormat::Eas {
                        "array_shape"
                    } else {
                        "tensor_shape"
                    };
                    shape(sub, wire, &mut t, &format!("{path}.{name}"), anomalies)
                        .map_err(|e| e.within(name))?;
                }
            }
            (tensor_proto::VERSION_NUMBER, _) if wire == WireFormat::TfServing => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    t.version_number = v as i32;
                }
            }
            (tensor_proto::TENSOR_CONTENT, _) if wire == WireFormat::TfServing => {
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    t.content = if b.is_empty() { None } else { Some(b) };
                }
            }
            (_, Some(vf)) => {
                let pos = match accs.iter().position(|(k, _)| *k == vf) {
                    Some(p) => p,
                    None => {
                        accs.push((vf, new_acc(vf)));
                        accs.len() - 1
                    }
                };
                let ok = push_value(&mut accs[pos].1, vf, &f).map_err(|e| e.within(vf.name()))?;
                if !ok {
                    *anomalies += 1;
                    t.unknown.push(unknown(at, &f));
                }
            }
            _ => {
                *anomalies += 1;
                t.unknown.push(unknown(at, &f));
            }
        }
    }
    accs.sort_by_key(|(k, _)| match wire {
        WireFormat::Eas => k.eas_number().unwrap_or(0),
        WireFormat::TfServing => k.tf_number(),
    });
    for (vf, acc) in accs {
        let v = finish(vf, acc);
        // A packed field of length 0 holds no elements: the same as absent, as in protobuf.
        if !v.is_empty() {
            t.fields.push((vf, v));
        }
    }
    // Consistency tells (`proto/eas/tf_predict.proto`): values the dtype does not read, or a
    // dtype number the format does not have.
    let own = t.value_field(wire);
    for (vf, v) in &t.fields {
        if Some(*vf) != own && !v.is_empty() {
            *anomalies += 1;
        }
    }
    let known = match wire {
        WireFormat::Eas => t.dtype.eas_known(),
        WireFormat::TfServing => t.dtype.dtype().is_some() || t.dtype.ref_of().is_some(),
    };
    if !known {
        *anomalies += 1;
    }
    if wire == WireFormat::TfServing {
        if let (Some(c), Some(d)) = (&t.content, t.dtype.dtype()) {
            if let Some(sz) = d.info().size {
                if c.len() % sz != 0 {
                    *anomalies += 1;
                }
            }
        }
    }
    Ok(t)
}

fn new_acc(vf: ValueField) -> Acc {
    match vf.storage() {
        Storage::Fixed(size) => Acc::Fixed {
            chunks: Vec::new(),
            size,
        },
        Storage::Bytes => Acc::Bytes(Vec::new()),
        Storage::Single => Acc::Single(Bytes::new()),
        Storage::Varint => Acc::Varint(Vec::new()),
    }
}

/// Adds one occurrence of a value field. `Ok(false)`: the wire type does not fit.
fn push_value(acc: &mut Acc, vf: ValueField, f: &WireField) -> Result<bool, DecodeError> {
    // A large packed run on its own stays a view; a field given again is decoded.
    if let Acc::Packed(p) = acc {
        *acc = Acc::Varint(p.iter().collect());
    }
    if let (Acc::Varint(out), WireValue::Len(b)) = (&*acc, &f.value) {
        if out.is_empty() && b.len() >= LAZY_VARINTS && vf != ValueField::Bool {
            *acc = Acc::Packed(PackedVarints::new(b.clone(), f.value_offset)?);
            return Ok(true);
        }
    }
    match (acc, &f.value) {
        (Acc::Fixed { chunks, size }, WireValue::Len(b)) => {
            if b.len() % *size != 0 {
                return Err(DecodeError::new(
                    DecodeErrorKind::PackedLength {
                        field: vf.name(),
                        len: b.len(),
                        elem: *size,
                    },
                    f.value_offset,
                ));
            }
            chunks.push(b.clone());
        }
        (Acc::Fixed { chunks, size: 4 }, WireValue::I32(v)) => {
            chunks.push(Bytes::copy_from_slice(&v.to_le_bytes()))
        }
        (Acc::Fixed { chunks, size: 8 }, WireValue::I64(v)) => {
            chunks.push(Bytes::copy_from_slice(&v.to_le_bytes()))
        }
        (Acc::Varint(out), WireValue::Len(b)) => packed_varints(b, f.value_offset, out)?,
        (Acc::Varint(out), WireValue::Varint(v)) => out.push(*v),
        (Acc::Bytes(out), WireValue::Len(b)) => out.push(b.clone()),
        (Acc::Single(out), WireValue::Len(b)) => *out = b.clone(),
        _ => return Ok(false),
    }
    Ok(true)
}

fn finish(vf: ValueField, acc: Acc) -> Values {
    match acc {
        Acc::Fixed { chunks, size } => {
            let bytes = if chunks.len() == 1 {
                chunks.into_iter().next().unwrap_or_default()
            } else {
                let mut v = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
                for c in &chunks {
                    v.extend_from_slice(c);
                }
                Bytes::from(v)
            };
            if size == 4 {
                Values::F32(Elems::Le(bytes))
            } else {
                Values::F64(Elems::Le(bytes))
            }
        }
        Acc::Varint(v) => match vf {
            ValueField::Int | ValueField::Half => {
                Values::I32(v.into_iter().map(|x| x as i32).collect())
            }
            ValueField::Int64 => Values::I64(v.into_iter().map(|x| x as i64).collect()),
            ValueField::UInt32 => Values::U32(v.into_iter().map(|x| x as u32).collect()),
            ValueField::UInt64 => Values::U64(v.into()),
            _ => Values::Bool(v.into_iter().map(|x| x != 0).collect()),
        },
        Acc::Packed(p) => match vf {
            ValueField::Int | ValueField::Half => Values::I32(Ints::Packed(p)),
            ValueField::Int64 => Values::I64(Ints::Packed(p)),
            ValueField::UInt32 => Values::U32(Ints::Packed(p)),
            ValueField::UInt64 => Values::U64(Ints::Packed(p)),
            _ => Values::Bool(p.iter().map(|x| x != 0).collect()),
        },
        Acc::Bytes(v) => Values::Bytes(v),
        Acc::Single(b) => Values::Raw(b),
    }
}

fn shape(
    mut r: Reader,
    wire: WireFormat,
    t: &mut Tensor,
    path: &str,
    anomalies: &mut usize,
) -> Result<(), DecodeError> {
    t.shape.present = true;
    let at = Where {
        path,
        scope: Scope::Shape,
    };
    let names: &[(u32, &'static str)] = match wire {
        WireFormat::Eas => array_shape::FIELDS,
        WireFormat::TfServing => tensor_shape::FIELDS,
    };
    while let Some(f) = r.next_field_named(names)? {
        match (wire, f.number) {
            (WireFormat::Eas, array_shape::DIM) => {
                let mut v = Vec::new();
                match &f.value {
                    WireValue::Len(b) => {
                        // The path names the dim that failed, counting the ones before it.
                        if let Err(e) = packed_varints(b, f.value_offset, &mut v) {
                            // Varints before the bad one: each ends in a byte below 0x80.
                            let before = b
                                .get(..e.offset().saturating_sub(f.value_offset))
                                .map_or(0, |p| p.iter().filter(|&&c| c < 0x80).count());
                            let i = t.shape.dims.len() + before;
                            return Err(e.within(format!("dim[{i}]")));
                        }
                    }
                    WireValue::Varint(x) => v.push(*x),
                    _ => {
                        *anomalies += 1;
                        t.unknown.push(unknown(at, &f));
                    }
                }
                t.shape.dims.extend(v.into_iter().map(|x| Dim {
                    size: x as i64,
                    name: String::new(),
                }));
            }
            (WireFormat::TfServing, tensor_shape::DIM) => {
                let i = t.shape.dims.len();
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    let mut sub = r.nested(b, f.value_offset)?;
                    let mut d = Dim {
                        size: 0,
                        name: String::new(),
                    };
                    let dpath = format!("{path}.dim[{i}]");
                    let dim_at = Where {
                        path: &dpath,
                        scope: Scope::Dim(i),
                    };
                    while let Some(g) = sub
                        .next_field()
                        .map_err(|e| e.within(format!("dim[{i}]")))?
                    {
                        match g.number {
                            dim::SIZE => {
                                if let Some(v) =
                                    varint_or_unknown(&g, &mut t.unknown, dim_at, anomalies)
                                {
                                    d.size = v as i64;
                                }
                            }
                            dim::NAME => {
                                if let Some(b) =
                                    len_or_unknown(&g, &mut t.unknown, dim_at, anomalies)
                                {
                                    d.name = utf8(&b, g.value_offset)
                                        .map_err(|e| e.within(format!("dim[{i}].name")))?;
                                }
                            }
                            _ => {
                                *anomalies += 1;
                                t.unknown.push(unknown(dim_at, &g));
                            }
                        }
                    }
                    t.shape.dims.push(d);
                }
            }
            (WireFormat::TfServing, tensor_shape::UNKNOWN_RANK) => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    t.shape.unknown_rank = v != 0;
                }
            }
            _ => {
                *anomalies += 1;
                t.unknown.push(unknown(at, &f));
            }
        }
    }
    Ok(())
}
