//! The neutral request model every other part reads.
//!
//! A [`Message`] is one decoded (or built) `PredictRequest` or `PredictResponse` of
//! either wire format. Tensors keep their values as they were stored on the wire
//! (which field, packed bytes viewed without copying), so printers can show the
//! encoding faithfully; [`Tensor::elements`] applies TensorFlow's reading rules
//! (`tensor_content` wins, short lists repeat their last value).

use std::fmt;

use bytes::Bytes;
use half::{bf16, f16};

use crate::dtype::{DType, DTypeCode, ValueField};
pub use crate::wire::{Kind, WireFormat};

/// The signature TF Serving runs when a request names none, and the one a SavedModel
/// exports by default (`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY`;
/// <https://github.com/tensorflow/tensorflow/blob/master/tensorflow/cc/saved_model/signature_constants.h>).
pub const DEFAULT_SIGNATURE: &str = "serving_default";

/// TF Serving's `ModelSpec`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSpec {
    /// Model name.
    pub name: String,
    /// `version` (an `Int64Value`): present-with-0 differs from absent.
    pub version: Option<i64>,
    /// `version_label`.
    pub version_label: Option<String>,
    /// `signature_name` (empty means `serving_default`).
    pub signature_name: String,
}

/// A tensor dimension (TF Serving dims may carry a name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim {
    /// Size; -1 is unknown.
    pub size: i64,
    /// Name, usually empty.
    pub name: String,
}

/// A tensor's shape as on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// The dims, outermost first.
    pub dims: Vec<Dim>,
    /// TF Serving's `unknown_rank`.
    pub unknown_rank: bool,
    /// Whether the shape submessage was present (the SDKs always write it).
    pub present: bool,
}

impl Shape {
    /// A present shape with these sizes.
    pub fn from_sizes(sizes: &[i64]) -> Self {
        Shape {
            dims: sizes
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
            present: true,
        }
    }

    /// The sizes.
    pub fn sizes(&self) -> Vec<i64> {
        self.dims.iter().map(|d| d.size).collect()
    }

    /// The most dims TensorFlow's `TensorShape` takes (`TensorShape::MaxDimensions`).
    pub const MAX_RANK: usize = 254;

    /// Number of elements, or `None` when TensorFlow refuses the shape as a tensor's:
    /// see [`Shape::invalid`].
    ///
    /// ```
    /// use tfreq::Shape;
    /// assert_eq!(Shape::from_sizes(&[]).num_elements(), Some(1));
    /// assert_eq!(Shape::from_sizes(&[2, 0, 5]).num_elements(), Some(0));
    /// assert_eq!(Shape::from_sizes(&[-1, 3]).num_elements(), None);
    /// assert_eq!(Shape::from_sizes(&[i64::MAX, 2]).num_elements(), None);
    /// ```
    pub fn num_elements(&self) -> Option<u64> {
        self.check().ok()
    }

    /// Why TensorFlow refuses this shape for a tensor, or `None` when it takes it.
    ///
    /// `Tensor::FromProto` (what TF Serving and the EAS processors use) rejects an unknown
    /// rank, a negative dim, more than [`Shape::MAX_RANK`] dims, and a dim list whose
    /// running product leaves int64 at any step, even when a later dim is 0
    /// (`TensorShape::IsValid` multiplies left to right and stops at the first overflow).
    /// Checked against TensorFlow 2.21's `ParseTensor` in `tests/data/values/`.
    ///
    /// ```
    /// use tfreq::Shape;
    /// assert!(Shape::from_sizes(&[0, 1 << 62, 4]).invalid().is_none());
    /// let mut dims = vec![2; 63];
    /// dims.push(0);
    /// assert!(Shape::from_sizes(&dims).invalid().unwrap().contains("overflows int64 at dim 62"));
    /// assert!(Shape::from_sizes(&[1; 255]).invalid().unwrap().contains("255 dims"));
    /// ```
    pub fn invalid(&self) -> Option<String> {
        self.check().err()
    }

    fn check(&self) -> Result<u64, String> {
        if self.unknown_rank {
            return Err("unknown_rank is set: a tensor needs a known shape".into());
        }
        if self.dims.len() > Self::MAX_RANK {
            return Err(format!(
                "{} dims: TensorFlow takes at most {}",
                self.dims.len(),
                Self::MAX_RANK
            ));
        }
        let mut n: i64 = 1;
        for (i, d) in self.dims.iter().enumerate() {
            if d.size < 0 {
                return Err(format!(
                    "dim {i} is {}: a tensor's dims are 0 or more",
                    d.size
                ));
            }
            n = n.checked_mul(d.size).ok_or_else(|| {
                format!(
                    "the element count overflows int64 at dim {i} (TensorFlow multiplies the dims in order and refuses the shape even if a later dim is 0)"
                )
            })?;
        }
        // n is non-negative here.
        Ok(n as u64)
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unknown_rank {
            return f.write_str("unknown_rank");
        }
        f.write_str("[")?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", d.size)?;
        }
        f.write_str("]")
    }
}

/// Fixed-width elements: a zero-copy little-endian view of the input, or owned.
#[derive(Clone, PartialEq)]
pub enum Elems<T> {
    /// Little-endian bytes, `size_of::<T>()` per element (packed field or raw content).
    Le(Bytes),
    /// Owned elements.
    Vec(Vec<T>),
}

/// Element types of [`Elems`].
pub trait LeElem: Copy + Default + PartialEq {
    /// Bytes per element.
    const SIZE: usize;
    /// Appends the little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// Writes the little-endian bytes into exactly `SIZE` bytes.
    fn write_le(self, dst: &mut [u8]);
    /// The slice's little-endian bytes as a view, when the in-memory layout is
    /// already that (the primitive numbers on little-endian machines): encoding is
    /// then one `memcpy`. `None` (the default) means "convert element by element".
    fn le_view(v: &[Self]) -> Option<&[u8]> {
        let _ = v;
        None
    }
    /// The first element of `b` and the bytes after it, or `None` when fewer than
    /// `SIZE` bytes are left: a read of a constant size, so a loop over it needs no
    /// per-element length arithmetic.
    fn split_le(b: &[u8]) -> Option<(Self, &[u8])>;
    /// Appends the whole elements of `b` to `out`: one `memcpy` when the in-memory
    /// layout is already little-endian (as [`LeElem::le_view`]), else element by
    /// element. A partial element at the end is ignored.
    fn extend_from_le(out: &mut Vec<Self>, b: &[u8]);
}

macro_rules! le_elem {
    ($($t:ty),*) => {$(
        impl LeElem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn split_le(b: &[u8]) -> Option<(Self, &[u8])> {
                b.split_first_chunk::<{ std::mem::size_of::<$t>() }>()
                    .map(|(a, rest)| (<$t>::from_le_bytes(*a), rest))
            }
            fn extend_from_le(out: &mut Vec<Self>, b: &[u8]) {
                let n = b.len() / Self::SIZE;
                out.reserve(n);
                if cfg!(target_endian = "little") {
                    // SAFETY: `reserve` made room for `n` more elements after `len`;
                    // exactly `n * SIZE` bytes are copied there from `b`, which holds at
                    // least that many, into memory `b` cannot overlap (it is spare
                    // capacity of a vector we borrow mutably). Every bit pattern of a
                    // primitive number is a valid value and the layout is little-endian,
                    // so the copied bytes are `n` initialised elements, which `set_len`
                    // then covers.
                    unsafe {
                        let len = out.len();
                        std::ptr::copy_nonoverlapping(
                            b.as_ptr(),
                            out.as_mut_ptr().add(len).cast::<u8>(),
                            n * Self::SIZE,
                        );
                        out.set_len(len + n);
                    }
                } else {
                    let mut rest = b;
                    while let Some((x, r)) = Self::split_le(rest) {
                        out.push(x);
                        rest = r;
                    }
                }
            }
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn write_le(self, dst: &mut [u8]) {
                dst.copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn le_view(v: &[Self]) -> Option<&[u8]> {
                if cfg!(target_endian = "little") {
                    // SAFETY: a primitive number has no padding and every bit pattern
                    // of its bytes is initialised; u8 has alignment 1; the length is
                    // the slice's size in bytes, so the view covers exactly `v`.
                    Some(unsafe {
                        std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v))
                    })
                } else {
                    None
                }
            }
        }
    )*};
}
le_elem!(f32, f64, i32, i64, u32, u64, u16, i16, i8, u8);

