//! `TFRequest` / `TFResponse`: the EAS SDK's builder, with types that catch mistakes.
//!
//! The names follow `eas_prediction.TFRequest` so its users recognise them. Unlike the
//! SDK, `add_feed` refuses a value count that does not match the shape, a negative or
//! overflowing shape, a feed added twice, values of a Rust type the dtype cannot hold
//! without loss, integers out of the dtype's range, and dtypes the target wire format
//! cannot carry.
//!
//! ```
//! use tfreq::{DType, TFRequest};
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("sentence1", &[200, 15], DType::Int32, vec![1i32; 3000])?;
//! req.add_feed("keep_rate", &[], DType::Float, vec![0.2f32])?;
//! req.add_fetch("sorted_labels");
//! let eas: Vec<u8> = req.to_bytes()?;                          // EAS wire format
//! let tfs: Vec<u8> = req.to_tf_serving_bytes("my_model")?;    // TF Serving PredictRequest
//! assert!(req.add_feed("keep_rate", &[], DType::Float, vec![0.5f32]).is_err()); // twice
//! assert!(req.add_feed("ids", &[2, 2], DType::Int64, vec![1i64, 2, 3]).is_err()); // 3 != 4
//! assert!(req.add_feed("b", &[1], DType::Int8, vec![300i32]).is_err()); // out of range
//! # Ok::<(), tfreq::BuildError>(())
//! ```

use bytes::Bytes;
use half::{bf16, f16};
use num_complex::Complex;

use crate::dtype::{DType, DTypeCode, Float16, ValueField};
use crate::encode::{TfsEncoding, encode};
use crate::error::{BuildError, Error};
use crate::model::{Elems, Kind, Message, ModelSpec, Scalar, Shape, Tensor, Values, WireFormat};

/// Values handed to [`TFRequest::add_feed`], by Rust element type.
///
/// Made from a `Vec`, a slice or an array of any supported element type, or collected
/// from an iterator:
///
/// ```
/// use tfreq::FeedValues;
/// let a: FeedValues = vec![1.0f32, 2.0].into();
/// let b: FeedValues = (&[1i64, 2, 3][..]).into();
/// let c: FeedValues = (0..4).map(|i| i as f32).collect();
/// let d: FeedValues = vec!["a", "b"].into();
/// assert_eq!((a.len(), b.len(), c.len(), d.len()), (2, 3, 4, 2));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum FeedValues {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<bool>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    C64(Vec<Complex<f32>>),
    C128(Vec<Complex<f64>>),
    /// Strings, as bytes (any bytes, not only UTF-8).
    Str(Vec<Bytes>),
    /// Bit patterns of an 8- or 4-bit float dtype, taken as they are (made by
    /// [`FeedValues::bits`]). Numbers (`f32`, `f64`) are rounded instead.
    Bits(Vec<u8>),
}

impl FeedValues {
    /// Number of elements.
    pub fn len(&self) -> usize {
        use FeedValues::*;
        match self {
            F32(v) => v.len(),
            F64(v) => v.len(),
            I8(v) => v.len(),
            U8(v) => v.len(),
            I16(v) => v.len(),
            U16(v) => v.len(),
            I32(v) => v.len(),
            I64(v) => v.len(),
            U32(v) => v.len(),
            U64(v) => v.len(),
            Bool(v) => v.len(),
            F16(v) => v.len(),
            BF16(v) => v.len(),
            C64(v) => v.len(),
            C128(v) => v.len(),
            Str(v) => v.len(),
            Bits(v) => v.len(),
        }
    }

