//! Build, decode, compare and check the protobuf requests TensorFlow model services
//! receive — Alibaba PAI-EAS TF processors and TF Serving — and their warm-up files.
//!
//! # The pipeline
//!
//! Bytes flow one way; each layer uses only the layers before it (`tests/library/layers.rs`
//! checks the imports):
//!
//! ```text
//! wire → model → decode / encode / builder → formats → analysis → render → CLI
//! ```
//!
//! - **Where bytes enter.** [`read_input`] and [`read_file`] read a file or standard
//!   input under a size cap. [`wire`] holds the two wire formats ([`WireFormat`]), the
//!   prost types generated from `proto/` and the descriptor set; [`decode()`], [`decode_as`] and
//!   [`decode_with`] turn one message's bytes into the model, detecting EAS or TF
//!   Serving and request or response. [`formats`] reads the files around messages
//!   (TFRecord `PredictionLog` warm-ups, protobuf text, REST JSON, SavedModel signatures)
//!   and says which kind a file is ([`formats::detect()`]).
//! - **The neutral model** is at the crate root: a [`Message`] of [`Tensor`]s with a
//!   [`Shape`], a [`DType`] and their [`Values`], the same for both wire formats, with no
//!   I/O and no rendering. [`TFRequest`] builds one as the EAS Python SDK does, with
//!   checks; [`encode()`] writes a model back out in either wire format.
//! - **Where verdicts are made.** [`analysis`] holds pure functions from models to
//!   findings ([`analysis::Finding`], each with a stable [`analysis::Code`]) and
//!   reports: [`analysis::diff`] (warm-up against production requests),
//!   [`analysis::check`] (a request against the model's signatures), [`analysis::lint`]
//!   and the warm-up file rules. [`scan`] reads many files and logs on worker threads
//!   into the tables of [`analysis::KeyCounts`]; [`scrub()`] blanks values out of a
//!   request.
//! - **Where text is produced.** [`render`] writes models and reports to any
//!   [`std::io::Write`]: a human summary, Python's protobuf text format, JSON and GitHub
//!   annotations, with colour only when the caller asks for it.
//! - **The command line** (another crate, `tfreq-cli` in `cli/`) parses arguments, reads and
//!   writes files, shows progress and maps errors to exit codes. The network clients
//!   (the `net` module, feature `net`) send requests to running services.
//!
//! Errors are [`Error`] ([`DecodeError`] and [`BuildError`] for the two ends).
//!
//! # Examples
//!
//! **Build** a request, as `eas_prediction.TFRequest` writes it, or for TF Serving:
//!
//! ```
//! use tfreq::{DType, TFRequest, WireFormat};
//!
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("images", &[1, 784], DType::Float, vec![0.5f32; 784])?;
//! req.add_feed("keep_rate", &[], DType::Float, vec![1.0f32])?;
//! req.add_fetch("sorted_labels");
//! let eas: Vec<u8> = req.to_bytes()?;
//! let tfs: Vec<u8> = req.to_tf_serving_bytes("seed")?;
//! assert_eq!(tfreq::decode(&eas)?.wire, WireFormat::Eas);
//! assert_eq!(tfreq::decode(&tfs)?.model_spec.unwrap().name, "seed");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Decode** a file whichever wire format wrote it:
//!
//! ```
//! use tfreq::{DType, Kind, WireFormat};
//!
//! let bytes = tfreq::read_input("tests/data/eas/spec_vector.bin".as_ref())?;
//! let msg = tfreq::decode(&bytes)?;
//! assert_eq!((msg.wire, msg.kind), (WireFormat::Eas, Kind::Request));
//! assert_eq!(msg.signature_name, "serving_default");
//! let x = &msg.tensors[0];
//! assert_eq!((x.name.as_str(), x.dtype.dtype()), ("x", Some(DType::Float)));
//! assert_eq!(x.shape.sizes(), vec![1, 2]);
//! assert_eq!(msg.fetches, ["y"]);
//! # Ok::<(), tfreq::Error>(())
//! ```
//!
//! **Diff** production traffic against a warm-up: a feed the warm-up never sent means
//! the server builds a new executor on the first such request.
//!
//! ```
//! use tfreq::analysis::{diff, DiffOptions};
//! use tfreq::analysis::{Verdict, Code};
//! use tfreq::{DType, TFRequest};
//!
//! let mut warm = TFRequest::new("serving_default");
//! warm.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])?;
//! let mut prod = warm.clone();
//! prod.add_feed("k", &[1], DType::Int32, vec![7i32])?;
//! let (warm, prod) = (tfreq::decode(&warm.to_bytes()?)?, tfreq::decode(&prod.to_bytes()?)?);
//! let report = diff(&[warm], &prod, &DiffOptions::default());
//! assert_eq!(report.verdict, Verdict::NewExecutor);
//! assert!(report.failed && report.findings().any(|f| f.code == Code::FeedAdded));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Check** a request against the model's signatures (here its GetModelMetadata JSON):
//!
//! ```
//! use tfreq::analysis::{check, CheckOptions};
//! use tfreq::analysis::{Verdict, Code};
//! use tfreq::formats::read_model;
//! use tfreq::{DType, TFRequest};
//!
//! let (model, _) = read_model("tests/data/models/seed.metadata.json".as_ref())?;
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("images", &[1, 784], DType::Int32, vec![1i32; 784])?; // the model wants DT_FLOAT
//! let report = check(&tfreq::decode(&req.to_bytes()?)?, &model, &CheckOptions::default());
//! assert_eq!(report.verdict, Verdict::Incompatible);
//! assert!(report.findings().any(|f| f.code == Code::DtypeMismatch && f.name.as_deref() == Some("images")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `net` (default): the `net` module, clients for EAS and TF Serving (gRPC and
//!   REST) over hyper and h2. `tfreq = { version = "…", default-features = false }`
//!   builds the library without them.
//! - `fuzzing`: the `fuzzing` module, the fuzz targets' bodies (for `fuzz/` and the
//!   corpus replay test); not a stable API.
#![warn(missing_docs)]
#![warn(missing_debug_implementations)]

