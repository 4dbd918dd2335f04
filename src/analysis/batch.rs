//! Batch sizes that really run: with TF Serving's batching (`--enable_batching` and a
//! `--batching_parameters_file`), a request is a *task* whose size is its 0th dimension,
//! and the session runs a *batch* padded to an allowed size. A model compiled per shape
//! (XLA / `jit_compile`, TF-TRT, PAI-Blade) compiles once per padded size, so a warm-up
//! must send every padded size production reaches, not production's raw sizes.
//!
//! The rule, from TF Serving's and TensorFlow's sources:
//!
//! - **The batch size of a request** is the 0th dimension of its inputs; every input
//!   must have one and all must agree, else the batching session refuses the request
//!   with INVALID_ARGUMENT "Batching Run() input tensors must have equal 0th-dimension
//!   size" (or "... must have at least one dimension" for a scalar input, "... must
//!   have at least one input tensor" with none): `ComputeTensorBatchSize` in
//!   <https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/batching_util.h>,
//!   called by `BatchingSession::ComputeInputSize` before the task is scheduled
//!   (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/batching_session.cc>).
//!   tfreq reports such a request as `NOT_BATCHABLE` and counts no size for it.
//! - **A task larger than `max_batch_size`** (the queue's `input_batch_size_limit`,
//!   set from it by `GetQueueOptions` in
//!   <https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/bundle_factory_util.h>;
//!   1000 when unset) is refused, not split, with INVALID_ARGUMENT "Task size 33 is
//!   larger than maximum input batch size 32": `Queue::ValidateBatchTaskQueueCapacity`
//!   in tensorflow/core/kernels/batching_util/shared_batch_scheduler.h
//!   (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/kernels/batching_util/shared_batch_scheduler.h>),
//!   also with `enable_large_batch_splitting`: `BATCH_TOO_LARGE`.
//! - **With `enable_large_batch_splitting`** a task up to `max_batch_size` that does
//!   not fit the open batch is split into pieces of at most `max_execution_batch_size`
//!   (`ScheduleWithoutOrEagerSplitImpl` there, `SplitInputTask` in batching_session.cc):
//!   alone, a task of 20 with a `max_execution_batch_size` of 8 runs as 8, 8 and 4.
//! - **Padding**: `BatchingSession::MergeInputTensors` pads each batch to
//!   `RoundToLowestAllowedBatchSize(allowed_batch_sizes, batch size)`
//!   (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/batching/batching_util.cc>):
//!   the first allowed size, in the list's order, that is at least the batch's size; the
//!   size itself when the list is empty or no entry is large enough. Padding repeats the
//!   first row of the batch's last task; `pad_variable_length_inputs` pads the other
//!   dimensions, not the 0th.
//! - `WrapSessionForBatching` (bundle_factory_util.cc) fails the model load unless the
//!   last allowed size equals `max_batch_size` ("Last entry in allowed_batch_sizes must
//!   match max_batch_size"); it does not check that the sizes increase.
//!
//! A request alone in its batch (a warm-up record, or any request that finds the open
//! batch empty) runs at [`BatchRule::run`]'s sizes; under load several requests share a
//! batch, their sizes add up, and any allowed size can run. tests/data/examples/batch/
//! (expected.json, written by tests/data/gen/make_examples.py) holds the sizes of a log
//! TensorFlow ran, checked against this module in cli/tests/interop/batch.rs.
//!
//! Batching groups requests by their feed and fetch tensor sets (`TensorSignature`,
//! one queue each), and a compiled shape is the padded batch with the other dimensions,
//! so the padded sizes are counted per [`BatchGroup`]: the executor key and every
//! feed's dtype and dimensions after the 0th.
//!
//! ```
//! use tfreq::analysis::{BatchRule, Run};
//! let rule = BatchRule::from_allowed(&[1, 8, 32])?;
//! assert_eq!(rule.run(3), Run::Padded(vec![8]));
//! assert_eq!(rule.run(33).refusal().as_deref(), Some("Task size 33 is larger than maximum input batch size 32"));
//! # Ok::<(), tfreq::analysis::RuleError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::analysis::{Code, Finding, Severity};
use crate::formats::batching_params::BatchingParameters;
use crate::model::Message;

/// `input_batch_size_limit` when `max_batch_size` is unset: `QueueOptions` in
/// shared_batch_scheduler.h.
pub const DEFAULT_MAX_BATCH_SIZE: u64 = 1000;