    /// Raw bit patterns for an 8- or 4-bit float dtype (`DT_FLOAT8_E4M3FN`, ...): the
    /// explicit way to give bits; `f32` / `f64` values are numbers, rounded as
    /// ml_dtypes does.
    ///
    /// ```
    /// use tfreq::{DType, FeedValues, TFRequest, WireFormat};
    /// let mut r = TFRequest::for_wire("s", WireFormat::TfServing);
    /// r.add_feed("x", &[2], DType::Float8E4m3fn, vec![1.5f32, 1.6])?;          // numbers
    /// r.add_feed("y", &[2], DType::Float8E4m3fn, FeedValues::bits(vec![0x3c, 0x3d]))?; // bits
    /// let x = r.message().tensors[0].elements(WireFormat::TfServing);
    /// let y = r.message().tensors[1].elements(WireFormat::TfServing);
    /// assert_eq!((x.get(0), x.get(1)), (y.get(0), y.get(1))); // 1.6 rounds to 1.625 (0x3d)
    /// # Ok::<(), tfreq::BuildError>(())
    /// ```
    pub fn bits(v: impl Into<Vec<u8>>) -> FeedValues {
        FeedValues::Bits(v.into())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Rust element type's name, for error messages.
    pub fn type_name(&self) -> &'static str {
        use FeedValues::*;
        match self {
            F32(_) => "f32",
            F64(_) => "f64",
            I8(_) => "i8",
            U8(_) => "u8",
            I16(_) => "i16",
            U16(_) => "u16",
            I32(_) => "i32",
            I64(_) => "i64",
            U32(_) => "u32",
            U64(_) => "u64",
            Bool(_) => "bool",
            F16(_) => "f16",
            BF16(_) => "bf16",
            C64(_) => "Complex<f32>",
            C128(_) => "Complex<f64>",
            Str(_) => "string",
            Bits(_) => "bit patterns",
        }
    }

    /// Integers widened, or `None` for non-integer values.
    fn ints(&self) -> Option<Box<dyn Iterator<Item = i128> + '_>> {
        use FeedValues::*;
        Some(match self {
            I8(v) => Box::new(v.iter().map(|&x| x as i128)),
            U8(v) => Box::new(v.iter().map(|&x| x as i128)),
            I16(v) => Box::new(v.iter().map(|&x| x as i128)),
            U16(v) => Box::new(v.iter().map(|&x| x as i128)),
            I32(v) => Box::new(v.iter().map(|&x| x as i128)),
            I64(v) => Box::new(v.iter().map(|&x| x as i128)),
            U32(v) => Box::new(v.iter().map(|&x| x as i128)),
            U64(v) => Box::new(v.iter().map(|&x| x as i128)),
            _ => return None,
        })
    }
}

/// A Rust type that can be an element of [`FeedValues`].
pub trait FeedElement: Sized {
    /// Wraps a vector of this type.
    fn wrap(v: Vec<Self>) -> FeedValues;
}

macro_rules! feed_element {
    ($($t:ty => $var:ident),* $(,)?) => {$(
        impl FeedElement for $t {
            fn wrap(v: Vec<Self>) -> FeedValues { FeedValues::$var(v) }
        }
    )*};
}
feed_element!(f32 => F32, f64 => F64, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32,
    i64 => I64, u32 => U32, u64 => U64, bool => Bool, f16 => F16, bf16 => BF16,
    Complex<f32> => C64, Complex<f64> => C128, Bytes => Str);

macro_rules! string_element {
    ($($t:ty),*) => {$(
        impl FeedElement for $t {
            fn wrap(v: Vec<Self>) -> FeedValues {
                FeedValues::Str(v.into_iter().map(|s| Bytes::from(<$t as AsRef<[u8]>>::as_ref(&s).to_vec())).collect())
            }
        }
    )*};
}
string_element!(String, &str, Vec<u8>, &[u8], &String);

impl<const N: usize> FeedElement for [u8; N] {
    fn wrap(v: Vec<Self>) -> FeedValues {
        FeedValues::Str(v.into_iter().map(|s| Bytes::copy_from_slice(&s)).collect())
    }
}

impl<const N: usize> FeedElement for &[u8; N] {
    fn wrap(v: Vec<Self>) -> FeedValues {
        FeedValues::Str(v.into_iter().map(|s| Bytes::copy_from_slice(s)).collect())
    }
}

impl<T: FeedElement> From<Vec<T>> for FeedValues {
    fn from(v: Vec<T>) -> Self {
        T::wrap(v)
    }
}

impl<T: FeedElement + Clone> From<&[T]> for FeedValues {
    fn from(v: &[T]) -> Self {
        T::wrap(v.to_vec())
    }
}

impl<T: FeedElement + Clone> From<&Vec<T>> for FeedValues {
    fn from(v: &Vec<T>) -> Self {
        T::wrap(v.clone())
    }
}

impl<T: FeedElement, const N: usize> From<[T; N]> for FeedValues {
    fn from(v: [T; N]) -> Self {
        T::wrap(Vec::from(v))
    }
}

