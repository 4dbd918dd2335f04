//! Warm-up requests made from a model's signatures alone, for a model that has no
//! production traffic yet (`tfreq warmup --model DIR`).
//!
//! [`synthesize`] writes one request per (signature, batch size): a `PredictRequest` for
//! a predict signature, a `ClassificationRequest` / `RegressionRequest` holding
//! `tf.train.Example`s for a classify / regress signature (TF Serving's `method_name`s,
//! tensorflow_serving/servables/tensorflow/classifier.cc, regressor.cc). What it could not
//! fill, and every guess it made, is a [`SynthNote`]; nothing is left out silently.
//!
//! - **Shapes** come from the signature: fixed dims are kept, a first dim of -1 takes each
//!   batch size, any other -1 takes [`SynthOptions::dims`] or [`DEFAULT_DIM`], an unknown
//!   rank takes [`SynthOptions::dims`] or `[batch]` (each guess noted). A signature none of
//!   whose inputs has a -1 first dim gets one request, whatever the batch sizes.
//! - **Values** come from [`SynthOptions::fill`], as `tfreq scrub` fills them
//!   ([`crate::scrub::FillMode`]): every numeric dtype (half, bfloat16, unsigned,
//!   complex, bool, float8 included).
//! - **Strings are not guessed.** A string input the graph parses with `ParseExample`
//!   ([`crate::signature::ExampleSpec`], read from a `saved_model.pb`) gets serialized
//!   `tf.train.Example`s built from the spec ([`example_for`]); any other string input
//!   takes [`SynthOptions::values`], and without them its signature is left out with a
//!   note naming the input.
//! - Inputs with a signature default are left out of TF Serving requests: TF Serving
//!   fills them in (predict_util.cc `GetInputValues`, docs/keys.md).
//! - Fetches: none for TF Serving (an empty `output_filter` fetches every output), every
//!   output alias for EAS (its processor refuses a warm-up without fetches).
//!
//! ```
//! use tfreq::analysis::{synthesize, SynthOptions};
//! use tfreq::formats::read_model;
//! let (m, _) = read_model("tests/data/models/two_sigs".as_ref())?;
//! let opts = SynthOptions { batch_sizes: vec![1, 8], ..SynthOptions::default() };
//! let s = synthesize(m.meta_graph("serve").unwrap(), &opts);
//! assert_eq!(s.messages.len(), 4); // 2 signatures x 2 batch sizes
//! assert_eq!(s.messages[1].tensors[0].shape.sizes(), [8, 28, 28, 1]); // predict_images
//! assert!(s.messages[1].fetches.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::dtype::{DType, DTypeCode};
use crate::model::{
    Example, ExampleInput, Feature, FeatureValues, Kind, Message, Method, ModelSpec, Shape, Tensor,
    WireFormat,
};
use crate::scrub::FillMode;
use crate::signature::{ExampleSpec, MetaGraph, Signature};

/// The size an unknown dimension after the first takes when [`SynthOptions::dims`] names
/// no shape for its input.
pub const DEFAULT_DIM: i64 = 1;

/// The largest batch size written: TF Serving's `max_batch_size` rarely passes a few
/// thousand, and a warm-up request is held in memory whole.
pub const MAX_BATCH: u64 = 1 << 16;

/// The most elements one input of a request may hold (a `--dim` or batch size that
/// asks for more is refused rather than filled).
pub const MAX_ELEMENTS: u64 = 1 << 26;

use crate::analysis::warmup::MAX_RECORDS;

/// The signature TensorFlow adds to TF2 exports to run the model's initialisers: it has
/// no inputs and cannot be called (`check` says `SIGNATURE_NOT_CALLABLE`).
const INIT_OP: &str = "__saved_model_init_op";

const PREDICT: &str = "tensorflow/serving/predict";
const CLASSIFY: &str = "tensorflow/serving/classify";
const REGRESS: &str = "tensorflow/serving/regress";

