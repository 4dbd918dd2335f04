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

use crate::error::{DecodeError, DecodeErrorKind, Error, ErrorDetail};
use crate::fields::{model_spec, predict_log};
use crate::model::{Kind, Message, Method, Scope, Tensor, UnknownField, WireFormat};

mod examples;
mod message;
mod tensor;

use crate::wire::reader::{Reader, WireField, WireValue};
pub(crate) use examples::decode_example;
pub(crate) use message::decode_model_spec;
use message::{Content, decode_top, model_spec};
use tensor::tensor;

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

/// The message [`decode_with`] decodes, or its error, without the [`Detection`]: the
/// same result, found faster when one reading has no anomaly. Each reading then stops at
/// its first anomaly (it cannot beat the clean one, only tie it), the clean reading is
/// the only one finished, and the tf.Example readings are not tried where they cannot win
/// (they need strictly fewer anomalies than the best predict reading, or a tie with a
/// hollow one). Other bytes (no clean reading, two, or a hollow one) go through
/// [`decode_with`].
///
/// ```
/// use tfreq::{decode_message, decode_with, DecodeOptions};
/// let b = bytes::Bytes::from(std::fs::read("tests/data/eas/spec_vector.bin")?);
/// let fast = decode_message(b.clone(), DecodeOptions::default())?;
/// assert_eq!(fast, decode_with(b, DecodeOptions::default())?.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_message(bytes: Bytes, opts: DecodeOptions) -> Result<Message, Error> {
    match clean_reading(&bytes, opts) {
        Some(m) => Ok(m),
        None => decode_with(bytes, opts).map(|(m, _)| m),
    }
}

/// The one predict reading of `bytes` with no anomaly, when exactly one has none and no
/// tf.Example reading can beat it; `None` when [`decode_with`] must decide. Its result is
/// then [`decode_with`]'s: the clean reading is the only best one (no tie, nothing to
/// agree), it has a content field and no foreign one (a foreign field is an anomaly), and
/// a tf.Example reading would need fewer than no anomalies, or a hollow predict reading.
fn clean_reading(bytes: &Bytes, opts: DecodeOptions) -> Option<Message> {
    if bytes.is_empty() || opts.max_size.is_some_and(|l| bytes.len() as u64 > l) {
        return None;
    }
    let mut clean = None;
    for &w in wires_of(opts) {
        for &k in kinds_of(opts) {
            if let Ok((m, 0, _)) = decode_top(bytes.clone(), w, k, true, Some(0)) {
                if clean.is_some() {
                    return None;
                }
                clean = Some(m);
            }
        }
    }
    let m = clean?;
    if examples_tried(opts) && hollow(&m) {
        return None;
    }
    Some(m)
}

/// The wire formats detection tries.
fn wires_of(opts: DecodeOptions) -> &'static [WireFormat] {
    match opts.wire {
        Some(WireFormat::Eas) => &[WireFormat::Eas],
        Some(WireFormat::TfServing) => &[WireFormat::TfServing],
        None => &[WireFormat::Eas, WireFormat::TfServing],
    }
}

/// The kinds detection tries.
fn kinds_of(opts: DecodeOptions) -> &'static [Kind] {
    match opts.kind {
        Some(Kind::Request) => &[Kind::Request],
        Some(Kind::Response) => &[Kind::Response],
        None => &[Kind::Request, Kind::Response],
    }
}

/// Whether the tf.Example readings are tried: TF Serving requests only.
fn examples_tried(opts: DecodeOptions) -> bool {
    opts.wire != Some(WireFormat::Eas) && opts.kind != Some(Kind::Response)
}

/// The predict reading of an `input` holding an `example_list` (an empty one, or one
/// whose bytes read as a map key): inputs with no dtype, no shape and no values, named
/// "" or by bytes with control characters. No client writes that (TF Serving refuses
/// DT_INVALID); an `Input` is what it is, so on a tie the examples reading wins.
fn hollow(m: &Message) -> bool {
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

/// The anomaly count of one reading ([`decode_top`] and the entries and tensors under
/// it), and the count past which the reading may stop unfinished: a reading with more
/// anomalies than another loses to it whatever its remaining bytes hold
/// ([`decode_message`] stops each reading at its first anomaly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    n: usize,
    limit: usize,
}

impl Tally {
    /// No anomaly yet; `None`: no limit.
    fn new(limit: Option<usize>) -> Self {
        Tally {
            n: 0,
            limit: limit.unwrap_or(usize::MAX),
        }
    }

    /// Past the limit: the reading may stop.
    fn over(&self) -> bool {
        self.n > self.limit
    }
}

impl std::ops::AddAssign<usize> for Tally {
    fn add_assign(&mut self, k: usize) {
        self.n += k;
    }
}

/// Decodes from a [`Bytes`] buffer without copying tensor data, with options.
pub fn decode_with(bytes: Bytes, opts: DecodeOptions) -> Result<(Message, Detection), Error> {
    if let Some(limit) = opts.max_size
        && bytes.len() as u64 > limit
    {
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
    if bytes.is_empty() {
        return Err(Error::from(ErrorDetail::Empty));
    }
    let (wires, kinds) = (wires_of(opts), kinds_of(opts));
    let mut candidates = Vec::new();
    // Only the best message so far is kept (a worse one is dropped at once), so
    // detection holds at most two decoded candidates at a time.
    let mut best: Vec<(usize, Message)> = Vec::new();
    // Whether some reading holds a field of the schema's own content, of its wire type,
    // or has no foreign top-level field (a message of `client_id` alone).
    let (mut any_content, mut any_clean) = (false, false);
    for &w in wires {
        for &k in kinds {
            match decode_top(bytes.clone(), w, k, true, None) {
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
    if examples_tried(opts) {
        let predict_best = best.first().map(|(a, _)| *a);
        let hollow = match best.as_slice() {
            [(_, m)] => hollow(m),
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
        let crc = crate::crc32c::checksum(bytes.get(..8)?);
        let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
        let stored = u32::from_le_bytes(bytes.get(8..12)?.try_into().ok()?);
        return Some(if masked == stored {
            format!("a TFRecord file ({records}); read it as TFRecord, not as one message")
        } else {
            format!(
                "a TFRecord file with a bad header ({records}, but the length checksum at byte 8 is wrong: damaged, or not written by a TFRecord writer)"
            )
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
/// for bytes ([`decode`]) and for protobuf text ([`crate::formats::from_text`]).
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
    let mut an = Tally::new(None);
    tensor(r, wire, String::new(), 0, &mut an)
}

fn decode_inner(
    bytes: Bytes,
    wire: WireFormat,
    kind: Kind,
) -> Result<(Message, usize), DecodeError> {
    decode_top(bytes, wire, kind, true, None).map(|(m, a, _)| (m, a))
}

/// Whether bytes held in a TF Serving request's bytes field are themselves a request:
/// a clean `PredictRequest`, or a `PredictLog` (`request` = field 1) around one. A
/// `client_id` holding one is what concatenated `PredictionLog`s look like when read as
/// one request.
fn holds_request(b: &Bytes) -> bool {
    let clean = |b: Bytes| {
        !b.is_empty()
            && matches!(decode_top(b, WireFormat::TfServing, Kind::Request, false, None), Ok((m, 0, _)) if !m.tensors.is_empty())
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