impl<T: FeedElement> FromIterator<T> for FeedValues {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        T::wrap(iter.into_iter().collect())
    }
}

/// Builds a `PredictRequest` the way `eas_prediction.TFRequest` does, with checks.
#[derive(Debug, Clone)]
pub struct TFRequest {
    msg: Message,
    target: WireFormat,
}

impl TFRequest {
    /// A request for this signature, meant for EAS (so every dtype must be one EAS carries).
    pub fn new(signature_name: impl Into<String>) -> Self {
        Self::for_wire(signature_name, WireFormat::Eas)
    }

    /// A request meant for `wire`: TF Serving carries every dtype, EAS only 1..=19.
    pub fn for_wire(signature_name: impl Into<String>, wire: WireFormat) -> Self {
        let mut msg = Message::new(wire, Kind::Request);
        msg.signature_name = signature_name.into();
        TFRequest { msg, target: wire }
    }

    /// Adds an input tensor. See the module docs for what is refused.
    pub fn add_feed(
        &mut self,
        name: impl Into<String>,
        shape: &[i64],
        dtype: DType,
        values: impl Into<FeedValues>,
    ) -> Result<&mut Self, BuildError> {
        let name = name.into();
        if self.msg.tensor(&name).is_some() {
            return Err(BuildError::DuplicateFeed(name));
        }
        if self.target == WireFormat::Eas && !dtype.eas_can_carry() {
            return Err(BuildError::Unsupported {
                name,
                dtype: dtype.into(),
                wire: WireFormat::Eas,
            });
        }
        let mut t = make_tensor(name, shape, dtype, values.into())?;
        if self.target == WireFormat::Eas {
            to_eas_fields(&mut t);
        }
        self.msg.tensors.push(t);
        Ok(self)
    }

    /// Rebuilds a decoded (or parsed) request through the builder's checks, for `wire`:
    /// every feed must hold exactly as many values as its shape (no fill, no repeat),
    /// in range for its dtype, of a dtype `wire` can carry. Signature, `model_spec`
    /// and fetches are kept.
    ///
    /// ```
    /// let bytes = std::fs::read("tests/data/eas/faq_prod.bin")?;
    /// let msg = tfreq::decode(&bytes)?;
    /// let req = tfreq::TFRequest::from_message(&msg, tfreq::WireFormat::Eas)?;
    /// assert_eq!(req.to_bytes()?, bytes);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_message(msg: &Message, wire: WireFormat) -> Result<TFRequest, BuildError> {
        let mut req = TFRequest::for_wire(msg.signature_name.clone(), wire);
        for t in &msg.tensors {
            let values = feed_values_of(t, msg.wire)?;
            let shape = t.shape.sizes();
            req.add_feed(t.name.clone(), &shape, dtype_of(t)?, values)?;
            if let Some(last) = req.msg.tensors.last_mut() {
                last.shape = t.shape.clone();
            }
        }
        req.msg.fetches = msg.fetches.clone();
        req.msg.model_spec = msg.model_spec.clone();
        Ok(req)
    }

    /// Sets the signature name (the SDK's `set_signature_name`).
    ///
    /// ```
    /// let mut req = tfreq::TFRequest::new("a");
    /// req.set_signature_name("b");
    /// assert_eq!(req.message().signature_name, "b");
    /// ```
    pub fn set_signature_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.msg.signature_name = name.into();
        self
    }

    /// Adds an output name to `output_filter`.
    pub fn add_fetch(&mut self, name: impl Into<String>) -> &mut Self {
        self.msg.fetches.push(name.into());
        self
    }

    /// The request in the neutral model, laid out for its target wire format
    /// (`message().wire` is that format).
    pub fn message(&self) -> &Message {
        &self.msg
    }

    /// Takes the neutral model out.
    pub fn into_message(self) -> Message {
        self.msg
    }

    /// The request in its target wire format: for [`TFRequest::new`], the EAS bytes
    /// `eas_prediction`'s `to_string()` writes for the same calls.
    ///
    /// `add_feed` already refuses every feed the target format cannot carry, so this
    /// fails only if the checks and the encoder ever disagree; it returns that error
    /// (as [`TFRequest::to_tf_serving_bytes`] does) instead of empty bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, BuildError> {
        encode(&self.msg, self.target, TfsEncoding::Python)
    }

    /// A TF Serving `PredictRequest` for model `model_name`, laid out as
    /// `tf.make_tensor_proto` does (`tensor_content` for multi-element numeric tensors).
    pub fn to_tf_serving_bytes(&self, model_name: &str) -> Result<Vec<u8>, BuildError> {
        let spec = ModelSpec {
            name: model_name.to_string(),
            signature_name: self.msg.signature_name.clone(),
            ..ModelSpec::default()
        };
        self.to_tf_serving_bytes_with(&spec, TfsEncoding::Python)
    }

    /// As [`TFRequest::to_tf_serving_bytes`], with the whole `ModelSpec` (version,
    /// label, signature) and the tensor layout chosen.
    pub fn to_tf_serving_bytes_with(
        &self,
        spec: &ModelSpec,
        style: TfsEncoding,
    ) -> Result<Vec<u8>, BuildError> {
        // The spec is passed beside the message: cloning the message to set it would
        // copy every tensor.
        crate::encode::encode_with_spec(&self.msg, Some(spec), WireFormat::TfServing, style)
    }
}

