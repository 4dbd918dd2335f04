//! Does the model accept this request? A request against the model's own signatures
//! (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/predict_util.cc>): signature, feeds, dtypes, shapes, fetches.
//!
//! TF Serving requests name inputs and outputs by signature **alias**; the EAS
//! processors pass names to `Session::Run` as they are, so EAS requests may use the
//! graph **tensor name** (`x:0`) instead. On EAS both are accepted, and each
//! [`Binding`] says which matched.
//!
//! ```
//! use tfreq::analysis::{check, CheckOptions};
//! use tfreq::formats::read_model;
//! use tfreq::{DType, TFRequest};
//! let (model, _) = read_model("tests/data/models/two_sigs".as_ref())?;
//! let mut req = TFRequest::new("serving_default");
//! req.add_feed("x", &[1, 784], DType::Float, vec![0.0f32; 784])?.add_fetch("scores");
//! let report = check(req.message(), &model, &CheckOptions::default());
//! assert!(!report.failed, "{report:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;

use crate::analysis::key::ExecutorKey;
use crate::analysis::report::{Binding, Command, Labeled, Report, RequestReport, Verdict};
use crate::analysis::{Code, Finding, Severity};
use crate::model::DEFAULT_SIGNATURE;
use crate::model::{Message, Tensor, WireFormat};
use crate::signature::{MatchedBy, MetaGraph, ModelSignatures, SERVE_TAG, Signature, TensorSpec};

/// How [`check`] picks the signature.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The meta graph tag (default `serve`).
    pub tag: String,
    /// Check against this signature instead of the one the request names.
    pub signature: Option<String>,
    /// `SHAPE_INCOMPATIBLE` is an error instead of a warning: for a model that is
    /// compiled per shape (XLA, TF Serving batching, PAI-Blade) or a graph whose ops
    /// refuse other shapes.
    pub strict_shapes: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            tag: SERVE_TAG.to_string(),
            signature: None,
            strict_shapes: false,
        }
    }
}

/// Checks one request against a model.
pub fn check(msg: &Message, model: &ModelSignatures, opts: &CheckOptions) -> Report {
    check_labeled(&[Labeled::new("request", "request", msg)], model, opts)
}

/// Checks every request against a model.
pub fn check_labeled(reqs: &[Labeled], model: &ModelSignatures, opts: &CheckOptions) -> Report {
    let requests = reqs.iter().map(|r| check_one(r, model, opts)).collect();
    Report::new(Command::Check, requests)
}

/// The report of one request of [`check_labeled`], for a caller that does not keep the
/// requests (a log of any length): [`Report::new`] of the reports, in order, is the
/// report of [`check_labeled`].
pub fn check_one(r: &Labeled, model: &ModelSignatures, opts: &CheckOptions) -> RequestReport {
    let mg = model.meta_graph(&opts.tag);
    let mut rep = match mg {
        Some(mg) => check_meta_graph(r.message, mg, opts.signature.as_deref()),
        None => {
            let mut rep = blank(r.message);
            rep.findings.push(
                Finding::new(
                    Code::UnknownTagSet,
                    Severity::Error,
                    format!(
                        "the model has no meta graph tagged {:?}; its tag sets: {}",
                        opts.tag,
                        quoted(model.tag_sets())
                    ),
                )
                .name(opts.tag.clone()),
            );
            rep.verdict = Verdict::Incompatible;
            rep
        }
    };
    if opts.strict_shapes {
        for f in &mut rep.findings {
            if f.code == Code::ShapeIncompatible {
                f.severity = Severity::Error;
            }
        }
    }
    crate::analysis::lint::merge(&mut rep.findings, crate::analysis::lint(r.message));
    if rep.failed() {
        rep.verdict = Verdict::Incompatible;
    }
    rep.label = r.label.to_string();
    rep.file = r.file.to_string();
    rep
}

