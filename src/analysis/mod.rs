//! Analysis: what the decoded model means for a TensorFlow server. Pure functions from
//! models (and the containers [`crate::formats`] read) to findings: no file access, no
//! threads, no rendering (checked by `tests/library/layers.rs`).
//!
//! Every finding has a stable [`Code`] (`FETCH_ADDED`, `VALUES_REPEAT_LAST`, …) so a
//! pipeline can match on it, a severity, the name it is about, and a sentence; they are
//! defined in `src/finding/`, below the formats, whose detection makes findings too.

pub(crate) mod batch;
mod check;
pub(crate) mod coverage;
mod diff;
pub(crate) mod expect;
pub(crate) mod features;
pub(crate) mod key;
mod lint;
#[cfg(feature = "net")]
pub(crate) mod load;
pub(crate) mod plan;
pub(crate) mod report;
pub(crate) mod summary;
pub(crate) mod synth;
mod timing;
pub(crate) mod warmup;

pub use batch::{
    BatchDiff, BatchGroup, BatchRule, BatchSizes, DEFAULT_MAX_BATCH_SIZE, GroupSizes, NotBatchable,
    RequestRun, RuleError, Run, batch_of, batch_of_message, count_sizes, diff_sizes,
};
pub use coverage::{ExecutorGroup, KeyCounts, KeyStat, Origin};
pub use expect::{Tolerance, compare};
pub use features::check_examples;
pub use key::{ExecutorKey, ShapeKey, signature_of, sorted};
#[cfg(feature = "net")]
pub use load::{
    Bin, CURVE, CurvePoint, ErrorCount, FirstCall, Latencies, LoadReport, Percentiles, Schedule,
    parse_duration, parse_rate,
};
pub use plan::{
    BatchPlan, BatchPlanned, By, PlanKey, Planned, Unbatchable, batch_plan, most_frequent, plan,
};
pub use report::{
    Binding, Command, Counts, Coverage, Labeled, Problem, Report, RequestReport, RequestTally,
    Unreadable, Verdict,
};
pub use summary::{
    DEFAULT_MAX_KEYS, FeedShape, FileRead, First, KeySummary, SCHEMA, ShapeSummary, Summary,
    SummaryError, TooManyShapeKeys,
};
pub use synth::{
    DEFAULT_DIM, MAX_BATCH, MAX_ELEMENTS, SynthHint, SynthNote, SynthOptions, Synthesized,
    example_for, synthesize,
};
pub use warmup::{
    FileFindings, MAX_RECORDS, RecordCheck, compressed, empty_inputs, file_findings, limits,
    not_compared,
};

pub use crate::finding::{Code, Commands, Finding, Hint, Rule, Severity};
pub use check::{CheckOptions, check, check_labeled, check_one};
pub use diff::{DiffOptions, Differ, diff, diff_batches, diff_batches_with_model, diff_labeled};
pub use lint::lint;
pub use timing::{ColdRule, Timing, ms};
