//! Scrubbing: a warm-up request made from a production request, with the same
//! executor key and shapes and none of its values.
//!
//! [`scrub`] keeps the signature, `model_spec`, every feed's name, dtype and shape (dim
//! names too) and every fetch, in order, and replaces every value: numbers with zeros,
//! a constant or seeded random numbers, strings with strings of the same length (`x`
//! repeated, or seeded random letters) that never equal the source string. A tensor
//! keeps its stored value count (so one TensorFlow fills or repeats stays one). What
//! could carry private data and is not part of the key is dropped: unknown fields and
//! TF Serving's `client_id` / `request_options` / `predict_streamed_options`.
//!
//! ```
//! use tfreq::{analysis::key::ShapeKey, scrub::{scrub, FillMode}, DType, TFRequest};
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("q", &[2], DType::String, vec!["secret", "data"])?;
//! req.add_fetch("y");
//! let prod = tfreq::decode(&req.to_bytes()?)?;
//! let warm = scrub(&prod, FillMode::Zeros)?;
//! assert_eq!(ShapeKey::of(&warm), ShapeKey::of(&prod));
//! let bytes = tfreq::encode(&warm, prod.wire, Default::default())?;
//! assert!(!bytes.windows(6).any(|w| w == b"secret"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use bytes::Bytes;
use half::{bf16, f16};
use num_complex::Complex;

use crate::builder::{make_tensor, FeedValues};
use crate::dtype::{DType, ValueField};
use crate::error::BuildError;
use crate::model::{Fill, Message, Scalar, Tensor, WireFormat};
use crate::wire::reader::WireValue;
use crate::wire::writer::{
    put_bytes_field, put_len_header, put_tag, put_varint, put_varint_field, varint_len,
};

/// What replaces the values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FillMode {
    /// 0, false, and `x` repeated for strings.
    Zeros,
    /// This number for every numeric element (it must fit integer dtypes); `x` strings.
    Constant(f64),
    /// Seeded pseudo-random values: floats in [0, 1), integers in 0..=100 (within the
    /// dtype's range), random bools, strings of random lowercase letters.
    Random {
        /// The seed: the same seed gives the same output.
        seed: u64,
    },
}

/// Why a request could not be scrubbed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScrubError {
    /// A feed whose shape has no element count (negative dim, unknown rank).
    #[error(
        "feed {name:?}: shape {shape} has no element count; cannot size its replacement values"
    )]
    BadShape {
        /// Feed name.
        name: String,
        /// The shape.
        shape: String,
    },
    /// A dtype with no values to replace (resource, variant, invalid, unknown number).
    #[error("feed {name:?}: {dtype} values cannot be scrubbed")]
    Unscrubbable {
        /// Feed name.
        name: String,
        /// The dtype.
        dtype: String,
    },
    /// `Constant` is not integral for an integer dtype.
    #[error("feed {name:?}: constant {value} is not an integer, which {dtype} needs")]
    NotIntegral {
        /// Feed name.
        name: String,
        /// The dtype.
        dtype: String,
        /// The constant.
        value: f64,
    },
    /// The replacement values were refused (e.g. a constant out of the dtype's range).
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A log record whose bytes do not parse.
    #[error("{what}: {source}")]
    Malformed {
        /// The message being read (`classify_log.request.input`).
        what: String,
        /// The failure.
        #[source]
        source: crate::error::DecodeError,
    },
}

/// SplitMix64: small, seedable, good enough for filler values.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The scrubbed copy of `msg` (see the module docs), in the source's wire format and
/// that format's own value fields (as the builder lays them out); encode it with
/// [`crate::encode()`].
pub fn scrub(msg: &Message, fill: FillMode) -> Result<Message, ScrubError> {
    let mut rng = match fill {
        FillMode::Random { seed } => Some(Rng(seed)),
        _ => None,
    };
    let mut out = Message::new(msg.wire, msg.kind);
    out.signature_name = msg.signature_name.clone();
    out.model_spec = msg.model_spec.clone();
    out.fetches = msg.fetches.clone();
    for t in &msg.tensors {
        out.tensors.push(scrub_tensor(t, msg, fill, rng.as_mut())?);
    }
    Ok(out)
}

