//! Analysis: what the decoded model means for a TensorFlow server. Pure functions from
//! models (and the containers [`crate::formats`] read) to findings: no file access, no
//! threads, no rendering (checked by `tests/library/layers.rs`).
//!
//! Every finding has a stable [`Code`] (`FETCH_ADDED`, `VALUES_REPEAT_LAST`, …) so a
//! pipeline can match on it, a severity, the name it is about, and a sentence; they are
//! defined in `src/finding/`, below the formats, whose detection makes findings too.

pub mod batch;
mod check;
pub mod coverage;
mod diff;
pub mod expect;
pub mod features;
pub mod key;
mod lint;
#[cfg(feature = "net")]
pub mod load;
pub mod plan;
pub mod report;
pub mod summary;
pub mod synth;
mod timing;
pub mod warmup;

pub use crate::finding::{Code, Commands, Finding, Hint, Rule, Severity};
pub use check::{check, check_labeled, check_one, CheckOptions};
pub use diff::{diff, diff_batches, diff_batches_with_model, diff_labeled, DiffOptions, Differ};
pub use lint::lint;
pub use timing::{ms, ColdRule, Timing};
