//! The executor key: what TensorFlow compiles a new executor for (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/direct_session.cc>).
//!
//! `DirectSession::GetOrCreateExecutors` joins the feed names and the fetch names, each
//! list sorted, into its cache key, **without removing repeats**: two requests with the
//! same signature and names share an executor whatever their order, but fetching
//! `a, a, b` and fetching `a, b` are two executors (the open-source EAS processor passes
//! `output_filter` to `Session::Run` as given,
//! <https://github.com/DeepRec-AI/DeepRec/blob/main/serving/processor/serving/message_coding.cc>;
//! TF Serving refuses a repeated alias instead, "duplicate output tensor alias" in
//! <https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/predict_util.cc>,
//! which `lint` names as `DUPLICATE_FETCH`). Feeds come from a protobuf map, whose last
//! entry wins, so feed names never repeat. One session serves one model (TF Serving
//! loads a session per model version), so the model a request names is part of its key.
//! Shapes and dtypes are not in the key (but XLA and TF Serving batching specialise on
//! shapes: [`ShapeKey`] adds them).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{DEFAULT_SIGNATURE, Message, Method, WireFormat};

/// Model + signature + feed-name set + sorted fetch names (repeats kept).
///
/// ```
/// use tfreq::{analysis::ExecutorKey, DType, TFRequest};
/// let mut a = TFRequest::new("s");
/// a.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("p").add_fetch("q");
/// let mut b = TFRequest::new("s");
/// b.add_feed("x", &[4], DType::Float, vec![0.0f32; 4])?.add_fetch("q").add_fetch("p");
/// assert_eq!(ExecutorKey::of(a.message()), ExecutorKey::of(b.message()));
/// // Fetching "p" twice is another executor: TensorFlow keeps the repeat in its key.
/// b.add_fetch("p");
/// assert_ne!(ExecutorKey::of(a.message()), ExecutorKey::of(b.message()));
/// assert_eq!(ExecutorKey::of(b.message()).fetches, ["p", "p", "q"]);
/// # Ok::<(), tfreq::BuildError>(())
/// ```
///
/// A classify, regress or multi-inference request runs its signature's fixed feeds and
/// fetches: TF Serving feeds the serialized examples to the signature's one input and
/// fetches the signature's outputs (`RunClassification`/`RunRegression`/`RunMultiInference`
/// in tensorflow_serving/servables/tensorflow/classifier.cc, regressor.cc,
/// multi_inference.cc), whatever the examples' features. Its key is the method and
/// the signature (for multi-inference, every task's signature, sorted and joined by
/// `,`), with no feed or fetch names: the tensor names are the model's, which the
/// request does not carry. Two classify requests with other features share the key.
///
/// ```
/// let b = std::fs::read("tests/data/examples/requests/classify_valid.pb")?;
/// let m = tfreq::decode_request(b.into(), tfreq::Method::Classify)?;
/// let k = tfreq::analysis::ExecutorKey::of(&m);
/// assert_eq!(k.to_string(), "model \"tf1_examples\", classify serving_default: (the signature's serialized-examples input) -> (its outputs)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExecutorKey {
    /// The model the request names (TF Serving's `model_spec.name`); `None` when it names
    /// none (every EAS request: an EAS service serves one model). Left out of JSON when
    /// `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The request's method; every key of a predict request is [`Method::Predict`]
    /// (left out of JSON).
    #[serde(default, skip_serializing_if = "Method::is_predict")]
    pub method: Method,
    /// The signature TensorFlow runs (TF Serving's empty name resolved to `serving_default`).
    pub signature: String,
    /// Input names.
    pub feeds: BTreeSet<String>,
    /// Output names, sorted, a name fetched twice listed twice (TensorFlow's cache key
    /// keeps repeats); empty with `fetch_all` for TF Serving's empty `output_filter`.
    pub fetches: Vec<String>,
    /// TF Serving with an empty `output_filter`: every output of the signature.
    pub fetch_all: bool,
}

impl ExecutorKey {
    /// The key of a request.
    pub fn of(msg: &Message) -> Self {
        if msg.method.takes_examples() {
            return if msg.method == Method::MultiInference {
                Self::of_examples(
                    model_of(msg),
                    msg.method,
                    msg.tasks.iter().map(|t| t.signature()),
                )
            } else {
                Self::of_examples(model_of(msg), msg.method, [signature_of(msg)])
            };
        }
        ExecutorKey {
            model: model_of(msg),
            method: Method::Predict,
            signature: signature_of(msg).to_string(),
            feeds: msg.tensors.iter().map(|t| t.name.clone()).collect(),
            fetches: sorted(msg.fetches.iter().cloned()),
            fetch_all: msg.wire == WireFormat::TfServing && msg.fetches.is_empty(),
        }
    }