impl<T: LeElem> Elems<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Elems::Le(b) => b.len() / T::SIZE,
            Elems::Vec(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Elems::Le(b) => T::split_le(b.get(i * T::SIZE..)?).map(|(x, _)| x),
            Elems::Vec(v) => v.get(i).copied(),
        }
    }

    /// All elements, in order. Over a view this reads fixed-size chunks (no index
    /// arithmetic or bounds check per element), so a loop over it compiles to what a
    /// loop over a `&[T]` does plus the byte-order conversion, a no-op on
    /// little-endian machines.
    pub fn iter(&self) -> ElemsIter<'_, T> {
        match self {
            Elems::Le(b) => ElemsIter::Le(&b[..b.len() / T::SIZE * T::SIZE]),
            Elems::Vec(v) => ElemsIter::Slice(v.iter()),
        }
    }

    /// Copies the elements out: from a view, one bulk copy of the bytes into the new
    /// vector (a `memcpy` on little-endian machines) instead of element by element.
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            Elems::Vec(v) => v.clone(),
            Elems::Le(b) => {
                let mut out = Vec::new();
                T::extend_from_le(&mut out, b);
                out
            }
        }
    }

    /// The little-endian bytes (a cheap clone when already viewed from the input).
    pub fn to_le_bytes(&self) -> Bytes {
        match self {
            Elems::Le(b) => b.clone(),
            Elems::Vec(v) => le_bytes(v),
        }
    }
}

/// Iterator over [`Elems`], from [`Elems::iter`].
#[derive(Clone, Debug)]
pub enum ElemsIter<'a, T> {
    /// Over a little-endian view (whole elements), `T::SIZE` bytes at a time.
    Le(&'a [u8]),
    /// Over owned elements.
    Slice(std::slice::Iter<'a, T>),
}

impl<T: LeElem> Iterator for ElemsIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            ElemsIter::Le(b) => {
                let (x, rest) = T::split_le(b)?;
                *b = rest;
                Some(x)
            }
            ElemsIter::Slice(it) => it.next().copied(),
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len();
        (n, Some(n))
    }

    #[inline]
    fn fold<B, F: FnMut(B, T) -> B>(self, init: B, mut f: F) -> B {
        // One loop per representation instead of a match per element: `sum`,
        // `for_each`, `collect` and `extend` go through here.
        match self {
            ElemsIter::Le(mut b) => {
                let mut acc = init;
                while let Some((x, rest)) = T::split_le(b) {
                    acc = f(acc, x);
                    b = rest;
                }
                acc
            }
            ElemsIter::Slice(it) => it.fold(init, |acc, &x| f(acc, x)),
        }
    }
}

impl<T: LeElem> ExactSizeIterator for ElemsIter<'_, T> {
    #[inline]
    fn len(&self) -> usize {
        match self {
            ElemsIter::Le(b) => b.len() / T::SIZE,
            ElemsIter::Slice(it) => it.len(),
        }
    }
}

impl<T: LeElem> DoubleEndedIterator for ElemsIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        match self {
            ElemsIter::Le(b) => {
                let cut = b.len().checked_sub(T::SIZE)?;
                let (x, _) = T::split_le(&b[cut..])?;
                *b = &b[..cut];
                Some(x)
            }
            ElemsIter::Slice(it) => it.next_back().copied(),
        }
    }
}

/// The little-endian bytes of a slice, in one allocation.
pub fn le_bytes<T: LeElem>(v: &[T]) -> Bytes {
    let mut out = Vec::with_capacity(v.len() * T::SIZE);
    put_le_slice(&mut out, v);
    Bytes::from(out)
}

/// Appends fixed-width elements little-endian, in bulk.
pub fn put_le_elems<T: LeElem>(out: &mut Vec<u8>, e: &Elems<T>) {
    match e {
        Elems::Le(b) => out.extend_from_slice(b),
        Elems::Vec(v) => put_le_slice(out, v),
    }
}

/// Appends a slice little-endian, in bulk: on little-endian machines one `memcpy`
/// ([`LeElem::le_view`]), else one resize and a loop the compiler vectorises.
pub fn put_le_slice<T: LeElem>(out: &mut Vec<u8>, v: &[T]) {
    if let Some(b) = T::le_view(v) {
        out.extend_from_slice(b);
        return;
    }
    let start = out.len();
    out.resize(start + v.len() * T::SIZE, 0);
    for (c, x) in out[start..].chunks_exact_mut(T::SIZE).zip(v) {
        x.write_le(c);
    }
}

impl<T: LeElem + fmt::Debug> fmt::Debug for Elems<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().take(16)).finish()?;
        if self.len() > 16 {
            write!(f, " (+{} more)", self.len() - 16)?;
        }
        Ok(())
    }
}

/// Integer types a varint field holds (`int_val` as i32, `int64_val`, ...).
pub trait VarintElem: Copy + PartialEq {
    /// The value of one varint, as protobuf reads it into this type.
    fn from_varint(v: u64) -> Self;
}

macro_rules! varint_elem {
    ($($t:ty),*) => {$(
        impl VarintElem for $t {
            #[inline]
            fn from_varint(v: u64) -> Self { v as $t }
        }
    )*};
}
varint_elem!(i32, i64, u32, u64);

/// Integer elements: owned, or a view of the input's packed varints decoded on access
/// (large fields, so a summary of a gigabyte `int_val` never decodes it).
///
/// ```
/// use tfreq::Ints;
/// let v: Ints<i32> = vec![1, -2, 3].into();
/// assert_eq!((v.len(), v.get(1)), (3, Some(-2)));
/// assert_eq!(v.iter().sum::<i32>(), 2);
/// ```
#[derive(Clone)]
pub enum Ints<T> {
    /// Owned values.
    Vec(Vec<T>),
    /// A checked run of packed varints in the input.
    Packed(crate::wire::reader::PackedVarints),
}

impl<T> Default for Ints<T> {
    fn default() -> Self {
        Ints::Vec(Vec::new())
    }
}

impl<T> From<Vec<T>> for Ints<T> {
    fn from(v: Vec<T>) -> Self {
        Ints::Vec(v)
    }
}

impl<T> FromIterator<T> for Ints<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Ints::Vec(iter.into_iter().collect())
    }
}

impl<T: VarintElem> Ints<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Ints::Vec(v) => v.len(),
            Ints::Packed(p) => p.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> Option<T> {
        match self {
            Ints::Vec(v) => v.get(i).copied(),
            Ints::Packed(p) => p.get(i).map(T::from_varint),
        }
    }

    /// All elements, in order.
    pub fn iter(&self) -> IntsIter<'_, T> {
        match self {
            Ints::Vec(v) => IntsIter::Slice(v.iter()),
            Ints::Packed(p) => IntsIter::Packed(p.iter()),
        }
    }

    /// The owned values, when they are owned.
    pub fn as_slice(&self) -> Option<&[T]> {
        match self {
            Ints::Vec(v) => Some(v),
            Ints::Packed(_) => None,
        }
    }

    /// Copies the elements out.
    pub fn to_vec(&self) -> Vec<T> {
        match self {
            Ints::Vec(v) => v.clone(),
            Ints::Packed(p) => p.iter().map(T::from_varint).collect(),
        }
    }
}

/// Iterator over [`Ints`].
#[derive(Debug)]
pub enum IntsIter<'a, T> {
    /// Over owned values.
    Slice(std::slice::Iter<'a, T>),
    /// Decoding packed varints.
    Packed(crate::wire::reader::VarintIter<'a>),
}

impl<T: VarintElem> Iterator for IntsIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        match self {
            IntsIter::Slice(it) => it.next().copied(),
            IntsIter::Packed(it) => it.next().map(T::from_varint),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            IntsIter::Slice(it) => it.size_hint(),
            IntsIter::Packed(it) => it.size_hint(),
        }
    }
}

impl<T: VarintElem> PartialEq for Ints<T> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Ints::Vec(a), Ints::Vec(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl<T: VarintElem + fmt::Debug> fmt::Debug for Ints<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().take(16)).finish()?;
        if self.len() > 16 {
            write!(f, " (+{} more)", self.len() - 16)?;
        }
        Ok(())
    }
}