/// How a batching TF Serving runs a request of a given size (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchRule {
    /// `allowed_batch_sizes`, in the order given.
    pub allowed_batch_sizes: Vec<u64>,
    /// `max_batch_size`: larger requests are refused.
    pub max_batch_size: u64,
    /// `max_execution_batch_size` when `enable_large_batch_splitting` is on: requests
    /// larger than it are split into pieces of at most this size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_execution_batch_size: Option<u64>,
    /// `pad_variable_length_inputs` (does not change the 0th dimension).
    pub pad_variable_length_inputs: bool,
}

/// Batching parameters TF Serving would not load a model with, or a size list that is
/// not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RuleError(pub String);

/// What a request of one size runs as, alone in its batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// The padded size of each batch it runs in (one, or several when split).
    Padded(Vec<u64>),
    /// Refused before batching: TensorFlow's message.
    Refused(String),
}

impl Run {
    /// TensorFlow's message when the request is refused.
    pub fn refusal(&self) -> Option<String> {
        match self {
            Run::Refused(m) => Some(m.clone()),
            Run::Padded(_) => None,
        }
    }
}

impl BatchRule {
    /// The rule of `--allowed-batch-sizes`: these sizes, `max_batch_size` the last one
    /// (as TF Serving requires), no splitting.
    pub fn from_allowed(sizes: &[u64]) -> Result<BatchRule, RuleError> {
        let Some(&last) = sizes.last() else {
            return Err(RuleError("no allowed batch size given".into()));
        };
        if let Some(z) = sizes.iter().position(|&s| s == 0) {
            return Err(RuleError(format!(
                "allowed batch size {} is 0: a batch holds at least one row",
                z + 1
            )));
        }
        Ok(BatchRule {
            allowed_batch_sizes: sizes.to_vec(),
            max_batch_size: last,
            max_execution_batch_size: None,
            pad_variable_length_inputs: false,
        })
    }

    /// The rule of a `--batching_parameters_file`, refusing what TF Serving refuses to
    /// load a model with (`WrapSessionForBatching`, bundle_factory_util.cc).
    pub fn from_params(p: &BatchingParameters) -> Result<BatchRule, RuleError> {
        let positive = |what: &str, v: i64| {
            u64::try_from(v)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| RuleError(format!("{what} is {v}: it must be at least 1")))
        };
        let max = match p.max_batch_size {
            Some(v) => positive("max_batch_size", v)?,
            None => DEFAULT_MAX_BATCH_SIZE,
        };
        let mut allowed = Vec::with_capacity(p.allowed_batch_sizes.len());
        for &a in &p.allowed_batch_sizes {
            allowed.push(positive("an entry of allowed_batch_sizes", a)?);
        }
        if let Some(&last) = allowed.last()
            && last != max
        {
            return Err(RuleError(format!(
                "TF Serving refuses to load a model with these parameters: \"Last entry in allowed_batch_sizes must match max_batch_size; last entry was {last}; expected {max}\" (WrapSessionForBatching, tensorflow_serving/servables/tensorflow/bundle_factory_util.cc)"
            )));
        }
        let split = if p.enable_large_batch_splitting == Some(true) {
            // GetQueueOptions: max_execution_batch_size, else max_batch_size.
            Some(match p.max_execution_batch_size {
                Some(v) => positive("max_execution_batch_size", v)?,
                None => max,
            })
        } else {
            None
        };
        Ok(BatchRule {
            allowed_batch_sizes: allowed,
            max_batch_size: max,
            max_execution_batch_size: split,
            pad_variable_length_inputs: p.pad_variable_length_inputs,
        })
    }

    /// `RoundToLowestAllowedBatchSize`: the first allowed size at least `size`, or
    /// `size` itself.
    pub fn padded(&self, size: u64) -> u64 {
        self.allowed_batch_sizes
            .iter()
            .copied()
            .find(|&a| a >= size)
            .unwrap_or(size)
    }

    /// The batches a request of `size` runs as when it is alone in its batch.
    pub fn run(&self, size: u64) -> Run {
        if size > self.max_batch_size {
            return Run::Refused(format!(
                "Task size {size} is larger than maximum input batch size {}",
                self.max_batch_size
            ));
        }
        let piece = self.max_execution_batch_size.unwrap_or(u64::MAX).max(1);
        let mut out = Vec::new();
        let mut left = size;
        while left > piece {
            out.push(self.padded(piece));
            left -= piece;
        }
        out.push(self.padded(left));
        Run::Padded(out)
    }

    /// The sizes a warm-up sends so that every allowed size runs once: each allowed
    /// size a request can have (at most `max_batch_size`), once, ascending.
    pub fn warmup_sizes(&self) -> Vec<u64> {
        let set: BTreeSet<u64> = self
            .allowed_batch_sizes
            .iter()
            .copied()
            .filter(|&a| a <= self.max_batch_size)
            .collect();
        set.into_iter().collect()
    }
}

