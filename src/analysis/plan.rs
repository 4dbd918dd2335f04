//! Warm-up planning: which requests go into a warm-up. One request stands for every
//! request of its key ([`By`]: executor key, shape key, or executor key and batch size;
//! [`batch_plan`]: batch group, for a batching server), the most frequent key first
//! (ties: the key seen first), each represented by its most frequent shape's first
//! request. `tfreq warmup` plans from a log's counts ([`plan`], [`batch_plan`]);
//! `tfreq record` ([`crate::net::Recorder`], feature `net`) keeps one request per
//! [`PlanKey`] as traffic passes and writes the most frequent one first
//! ([`most_frequent`]); `tfreq keys` counts what the plans are made of.
//!
//! ```
//! use tfreq::analysis::{KeyCounts, Origin};
//! use tfreq::analysis::{plan, By};
//! let mut cov = KeyCounts::default();
//! for (i, f) in ["faq_prod_batch4.bin", "faq_prod.bin", "faq_prod_batch4.bin"].iter().enumerate() {
//!     let m = tfreq::decode(&std::fs::read(format!("tests/data/eas/{f}"))?)?;
//!     cov.add(&m, Origin { file: i, entry: 0, record: false }, true);
//! }
//! // One executor key: one request, batch 4's (its most frequent shape), for all three.
//! let p = plan(&cov, By::Executor);
//! assert_eq!((p.len(), p[0].count, p[0].first.file), (1, 3, 0));
//! assert_eq!(p[0].request.unwrap().tensors[0].shape.sizes()[0], 4);
//! // By shape: batch 4 (two requests) before batch 1 (one).
//! let counts: Vec<u64> = plan(&cov, By::Shape).iter().map(|r| r.count).collect();
//! assert_eq!(counts, [2, 1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::analysis::batch::{BatchGroup, BatchRule, NotBatchable, Run, batch_of};
use crate::analysis::coverage::{KeyCounts, Origin};
use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::model::Message;

/// What counts as one key: one request is kept per distinct key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum By {
    /// The executor key ([`ExecutorKey`]: signature, feed and fetch sets).
    #[default]
    Executor,
    /// The shape key ([`ShapeKey`]: the executor key and every feed's dtype and shape).
    Shape,
    /// The executor key and the batch size (the feeds' common 0th dimension, see
    /// [`batch_of`]; the number of examples of a classify, regress or multi-inference
    /// request). A request with no common batch dimension (a scalar feed, feeds of other
    /// 0th dimensions) is kept per shape key.
    Batch,
}

/// The key a request stands for in a warm-up planned [`By`] one of the ways; shown as
/// the executor key, then the shapes and the batch size when they are part of it.
///
/// ```
/// use tfreq::analysis::ShapeKey;
/// use tfreq::analysis::{By, PlanKey};
/// let mut r = tfreq::TFRequest::new("serving_default");
/// r.add_feed("x", &[4, 3], tfreq::DType::Float, vec![0f32; 12])?.add_fetch("y");
/// let k = ShapeKey::of(r.message());
/// assert_eq!(PlanKey::of(&k, By::Executor).to_string(), k.key.to_string());
/// assert!(PlanKey::of(&k, By::Shape).to_string().ends_with(" [x DT_FLOAT [4, 3]]"));
/// assert!(PlanKey::of(&k, By::Batch).to_string().ends_with(" (batch 4)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanKey {
    key: ExecutorKey,
    shapes: BTreeMap<String, (String, Vec<i64>)>,
    batch: Option<u64>,
}

impl PlanKey {
    /// The key of a request of shape key `k`.
    pub fn of(k: &ShapeKey, by: By) -> PlanKey {
        let executor = || PlanKey {
            key: k.key.clone(),
            shapes: BTreeMap::new(),
            batch: None,
        };
        let shape = || PlanKey {
            key: k.key.clone(),
            shapes: k.shapes.clone(),
            batch: None,
        };
        match by {
            By::Executor => executor(),
            By::Shape => shape(),
            By::Batch => {
                let feeds = k
                    .shapes
                    .iter()
                    .map(|(n, (_, d))| (n.as_str(), d.as_slice()));
                match batch_of(feeds).ok().flatten() {
                    Some(b) => PlanKey {
                        batch: Some(b),
                        ..executor()
                    },
                    // No common batch dimension (a scalar feed...): every shape is its own.
                    None => shape(),
                }
            }
        }
    }

    /// The executor key.
    pub fn executor_key(&self) -> &ExecutorKey {
        &self.key
    }
}