    /// The key of a classify, regress or multi-inference request (`method`) of `model`
    /// whose model specs name `signatures` (a multi-inference request's: one a task):
    /// each empty one is `serving_default`, and they are sorted, each once, and joined by
    /// commas. Also made from a record's bytes alone (src/scan/fingerprint/examples.rs).
    pub(crate) fn of_examples<'a>(
        model: Option<String>,
        method: Method,
        signatures: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let signatures: BTreeSet<&str> = signatures
            .into_iter()
            .map(|s| if s.is_empty() { DEFAULT_SIGNATURE } else { s })
            .collect();
        ExecutorKey {
            model,
            method,
            signature: signatures.into_iter().collect::<Vec<_>>().join(","),
            feeds: BTreeSet::new(),
            fetches: Vec::new(),
            fetch_all: true,
        }
    }

    /// The same key without its model: what a warm-up record warms whatever model name
    /// it carries (TF Serving ignores `model_spec.name` in warm-up records and runs them
    /// on the model whose directory holds the file).
    pub fn without_model(&self) -> ExecutorKey {
        ExecutorKey {
            model: None,
            ..self.clone()
        }
    }
}

/// The model a request names: `model_spec.name` when present and not empty; for a
/// multi-inference request, its first task's (TF Serving requires every task to name
/// the same model: "All ModelSpecs in a MultiInferenceRequest must access the same
/// model name" in tensorflow_serving/apis/inference.proto, refused otherwise).
fn model_of(msg: &Message) -> Option<String> {
    let spec = if msg.method == Method::MultiInference {
        msg.tasks.iter().find_map(|t| t.model_spec.as_ref())
    } else {
        msg.model_spec.as_ref()
    };
    spec.map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

/// The signature a request runs, by one rule for every command: the one it names, or
/// `serving_default` when it names none. TF Serving resolves an empty name so
/// (`kDefaultServingSignatureDefKey`); EAS processors do not document theirs, so `diff`
/// and `check` note an EAS request without a name (`SIGNATURE_DEFAULTED`).
///
/// ```
/// let m = tfreq::decode(&std::fs::read("tests/data/eas/no_signature.bin")?)?;
/// assert_eq!(m.signature_name, "");
/// assert_eq!(tfreq::analysis::signature_of(&m), "serving_default");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn signature_of(msg: &Message) -> &str {
    match msg.effective_signature() {
        "" => DEFAULT_SIGNATURE,
        s => s,
    }
}

/// Names sorted as TensorFlow sorts them for its cache key, repeats kept.
pub fn sorted(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().collect();
    v.sort_unstable();
    v
}

impl fmt::Display for ExecutorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(model) = &self.model {
            write!(f, "model {model:?}, ")?;
        }
        if self.method.takes_examples() {
            return write!(
                f,
                "{} {}: (the signature's serialized-examples input) -> (its outputs)",
                self.method.as_str(),
                self.signature
            );
        }
        let fetches = if self.fetch_all {
            "(all outputs)".to_string()
        } else {
            self.fetches.join(", ")
        };
        let feeds = self.feeds.iter().cloned().collect::<Vec<_>>().join(", ");
        write!(f, "{}: {{{}}} -> {{{}}}", self.signature, feeds, fetches)
    }
}

/// An [`ExecutorKey`] plus every feed's dtype and shape: what shape-specialising
/// compilers (XLA, TF Serving batching, PAI-Blade) key on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ShapeKey {
    /// The executor key.
    pub key: ExecutorKey,
    /// Feed name → (dtype name, dims).
    pub shapes: BTreeMap<String, (String, Vec<i64>)>,
}

impl ShapeKey {
    /// The feed name a classify, regress or multi-inference request's shape key gives
    /// the one tensor TF Serving makes of its examples: a `DT_STRING [n]` tensor of the
    /// serialized examples, n the number of examples
    /// (`InputToSerializedExampleTensor` in tensorflow_serving/servables/tensorflow/util.cc).
    pub const SERIALIZED_EXAMPLES: &'static str = "(serialized examples)";

    /// The shape key of a classify, regress or multi-inference request of executor key
    /// `key` and `n` examples: the key and the `DT_STRING [n]` tensor of its examples.
    pub(crate) fn of_examples(key: ExecutorKey, n: i64) -> Self {
        ShapeKey {
            key,
            shapes: BTreeMap::from([(
                Self::SERIALIZED_EXAMPLES.to_string(),
                ("DT_STRING".to_string(), vec![n]),
            )]),
        }
    }

    /// The shape key of a request. A classify, regress or multi-inference request's is
    /// its executor key and the `DT_STRING [n]` tensor of its n examples
    /// ([`ShapeKey::SERIALIZED_EXAMPLES`]).
    ///
    /// ```
    /// let b = std::fs::read("tests/data/examples/requests/classify_valid_context.pb")?;
    /// let m = tfreq::decode_request(b.into(), tfreq::Method::Classify)?;
    /// let k = tfreq::analysis::ShapeKey::of(&m);
    /// assert_eq!(k.shapes["(serialized examples)"], ("DT_STRING".to_string(), vec![3]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn of(msg: &Message) -> Self {
        if msg.method.takes_examples() {
            let n = msg.input.as_ref().map_or(0, |i| i.examples.len());
            return Self::of_examples(ExecutorKey::of(msg), n as i64);
        }
        ShapeKey {
            key: ExecutorKey::of(msg),
            shapes: msg
                .tensors
                .iter()
                .map(|t| (t.name.clone(), (t.dtype.to_string(), t.shape.sizes())))
                .collect(),
        }
    }
}