/// Why the batching session refuses a request before it has a size: TensorFlow's
/// message and what in the request causes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotBatchable {
    /// `Batching Run() input tensors must have equal 0th-dimension size`, ...
    pub message: &'static str,
    /// Which inputs, and their 0th dimensions.
    pub detail: String,
}

/// The batch size of a request with these feeds (name, dims): their common 0th
/// dimension (`ComputeTensorBatchSize`). `Ok(None)` when a shape is invalid (negative
/// dimension: TensorFlow refuses the tensor first, and `BAD_SHAPE` says so).
pub fn batch_of<'a>(
    feeds: impl IntoIterator<Item = (&'a str, &'a [i64])>,
) -> Result<Option<u64>, NotBatchable> {
    let mut first: Option<(&str, i64)> = None;
    let mut invalid = false;
    let mut any = false;
    for (name, dims) in feeds {
        any = true;
        let Some(&d0) = dims.first() else {
            return Err(NotBatchable {
                message: "Batching Run() input tensors must have at least one dimension",
                detail: format!("{name:?} is a scalar (rank 0): it has no batch dimension"),
            });
        };
        if dims.iter().any(|&d| d < 0) {
            invalid = true;
            continue;
        }
        match first {
            None => first = Some((name, d0)),
            Some((n0, s0)) if s0 != d0 => {
                return Err(NotBatchable {
                    message: "Batching Run() input tensors must have equal 0th-dimension size",
                    detail: format!("{n0:?} has {s0} rows, {name:?} {d0}"),
                });
            }
            Some(_) => {}
        }
    }
    if !any {
        return Err(NotBatchable {
            message: "Batching Run() must have at least one input tensor",
            detail: "the request has no inputs".into(),
        });
    }
    if invalid {
        return Ok(None);
    }
    Ok(first.map(|(_, s)| s as u64))
}

/// The batch size of a request (see [`batch_of`]).
pub fn batch_of_message(m: &Message) -> Result<Option<u64>, NotBatchable> {
    let shapes: Vec<(&str, Vec<i64>)> = m
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.shape.sizes()))
        .collect();
    batch_of(shapes.iter().map(|(n, d)| (*n, d.as_slice())))
}

/// What batching keys a compiled shape on besides the padded size: the executor key
/// and every feed's dtype and dimensions after the 0th.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct BatchGroup {
    /// The executor key.
    pub key: ExecutorKey,
    /// Feed name → (dtype, dimensions after the 0th).
    pub feeds: BTreeMap<String, (String, Vec<i64>)>,
}

impl BatchGroup {
    /// The group of a shape key.
    pub fn of(k: &ShapeKey) -> BatchGroup {
        BatchGroup {
            key: k.key.clone(),
            feeds: k
                .shapes
                .iter()
                .map(|(n, (dt, dims))| {
                    (
                        n.clone(),
                        (dt.clone(), dims.get(1..).unwrap_or(&[]).to_vec()),
                    )
                })
                .collect(),
        }
    }