impl fmt::Display for PlanKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.key)?;
        if !self.shapes.is_empty() {
            let shapes: Vec<String> = self
                .shapes
                .iter()
                .map(|(n, (dt, d))| format!("{n} {dt} {d:?}"))
                .collect();
            write!(f, " [{}]", shapes.join(", "))?;
        }
        if let Some(b) = self.batch {
            write!(f, " (batch {b})")?;
        }
        Ok(())
    }
}

/// The order of a plan: the larger count first, then the one seen first.
fn rank<O: Ord>(a: (u64, O), b: (u64, O)) -> Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

/// The index of the most frequent of some keys, given as (count, when first seen):
/// ties go to the one seen first. `None` when there are none.
///
/// ```
/// use tfreq::analysis::most_frequent;
/// assert_eq!(most_frequent([(2, 0), (5, 3), (5, 1)]), Some(2));
/// assert_eq!(most_frequent(std::iter::empty::<(u64, u64)>()), None);
/// ```
pub fn most_frequent<O: Ord>(keys: impl IntoIterator<Item = (u64, O)>) -> Option<usize> {
    keys.into_iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| rank((a.0, &a.1), (b.0, &b.1)))
        .map(|(i, _)| i)
}

/// One key of a warm-up plan.
#[derive(Debug, Clone)]
pub struct Planned<'a> {
    /// The key.
    pub key: PlanKey,
    /// The requests it stands for.
    pub count: u64,
    /// Where the first of them is.
    pub first: Origin,
    /// The request that represents them: the first request of the key's most frequent
    /// shape key (`None` when the counts kept no request, [`KeyCounts::add`]'s `keep`).
    pub request: Option<&'a Message>,
}

/// One request per key of `cov` ([`By`]), the most frequent key first (ties: seen
/// first), each the first request of the key's most frequent shape key.
pub fn plan(cov: &KeyCounts, by: By) -> Vec<Planned<'_>> {
    let mut out: Vec<Planned<'_>> = Vec::new();
    let mut index: HashMap<PlanKey, usize> = HashMap::new();
    // Shape keys most frequent first: a key's first shape met is its most frequent.
    for (k, s) in cov.shape_keys() {
        let key = PlanKey::of(k, by);
        match index.get(&key) {
            Some(&i) => {
                out[i].count += s.count;
                out[i].first = out[i].first.min(s.first);
            }
            None => {
                index.insert(key.clone(), out.len());
                out.push(Planned {
                    key,
                    count: s.count,
                    first: s.first,
                    request: s.representative.as_ref(),
                });
            }
        }
    }
    out.sort_by(|a, b| rank((a.count, a.first), (b.count, b.first)));
    out
}

/// A batch group of a [`BatchPlan`].
#[derive(Debug, Clone)]
pub struct BatchPlanned<'a> {
    /// The executor key and every feed's dimensions after the 0th.
    pub group: BatchGroup,
    /// The requests of the group the server runs (of a size the rule pads, not refuses).
    pub count: u64,
    /// The first request of its most frequent batchable shape key the server runs.
    pub request: &'a Message,
}

/// A shape key with no common 0th dimension: a batching server refuses its requests.
#[derive(Debug, Clone)]
pub struct Unbatchable {
    /// The shape key, as text.
    pub key: String,
    /// Where its first request is (`FILE record N`).
    pub first: String,
    /// Why.
    pub why: NotBatchable,
}

impl fmt::Display for Unbatchable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): not batchable, \"{}\" ({})",
            self.key, self.first, self.why.message, self.why.detail
        )
    }
}

/// The warm-up of a batching server: a request per batch group, and the shape keys
/// none can stand for.
#[derive(Debug, Clone)]
pub struct BatchPlan<'a> {
    /// The groups with a request the server runs, most requests first (ties: seen
    /// first).
    pub groups: Vec<BatchPlanned<'a>>,
    /// The shape keys that are not batchable, most frequent first.
    pub unbatchable: Vec<Unbatchable>,
}

