//! TF Serving's warm-up loader limits (<https://github.com/tensorflow/serving/blob/master/tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc>), checked on the record kinds
//! of a TFRecord warm-up file ([`file_findings`] of a file `formats` read).

use crate::analysis::{Code, Finding, Severity};
use crate::formats::prediction_log::LogKind;
use crate::formats::{Container, ContainerKind};

/// `WARMUP_COMPRESSED`: a warm-up file read through `comp` (gzip or zlib). TF Serving
/// opens the warm-up with a RecordReader of default options (no compression):
/// tests/data/detect/compressed.json holds TensorFlow's own error for such a file read
/// that way ("corrupted record at 0").
///
/// ```
/// use tfreq::formats::Compression;
/// let f = tfreq::analysis::compressed(Compression::Gzip);
/// assert_eq!(f.code.as_str(), "WARMUP_COMPRESSED");
/// ```
pub fn compressed(comp: crate::formats::compression::Compression) -> Finding {
    Finding::new(
        Code::WarmupCompressed,
        Severity::Error,
        format!(
            "{comp}-compressed: TF Serving's warm-up loader (tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc) reads uncompressed TFRecord only, so loading the model fails on it ('corrupted record at 0'); write it uncompressed"
        ),
    )
}

/// `EMPTY_INPUT`: classify, regress and multi-inference requests (warm-up records, or a
/// bare request) whose `tensorflow.serving.Input` holds no `Example` (no `input`, or an
/// empty example list).
/// TF Serving reads it through `InputToSerializedExampleTensor`, which answers
/// INVALID_ARGUMENT "Input is empty." (tensorflow_serving/servables/tensorflow/util.cc),
/// and a warm-up error fails the model load.
///
/// ```
/// use tfreq::formats::{read, InputOptions};
/// let bytes = tfreq::read_input("tests/data/check/warmup_classify_empty.tfrecord".as_ref())?;
/// let c = read(bytes, &InputOptions::new())?.into_container()?;
/// let codes: Vec<_> = tfreq::analysis::empty_inputs(&c.entries).iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, ["EMPTY_INPUT", "EMPTY_INPUT"]);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn empty_inputs(entries: &[crate::formats::Entry]) -> Vec<Finding> {
    let mut out = Vec::new();
    for e in entries {
        let crate::formats::Content::Message(m) = &e.content else {
            continue;
        };
        if !m.method.takes_examples() {
            continue;
        }
        // No `input`, or an input whose example list is empty.
        if m.input.as_ref().is_none_or(|i| i.examples.is_empty()) {
            out.push(match e.log_kind {
                Some(k) => Finding::new(
                    Code::EmptyInput,
                    Severity::Error,
                    format!(
                        "record {}: {k} request whose Input holds no examples: TF Serving's warm-up answers 'Input is empty.', which fails the model load",
                        e.index
                    ),
                )
                .name(format!("record {}", e.index)),
                None => Finding::new(
                    Code::EmptyInput,
                    Severity::Error,
                    format!(
                        "a {} request whose Input holds no examples: TF Serving answers INVALID_ARGUMENT 'Input is empty.'",
                        m.method.as_str()
                    ),
                ),
            });
        }
    }
    out
}

/// `RECORD_NOT_COMPARED`: the classify, regress and multi-inference records of a warm-up
/// file that hold no request (a `ClassifyLog` without its `request`), which `diff` and
/// `check` read (their loader limits are [`file_findings`]) but cannot compare. A record
/// with a request is decoded ([`crate::Method`]) and compared by its executor key
/// (the method and signature: [`crate::analysis::ExecutorKey`]). Named so that
/// nothing in the file is passed over silently.
///
/// ```
/// use tfreq::formats::{read, InputOptions};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_mixed.tfrecord".as_ref())?;
/// let c = read(bytes, &InputOptions::new())?.into_container()?;
/// // Its classify, regress and multi-inference records hold requests: all compared.
/// assert!(tfreq::analysis::not_compared(&c.entries).is_empty());
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn not_compared(entries: &[crate::formats::Entry]) -> Vec<Finding> {
    entries
        .iter()
        .filter_map(|e| match &e.content {
            crate::formats::Content::Log(log)
                if matches!(
                    log.kind,
                    LogKind::Classify | LogKind::Regress | LogKind::MultiInference
                ) =>
            {
                Some(
                    Finding::new(
                        Code::RecordNotCompared,
                        Severity::Note,
                        format!(
                            "record {}: {} without a request: not compared",
                            e.index, log.kind
                        ),
                    )
                    .name(format!("record {}", e.index)),
                )
            }
            _ => None,
        })
        .collect()
}