pub mod analysis;
mod builder;
mod crc32c;
mod decode;
mod digits;
mod dtype;
mod encode;
mod error;
mod escape;
mod fields;
mod finding;
pub mod formats;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod io;
mod minifloat;
mod model;
#[cfg(feature = "net")]
pub mod net;
mod par;
mod pyfloat;
pub mod render;
pub mod scan;
mod scrub;
pub mod signature;
pub mod wire;

pub use escape::{
    escape, escape_bytes, escape_short, is_unsafe, json_string, json_write, sanitize,
};
pub use io::{
    DEFAULT_MAX_SIZE, LOG_MAP_THRESHOLD, Limited, MAP_THRESHOLD, ReadOptions, Spool, limited,
    read_file, read_from, read_input, read_input_limited,
};
pub use minifloat::{from_f64, is_minifloat, to_f32};
pub use scrub::{FillMode, ScrubError, left_out, scrub, scrub_batch};

pub use builder::{FeedElement, FeedValues, TFRequest, TFResponse};
pub use decode::{
    DecodeOptions, Detection, decode, decode_as, decode_message, decode_request, decode_tensor,
    decode_with,
};
pub use dtype::{DType, DTypeCode, DTypeInfo, ValueField};
pub use encode::{TfsEncoding, encode, encode_example, encode_tensor};
pub use error::{BuildError, Category, DecodeError, DecodeErrorKind, Error, ErrorDetail};
pub use half::{bf16, f16};
pub use model::{
    DEFAULT_SIGNATURE, Dim, Elements, Elems, ElemsIter, Example, ExampleInput, Feature,
    FeatureValues, Fill, InferenceTask, Ints, IntsIter, Kind, Message, Method, ModelSpec, RawRun,
    Scalar, Scope, Shape, Source, Tensor, UnknownField, Values, WireFormat,
};
pub use num_complex::Complex;

/// The README's Rust examples, run as doc tests (not part of the documentation).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