/// What to synthesize.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    /// The signatures to warm, by key; empty: every signature that can be called.
    pub signatures: Vec<String>,
    /// The batch sizes (the first dim of -1, the number of examples); empty means `[1]`.
    pub batch_sizes: Vec<u64>,
    /// How numbers are filled.
    pub fill: FillMode,
    /// Shapes by input alias or tensor name, for unknown dims and ranks: a -1 in one
    /// takes the batch size.
    pub dims: BTreeMap<String, Vec<i64>>,
    /// Values of string inputs that are not parsed as examples, by input alias or tensor
    /// name (`signature/alias` for one signature only): repeated to fill the tensor.
    pub values: BTreeMap<String, Vec<Bytes>>,
    /// The wire format of the requests (EAS: no tf.Example requests, explicit fetches).
    pub wire: WireFormat,
    /// The `model_spec.name` of TF Serving requests (none by default: the warm-up loader
    /// does not read it).
    pub model_name: Option<String>,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            signatures: Vec::new(),
            batch_sizes: vec![1],
            fill: FillMode::Zeros,
            dims: BTreeMap::new(),
            values: BTreeMap::new(),
            wire: WireFormat::TfServing,
            model_name: None,
        }
    }
}

/// One thing [`synthesize`] guessed or could not do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SynthNote {
    /// The signature key.
    pub signature: String,
    /// The input it is about, when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Whether the signature (or some of its requests) was left out because of it; a
    /// note without is a guess the requests carry (a default dim, a left-out default).
    pub left_out: bool,
    /// The sentence.
    pub message: String,
    /// The option that would change it, when one would; the message does not name
    /// it, so each front end words it in its own terms. Not serialized.
    #[serde(skip)]
    pub hint: Option<SynthHint>,
}

impl SynthNote {
    /// Sets the option that would change it ([`SynthNote::hint`]).
    fn hint(mut self, hint: SynthHint) -> Self {
        self.hint = Some(hint);
        self
    }
}

/// An option of [`SynthOptions`] that would change a [`SynthNote`]'s outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SynthHint {
    /// A shape for the note's input in [`SynthOptions::dims`] chooses it.
    Dims,
    /// Values for the note's input in [`SynthOptions::values`].
    Values,
    /// A smaller shape in [`SynthOptions::dims`], or smaller batch sizes.
    Smaller,
}

/// The requests [`synthesize`] made and its notes.
#[derive(Debug, Clone, Default)]
pub struct Synthesized {
    /// The requests, by signature key and then batch size.
    pub messages: Vec<Message>,
    /// Guesses and what was left out.
    pub notes: Vec<SynthNote>,
}