/// The elements of one value field, as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// `float_val`, `scomplex_val` (pairs).
    F32(Elems<f32>),
    /// `double_val`, `dcomplex_val` (pairs).
    F64(Elems<f64>),
    /// `int_val`, `half_val` (bit patterns).
    I32(Ints<i32>),
    /// `int64_val`.
    I64(Ints<i64>),
    /// `uint32_val`.
    U32(Ints<u32>),
    /// `uint64_val`.
    U64(Ints<u64>),
    /// `bool_val`.
    Bool(Vec<bool>),
    /// `string_val`; also the raw messages of `resource_handle_val` / `variant_val`.
    Bytes(Vec<Bytes>),
    /// `float8_val`: one byte per element.
    Raw(Bytes),
}

impl Values {
    /// Number of stored elements (for pair fields, the number of numbers).
    pub fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::U32(v) => v.len(),
            Values::U64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Bytes(v) => v.len(),
            Values::Raw(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empty values of the storage type of `field`.
    pub fn empty_for(field: ValueField) -> Values {
        match field {
            ValueField::Float | ValueField::SComplex => Values::F32(Elems::Vec(Vec::new())),
            ValueField::Double | ValueField::DComplex => Values::F64(Elems::Vec(Vec::new())),
            ValueField::Int | ValueField::Half => Values::I32(Ints::default()),
            ValueField::Int64 => Values::I64(Ints::default()),
            ValueField::UInt32 => Values::U32(Ints::default()),
            ValueField::UInt64 => Values::U64(Ints::default()),
            ValueField::Bool => Values::Bool(Vec::new()),
            ValueField::String | ValueField::ResourceHandle | ValueField::Variant => {
                Values::Bytes(Vec::new())
            }
            ValueField::Float8 => Values::Raw(Bytes::new()),
        }
    }
}

/// A field kept as it was, because no schema here knows it (or it had a wire type its
/// declaration does not allow). Never dropped: shown by the printers.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownField {
    /// Field path of the enclosing message (`inputs["x"]`), for people; cut at
    /// [`UnknownField::MAX_PATH`] characters so that many unknown fields under a long
    /// name cost memory linear in the input, not quadratic.
    pub path: String,
    /// The message the field was found in, for writing it back there.
    pub scope: Scope,
    /// Field number.
    pub number: u32,
    /// Wire type.
    pub wire_type: u8,
    /// Absolute byte offset of the tag.
    pub offset: usize,
    /// The value as read.
    pub value: crate::wire::reader::WireValue,
}

/// Which message of a request an unknown field sits in: set by the decoder, which
/// reads that message, and used by the encoder to write the field back there (no
/// path text is parsed for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// The request or response itself.
    Top,
    /// `model_spec`.
    ModelSpec,
    /// `model_spec.version` (the `Int64Value`).
    ModelSpecVersion,
    /// A map entry (`inputs` / `outputs`), beside its key and value.
    Entry,
    /// The tensor (`TensorProto` / `ArrayProto`).
    Tensor,
    /// The tensor's shape message.
    Shape,
    /// Dim `i` of a TF Serving shape.
    Dim(usize),
    /// Inside the `input` of a classify, regress or multi-inference request (its
    /// examples, features and value lists), or one of its `tasks`: shown, never written
    /// back (tfreq encodes predict requests only).
    Input,
}

impl UnknownField {
    /// The longest path kept, in characters.
    pub const MAX_PATH: usize = 160;

    /// `path`, cut to [`UnknownField::MAX_PATH`] characters.
    pub fn display_path(path: &str) -> String {
        if path.chars().count() <= Self::MAX_PATH {
            path.to_string()
        } else {
            let mut s: String = path.chars().take(Self::MAX_PATH).collect();
            s.push('…');
            s
        }
    }
}

/// One named tensor of a request (an input) or response (an output).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Map key: the input or output name.
    pub name: String,
    /// dtype number as on the wire.
    pub dtype: DTypeCode,
    /// Shape as on the wire.
    pub shape: Shape,
    /// TensorProto `version_number` (TF Serving only).
    pub version_number: i32,
    /// `tensor_content`, when present and non-empty (TF Serving only).
    pub content: Option<Bytes>,
    /// Typed value fields present, in field-number order.
    pub fields: Vec<(ValueField, Values)>,
    /// Fields no schema knows.
    pub unknown: Vec<UnknownField>,
    /// Absolute byte offset of this map entry in the input (0 when built).
    pub offset: usize,
}

/// How a run of stored values is encoded (see [`Elements::stored_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawRun {
    /// Fixed-width little-endian elements.
    Le,
    /// Packed varints.
    Varint,
}

/// Where a tensor's values are read from, by TensorFlow's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// From `tensor_content`.
    Content,
    /// From this typed field.
    Field(ValueField),
    /// No values: TensorFlow fills zeros / "" / false.
    Empty,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Content => f.write_str("tensor_content"),
            Source::Field(v) => f.write_str(v.name()),
            Source::Empty => f.write_str("none"),
        }
    }
}

/// One element, converted to its logical type.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// float32
    F32(f32),
    /// float64
    F64(f64),
    /// fp16
    F16(f16),
    /// bfloat16
    BF16(bf16),
    /// Any signed integer type.
    I64(i64),
    /// uint32 / uint64.
    U64(u64),
    /// bool
    Bool(bool),
    /// complex64 (re, im)
    C64(f32, f32),
    /// complex128 (re, im)
    C128(f64, f64),
    /// A string element.
    Bytes(Bytes),
    /// One raw byte of a dtype with no reading of its own.
    Byte(u8),
    /// An 8- or 4-bit float (`DT_FLOAT8_*`, `DT_FLOAT4_E2M1FN`): its dtype and bit
    /// pattern. Shown as the number TensorFlow (ml_dtypes) decodes it to
    /// ([`crate::minifloat::decode`]): `1.5`, `-0.0`, `nan`; with a dtype that is not one
    /// of those, as the byte (`0x3c`), since the bits are all it holds.
    Mini(DType, u8),
    /// A resource handle or variant (raw message bytes).
    Opaque(Bytes),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::F32(v) => write!(f, "{v}"),
            Scalar::F64(v) => write!(f, "{v}"),
            Scalar::F16(v) => write!(f, "{v}"),
            Scalar::BF16(v) => write!(f, "{v}"),
            Scalar::I64(v) => write!(f, "{v}"),
            Scalar::U64(v) => write!(f, "{v}"),
            Scalar::Bool(v) => write!(f, "{v}"),
            Scalar::C64(r, i) => write!(f, "({r}{i:+}j)"),
            Scalar::C128(r, i) => write!(f, "({r}{i:+}j)"),
            Scalar::Bytes(b) => write!(f, "\"{}\"", short_bytes(b)),
            Scalar::Byte(b) => write!(f, "0x{b:02x}"),
            // Every value is exact in f64: Python's repr of float(x).
            Scalar::Mini(d, b) => match crate::minifloat::decode(*d, *b) {
                Some(x) => f.write_str(&crate::pyfloat::f64_repr(x as f64)),
                // Not a minifloat dtype: the bits, as a `Byte` shows them.
                None => write!(f, "0x{b:02x}"),
            },
            Scalar::Opaque(b) => write!(f, "<{} bytes>", b.len()),
        }
    }
}

/// A string element for summaries, to be shown between double quotes. One rule, so
/// the text says which bytes were there: printable UTF-8 text as is; a backslash as
/// `\\` and a double quote as `\"`; newline, carriage return and tab as `\n`, `\r`,
/// `\t`, other control characters as `\u{1b}` (Rust's escapes); bytes that are not
/// UTF-8 as `\xNN`. Cut at 40 characters (`…`).
pub fn short_bytes(b: &[u8]) -> String {
    crate::escape::escape_short(b, 40)
}

/// How the stored values relate to the shape, by TensorFlow's rules (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/tensor.cc>).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// As many values as the shape holds.
    Exact,
    /// No values: TensorFlow fills defaults.
    Defaults,
    /// Fewer values: TensorFlow repeats the last one.
    RepeatLast,
    /// More values: TensorFlow silently uses the first ones.
    Truncated,
    /// The shape is not a valid TensorProto shape (negative dim or unknown rank).
    BadShape,
    /// `tensor_content` of the wrong byte length, or a string list that does not parse.
    BadContent,
}

