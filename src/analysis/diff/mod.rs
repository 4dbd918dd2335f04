//! Will a warm-up warm what production runs? (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/predict_util.cc>)
//!
//! TensorFlow builds executors per **set** of feed names and **sorted list** of fetch
//! names (`DirectSession`, TFRT and TF Serving's batching all sort the names first;
//! `DirectSession` keeps a repeated fetch: [`crate::analysis::ExecutorKey`]), so:
//! - the same signature and names: the warm-up built the executor production uses
//!   ([`Verdict::SameExecutor`]); another order is only a note;
//! - another signature, a feed or a fetch more or less: the first production request
//!   builds new executors ([`Verdict::NewExecutor`]);
//! - the same name with another dtype or rank: one of the two is refused
//!   ([`Verdict::Incompatible`]);
//! - another shape or batch size: the same executor, but XLA, TF Serving batching and
//!   PAI-Blade compile per shape: a warning, an error with
//!   [`DiffOptions::strict_shapes`].
//!
//! With several warm-up requests the question is coverage: each production request's
//! key must be warmed by at least one of them.
//!
//! ```
//! use tfreq::analysis::{diff, DiffOptions};
//! use tfreq::analysis::Verdict;
//! use tfreq::{DType, TFRequest};
//! let mut warm = TFRequest::new("serving_default");
//! warm.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("a").add_fetch("b");
//! let mut prod = TFRequest::new("serving_default");
//! prod.add_feed("x", &[1], DType::Float, vec![2.0f32])?
//!     .add_fetch("b").add_fetch("a").add_fetch("c");
//! let report = diff(&[warm.message().clone()], prod.message(), &DiffOptions::default());
//! assert_eq!(report.verdict, Verdict::NewExecutor);
//! let codes: Vec<_> = report.findings().map(|f| f.code.as_str()).collect();
//! assert!(codes.contains(&"FETCH_ADDED"));
//! assert!(report.failed);
//! # Ok::<(), tfreq::BuildError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use crate::analysis::batch::BatchRule;
use crate::analysis::key::ExecutorKey;
use crate::analysis::report::{Command, Coverage, Labeled, Report, RequestReport, Verdict};
use crate::analysis::{Code, Finding, Hint, Severity};
use crate::model::{Fill, Message, Method, Tensor, WireFormat, same_scalar};
use crate::signature::{MetaGraph, Signature};

/// How [`diff`] judges.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffOptions<'a> {
    /// Shape and batch-size changes fail (for XLA, TF Serving batching, PAI-Blade).
    pub strict_shapes: bool,
    /// The model's meta graph, to resolve TF Serving's empty `output_filter` and
    /// signature defaults.
    pub model: Option<&'a MetaGraph>,
}

/// Compares one production request with the warm-up requests (any collection of
/// them: `&[Message]`, `&Vec<Message>`, `[&m1, &m2]`, an iterator over records).
pub fn diff<'m>(
    warmup: impl IntoIterator<Item = &'m Message>,
    prod: &Message,
    opts: &DiffOptions,
) -> Report {
    let warmup: Vec<&Message> = warmup.into_iter().collect();
    let labels: Vec<String> = (1..=warmup.len())
        .map(|i| {
            if warmup.len() == 1 {
                "warm-up".to_string()
            } else {
                format!("warm-up request {i}")
            }
        })
        .collect();
    let w: Vec<Labeled> = warmup
        .iter()
        .zip(&labels)
        .map(|(m, l)| Labeled::new(l, l, m))
        .collect();
    diff_labeled(&w, &[Labeled::new("production", "production", prod)], opts)
}

/// Compares every production request with the warm-up requests, and reports which
/// production executor keys no warm-up request covers.
pub fn diff_labeled(warmup: &[Labeled], prod: &[Labeled], opts: &DiffOptions) -> Report {
    let d = Differ::new(warmup, opts);
    let requests = prod.iter().map(|p| d.report(p)).collect();
    d.finish(requests)
}

/// [`diff_labeled`] one production request at a time, for a caller that does not keep
/// the requests (a log of any length): [`Differ::report`] judges one,
/// [`Differ::finish`] makes the report of those judged (the coverage table is made
/// from them), the same as [`diff_labeled`] of them all.
///
/// ```
/// use tfreq::analysis::Labeled;
/// use tfreq::analysis::{DiffOptions, Differ};
/// let m = tfreq::decode(&std::fs::read("tests/data/eas/faq_prod.bin")?)?;
/// let warm = [Labeled::new("w", "w", &m)];
/// let opts = DiffOptions::default();
/// let d = Differ::new(&warm, &opts);
/// let one = d.report(&Labeled::new("p", "p", &m));
/// let report = d.finish(vec![one]);
/// assert!(!report.failed);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Differ<'w> {
    warmup: &'w [Labeled<'w>],
    wkeys: Vec<ExecutorKey>,
    /// Each warm-up request's example features, made once (not once per production
    /// request it is weighed against).
    wsets: Vec<Option<FeatureSets>>,
    opts: &'w DiffOptions<'w>,
    /// What each production key met so far is to the warm-up ([`Differ::facts`]).
    facts: Mutex<HashMap<ExecutorKey, Arc<KeyFacts>>>,
}