impl Synthesized {
    /// The signature keys the requests cover, in order.
    pub fn signatures(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for m in &self.messages {
            let s = m.effective_signature().to_string();
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }
}

/// One request per (signature, batch size) for every signature of `mg` that can be
/// filled (see the module docs), at most [`MAX_RECORDS`].
pub fn synthesize(mg: &MetaGraph, opts: &SynthOptions) -> Synthesized {
    let mut out = Synthesized::default();
    let mut sizes: Vec<u64> = Vec::new();
    for &b in &opts.batch_sizes {
        if b == 0 || b > MAX_BATCH {
            out.notes.push(note(
                "",
                None,
                true,
                format!("batch size {b} left out: a warm-up batch is 1 to {MAX_BATCH} rows (a classify or regress request of no examples fails the warm-up: \"Input is empty.\")"),
            ));
        } else if !sizes.contains(&b) {
            sizes.push(b);
        }
    }
    if sizes.is_empty() {
        sizes.push(1);
    }
    for want in &opts.signatures {
        if !mg.signatures.contains_key(want) {
            out.notes.push(SynthNote {
                signature: want.clone(),
                input: None,
                left_out: true,
                message: format!(
                    "the model has no signature {want:?} (it has {})",
                    mg.signatures
                        .keys()
                        .map(|k| format!("{k:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                hint: None,
            });
        }
    }
    for (key, sig) in &mg.signatures {
        if !opts.signatures.is_empty() && !opts.signatures.contains(key) {
            continue;
        }
        if key == INIT_OP || sig.outputs.is_empty() {
            if !opts.signatures.is_empty() || key != INIT_OP {
                out.notes.push(note(
                    key,
                    None,
                    true,
                    "the signature has no outputs to fetch (TensorFlow's initialiser signature): it cannot be called",
                ));
            }
            continue;
        }
        match signature_requests(sig, &sizes, opts, &mut out.notes) {
            Ok(msgs) => out.messages.extend(msgs),
            Err(n) => out.notes.push(n),
        }
    }
    // A dims or values name that no input answers to is a typo, not a choice.
    let names = |key: &str, sig: &Signature| -> Vec<String> {
        sig.inputs
            .iter()
            .flat_map(|(a, t)| [a.clone(), t.name.clone(), format!("{key}/{a}")])
            .collect()
    };
    let known: Vec<String> = mg
        .signatures
        .iter()
        .flat_map(|(k, s)| names(k, s))
        .collect();
    for (what, given) in [
        ("a shape", opts.dims.keys().collect::<Vec<_>>()),
        ("values", opts.values.keys().collect()),
    ] {
        for name in given.into_iter().filter(|n| !known.contains(n)) {
            out.notes.push(SynthNote {
                signature: String::new(),
                input: Some(name.clone()),
                left_out: false,
                message: format!(
                    "{what} given for {name:?}, which is no input of the model's signatures: not used"
                ),
                hint: None,
            });
        }
    }
    if out.messages.len() > MAX_RECORDS {
        let cut = out.messages.split_off(MAX_RECORDS);
        out.notes.push(SynthNote {
            signature: cut[0].effective_signature().to_string(),
            input: None,
            left_out: true,
            message: format!(
                "{} requests left out: TF Serving's warm-up runs at most {MAX_RECORDS} records (the model fails to load past that); give fewer batch sizes or signatures",
                cut.len()
            ),
            hint: None,
        });
    }
    out
}

fn note(sig: &str, input: Option<&str>, left_out: bool, msg: impl Into<String>) -> SynthNote {
    SynthNote {
        signature: sig.to_string(),
        input: input.map(str::to_string),
        left_out,
        message: msg.into(),
        hint: None,
    }
}

/// One input of a predict request: its shape (-1 standing for the batch size), and the
/// string values given for it (numbers are filled).
struct Plan<'a> {
    alias: &'a str,
    dtype: DType,
    shape: Vec<i64>,
    values: Option<Vec<Bytes>>,
}

/// The requests of one signature, or the note that says why it has none.
fn signature_requests(
    sig: &Signature,
    sizes: &[u64],
    opts: &SynthOptions,
    notes: &mut Vec<SynthNote>,
) -> Result<Vec<Message>, SynthNote> {
    let key = sig.key.as_str();
    let method = match sig.method_name.as_str() {
        CLASSIFY => Method::Classify,
        REGRESS => Method::Regress,
        _ => Method::Predict,
    };
    if method != Method::Predict {
        return examples_requests(sig, method, sizes, opts);
    }
    if !sig.method_name.is_empty() && sig.method_name != PREDICT {
        notes.push(note(
            key,
            None,
            false,
            format!(
                "method_name {:?}: written as a predict request",
                sig.method_name
            ),
        ));
    }
    // Each input's plan: its shape (with -1 standing for the batch size) and values.
    let mut plans: Vec<Plan> = Vec::new();
    for (alias, spec) in &sig.inputs {
        if opts.wire == WireFormat::TfServing && sig.has_default(alias) {
            notes.push(note(
                key,
                Some(alias),
                false,
                format!("input {alias:?} left out: the signature has a default for it, which TF Serving fills in"),
            ));
            continue;
        }
        let Some(dtype) = spec.dtype.dtype().filter(|d| fillable(*d)) else {
            return Err(note(
                key,
                Some(alias),
                true,
                format!(
                    "input {alias:?} is {}, which a request cannot carry values of",
                    spec.dtype
                ),
            ));
        };
        let given = opts
            .dims
            .get(alias)
            .or_else(|| opts.dims.get(&spec.name))
            .or_else(|| opts.dims.get(&format!("{key}/{alias}")));
        let shape = match (given, &spec.shape) {
            (Some(d), Some(known)) if !agrees(d, known) => {
                return Err(note(
                    key,
                    Some(alias),
                    true,
                    format!(
                        "input {alias:?} {}: the shape given for it, {d:?}, changes its rank or a fixed dim (a request of that shape fails, and fails the model's warm-up); a given shape fills unknown dims only",
                        spec.shape_text()
                    ),
                ));
            }
            (Some(d), _) => d.clone(),
            (None, None) => {
                notes.push(
                    note(
                        key,
                        Some(alias),
                        false,
                        format!("input {alias:?} has an unknown rank: sent as [batch]"),
                    )
                    .hint(SynthHint::Dims),
                );
                vec![-1]
            }
            (None, Some(d)) => {
                let mut d = d.clone();
                let mut guessed = false;
                for x in d.iter_mut().skip(1) {
                    if *x < 0 {
                        *x = DEFAULT_DIM;
                        guessed = true;
                    }
                }
                if guessed {
                    notes.push(note(
                        key,
                        Some(alias),
                        false,
                        format!(
                            "input {alias:?} {}: its unknown dims after the first sent as {DEFAULT_DIM}",
                            spec.shape_text()
                        ),
                    ).hint(SynthHint::Dims));
                }
                d
            }
        };
        let values = if dtype == DType::String {
            match string_values(sig, alias, &spec.name, opts) {
                Some(v) => Some(v),
                None => {
                    return Err(note(
                        key,
                        Some(alias),
                        true,
                        if sig.examples.is_some() {
                            format!("input {alias:?} is parsed as tf.Examples, and one example of the graph's dense_shapes would hold more than {MAX_ELEMENTS} values")
                        } else {
                            format!(
                                "input {alias:?} is a string not known to hold tf.Examples (a saved_model.pb says which inputs ParseExample reads), and strings are not guessed"
                            )
                        },
                    ).hint(SynthHint::Values))
                }
            }
        } else {
            None
        };
        plans.push(Plan {
            alias,
            dtype,
            shape,
            values,
        });
    }
    let batched = plans.iter().any(|p| p.shape.contains(&-1));
    let sizes: &[u64] = if batched { sizes } else { &sizes[..1] };
    if !batched && opts.batch_sizes.len() > 1 {
        notes.push(note(
            key,
            None,
            false,
            "no input has an unknown first dim: one request, whatever the batch sizes",
        ));
    }
    let mut msgs = Vec::with_capacity(sizes.len());
    for &b in sizes {
        let b = i64::try_from(b).map_err(|_| note(key, None, true, "batch size too large"))?;
        let mut template = new_message(key, opts);
        if opts.wire == WireFormat::Eas {
            template.fetches = sig.outputs.keys().cloned().collect();
        }
        let mut strings: Vec<(usize, Tensor)> = Vec::new();
        for (i, p) in plans.iter().enumerate() {
            let (alias, dtype, shape, values) = (p.alias, &p.dtype, &p.shape, &p.values);
            let dims: Vec<i64> = shape.iter().map(|&d| if d < 0 { b } else { d }).collect();
            let shape = Shape::from_sizes(&dims);
            let Some(n) = shape
                .num_elements()
                .filter(|&n| n <= MAX_ELEMENTS)
                .and_then(|n| usize::try_from(n).ok())
            else {
                return Err(note(
                    key,
                    Some(alias),
                    true,
                    format!("input {alias:?}: shape {dims:?} holds more than {MAX_ELEMENTS} elements (or none can be counted)"),
                ).hint(SynthHint::Smaller));
            };
            if let Some(v) = values {
                let vals: Vec<Bytes> = (0..n).map(|k| v[k % v.len()].clone()).collect();
                let mut t = crate::builder::make_tensor(
                    alias.to_string(),
                    &dims,
                    DType::String,
                    crate::builder::FeedValues::Str(vals),
                )
                .map_err(|e| note(key, Some(alias), true, e.to_string()))?;
                if opts.wire == WireFormat::Eas {
                    crate::builder::to_eas_fields(&mut t);
                }
                strings.push((i, t));
                continue;
            }
            // Zeros as tensor_content, then filled as `scrub` fills a request.
            let width = dtype.info().size.unwrap_or(1);
            let mut t = Tensor::new(alias.to_string(), DTypeCode::from(*dtype), shape);
            t.content = Some(Bytes::from(vec![0u8; n.saturating_mul(width)]));
            template.tensors.push(t);
        }
        template.wire = WireFormat::TfServing;
        let mut m = crate::scrub::scrub(&template, opts.fill)
            .map_err(|e| note(key, None, true, e.to_string()))?;
        m.wire = opts.wire;
        if opts.wire == WireFormat::Eas {
            for t in &mut m.tensors {
                crate::builder::to_eas_fields(t);
            }
        }
        for (i, t) in strings {
            m.tensors.insert(i.min(m.tensors.len()), t);
        }
        msgs.push(m);
    }
    Ok(msgs)
}

/// The values of a string input: serialized examples when the graph parses it, else
/// the ones given.
fn string_values(
    sig: &Signature,
    alias: &str,
    name: &str,
    opts: &SynthOptions,
) -> Option<Vec<Bytes>> {
    let given = opts
        .values
        .get(&format!("{}/{alias}", sig.key))
        .or_else(|| opts.values.get(alias))
        .or_else(|| opts.values.get(name))
        .filter(|v| !v.is_empty());
    if let Some(v) = given {
        return Some(v.clone());
    }
    let spec = sig.examples.as_ref()?;
    Some(vec![Bytes::from(crate::encode::encode_example(
        &example_for(spec, opts.fill)?,
    ))])
}

fn fillable(d: DType) -> bool {
    !matches!(d, DType::Invalid | DType::Resource | DType::Variant)
}

fn new_message(key: &str, opts: &SynthOptions) -> Message {
    let mut m = Message::new(opts.wire, Kind::Request);
    m.signature_name = key.to_string();
    if opts.wire == WireFormat::TfServing {
        m.model_spec = Some(ModelSpec {
            name: opts.model_name.clone().unwrap_or_default(),
            signature_name: key.to_string(),
            ..ModelSpec::default()
        });
    }
    m
}

/// A classify or regress signature's requests: `Input`s of `b` examples built from the
/// spec the graph parses.
fn examples_requests(
    sig: &Signature,
    method: Method,
    sizes: &[u64],
    opts: &SynthOptions,
) -> Result<Vec<Message>, SynthNote> {
    let key = sig.key.as_str();
    if opts.wire == WireFormat::Eas {
        return Err(note(
            key,
            None,
            true,
            format!(
                "a {} signature takes tf.Examples, which EAS requests cannot carry",
                method.as_str()
            ),
        ));
    }
    if let Some((alias, t)) = sig
        .inputs
        .iter()
        .find(|(_, t)| t.dtype.dtype() != Some(DType::String))
    {
        return Err(note(
            key,
            Some(alias),
            true,
            format!(
                "a {} signature's input is fed serialized tf.Examples, and {alias:?} is {}: the request would fail (and fail the model's warm-up)",
                method.as_str(),
                t.dtype
            ),
        ));
    }
    let Some(spec) = &sig.examples else {
        return Err(note(
            key,
            sig.inputs.keys().next().map(String::as_str),
            true,
            format!(
                "a {} signature takes tf.Examples, and the model file does not say which features they need (a saved_model.pb does; metadata JSON and saved_model_cli text do not)",
                method.as_str()
            ),
        ));
    };
    let too_big = |what: String| {
        note(
            key,
            None,
            true,
            format!(
                "{what} would hold more than {MAX_ELEMENTS} values (the graph's dense_shapes): give smaller batch sizes"
            ),
        )
    };
    let (Some(ex), Some(per)) = (example_for(spec, opts.fill), example_elements(spec)) else {
        return Err(too_big("one tf.Example the graph parses".into()));
    };
    let mut out = Vec::with_capacity(sizes.len());
    for &b in sizes {
        if per.checked_mul(b).is_none_or(|n| n > MAX_ELEMENTS) {
            return Err(too_big(format!("a request of {b} tf.Examples")));
        }
        let mut m = new_message(key, opts);
        m.method = method;
        m.input = Some(ExampleInput {
            with_context: false,
            examples: vec![ex.clone(); usize::try_from(b).unwrap_or(1)],
            context: None,
        });
        out.push(m);
    }
    Ok(out)
}

/// One `tf.train.Example` that satisfies `spec`: every required dense feature with its
/// dtype and length, one value for each sparse and ragged feature, defaulted dense
/// features left out (the graph fills them). Numbers follow `fill` (random: the seed's
/// first value); a string feature holds the fill's number as text (`0`, `1`), which
/// both a vocabulary lookup and a number parse accept.
///
/// ```
/// use tfreq::analysis::example_for;
/// use tfreq::formats::read_model;
/// use tfreq::FillMode;
/// let (m, _) = read_model("tests/data/examples/models/tf1_examples".as_ref())?;
/// let spec = m.meta_graphs[0].signatures["serving_default"].examples.clone().unwrap();
/// let e = example_for(&spec, FillMode::Constant(1.0)).expect("a small example");
/// let names: Vec<&str> = e.features.iter().map(|f| f.name.as_str()).collect();
/// assert_eq!(names, ["tags", "x"]); // age has a default
/// assert_eq!(e.feature("x").unwrap().values.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn example_for(spec: &ExampleSpec, fill: FillMode) -> Option<Example> {
    example_elements(spec)?;
    let num = match fill {
        FillMode::Zeros => 0.0,
        FillMode::Constant(v) => v,
        FillMode::Random { seed } => (crate::scrub::Rng(seed).next() % 10) as f64,
    };
    let values = |d: DTypeCode, n: usize| match d.dtype() {
        Some(DType::Float) => FeatureValues::Float(vec![num as f32; n]),
        Some(DType::Int64) => FeatureValues::Int64(vec![num as i64; n]),
        _ => FeatureValues::Bytes(vec![Bytes::from(format!("{}", num as i64)); n]),
    };
    let mut features: Vec<Feature> = Vec::new();
    for d in spec.dense.iter().filter(|d| d.default.is_none()) {
        let n = dense_elements(&d.shape).and_then(|n| usize::try_from(n).ok())?;
        features.push(Feature {
            name: d.key.clone(),
            values: values(d.dtype, n),
        });
    }
    for v in spec.sparse.iter().chain(&spec.ragged) {
        features.push(Feature {
            name: v.key.clone(),
            values: values(v.dtype, 1),
        });
    }
    features.sort_by(|a, b| a.name.cmp(&b.name));
    features.dedup_by(|a, b| a.name == b.name);
    Some(Example { features })
}

/// The values one dense feature of `shape` holds in [`example_for`]'s example (an
/// unknown dim as 1), `None` when the product overflows.
fn dense_elements(shape: &[i64]) -> Option<u64> {
    shape
        .iter()
        .try_fold(1u64, |n, &x| n.checked_mul(u64::try_from(x.max(1)).ok()?))
}

/// The values [`example_for`]'s example of `spec` holds, `None` past [`MAX_ELEMENTS`]
/// (a graph's `dense_shapes` are read from the model file, whatever they say).
fn example_elements(spec: &ExampleSpec) -> Option<u64> {
    let mut n = (spec.sparse.len() + spec.ragged.len()) as u64;
    for d in spec.dense.iter().filter(|d| d.default.is_none()) {
        n = n.checked_add(dense_elements(&d.shape)?)?;
    }
    (n <= MAX_ELEMENTS).then_some(n)
}

/// Whether `given` (from `--dim`) keeps `known`'s rank and fixed dims (a -1 in either
/// is free).
fn agrees(given: &[i64], known: &[i64]) -> bool {
    given.len() == known.len()
        && given
            .iter()
            .zip(known)
            .all(|(&g, &k)| k < 0 || g < 0 || g == k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::{DenseFeature, TensorSpec};

    fn meta(sig: Signature) -> MetaGraph {
        MetaGraph {
            tags: vec!["serve".into()],
            signatures: [(sig.key.clone(), sig)].into_iter().collect(),
        }
    }

    fn sig_with(inputs: &[(&str, DType, Option<Vec<i64>>)]) -> Signature {
        let mut s = Signature::new("s");
        s.method_name = PREDICT.into();
        for (a, d, shape) in inputs {
            s.inputs.insert(
                a.to_string(),
                TensorSpec::new(format!("{a}:0"), *d, shape.clone()),
            );
        }
        s.outputs
            .insert("y".into(), TensorSpec::new("y:0", DType::Float, None));
        s
    }

    #[test]
    fn a_plain_string_input_leaves_its_signature_out_and_names_it() {
        let s = sig_with(&[("q", DType::String, Some(vec![-1]))]);
        let r = synthesize(&meta(s.clone()), &SynthOptions::default());
        assert!(r.messages.is_empty());
        assert_eq!(r.notes.len(), 1);
        assert_eq!(r.notes[0].input.as_deref(), Some("q"));
        assert!(r.notes[0].left_out);
        let mut opts = SynthOptions::default();
        opts.values
            .insert("q".into(), vec![Bytes::from_static(b"hi")]);
        opts.batch_sizes = vec![3];
        let r = synthesize(&meta(s), &opts);
        assert_eq!(r.messages.len(), 1);
        let e = r.messages[0].tensors[0].elements(WireFormat::TfServing);
        assert_eq!(e.get(2).map(|v| v.to_string()).as_deref(), Some("\"hi\""));
    }

    #[test]
    fn shapes_batch_defaults_and_guesses() {
        let mut s = sig_with(&[
            ("a", DType::Half, Some(vec![-1, -1, 3])),
            ("b", DType::UInt32, None),
            ("k", DType::Float, Some(vec![])),
        ]);
        s.defaults = vec!["k".into()];
        let opts = SynthOptions {
            batch_sizes: vec![2, 4],
            fill: FillMode::Constant(1.0),
            ..SynthOptions::default()
        };
        let r = synthesize(&meta(s), &opts);
        assert_eq!(r.messages.len(), 2);
        let m = &r.messages[1];
        let names: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]); // k has a default
        assert_eq!(m.tensors[0].shape.sizes(), [4, DEFAULT_DIM, 3]);
        assert_eq!(m.tensors[1].shape.sizes(), [4]);
        let e = m.tensors[1].elements(WireFormat::TfServing);
        assert_eq!(e.get(3).map(|v| v.to_string()).as_deref(), Some("1"));
        // Three guesses noted: the default left out, a -1 dim, an unknown rank.
        assert_eq!(
            r.notes.iter().filter(|n| !n.left_out).count(),
            3,
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn fixed_shapes_give_one_request_and_eas_fetches_every_output() {
        let s = sig_with(&[("a", DType::Int8, Some(vec![2, 2]))]);
        let opts = SynthOptions {
            batch_sizes: vec![1, 8],
            wire: WireFormat::Eas,
            ..SynthOptions::default()
        };
        let r = synthesize(&meta(s), &opts);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.messages[0].fetches, ["y"]);
        assert_eq!(r.messages[0].tensors[0].shape.sizes(), [2, 2]);
    }

    #[test]
    fn at_most_the_loaders_records_and_the_rest_is_named() {
        let s = sig_with(&[("a", DType::Float, Some(vec![-1]))]);
        let opts = SynthOptions {
            batch_sizes: (0..=MAX_RECORDS as u64 + 5).collect(),
            ..SynthOptions::default()
        };
        let r = synthesize(&meta(s), &opts);
        assert_eq!(r.messages.len(), MAX_RECORDS);
        assert!(
            r.notes[0].message.starts_with("batch size 0 left out"),
            "{:?}",
            r.notes
        );
        let last = r.notes.last().unwrap();
        assert!(
            last.left_out && last.message.starts_with("5 requests left out"),
            "{last:?}"
        );
    }

    #[test]
    fn a_dim_that_changes_a_known_shape_leaves_the_signature_out() {
        let s = sig_with(&[("a", DType::Float, Some(vec![-1, 3]))]);
        let with = |d: Vec<i64>| {
            let mut o = SynthOptions::default();
            o.dims.insert("a".into(), d);
            synthesize(&meta(s.clone()), &o)
        };
        // A fixed dim changed, or the rank: left out, the input named.
        for bad in [vec![-1, 4], vec![2, 3, 1], vec![5]] {
            let r = with(bad.clone());
            assert!(r.messages.is_empty(), "{bad:?}");
            assert!(
                r.notes[0].left_out
                    && r.notes[0]
                        .message
                        .contains("changes its rank or a fixed dim"),
                "{:?}",
                r.notes
            );
        }
        // The batch dim given: kept.
        let r = with(vec![2, 3]);
        assert_eq!(r.messages[0].tensors[0].shape.sizes(), [2, 3]);
    }

    #[test]
    fn examples_past_the_element_bound_are_left_out_not_built() {
        let huge = DenseFeature {
            key: "x".into(),
            dtype: DTypeCode::from(DType::Float),
            shape: vec![1 << 40, 1 << 40],
            default: None,
        };
        let spec = ExampleSpec {
            dense: vec![huge],
            ..ExampleSpec::default()
        };
        assert!(example_for(&spec, FillMode::Zeros).is_none());
        let mut s = Signature::new("c");
        s.method_name = CLASSIFY.into();
        s.inputs.insert(
            "inputs".into(),
            TensorSpec::new("in:0", DType::String, Some(vec![-1])),
        );
        s.outputs
            .insert("scores".into(), TensorSpec::new("s:0", DType::Float, None));
        s.examples = Some(spec.clone());
        let r = synthesize(&meta(s), &SynthOptions::default());
        assert!(r.messages.is_empty());
        assert!(r.notes[0].message.contains("more than"), "{:?}", r.notes);
        // One example of 4,096 values fits; 16,385 rows of it (past 2^26) do not.
        let mut ok = spec;
        ok.dense[0].shape = vec![4096];
        let mut s = sig_with(&[]);
        s.method_name = REGRESS.into();
        s.inputs.insert(
            "inputs".into(),
            TensorSpec::new("in:0", DType::String, Some(vec![-1])),
        );
        s.examples = Some(ok);
        let opts = SynthOptions {
            batch_sizes: vec![MAX_ELEMENTS / 4096 + 1],
            ..SynthOptions::default()
        };
        let r = synthesize(&meta(s), &opts);
        assert!(r.messages.is_empty(), "{:?}", r.notes);
    }

    #[test]
    fn a_dim_or_values_name_no_input_has_is_noted() {
        let s = sig_with(&[("a", DType::Float, Some(vec![-1]))]);
        let mut o = SynthOptions::default();
        o.dims.insert("rr".into(), vec![2]);
        o.dims.insert("s/a".into(), vec![3]);
        o.values.insert("zz".into(), vec![Bytes::from_static(b"x")]);
        let r = synthesize(&meta(s), &o);
        assert_eq!(r.messages[0].tensors[0].shape.sizes(), [3]);
        let unused: Vec<&str> = r
            .notes
            .iter()
            .filter(|n| n.message.ends_with("not used"))
            .filter_map(|n| n.input.as_deref())
            .collect();
        assert_eq!(unused, ["rr", "zz"]);
    }
}
