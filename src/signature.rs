//! The neutral model of a model's signatures, whichever file they were read from
//! (a SavedModel's `saved_model.pb`, TF Serving's GetModelMetadata JSON, or the text
//! `saved_model_cli show --all` prints: see [`crate::formats::read_model`]).
//!
//! A [`ModelSignatures`] holds one [`MetaGraph`] per tag set; each maps signature keys
//! (`serving_default`) to a [`Signature`], whose inputs and outputs map **aliases** (what
//! TF Serving requests use) to a [`TensorSpec`] carrying the **tensor name** (`x:0`,
//! what `Session::Run` and the EAS processors use), dtype and shape.
//!
//! ```
//! use std::collections::BTreeMap;
//! use tfreq::signature::{Signature, TensorSpec};
//! use tfreq::DType;
//! let mut sig = Signature::new("serving_default");
//! sig.inputs.insert("x".into(), TensorSpec::new("serving_default_x:0", DType::Float, Some(vec![-1, 784])));
//! let (alias, _, by) = sig.find_input("serving_default_x:0").unwrap();
//! assert_eq!(alias, "x");
//! assert_eq!(by.as_str(), "tensor-name");
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Serialize, Serializer};

use crate::dtype::DTypeCode;

/// The tag set TF Serving loads unless told otherwise (`--saved_model_tags`).
pub const SERVE_TAG: &str = "serve";

/// Every meta graph of a model, with its signatures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModelSignatures {
    /// One entry per meta graph (tag set), in file order.
    pub meta_graphs: Vec<MetaGraph>,
}

/// One meta graph: a tag set and its signatures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MetaGraph {
    /// The tags (`["serve"]`).
    pub tags: Vec<String>,
    /// Signature key → signature.
    pub signatures: BTreeMap<String, Signature>,
}

/// One `SignatureDef`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Signature {
    /// The signature key (`serving_default`).
    pub key: String,
    /// `method_name` (`tensorflow/serving/predict`; empty for `__saved_model_init_op`).
    pub method_name: String,
    /// Input alias → tensor.
    pub inputs: BTreeMap<String, TensorSpec>,
    /// Output alias → tensor.
    pub outputs: BTreeMap<String, TensorSpec>,
    /// Input aliases that have a default value (TF Serving fills them when a request
    /// omits them). Sorted.
    pub defaults: Vec<String>,
    /// The `tf.Example` features the graph parses from the signature's serialized
    /// input (`ParseExample` / `ParseExampleV2`), when the model file has the graph (a
    /// `saved_model.pb`; metadata JSON and `saved_model_cli` text do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub examples: Option<ExampleSpec>,
}

/// The features a `ParseExample` (or `ParseExampleV2`) node reads from each serialized
/// `tf.Example`: what a classify or regress request's examples must carry
/// (<https://www.tensorflow.org/api_docs/python/tf/io/parse_example>).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExampleSpec {
    /// Fixed-length features (`tf.io.FixedLenFeature`), in the node's order.
    pub dense: Vec<DenseFeature>,
    /// Variable-length features (`tf.io.VarLenFeature`), read as sparse tensors.
    pub sparse: Vec<VarLenFeature>,
    /// Ragged features (`tf.io.RaggedFeature`).
    pub ragged: Vec<VarLenFeature>,
}

/// One fixed-length feature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenseFeature {
    /// The feature's key in the example.
    pub key: String,
    /// Its dtype (`DT_FLOAT` from a `float_list`, `DT_INT64` from an `int64_list`,
    /// `DT_STRING` from a `bytes_list`).
    #[serde(serialize_with = "dtype_name")]
    pub dtype: DTypeCode,
    /// Its shape in one example (`[2]`: two values).
    pub shape: Vec<i64>,
    /// The default an example without the feature gets, as text (`0`, `[1, 2]`);
    /// `None`: the feature is required ("Feature: x (data type: float) is required but
    /// could not be found").
    pub default: Option<String>,
}

/// One variable-length or ragged feature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VarLenFeature {
    /// The feature's key in the example.
    pub key: String,
    /// Its values' dtype.
    #[serde(serialize_with = "dtype_name")]
    pub dtype: DTypeCode,
}

/// One `TensorInfo`: the tensor an alias stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TensorSpec {
    /// Tensor name in the graph (`x:0`); empty when the source does not give one
    /// (sparse and composite tensors).
    pub name: String,
    /// dtype.
    #[serde(serialize_with = "dtype_name")]
    pub dtype: DTypeCode,
    /// Dims (-1 = any size); `None` when the rank is unknown.
    pub shape: Option<Vec<i64>>,
}