/// A read-only view of a tensor's logical elements (see [`Tensor::elements`]).
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    tensor: &'a Tensor,
    /// Where the values come from.
    pub source: Source,
    /// Stored element count (logical elements, so complex pairs count once).
    pub stored: usize,
    /// The shape's element count, when valid.
    pub expected: Option<u64>,
    /// How `stored` relates to `expected`.
    pub fill: Fill,
    strings: Option<Vec<Bytes>>,
}

impl Tensor {
    /// A tensor with no values.
    pub fn new(name: impl Into<String>, dtype: impl Into<DTypeCode>, shape: Shape) -> Self {
        Tensor {
            name: name.into(),
            dtype: dtype.into(),
            shape,
            version_number: 0,
            content: None,
            fields: Vec::new(),
            unknown: Vec::new(),
            offset: 0,
        }
    }

    /// The values of one typed field, if present.
    pub fn field(&self, f: ValueField) -> Option<&Values> {
        self.fields.iter().find(|(k, _)| *k == f).map(|(_, v)| v)
    }

    /// The field this tensor's dtype reads from in `wire`.
    pub fn value_field(&self, wire: WireFormat) -> Option<ValueField> {
        let d = self.dtype.dtype()?;
        match wire {
            WireFormat::TfServing => Some(d.info().tf_field),
            WireFormat::Eas => d.info().eas_field,
        }
    }

    /// Logical elements by TensorFlow's rules, for a tensor decoded from `wire`.
    ///
    /// ```
    /// use tfreq::{DType, Fill, Scalar, TFRequest, WireFormat};
    /// let mut req = TFRequest::new("s");
    /// req.add_feed("x", &[3], DType::Float, vec![1.0f32, 2.0, 3.0])?;
    /// let msg = tfreq::decode(&req.to_bytes()?)?;
    /// let e = msg.tensors[0].elements(msg.wire);
    /// assert_eq!(e.fill, Fill::Exact);
    /// assert_eq!(e.get(2), Some(Scalar::F32(3.0)));
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn elements(&self, wire: WireFormat) -> Elements<'_> {
        let dtype = self.dtype.dtype();
        let expected = self.shape.num_elements();
        let mut strings = None;
        let (source, stored, content_ok) = match (&self.content, dtype) {
            (Some(c), Some(d)) if wire == WireFormat::TfServing && expected != Some(0) => {
                match d.info().size {
                    Some(sz) => (Source::Content, c.len() / sz, c.len() % sz == 0),
                    None if d == DType::String => match parse_string_list(c, expected) {
                        Some(v) => {
                            let n = v.len();
                            strings = Some(v);
                            (Source::Content, n, true)
                        }
                        None => (Source::Content, 0, false),
                    },
                    None => (Source::Content, 0, false),
                }
            }
            _ => match self.value_field(wire) {
                Some(f) => {
                    let n = self.field(f).map_or(0, |v| v.len());
                    let n = if is_pair_field(f, dtype, wire) {
                        n / 2
                    } else {
                        n
                    };
                    if n == 0 {
                        (Source::Empty, 0, true)
                    } else {
                        (Source::Field(f), n, true)
                    }
                }
                None => (Source::Empty, 0, true),
            },
        };
        let fill = if !content_ok {
            Fill::BadContent
        } else {
            match expected {
                None => Fill::BadShape,
                Some(e) => {
                    let s = stored as u64;
                    if source == Source::Content {
                        if s == e {
                            Fill::Exact
                        } else {
                            Fill::BadContent
                        }
                    } else if s == e {
                        Fill::Exact
                    } else if s == 0 {
                        Fill::Defaults
                    } else if s < e {
                        Fill::RepeatLast
                    } else {
                        Fill::Truncated
                    }
                }
            }
        };
        Elements {
            tensor: self,
            source,
            stored,
            expected,
            fill,
            strings,
        }
    }
}

fn is_pair_field(f: ValueField, dtype: Option<DType>, wire: WireFormat) -> bool {
    match f {
        ValueField::SComplex | ValueField::DComplex => true,
        ValueField::Float => wire == WireFormat::Eas && dtype == Some(DType::Complex64),
        ValueField::Double => wire == WireFormat::Eas && dtype == Some(DType::Complex128),
        _ => false,
    }
}

/// Parses `port::EncodeStringList`: `n` varint lengths, then the bytes, nothing after.
/// Returns `None` when the layout is wrong.
pub fn parse_string_list(c: &Bytes, n: Option<u64>) -> Option<Vec<Bytes>> {
    let n = n?;
    // Each length takes at least one byte.
    if n > c.len() as u64 {
        return None;
    }
    let mut r = crate::wire::reader::Reader::new(c.clone());
    let mut lens = Vec::with_capacity(n as usize);
    for _ in 0..n {
        lens.push(r.varint().ok()?);
    }
    let mut pos = r.offset();
    let mut out = Vec::with_capacity(n as usize);
    for l in lens {
        let end = pos.checked_add(usize::try_from(l).ok()?)?;
        if end > c.len() {
            return None;
        }
        out.push(c.slice(pos..end));
        pos = end;
    }
    (pos == c.len()).then_some(out)
}

