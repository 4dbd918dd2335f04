//! The one dtype table.
//!
//! Every fact about a TensorFlow `DataType` that the builder, decoders, printers and
//! validators need lives in [`DType::info`]: its name as TensorFlow prints it, its
//! number, the size of one element in `tensor_content`, the typed value field that
//! holds it in a `TensorProto` and in an EAS `ArrayProto`, and whether Python's
//! `tf.make_tensor_proto` writes it as `tensor_content`.
//!
//! ```
//! use tfreq::{DType, ValueField};
//! let info = DType::Half.info();
//! assert_eq!(info.name, "DT_HALF");
//! assert_eq!(info.tf_field, ValueField::Half);
//! assert_eq!(info.eas_field, Some(ValueField::Float)); // EAS carries halves as floats
//! assert_eq!(DType::from_name("DT_INT32"), Some(DType::Int32));
//! ```

use std::fmt;

use crate::fields::{array_proto, tensor_proto};

/// A TensorFlow `DataType` (numbers 0..=33 of `types.proto`, TF 2.21).
///
/// `_REF` types and numbers no table knows are carried as a [`DTypeCode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
#[allow(missing_docs)]
pub enum DType {
    Invalid = 0,
    Float = 1,
    Double = 2,
    Int32 = 3,
    UInt8 = 4,
    Int16 = 5,
    Int8 = 6,
    String = 7,
    Complex64 = 8,
    Int64 = 9,
    Bool = 10,
    QInt8 = 11,
    QUInt8 = 12,
    QInt32 = 13,
    BFloat16 = 14,
    QInt16 = 15,
    QUInt16 = 16,
    UInt16 = 17,
    Complex128 = 18,
    Half = 19,
    Resource = 20,
    Variant = 21,
    UInt32 = 22,
    UInt64 = 23,
    Float8E5m2 = 24,
    Float8E4m3fn = 25,
    Float8E4m3fnuz = 26,
    Float8E4m3b11fnuz = 27,
    Float8E5m2fnuz = 28,
    Int4 = 29,
    UInt4 = 30,
    Int2 = 31,
    UInt2 = 32,
    Float4E2m1fn = 33,
}

/// A repeated value field of `TensorProto` or `ArrayProto`, by meaning.
///
/// The same meaning has different field numbers in the two messages; see
/// [`ValueField::tf_number`] and [`ValueField::eas_number`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueField {
    /// `float_val`
    Float,
    /// `double_val`
    Double,
    /// `int_val` (int32 elements holding every narrow integer type)
    Int,
    /// `string_val`
    String,
    /// `scomplex_val` (TensorProto only; EAS puts complex64 in `float_val`)
    SComplex,
    /// `int64_val`
    Int64,
    /// `bool_val`
    Bool,
    /// `dcomplex_val` (TensorProto only)
    DComplex,
    /// `half_val` (TensorProto only; fp16 / bf16 bit patterns as int32)
    Half,
    /// `resource_handle_val` (TensorProto only)
    ResourceHandle,
    /// `variant_val` (TensorProto only)
    Variant,
    /// `uint32_val` (TensorProto only)
    UInt32,
    /// `uint64_val` (TensorProto only)
    UInt64,
    /// `float8_val` (TensorProto only; one byte per element, a single bytes field)
    Float8,
}

impl ValueField {
    /// Every value field, in TensorProto field-number order.
    pub const ALL: [ValueField; 14] = [
        ValueField::Float,
        ValueField::Double,
        ValueField::Int,
        ValueField::String,
        ValueField::SComplex,
        ValueField::Int64,
        ValueField::Bool,
        ValueField::DComplex,
        ValueField::Half,
        ValueField::ResourceHandle,
        ValueField::Variant,
        ValueField::UInt32,
        ValueField::UInt64,
        ValueField::Float8,
    ];

