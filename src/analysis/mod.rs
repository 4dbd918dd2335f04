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
    batch_of, batch_of_message, count_sizes, diff_sizes, BatchDiff, BatchGroup, BatchRule,
    BatchSizes, GroupSizes, NotBatchable, RequestRun, RuleError, Run, DEFAULT_MAX_BATCH_SIZE,
};
pub use coverage::{ExecutorGroup, KeyCounts, KeyStat, Origin};
pub use expect::{compare, Tolerance};
pub use features::check_examples;
pub use key::{signature_of, sorted, ExecutorKey, ShapeKey};
#[cfg(feature = "net")]
pub use load::{
    parse_duration, parse_rate, Bin, CurvePoint, ErrorCount, FirstCall, Latencies, LoadReport,
    Percentiles, Schedule, CURVE,
};
pub use plan::{
    batch_plan, most_frequent, plan, BatchPlan, BatchPlanned, By, PlanKey, Planned, Unbatchable,
};
pub use report::{
    Binding, Command, Counts, Coverage, Labeled, Problem, Report, RequestReport, RequestTally,
    Unreadable, Verdict,
};
pub use summary::{
    FeedShape, FileRead, First, KeySummary, ShapeSummary, Summary, SummaryError, TooManyShapeKeys,
    DEFAULT_MAX_KEYS, SCHEMA,
};
pub use synth::{
    example_for, synthesize, SynthHint, SynthNote, SynthOptions, Synthesized, DEFAULT_DIM,
    MAX_BATCH, MAX_ELEMENTS,
};
pub use warmup::{
    compressed, empty_inputs, file_findings, limits, not_compared, FileFindings, RecordCheck,
    MAX_RECORDS,
};

pub use crate::finding::{Code, Commands, Finding, Hint, Rule, Severity};
pub use check::{check, check_labeled, check_one, CheckOptions};
pub use diff::{diff, diff_batches, diff_batches_with_model, diff_labeled, DiffOptions, Differ};
pub use lint::lint;
pub use timing::{ms, ColdRule, Timing};