fn dtype_of(t: &Tensor) -> Result<DType, BuildError> {
    t.dtype.dtype().ok_or(BuildError::NotBuildable {
        name: t.name.clone(),
        dtype: t.dtype,
    })
}

/// A tensor's stored values as builder input, refusing any count but the exact one.
fn feed_values_of(t: &Tensor, wire: WireFormat) -> Result<FeedValues, BuildError> {
    let d = dtype_of(t)?;
    let e = t.elements(wire);
    let expected = e.expected.unwrap_or(0);
    if e.stored as u64 != expected || e.expected.is_none() {
        return Err(BuildError::CountMismatch {
            name: t.name.clone(),
            shape: t.shape.sizes(),
            expected,
            got: e.stored,
        });
    }
    let all: Vec<Scalar> = (0..e.stored).filter_map(|i| e.stored_get(i)).collect();
    let not = || BuildError::NotBuildable {
        name: t.name.clone(),
        dtype: t.dtype,
    };
    macro_rules! collect_vec {
        ($pat:pat => $v:expr) => {
            all.iter()
                .map(|s| match s {
                    $pat => Ok($v),
                    _ => Err(not()),
                })
                .collect::<Result<Vec<_>, _>>()?
        };
    }
    macro_rules! collect {
        ($pat:pat => $v:expr) => {
            collect_vec!($pat => $v).into()
        };
    }
    Ok(match d {
        DType::Float => collect!(Scalar::F32(x) => *x),
        DType::Double => collect!(Scalar::F64(x) => *x),
        DType::Half => collect!(Scalar::F16(x) => *x),
        DType::BFloat16 => collect!(Scalar::BF16(x) => *x),
        DType::Complex64 => collect!(Scalar::C64(r, i) => Complex::new(*r, *i)),
        DType::Complex128 => collect!(Scalar::C128(r, i) => Complex::new(*r, *i)),
        DType::Bool => collect!(Scalar::Bool(x) => *x),
        DType::String => collect!(Scalar::Bytes(b) => b.clone()),
        DType::UInt32 | DType::UInt64 => collect!(Scalar::U64(x) => *x),
        d if crate::minifloat::is_minifloat(d) => {
            FeedValues::Bits(collect_vec!(Scalar::Mini(_, x) => *x))
        }
        DType::Invalid | DType::Resource | DType::Variant => return Err(not()),
        _ => collect!(Scalar::I64(x) => *x),
    })
}

