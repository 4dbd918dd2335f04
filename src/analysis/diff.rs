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
use crate::model::{same_scalar, Fill, Message, Method, Tensor, WireFormat};
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
        if let Ok(mut m) = self.facts.lock() {
            if m.len() < FACTS_KEPT {
                m.insert(pkey.clone(), f.clone());
            }
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

/// What a new executor costs, said by every rule that finds one.
const COST: &str = "the first such production request builds new executors (pruning, optimising and partitioning the graph, creating kernels): the cold start the warm-up was meant to absorb";

/// A production request, the warm-up request it is compared with, and their keys.
struct Pair<'a> {
    w: &'a Message,
    wkey: &'a ExecutorKey,
    p: &'a Message,
    pkey: &'a ExecutorKey,
    opts: &'a DiffOptions<'a>,
}

/// The findings of one production request against one warm-up request: the rules in
/// the order a report lists them.
fn compare(pair: &Pair, out: &mut Vec<Finding>) {
    if pair.w.method.takes_examples() || pair.p.method.takes_examples() {
        out.extend(wire_format_changed(pair));
        out.extend(model_name_changed(pair));
        out.extend(method_changed(pair));
        if methods_agree(pair.wkey.method, pair.pkey.method) {
            out.extend(signature_changed(pair));
            if pair.wkey.signature == pair.pkey.signature {
                out.extend(features_changed(pair));
            }
        }
        return;
    }
    out.extend(wire_format_changed(pair));
    out.extend(model_name_changed(pair));
    out.extend(signature_defaulted(pair));
    out.extend(signature_changed(pair));
    out.extend(feed_set_changed(pair));
    out.extend(fetch_set_changed(pair));
    out.extend(fetch_all_resolved(pair));
    out.extend(fetch_order_only(pair));
    out.extend(input_order_only(pair));
    for pt in &pair.p.tensors {
        if let Some(wt) = pair.w.tensor(&pt.name) {
            out.extend(tensor_changed(pair, wt, pt));
        }
    }
}

/// `WIRE_FORMAT_CHANGED`: one is an EAS request, the other TF Serving.
fn wire_format_changed(Pair { w, p, .. }: &Pair) -> Option<Finding> {
    (w.wire != p.wire).then(|| {
        Finding::new(
            Code::WireFormatChanged,
            Severity::Warning,
            format!(
                "the warm-up is a {} request and production a {} request: they go to different servers, whose name rules differ",
                w.wire, p.wire
            ),
        )
        .sides(Some(w.wire.as_str().into()), Some(p.wire.as_str().into()))
    })
}

/// `SIGNATURE_DEFAULTED`: an EAS request that names no signature, compared as
/// `serving_default`, as `check` checks it ([`crate::analysis::signature_of`]).
fn signature_defaulted(Pair { w, p, .. }: &Pair) -> Vec<Finding> {
    [("production's request", *p), ("the warm-up request", *w)]
        .into_iter()
        .filter_map(|(side, m)| {
            crate::analysis::check::signature_defaulted(m).map(|f| Finding {
                message: f.message.replacen("the request", side, 1),
                ..f
            })
        })
        .collect()
}

/// `MODEL_NAME_CHANGED`: both requests name a model, and not the same one.
fn model_name_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    let (Some(w), Some(p)) = (&wkey.model, &pkey.model) else {
        return None;
    };
    (w != p).then(|| {
        Finding::new(
            Code::ModelNameChanged,
            Severity::Note,
            format!(
                "production's request names model {p:?}, the warm-up record {w:?}: TF Serving runs a warm-up file's records on the model whose directory holds it, whatever model_spec.name they carry, so this warm-up warms {p:?} only if it ships in {p:?}'s assets.extra"
            ),
        )
        .name("model_spec.name")
        .sides(Some(w.clone()), Some(p.clone()))
    })
}