/// What one production executor key is to the warm-up requests.
#[derive(Debug)]
struct KeyFacts {
    /// The warm-up requests with that key.
    warmed: Vec<usize>,
    /// How far each warm-up request's key is from it.
    distance: Vec<usize>,
}

/// Production keys whose [`KeyFacts`] a [`Differ`] keeps (past them they are made for
/// each request: a log of endless distinct keys costs time, not memory).
const FACTS_KEPT: usize = 1024;

impl<'w> Differ<'w> {
    /// A comparison with these warm-up requests.
    pub fn new(warmup: &'w [Labeled<'w>], opts: &'w DiffOptions<'w>) -> Self {
        let wkeys = warmup
            .iter()
            .map(|w| resolve(w.message, opts.model))
            .collect();
        let wsets = warmup.iter().map(|w| FeatureSets::of(w.message)).collect();
        Differ {
            warmup,
            wkeys,
            wsets,
            opts,
            facts: Mutex::new(HashMap::new()),
        }
    }

    /// The report of one production request.
    pub fn report(&self, p: &Labeled) -> RequestReport {
        let (warmup, wkeys, opts) = (self.warmup, &self.wkeys, self.opts);
        let pkey = resolve(p.message, opts.model);
        let facts = self.facts(&pkey);
        let warmed = &facts.warmed;
        // The warm-up to compare with: among those with the same key, the one with the
        // fewest dtype/shape differences; otherwise the closest key (the first of the
        // closest, in warm-up order).
        let pool: Vec<usize> = if warmed.is_empty() {
            let closest = facts.distance.iter().copied().min();
            (0..warmup.len())
                .filter(|&i| Some(facts.distance[i]) == closest)
                .collect()
        } else {
            warmed.clone()
        };
        let psets = FeatureSets::of(p.message);
        let best = pool.iter().copied().min_by_key(|&i| {
            tensor_distance(
                (warmup[i].message, self.wsets[i].as_ref()),
                (p.message, psets.as_ref()),
            )
        });
        let mut findings = Vec::new();
        let verdict;
        if let Some(i) = best {
            let pair = Pair {
                w: warmup[i].message,
                wkey: &wkeys[i],
                p: p.message,
                pkey: &pkey,
                opts,
            };
            compare(&pair, &mut findings);
            verdict = verdict_of(&findings, !warmed.is_empty());
            if warmed.is_empty() && verdict != Verdict::Undecided && warmup.len() > 1 {
                findings.insert(
                0,
                Finding::new(
                    Code::NotWarmed,
                    Severity::Error,
                    format!(
                        "no warm-up request has this executor key ({pkey}); the first production request of this kind builds new executors. The findings below compare with the closest warm-up, {}",
                        warmup[i].label
                    ),
                )
                .name(pkey.to_string()),
            );
            }
        } else {
            findings.push(Finding::new(
                Code::NotWarmed,
                Severity::Error,
                format!("there is no warm-up request at all, so nothing warms {pkey}"),
            ));
            verdict = Verdict::NewExecutor;
        }
        crate::analysis::lint::merge(&mut findings, crate::analysis::lint(p.message));
        RequestReport {
            label: p.label.to_string(),
            file: p.file.to_string(),
            verdict,
            key: pkey,
            warmed_by: Some(
                warmed
                    .iter()
                    .map(|&i| warmup[i].label.to_string())
                    .collect(),
            ),
            compared_with: best.map(|i| warmup[i].label.to_string()),
            bindings: None,
            findings,
        }
    }

    /// Which warm-up requests have the production key `pkey` and how far each one's key
    /// is: made once per distinct key (a log's requests share a few), kept for the first
    /// [`FACTS_KEPT`] keys.
    fn facts(&self, pkey: &ExecutorKey) -> Arc<KeyFacts> {
        if let Some(f) = self.facts.lock().ok().and_then(|m| m.get(pkey).cloned()) {
            return f;
        }
        let f = Arc::new(KeyFacts {
            warmed: (0..self.wkeys.len())
                .filter(|&i| same_key(&self.wkeys[i], pkey))
                .collect(),
            distance: self.wkeys.iter().map(|w| key_distance(w, pkey)).collect(),
        });
        if let Ok(mut m) = self.facts.lock()
            && m.len() < FACTS_KEPT
        {
            m.insert(pkey.clone(), f.clone());
        }
        f
    }

    /// The report of these production requests' reports (in order), with the coverage
    /// table and the warm-up's own findings.
    pub fn finish(&self, requests: Vec<RequestReport>) -> Report {
        let warmup = self.warmup;
        let mut coverage: BTreeMap<ExecutorKey, Coverage> = BTreeMap::new();
        for r in &requests {
            coverage
                .entry(r.key.clone())
                .or_insert_with(|| Coverage {
                    key: r.key.clone(),
                    requests: Vec::new(),
                    warmed_by: r.warmed_by.clone().unwrap_or_default(),
                })
                .requests
                .push(r.label.clone());
        }
        let mut r = Report::new(Command::Diff, requests);
        for w in warmup {
            let found = crate::analysis::lint(w.message);
            if !found.is_empty() {
                r.add_problems(w.file, w.label, found);
            }
        }
        r.strict_shapes = Some(self.opts.strict_shapes);
        r.warmup = Some(warmup.iter().map(|w| w.label.to_string()).collect());
        r.coverage = Some(coverage.into_values().collect());
        r
    }
}