/// Checks and converts one feed to a tensor in canonical (TF Serving typed) form.
pub(crate) fn make_tensor(
    name: String,
    shape: &[i64],
    dtype: DType,
    values: FeedValues,
) -> Result<Tensor, BuildError> {
    if let Some(index) = shape.iter().position(|&d| d < 0) {
        return Err(BuildError::NegativeDim {
            name,
            shape: shape.to_vec(),
            index,
        });
    }
    let expected = match Shape::from_sizes(shape).num_elements() {
        Some(n) => n,
        None if shape.len() > Shape::MAX_RANK => {
            return Err(BuildError::TooManyDims {
                name,
                rank: shape.len(),
            });
        }
        None => {
            return Err(BuildError::ShapeOverflow {
                name,
                shape: shape.to_vec(),
            });
        }
    };
    if values.len() as u64 != expected {
        return Err(BuildError::CountMismatch {
            name,
            shape: shape.to_vec(),
            expected,
            got: values.len(),
        });
    }
    let code = DTypeCode::from(dtype);
    let info = dtype.info();
    let wrong = |name: String, takes: &'static str, v: &FeedValues| BuildError::WrongType {
        name,
        dtype: code,
        got: v.type_name(),
        takes,
    };
    use FeedValues as V;
    // Numbers for an 8- or 4-bit float dtype become its bit patterns here, where the
    // format is in hand, so the arms below see only `Bits` for those dtypes.
    let values = match (crate::minifloat::format(dtype), values) {
        (Some(f), V::F32(v)) => V::Bits(v.into_iter().map(|x| f.encode(x as f64)).collect()),
        (Some(f), V::F64(v)) => V::Bits(v.into_iter().map(|x| f.encode(x)).collect()),
        (_, v) => v,
    };
    let stored = match (dtype, values) {
        (DType::Float, V::F32(v)) => Values::F32(Elems::Vec(v)),
        (DType::Double, V::F64(v)) => Values::F64(Elems::Vec(v)),
        (DType::Double, V::F32(v)) => {
            Values::F64(Elems::Vec(v.into_iter().map(f64::from).collect()))
        }
        (DType::Bool, V::Bool(v)) => Values::Bool(v),
        (DType::String, V::Str(v)) => Values::Bytes(v),
        (DType::Half, V::F16(v)) => {
            Values::I32(v.into_iter().map(|x| x.to_bits() as i32).collect())
        }
        (DType::BFloat16, V::BF16(v)) => {
            Values::I32(v.into_iter().map(|x| x.to_bits() as i32).collect())
        }
        (DType::Complex64, V::C64(v)) => Values::F32(Elems::Vec(
            v.into_iter().flat_map(|c| [c.re, c.im]).collect(),
        )),
        (DType::Complex128, V::C128(v)) => Values::F64(Elems::Vec(
            v.into_iter().flat_map(|c| [c.re, c.im]).collect(),
        )),
        (DType::Complex128, V::C64(v)) => Values::F64(Elems::Vec(
            v.into_iter()
                .flat_map(|c| [c.re as f64, c.im as f64])
                .collect(),
        )),
        (DType::Int32 | DType::QInt32, V::I32(v)) => Values::I32(v.into()),
        (d, V::Bits(v)) if crate::minifloat::is_minifloat(d) => Values::Raw(Bytes::from(v)),
        (DType::Invalid | DType::Resource | DType::Variant, _) => {
            return Err(BuildError::NotBuildable { name, dtype: code });
        }
        (d, v) => {
            let takes = takes(d);
            let (min, max): (i128, i128) = match (info.int_range, info.tf_field) {
                (Some((lo, hi)), _) => (lo as i128, hi as i128),
                (None, ValueField::Int64) => (i64::MIN as i128, i64::MAX as i128),
                (None, ValueField::UInt32) => (0, u32::MAX as i128),
                (None, ValueField::UInt64) => (0, u64::MAX as i128),
                _ => return Err(wrong(name, takes, &v)),
            };
            let Some(ints) = v.ints() else {
                return Err(wrong(name, takes, &v));
            };
            let ints: Vec<i128> = ints.collect();
            if let Some((index, &value)) =
                ints.iter().enumerate().find(|&(_, &x)| x < min || x > max)
            {
                return Err(BuildError::OutOfRange {
                    name,
                    dtype: code,
                    index,
                    value,
                    min: min.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                    max: max.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                });
            }
            match info.tf_field {
                ValueField::Int => Values::I32(ints.into_iter().map(|x| x as i32).collect()),
                ValueField::Int64 => Values::I64(ints.into_iter().map(|x| x as i64).collect()),
                ValueField::UInt32 => Values::U32(ints.into_iter().map(|x| x as u32).collect()),
                _ => Values::U64(ints.into_iter().map(|x| x as u64).collect()),
            }
        }
    };
    let mut t = Tensor::new(name, dtype, Shape::from_sizes(shape));
    if !stored.is_empty() {
        t.fields.push((info.tf_field, stored));
    }
    Ok(t)
}