impl Elements<'_> {
    /// Logical element `i` of the *stored* values (no broadcast).
    pub fn stored_get(&self, i: usize) -> Option<Scalar> {
        if i >= self.stored {
            return None;
        }
        let t = self.tensor;
        let d = t.dtype.dtype()?;
        match self.source {
            Source::Empty => None,
            Source::Content => {
                if let Some(s) = &self.strings {
                    return s.get(i).cloned().map(Scalar::Bytes);
                }
                let c = t.content.as_ref()?;
                let sz = d.info().size?;
                content_scalar(d, c.get(i * sz..(i + 1) * sz)?)
            }
            Source::Field(f) => {
                let v = t.field(f)?;
                field_scalar(d, f, v, i)
            }
        }
    }

    /// Logical element `i` of the tensor TensorFlow would build: stored values, the
    /// last one repeated, or defaults.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        let n = self.expected?;
        if i as u64 >= n {
            return None;
        }
        match self.fill {
            Fill::BadShape | Fill::BadContent => None,
            Fill::Defaults => self.tensor.dtype.dtype().map(default_scalar),
            _ => self.stored_get(i.min(self.stored.saturating_sub(1))),
        }
    }

    /// The stored values' bytes as they are on the wire, when they are one run:
    /// `tensor_content` or a packed fixed-width field (little-endian), or a packed
    /// varint field kept as a view. Two tensors of one dtype whose runs are equal
    /// store equal values, so comparing them costs a `memcmp`.
    ///
    /// ```
    /// use tfreq::{DType, RawRun, TFRequest};
    /// let mut req = TFRequest::new("s");
    /// req.add_feed("x", &[2], DType::Float, vec![1.0f32, 2.0])?;
    /// let msg = tfreq::decode(&req.to_bytes()?)?;
    /// let e = msg.tensors[0].elements(msg.wire);
    /// assert_eq!(e.stored_run().map(|(k, b)| (k, b.len())), Some((RawRun::Le, 8)));
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn stored_run(&self) -> Option<(RawRun, &[u8])> {
        let t = self.tensor;
        match self.source {
            Source::Content if self.strings.is_none() => {
                t.content.as_deref().map(|c| (RawRun::Le, c))
            }
            Source::Field(f) => match t.field(f)? {
                Values::F32(Elems::Le(b)) | Values::F64(Elems::Le(b)) => Some((RawRun::Le, b)),
                Values::I32(Ints::Packed(p))
                | Values::I64(Ints::Packed(p))
                | Values::U32(Ints::Packed(p))
                | Values::U64(Ints::Packed(p)) => Some((RawRun::Varint, p.bytes())),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether both store their values as equal runs of wire bytes of one encoding
    /// (see [`Elements::stored_run`]), or as equal decoded values of one field, with the
    /// same fill and stored count: then, for
    /// tensors of one dtype and shape, they hold equal values. Runs of
    /// 16 MiB and up are compared on several threads (one piece per core). `false` says nothing: compare element by element.
    ///
    /// ```
    /// use tfreq::{DType, TFRequest};
    /// let mut req = TFRequest::new("s");
    /// req.add_feed("x", &[2], DType::Float, vec![1.0f32, 2.0])?;
    /// let msg = tfreq::decode(&req.to_bytes()?)?;
    /// let e = msg.tensors[0].elements(msg.wire);
    /// assert!(e.same_stored_run(&e.clone()));
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn same_stored_run(&self, other: &Elements<'_>) -> bool {
        if self.fill != other.fill || self.stored != other.stored {
            return false;
        }
        match (self.stored_run(), other.stored_run()) {
            (Some((kx, x)), Some((ky, y))) => kx == ky && crate::par::bytes_eq(x, y),
            _ => self.same_owned(other),
        }
    }

    /// Both hold their values in the same field, decoded, and those are equal (floats
    /// by bit pattern): a slice comparison instead of an element-by-element read.
    fn same_owned(&self, other: &Elements<'_>) -> bool {
        let (Source::Field(f), Source::Field(g)) = (self.source, other.source) else {
            return false;
        };
        let bits32 = |a: &[f32], b: &[f32]| {
            a.iter()
                .map(|x| x.to_bits())
                .eq(b.iter().map(|x| x.to_bits()))
        };
        let bits64 = |a: &[f64], b: &[f64]| {
            a.iter()
                .map(|x| x.to_bits())
                .eq(b.iter().map(|x| x.to_bits()))
        };
        match (self.tensor.field(f), other.tensor.field(g)) {
            _ if f != g => false,
            (Some(Values::I32(Ints::Vec(a))), Some(Values::I32(Ints::Vec(b)))) => a == b,
            (Some(Values::I64(Ints::Vec(a))), Some(Values::I64(Ints::Vec(b)))) => a == b,
            (Some(Values::U32(Ints::Vec(a))), Some(Values::U32(Ints::Vec(b)))) => a == b,
            (Some(Values::U64(Ints::Vec(a))), Some(Values::U64(Ints::Vec(b)))) => a == b,
            (Some(Values::Bool(a)), Some(Values::Bool(b))) => a == b,
            (Some(Values::Bytes(a)), Some(Values::Bytes(b))) => a == b,
            (Some(Values::Raw(a)), Some(Values::Raw(b))) => a == b,
            (Some(Values::F32(Elems::Vec(a))), Some(Values::F32(Elems::Vec(b)))) => bits32(a, b),
            (Some(Values::F64(Elems::Vec(a))), Some(Values::F64(Elems::Vec(b)))) => bits64(a, b),
            _ => false,
        }
    }

    /// The first stored element below `span` at which the two differ, read as
    /// [`Elements::stored_get`] reads them and compared as [`same_scalar`] does, or
    /// `None` when they agree that far.
    ///
    /// Stored runs of one layout (see [`Elements::stored_run`]) are compared as bytes
    /// first, on every core: the elements wholly before the first byte that differs are
    /// equal, and the comparison goes on element by element from there (packed varints
    /// decoded in step on both sides). Every pass gives the pages back behind it, so
    /// two gigabyte tensors cost one pass over each and megabytes of memory.
    pub(crate) fn first_stored_difference(
        &self,
        other: &Elements<'_>,
        span: usize,
    ) -> Option<usize> {
        let span = span.min(self.stored).min(other.stored);
        if span == 0 || self.same_owned(other) {
            return None;
        }
        let mut from = 0;
        // Equal bytes are equal elements only for one dtype read alike.
        let runs = if self.tensor.dtype == other.tensor.dtype {
            (self.stored_run(), other.stored_run())
        } else {
            (None, None)
        };
        match runs {
            // Fixed-width elements of one size: the whole ones before the first byte
            // that differs are the same bytes.
            (Some((RawRun::Le, x)), Some((RawRun::Le, y)))
                if x.len() / self.stored == y.len() / other.stored =>
            {
                let o = crate::par::first_difference(x, y)?;
                from = o / (x.len() / self.stored).max(1);
            }
            (Some((RawRun::Varint, x)), Some((RawRun::Varint, y))) => {
                if let Some(runs) = self.varint_runs(other) {
                    let o = crate::par::first_difference(x, y)?;
                    // The varint holding byte `o` starts after the last terminator
                    // before it; the bytes before are a valid run of their own.
                    let cut = x[..o].iter().rposition(|&c| c < 0x80).map_or(0, |p| p + 1);
                    if let Ok(index) = crate::wire::reader::count_varints(&x[..cut], 0) {
                        if let Some(found) = runs.first_difference(cut, index, span) {
                            return found;
                        }
                    }
                }
            }
            _ => {}
        }
        (from..span).find(|&i| !same_scalar(self.stored_get(i), other.stored_get(i)))
    }

    /// Both hold packed varints of one field, so equal varints are equal elements.
    fn varint_runs<'b>(&'b self, other: &'b Elements<'_>) -> Option<VarintRuns<'b>> {
        let (Source::Field(f), Source::Field(g)) = (self.source, other.source) else {
            return None;
        };
        let d = self.tensor.dtype.dtype()?;
        let (a, b, read): (_, _, fn(DType, ValueField, u64) -> Scalar) =
            match (self.tensor.field(f)?, other.tensor.field(g)?) {
                _ if f != g || other.tensor.dtype.dtype() != Some(d) => return None,
                (Values::I32(Ints::Packed(a)), Values::I32(Ints::Packed(b))) => {
                    (a, b, |d, f, v| int32_scalar(d, f, i32::from_varint(v)))
                }
                (Values::I64(Ints::Packed(a)), Values::I64(Ints::Packed(b))) => {
                    (a, b, |_, _, v| Scalar::I64(i64::from_varint(v)))
                }
                (Values::U32(Ints::Packed(a)), Values::U32(Ints::Packed(b))) => {
                    (a, b, |_, _, v| Scalar::U64(u64::from(u32::from_varint(v))))
                }
                (Values::U64(Ints::Packed(a)), Values::U64(Ints::Packed(b))) => {
                    (a, b, |_, _, v| Scalar::U64(v))
                }
                _ => return None,
            };
        Some(VarintRuns {
            a,
            b,
            dtype: d,
            field: f,
            read,
        })
    }

    /// The first `n` stored elements.
    pub fn preview(&self, n: usize) -> Vec<Scalar> {
        (0..n.min(self.stored))
            .filter_map(|i| self.stored_get(i))
            .collect()
    }
}

/// Two packed varint runs of one field and dtype (see [`Elements::varint_runs`]).
struct VarintRuns<'a> {
    a: &'a crate::wire::reader::PackedVarints,
    b: &'a crate::wire::reader::PackedVarints,
    dtype: DType,
    field: ValueField,
    /// A varint as the element TensorFlow reads.
    read: fn(DType, ValueField, u64) -> Scalar,
}

impl VarintRuns<'_> {
    /// [`Elements::first_stored_difference`] from value `index` at byte `pos` of both
    /// runs (the bytes before are equal): decoded in step, the pages of both given back
    /// behind. `None` when a run ends early (it cannot: both hold at least `span`).
    fn first_difference(&self, pos: usize, index: usize, span: usize) -> Option<Option<usize>> {
        let (mut ia, mut ib) = (self.a.iter_from(pos, index), self.b.iter_from(pos, index));
        let mut ta = crate::par::Trail::new(self.a.bytes());
        let mut tb = crate::par::Trail::new(self.b.bytes());
        let (d, f) = (self.dtype, self.field);
        for i in index..span {
            let (Some(x), Some(y)) = (ia.next(), ib.next()) else {
                return None;
            };
            if !same_scalar(Some((self.read)(d, f, x)), Some((self.read)(d, f, y))) {
                return Some(Some(i));
            }
            if i % (1 << 16) == 0 {
                ta.read_to(ia.position());
                tb.read_to(ib.position());
            }
        }
        Some(None)
    }
}

/// Equal values, floats by bit pattern: `-0.0` is not `0.0`, a NaN equals the same NaN.
pub(crate) fn same_scalar(a: Option<Scalar>, b: Option<Scalar>) -> bool {
    match (a, b) {
        (Some(Scalar::F32(x)), Some(Scalar::F32(y))) => x.to_bits() == y.to_bits(),
        (Some(Scalar::F64(x)), Some(Scalar::F64(y))) => x.to_bits() == y.to_bits(),
        (Some(Scalar::C64(x, i)), Some(Scalar::C64(y, j))) => {
            (x.to_bits(), i.to_bits()) == (y.to_bits(), j.to_bits())
        }
        (Some(Scalar::C128(x, i)), Some(Scalar::C128(y, j))) => {
            (x.to_bits(), i.to_bits()) == (y.to_bits(), j.to_bits())
        }
        (Some(Scalar::F16(x)), Some(Scalar::F16(y))) => x.to_bits() == y.to_bits(),
        (Some(Scalar::BF16(x)), Some(Scalar::BF16(y))) => x.to_bits() == y.to_bits(),
        (a, b) => a == b,
    }
}

