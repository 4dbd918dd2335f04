//! The result of `diff` and `check`: one [`Report`] per run, a verdict per request, and
//! the findings behind it. It serializes to one stable JSON document (schema in
//! docs/codes.md); renderers ([`crate::render::report`]) only print it.

use std::fmt;

use serde::Serialize;

use crate::analysis::key::ExecutorKey;
use crate::analysis::{Finding, Severity};
use crate::model::Message;
use crate::signature::MatchedBy;

/// A request with the names a report uses for it.
#[derive(Debug, Clone, Copy)]
pub struct Labeled<'a> {
    /// The file it came from (used for CI annotations).
    pub file: &'a str,
    /// How to name it: the file, or the file and the record in it.
    pub label: &'a str,
    /// The request.
    pub message: &'a Message,
}

impl<'a> Labeled<'a> {
    /// A request named `label`, from `file`.
    pub fn new(file: &'a str, label: &'a str, message: &'a Message) -> Self {
        Labeled {
            file,
            label,
            message,
        }
    }
}

/// Which analysis made a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    /// Warm-up against production requests.
    Diff,
    /// Requests against a model's signatures.
    Check,
}

/// What a request means for the server, worst last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Verdict {
    /// `check`: the model accepts the request.
    Ok,
    /// `diff`: a warm-up request has the same signature, feed set and fetch set, so it
    /// built the executor this request runs.
    SameExecutor,
    /// `diff`: cannot tell without the model (TF Serving's empty `output_filter`): fails
    /// the run until `--model` decides it.
    Undecided,
    /// `diff`: no warm-up request has this executor key; the first such request builds
    /// new executors (the slow start the warm-up was meant to absorb).
    NewExecutor,
    /// `diff`: the same name with another dtype, so one of the two is refused;
    /// `check`: the model refuses the request.
    Incompatible,
    /// Every request passes, but a finding about the inputs themselves fails the run (a
    /// warm-up file TF Serving refuses to load: more than 1000 records, a record whose
    /// examples are empty, an unsupported log type).
    Fail,
    /// An input could not be read (exit code 2), whatever the others say.
    Unreadable,
}

impl Verdict {
    /// The name in JSON and on screen (`same-executor`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::SameExecutor => "same-executor",
            Verdict::Undecided => "undecided",
            Verdict::NewExecutor => "new-executor",
            Verdict::Incompatible => "incompatible",
            Verdict::Fail => "fail",
            Verdict::Unreadable => "unreadable",
        }
    }

    /// Whether the verdict fails the run (exit code 1; 2 for [`Verdict::Unreadable`]).
    pub fn fails(self) -> bool {
        matches!(
            self,
            Verdict::Undecided
                | Verdict::NewExecutor
                | Verdict::Incompatible
                | Verdict::Fail
                | Verdict::Unreadable
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a request name was bound to the signature (`check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// `feed` or `fetch`.
    pub kind: &'static str,
    /// The name in the request.
    pub name: String,
    /// The signature alias it matched.
    pub alias: String,
    /// The graph tensor name of that alias.
    pub tensor: String,
    /// Whether the request used the alias or the tensor name.
    pub matched_by: MatchedBy,
}

/// The verdict and findings for one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequestReport {
    /// The request's name (file, or file and record).
    pub label: String,
    /// The file it came from.
    pub file: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its executor key (TF Serving's empty `output_filter` resolved when the model is known).
    pub key: ExecutorKey,
    /// `diff`: the warm-up requests with the same executor key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmed_by: Option<Vec<String>>,
    /// `diff`: the warm-up request the findings compare against (the closest one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compared_with: Option<String>,
    /// `check`: how each feed and fetch matched the signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bindings: Option<Vec<Binding>>,
    /// What was found, in a stable order.
    pub findings: Vec<Finding>,
}

impl RequestReport {
    /// Whether any finding fails the run.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// One distinct production executor key and who warms it (`diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// The key.
    pub key: ExecutorKey,
    /// The production requests with this key.
    pub requests: Vec<String>,
    /// The warm-up requests with this key (empty: not warmed).
    pub warmed_by: Vec<String>,
}

/// A finding about an input rather than a judged request: a warm-up file's loader
/// limits (`TOO_MANY_RECORDS`, ...), or what a warm-up request carries on its own in
/// `diff` (the findings `inspect` lists).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file it is about.
    pub file: String,
    /// The file, or the file and the record in it.
    pub label: String,
    /// The finding.
    #[serde(flatten)]
    pub finding: Finding,
}

/// An input file that could not be read or decoded. The run goes on without it, and
/// the report's exit code is 2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Unreadable {
    /// The file, as given.
    pub file: String,
    /// Why it could not be read (the message does not repeat the file name).
    pub error: String,
}

/// Finding counts by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Errors (fail the run).
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Notes.
    pub notes: usize,
}

impl Counts {
    /// Counts one finding of this severity.
    pub fn add(&mut self, s: Severity) {
        match s {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Note => self.notes += 1,
        }
    }
}