/// Moves a canonical (TF Serving typed) tensor's values into the EAS `ArrayProto`
/// field of its dtype, by the EAS conventions: halves as floats, complex numbers as
/// (re, im) pairs in `float_val` / `double_val`. Lossless: f16 and bf16 widen exactly.
pub(crate) fn to_eas_fields(t: &mut Tensor) {
    let Some(d) = t.dtype.dtype() else { return };
    let Some(eas) = d.info().eas_field else {
        return;
    };
    for (field, values) in t.fields.iter_mut() {
        if let (Some(h), Values::I32(bits)) = (Float16::of(d), &*values) {
            let floats = bits.iter().map(|b| h.value(b as u16)).collect();
            *values = Values::F32(Elems::Vec(floats));
        }
        *field = eas;
    }
}

fn takes(d: DType) -> &'static str {
    match d.info().tf_field {
        ValueField::Float => "f32",
        ValueField::Double => "f64 or f32",
        ValueField::Int | ValueField::Int64 | ValueField::UInt32 | ValueField::UInt64 => {
            "integers in range"
        }
        ValueField::Bool => "bool",
        ValueField::String => "strings or bytes",
        ValueField::Half if d == DType::Half => "half::f16",
        ValueField::Half => "half::bf16",
        ValueField::SComplex => "Complex<f32>",
        ValueField::DComplex => "Complex<f64> or Complex<f32>",
        ValueField::Float8 => "f32 or f64 numbers, or FeedValues::bits",
        _ => "nothing",
    }
}

/// Reads a `PredictResponse` the way `eas_prediction.TFResponse` does.
///
/// ```
/// use tfreq::TFResponse;
/// let bytes = std::fs::read("tests/data/eas/response.bin")?;
/// let resp = TFResponse::from_bytes(&bytes)?;
/// assert_eq!(resp.get_tensor_shape("sorted_probs"), Some(vec![1, 3]));
/// assert_eq!(resp.get_values("sorted_probs").map(|v| v.len()), Some(3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TFResponse {
    msg: Message,
}

impl TFResponse {
    /// Decodes a response of either wire format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let (msg, _) = crate::decode::decode_with(
            Bytes::copy_from_slice(bytes),
            crate::decode::DecodeOptions {
                kind: Some(Kind::Response),
                ..Default::default()
            },
        )?;
        Ok(TFResponse { msg })
    }

    /// Wraps an already decoded response.
    pub fn from_message(msg: Message) -> Self {
        TFResponse { msg }
    }

    /// The output names, in wire order.
    pub fn output_names(&self) -> Vec<&str> {
        self.msg.tensors.iter().map(|t| t.name.as_str()).collect()
    }

    /// The output's shape.
    pub fn get_tensor_shape(&self, name: &str) -> Option<Vec<i64>> {
        self.msg.tensor(name).map(|t| t.shape.sizes())
    }

    /// The output's dtype.
    pub fn get_dtype(&self, name: &str) -> Option<DTypeCode> {
        self.msg.tensor(name).map(|t| t.dtype)
    }

    /// The output's values, by TensorFlow's reading rules (short lists filled).
    pub fn get_values(&self, name: &str) -> Option<Vec<Scalar>> {
        let t = self.msg.tensor(name)?;
        let e = t.elements(self.msg.wire);
        let n = usize::try_from(e.expected?).ok()?;
        // A broadcast claim far beyond the stored values is not materialised.
        if n > e.stored.max(1).saturating_mul(1 << 20) {
            return None;
        }
        Some((0..n).filter_map(|i| e.get(i)).collect())
    }

    /// The output's values as `f32`, when it is a float tensor.
    pub fn get_f32(&self, name: &str) -> Option<Vec<f32>> {
        self.get_values(name)?
            .into_iter()
            .map(|s| match s {
                Scalar::F32(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    /// The output's values as strings (bytes), when it is a string tensor.
    pub fn get_strings(&self, name: &str) -> Option<Vec<Bytes>> {
        self.get_values(name)?
            .into_iter()
            .map(|s| match s {
                Scalar::Bytes(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    /// The neutral model.
    pub fn message(&self) -> &Message {
        &self.msg
    }
}