fn dtype_name<S: Serializer>(d: &DTypeCode, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(d)
}

/// Whether a request name matched a signature alias or a tensor name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MatchedBy {
    /// The signature alias (`x`): what TF Serving takes.
    Alias,
    /// The graph tensor name (`x:0`): what EAS processors pass to `Session::Run`.
    TensorName,
}

impl MatchedBy {
    /// `alias` or `tensor-name`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Alias => "alias",
            MatchedBy::TensorName => "tensor-name",
        }
    }
}

impl TensorSpec {
    /// A tensor spec.
    pub fn new(
        name: impl Into<String>,
        dtype: impl Into<DTypeCode>,
        shape: Option<Vec<i64>>,
    ) -> Self {
        TensorSpec {
            name: name.into(),
            dtype: dtype.into(),
            shape,
        }
    }

    /// The shape as `saved_model_cli` prints it: `unknown_rank`, `()`, `(-1)`, `(-1, 784)`.
    ///
    /// ```
    /// use tfreq::signature::TensorSpec;
    /// use tfreq::DType;
    /// assert_eq!(TensorSpec::new("", DType::Float, Some(vec![-1])).shape_text(), "(-1)");
    /// assert_eq!(TensorSpec::new("", DType::Float, None).shape_text(), "unknown_rank");
    /// ```
    pub fn shape_text(&self) -> String {
        match &self.shape {
            None => "unknown_rank".to_string(),
            Some(d) => {
                let parts: Vec<String> = d.iter().map(|x| x.to_string()).collect();
                format!("({})", parts.join(", "))
            }
        }
    }
}

impl Signature {
    /// An empty signature with this key.
    pub fn new(key: impl Into<String>) -> Self {
        Signature {
            key: key.into(),
            ..Default::default()
        }
    }

    /// The input a request name refers to: by alias first, then by tensor name.
    pub fn find_input(&self, name: &str) -> Option<(&str, &TensorSpec, MatchedBy)> {
        find(&self.inputs, name)
    }

    /// The output a request name refers to: by alias first, then by tensor name.
    pub fn find_output(&self, name: &str) -> Option<(&str, &TensorSpec, MatchedBy)> {
        find(&self.outputs, name)
    }

    /// Whether the input alias has a default value.
    pub fn has_default(&self, alias: &str) -> bool {
        self.defaults.iter().any(|d| d == alias)
    }
}

fn find<'a>(
    map: &'a BTreeMap<String, TensorSpec>,
    name: &str,
) -> Option<(&'a str, &'a TensorSpec, MatchedBy)> {
    if let Some((k, v)) = map.get_key_value(name) {
        return Some((k.as_str(), v, MatchedBy::Alias));
    }
    map.iter()
        .find(|(_, v)| !v.name.is_empty() && v.name == name)
        .map(|(k, v)| (k.as_str(), v, MatchedBy::TensorName))
}

impl MetaGraph {
    /// Whether this meta graph's tag set contains `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.iter().any(|t| t == tag)
    }

    /// The tags joined as `saved_model_cli` prints them (`serve, gpu`).
    pub fn tag_set(&self) -> String {
        self.tags.join(", ")
    }
}

impl ModelSignatures {
    /// The meta graph whose tag set contains `tag` (the first one, as TensorFlow's
    /// loader picks for a one-tag set).
    pub fn meta_graph(&self, tag: &str) -> Option<&MetaGraph> {
        self.meta_graphs.iter().find(|m| m.has_tag(tag))
    }

    /// Every tag set, for error messages (`'serve'`, `'serve, gpu'`).
    pub fn tag_sets(&self) -> Vec<String> {
        self.meta_graphs.iter().map(|m| m.tag_set()).collect()
    }
}

impl fmt::Display for TensorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.dtype, self.shape_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn alias_wins_over_tensor_name() {
        let mut s = Signature::new("s");
        s.inputs
            .insert("a".into(), TensorSpec::new("b", DType::Float, None));
        s.inputs
            .insert("b".into(), TensorSpec::new("c", DType::Float, None));
        assert_eq!(s.find_input("b").map(|x| x.0), Some("b"));
        assert_eq!(
            s.find_input("c").map(|x| (x.0, x.2)),
            Some(("b", MatchedBy::TensorName))
        );
        assert!(s.find_input("").is_none());
    }
}