    /// The field's name, as in both `.proto` files (`float_val`).
    pub fn name(self) -> &'static str {
        match self {
            ValueField::Float => "float_val",
            ValueField::Double => "double_val",
            ValueField::Int => "int_val",
            ValueField::String => "string_val",
            ValueField::SComplex => "scomplex_val",
            ValueField::Int64 => "int64_val",
            ValueField::Bool => "bool_val",
            ValueField::DComplex => "dcomplex_val",
            ValueField::Half => "half_val",
            ValueField::ResourceHandle => "resource_handle_val",
            ValueField::Variant => "variant_val",
            ValueField::UInt32 => "uint32_val",
            ValueField::UInt64 => "uint64_val",
            ValueField::Float8 => "float8_val",
        }
    }

    /// Field number in `tensorflow.TensorProto`.
    pub fn tf_number(self) -> u32 {
        match self {
            ValueField::Float => tensor_proto::FLOAT_VAL,
            ValueField::Double => tensor_proto::DOUBLE_VAL,
            ValueField::Int => tensor_proto::INT_VAL,
            ValueField::String => tensor_proto::STRING_VAL,
            ValueField::SComplex => tensor_proto::SCOMPLEX_VAL,
            ValueField::Int64 => tensor_proto::INT64_VAL,
            ValueField::Bool => tensor_proto::BOOL_VAL,
            ValueField::DComplex => tensor_proto::DCOMPLEX_VAL,
            ValueField::Half => tensor_proto::HALF_VAL,
            ValueField::ResourceHandle => tensor_proto::RESOURCE_HANDLE_VAL,
            ValueField::Variant => tensor_proto::VARIANT_VAL,
            ValueField::UInt32 => tensor_proto::UINT32_VAL,
            ValueField::UInt64 => tensor_proto::UINT64_VAL,
            ValueField::Float8 => tensor_proto::FLOAT8_VAL,
        }
    }

    /// Field number in the EAS `ArrayProto`, if it has this field.
    pub fn eas_number(self) -> Option<u32> {
        match self {
            ValueField::Float => Some(array_proto::FLOAT_VAL),
            ValueField::Double => Some(array_proto::DOUBLE_VAL),
            ValueField::Int => Some(array_proto::INT_VAL),
            ValueField::String => Some(array_proto::STRING_VAL),
            ValueField::Int64 => Some(array_proto::INT64_VAL),
            ValueField::Bool => Some(array_proto::BOOL_VAL),
            _ => None,
        }
    }

    /// The TensorProto field with this number.
    pub fn from_tf_number(n: u32) -> Option<ValueField> {
        ValueField::ALL.into_iter().find(|f| f.tf_number() == n)
    }

    /// The ArrayProto field with this number.
    pub fn from_eas_number(n: u32) -> Option<ValueField> {
        ValueField::ALL
            .into_iter()
            .find(|f| f.eas_number() == Some(n))
    }

    /// How the field's elements travel: what a reader accepts for it.
    pub(crate) fn storage(self) -> Storage {
        match self {
            ValueField::Float | ValueField::SComplex => Storage::Fixed(4),
            ValueField::Double | ValueField::DComplex => Storage::Fixed(8),
            ValueField::String | ValueField::ResourceHandle | ValueField::Variant => Storage::Bytes,
            ValueField::Float8 => Storage::Single,
            _ => Storage::Varint,
        }
    }
}

/// How a value field's elements travel on the wire ([`ValueField::storage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Fixed-size little-endian elements of this many bytes: packed (a length-delimited
    /// run) or one per fixed32 / fixed64 field.
    Fixed(usize),
    /// Varints: packed, or one per varint field.
    Varint,
    /// One length-delimited field per element.
    Bytes,
    /// One length-delimited field holding every element (a byte each).
    Single,
}

/// The two 16-bit float dtypes, whose elements travel as bit patterns in
/// `half_val` / `tensor_content` and as floats in an EAS `float_val`: the one place
/// their conversions are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Float16 {
    /// `DT_HALF` (IEEE binary16).
    Half,
    /// `DT_BFLOAT16`.
    BFloat16,
}

impl DType {
    /// How many numbers of its value field make one element: 2 for the complex
    /// dtypes (real and imaginary part, in `scomplex_val` / `dcomplex_val` or an EAS
    /// `float_val` / `double_val`), else 1.
    pub(crate) fn numbers_per_element(self) -> usize {
        match self {
            DType::Complex64 | DType::Complex128 => 2,
            _ => 1,
        }
    }
}

impl Float16 {
    /// The 16-bit dtype `d` is, if it is one.
    pub(crate) fn of(d: DType) -> Option<Float16> {
        match d {
            DType::Half => Some(Float16::Half),
            DType::BFloat16 => Some(Float16::BFloat16),
            _ => None,
        }
    }

    /// `x` rounded to this type, as its bit pattern (round to nearest even, as
    /// TensorFlow converts).
    pub(crate) fn bits(self, x: f32) -> u16 {
        match self {
            Float16::Half => half::f16::from_f32(x).to_bits(),
            Float16::BFloat16 => half::bf16::from_f32(x).to_bits(),
        }
    }

    /// The value of a bit pattern of this type (exact in f32).
    pub(crate) fn value(self, bits: u16) -> f32 {
        match self {
            Float16::Half => half::f16::from_bits(bits).to_f32(),
            Float16::BFloat16 => half::bf16::from_bits(bits).to_f32(),
        }
    }
}