/// The value TensorFlow fills in when none is given.
pub fn default_scalar(d: DType) -> Scalar {
    match d {
        DType::Float => Scalar::F32(0.0),
        DType::Double => Scalar::F64(0.0),
        DType::Half => Scalar::F16(f16::ZERO),
        DType::BFloat16 => Scalar::BF16(bf16::ZERO),
        DType::Bool => Scalar::Bool(false),
        DType::String => Scalar::Bytes(Bytes::new()),
        DType::Complex64 => Scalar::C64(0.0, 0.0),
        DType::Complex128 => Scalar::C128(0.0, 0.0),
        DType::UInt32 | DType::UInt64 => Scalar::U64(0),
        DType::Resource | DType::Variant => Scalar::Opaque(Bytes::new()),
        _ if crate::minifloat::is_minifloat(d) => Scalar::Mini(d, 0),
        _ => Scalar::I64(0),
    }
}

/// Element `b` of `tensor_content` (the dtype's size in bytes, cut by the caller);
/// `None` when `b` is shorter than one element of `d`.
fn content_scalar(d: DType, b: &[u8]) -> Option<Scalar> {
    use DType::*;
    fn le<T: LeElem>(b: &[u8]) -> Option<T> {
        T::split_le(b).map(|(x, _)| x)
    }
    let byte = *b.first()?;
    let (re, im) = b.split_at(b.len() / 2);
    Some(match d {
        Float => Scalar::F32(le(b)?),
        Double => Scalar::F64(le(b)?),
        Int32 | QInt32 => Scalar::I64(le::<i32>(b)? as i64),
        Int64 => Scalar::I64(le(b)?),
        UInt8 | QUInt8 | UInt4 | UInt2 => Scalar::I64(byte as i64),
        Int8 | QInt8 | Int4 | Int2 => Scalar::I64(byte as i8 as i64),
        Int16 | QInt16 => Scalar::I64(le::<i16>(b)? as i64),
        UInt16 | QUInt16 => Scalar::I64(le::<u16>(b)? as i64),
        UInt32 => Scalar::U64(le::<u32>(b)? as u64),
        UInt64 => Scalar::U64(le(b)?),
        Bool => Scalar::Bool(byte != 0),
        Half => Scalar::F16(f16::from_bits(le(b)?)),
        BFloat16 => Scalar::BF16(bf16::from_bits(le(b)?)),
        Complex64 => Scalar::C64(le(re)?, le(im)?),
        Complex128 => Scalar::C128(le(re)?, le(im)?),
        _ if crate::minifloat::is_minifloat(d) => Scalar::Mini(d, byte),
        _ => Scalar::Byte(byte),
    })
}

/// An `int_val` / `half_val` element as TensorFlow reads it for `d`.
fn int32_scalar(d: DType, f: ValueField, x: i32) -> Scalar {
    match (d, f) {
        (DType::Half, ValueField::Half) => Scalar::F16(f16::from_bits(x as u16)),
        (DType::BFloat16, ValueField::Half) => Scalar::BF16(bf16::from_bits(x as u16)),
        _ => Scalar::I64(x as i64),
    }
}

fn field_scalar(d: DType, f: ValueField, v: &Values, i: usize) -> Option<Scalar> {
    use DType::*;
    Some(match v {
        Values::F32(e) => match (d, f) {
            (Complex64, _) => Scalar::C64(e.get(2 * i)?, e.get(2 * i + 1)?),
            // EAS carries halves as floats.
            (Half, _) => Scalar::F16(f16::from_f32(e.get(i)?)),
            // The EAS processor converts float_val to bfloat16 with TensorFlow's
            // FloatToBFloat16, which keeps the upper 16 bits (truncates), not the
            // nearest value: 3.0e38 is fed as 2.9907629905160607e38
            // (https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/bfloat16.cc).
            (BFloat16, _) => Scalar::BF16(bf16::from_bits((e.get(i)?.to_bits() >> 16) as u16)),
            _ => Scalar::F32(e.get(i)?),
        },
        Values::F64(e) => match d {
            Complex128 => Scalar::C128(e.get(2 * i)?, e.get(2 * i + 1)?),
            _ => Scalar::F64(e.get(i)?),
        },
        Values::I32(e) => int32_scalar(d, f, e.get(i)?),
        Values::I64(e) => Scalar::I64(e.get(i)?),
        Values::U32(e) => Scalar::U64(e.get(i)? as u64),
        Values::U64(e) => Scalar::U64(e.get(i)?),
        Values::Bool(e) => Scalar::Bool(*e.get(i)?),
        Values::Bytes(e) => match d {
            String => Scalar::Bytes(e.get(i)?.clone()),
            _ => Scalar::Opaque(e.get(i)?.clone()),
        },
        Values::Raw(b) if crate::minifloat::is_minifloat(d) => Scalar::Mini(d, *b.get(i)?),
        Values::Raw(b) => Scalar::Byte(*b.get(i)?),
    })
}

/// What a TF Serving request asks the server to run: which RPC (and so which request
/// message) it is. EAS messages and responses are always [`Method::Predict`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Method {
    /// `PredictRequest`: named tensors ([`Message::tensors`]).
    #[default]
    Predict,
    /// `ClassificationRequest` (a `classify_log` record): `tf.train.Example`s
    /// ([`Message::input`]).
    Classify,
    /// `RegressionRequest` (a `regress_log` record): `tf.train.Example`s.
    Regress,
    /// A bare `ClassificationRequest` or `RegressionRequest`: the two messages have the
    /// same fields with the same numbers (`model_spec` = 1, `input` = 2;
    /// tensorflow_serving/apis/classification.proto, regression.proto), so their bytes
    /// cannot tell which RPC they were made for. Inside a `PredictionLog` the log type
    /// says.
    ClassifyOrRegress,
    /// `MultiInferenceRequest` (a `multi_inference_log` record): several
    /// [`Message::tasks`] over one input.
    MultiInference,
}

impl Method {
    /// `predict`, `classify`, `regress`, `classify_or_regress`, `multi_inference`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Predict => "predict",
            Method::Classify => "classify",
            Method::Regress => "regress",
            Method::ClassifyOrRegress => "classify_or_regress",
            Method::MultiInference => "multi_inference",
        }
    }

    /// Whether the request holds `tf.train.Example`s (every method but predict).
    pub fn takes_examples(self) -> bool {
        self != Method::Predict
    }

    /// Whether it is [`Method::Predict`] (for `serde`'s `skip_serializing_if`).
    pub fn is_predict(&self) -> bool {
        *self == Method::Predict
    }

    /// The full protobuf name of the request message (a bare classify-or-regress
    /// request prints the same as either; `ClassificationRequest` is used).
    pub fn request_message(self) -> &'static str {
        match self {
            Method::Predict => "tensorflow.serving.PredictRequest",
            Method::Classify | Method::ClassifyOrRegress => {
                "tensorflow.serving.ClassificationRequest"
            }
            Method::Regress => "tensorflow.serving.RegressionRequest",
            Method::MultiInference => "tensorflow.serving.MultiInferenceRequest",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Method::Predict => "PredictRequest",
            Method::Classify => "ClassificationRequest",
            Method::Regress => "RegressionRequest",
            Method::ClassifyOrRegress => "ClassificationRequest or RegressionRequest",
            Method::MultiInference => "MultiInferenceRequest",
        })
    }
}

/// The values of one `tf.train.Feature`: the member of its `kind` oneof
/// (tensorflow/core/example/feature.proto).
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureValues {
    /// No kind set (an empty `Feature`).
    None,
    /// `bytes_list`.
    Bytes(Vec<Bytes>),
    /// `float_list`.
    Float(Vec<f32>),
    /// `int64_list`.
    Int64(Vec<i64>),
}