fn scrub_tensor(
    t: &Tensor,
    msg: &Message,
    fill: FillMode,
    mut rng: Option<&mut Rng>,
) -> Result<Tensor, ScrubError> {
    let name = t.name.clone();
    let unscrubbable = || ScrubError::Unscrubbable {
        name: t.name.clone(),
        dtype: t.dtype.to_string(),
    };
    let d = t.dtype.dtype().ok_or_else(unscrubbable)?;
    let e = t.elements(msg.wire);
    let n = match e.fill {
        Fill::Exact => e.expected.unwrap_or(0) as usize,
        Fill::BadShape => {
            return Err(ScrubError::BadShape {
                name,
                shape: t.shape.to_string(),
            })
        }
        // Keep what TensorFlow does with it: fill, repeat or cut the same way.
        _ => e.stored,
    };
    let mut unit = || rng.as_deref_mut().map_or(0.0, Rng::unit);
    let num = |u: f64| match fill {
        FillMode::Zeros => 0.0,
        FillMode::Constant(v) => v,
        FillMode::Random { .. } => u,
    };
    let values: FeedValues = match d {
        DType::Float => (0..n).map(|_| num(unit()) as f32).collect(),
        DType::Double => (0..n).map(|_| num(unit())).collect(),
        DType::Half => (0..n).map(|_| f16::from_f64(num(unit()))).collect(),
        DType::BFloat16 => (0..n).map(|_| bf16::from_f64(num(unit()))).collect(),
        DType::Complex64 => (0..n)
            .map(|_| Complex::new(num(unit()) as f32, num(unit()) as f32))
            .collect(),
        DType::Complex128 => (0..n)
            .map(|_| Complex::new(num(unit()), num(unit())))
            .collect(),
        DType::Bool => (0..n).map(|_| num(unit()) >= 0.5).collect(),
        DType::String => {
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                let src = match e.stored_get(i) {
                    Some(Scalar::Bytes(b)) => b,
                    _ => Bytes::new(),
                };
                v.push(replacement_string(&src, rng.as_deref_mut()));
            }
            FeedValues::Str(v)
        }
        DType::Invalid | DType::Resource | DType::Variant => return Err(unscrubbable()),
        d if d.info().tf_field == ValueField::Float8 => FeedValues::bits(
            (0..n)
                // Small positive bit patterns: never NaN or infinity in any float8/float4 type.
                .map(|_| rng.as_deref_mut().map_or(0u8, |r| (r.next() & 0x1f) as u8))
                .collect::<Vec<u8>>(),
        ),
        d => {
            let (lo, hi) = d.info().int_range.unwrap_or(match d.info().tf_field {
                ValueField::UInt32 => (0, u32::MAX as i64),
                _ => (0, i64::MAX),
            });
            match fill {
                FillMode::Constant(v) => {
                    if v.fract() != 0.0 || !v.is_finite() {
                        return Err(ScrubError::NotIntegral {
                            name,
                            dtype: t.dtype.to_string(),
                            value: v,
                        });
                    }
                    if d == DType::UInt64 && v >= 0.0 {
                        FeedValues::U64(vec![v as u64; n])
                    } else {
                        FeedValues::I64(vec![v as i64; n])
                    }
                }
                FillMode::Zeros => FeedValues::I64(vec![lo.max(0).min(hi); n]),
                FillMode::Random { .. } => {
                    let lo = lo.max(0);
                    let hi = hi.min(100).max(lo);
                    let span = (hi - lo + 1) as u64;
                    (0..n)
                        .map(|_| lo + rng.as_deref_mut().map_or(0, |r| r.next() % span) as i64)
                        .collect()
                }
            }
        }
    };
    let count = values.len() as i64;
    let mut s = make_tensor(name, &[count], d, values)?;
    if msg.wire == crate::model::WireFormat::Eas {
        crate::builder::to_eas_fields(&mut s);
    }
    s.shape = t.shape.clone();
    s.version_number = t.version_number;
    Ok(s)
}

/// What [`scrub`] leaves out of `msg`, in words (each item names the field): unknown
/// fields and TF Serving's `client_id`, `request_options` and
/// `predict_streamed_options`, which could carry private data.
///
/// ```
/// let bytes = std::fs::read("tests/data/tfs/newer_fields.bin")?;
/// let m = tfreq::decode(&bytes)?;
/// let gone = tfreq::scrub::left_out(&m);
/// assert!(gone.iter().any(|g| g == "client_id"), "{gone:?}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn left_out(msg: &Message) -> Vec<String> {
    let mut out: Vec<String> = msg.extra.iter().map(|(n, _)| n.to_string()).collect();
    for u in msg.all_unknown() {
        out.push(unknown_name(&u.path, u.number));
    }
    out
}

fn unknown_name(path: &str, number: u32) -> String {
    if path.is_empty() {
        format!("unknown field {number}")
    } else {
        format!("unknown field {number} in {path}")
    }
}

