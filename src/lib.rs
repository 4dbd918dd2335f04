#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analysis;
mod builder;
mod decode;
mod digits;
mod dtype;
mod encode;
mod error;
mod fields;
mod finding;
pub mod formats;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod io;
pub mod minifloat;
mod model;
#[cfg(feature = "net")]
pub mod net;
mod par;
mod pyfloat;
pub mod render;
pub mod scan;
pub mod scrub;
pub mod signature;
pub mod wire;

pub use builder::{FeedElement, FeedValues, TFRequest, TFResponse};
pub use decode::{decode, decode_as, decode_tensor, decode_with, DecodeOptions, Detection};
pub use dtype::{DType, DTypeCode, DTypeInfo, ValueField};
pub use encode::{encode, encode_tensor, TfsEncoding};
pub use error::{BuildError, Category, DecodeError, DecodeErrorKind, Error, ErrorDetail};
pub use half::{bf16, f16};
pub use model::{
    Dim, Elements, Elems, ElemsIter, Fill, Ints, IntsIter, Kind, Message, ModelSpec, RawRun,
    Scalar, Scope, Shape, Source, Tensor, UnknownField, Values, WireFormat, DEFAULT_SIGNATURE,
};
pub use num_complex::Complex;