fn quoted(v: Vec<String>) -> String {
    if v.is_empty() {
        return "(none)".into();
    }
    v.iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn blank(msg: &Message) -> RequestReport {
    RequestReport {
        label: String::new(),
        file: String::new(),
        verdict: Verdict::Ok,
        key: ExecutorKey::of(msg),
        warmed_by: None,
        compared_with: None,
        bindings: Some(Vec::new()),
        findings: Vec::new(),
    }
}

/// `SIGNATURE_DEFAULTED`: an EAS request that names no signature, run as
/// `serving_default` by [`crate::analysis::signature_of`] in `check` and `diff`
/// alike.
pub(crate) fn signature_defaulted(msg: &Message) -> Option<Finding> {
    (msg.wire == WireFormat::Eas && msg.signature_name.is_empty()).then(|| {
        Finding::new(
            Code::SignatureDefaulted,
            Severity::Note,
            format!("the request names no signature; taken as {DEFAULT_SIGNATURE:?} (what TF Serving uses; EAS processors are not documented)"),
        )
    })
}

/// Checks a request against one meta graph; `signature` overrides the request's.
pub fn check_meta_graph(msg: &Message, mg: &MetaGraph, signature: Option<&str>) -> RequestReport {
    if msg.method.takes_examples() {
        return check_examples(msg, mg, signature);
    }
    let mut rep = blank(msg);
    let name = signature
        .unwrap_or(crate::analysis::key::signature_of(msg))
        .to_string();
    if signature.is_none() {
        rep.findings.extend(signature_defaulted(msg));
    }
    rep.key.signature = name.clone();
    match mg.signatures.get(&name) {
        Some(sig) => {
            if let Some(f) = not_callable(sig) {
                rep.findings.push(f);
            }
            let (bindings, findings) = check_signature(msg, sig);
            rep.findings.extend(findings);
            rep.bindings = Some(bindings);
        }
        None => {
            let known: Vec<String> = mg
                .signatures
                .keys()
                .filter(|k| !k.starts_with("__"))
                .cloned()
                .collect();
            rep.findings.push(
                Finding::new(
                    Code::UnknownSignature,
                    Severity::Error,
                    format!(
                        "the model has no signature {name:?} (TF Serving: 'Serving signature key \"{name}\" not found.'); it has: {}",
                        if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
                    ),
                )
                .name(name.clone())
                .sides(Some(name), Some(known.join(", "))),
            );
        }
    }
    if rep.findings.iter().any(|f| f.severity == Severity::Error) {
        rep.verdict = Verdict::Incompatible;
    }
    rep
}

/// A classify, regress or multi-inference request: each signature it names (its own,
/// or every task's) must be in the model (`UNKNOWN_SIGNATURE`, as TF Serving refuses
/// it; an input without examples is `EMPTY_INPUT`, a finding about the file:
/// [`crate::analysis::empty_inputs`]); its examples are not checked against the signature's `ParseExample` feature
/// spec (`RECORD_NOT_COMPARED`, a note saying so).
fn check_examples(msg: &Message, mg: &MetaGraph, signature: Option<&str>) -> RequestReport {
    let mut rep = blank(msg);
    let names: Vec<String> = match signature {
        Some(s) => vec![s.to_string()],
        None if msg.method == crate::model::Method::MultiInference => msg
            .tasks
            .iter()
            .map(|t| t.signature().to_string())
            .collect(),
        None => vec![msg.effective_signature().to_string()],
    };
    let known: Vec<String> = mg
        .signatures
        .keys()
        .filter(|k| !k.starts_with("__"))
        .cloned()
        .collect();
    for name in &names {
        if !mg.signatures.contains_key(name) {
            rep.findings.push(
                Finding::new(
                    Code::UnknownSignature,
                    Severity::Error,
                    format!(
                        "the model has no signature {name:?} (TF Serving: 'Serving signature key \"{name}\" not found.'); it has: {}",
                        if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
                    ),
                )
                .name(name.clone())
                .sides(Some(name.clone()), Some(known.join(", "))),
            );
        }
    }
    // Each signature's feature spec, when the model file has the graph.
    let mut compared = false;
    let mut seen = Vec::new();
    for name in &names {
        let Some(spec) = mg.signatures.get(name).and_then(|s| s.examples.as_ref()) else {
            continue;
        };
        compared = true;
        if let Some(input) = &msg.input {
            for f in crate::analysis::features::check_examples(input, spec) {
                // A multi-inference request's tasks parse the same examples: once each.
                if !seen.contains(&f.message) {
                    seen.push(f.message.clone());
                    rep.findings.push(f);
                }
            }
        }
    }
    if !compared {
        rep.findings.push(Finding::new(
            Code::RecordNotCompared,
            Severity::Note,
            format!(
                "a {} request: its tf.train.Examples are not checked against the signature's ParseExample feature spec (the model file has no graph to read it from: give the SavedModel)",
                msg.method.as_str()
            ),
        ));
    }
    if rep.findings.iter().any(|f| f.severity == Severity::Error) {
        rep.verdict = Verdict::Incompatible;
    }
    rep
}

/// Checks a request's feeds and fetches against one signature: how each name bound,
/// and what is wrong, rule by rule.
pub fn check_signature(msg: &Message, sig: &Signature) -> (Vec<Binding>, Vec<Finding>) {
    let tfs = msg.wire == WireFormat::TfServing;
    let mut bindings = Vec::new();
    let mut out = Vec::new();
    let mut fed: HashSet<String> = HashSet::new();
    for t in &msg.tensors {
        match bind_feed(t, sig, tfs) {
            Ok((binding, spec)) => {
                fed.insert(binding.alias.clone());
                out.extend(dtype_mismatch(t, spec));
                out.extend(shape_incompatible(t, spec));
                bindings.push(binding);
            }
            Err(f) => out.push(f),
        }
    }
    out.extend(missing_feeds(sig, &fed, tfs));
    out.extend(serialized_examples(msg, sig));
    let mut seen = HashSet::new();
    for f in &msg.fetches {
        if !seen.insert(f.as_str()) {
            out.push(crate::analysis::lint::duplicate_fetch(msg.wire, f));
            continue;
        }
        match bind_fetch(f, sig, tfs) {
            Ok(b) => bindings.push(b),
            Err(f) => out.push(f),
        }
    }
    out.extend(empty_output_filter(msg, sig));
    (bindings, out)
}

/// A predict request to a signature whose one string input the graph parses as
/// `tf.train.Example`s (a Keras or Estimator export's serving function over serialized
/// examples): each string of that feed is an example, held to the `ParseExample` spec
/// as a classify request's examples are (`FEATURE_MISSING`, `FEATURE_KIND`,
/// `FEATURE_LENGTH` in TensorFlow's words). Strings that are not all examples are left
/// to TensorFlow ("Could not parse example input"), with no finding here.
fn serialized_examples(msg: &Message, sig: &Signature) -> Vec<Finding> {
    let Some(spec) = &sig.examples else {
        return Vec::new();
    };
    let tfs = msg.wire == WireFormat::TfServing;
    let Some(t) = msg
        .tensors
        .iter()
        .find(|t| bind_feed(t, sig, tfs).is_ok_and(|(_, s)| s.dtype.to_string() == "DT_STRING"))
    else {
        return Vec::new();
    };
    let strings: Vec<bytes::Bytes> = match (&t.content, t.fields.as_slice()) {
        (Some(c), _) => crate::model::parse_string_list(c, None).unwrap_or_default(),
        (None, [(_, crate::model::Values::Bytes(v))]) => v.clone(),
        _ => return Vec::new(),
    };
    let Ok(examples) = strings
        .into_iter()
        .map(crate::decode::decode_example)
        .collect::<Result<Vec<_>, _>>()
    else {
        return Vec::new();
    };
    let input = crate::model::ExampleInput {
        with_context: false,
        examples,
        context: None,
    };
    crate::analysis::features::check_examples(&input, spec)
}

/// How a feed binds to the signature, or `UNKNOWN_FEED`: not an input, or (on TF
/// Serving, which takes aliases) a tensor name.
fn bind_feed<'s>(
    t: &Tensor,
    sig: &'s Signature,
    tfs: bool,
) -> Result<(Binding, &'s TensorSpec), Finding> {
    let name = t.name.clone();
    let Some((alias, spec, by)) = sig.find_input(&t.name) else {
        return Err(Finding::new(
            Code::UnknownFeed,
            Severity::Error,
            format!(
                "{name:?} is not an input of signature {:?}; its inputs: {}",
                sig.key,
                names(
                    sig.inputs
                        .iter()
                        .map(|(a, s)| (a.as_str(), s.name.as_str())),
                    tfs
                )
            ),
        )
        .name(name.clone())
        .sides(Some(name), None));
    };
    if tfs && by == MatchedBy::TensorName {
        return Err(Finding::new(
            Code::UnknownFeed,
            Severity::Error,
            format!("{name:?} is the tensor name of input alias {alias:?}: TF Serving takes aliases, so it refuses this request"),
        )
        .name(name.clone())
        .sides(Some(name), Some(alias.to_string())));
    }
    let binding = Binding {
        kind: "feed",
        name,
        alias: alias.to_string(),
        tensor: spec.name.clone(),
        matched_by: by,
    };
    Ok((binding, spec))
}

