//! The wire layer, the crate's leaf (it uses no other module of the crate): the two
//! wire formats and message kinds, generated prost types for every `.proto` in
//! `proto/`, the descriptor pool the text printer walks, the hand-written
//! reader/writer the request codec uses, and their error ([`error::DecodeError`]).
//!
//! The prost types and the descriptor set are committed in `generated/`, written by
//! `tools/protogen` (`cargo run -p tfreq-protogen` after a change under `proto/`;
//! `.ci/run` fails when they are not what `proto/` gives), so no build of the crate
//! compiles a protobuf compiler.

pub(crate) mod error;
pub(crate) mod format;
pub(crate) mod reader;
pub(crate) mod writer;

pub(crate) use format::{Kind, WireFormat};
pub use reader::{PackedVarints, RECURSION_LIMIT, VarintIter, WireValue};
/// Writing protobuf wire bytes by hand (varints, tags, length-delimited fields), for
/// hand-made or deliberately malformed messages; the encoder uses the same functions.
pub use writer::{put_bytes_field, put_len_header, put_varint, put_varint_field};

use std::sync::OnceLock;

use prost_reflect::DescriptorPool;

/// EAS types (`proto/eas/tf_predict.proto`; package `tfreq.eas` here, none upstream).
#[allow(missing_docs, clippy::all)]
pub mod eas {
    include!("generated/tfreq.eas.rs");
}

/// TensorFlow types (`TensorProto`, `DataType`, SavedModel subset).
#[allow(missing_docs, clippy::all)]
pub mod tf {
    include!("generated/tensorflow.rs");

    /// TF Serving types (`PredictRequest`, `ModelSpec`, `PredictionLog`).
    pub mod serving {
        include!("generated/tensorflow.serving.rs");
    }
}

pub use tf::serving as tfs;

/// `google.protobuf.Any`: a message's type URL and its bytes (what TF Serving's
/// `GetModelMetadataResponse.metadata` holds).
#[derive(Clone, PartialEq, Eq, ::prost::Message)]
pub struct Any {
    /// `type.googleapis.com/tensorflow.serving.SignatureDefMap`.
    #[prost(string, tag = "1")]
    pub type_url: String,
    /// The message's bytes.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: bytes::Bytes,
}

/// The encoded `FileDescriptorSet` of `proto/`.
pub const DESCRIPTOR_SET: &[u8] = include_bytes!("generated/descriptors.bin");

/// The descriptor pool of `proto/` (built once).
///
/// ```
/// let pool = tfreq::wire::pool();
/// assert!(pool.get_message_by_name("tensorflow.serving.PredictRequest").is_some());
/// assert!(pool.get_message_by_name("tfreq.eas.PredictRequest").is_some());
/// ```
pub fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        // build.rs wrote these bytes by encoding the FileDescriptorSet protox had
        // just compiled and checked from proto/, so they always decode; an empty pool
        // in their place would turn every lookup into a silent "unknown message".
        // Every test that prints text or reads JSON goes through here.
        DescriptorPool::decode(DESCRIPTOR_SET)
            .expect("build.rs embeds the FileDescriptorSet protox compiled from proto/")
    })
}

/// The full protobuf name of a wire format's message.
pub fn message_name(wire: WireFormat, kind: Kind) -> &'static str {
    match (wire, kind) {
        (WireFormat::Eas, Kind::Request) => "tfreq.eas.PredictRequest",
        (WireFormat::Eas, Kind::Response) => "tfreq.eas.PredictResponse",
        (WireFormat::TfServing, Kind::Request) => "tensorflow.serving.PredictRequest",
        (WireFormat::TfServing, Kind::Response) => "tensorflow.serving.PredictResponse",
    }
}