/// Plans the warm-up of a server batching under `rule`: for each batch group of `cov`
/// ([`BatchGroup`]), the first request of its most frequent batchable shape key (the
/// caller resizes it to every allowed batch size, [`BatchRule::warmup_sizes`]).
///
/// ```
/// use tfreq::analysis::BatchRule;
/// use tfreq::analysis::{KeyCounts, Origin};
/// use tfreq::analysis::batch_plan;
/// let mut cov = KeyCounts::default();
/// // Batches of 1, 4 and 4 rows of 3: one group (x DT_FLOAT [_, 3]).
/// for (i, rows) in [1usize, 4, 4].into_iter().enumerate() {
///     let mut r = tfreq::TFRequest::new("serving_default");
///     r.add_feed("x", &[rows as i64, 3], tfreq::DType::Float, vec![0f32; rows * 3])?;
///     cov.add(r.message(), Origin { file: i, entry: 0, record: false }, true);
/// }
/// // EAS requests with scalar feeds have no batch size: named, not planned.
/// let m = tfreq::decode(&std::fs::read("tests/data/eas/faq_prod.bin")?)?;
/// cov.add(&m, Origin { file: 3, entry: 0, record: false }, true);
/// let p = batch_plan(&cov, &BatchRule::from_allowed(&[2, 8])?);
/// assert_eq!((p.groups.len(), p.groups[0].count), (1, 3));
/// assert_eq!(p.groups[0].request.tensors[0].shape.sizes(), [4, 3]); // the most frequent
/// assert_eq!(p.unbatchable.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn batch_plan<'a>(cov: &'a KeyCounts, rule: &BatchRule) -> BatchPlan<'a> {
    let mut groups: Vec<(BatchGroup, u64, Option<&Message>)> = Vec::new();
    let mut unbatchable = Vec::new();
    for (k, stat) in cov.shape_keys() {
        let batchable = batch_of(
            k.shapes
                .iter()
                .map(|(n, (_, d))| (n.as_str(), d.as_slice())),
        );
        let g = BatchGroup::of(k);
        let i = match groups.iter().position(|(x, _, _)| *x == g) {
            Some(i) => i,
            None => {
                groups.push((g, 0, None));
                groups.len() - 1
            }
        };
        // Requests a warm-up can cover: those the server runs (not refused for size).
        let runs = |n: u64| matches!(rule.run(n), Run::Padded(_));
        if matches!(batchable, Ok(Some(n)) if runs(n)) {
            groups[i].1 += stat.count;
        }
        match batchable {
            Ok(Some(n)) if runs(n) && groups[i].2.is_none() => {
                groups[i].2 = stat.representative.as_ref()
            }
            Err(why) => unbatchable.push(Unbatchable {
                key: k.key.to_string(),
                first: cov.describe(stat.first),
                why,
            }),
            _ => {}
        }
    }
    // Stable: groups of one count stay in the order first met.
    groups.sort_by_key(|g| std::cmp::Reverse(g.1));
    BatchPlan {
        groups: groups
            .into_iter()
            .filter_map(|(group, count, m)| {
                m.map(|request| BatchPlanned {
                    group,
                    count,
                    request,
                })
            })
            .collect(),
        unbatchable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(files: &[&str]) -> KeyCounts {
        let mut cov = KeyCounts::default();
        for (i, f) in files.iter().enumerate() {
            let bytes = std::fs::read(format!("tests/data/eas/{f}")).unwrap();
            let m = crate::decode(&bytes).unwrap();
            cov.add(
                &m,
                Origin {
                    file: i,
                    entry: 0,
                    record: false,
                },
                true,
            );
        }
        cov
    }

    /// A plan by executor key is the coverage table's executor keys, in its order, each
    /// with its most frequent shape's request.
    #[test]
    fn executor_plan_is_the_coverage_order() {
        let cov = counts(&[
            "faq_prod.bin",
            "faq_prod_batch4.bin",
            "faq_prod_batch4.bin",
            "dtype_float.bin",
        ]);
        let p = plan(&cov, By::Executor);
        let groups = cov.executor_keys();
        assert_eq!(p.len(), groups.len());
        for (a, g) in p.iter().zip(&groups) {
            assert_eq!(a.key.executor_key(), &g.key);
            assert_eq!(a.count, g.count);
            let want = cov.keys[&g.shapes[0].0].representative.as_ref();
            assert_eq!(a.request, want);
        }
        assert_eq!(p[0].count, 3);
    }

    #[test]
    fn ties_go_to_the_key_seen_first() {
        assert_eq!(most_frequent([(1, 4), (1, 2), (1, 3)]), Some(1));
        assert_eq!(most_frequent([(1, 0), (2, 9)]), Some(1));
        let cov = counts(&["faq_prod.bin", "faq_prod_batch4.bin"]);
        let firsts: Vec<usize> = plan(&cov, By::Shape).iter().map(|p| p.first.file).collect();
        assert_eq!(firsts, [0, 1]);
    }
}