/// `DTYPE_MISMATCH`: the session refuses a feed of another dtype.
fn dtype_mismatch(t: &Tensor, spec: &TensorSpec) -> Option<Finding> {
    let name = &t.name;
    (t.dtype != spec.dtype).then(|| {
        Finding::new(
            Code::DtypeMismatch,
            Severity::Error,
            format!(
                "{name:?} is {} but the signature takes {}: the session refuses the request",
                t.dtype, spec.dtype
            ),
        )
        .name(name.clone())
        .sides(Some(t.dtype.to_string()), Some(spec.dtype.to_string()))
    })
}

/// `SHAPE_INCOMPATIBLE`: another rank, or a fixed dim that differs (a warning: the
/// server does not check it).
fn shape_incompatible(t: &Tensor, spec: &TensorSpec) -> Option<Finding> {
    let name = &t.name;
    let want = spec.shape.as_ref()?;
    let got = t.shape.sizes();
    let why = if got.len() != want.len() {
        format!(
            "rank {} where the signature has rank {}",
            got.len(),
            want.len()
        )
    } else {
        got.iter()
            .zip(want)
            .enumerate()
            .find(|(_, (g, w))| **w >= 0 && g != w)
            .map(|(i, (g, w))| format!("dim {i} is {g} where the signature fixes {w}"))?
    };
    Some(
        Finding::new(
            Code::ShapeIncompatible,
            Severity::Warning,
            format!(
                "{name:?} has shape {}, the signature {}: {why}. TF Serving and Session::Run do not check a signature's shape, so the model may still run: TensorFlow 2.21 ran half_plus_two on [3] where (-1, 1) is declared, and refused two_sigs' [1, 10] for (-1, 784) only in MatMul (tests/data/check/). Whether it runs depends on the graph's ops",
                t.shape,
                spec.shape_text()
            ),
        )
        .name(name.clone())
        .sides(Some(t.shape.to_string()), Some(spec.shape_text())),
    )
}

