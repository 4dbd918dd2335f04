//! Value storage: fixed-width elements viewed on the wire bytes, varint lists, and the
//! typed value fields of a tensor.

use std::fmt;

use bytes::Bytes;

use crate::dtype::ValueField;

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