/// One TFRecord record (a `PredictionLog` of any kind) scrubbed, and what was left
/// out of it, in words.
///
/// Requests keep everything that decides which signature runs and how (`log_metadata`,
/// `model_spec`, tasks, feed and fetch names, dtypes, shapes, `tensor_name_is_alias`,
/// run options); values are replaced as [`scrub`] replaces them: the predict requests of
/// `predict_log` / `predict_streamed_log`, the feeds of a `SessionRunRequest`, and
/// every feature of the `tf.Example` inputs of classify, regress and multi-inference
/// requests (floats and integers by the fill, bytes by strings of the same length).
/// Responses (production outputs) and unknown fields are left out and named.
///
/// ```
/// use tfreq::scrub::{scrub_log_record, FillMode};
/// let bytes = tfreq::io::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
/// let rec = tfreq::formats::tfrecord::Records::new(bytes).nth(1).unwrap()?; // classify_log
/// let (out, gone) = scrub_log_record(&rec.data, FillMode::Constant(7.0))?;
/// assert_eq!(out.len(), rec.data.len()); // same structure, same sizes
/// assert!(gone.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scrub_log_record(
    data: &Bytes,
    fill: FillMode,
) -> Result<(Vec<u8>, Vec<String>), ScrubError> {
    let mut w = Walk {
        fill,
        rng: match fill {
            FillMode::Random { seed } => Some(Rng(seed)),
            _ => None,
        },
        gone: Vec::new(),
    };
    let mut out = Vec::with_capacity(data.len());
    for (v, n, raw) in w.fields(data, "PredictionLog")? {
        match (n, v) {
            (1, _) => out.extend_from_slice(&raw),
            (2..=7, WireValue::Len(body)) => {
                let kind = crate::formats::prediction_log::LogKind::from_field(n)
                    .map_or("log", |k| k.name());
                let b = w.log(&body, n, kind)?;
                put_bytes_field(&mut out, n, &b);
            }
            (n, _) => w.gone.push(format!("PredictionLog field {n} (unknown)")),
        }
    }
    Ok((out, w.gone))
}

/// The state of a wire-level scrub of one log record.
struct Walk {
    fill: FillMode,
    rng: Option<Rng>,
    gone: Vec<String>,
}

type RawField = (WireValue, u32, Bytes);

impl Walk {
    fn fields(&self, b: &Bytes, what: &str) -> Result<Vec<RawField>, ScrubError> {
        crate::formats::prediction_log::raw_fields(b).map_err(|source| ScrubError::Malformed {
            what: what.to_string(),
            source,
        })
    }

    /// Drops a field, naming it.
    fn drop(&mut self, path: &str, n: u32) {
        self.gone.push(format!("{path} field {n} (unknown)"));
    }