/// `SIGNATURE_CHANGED` for another method: a classify, regress or multi-inference
/// request runs its signature's fixed feeds and fetches (the serialized examples and
/// every output), a predict request its own, so no two of different methods share an
/// executor key. The features of two classify requests are not in the key (TF Serving
/// feeds them all as one serialized string tensor).
fn method_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    (!methods_agree(wkey.method, pkey.method)).then(|| {
        Finding::new(
            Code::SignatureChanged,
            Severity::Error,
            format!(
                "production sends a {} request to signature {:?}, the warm-up a {} request to {:?}: another method runs another feed and fetch set, so {COST}",
                pkey.method.as_str(), pkey.signature, wkey.method.as_str(), wkey.signature
            ),
        )
        .name(pkey.to_string())
        .sides(Some(wkey.to_string()), Some(pkey.to_string()))
    })
}

/// `SIGNATURE_CHANGED`: another signature is another feed and fetch set.
fn signature_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    (wkey.signature != pkey.signature).then(|| {
        Finding::new(
            Code::SignatureChanged,
            Severity::Error,
            format!(
                "production runs signature {:?}, the warm-up {:?}: another signature is another feed and fetch set, so {COST}",
                pkey.signature, wkey.signature
            ),
        )
        .name(pkey.signature.clone())
        .sides(Some(wkey.signature.clone()), Some(pkey.signature.clone()))
    })
}

/// `FEED_ADDED`, `FEED_MISSING`: another feed set.
fn feed_set_changed(pair: &Pair) -> Vec<Finding> {
    let unsettled = pair.p.wire == WireFormat::TfServing && pair.opts.model.is_none();
    let tfs_note = if unsettled {
        " On TF Serving the feed set is the signature's input set: one of the two requests is refused unless the signature has a default for it."
    } else {
        ""
    };
    let feeds = NameSet {
        verb: "feed",
        verbs: "feeds",
        added: Code::FeedAdded,
        missing: Code::FeedMissing,
        input: true,
    };
    let found = feeds.changes(
        pair,
        &pair.wkey.feeds.iter().cloned().collect::<Vec<_>>(),
        &pair.pkey.feeds.iter().cloned().collect::<Vec<_>>(),
        &format!("{COST}.{tfs_note}"),
    );
    if unsettled {
        found.into_iter().map(|f| f.hint(Hint::Model)).collect()
    } else {
        found
    }
}

/// `FETCH_ALL_UNRESOLVED` when one side fetches every output (TF Serving's empty
/// `output_filter`) and the model does not say what that is; else `FETCH_ADDED`,
/// `FETCH_MISSING`: another fetch set.
fn fetch_set_changed(pair: &Pair) -> Vec<Finding> {
    let Pair {
        wkey, pkey, opts, ..
    } = pair;
    if wkey.fetch_all == pkey.fetch_all {
        if wkey.fetch_all {
            return Vec::new();
        }
        let fetches = NameSet {
            verb: "fetch",
            verbs: "fetches",
            added: Code::FetchAdded,
            missing: Code::FetchMissing,
            input: false,
        };
        return fetches.changes(pair, &wkey.fetches, &pkey.fetches, &format!("{COST}."));
    }
    let (all, explicit) = if wkey.fetch_all {
        ("the warm-up", &pkey.fetches)
    } else {
        ("production", &wkey.fetches)
    };
    let why = if opts.model.is_some() {
        format!("signature {:?} is not in the model, so", pkey.signature)
    } else {
        "without the model".to_string()
    };
    vec![Finding::new(
        Code::FetchAllUnresolved,
        Severity::Error,
        format!(
            "{all} has an empty output_filter (TF Serving fetches every output of the signature), the other fetches {{{}}}; {why} tfreq cannot tell whether that is the same set",
            list(explicit)
        ),
    )
    .sides(Some(fetch_text(wkey)), Some(fetch_text(pkey)))
    .hint(Hint::Model)]
}