/// `WarmupConsts::kMaxNumRecords`: the 1001st record fails the model load.
pub const MAX_RECORDS: usize = 1000;

/// The findings of TF Serving's warm-up loader about a file read by
/// [`crate::formats::read`]: for a TFRecord file (or unframed logs), the
/// [`limits`] of its record kinds, then its [`empty_inputs`]; for other containers,
/// their [`empty_inputs`] (a bare classify request without examples).
///
/// ```
/// use tfreq::formats::{read, InputOptions};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_unsupported.tfrecord".as_ref())?;
/// let c = read(bytes, &InputOptions::new())?.into_container()?;
/// let codes: Vec<_> = tfreq::analysis::file_findings(&c).iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, ["UNSUPPORTED_LOG_TYPE", "UNSUPPORTED_LOG_TYPE"]);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn file_findings(c: &Container) -> Vec<Finding> {
    if !matches!(
        c.kind,
        ContainerKind::TfRecord | ContainerKind::UnframedLogs
    ) {
        // A bare (or text, or JSON) tf.Example request without examples.
        return empty_inputs(&c.entries);
    }
    let kinds: Vec<LogKind> = c
        .entries
        .iter()
        .map(|e| e.log_kind.unwrap_or(LogKind::None))
        .collect();
    let mut out = limits(&kinds);
    out.extend(empty_inputs(&c.entries));
    out
}

/// The findings about a warm-up file whose records have these kinds, in file order:
/// more than [`MAX_RECORDS`] records (`TOO_MANY_RECORDS`), kinds the classic warm-up
/// refuses (`UNSUPPORTED_LOG_TYPE`) and records with no kind (`NO_LOG_TYPE`).
///
/// ```
/// use tfreq::analysis::limits;
/// use tfreq::formats::LogKind;
/// let f = limits(&[LogKind::Predict, LogKind::SessionRun, LogKind::None]);
/// let codes: Vec<_> = f.iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, vec!["UNSUPPORTED_LOG_TYPE", "NO_LOG_TYPE"]);
/// ```
pub fn limits(kinds: &[LogKind]) -> Vec<Finding> {
    let mut out: Vec<Finding> = too_many(kinds.len()).into_iter().collect();
    out.extend(
        kinds
            .iter()
            .enumerate()
            .filter_map(|(i, k)| record_limit(i, *k)),
    );
    out
}

/// `TOO_MANY_RECORDS` for a file of `n` records.
fn too_many(n: usize) -> Option<Finding> {
    (n > MAX_RECORDS).then(|| {
        Finding::new(
            Code::TooManyRecords,
            Severity::Error,
            format!(
                "{n} records: TF Serving's warm-up runs at most {MAX_RECORDS}; record {MAX_RECORDS} (the 1001st) fails the model load with 'Number of warmup records exceeds the maximum (1000)'"
            ),
        )
    })
}

