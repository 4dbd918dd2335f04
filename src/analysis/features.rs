//! A classify or regress request's `tf.train.Example`s against the features the
//! signature's `ParseExample` reads ([`crate::signature::ExampleSpec`]), as TensorFlow's
//! example parser judges them (`tensorflow/core/util/example_proto_fast_parsing.cc`),
//! with its words:
//!
//! - a dense feature without a default that an example lacks: `FEATURE_MISSING`,
//!   "Feature: x (data type: float) is required but could not be found.";
//! - a feature of another list kind: `FEATURE_KIND`, "Key: x, Index: 0.  Data types
//!   don't match. Data type: int64 but expected type: float" (a VarLen feature: "Expected
//!   type: string, Actual type: float");
//! - a fixed-length feature with another number of values: `FEATURE_LENGTH`, `Key: x,
//!   Index: 1.  Number of float values != expected.  Values size: 3 but output shape:
//!   [2]`.
//!
//! Each example is read as TF Serving sends it: the context example's features, then
//! the example's own, which replace a context feature of the same name
//! (tensorflow_serving/servables/tensorflow/util.cc serializes context and example
//! together, and protobuf merges the map). `Index` counts examples from 0.
//!
//! ```
//! use tfreq::analysis::check_examples;
//! use tfreq::signature::{DenseFeature, ExampleSpec};
//! use tfreq::{DType, Example, ExampleInput, Feature, FeatureValues};
//! let spec = ExampleSpec {
//!     dense: vec![DenseFeature { key: "x".into(), dtype: DType::Float.into(), shape: vec![2], default: None }],
//!     ..Default::default()
//! };
//! let input = ExampleInput {
//!     examples: vec![Example { features: vec![Feature { name: "x".into(), values: FeatureValues::Int64(vec![1, 2]) }] }],
//!     ..Default::default()
//! };
//! let found = check_examples(&input, &spec);
//! assert_eq!(found[0].code.as_str(), "FEATURE_KIND");
//! assert_eq!(found[0].message, "Key: x, Index: 0.  Data types don't match. Data type: int64 but expected type: float");
//! ```

use crate::analysis::{Code, Finding, Severity};
use crate::dtype::{DType, DTypeCode};
use crate::model::{Example, ExampleInput, Feature, FeatureValues};
use crate::signature::ExampleSpec;

/// Every problem TensorFlow's parser would find in `input`'s examples under `spec`, in
/// example order.
pub fn check_examples(input: &ExampleInput, spec: &ExampleSpec) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, ex) in input.examples.iter().enumerate() {
        let get = |key: &str| -> Option<&Feature> {
            ex.feature(key).or_else(|| {
                input
                    .context
                    .as_ref()
                    .and_then(|c: &Example| c.feature(key))
            })
        };
        for d in &spec.dense {
            let want = kind_of(d.dtype);
            match get(&d.key) {
                None => {
                    if d.default.is_none() {
                        out.push(
                            Finding::new(
                                Code::FeatureMissing,
                                Severity::Error,
                                format!(
                                    "Feature: {} (data type: {want}) is required but could not be found.",
                                    d.key
                                ),
                            )
                            .name(d.key.clone()),
                        );
                    }
                }
                Some(f) => {
                    let got = kind_name(&f.values);
                    if got != Some(want) {
                        out.push(
                            Finding::new(
                                Code::FeatureKind,
                                Severity::Error,
                                format!(
                                    "Key: {}, Index: {i}.  Data types don't match. Data type: {} but expected type: {want}",
                                    d.key,
                                    got.unwrap_or("none")
                                ),
                            )
                            .name(d.key.clone()),
                        );
                        continue;
                    }
                    let n = f.values.len();
                    let expected: Option<i64> = d
                        .shape
                        .iter()
                        .try_fold(1i64, |a, &x| (x >= 0).then(|| a.saturating_mul(x)));
                    if let Some(e) = expected
                        && n as i64 != e
                    {
                        let dims: Vec<String> = d.shape.iter().map(|x| x.to_string()).collect();
                        out.push(
                                Finding::new(
                                    Code::FeatureLength,
                                    Severity::Error,
                                    format!(
                                        "Key: {}, Index: {i}.  Number of {want} values != expected.  Values size: {n} but output shape: [{}]",
                                        d.key,
                                        dims.join(",")
                                    ),
                                )
                                .name(d.key.clone()),
                            );
                    }
                }
            }
        }
        for v in spec.sparse.iter().chain(&spec.ragged) {
            let want = kind_of(v.dtype);
            if let Some(f) = get(&v.key) {
                match kind_name(&f.values) {
                    Some(got) if got != want => out.push(
                        Finding::new(
                            Code::FeatureKind,
                            Severity::Error,
                            format!(
                                "Key: {}, Index: {i}.  Data types don't match. Expected type: {want}, Actual type: {got}",
                                v.key
                            ),
                        )
                        .name(v.key.clone()),
                    ),
                    _ => {}
                }
            }
        }
    }
    out
}

/// The parser's name of a feature dtype: `float`, `int64` or `string`.
pub(crate) fn kind_of(d: DTypeCode) -> &'static str {
    match d.dtype() {
        Some(DType::Float) => "float",
        Some(DType::Int64) => "int64",
        _ => "string",
    }
}

/// The parser's name of a list kind: `float`, `int64`, `string` (a `bytes_list`),
/// `None` for a feature with no kind.
fn kind_name(v: &FeatureValues) -> Option<&'static str> {
    match v {
        FeatureValues::Float(_) => Some("float"),
        FeatureValues::Int64(_) => Some("int64"),
        FeatureValues::Bytes(_) => Some("string"),
        FeatureValues::None => None,
    }
}