/// One row of the dtype table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DTypeInfo {
    /// The dtype.
    pub dtype: DType,
    /// Name as TensorFlow prints it (`DT_FLOAT`).
    pub name: &'static str,
    /// Short name as `tf.dtypes` spells it (`float32`), used in summaries and JSON input.
    pub short: &'static str,
    /// Bytes per element in `tensor_content`; `None` for string, resource, variant.
    pub size: Option<usize>,
    /// The typed field of a `TensorProto` that holds it (C++ `Tensor::FromProto`).
    pub tf_field: ValueField,
    /// The field of an EAS `ArrayProto` that holds it (DeepRec / Java SDK convention),
    /// `None` when EAS has no `ArrayDataType` for it.
    pub eas_field: Option<ValueField>,
    /// Whether `tf.make_tensor_proto` writes more than one element as `tensor_content`.
    pub python_content: bool,
    /// Inclusive integer range for integer dtypes whose typed field is wider.
    pub int_range: Option<(i64, i64)>,
}

macro_rules! table {
    ($( $v:ident, $name:literal, $short:literal, $size:expr, $tf:ident, $eas:expr, $content:literal, $range:expr; )*) => {
        const TABLE: &[DTypeInfo] = &[
            $( DTypeInfo {
                dtype: DType::$v, name: $name, short: $short, size: $size,
                tf_field: ValueField::$tf, eas_field: $eas, python_content: $content,
                int_range: $range,
            }, )*
        ];
    };
}

use ValueField as F;
table! {
    Invalid, "DT_INVALID", "invalid", None, Float, None, false, None;
    Float, "DT_FLOAT", "float32", Some(4), Float, Some(F::Float), true, None;
    Double, "DT_DOUBLE", "float64", Some(8), Double, Some(F::Double), true, None;
    Int32, "DT_INT32", "int32", Some(4), Int, Some(F::Int), true, Some((i32::MIN as i64, i32::MAX as i64));
    UInt8, "DT_UINT8", "uint8", Some(1), Int, Some(F::Int), true, Some((0, 255));
    Int16, "DT_INT16", "int16", Some(2), Int, Some(F::Int), true, Some((-32768, 32767));
    Int8, "DT_INT8", "int8", Some(1), Int, Some(F::Int), true, Some((-128, 127));
    String, "DT_STRING", "string", None, String, Some(F::String), false, None;
    Complex64, "DT_COMPLEX64", "complex64", Some(8), SComplex, Some(F::Float), false, None;
    Int64, "DT_INT64", "int64", Some(8), Int64, Some(F::Int64), true, None;
    Bool, "DT_BOOL", "bool", Some(1), Bool, Some(F::Bool), false, None;
    QInt8, "DT_QINT8", "qint8", Some(1), Int, Some(F::Int), true, Some((-128, 127));
    QUInt8, "DT_QUINT8", "quint8", Some(1), Int, Some(F::Int), true, Some((0, 255));
    QInt32, "DT_QINT32", "qint32", Some(4), Int, Some(F::Int), true, Some((i32::MIN as i64, i32::MAX as i64));
    BFloat16, "DT_BFLOAT16", "bfloat16", Some(2), Half, Some(F::Float), true, None;
    QInt16, "DT_QINT16", "qint16", Some(2), Int, Some(F::Int), true, Some((-32768, 32767));
    QUInt16, "DT_QUINT16", "quint16", Some(2), Int, Some(F::Int), true, Some((0, 65535));
    UInt16, "DT_UINT16", "uint16", Some(2), Int, Some(F::Int), false, Some((0, 65535));
    Complex128, "DT_COMPLEX128", "complex128", Some(16), DComplex, Some(F::Double), false, None;
    Half, "DT_HALF", "float16", Some(2), Half, Some(F::Float), true, None;
    Resource, "DT_RESOURCE", "resource", None, ResourceHandle, None, false, None;
    Variant, "DT_VARIANT", "variant", None, Variant, None, false, None;
    UInt32, "DT_UINT32", "uint32", Some(4), UInt32, None, true, None;
    UInt64, "DT_UINT64", "uint64", Some(8), UInt64, None, true, None;
    Float8E5m2, "DT_FLOAT8_E5M2", "float8_e5m2", Some(1), Float8, None, true, None;
    Float8E4m3fn, "DT_FLOAT8_E4M3FN", "float8_e4m3fn", Some(1), Float8, None, true, None;
    Float8E4m3fnuz, "DT_FLOAT8_E4M3FNUZ", "float8_e4m3fnuz", Some(1), Float8, None, true, None;
    Float8E4m3b11fnuz, "DT_FLOAT8_E4M3B11FNUZ", "float8_e4m3b11fnuz", Some(1), Float8, None, true, None;
    Float8E5m2fnuz, "DT_FLOAT8_E5M2FNUZ", "float8_e5m2fnuz", Some(1), Float8, None, true, None;
    Int4, "DT_INT4", "int4", Some(1), Int, None, false, Some((-8, 7));
    UInt4, "DT_UINT4", "uint4", Some(1), Int, None, false, Some((0, 15));
    Int2, "DT_INT2", "int2", Some(1), Int, None, false, Some((-2, 1));
    UInt2, "DT_UINT2", "uint2", Some(1), Int, None, false, Some((0, 3));
    Float4E2m1fn, "DT_FLOAT4_E2M1FN", "float4_e2m1fn", Some(1), Float8, None, true, None;
}

