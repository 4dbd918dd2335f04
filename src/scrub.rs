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
//! use tfreq::{analysis::ShapeKey, scrub, FillMode, DType, TFRequest};
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

use crate::builder::{FeedValues, make_tensor};
use crate::dtype::{DType, ValueField};
use crate::error::BuildError;
use crate::model::{Fill, Message, Scalar, Shape, Tensor};

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
    /// A scalar feed where [`scrub_batch`] resizes the 0th dimension.
    #[error("feed {name:?}: shape {shape} has no 0th dimension to resize to a batch size")]
    NoBatchDimension {
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

impl From<ScrubError> for crate::Error {
    /// A request that cannot be scrubbed: [`Category::Build`](crate::Category::Build).
    fn from(e: ScrubError) -> Self {
        crate::Error::other(crate::Category::Build, e)
    }
}

/// SplitMix64: small, seedable, good enough for filler values.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(crate) fn unit(&mut self) -> f64 {
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
    if msg.method.takes_examples() {
        // Every feature keeps its name, kind and length; its values are replaced as a
        // tensor's are (bytes by strings of the same length), as the log scrub does
        // (src/formats/scrub_log.rs).
        out.method = msg.method;
        out.tasks = msg.tasks.clone();
        out.input = match &msg.input {
            None => None,
            Some(i) => {
                let mut i = i.clone();
                for ex in i.context.iter_mut().chain(i.examples.iter_mut()) {
                    for f in &mut ex.features {
                        scrub_feature(f, fill, rng.as_mut())?;
                    }
                }
                Some(i)
            }
        };
        return Ok(out);
    }
    for t in &msg.tensors {
        out.tensors
            .push(scrub_tensor(t, msg, fill, rng.as_mut(), None)?);
    }
    Ok(out)
}

/// [`scrub`] with every feed's 0th dimension set to `rows`: the warm-up request for one
/// batch size (`tfreq warmup --allowed-batch-sizes`). Rows are repeated (or cut) along
/// the 0th dimension, so a string keeps the length of the string in its row; names,
/// dtypes and the other dimensions stay. A feed with a value TensorFlow fills or repeats
/// (one value or none) keeps it so. A scalar feed has no 0th dimension: refused.
///
/// ```
/// use tfreq::{scrub_batch, FillMode, DType, TFRequest};
/// let mut req = TFRequest::for_wire("", tfreq::WireFormat::TfServing);
/// req.add_feed("q", &[2, 1], DType::String, vec!["ab", "cdef"])?;
/// let m = tfreq::decode(&req.to_bytes()?)?;
/// let w = scrub_batch(&m, FillMode::Zeros, 3)?;
/// assert_eq!(w.tensors[0].shape.sizes(), [3, 1]);
/// let e = w.tensors[0].elements(w.wire);
/// let lens: Vec<_> = (0..3).map(|i| e.get(i).unwrap().to_string().len()).collect();
/// assert_eq!(lens, [4, 6, 4]); // "xx", "xxxx", "xx" (quoted)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scrub_batch(msg: &Message, fill: FillMode, rows: u64) -> Result<Message, ScrubError> {
    if msg.method.takes_examples() {
        // A tf.Example request's batch is its number of examples: the scrubbed examples,
        // repeated in turn (or cut) to `rows`.
        let mut out = scrub(msg, fill)?;
        if let Some(i) = out.input.as_mut().filter(|i| !i.examples.is_empty()) {
            let n = i.examples.len();
            let rows = usize::try_from(rows).unwrap_or(usize::MAX);
            i.examples = (0..rows).map(|k| i.examples[k % n].clone()).collect();
        }
        return Ok(out);
    }
    let mut rng = match fill {
        FillMode::Random { seed } => Some(Rng(seed)),
        _ => None,
    };
    let mut out = Message::new(msg.wire, msg.kind);
    out.signature_name = msg.signature_name.clone();
    out.model_spec = msg.model_spec.clone();
    out.fetches = msg.fetches.clone();
    for t in &msg.tensors {
        out.tensors
            .push(scrub_tensor(t, msg, fill, rng.as_mut(), Some(rows))?);
    }
    Ok(out)
}