impl FeatureValues {
    /// `bytes`, `float`, `int64` or `none`.
    pub fn kind(&self) -> &'static str {
        match self {
            FeatureValues::None => "none",
            FeatureValues::Bytes(_) => "bytes",
            FeatureValues::Float(_) => "float",
            FeatureValues::Int64(_) => "int64",
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            FeatureValues::None => 0,
            FeatureValues::Bytes(v) => v.len(),
            FeatureValues::Float(v) => v.len(),
            FeatureValues::Int64(v) => v.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` values as [`Scalar`]s (bytes as [`Scalar::Bytes`]).
    ///
    /// ```
    /// use tfreq::FeatureValues;
    /// let v = FeatureValues::Float(vec![1.5, 2.0, 3.0]);
    /// let p: Vec<String> = v.preview(2).iter().map(|s| s.to_string()).collect();
    /// assert_eq!(p, ["1.5", "2"]);
    /// ```
    pub fn preview(&self, n: usize) -> Vec<Scalar> {
        match self {
            FeatureValues::None => Vec::new(),
            FeatureValues::Bytes(v) => v.iter().take(n).cloned().map(Scalar::Bytes).collect(),
            FeatureValues::Float(v) => v.iter().take(n).map(|&x| Scalar::F32(x)).collect(),
            FeatureValues::Int64(v) => v.iter().take(n).map(|&x| Scalar::I64(x)).collect(),
        }
    }
}

/// One named feature of an example.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// The map key.
    pub name: String,
    /// Its values.
    pub values: FeatureValues,
}

/// One `tf.train.Example`: its features by name (sorted by name, as the map's text
/// format lists them; a name given twice appears once, with the last entry's values,
/// protobuf's rule).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Example {
    /// The features, sorted by name.
    pub features: Vec<Feature>,
}

impl Example {
    /// The feature with this name.
    pub fn feature(&self, name: &str) -> Option<&Feature> {
        self.features
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.features.get(i))
    }
}

/// TF Serving's `Input` (tensorflow_serving/apis/input.proto): `example_list`, or
/// `example_list_with_context` (whose context features TF Serving merges into every
/// example).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExampleInput {
    /// `example_list_with_context` rather than `example_list`.
    pub with_context: bool,
    /// The examples, in order: one per row of the batch TensorFlow runs.
    pub examples: Vec<Example>,
    /// The context example (`example_list_with_context` only, when present).
    pub context: Option<Example>,
}

/// One task of a `MultiInferenceRequest`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InferenceTask {
    /// Its `model_spec`, when present (the signature it runs).
    pub model_spec: Option<ModelSpec>,
    /// `method_name` (`tensorflow/serving/classify`, `tensorflow/serving/regress`).
    pub method_name: String,
}

impl InferenceTask {
    /// The signature the task runs (empty `signature_name` means `serving_default`).
    pub fn signature(&self) -> &str {
        match &self.model_spec {
            Some(s) if !s.signature_name.is_empty() => &s.signature_name,
            _ => DEFAULT_SIGNATURE,
        }
    }
}

/// One decoded (or built) request or response: a `PredictRequest` / `PredictResponse`
/// of either wire format, or a TF Serving classify, regress or multi-inference request
/// ([`Message::method`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The wire format it was decoded from (or is meant for).
    pub wire: WireFormat,
    /// Request or response.
    pub kind: Kind,
    /// EAS `signature_name`; for TF Serving, `model_spec.signature_name`.
    pub signature_name: String,
    /// TF Serving's `model_spec`, when present.
    pub model_spec: Option<ModelSpec>,
    /// Inputs (request) or outputs (response), in wire order. A name given twice on the
    /// wire appears once, with the last entry's value (protobuf's rule); see
    /// [`Message::duplicate_keys`].
    pub tensors: Vec<Tensor>,
    /// `output_filter`, in order.
    pub fetches: Vec<String>,
    /// TF Serving request fields tfreq keeps but does not interpret
    /// (`predict_streamed_options`, `client_id`, `request_options`), raw.
    pub extra: Vec<(&'static str, Bytes)>,
    /// Map keys that appeared more than once (with the offset of each later entry).
    pub duplicate_keys: Vec<(String, usize)>,
    /// Top-level fields no schema knows.
    pub unknown: Vec<UnknownField>,
    /// Size of the encoded message in bytes (0 when built).
    pub size: usize,
    /// Which request it is ([`Method::Predict`] for every EAS message and response).
    pub method: Method,
    /// The `tf.train.Example` input of a classify, regress or multi-inference request
    /// (`None` when the request has no `input` field, as well as for predict).
    pub input: Option<ExampleInput>,
    /// A multi-inference request's tasks, in order.
    pub tasks: Vec<InferenceTask>,
}

impl Message {
    /// An empty message.
    pub fn new(wire: WireFormat, kind: Kind) -> Self {
        Message {
            wire,
            kind,
            signature_name: String::new(),
            model_spec: None,
            tensors: Vec::new(),
            fetches: Vec::new(),
            extra: Vec::new(),
            duplicate_keys: Vec::new(),
            unknown: Vec::new(),
            size: 0,
            method: Method::Predict,
            input: None,
            tasks: Vec::new(),
        }
    }

    /// The tensor with this name.
    pub fn tensor(&self, name: &str) -> Option<&Tensor> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The signature TensorFlow runs: TF Serving's empty name means
    /// [`DEFAULT_SIGNATURE`].
    pub fn effective_signature(&self) -> &str {
        if self.wire == WireFormat::TfServing && self.signature_name.is_empty() {
            DEFAULT_SIGNATURE
        } else {
            &self.signature_name
        }
    }