    /// A `*Log` body: `request` (1) scrubbed, `response` (2) left out.
    fn log(&mut self, body: &Bytes, field: u32, kind: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(body.len());
        for (v, n, raw) in self.fields(body, kind)? {
            let path = format!("{kind}.request");
            match (n, v) {
                (1, WireValue::Len(req)) => {
                    let b = match field {
                        2..=4 => self.examples_request(&req, &path)?,
                        5 => self.session_run(&req, &path)?,
                        _ => self.predict(&req, &path)?,
                    };
                    put_bytes_field(&mut out, 1, &b);
                }
                (2, _) => self.gone.push(format!("{kind}.response")),
                (1, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(kind, n),
            }
        }
        Ok(out)
    }

    /// A TF Serving `PredictRequest`, decoded, scrubbed and re-encoded.
    fn predict(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let m = crate::decode::decode_as(req, WireFormat::TfServing, crate::model::Kind::Request)
            .map_err(|source| ScrubError::Malformed {
            what: path.to_string(),
            source,
        })?;
        self.gone
            .extend(left_out(&m).into_iter().map(|g| format!("{path}: {g}")));
        let s = scrub(&m, self.next_fill())?;
        Ok(crate::encode::encode(
            &s,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::Python,
        )?)
    }

    /// The fill for the next request: a random fill draws a fresh seed from the walk.
    fn next_fill(&mut self) -> FillMode {
        match (self.fill, self.rng.as_mut()) {
            (FillMode::Random { .. }, Some(r)) => FillMode::Random { seed: r.next() },
            (f, _) => f,
        }
    }

    /// `ClassificationRequest`, `RegressionRequest` (model_spec 1, input 2) and
    /// `MultiInferenceRequest` (tasks 1, input 2): field 1 kept, the input scrubbed.
    fn examples_request(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(req.len());
        for (v, n, raw) in self.fields(req, path)? {
            match (n, v) {
                (2, WireValue::Len(input)) => {
                    let b = self.input(&input, &format!("{path}.input"))?;
                    put_bytes_field(&mut out, 2, &b);
                }
                (1, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(path, n),
            }
        }
        Ok(out)
    }

    /// `Input`: `example_list` (1: examples 1) or `example_list_with_context` (2:
    /// examples 1, context 2).
    fn input(&mut self, input: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(input.len());
        for (v, n, _) in self.fields(input, path)? {
            let WireValue::Len(list) = v else {
                self.drop(path, n);
                continue;
            };
            if n != 1 && n != 2 {
                self.drop(path, n);
                continue;
            }
            let lpath = format!(
                "{path}.{}",
                if n == 1 {
                    "example_list"
                } else {
                    "example_list_with_context"
                }
            );
            let mut l = Vec::with_capacity(list.len());
            for (v, m, _) in self.fields(&list, &lpath)? {
                match (m, v) {
                    (1, WireValue::Len(ex)) => {
                        let b = self.example(&ex, &format!("{lpath}.examples"))?;
                        put_bytes_field(&mut l, 1, &b);
                    }
                    (2, WireValue::Len(ex)) if n == 2 => {
                        let b = self.example(&ex, &format!("{lpath}.context"))?;
                        put_bytes_field(&mut l, 2, &b);
                    }
                    (m, _) => self.drop(&lpath, m),
                }
            }
            put_bytes_field(&mut out, n, &l);
        }
        Ok(out)
    }

    /// `tf.Example`: features (1) → feature map (1) → entries of key (1) and `Feature` (2).
    fn example(&mut self, ex: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(ex.len());
        for (v, n, _) in self.fields(ex, path)? {
            let (1, WireValue::Len(features)) = (n, v) else {
                self.drop(path, n);
                continue;
            };
            let fpath = format!("{path}.features");
            let mut fo = Vec::with_capacity(features.len());
            for (v, m, _) in self.fields(&features, &fpath)? {
                let (1, WireValue::Len(entry)) = (m, v) else {
                    self.drop(&fpath, m);
                    continue;
                };
                let mut eo = Vec::with_capacity(entry.len());
                let mut key = String::new();
                for (v, k, raw) in self.fields(&entry, &fpath)? {
                    if let (1, WireValue::Len(b)) = (k, &v) {
                        key = String::from_utf8_lossy(b).into_owned();
                        eo.extend_from_slice(&raw);
                    }
                }
                let epath = format!("{fpath}.feature[{key:?}]");
                for (v, k, _) in self.fields(&entry, &epath)? {
                    match (k, v) {
                        (1, _) => {}
                        (2, WireValue::Len(feat)) => {
                            let b = self.feature(&feat, &epath)?;
                            put_bytes_field(&mut eo, 2, &b);
                        }
                        (k, _) => self.drop(&epath, k),
                    }
                }
                put_bytes_field(&mut fo, 1, &eo);
            }
            put_bytes_field(&mut out, 1, &fo);
        }
        Ok(out)
    }

    /// `Feature`: bytes_list (1), float_list (2) or int64_list (3), each a `value`
    /// field 1 (packed or not); the values are replaced, their count kept.
    fn feature(&mut self, feat: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(feat.len());
        for (v, n, _) in self.fields(feat, path)? {
            let WireValue::Len(list) = v else {
                self.drop(path, n);
                continue;
            };
            let mut lo = Vec::with_capacity(list.len());
            for (v, m, _) in self.fields(&list, path)? {
                match (n, m, v) {
                    (1, 1, WireValue::Len(b)) => {
                        let s = replacement_string(&b, self.rng.as_mut());
                        put_bytes_field(&mut lo, 1, &s);
                    }
                    (2, 1, WireValue::Len(b)) => {
                        let count = b.len() / 4;
                        put_len_header(&mut lo, 1, count * 4);
                        for _ in 0..count {
                            lo.extend_from_slice(&(self.number() as f32).to_le_bytes());
                        }
                    }
                    (2, 1, WireValue::I32(_)) => {
                        put_tag(&mut lo, 1, 5);
                        lo.extend_from_slice(&(self.number() as f32).to_le_bytes());
                    }
                    (3, 1, WireValue::Len(b)) => {
                        let count =
                            crate::wire::reader::count_varints(&b, 0).map_err(|source| {
                                ScrubError::Malformed {
                                    what: format!("{path}.int64_list"),
                                    source,
                                }
                            })?;
                        let vals: Vec<u64> = (0..count)
                            .map(|_| self.integer(path))
                            .collect::<Result<_, _>>()?;
                        let len = vals.iter().map(|&x| varint_len(x)).sum();
                        put_len_header(&mut lo, 1, len);
                        vals.into_iter().for_each(|x| put_varint(&mut lo, x));
                    }
                    (3, 1, WireValue::Varint(_)) => {
                        let x = self.integer(path)?;
                        put_varint_field(&mut lo, 1, x);
                    }
                    (_, m, _) => self.drop(path, m),
                }
            }
            if (1..=3).contains(&n) {
                put_bytes_field(&mut out, n, &lo);
            } else {
                self.drop(path, n);
            }
        }
        Ok(out)
    }

    fn number(&mut self) -> f64 {
        match self.fill {
            FillMode::Zeros => 0.0,
            FillMode::Constant(v) => v,
            FillMode::Random { .. } => self.rng.as_mut().map_or(0.0, Rng::unit),
        }
    }

    fn integer(&mut self, path: &str) -> Result<u64, ScrubError> {
        match self.fill {
            FillMode::Zeros => Ok(0),
            FillMode::Constant(v) if v.fract() == 0.0 && v.is_finite() => Ok(v as i64 as u64),
            FillMode::Constant(v) => Err(ScrubError::NotIntegral {
                name: path.to_string(),
                dtype: "int64_list".into(),
                value: v,
            }),
            FillMode::Random { .. } => Ok(self.rng.as_mut().map_or(0, |r| r.next() % 101)),
        }
    }

    /// `SessionRunRequest`: every `feed` (2: `NamedTensorProto` name 1, tensor 2) has
    /// its tensor scrubbed; model_spec, fetch, target, options and
    /// tensor_name_is_alias are kept.
    fn session_run(&mut self, req: &Bytes, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut out = Vec::with_capacity(req.len());
        for (v, n, raw) in self.fields(req, path)? {
            match (n, v) {
                (2, WireValue::Len(feed)) => {
                    let mut fo = Vec::with_capacity(feed.len());
                    let mut name = String::new();
                    for (v, k, raw) in self.fields(&feed, &format!("{path}.feed"))? {
                        if let (1, WireValue::Len(b)) = (k, &v) {
                            name = String::from_utf8_lossy(b).into_owned();
                            fo.extend_from_slice(&raw);
                        }
                    }
                    let fpath = format!("{path}.feed[{name:?}]");
                    for (v, k, _) in self.fields(&feed, &fpath)? {
                        match (k, v) {
                            (1, _) => {}
                            (2, WireValue::Len(t)) => {
                                let b = self.tensor(&t, &name, &fpath)?;
                                put_bytes_field(&mut fo, 2, &b);
                            }
                            (k, _) => self.drop(&fpath, k),
                        }
                    }
                    put_bytes_field(&mut out, 2, &fo);
                }
                (1 | 3..=6, _) => out.extend_from_slice(&raw),
                (n, _) => self.drop(path, n),
            }
        }
        Ok(out)
    }

    fn tensor(&mut self, t: &Bytes, name: &str, path: &str) -> Result<Vec<u8>, ScrubError> {
        let mut tensor =
            crate::decode::decode_tensor(t.clone(), WireFormat::TfServing).map_err(|source| {
                ScrubError::Malformed {
                    what: path.to_string(),
                    source,
                }
            })?;
        tensor.name = name.to_string();
        for u in &tensor.unknown {
            self.gone.push(unknown_name(path, u.number));
        }
        let mut m = Message::new(WireFormat::TfServing, crate::model::Kind::Request);
        m.tensors.push(tensor);
        let s = scrub(&m, self.next_fill())?;
        let Some(st) = s.tensors.first() else {
            return Ok(Vec::new());
        };
        Ok(crate::encode::encode_tensor(
            st,
            WireFormat::TfServing,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::Python,
        )?)
    }
}

/// A string of the same length as `src` that is not `src`.
fn replacement_string(src: &[u8], rng: Option<&mut Rng>) -> Bytes {
    let mut v: Vec<u8> = match rng {
        Some(r) => (0..src.len())
            .map(|_| b'a' + (r.next() % 26) as u8)
            .collect(),
        None => vec![b'x'; src.len()],
    };
    if v == src {
        if let Some(c) = v.first_mut() {
            *c = if *c == b'y' { b'z' } else { b'y' };
        }
    }
    Bytes::from(v)
}
