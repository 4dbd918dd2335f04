#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod analysis;
pub mod builder;
pub mod decode;
pub mod digits;
pub mod dtype;
pub mod encode;
pub mod error;
pub(crate) mod fields;
pub mod finding;
pub mod formats;
#[doc(hidden)]
pub mod fuzzing;
pub mod io;
pub mod minifloat;
pub mod model;
#[cfg(feature = "net")]
pub mod net;
pub mod par;
pub mod pyfloat;
pub mod render;
pub mod scan;
pub mod scrub;
pub mod signature;
pub mod wire;

pub use builder::{FeedElement, FeedValues, TFRequest, TFResponse};
pub use decode::{decode, decode_as, decode_tensor, decode_with, DecodeOptions, Detection};
pub use dtype::{DType, DTypeCode, DTypeInfo, ValueField};
pub use encode::{encode, TfsEncoding};
pub use error::{BuildError, Category, DecodeError, DecodeErrorKind, Error, ErrorDetail};
pub use half::{bf16, f16};
pub use model::{
    Dim, Elements, Elems, ElemsIter, Fill, Ints, IntsIter, Kind, Message, ModelSpec, Scalar, Scope,
    Shape, Source, Tensor, UnknownField, Values, WireFormat, DEFAULT_SIGNATURE,
};
pub use num_complex::Complex;