/// What the loader says of record `i` of kind `k`: refused, skipped, or nothing.
fn record_limit(i: usize, k: LogKind) -> Option<Finding> {
    match k {
        LogKind::SessionRun | LogKind::PredictStreamed => Some(
            Finding::new(
                Code::UnsupportedLogType,
                Severity::Error,
                format!(
                    "record {i}: {k} is refused by the classic (SavedModelBundle) warm-up with UNIMPLEMENTED 'Unsupported log_type for warmup', which fails the model load{}",
                    if k == LogKind::PredictStreamed { " (the TFRT runtime accepts it with exactly one request)" } else { "" }
                ),
            )
            .name(format!("record {i}")),
        ),
        LogKind::None => Some(
            Finding::new(
                Code::NoLogType,
                Severity::Warning,
                format!("record {i}: no log_type set; the classic warm-up silently skips it (warms nothing), TFRT returns UNIMPLEMENTED"),
            )
            .name(format!("record {i}")),
        ),
        _ => None,
    }
}

/// [`file_findings`] and [`not_compared`] of a TFRecord log gathered entry by entry, for a
/// caller that does not keep the entries: [`FileFindings::entry`] for each, in file
/// order, then [`FileFindings::finish`] says what [`file_findings`] of the whole file
/// says, in the same order.
///
/// ```
/// use tfreq::analysis::{file_findings, FileFindings};
/// use tfreq::formats::{read, InputOptions};
/// let path = "tests/data/tfrecord/warmup_mixed.tfrecord";
/// let mut found = FileFindings::default();
/// for e in read(tfreq::read_input(path.as_ref())?, &InputOptions::new())? {
///     found.entry(&e?);
/// }
/// let c = read(tfreq::read_input(path.as_ref())?, &InputOptions::new())?.into_container()?;
/// assert_eq!(found.finish(), file_findings(&c));
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct FileFindings {
    records: usize,
    limits: Vec<Finding>,
    empty: Vec<Finding>,
    not_compared: Vec<Finding>,
}

impl FileFindings {
    /// Looks at the next entry of the log.
    pub fn entry(&mut self, e: &crate::formats::Entry) {
        self.records += 1;
        self.limits
            .extend(record_limit(e.index, e.log_kind.unwrap_or(LogKind::None)));
        let one = std::slice::from_ref(e);
        self.empty.extend(empty_inputs(one));
        self.not_compared.extend(not_compared(one));
    }

    /// [`not_compared`] of the entries seen so far (taken: a second call gives those
    /// seen since).
    pub fn take_not_compared(&mut self) -> Vec<Finding> {
        std::mem::take(&mut self.not_compared)
    }

    /// [`file_findings`] of the entries seen so far, as for the whole log.
    pub fn finish(self) -> Vec<Finding> {
        let mut out: Vec<Finding> = too_many(self.records).into_iter().collect();
        out.extend(self.limits);
        out.extend(self.empty);
        out
    }
}

/// The rules of [`file_findings`] applied record by record, for a log read as a stream
/// (whose records are not all kept): [`RecordCheck::entry`] says what the loader makes
/// of each record, [`RecordCheck::finish`] what it makes of their number.
///
/// ```
/// use tfreq::analysis::RecordCheck;
/// use tfreq::formats::{read, InputOptions};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_unsupported.tfrecord".as_ref())?;
/// let mut check = RecordCheck::default();
/// let mut codes = Vec::new();
/// for e in read(bytes, &InputOptions::new())? {
///     codes.extend(check.entry(&e?).into_iter().map(|f| f.code.as_str()));
/// }
/// assert!(check.finish().is_empty());
/// assert_eq!(codes, ["UNSUPPORTED_LOG_TYPE", "UNSUPPORTED_LOG_TYPE"]);
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct RecordCheck {
    records: usize,
}

impl RecordCheck {
    /// The findings about one record of the log.
    pub fn entry(&mut self, e: &crate::formats::Entry) -> Vec<Finding> {
        self.records += 1;
        let mut out: Vec<Finding> = record_limit(e.index, e.log_kind.unwrap_or(LogKind::None))
            .into_iter()
            .collect();
        out.extend(empty_inputs(std::slice::from_ref(e)));
        out
    }

    /// The findings about the log as a whole, once every record was read.
    pub fn finish(&self) -> Vec<Finding> {
        too_many(self.records).into_iter().collect()
    }
}
