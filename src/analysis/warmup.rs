//! TF Serving's warm-up loader limits (formats.md §5.2), checked on the record kinds
//! of a TFRecord warm-up file.

use crate::analysis::{Finding, Severity};
use crate::formats::prediction_log::LogKind;

/// Finding codes of TF Serving's warm-up loader limits, with their severity (the same in
/// `inspect`, `check` and `diff`).
pub const CODES: &[(&str, Severity, &str)] = &[
    (
        "TOO_MANY_RECORDS",
        Severity::Error,
        "more than 1000 records: the model fails to load",
    ),
    (
        "UNSUPPORTED_LOG_TYPE",
        Severity::Error,
        "session_run_log or predict_stream_log: the classic warm-up fails the model load",
    ),
    (
        "NO_LOG_TYPE",
        Severity::Warning,
        "a record with no log type: skipped (warms nothing)",
    ),
];

/// `WarmupConsts::kMaxNumRecords`: the 1001st record fails the model load.
pub const MAX_RECORDS: usize = 1000;

/// The findings about a warm-up file whose records have these kinds, in file order:
/// more than [`MAX_RECORDS`] records (`TOO_MANY_RECORDS`), kinds the classic warm-up
/// refuses (`UNSUPPORTED_LOG_TYPE`) and records with no kind (`NO_LOG_TYPE`).
///
/// ```
/// use tfreq::analysis::warmup::limits;
/// use tfreq::formats::prediction_log::LogKind;
/// let f = limits(&[LogKind::Predict, LogKind::SessionRun, LogKind::None]);
/// let codes: Vec<_> = f.iter().map(|f| f.code).collect();
/// assert_eq!(codes, vec!["UNSUPPORTED_LOG_TYPE", "NO_LOG_TYPE"]);
/// ```
pub fn limits(kinds: &[LogKind]) -> Vec<Finding> {
    let mut out = Vec::new();
    if kinds.len() > MAX_RECORDS {
        out.push(Finding::new(
            "TOO_MANY_RECORDS",
            Severity::Error,
            format!(
                "{} records: TF Serving's warm-up runs at most {MAX_RECORDS}; record {MAX_RECORDS} (the 1001st) fails the model load with 'Number of warmup records exceeds the maximum (1000)'",
                kinds.len()
            ),
        ));
    }
    for (i, k) in kinds.iter().enumerate() {
        match k {
            LogKind::SessionRun | LogKind::PredictStreamed => out.push(
                Finding::new(
                    "UNSUPPORTED_LOG_TYPE",
                    Severity::Error,
                    format!(
                        "record {i}: {k} is refused by the classic (SavedModelBundle) warm-up with UNIMPLEMENTED 'Unsupported log_type for warmup', which fails the model load{}",
                        if *k == LogKind::PredictStreamed { " (the TFRT runtime accepts it with exactly one request)" } else { "" }
                    ),
                )
                .name(format!("record {i}")),
            ),
            LogKind::None => out.push(
                Finding::new(
                    "NO_LOG_TYPE",
                    Severity::Warning,
                    format!("record {i}: no log_type set; the classic warm-up silently skips it (warms nothing), TFRT returns UNIMPLEMENTED"),
                )
                .name(format!("record {i}")),
            ),
            _ => {}
        }
    }
    out
}