fn verdict_of(findings: &[Finding], warmed: bool) -> Verdict {
    let has = |c: Code| findings.iter().any(|f| f.code == c);
    if has(Code::DtypeChanged) {
        Verdict::Incompatible
    } else if warmed {
        Verdict::SameExecutor
    } else if findings.iter().any(|f| {
        matches!(
            f.code,
            Code::SignatureChanged
                | Code::FeedAdded
                | Code::FeedMissing
                | Code::FetchAdded
                | Code::FetchMissing
        )
    }) || !has(Code::FetchAllUnresolved)
    {
        Verdict::NewExecutor
    } else {
        Verdict::Undecided
    }
}

/// The executor key a request runs, with what the model tells: on TF Serving an empty
/// `output_filter` is every output of the signature, and inputs with a default are fed
/// whether the request sends them or not.
pub fn resolve(msg: &Message, model: Option<&MetaGraph>) -> ExecutorKey {
    let mut key = ExecutorKey::of(msg);
    // A classify, regress or multi-inference key is the signature's own feeds and
    // fetches already (the tensor names are not needed to compare two of them). A bare
    // request that cannot say whether it classifies or regresses takes the method its
    // signature declares, when the model has the signature and declares one of the two.
    if key.method == Method::ClassifyOrRegress {
        let declared = model
            .and_then(|m| m.signatures.get(&key.signature))
            .map(|s| s.method_name.as_str());
        key.method = match declared {
            Some("tensorflow/serving/classify") => Method::Classify,
            Some("tensorflow/serving/regress") => Method::Regress,
            _ => key.method,
        };
    }
    if msg.wire != WireFormat::TfServing || msg.method.takes_examples() {
        return key;
    }
    let Some(sig) = model.and_then(|m| m.signatures.get(&key.signature)) else {
        return key;
    };
    if key.fetch_all {
        key.fetches = sig.outputs.keys().cloned().collect();
        key.fetch_all = false;
    }
    for d in &sig.defaults {
        if sig.inputs.contains_key(d) {
            key.feeds.insert(d.clone());
        }
    }
    key
}

fn model_sig<'a>(opts: &DiffOptions<'a>, key: &ExecutorKey) -> Option<&'a Signature> {
    opts.model.and_then(|m| m.signatures.get(&key.signature))
}

/// Whether two methods can be the same: equal, or one of them a bare request that
/// cannot say whether it classifies or regresses (`ClassificationRequest` and
/// `RegressionRequest` have the same fields) and the other a classify or regress one.
fn methods_agree(a: Method, b: Method) -> bool {
    use Method::{Classify, ClassifyOrRegress, Regress};
    a == b
        || matches!(
            (a, b),
            (ClassifyOrRegress, Classify | Regress) | (Classify | Regress, ClassifyOrRegress)
        )
}

/// Whether a request of key `b` runs the executor a warm-up request of key `a` built:
/// the same key, methods compared by [`methods_agree`] (a bare classify-or-regress
/// request captured from production against a warm-up's `classify_log` of the same
/// signature is warmed). The model names are not compared: TF Serving runs a warm-up
/// file's records on the model whose directory holds it, whatever `model_spec.name`
/// they carry (`MODEL_NAME_CHANGED` notes a difference).
fn same_key(a: &ExecutorKey, b: &ExecutorKey) -> bool {
    methods_agree(a.method, b.method)
        && a.signature == b.signature
        && a.feeds == b.feeds
        && a.fetches == b.fetches
        && a.fetch_all == b.fetch_all
}

