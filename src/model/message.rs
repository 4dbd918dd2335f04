//! One request or response ([`Message`]) and the RPC it asks for ([`Method`]).

use std::fmt;

use bytes::Bytes;

use super::example::{ExampleInput, InferenceTask};
use super::tensor::{Tensor, UnknownField};
use super::{DEFAULT_SIGNATURE, ModelSpec};
use crate::wire::{Kind, WireFormat};

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