/// `MISSING_FEED`: a signature input not fed; a note (a warning on EAS) when the
/// signature has a default for it.
fn missing_feeds(sig: &Signature, fed: &HashSet<String>, tfs: bool) -> Vec<Finding> {
    let unfed = sig.inputs.iter().filter(|(a, _)| !fed.contains(a.as_str()));
    unfed
        .map(|(alias, spec)| {
            let hint = if tfs {
                format!("alias {alias:?}")
            } else {
                format!("alias {alias:?} or tensor name {:?}", spec.name)
            };
            let f = if sig.has_default(alias) {
                Finding::new(
                    Code::MissingFeed,
                    if tfs { Severity::Note } else { Severity::Warning },
                    format!(
                        "input {hint} is not fed; the signature has a default for it, which TF Serving fills in{}",
                        if tfs { "" } else { " (EAS processors are not documented to)" }
                    ),
                )
            } else {
                Finding::new(
                    Code::MissingFeed,
                    Severity::Error,
                    format!(
                        "input {hint} ({spec}) is not fed and has no default: the request is refused"
                    ),
                )
            };
            f.name(alias.clone()).sides(None, Some(alias.clone()))
        })
        .collect()
}

/// How a fetch binds to the signature, or `UNKNOWN_FETCH`: not an output, or (on TF
/// Serving) a tensor name.
fn bind_fetch(f: &str, sig: &Signature, tfs: bool) -> Result<Binding, Finding> {
    let hint = match sig.find_output(f) {
        Some((alias, spec, by)) if !(tfs && by == MatchedBy::TensorName) => {
            return Ok(Binding {
                kind: "fetch",
                name: f.to_string(),
                alias: alias.to_string(),
                tensor: spec.name.clone(),
                matched_by: by,
            });
        }
        Some((alias, _, _)) => format!(
            "{f:?} is the tensor name of output alias {alias:?}: TF Serving takes aliases ('output tensor alias not found in signature')"
        ),
        None => format!(
            "{f:?} is not an output of signature {:?}; its outputs: {}",
            sig.key,
            names(
                sig.outputs
                    .iter()
                    .map(|(a, s)| (a.as_str(), s.name.as_str())),
                tfs
            )
        ),
    };
    Err(Finding::new(Code::UnknownFetch, Severity::Error, hint)
        .name(f.to_string())
        .sides(Some(f.to_string()), None))
}