fn key_distance(a: &ExecutorKey, b: &ExecutorKey) -> usize {
    let sym = |x: &BTreeSet<String>, y: &BTreeSet<String>| x.symmetric_difference(y).count();
    let fetches = |x: &[String], y: &[String]| -> usize {
        counted(x, y)
            .into_values()
            .map(|(m, n)| m.abs_diff(n))
            .sum()
    };
    usize::from(!methods_agree(a.method, b.method)) * 1000
        + usize::from(a.signature != b.signature) * 1000
        + sym(&a.feeds, &b.feeds)
        + if a.fetch_all != b.fetch_all {
            1
        } else {
            fetches(&a.fetches, &b.fetches)
        }
        + usize::from(a.model != b.model)
}

/// Each name of two name lists with how many times each list has it.
fn counted<'a>(a: &'a [String], b: &'a [String]) -> BTreeMap<&'a str, (usize, usize)> {
    let mut n: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for x in a {
        n.entry(x).or_default().0 += 1;
    }
    for x in b {
        n.entry(x).or_default().1 += 1;
    }
    n
}

/// How far apart two requests' tensors are (each with its [`FeatureSets`], made once by
/// the caller): for two requests with examples, the features one side's examples carry
/// and the other's do not; else the feeds of other dtypes and shapes.
fn tensor_distance(
    (a, asets): (&Message, Option<&FeatureSets>),
    (b, bsets): (&Message, Option<&FeatureSets>),
) -> usize {
    if let (Some(x), Some(y)) = (asets, bsets) {
        // Among warm-ups of one tf.Example key, the one whose examples carry the features
        // production's do.
        let sym = |x: &BTreeMap<String, usize>, y: &BTreeMap<String, usize>| {
            x.keys().filter(|k| !y.contains_key(*k)).count()
        };
        return sym(&x.carried, &y.carried) + sym(&y.carried, &x.carried);
    }
    b.tensors
        .iter()
        .filter_map(|t| a.tensor(&t.name).map(|u| (t, u)))
        .map(|(t, u)| {
            usize::from(t.dtype != u.dtype) * 10 + usize::from(t.shape.sizes() != u.shape.sizes())
        })
        .sum()
}

fn list<'a>(names: impl IntoIterator<Item = &'a String>) -> String {
    names
        .into_iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

mod batches;
mod features;
mod rules;

pub use batches::{diff_batches, diff_batches_with_model};
use features::*;
use rules::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::TensorSpec;
    use crate::{DType, TFRequest};

    fn model_with_default() -> MetaGraph {
        let mut s = Signature::new("serving_default");
        for a in ["x", "k"] {
            s.inputs.insert(
                a.into(),
                TensorSpec::new(format!("{a}:0"), DType::Float, Some(vec![-1])),
            );
        }
        s.outputs.insert(
            "y".into(),
            TensorSpec::new("y:0", DType::Float, Some(vec![-1])),
        );
        s.outputs.insert(
            "z".into(),
            TensorSpec::new("z:0", DType::Float, Some(vec![-1])),
        );
        s.defaults = vec!["k".into()];
        MetaGraph {
            tags: vec!["serve".into()],
            signatures: [("serving_default".to_string(), s)].into(),
        }
    }

    fn tfs(feeds: &[&str], fetches: &[&str]) -> Message {
        let mut r = TFRequest::for_wire("", WireFormat::TfServing);
        for f in feeds {
            r.add_feed(*f, &[1], DType::Float, vec![1.0f32]).unwrap();
        }
        for f in fetches {
            r.add_fetch(*f);
        }
        r.into_message()
    }

    #[test]
    fn defaults_and_fetch_all_resolve_with_the_model() {
        let mg = model_with_default();
        let a = tfs(&["x", "k"], &["z", "y"]);
        let b = tfs(&["x"], &[]);
        assert_ne!(ExecutorKey::of(&a), ExecutorKey::of(&b));
        assert_eq!(resolve(&a, Some(&mg)), resolve(&b, Some(&mg)));
        let opts = DiffOptions {
            strict_shapes: false,
            model: Some(&mg),
        };
        let r = diff(std::slice::from_ref(&a), &b, &opts);
        assert_eq!(r.verdict, Verdict::SameExecutor, "{r:?}");
        let r = diff(&[a], &b, &DiffOptions::default());
        assert_eq!(r.verdict, Verdict::NewExecutor, "{r:?}");
    }

    #[test]
    fn no_warmup_at_all_is_not_warmed() {
        let r = diff(&[], &tfs(&["x"], &["y"]), &DiffOptions::default());
        assert_eq!(r.verdict, Verdict::NewExecutor);
        assert_eq!(
            r.findings().map(|f| f.code).collect::<Vec<_>>(),
            [Code::NotWarmed]
        );
    }
}
