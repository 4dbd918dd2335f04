//! `tf.train.Example` and the classify / regress / multi-inference inputs built on it.

use bytes::Bytes;

use super::tensor::Scalar;
use super::{DEFAULT_SIGNATURE, ModelSpec};

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