/// One feature of a `tf.train.Example`, its values replaced in place.
fn scrub_feature(
    f: &mut crate::model::Feature,
    fill: FillMode,
    mut rng: Option<&mut Rng>,
) -> Result<(), ScrubError> {
    use crate::model::FeatureValues;
    let number = |rng: Option<&mut Rng>| match fill {
        FillMode::Zeros => 0.0,
        FillMode::Constant(v) => v,
        FillMode::Random { .. } => rng.map_or(0.0, Rng::unit),
    };
    match &mut f.values {
        FeatureValues::None => {}
        FeatureValues::Float(v) => {
            for x in v.iter_mut() {
                *x = number(rng.as_deref_mut()) as f32;
            }
        }
        FeatureValues::Int64(v) => {
            for x in v.iter_mut() {
                *x = match fill {
                    FillMode::Zeros => 0,
                    FillMode::Constant(c) if c.fract() == 0.0 && c.is_finite() => c as i64,
                    FillMode::Constant(c) => {
                        return Err(ScrubError::NotIntegral {
                            name: f.name.clone(),
                            dtype: "int64_list".into(),
                            value: c,
                        });
                    }
                    FillMode::Random { .. } => {
                        rng.as_deref_mut().map_or(0, |r| (r.next() % 101) as i64)
                    }
                };
            }
        }
        FeatureValues::Bytes(v) => {
            for b in v.iter_mut() {
                *b = replacement_string(b, rng.as_deref_mut());
            }
        }
    }
    Ok(())
}

fn scrub_tensor(
    t: &Tensor,
    msg: &Message,
    fill: FillMode,
    mut rng: Option<&mut Rng>,
    rows: Option<u64>,
) -> Result<Tensor, ScrubError> {
    let name = t.name.clone();
    let unscrubbable = || ScrubError::Unscrubbable {
        name: t.name.clone(),
        dtype: t.dtype.to_string(),
    };
    let d = t.dtype.dtype().ok_or_else(unscrubbable)?;
    let e = t.elements(msg.wire);
    let bad_shape = || ScrubError::BadShape {
        name: t.name.clone(),
        shape: t.shape.to_string(),
    };
    let mut shape = t.shape.clone();
    // Element i of the result is element src(i) of the source: rows repeated along the
    // 0th dimension when it is resized.
    let (old_rows, row_len) = match (rows, shape.dims.first()) {
        (None, _) => (1, u64::MAX),
        (Some(_), None) => {
            return Err(ScrubError::NoBatchDimension {
                name,
                shape: t.shape.to_string(),
            });
        }
        (Some(r), Some(d0)) => {
            let old = u64::try_from(d0.size).map_err(|_| bad_shape())?;
            shape.dims[0].size = i64::try_from(r).map_err(|_| bad_shape())?;
            let row = Shape {
                dims: shape.dims[1..].to_vec(),
                ..Shape::default()
            };
            (old, row.num_elements().ok_or_else(bad_shape)?)
        }
    };
    let src = |i: usize| -> usize {
        let i = i as u64;
        if row_len == u64::MAX || row_len == 0 || old_rows == 0 {
            return i as usize;
        }
        (((i / row_len) % old_rows) * row_len + i % row_len) as usize
    };
    let n = match e.fill {
        Fill::BadShape => return Err(bad_shape()),
        Fill::Exact if rows.is_some() => shape.num_elements().ok_or_else(bad_shape)? as usize,
        Fill::Exact => e.expected.unwrap_or(0) as usize,
        // Keep what TensorFlow does with it: fill or repeat the same way.
        _ if rows.is_none() || e.stored <= 1 => e.stored,
        // Resized: the values the new shape holds.
        _ => shape.num_elements().ok_or_else(bad_shape)? as usize,
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
                let src = match e.stored_get(src(i)) {
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
    s.shape = shape;
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
/// let gone = tfreq::left_out(&m);
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

pub(crate) fn unknown_name(path: &str, number: u32) -> String {
    if path.is_empty() {
        format!("unknown field {number}")
    } else {
        format!("unknown field {number} in {path}")
    }
}

/// A string of the same length as `src` that is not `src`.
pub(crate) fn replacement_string(src: &[u8], rng: Option<&mut Rng>) -> Bytes {
    let mut v: Vec<u8> = match rng {
        Some(r) => (0..src.len())
            .map(|_| b'a' + (r.next() % 26) as u8)
            .collect(),
        None => vec![b'x'; src.len()],
    };
    if v == src
        && let Some(c) = v.first_mut()
    {
        *c = if *c == b'y' { b'z' } else { b'y' };
    }
    Bytes::from(v)
}