impl DType {
    /// Every dtype, by number.
    pub fn all() -> impl Iterator<Item = DType> {
        TABLE.iter().map(|i| i.dtype)
    }

    /// This dtype's row of the table.
    pub fn info(self) -> &'static DTypeInfo {
        // The table is indexed by number and has every variant (checked by a test).
        &TABLE[self as usize]
    }

    /// The dtype with this number (0..=33), if any.
    pub fn from_number(n: i32) -> Option<DType> {
        usize::try_from(n)
            .ok()
            .and_then(|i| TABLE.get(i))
            .map(|i| i.dtype)
    }

    /// The dtype with this TensorFlow name (`DT_FLOAT`) or short name (`float32`).
    pub fn from_name(name: &str) -> Option<DType> {
        TABLE
            .iter()
            .find(|i| i.name == name || i.short == name)
            .map(|i| i.dtype)
    }

    /// Name as TensorFlow prints it (`DT_FLOAT`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Whether the EAS `ArrayDataType` enum has this dtype (numbers 0..=21).
    pub fn eas_can_carry(self) -> bool {
        self.info().eas_field.is_some()
    }

    /// The number on the wire.
    pub fn number(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype number as found on the wire: a known [`DType`], a `_REF` type
/// (number + 100), or a number no table knows. Printing follows protobuf:
/// a known name, else the number.
///
/// ```
/// use tfreq::{DType, DTypeCode};
/// assert_eq!(DTypeCode(1).to_string(), "DT_FLOAT");
/// assert_eq!(DTypeCode(101).to_string(), "DT_FLOAT_REF");
/// assert_eq!(DTypeCode(77).to_string(), "77");
/// assert_eq!(DTypeCode(3).dtype(), Some(DType::Int32));
/// // Debug names the dtype too:
/// assert_eq!(format!("{:?}", DTypeCode(7)), "DTypeCode(7 = DT_STRING)");
/// assert_eq!(format!("{:?}", DTypeCode(77)), "DTypeCode(77)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DTypeCode(pub i32);

impl fmt::Debug for DTypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.dtype().is_some() || self.ref_of().is_some() {
            write!(f, "DTypeCode({} = {self})", self.0)
        } else {
            write!(f, "DTypeCode({})", self.0)
        }
    }
}

impl DTypeCode {
    /// The dtype, when the number is a plain (non-`_REF`) known one.
    pub fn dtype(self) -> Option<DType> {
        DType::from_number(self.0)
    }

    /// For a `_REF` number (101..=133), the dtype it refers to.
    pub fn ref_of(self) -> Option<DType> {
        if self.0 > 100 {
            DType::from_number(self.0 - 100).filter(|d| *d != DType::Invalid)
        } else {
            None
        }
    }

    /// Whether the EAS `ArrayDataType` enum names this number.
    pub fn eas_known(self) -> bool {
        (0..=21).contains(&self.0)
    }
}

impl From<DType> for DTypeCode {
    fn from(d: DType) -> Self {
        DTypeCode(d as i32)
    }
}

impl fmt::Display for DTypeCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.dtype(), self.ref_of()) {
            (Some(d), _) => f.write_str(d.name()),
            (None, Some(d)) => write!(f, "{}_REF", d.name()),
            _ => write!(f, "{}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_number() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.dtype as usize, i, "{}", row.name);
            assert_eq!(DType::from_name(row.name), Some(row.dtype));
            assert_eq!(DType::from_number(i as i32), Some(row.dtype));
        }
        assert_eq!(TABLE.len(), 34);
        assert_eq!(DType::from_number(34), None);
        assert_eq!(DType::from_number(-1), None);
    }

    #[test]
    fn eas_carries_exactly_array_data_type() {
        for d in DType::all() {
            let n = d.number();
            assert_eq!(
                d.eas_can_carry(),
                (1..=19).contains(&n),
                "{d}: EAS ArrayDataType has 0..=21, values for 1..=19"
            );
        }
    }

    #[test]
    fn ref_names() {
        assert_eq!(DTypeCode(133).to_string(), "DT_FLOAT4_E2M1FN_REF");
        assert_eq!(DTypeCode(100).to_string(), "100");
        assert_eq!(DTypeCode(134).to_string(), "134");
    }

    #[test]
    fn field_numbers_round_trip() {
        for f in ValueField::ALL {
            assert_eq!(ValueField::from_tf_number(f.tf_number()), Some(f));
            if let Some(n) = f.eas_number() {
                assert_eq!(ValueField::from_eas_number(n), Some(f));
            }
        }
    }
}