/// `FETCH_ALL_RESOLVED`: what an empty `output_filter` fetches, from the model, for
/// each side that has one.
fn fetch_all_resolved(pair: &Pair) -> Vec<Finding> {
    let sides = [
        ("the warm-up", pair.w, pair.wkey),
        ("production", pair.p, pair.pkey),
    ];
    sides
        .into_iter()
        .filter(|(_, m, key)| {
            m.wire == WireFormat::TfServing && m.fetches.is_empty() && !key.fetch_all
        })
        .filter_map(|(side, _, key)| {
            let sig = model_sig(pair.opts, key)?;
            Some(Finding::new(
                Code::FetchAllResolved,
                Severity::Note,
                format!(
                    "{side} has an empty output_filter: TF Serving fetches every output of {:?}: {}",
                    sig.key,
                    sig.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ))
        })
        .collect()
}

/// `ORDER_ONLY` on `output_filter`: the same fetch set in another sequence.
fn fetch_order_only(
    Pair {
        w, wkey, p, pkey, ..
    }: &Pair,
) -> Option<Finding> {
    let wf: Vec<&str> = w.fetches.iter().map(String::as_str).collect();
    let pf: Vec<&str> = p.fetches.iter().map(String::as_str).collect();
    (wkey.fetches == pkey.fetches && !wf.is_empty() && !pf.is_empty() && wf != pf).then(|| {
        Finding::new(
            Code::OrderOnly,
            Severity::Note,
            "output_filter lists the same names in another order: TensorFlow sorts feed and fetch names before looking up its executor, so order does not matter",
        )
        .name("output_filter")
        .sides(Some(wf.join(", ")), Some(pf.join(", ")))
    })
}

/// `ORDER_ONLY` on the inputs: the same feed set in another sequence.
fn input_order_only(
    Pair {
        w, wkey, p, pkey, ..
    }: &Pair,
) -> Option<Finding> {
    let wi: Vec<&str> = w.tensors.iter().map(|t| t.name.as_str()).collect();
    let pi: Vec<&str> = p.tensors.iter().map(|t| t.name.as_str()).collect();
    (wkey.feeds == pkey.feeds && wi != pi && same_set(&wi, &pi)).then(|| {
        Finding::new(
            Code::OrderOnly,
            Severity::Note,
            "the inputs come in another order: a protobuf map has no order, and TensorFlow sorts feed names anyway, so order does not matter",
        )
        .name("inputs")
        .sides(Some(wi.join(", ")), Some(pi.join(", ")))
    })
}

/// The first that applies to a feed both sides send: another dtype, rank, shape or
/// values.
fn tensor_changed(pair: &Pair, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    dtype_changed(wt, pt)
        .or_else(|| rank_changed(pair.opts, wt, pt))
        .or_else(|| shape_changed(pair.opts, wt, pt))
        .or_else(|| values_differ(pair, wt, pt))
}

/// `DTYPE_CHANGED`: the model takes one dtype, so one of the two is refused.
fn dtype_changed(wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    (wt.dtype != pt.dtype).then(|| {
        Finding::new(
            Code::DtypeChanged,
            Severity::Error,
            format!(
                "{name:?} is {} in the warm-up and {} in production: the model takes one dtype, so one of the two requests is refused by the session",
                wt.dtype, pt.dtype
            ),
        )
        .name(name.clone())
        .sides(Some(wt.dtype.to_string()), Some(pt.dtype.to_string()))
    })
}

/// `RANK_CHANGED`: the same feed with another rank. TensorFlow runs both when the graph
/// takes either: TF Serving does not hold a request to its signature's shapes, and
/// half_plus_two, whose signature declares (-1, 1), answered a rank-1 `x`
/// (tests/data/check/manifest.json, `hp2_rank1.bin`). So, as `check`'s
/// `SHAPE_INCOMPATIBLE`, a warning, and an error with `--strict-shapes` (a model compiled
/// per shape, or whose ops refuse the other rank).
fn rank_changed(opts: &DiffOptions, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    let (ws, ps) = (wt.shape.sizes(), pt.shape.sizes());
    let (severity, hint) = if opts.strict_shapes {
        (Severity::Error, None)
    } else {
        (Severity::Warning, Some(Hint::StrictShapes))
    };
    (ws.len() != ps.len()).then(|| {
        Finding::new(
            Code::RankChanged,
            severity,
            format!(
                "{name:?} has shape {} (rank {}) in the warm-up and {} (rank {}) in production: TensorFlow runs both where the graph accepts either rank (half_plus_two answered a rank-1 x for its (-1, 1) signature), but an op that needs one rank refuses the other, and shape-specialising compilers (XLA, TF Serving batching, PAI-Blade) compile again",
                wt.shape, ws.len(), pt.shape, ps.len()
            ),
        )
        .name(name.clone())
        .sides(Some(wt.shape.to_string()), Some(pt.shape.to_string()))
        .with_hint(hint)
    })
}

/// `BATCH_SIZE_CHANGED` (dim 0 only) or `SHAPE_CHANGED`: the same executor, but
/// shape-specialising compilers compile again; errors with `strict_shapes`.
fn shape_changed(opts: &DiffOptions, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    let (ws, ps) = (wt.shape.sizes(), pt.shape.sizes());
    if ws == ps {
        return None;
    }
    let batch_only = ws.first() != ps.first() && ws.get(1..) == ps.get(1..);
    let (code, what) = if batch_only {
        (
            Code::BatchSizeChanged,
            format!(
                "batch size {} in the warm-up, {} in production",
                ws.first().copied().unwrap_or(0),
                ps.first().copied().unwrap_or(0)
            ),
        )
    } else {
        (
            Code::ShapeChanged,
            format!(
                "shape {} in the warm-up, {} in production",
                wt.shape, pt.shape
            ),
        )
    };
    let (severity, hint) = if opts.strict_shapes {
        (Severity::Error, None)
    } else {
        (Severity::Warning, Some(Hint::StrictShapes))
    };
    Some(
        Finding::new(
            code,
            severity,
            format!(
                "{name:?}: {what}. The same executor for TensorFlow's session, but XLA / jit_compile, TF Serving batching and PAI-Blade compile per shape: this shape is not warmed"
            ),
        )
        .name(name.clone())
        .sides(Some(wt.shape.to_string()), Some(pt.shape.to_string()))
        .with_hint(hint),
    )
}

/// `VALUES_DIFFER`: other elements after TensorFlow's reading rules (no effect on
/// executors).
fn values_differ(pair: &Pair, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    (!values_equal(wt, pair.w.wire, pt, pair.p.wire)).then(|| {
        Finding::new(
            Code::ValuesDiffer,
            Severity::Note,
            format!("{name:?} has other values in production: values are not in the executor key, so this does not matter for warm-up"),
        )
        .name(name.clone())
    })
}

/// One name set of the executor key (feeds or fetches) and its finding codes.
struct NameSet {
    verb: &'static str,
    verbs: &'static str,
    added: Code,
    missing: Code,
    input: bool,
}

impl NameSet {
    /// A finding for every name production has and the warm-up lacks, and back; for a
    /// name both have, when one lists it more times than the other (TensorFlow's
    /// executor key keeps a repeated fetch). `warm` and `prod` are sorted.
    fn changes(&self, pair: &Pair, warm: &[String], prod: &[String], cost: &str) -> Vec<Finding> {
        let (verb, verbs, opts) = (self.verb, self.verbs, pair.opts);
        let times = |n: usize| match n {
            1 => "once".to_string(),
            2 => "twice".to_string(),
            n => format!("{n} times"),
        };
        let mut added = Vec::new();
        let mut missing = Vec::new();
        for (f, (w, p)) in counted(warm, prod) {
            let name = f.to_string();
            if p > w && w == 0 {
                added.push(
                    Finding::new(
                        self.added,
                        Severity::Error,
                        format!("production also {verbs} {f:?}, the warm-up does not: a new {verb} set, so {cost}{}", same_tensor(opts, pair.pkey, f, warm, self.input)),
                    )
                    .name(name.clone())
                    .sides(None, Some(name)),
                );
            } else if w > p && p == 0 {
                missing.push(
                    Finding::new(
                        self.missing,
                        Severity::Error,
                        format!("production does not {verb} {f:?}, the warm-up does: a new {verb} set, so {cost}{}", same_tensor(opts, pair.wkey, f, prod, self.input)),
                    )
                    .name(name.clone())
                    .sides(Some(name), None),
                );
            } else if w != p {
                let finding = Finding::new(
                    if p > w { self.added } else { self.missing },
                    Severity::Error,
                    format!("production {verbs} {f:?} {}, the warm-up {}: TensorFlow keeps a repeated name in its executor key (DirectSession::GetOrCreateExecutors sorts the names without removing repeats), so {cost}", times(p), times(w)),
                )
                .name(name.clone())
                .sides(Some(vec![name.as_str(); w].join(", ")), Some(vec![name.as_str(); p].join(", ")));
                if p > w {
                    added.push(finding);
                } else {
                    missing.push(finding);
                }
            }
        }
        added.into_iter().chain(missing).collect()
    }
}

/// With the model: " (\"x:0\" is the tensor name of alias \"x\", which the other side
/// uses: ...)" when `name` and a name of `other` are two names of one tensor.
fn same_tensor(
    opts: &DiffOptions,
    key: &ExecutorKey,
    name: &str,
    other: &[String],
    input: bool,
) -> String {
    let Some(sig) = model_sig(opts, key) else {
        return String::new();
    };
    let found = if input {
        sig.find_input(name)
    } else {
        sig.find_output(name)
    };
    let Some((alias, spec, _)) = found else {
        return String::new();
    };
    let twin = [alias, spec.name.as_str()]
        .into_iter()
        .find(|n| *n != name && !n.is_empty() && other.iter().any(|o| o == n));
    match twin {
        Some(t) => format!(
            " {name:?} and {t:?} name the same tensor (alias {alias:?}, tensor {:?}): a processor that passes names to Session::Run as given (the open-source EAS processor does) builds another executor; one that maps aliases to tensor names would not.",
            spec.name
        ),
        None => String::new(),
    }
}

/// The features of a request's examples, as TF Serving sends each example (the context's
/// features, then the example's own: [`crate::analysis::check_examples`]): how many examples
/// carry each name.
#[derive(Debug)]
struct FeatureSets {
    /// Examples in the request.
    examples: usize,
    /// Each feature name some example carries, with the number of examples that do.
    carried: BTreeMap<String, usize>,
}

impl FeatureSets {
    /// `None` for a request without examples (`EMPTY_INPUT` says that one).
    fn of(msg: &Message) -> Option<FeatureSets> {
        let input = msg.input.as_ref().filter(|i| !i.examples.is_empty())?;
        let mut carried: BTreeMap<String, usize> = BTreeMap::new();
        for ex in &input.examples {
            let names: BTreeSet<&str> = ex
                .features
                .iter()
                .chain(input.context.iter().flat_map(|c| c.features.iter()))
                .map(|f| f.name.as_str())
                .collect();
            for n in names {
                *carried.entry(n.to_string()).or_default() += 1;
            }
        }
        Some(FeatureSets {
            examples: input.examples.len(),
            carried,
        })
    }

    /// How many examples carry `name`.
    fn count(&self, name: &str) -> usize {
        self.carried.get(name).copied().unwrap_or(0)
    }

    /// The features every example carries.
    fn in_every_example(&self) -> BTreeSet<&str> {
        self.carried
            .iter()
            .filter(|(_, &n)| n == self.examples)
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// Which of its examples lack `name`, in words.
    fn lacking(&self, name: &str) -> String {
        match self.count(name) {
            0 if self.examples == 1 => "its example lacks it".to_string(),
            0 => format!("none of its {} examples carries it", self.examples),
            n if self.examples - n == 1 => format!("1 of its {} examples lacks it", self.examples),
            n => format!(
                "{} of its {} examples lack it",
                self.examples - n,
                self.examples
            ),
        }
    }
}

/// What the model's `ParseExample` makes of a feature a request's examples lack.
enum Need {
    /// A dense feature without a default, of this parser type (`float`): the parser
    /// refuses the request.
    Required(&'static str),
    /// Not required: parsed with a default, as a sparse or ragged value, or not at all.
    Optional(String),
}

/// The feature specs of the signatures a request runs (a multi-inference request: each
/// task's), or `None` when the model does not give every one (no `--model`, or a model
/// file without the graph: metadata JSON, `saved_model_cli` text).
fn example_specs<'a>(
    opts: &DiffOptions<'a>,
    msg: &Message,
) -> Option<Vec<&'a crate::signature::ExampleSpec>> {
    let mg = opts.model?;
    let sigs: Vec<&str> = if msg.method == crate::model::Method::MultiInference {
        msg.tasks.iter().map(|t| t.signature()).collect()
    } else {
        vec![msg.effective_signature()]
    };
    sigs.iter()
        .map(|s| mg.signatures.get(*s).and_then(|sig| sig.examples.as_ref()))
        .collect()
}

fn need(specs: &[&crate::signature::ExampleSpec], name: &str) -> Need {
    use crate::analysis::features::kind_of;
    let dense = specs
        .iter()
        .flat_map(|s| s.dense.iter())
        .filter(|d| d.key == name);
    let mut how = None;
    for d in dense {
        if d.default.is_none() {
            return Need::Required(kind_of(d.dtype));
        }
        how = Some(format!(
            "a dense {} feature with a default ({}), which the parser gives an example that lacks it",
            kind_of(d.dtype),
            d.default.as_deref().unwrap_or_default()
        ));
    }
    if let Some(h) = how {
        return Need::Optional(h);
    }
    if specs.iter().any(|s| s.sparse.iter().any(|v| v.key == name)) {
        return Need::Optional(
            "a variable-length (sparse) feature, empty in an example that lacks it".into(),
        );
    }
    if specs.iter().any(|s| s.ragged.iter().any(|v| v.key == name)) {
        return Need::Optional("a ragged feature, empty in an example that lacks it".into());
    }
    Need::Optional("a feature the signature's ParseExample does not read: it is ignored".into())
}

/// `FEATURES_DIFFER`, `FEATURE_NOT_IN_WARMUP`, `FEATURE_NOT_IN_PRODUCTION`: the features
/// every example of the warm-up request carries and those every production example
/// carries differ (a feature only some examples carry on both sides is no change: `check`
/// judges each request's examples). The executor is the same whatever the features (the
/// signature's serialized-examples input is fed either way), but `ParseExample` refuses
/// an example that lacks a dense feature without a default: in a warm-up record that
/// fails the model load (TF Serving stops at the first failing record:
/// tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc,
/// `TF_RETURN_IF_ERROR(warmup_request_executor(prediction_log))`), in production the
/// request. Whether a feature is required comes from the signature's `ParseExample`
/// spec (`--model` with the graph); without it, that cannot be told.
fn features_changed(pair: &Pair) -> Vec<Finding> {
    let (Some(w), Some(p)) = (FeatureSets::of(pair.w), FeatureSets::of(pair.p)) else {
        return Vec::new();
    };
    let (w_all, p_all) = (w.in_every_example(), p.in_every_example());
    if w_all == p_all {
        return Vec::new();
    }
    let specs = example_specs(pair.opts, pair.p);
    let join = |s: &BTreeSet<&str>| s.iter().copied().collect::<Vec<_>>().join(", ");
    let (wn, pn) = (join(&w_all), join(&p_all));
    let p_only: BTreeSet<&str> = p_all.difference(&w_all).copied().collect();
    let w_only: BTreeSet<&str> = w_all.difference(&p_all).copied().collect();
    let mut parts = Vec::new();
    if !p_only.is_empty() {
        parts.push(format!(
            "every production example carries {}, not every warm-up example",
            join(&p_only)
        ));
    }
    if !w_only.is_empty() {
        parts.push(format!(
            "every warm-up example carries {}, not every production example",
            join(&w_only)
        ));
    }
    let tell = if specs.is_some() {
        "the findings below say whether the model requires them"
    } else {
        "whether ParseExample needs them cannot be told without the model's feature spec"
    };
    let mut out = vec![Finding::new(
        Code::FeaturesDiffer,
        Severity::Note,
        format!(
            "{}. The executor is the same whatever the features (the signature's serialized-examples input is fed either way); what differs is what ParseExample reads: {tell}",
            parts.join("; ")
        ),
    )
    .sides(Some(wn.clone()), Some(pn.clone()))
    .with_hint(specs.is_none().then_some(Hint::ModelGraph))];
    let judge = |name: &str, code: Code, lacking: String, sender: &str, side: &str, fails: &str| {
        let (severity, why, hint) = match specs.as_deref().map(|s| need(s, name)) {
            Some(Need::Required(kind)) => (
                Severity::Error,
                format!(
                    "the model requires it (a dense feature without a default), so ParseExample refuses {fails}: \"Feature: {name} (data type: {kind}) is required but could not be found.\""
                ),
                None,
            ),
            Some(Need::Optional(how)) => (
                Severity::Note,
                format!("the model does not require it ({how}), so ParseExample runs {side} without it"),
                None,
            ),
            None => (
                Severity::Warning,
                "whether the model requires it cannot be told without its ParseExample spec".to_string(),
                Some(Hint::ModelGraph),
            ),
        };
        Finding::new(
            code,
            severity,
            format!(
                "{sender} sends feature {name:?} in every example, but in {side} {lacking}: {why}"
            ),
        )
        .name(name.to_string())
        .sides(Some(wn.clone()), Some(pn.clone()))
        .with_hint(hint)
    };
    for name in &p_only {
        out.push(judge(
            name,
            Code::FeatureNotInWarmup,
            w.lacking(name),
            "production",
            "the warm-up request",
            "the warm-up request, which fails the model load",
        ));
    }
    for name in &w_only {
        out.push(judge(
            name,
            Code::FeatureNotInProduction,
            p.lacking(name),
            "the warm-up",
            "the production request",
            "the production request",
        ));
    }
    out
}

fn fetch_text(k: &ExecutorKey) -> String {
    if k.fetch_all {
        "(all outputs)".into()
    } else {
        list(&k.fetches)
    }
}

fn same_set(a: &[&str], b: &[&str]) -> bool {
    a.iter().collect::<BTreeSet<_>>() == b.iter().collect::<BTreeSet<_>>()
}

/// Whether two tensors (dtype and shape already equal) hold the same elements after
/// TensorFlow's reading rules: `tensor_content` or the typed field, a short list's last
/// value repeated, no values read as zeros. So a one-value warm-up tensor and a full
/// production tensor of that value are equal (checked against TensorFlow's
/// `ParseTensor` in `tests/data/values/`). Floats compare by bit pattern: `-0.0` is not
/// `0.0`, a NaN equals the same NaN.
fn values_equal(a: &Tensor, wa: WireFormat, b: &Tensor, wb: WireFormat) -> bool {
    let (ea, eb) = (a.elements(wa), b.elements(wb));
    let readable =
        |e: &crate::model::Elements| !matches!(e.fill, Fill::BadShape | Fill::BadContent);
    let read = readable(&ea) && readable(&eb);
    if ea.fill == eb.fill && ea.stored == eb.stored {
        // The same stored count, used the same way (the last one repeated, the ones past
        // the shape dropped): equal exactly when the stored elements TensorFlow uses are.
        // Runs of wire bytes compare as bytes first (a memcmp, not a gigabyte of
        // element-by-element reads), then element by element from the first byte that
        // differs.
        let span = match (ea.expected, eb.expected) {
            (Some(n), Some(m)) if n == m && read => n.min(ea.stored as u64) as usize,
            _ => ea.stored,
        };
        return ea.first_stored_difference(&eb, span).is_none();
    }
    match (ea.expected, eb.expected) {
        (Some(n), Some(m)) if n == m && read => {
            // Element i is stored[min(i, stored - 1)]: past the longer list both sides
            // repeat their last value, so comparing that far settles it.
            let span = (ea.stored.max(eb.stored).max(1) as u64).min(n);
            (0..span as usize).all(|i| same_scalar(ea.get(i), eb.get(i)))
        }
        // Tensors TensorFlow refuses, storing other counts (or used otherwise): other
        // values.
        _ => false,
    }
}

/// [`diff_batches`] with what the model tells, as [`diff_labeled`] resolves executor keys
/// with it: a TF Serving predict request's empty `output_filter` is every output of its
/// signature (so a warm-up that fetches all and production that lists every output share
/// a batch group), and a warm-up request that names no model belongs to the one model
/// production's requests name (TF Serving ignores the name in warm-up records).
/// Without a model it is [`diff_batches`].
pub fn diff_batches_with_model(
    report: &mut Report,
    rule: &BatchRule,
    source: &str,
    warmup: &[Labeled],
    prod: &[Labeled],
    strict: bool,
    model: Option<&MetaGraph>,
) {
    let Some(mg) = model else {
        return diff_batches(report, rule, source, warmup, prod, strict);
    };
    let named: BTreeSet<&str> = prod
        .iter()
        .filter_map(|l| l.message.model_spec.as_ref())
        .map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let one_model = match named.len() {
        1 => named.into_iter().next(),
        _ => None,
    };
    let fit = |m: &Message, name: Option<&str>| -> Option<Message> {
        let mut out: Option<Message> = None;
        if m.wire != WireFormat::TfServing || m.method != Method::Predict {
            return None;
        }
        if m.fetches.is_empty() {
            if let Some(sig) = mg.signatures.get(m.effective_signature()) {
                out.get_or_insert_with(|| m.clone()).fetches =
                    sig.outputs.keys().cloned().collect();
            }
        }
        let unnamed = m.model_spec.as_ref().is_none_or(|s| s.name.is_empty());
        if let (Some(name), true) = (name, unnamed) {
            crate::formats::set_model_name(out.get_or_insert_with(|| m.clone()), name);
        }
        out
    };
    let wf: Vec<Option<Message>> = warmup.iter().map(|l| fit(l.message, one_model)).collect();
    let pf: Vec<Option<Message>> = prod.iter().map(|l| fit(l.message, None)).collect();
    let w2: Vec<Labeled> = warmup
        .iter()
        .zip(&wf)
        .map(|(l, f)| Labeled::new(l.file, l.label, f.as_ref().unwrap_or(l.message)))
        .collect();
    let p2: Vec<Labeled> = prod
        .iter()
        .zip(&pf)
        .map(|(l, f)| Labeled::new(l.file, l.label, f.as_ref().unwrap_or(l.message)))
        .collect();
    diff_batches(report, rule, source, &w2, &p2, strict);
}

/// With batching parameters ([`crate::analysis::BatchRule`]): adds the batch-size comparison
/// of the same warm-up and production requests to their [`diff_labeled`] report: each
/// production request gets its batch
/// findings, and its `BATCH_SIZE_CHANGED` is judged again by padded size (a note when
/// the padded sizes are warmed; dropped when `BATCH_SIZE_NOT_WARMED`, `BATCH_TOO_LARGE`
/// or `NOT_BATCHABLE` says more); the warm-up requests' refusals are input problems;
/// the section is the report's `batching`.
pub fn diff_batches(
    report: &mut Report,
    rule: &BatchRule,
    source: &str,
    warmup: &[Labeled],
    prod: &[Labeled],
    strict: bool,
) {
    let w: Vec<(&str, &Message)> = warmup.iter().map(|l| (l.label, l.message)).collect();
    let p: Vec<(&str, &Message)> = prod.iter().map(|l| (l.label, l.message)).collect();
    let d = crate::analysis::batch::diff_sizes(rule, source, &w, &p, strict);
    for (req, (findings, warmed)) in report.requests.iter_mut().zip(d.production) {
        let keep_as_note = warmed && findings.is_empty();
        req.findings.retain_mut(|f| {
            if f.code != Code::BatchSizeChanged {
                return true;
            }
            if keep_as_note {
                f.severity = Severity::Note;
                f.message = format!(
                    "{:?}: shape {} in the warm-up, {} in production; with the batching parameters given, production's batch runs padded to a size the warm-up reaches: no new compiled shape",
                    f.name.as_deref().unwrap_or_default(),
                    f.left.as_deref().unwrap_or_default(),
                    f.right.as_deref().unwrap_or_default()
                );
            }
            keep_as_note
        });
        req.findings.extend(findings);
    }
    for (w, f) in warmup.iter().zip(d.warmup) {
        if !f.is_empty() {
            report.add_problems(w.file, w.label, f);
        }
    }
    report.batching = Some(d.sizes);
    report.summarise();
}

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