    /// Every unknown field, top-level and inside tensors.
    pub fn all_unknown(&self) -> impl Iterator<Item = &UnknownField> {
        self.unknown
            .iter()
            .chain(self.tensors.iter().flat_map(|t| t.unknown.iter()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn short_bytes_escapes() {
        use super::short_bytes;
        assert_eq!(short_bytes(b"a\nb"), r"a\nb"); // a newline
        assert_eq!(short_bytes(br"a\nb"), r"a\\nb"); // a backslash and an n
        assert_eq!(short_bytes(b"say \"hi\"\xff"), r#"say \"hi\"\xff"#);
    }

    #[test]
    fn decoded_values_compare_whole_and_floats_by_bit_pattern() {
        let t = |v: Values, f: ValueField, d: crate::DType| {
            let mut t = Tensor::new("x", d, Shape::from_sizes(&[2]));
            t.fields.push((f, v));
            t
        };
        let f32s = |v: Vec<f32>| {
            t(
                Values::F32(Elems::Vec(v)),
                ValueField::Float,
                crate::DType::Float,
            )
        };
        let i32s = |v: Vec<i32>| {
            t(
                Values::I32(Ints::Vec(v)),
                ValueField::Int,
                crate::DType::Int32,
            )
        };
        let same = |a: &Tensor, b: &Tensor| {
            a.elements(WireFormat::TfServing)
                .same_stored_run(&b.elements(WireFormat::TfServing))
        };
        assert!(same(&f32s(vec![1.0, f32::NAN]), &f32s(vec![1.0, f32::NAN])));
        assert!(!same(&f32s(vec![0.0, 1.0]), &f32s(vec![-0.0, 1.0])));
        assert!(same(&i32s(vec![3, 4]), &i32s(vec![3, 4])));
        assert!(!same(&i32s(vec![3, 4]), &i32s(vec![3, 5])));
        // Another field is not compared here (the caller reads element by element).
        assert!(!same(&i32s(vec![0, 0]), &f32s(vec![0.0, 0.0])));
    }

    use super::*;

    /// How a test run stores one tensor's values.
    #[derive(Clone, Copy, Debug)]
    enum Layout {
        /// `int_val` of DT_INT32, `half_val` of DT_HALF, `int64_val`, `uint32_val`,
        /// `uint64_val`: packed varints.
        Varint(DType, ValueField),
        /// `float_val` as a little-endian run.
        Float,
        /// `tensor_content` of DT_BOOL: any non-zero byte is true.
        BoolContent,
    }

    /// A varint as written canonically, or padded to up to ten bytes (protobuf reads
    /// both as the same number).
    fn put_padded(out: &mut Vec<u8>, v: u64, pad: usize) {
        let mut bytes = Vec::new();
        crate::wire::writer::put_varint(&mut bytes, v);
        let pad = pad.min(10 - bytes.len());
        if pad > 0 {
            *bytes.last_mut().unwrap() |= 0x80;
            bytes.extend(std::iter::repeat_n(0x80, pad - 1));
            bytes.push(0);
        }
        out.extend(bytes);
    }

    /// A tensor of shape [n] holding `values` (with each varint padded by `pads[i]`).
    fn stored(layout: Layout, values: &[u64], pads: &[usize], n: i64) -> Tensor {
        let shape = Shape::from_sizes(&[n]);
        match layout {
            Layout::Varint(d, f) => {
                let mut b = Vec::new();
                for (i, &v) in values.iter().enumerate() {
                    put_padded(&mut b, v, pads.get(i).copied().unwrap_or(0));
                }
                let p = crate::wire::reader::PackedVarints::new(Bytes::from(b), 0).unwrap();
                let v = match f {
                    ValueField::Int64 => Values::I64(Ints::Packed(p)),
                    ValueField::UInt32 => Values::U32(Ints::Packed(p)),
                    ValueField::UInt64 => Values::U64(Ints::Packed(p)),
                    _ => Values::I32(Ints::Packed(p)),
                };
                let mut t = Tensor::new("x", d, shape);
                t.fields.push((f, v));
                t
            }
            Layout::Float => {
                let f: Vec<f32> = values.iter().map(|&v| f32::from_bits(v as u32)).collect();
                let mut t = Tensor::new("x", DType::Float, shape);
                t.fields.push((ValueField::Float, Values::F32(view(&f))));
                t
            }
            Layout::BoolContent => {
                let mut t = Tensor::new("x", DType::Bool, shape);
                t.content = Some(values.iter().map(|&v| v as u8).collect::<Vec<u8>>().into());
                t
            }
        }
    }

    fn layout() -> impl proptest::strategy::Strategy<Value = Layout> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Layout::Varint(DType::Int32, ValueField::Int)),
            Just(Layout::Varint(DType::Half, ValueField::Half)),
            Just(Layout::Varint(DType::Int64, ValueField::Int64)),
            Just(Layout::Varint(DType::UInt32, ValueField::UInt32)),
            Just(Layout::Varint(DType::UInt64, ValueField::UInt64)),
            Just(Layout::Float),
            Just(Layout::BoolContent),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The byte-first comparison finds the first differing element exactly where
        /// reading every element finds it — other bytes for the same element (a padded
        /// varint, an int_val 2^32 apart, a half_val 2^16 apart, another true byte)
        /// included.
        #[test]
        fn the_first_difference_is_the_one_element_reads_find(
            layout in layout(),
            values in proptest::collection::vec(0u64..300, 1..120),
            edits in proptest::collection::vec((0usize..120, 0u8..5, 1u64..4), 0..4),
            pads in proptest::collection::vec(0usize..3, 0..120),
            n in 0i64..130,
            span in 0usize..130,
        ) {
            let a = stored(layout, &values, &[], n);
            let mut other = values.clone();
            let mut pads_b = vec![0; values.len()];
            for &(at, op, k) in &edits {
                let at = at % values.len();
                match op {
                    // Another value.
                    0 => other[at] = other[at].wrapping_add(k),
                    // The same element in other bytes.
                    1 => other[at] += k << 32,
                    2 => other[at] += k << 16,
                    3 => other[at] = if other[at] as u8 == 0 { 0 } else { 255 - k },
                    _ => pads_b[at] = pads.get(at).copied().unwrap_or(1).max(1),
                }
            }
            let b = stored(layout, &other, &pads_b, n);
            let (ea, eb) = (a.elements(WireFormat::TfServing), b.elements(WireFormat::TfServing));
            let want = (0..span.min(ea.stored).min(eb.stored))
                .find(|&i| !same_scalar(ea.stored_get(i), eb.stored_get(i)));
            proptest::prop_assert_eq!(ea.first_stored_difference(&eb, span), want);
        }
    }

    /// Runs big enough to be compared on every core and checked in pieces: a varint
    /// run whose bytes first differ past its middle in a padded but equal value, then
    /// in an equal int_val 2^32 apart, and last in a value.
    #[test]
    fn big_runs_find_the_first_difference_past_equal_elements_in_other_bytes() {
        let n = crate::par::PARALLEL_MIN / 2 + 12_345;
        let values: Vec<u64> = (0..n as u64)
            .map(|i| (i * 2_654_435_761) % 100_000)
            .collect();
        let layout = Layout::Varint(DType::Int32, ValueField::Int);
        let a = stored(layout, &values, &[], n as i64);
        let mut other = values.clone();
        let mut pads = vec![0; n];
        pads[n / 2 + 7] = 3;
        other[n / 2 + 1000] += 1 << 32;
        let b = stored(layout, &other, &pads, n as i64);
        let (ea, eb) = (
            a.elements(WireFormat::TfServing),
            b.elements(WireFormat::TfServing),
        );
        assert_eq!(ea.first_stored_difference(&eb, n), None);
        other[n - 3] += 1;
        let c = stored(layout, &other, &pads, n as i64);
        let ec = c.elements(WireFormat::TfServing);
        assert_eq!(ea.first_stored_difference(&ec, n), Some(n - 3));
        assert_eq!(ea.first_stored_difference(&ec, n - 3), None);
        assert_eq!(ea.first_stored_difference(&ea.clone(), n), None);
        // The same bytes read as another dtype are other elements.
        let mut f = Tensor::new("x", DType::Float, Shape::from_sizes(&[2]));
        f.content = Some(Bytes::from_static(&[0, 0, 128, 63, 0, 0, 0, 64]));
        let mut i = f.clone();
        i.dtype = DType::Int32.into();
        let (ef, ei) = (
            f.elements(WireFormat::TfServing),
            i.elements(WireFormat::TfServing),
        );
        assert_eq!(ef.first_stored_difference(&ei, 2), Some(0));
    }

    fn view<T: LeElem>(v: &[T]) -> Elems<T> {
        Elems::Le(le_bytes(v))
    }

    #[test]
    fn a_view_reads_back_what_was_written() {
        let f: Vec<f32> = (0..1000).map(|i| i as f32 * -0.37 + 1e-40).collect();
        let d: Vec<f64> = (0..1000).map(|i| (i as f64).sqrt() - 3.0).collect();
        let b: Vec<i8> = (0..=255u8).map(|x| x as i8).collect();
        let u: Vec<u64> = (0..1000).map(|i| u64::MAX - i * 0x0101_0101).collect();
        assert_eq!(view(&f).to_vec(), f);
        assert_eq!(view(&d).to_vec(), d);
        assert_eq!(view(&b).to_vec(), b);
        assert_eq!(view(&u).to_vec(), u);
        assert_eq!(view(&f).iter().collect::<Vec<_>>(), f);
        assert_eq!(view(&u).iter().rev().collect::<Vec<_>>(), {
            let mut r = u.clone();
            r.reverse();
            r
        });
        let e = view(&d);
        assert_eq!(e.iter().len(), 1000);
        assert_eq!(e.iter().sum::<f64>(), d.iter().sum::<f64>());
        for (i, x) in e.iter().enumerate() {
            assert_eq!(e.get(i), Some(x));
        }
        // NaN payloads and signed zeros come out bit for bit.
        let odd = [f32::from_bits(0x7fc0_0001), -0.0, f32::from_bits(1)];
        let back = view(&odd).to_vec();
        assert!(back
            .iter()
            .zip(&odd)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn a_view_of_a_partial_element_ignores_the_tail() {
        // The decoder only makes whole-element views; len() and the readers agree anyway.
        let e: Elems<f32> = Elems::Le(Bytes::from_static(&[0, 0, 128, 63, 0, 0]));
        assert_eq!(e.len(), 1);
        assert_eq!(e.to_vec(), [1.0]);
        assert_eq!(e.iter().collect::<Vec<_>>(), [1.0]);
        let empty: Elems<f64> = Elems::Le(Bytes::new());
        assert!(empty.to_vec().is_empty() && empty.iter().next().is_none());
    }

    #[test]
    fn bulk_le_writes_match_element_writes() {
        fn check<T: LeElem>(v: &[T]) {
            let mut bulk = vec![9u8];
            put_le_slice(&mut bulk, v);
            let mut each = vec![9u8];
            for &x in v {
                x.put_le(&mut each);
            }
            assert_eq!(bulk, each);
        }
        check(&[1.5f32, -0.0, f32::NAN, f32::MAX]);
        check(&[1.5f64, -2.25]);
        check(&[1i32, -1, i32::MIN]);
        check(&[u64::MAX, 7]);
        check(&[0x1234u16, 0xfffe]);
        check::<i8>(&[]);
    }
}