/// `EMPTY_OUTPUT_FILTER`: what no fetches fetch (every output on TF Serving; a warning
/// on EAS, whose processor refuses a warm-up without fetches).
fn empty_output_filter(msg: &Message, sig: &Signature) -> Option<Finding> {
    if !msg.fetches.is_empty() {
        return None;
    }
    let all = sig.outputs.keys().cloned().collect::<Vec<_>>().join(", ");
    let f = if msg.wire == WireFormat::TfServing {
        Finding::new(
            Code::EmptyOutputFilter,
            Severity::Note,
            format!(
                "output_filter is empty: TF Serving fetches every output of {:?}: {all}",
                sig.key
            ),
        )
    } else {
        Finding::new(
            Code::EmptyOutputFilter,
            Severity::Warning,
            format!(
                "output_filter is empty: the open-source EAS processor refuses a warm-up without fetches, and EAS's own processors are not documented to fetch all outputs ({all})"
            ),
        )
    };
    Some(f.sides(None, Some(all)))
}

/// `SIGNATURE_NOT_CALLABLE`: a signature with no tensor output, such as the
/// `__saved_model_init_op` Keras exports (its one "output" is the op `NoOp`, dtype
/// DT_INVALID). TF Serving passes the output names to `Session::Run`, which refuses
/// them: TensorFlow 2.21 answered "Node 'NoOp' (type: 'NoOp', num of outputs: 0) does
/// not have output 0" (tests/data/check/faq_init_op.bin).
fn not_callable(sig: &Signature) -> Option<Finding> {
    let tensors = sig
        .outputs
        .values()
        .filter(|s| s.dtype != crate::DType::Invalid.into())
        .count();
    if tensors > 0 {
        return None;
    }
    let what = if sig.outputs.is_empty() {
        "no outputs".to_string()
    } else {
        format!(
            "no tensor output ({} {})",
            sig.outputs
                .iter()
                .map(|(a, s)| format!("{a:?} is the op {:?}", s.name))
                .collect::<Vec<_>>()
                .join(", "),
            "with dtype DT_INVALID"
        )
    };
    Some(
        Finding::new(
            Code::SignatureNotCallable,
            Severity::Error,
            format!(
                "signature {:?} has {what}: it is not a prediction signature (Keras exports __saved_model_init_op to run initialisers at load), and a request to it fails in Session::Run ('Node ... does not have output 0')",
                sig.key
            ),
        )
        .name(sig.key.clone()),
    )
}

fn names<'a>(it: impl Iterator<Item = (&'a str, &'a str)>, tfs: bool) -> String {
    let v: Vec<String> = it
        .map(|(a, t)| {
            if tfs || t.is_empty() {
                a.to_string()
            } else {
                format!("{a} ({t})")
            }
        })
        .collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::TensorSpec;
    use crate::{DType, TFRequest};

    #[test]
    fn a_missing_feed_with_a_default_is_a_note_on_tf_serving() {
        let mut s = Signature::new("serving_default");
        s.inputs.insert(
            "x".into(),
            TensorSpec::new("x:0", DType::Float, Some(vec![-1])),
        );
        s.inputs.insert(
            "k".into(),
            TensorSpec::new("k:0", DType::Float, Some(vec![])),
        );
        s.outputs
            .insert("y".into(), TensorSpec::new("y:0", DType::Float, None));
        s.defaults = vec!["k".into()];
        let mut r = TFRequest::for_wire("serving_default", WireFormat::TfServing);
        r.add_feed("x", &[3], DType::Float, vec![1.0f32; 3])
            .unwrap()
            .add_fetch("y");
        let (b, f) = check_signature(r.message(), &s);
        assert_eq!(b.len(), 2);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].code, f[0].severity),
            (Code::MissingFeed, Severity::Note)
        );
        let mut e = TFRequest::new("serving_default");
        e.add_feed("x", &[3], DType::Float, vec![1.0f32; 3])
            .unwrap()
            .add_fetch("y");
        // The builder keeps tensors in TensorProto form; decode to get an EAS message.
        let eas = crate::decode(&e.to_bytes().unwrap()).unwrap();
        assert_eq!(eas.wire, WireFormat::Eas);
        let (_, f) = check_signature(&eas, &s);
        assert_eq!(
            (f[0].code, f[0].severity),
            (Code::MissingFeed, Severity::Warning)
        );
        s.defaults.clear();
        let (_, f) = check_signature(r.message(), &s);
        assert_eq!(
            (f[0].code, f[0].severity),
            (Code::MissingFeed, Severity::Error)
        );
    }
}