    /// The feeds as `x DT_FLOAT [_, 2]` (`_` the batch dimension).
    pub fn feeds_text(&self) -> String {
        self.feeds
            .iter()
            .map(|(n, (dt, dims))| {
                let rest: Vec<String> = dims.iter().map(i64::to_string).collect();
                let dims = std::iter::once("_".to_string())
                    .chain(rest)
                    .collect::<Vec<_>>();
                format!("{n} {dt} [{}]", dims.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How one request runs under the rule (a row of the report's `batching` section).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestRun {
    /// The request (file, or file and record).
    pub label: String,
    /// Its batch size; absent when it has none ([`RequestRun::refused`] says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u64>,
    /// The padded size of each batch it runs in alone (several when split); empty when
    /// refused.
    pub padded_batch_sizes: Vec<u64>,
    /// TensorFlow's message when the request is refused before it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One [`BatchGroup`]'s padded sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSizes {
    /// The group.
    #[serde(skip)]
    pub group: BatchGroup,
    /// The executor key.
    pub key: ExecutorKey,
    /// The feeds, `x DT_FLOAT [_, 2]`.
    pub feeds: String,
    /// Production requests by the padded size they run at (a split request counts
    /// once per batch).
    pub production: BTreeMap<u64, u64>,
    /// The padded sizes the warm-up runs (`diff` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<BTreeSet<u64>>,
    /// Padded sizes production reaches and the warm-up does not (`diff` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_warmed: Option<Vec<u64>>,
}

/// The report's `batching` section (`diff`, `keys`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSizes {
    /// The rule applied.
    pub rule: BatchRule,
    /// Where the rule came from (`--allowed-batch-sizes` or the parameters file).
    pub source: String,
    /// Padded sizes production reaches, over every group.
    pub production_padded_sizes: Vec<u64>,
    /// Padded sizes the warm-up reaches (`diff` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_padded_sizes: Option<Vec<u64>>,
    /// Production's padded sizes no warm-up request of the same group runs (`diff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_warmed: Option<Vec<u64>>,
    /// Production requests refused for their size (`BATCH_TOO_LARGE`).
    pub too_large: u64,
    /// Production requests the batching session refuses for their shapes
    /// (`NOT_BATCHABLE`).
    pub not_batchable: u64,
    /// Each group's sizes, most production requests first.
    pub groups: Vec<GroupSizes>,
    /// `diff`: how each warm-up request runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup: Vec<RequestRun>,
    /// `diff`: how each production request runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestRun>,
}

/// A request's size and run, or why it has none.
fn judge(rule: &BatchRule, m: &ShapeKey) -> (Option<u64>, Result<Run, NotBatchable>) {
    let b = batch_of(
        m.shapes
            .iter()
            .map(|(n, (_, d))| (n.as_str(), d.as_slice())),
    );
    match b {
        Ok(Some(n)) => (Some(n), Ok(rule.run(n))),
        Ok(None) => (None, Ok(Run::Padded(Vec::new()))),
        Err(e) => (None, Err(e)),
    }
}

/// Counts padded sizes over production shape keys (with their request counts):
/// what `keys` reports, and the production half of [`diff_sizes`].
pub fn count_sizes<'a>(
    rule: &BatchRule,
    source: &str,
    prod: impl IntoIterator<Item = (&'a ShapeKey, u64)>,
) -> BatchSizes {
    let mut groups: BTreeMap<BatchGroup, BTreeMap<u64, u64>> = BTreeMap::new();
    let (mut too_large, mut not_batchable) = (0, 0);
    for (k, n) in prod {
        match judge(rule, k).1 {
            Ok(Run::Padded(ps)) => {
                let g = groups.entry(BatchGroup::of(k)).or_default();
                for p in ps {
                    *g.entry(p).or_default() += n;
                }
            }
            Ok(Run::Refused(_)) => too_large += n,
            Err(_) => not_batchable += n,
        }
    }
    let mut gs: Vec<(BatchGroup, BTreeMap<u64, u64>)> = groups.into_iter().collect();
    gs.sort_by_key(|(_, m)| std::cmp::Reverse(m.values().sum::<u64>()));
    let all: BTreeSet<u64> = gs.iter().flat_map(|(_, m)| m.keys().copied()).collect();
    BatchSizes {
        rule: rule.clone(),
        source: source.to_string(),
        production_padded_sizes: all.into_iter().collect(),
        warmup_padded_sizes: None,
        not_warmed: None,
        too_large,
        not_batchable,
        groups: gs
            .into_iter()
            .map(|(g, production)| GroupSizes {
                feeds: g.feeds_text(),
                key: g.key.clone(),
                group: g,
                production,
                warmup: None,
                not_warmed: None,
            })
            .collect(),
        warmup: Vec::new(),
        requests: Vec::new(),
    }
}

fn request_run(label: &str, size: Option<u64>, run: &Result<Run, NotBatchable>) -> RequestRun {
    let (padded, refused) = match run {
        Ok(Run::Padded(p)) => (p.clone(), None),
        Ok(Run::Refused(m)) => (Vec::new(), Some(m.clone())),
        Err(e) => (Vec::new(), Some(e.message.to_string())),
    };
    RequestRun {
        label: label.to_string(),
        batch_size: size,
        padded_batch_sizes: padded,
        refused,
    }
}

/// The batch findings of one request: `NOT_BATCHABLE` or `BATCH_TOO_LARGE` (errors;
/// `warmup` says the request is a warm-up record, whose failure fails the model load).
fn refusal_findings(
    size: Option<u64>,
    run: &Result<Run, NotBatchable>,
    rule: &BatchRule,
    warmup: bool,
) -> Option<Finding> {
    let consequence = if warmup {
        "a warm-up request that fails fails the model load"
    } else {
        "TF Serving answers INVALID_ARGUMENT"
    };
    match run {
        Err(e) => Some(Finding::new(
            Code::NotBatchable,
            Severity::Error,
            format!(
                "the batching session refuses it before batching: \"{}\" ({}; BatchingSession::ComputeInputSize): {consequence}",
                e.message, e.detail
            ),
        )),
        Ok(Run::Refused(m)) => Some(
            Finding::new(
                Code::BatchTooLarge,
                Severity::Error,
                format!(
                    "batch size {} is larger than max_batch_size {}: the batch scheduler refuses it, \"{m}\" (Queue::ValidateBatchTaskQueueCapacity; it is not split, also with enable_large_batch_splitting): {consequence}",
                    size.unwrap_or(0),
                    rule.max_batch_size
                ),
            )
            .sides(None, Some(size.unwrap_or(0).to_string())),
        ),
        Ok(Run::Padded(_)) => None,
    }
}

/// The batch-size comparison of a warm-up with production requests: the section, the
/// findings of each production request (in order), and those of each warm-up request.
#[derive(Debug)]
pub struct BatchDiff {
    /// The report section.
    pub sizes: BatchSizes,
    /// Per production request, its findings (`BATCH_TOO_LARGE`, `NOT_BATCHABLE`,
    /// `BATCH_SIZE_NOT_WARMED`), and whether its padded sizes are warmed.
    pub production: Vec<(Vec<Finding>, bool)>,
    /// Per warm-up request, its findings (`BATCH_TOO_LARGE`, `NOT_BATCHABLE`).
    pub warmup: Vec<Vec<Finding>>,
}

/// Compares the padded sizes production reaches with those the warm-up runs (requests
/// as (label, request)), group by group; [`crate::analysis::diff_batches`] adds the
/// result to a `diff` report. `BATCH_SIZE_NOT_WARMED` is a warning, an error with `strict`.
pub fn diff_sizes(
    rule: &BatchRule,
    source: &str,
    warmup: &[(&str, &Message)],
    prod: &[(&str, &Message)],
    strict: bool,
) -> BatchDiff {
    let wkeys: Vec<ShapeKey> = warmup.iter().map(|w| ShapeKey::of(w.1)).collect();
    let pkeys: Vec<ShapeKey> = prod.iter().map(|p| ShapeKey::of(p.1)).collect();
    let mut sizes = count_sizes(rule, source, pkeys.iter().map(|k| (k, 1)));
    let mut warm_groups: BTreeMap<BatchGroup, BTreeSet<u64>> = BTreeMap::new();
    let mut warm_findings = Vec::new();
    let mut warm_all = BTreeSet::new();
    for (w, wk) in warmup.iter().zip(&wkeys) {
        let (size, run) = judge(rule, wk);
        if let Ok(Run::Padded(ps)) = &run {
            let g = warm_groups.entry(BatchGroup::of(wk)).or_default();
            g.extend(ps.iter().copied());
            warm_all.extend(ps.iter().copied());
        }
        warm_findings.push(
            refusal_findings(size, &run, rule, true)
                .into_iter()
                .collect(),
        );
        sizes.warmup.push(request_run(w.0, size, &run));
    }
    let empty = BTreeSet::new();
    let mut cold_all = BTreeSet::new();
    for gs in &mut sizes.groups {
        let warm = warm_groups.get(&gs.group).unwrap_or(&empty);
        let cold: Vec<u64> = gs
            .production
            .keys()
            .copied()
            .filter(|p| !warm.contains(p))
            .collect();
        cold_all.extend(cold.iter().copied());
        gs.warmup = Some(warm.clone());
        gs.not_warmed = Some(cold);
    }
    let (severity, hint) = if strict {
        (Severity::Error, None)
    } else {
        (Severity::Warning, Some(crate::analysis::Hint::StrictShapes))
    };
    let mut production = Vec::with_capacity(prod.len());
    for (p, pk) in prod.iter().zip(&pkeys) {
        let (size, run) = judge(rule, pk);
        let mut f: Vec<Finding> = refusal_findings(size, &run, rule, false)
            .into_iter()
            .collect();
        let mut warmed = true;
        if let Ok(Run::Padded(ps)) = &run {
            let warm = warm_groups.get(&BatchGroup::of(pk)).unwrap_or(&empty);
            let cold: Vec<u64> = ps.iter().copied().filter(|x| !warm.contains(x)).collect();
            if !cold.is_empty() {
                warmed = false;
                let sent: Vec<String> = warm.iter().map(u64::to_string).collect();
                f.push(
                    Finding::new(
                        Code::BatchSizeNotWarmed,
                        severity,
                        format!(
                            "batch size {} runs padded to {}, which no warm-up request of this key and shape reaches (the warm-up's padded sizes: {}): a model compiled per shape (XLA, TF-TRT, PAI-Blade) compiles on the first such batch",
                            size.unwrap_or(0),
                            cold.iter().map(u64::to_string).collect::<Vec<_>>().join(" and "),
                            if sent.is_empty() { "none".to_string() } else { sent.join(", ") }
                        ),
                    )
                    .sides(
                        Some(warm.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
                        Some(cold.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
                    )
                    .with_hint(hint),
                );
            }
        }
        sizes.requests.push(request_run(p.0, size, &run));
        production.push((f, warmed));
    }
    sizes.warmup_padded_sizes = Some(warm_all.into_iter().collect());
    sizes.not_warmed = Some(cold_all.into_iter().collect());
    BatchDiff {
        sizes,
        production,
        warmup: warm_findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_splitting_and_refusal() {
        let r = BatchRule::from_allowed(&[1, 8, 32]).unwrap();
        let got: Vec<Run> = [1, 3, 5, 8, 9, 32].iter().map(|&n| r.run(n)).collect();
        let want: Vec<Run> = [1, 8, 8, 8, 32, 32]
            .iter()
            .map(|&n| Run::Padded(vec![n]))
            .collect();
        assert_eq!(got, want);
        assert!(matches!(r.run(33), Run::Refused(_)));
        // Not increasing: the first entry large enough, as RoundToLowestAllowedBatchSize.
        let r = BatchRule::from_allowed(&[16, 4, 32]).unwrap();
        assert_eq!(r.run(3), Run::Padded(vec![16]));
        // Splitting.
        let p = BatchingParameters {
            max_batch_size: Some(32),
            allowed_batch_sizes: vec![4, 8, 32],
            enable_large_batch_splitting: Some(true),
            max_execution_batch_size: Some(8),
            ..Default::default()
        };
        let r = BatchRule::from_params(&p).unwrap();
        assert_eq!(r.run(20), Run::Padded(vec![8, 8, 4]));
        assert_eq!(r.run(17), Run::Padded(vec![8, 8, 4]));
        assert_eq!(r.run(3), Run::Padded(vec![4]));
        assert!(matches!(r.run(33), Run::Refused(_)));
        // No allowed sizes: the size itself; max 1000 when unset.
        let r = BatchRule::from_params(&BatchingParameters::default()).unwrap();
        assert_eq!((r.run(7), r.max_batch_size), (Run::Padded(vec![7]), 1000));
    }

    #[test]
    fn parameters_tf_serving_refuses() {
        let p = BatchingParameters {
            max_batch_size: Some(16),
            allowed_batch_sizes: vec![1, 8],
            ..Default::default()
        };
        let e = BatchRule::from_params(&p).unwrap_err();
        assert!(e.0.contains("last entry was 8; expected 16"), "{e}");
        assert!(BatchRule::from_allowed(&[]).is_err());
        assert!(BatchRule::from_allowed(&[0, 8]).is_err());
    }

    #[test]
    fn batch_of_follows_compute_tensor_batch_size() {
        let x: &[i64] = &[3, 2];
        let y: &[i64] = &[3];
        let z: &[i64] = &[4, 2];
        let s: &[i64] = &[];
        assert_eq!(batch_of([("x", x), ("y", y)]), Ok(Some(3)));
        let e = batch_of([("x", x), ("z", z)]).unwrap_err();
        assert_eq!(
            e.message,
            "Batching Run() input tensors must have equal 0th-dimension size"
        );
        let e = batch_of([("x", x), ("s", s)]).unwrap_err();
        assert!(e.message.contains("at least one dimension"));
        assert!(
            batch_of(std::iter::empty())
                .unwrap_err()
                .message
                .contains("at least one input")
        );
    }
}