/// What a report's verdict and counts need of request reports it does not hold: how
/// many, the worst verdict, the findings by severity ([`Report::summarise_with`]).
///
/// ```
/// use tfreq::analysis::{diff, DiffOptions, RequestTally, Verdict};
/// use tfreq::TFRequest;
/// let (w, p) = (TFRequest::new("s"), TFRequest::new("other"));
/// let whole = diff(&[w.message().clone()], p.message(), &DiffOptions::default());
/// // The report without its requests, and their tally.
/// let mut head = whole.clone();
/// let mut tally = RequestTally::default();
/// std::mem::take(&mut head.requests).iter().for_each(|r| tally.add(r));
/// head.summarise_with(&tally);
/// assert_eq!((head.verdict, head.counts), (whole.verdict, whole.counts));
/// assert_eq!(head.verdict, Verdict::NewExecutor);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestTally {
    /// Request reports counted.
    pub requests: u64,
    /// Their worst verdict (`None`: no request).
    pub worst: Option<Verdict>,
    /// Their findings by severity.
    pub counts: Counts,
}

impl RequestTally {
    /// Counts one request report.
    pub fn add(&mut self, r: &RequestReport) {
        self.requests += 1;
        self.worst = self.worst.max(Some(r.verdict));
        for f in &r.findings {
            self.counts.add(f.severity);
        }
    }
}

/// The whole result of one `diff` or `check` run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// Which analysis.
    pub command: Command,
    /// The worst verdict of all requests.
    pub verdict: Verdict,
    /// Whether any finding is an error (exit code 1).
    pub failed: bool,
    /// Findings by severity.
    pub counts: Counts,
    /// `diff`: whether shape and batch-size changes were errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict_shapes: Option<bool>,
    /// `diff`: the warm-up requests, by label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Vec<String>>,
    /// The model the requests were compared with, if any (path as given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Findings about the input files and the warm-up requests themselves (see
    /// [`Problem`]); omitted when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    /// One entry per request (production requests for `diff`).
    pub requests: Vec<RequestReport>,
    /// `diff`: each distinct production executor key and the warm-ups that warm it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Vec<Coverage>>,
    /// Input files that could not be read (absent from the JSON when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
    /// `diff` with batching parameters: the padded batch sizes production and the
    /// warm-up run ([`crate::analysis::BatchRule`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batching: Option<crate::analysis::batch::BatchSizes>,
}

impl Report {
    /// A report over these request reports; the verdict, `failed` and counts follow.
    pub fn new(command: Command, requests: Vec<RequestReport>) -> Self {
        let mut r = Report {
            command,
            verdict: Verdict::Ok,
            failed: false,
            counts: Counts::default(),
            strict_shapes: None,
            warmup: None,
            model: None,
            problems: Vec::new(),
            requests,
            coverage: None,
            unreadable: Vec::new(),
            batching: None,
        };
        r.summarise();
        r
    }

    /// Recomputes the verdict, `failed` and counts from the requests, the input
    /// findings and the unreadable files. One value, never contradicting the exit code:
    /// an unreadable input makes it `unreadable` (exit 2); otherwise it is the worst
    /// request verdict, `fail` when a finding about the inputs is an error while every
    /// request passes, and it fails exactly when `failed` is set (exit 1).
    pub fn summarise(&mut self) {
        self.summarise_with(&RequestTally::default());
    }

    /// [`Report::summarise`] of this report with the requests `more` tallies added to
    /// its own: for a report whose requests were written one at a time and dropped
    /// ([`crate::render::ReportWriter`]).
    pub fn summarise_with(&mut self, more: &RequestTally) {
        let mut t = *more;
        self.requests.iter().for_each(|r| t.add(r));
        for p in &self.problems {
            t.counts.add(p.finding.severity);
        }
        let base = match self.command {
            Command::Diff => Verdict::SameExecutor,
            Command::Check => Verdict::Ok,
        };
        let worst = t.worst.unwrap_or(base);
        let c = t.counts;
        self.failed = c.errors > 0 || worst.fails();
        self.verdict = if !self.unreadable.is_empty() {
            Verdict::Unreadable
        } else if self.failed && !worst.fails() {
            Verdict::Fail
        } else {
            worst
        };
        self.counts = c;
    }

    /// Adds files that could not be read and recomputes the verdict.
    pub fn add_unreadable(&mut self, files: impl IntoIterator<Item = Unreadable>) {
        self.unreadable.extend(files);
        self.summarise();
    }

    /// Every finding: the input problems, then request by request.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.problems
            .iter()
            .map(|p| &p.finding)
            .chain(self.requests.iter().flat_map(|r| r.findings.iter()))
    }

    /// Every finding, to change in place (as [`Report::findings`]; to word their
    /// hints, [`Finding::word_hint`]).
    pub fn findings_mut(&mut self) -> impl Iterator<Item = &mut Finding> {
        self.problems
            .iter_mut()
            .map(|p| &mut p.finding)
            .chain(self.requests.iter_mut().flat_map(|r| r.findings.iter_mut()))
    }

    /// Adds findings about an input file (or a record in it) and recomputes the
    /// verdict, `failed` and counts.
    pub fn add_problems(&mut self, file: &str, label: &str, findings: Vec<Finding>) {
        self.problems
            .extend(findings.into_iter().map(|finding| Problem {
                file: file.to_string(),
                label: label.to_string(),
                finding,
            }));
        self.summarise();
    }
}
