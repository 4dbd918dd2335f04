//! TensorFlow's reading rules: which stored values a tensor's elements are
//! (`tensor_content` wins, short lists repeat their last value, empty lists read as defaults).

use bytes::Bytes;
use half::{bf16, f16};

use super::shape::Shape;
use super::tensor::{RawRun, Scalar, Source, Tensor};
use super::values::{Elems, Ints, LeElem, Values, VarintElem};
use crate::dtype::{DType, DTypeCode, ValueField};
use crate::wire::WireFormat;

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
                    if let Ok(index) = crate::wire::reader::count_varints(&x[..cut], 0)
                        && let Some(found) = runs.first_difference(cut, index, span)
                    {
                        return found;
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
