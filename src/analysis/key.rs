//! The executor key: what TensorFlow compiles a new executor for (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/direct_session.cc>).
//!
//! `DirectSession` keys its executors on the **sets** of feed and fetch names, so two
//! requests with the same signature and name sets share an executor whatever their
//! order; shapes and dtypes are not in the key (but XLA and TF Serving batching
//! specialise on shapes: [`ShapeKey`] adds them).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{Message, WireFormat};

/// Signature + feed-name set + fetch-name set.
///
/// ```
/// use tfreq::{analysis::key::ExecutorKey, DType, TFRequest};
/// let mut a = TFRequest::new("s");
/// a.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("p").add_fetch("q");
/// let mut b = TFRequest::new("s");
/// b.add_feed("x", &[4], DType::Float, vec![0.0f32; 4])?.add_fetch("q").add_fetch("p");
/// assert_eq!(ExecutorKey::of(a.message()), ExecutorKey::of(b.message()));
/// # Ok::<(), tfreq::BuildError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExecutorKey {
    /// The signature TensorFlow runs (TF Serving's empty name resolved to `serving_default`).
    pub signature: String,
    /// Input names.
    pub feeds: BTreeSet<String>,
    /// Output names; empty with `fetch_all` for TF Serving's empty `output_filter`.
    pub fetches: BTreeSet<String>,
    /// TF Serving with an empty `output_filter`: every output of the signature.
    pub fetch_all: bool,
}

impl ExecutorKey {
    /// The key of a request.
    pub fn of(msg: &Message) -> Self {
        ExecutorKey {
            signature: msg.effective_signature().to_string(),
            feeds: msg.tensors.iter().map(|t| t.name.clone()).collect(),
            fetches: msg.fetches.iter().cloned().collect(),
            fetch_all: msg.wire == WireFormat::TfServing && msg.fetches.is_empty(),
        }
    }
}

impl fmt::Display for ExecutorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let fetches = if self.fetch_all {
            "(all outputs)".to_string()
        } else {
            join(&self.fetches)
        };
        write!(
            f,
            "{}: {{{}}} -> {{{}}}",
            self.signature,
            join(&self.feeds),
            fetches
        )
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
    /// The shape key of a request.
    pub fn of(msg: &Message) -> Self {
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
