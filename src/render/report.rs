//! Printing a `diff` / `check` [`Report`]: for people (one screen per request, colour
//! when the stream keeps it), for GitHub Actions (workflow annotations), and as JSON
//! ([`to_json`]).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::escape::sanitize;

use crate::analysis::key::ExecutorKey;
use crate::analysis::report::{Command, Coverage, Report, RequestReport, RequestTally, Verdict};
use crate::analysis::{Code, Finding, Severity};
use crate::render::human::{severity_color, style};
use crate::signature::MatchedBy;

fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Ok | Verdict::SameExecutor => style::GREEN,
        Verdict::Undecided => style::YELLOW,
        Verdict::NewExecutor | Verdict::Incompatible | Verdict::Fail | Verdict::Unreadable => {
            style::RED
        }
    }
}

/// `+ name` for something production (or the request) adds, `- name` for something
/// missing, `~ name` for something changed.
fn marked_name(f: &Finding) -> Option<String> {
    let name = f.name.as_deref()?;
    let mark = if matches!(
        f.code,
        Code::FeedAdded | Code::FetchAdded | Code::UnknownFeed | Code::UnknownFetch
    ) {
        "+"
    } else if matches!(
        f.code,
        Code::FeedMissing | Code::FetchMissing | Code::MissingFeed | Code::ValuesMissing
    ) {
        "-"
    } else {
        "~"
    };
    if name.is_empty() {
        return Some(format!("{mark} \"\""));
    }
    Some(format!("{mark} {name}"))
}

/// The report as one JSON document (pretty-printed, keys in a fixed order; untrusted
/// text escaped as [`crate::escape::json_string`] does).
pub fn to_json(r: &Report) -> String {
    // A Report holds only strings, numbers, booleans and lists: it always serializes.
    crate::escape::json_string(r, true)
}

/// Writes [`to_json`] and a newline.
pub fn write_json(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "{}", to_json(r))
}

/// Writes the report for people.
///
/// ```
/// use tfreq::analysis::{diff, DiffOptions};
/// use tfreq::{DType, TFRequest};
/// let mut w = TFRequest::new("s");
/// w.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("a");
/// let mut p = TFRequest::new("s");
/// p.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("a").add_fetch("b");
/// let report = diff(&[w.message().clone()], p.message(), &DiffOptions::default());
/// let mut out = Vec::new();
/// tfreq::render::write_human(&mut out, &report, Default::default())?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("+ b"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_human(out: &mut dyn Write, r: &Report, color: crate::render::Color) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    human_head(out, r)?;
    let many = many_warmups(r);
    for req in &r.requests {
        human_request(out, r.command, many, req)?;
    }
    let rows = r.coverage.as_ref().map(|cov| {
        cov.iter()
            .map(|c| Row {
                key: &c.key,
                requests: c.requests.len() as u64,
                warmed: !c.warmed_by.is_empty(),
            })
            .collect::<Vec<_>>()
    });
    human_tail(out, r, rows.as_deref())
}

/// Whether the human report names the warm-up each request is compared with.
fn many_warmups(r: &Report) -> bool {
    r.warmup.as_ref().is_some_and(|w| w.len() > 1)
}

/// What the human report's coverage table shows of a key.
struct Row<'a> {
    key: &'a ExecutorKey,
    requests: u64,
    warmed: bool,
}

/// The human report down to its first request: the warm-up, the model, the unreadable
/// files and the input problems.
fn human_head(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    use style::*;
    if let Some(w) = &r.warmup {
        let n = w.len();
        writeln!(
            out,
            "warm-up: {} ({n} request{})",
            sanitize(&summarize_labels(w)),
            if n == 1 { "" } else { "s" }
        )?;
    }
    if let Some(m) = &r.model {
        writeln!(out, "model: {}", sanitize(m))?;
    }
    for u in &r.unreadable {
        writeln!(out)?;
        writeln!(
            out,
            "{BOLD}{}{RESET}: {RED}unreadable{RESET}",
            sanitize(&u.file)
        )?;
        writeln!(out, "  {RED}error{RESET}   {}", sanitize(&u.error))?;
    }
    if !r.problems.is_empty() {
        writeln!(out)?;
        writeln!(out, "{BOLD}inputs{RESET}:")?;
        for p in &r.problems {
            let f = &p.finding;
            writeln!(
                out,
                "  {}{:<7}{RESET} {BOLD}{}{RESET}  {}",
                severity_color(f.severity),
                f.severity.to_string(),
                f.code,
                sanitize(&p.label)
            )?;
            writeln!(out, "          {}", sanitize(&f.message))?;
        }
    }
    Ok(())
}

/// One request's block of the human report (`many`: [`many_warmups`]).
fn human_request(
    out: &mut dyn Write,
    command: Command,
    many: bool,
    req: &RequestReport,
) -> io::Result<()> {
    use style::*;
    writeln!(out)?;
    writeln!(
        out,
        "{BOLD}{}{RESET}: {}{}{RESET}",
        sanitize(&req.label),
        verdict_color(req.verdict),
        req.verdict
    )?;
    writeln!(out, "  key: {}", sanitize(&req.key.to_string()))?;
    if let Some(c) = &req.compared_with
        && many
    {
        writeln!(out, "  compared with: {}", sanitize(c))?;
    }
    if let Some(b) = &req.bindings {
        for b in b.iter().filter(|b| b.matched_by == MatchedBy::TensorName) {
            writeln!(
                out,
                "  {} {:?} matched by tensor name -> alias {:?}",
                b.kind, b.name, b.alias
            )?;
        }
    }
    if req.findings.is_empty() {
        let what = match command {
            Command::Diff => "nothing differs",
            Command::Check => "the signature accepts it",
        };
        writeln!(out, "  {GREEN}ok{RESET}: {what}")?;
    }
    for f in &req.findings {
        let head = match marked_name(f) {
            Some(n) => format!("{}  {}", f.code, sanitize(&n)),
            None => f.code.to_string(),
        };
        writeln!(
            out,
            "  {}{:<7}{RESET} {BOLD}{head}{RESET}",
            severity_color(f.severity),
            f.severity.to_string()
        )?;
        writeln!(out, "          {}", sanitize(&f.message))?;
    }
    Ok(())
}

/// The human report after its last request: the coverage table (`rows`, in key
/// order), the batch sizes and the result line.
fn human_tail(out: &mut dyn Write, r: &Report, rows: Option<&[Row]>) -> io::Result<()> {
    use style::*;
    if let Some(cov) = rows
        && (cov.len() > 1 || many_warmups(r))
    {
        let cold = cov.iter().filter(|c| !c.warmed).count();
        writeln!(out)?;
        writeln!(
            out,
            "coverage: {} distinct production key{}, {cold} not warmed",
            cov.len(),
            if cov.len() == 1 { "" } else { "s" }
        )?;
        for c in cov {
            let (mark, col) = if c.warmed {
                ("warmed", GREEN)
            } else {
                ("not warmed", RED)
            };
            writeln!(
                out,
                "  {col}{mark:<10}{RESET} {} ({} request{})",
                sanitize(&c.key.to_string()),
                c.requests,
                if c.requests == 1 { "" } else { "s" }
            )?;
        }
    }
    if let Some(b) = &r.batching {
        batching_section(out, b)?;
    }
    writeln!(out)?;
    let c = r.counts;
    // The verdict in the words of JSON's "verdict" (docs/codes.md lists them).
    let col = if r.failed || !r.unreadable.is_empty() {
        RED
    } else {
        GREEN
    };
    let unreadable = match r.unreadable.len() {
        0 => String::new(),
        n => format!("; {}", plural(n, "unreadable file")),
    };
    writeln!(
        out,
        "{BOLD}result{RESET}: {col}{}{RESET} ({}, {}, {}{unreadable})",
        r.verdict,
        plural(c.errors, "error"),
        plural(c.warnings, "warning"),
        plural(c.notes, "note"),
    )
}

fn sizes(v: impl IntoIterator<Item = u64>) -> String {
    let v: Vec<String> = v.into_iter().map(|n| n.to_string()).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The `batch sizes` section of `diff` and `keys` with batching parameters: the rule,
/// then each group's padded sizes (with their request counts) and, for `diff`, the ones
/// no warm-up request reaches.
pub fn write_batching(
    out: &mut dyn Write,
    b: &crate::analysis::batch::BatchSizes,
    color: crate::render::Color,
) -> io::Result<()> {
    batching_section(&mut crate::render::Paint::new(out, color), b)
}

fn batching_section(out: &mut dyn Write, b: &crate::analysis::batch::BatchSizes) -> io::Result<()> {
    use style::*;
    let r = &b.rule;
    writeln!(out)?;
    writeln!(
        out,
        "{BOLD}batch sizes{RESET} ({}): allowed {}, max_batch_size {}{}",
        sanitize(&b.source),
        sizes(r.allowed_batch_sizes.iter().copied()),
        r.max_batch_size,
        r.max_execution_batch_size
            .map(|m| format!(", split into batches of at most {m}"))
            .unwrap_or_default()
    )?;
    for g in &b.groups {
        writeln!(
            out,
            "  {}  {}",
            sanitize(&g.key.to_string()),
            sanitize(&g.feeds)
        )?;
        let reached: Vec<String> = g
            .production
            .iter()
            .map(|(p, n)| format!("{p} ({})", plural(*n as usize, "request")))
            .collect();
        writeln!(out, "    production runs padded to: {}", reached.join(", "))?;
        if let Some(w) = &g.warmup {
            writeln!(
                out,
                "    the warm-up runs:          {}",
                sizes(w.iter().copied())
            )?;
        }
        if let Some(cold) = &g.not_warmed {
            if cold.is_empty() {
                writeln!(out, "    {GREEN}every padded size is warmed{RESET}")?;
            } else {
                writeln!(
                    out,
                    "    {RED}not warmed{RESET}:                {}",
                    sizes(cold.iter().copied())
                )?;
            }
        }
    }
    if b.too_large > 0 {
        writeln!(
            out,
            "  {RED}refused{RESET}: {} larger than max_batch_size {}",
            plural(b.too_large as usize, "request"),
            r.max_batch_size
        )?;
    }
    if b.not_batchable > 0 {
        writeln!(
            out,
            "  {RED}refused{RESET}: {} without one common 0th dimension",
            plural(b.not_batchable as usize, "request")
        )?;
    }
    Ok(())
}

fn plural(n: usize, what: &str) -> String {
    crate::render::plural(n as u64, what)
}

fn summarize_labels(v: &[String]) -> String {
    match v {
        [] => "(none)".into(),
        [one] => one.clone(),
        [first, ..] if v.len() > 3 => format!("{first}, ... ({} more)", v.len() - 1),
        _ => v.join(", "),
    }
}

/// Workflow-command data: every control, bidirectional control and line separator shown
/// as an escape ([`sanitize`]: no CR or LF is left to end the command and start a forged
/// one), then GitHub's escape of `%`
/// (<https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts>).
fn gh_data(s: &str) -> String {
    sanitize(s).replace('%', "%25")
}

/// Escapes a workflow-command property (data escapes plus `:` and `,`).
fn gh_prop(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Writes GitHub Actions workflow annotations: one `::error` / `::warning` / `::notice`
/// line per finding, with the file and the finding code as title, then a summary line.
///
/// ```
/// use tfreq::analysis::{diff, DiffOptions};
/// use tfreq::{DType, TFRequest};
/// let mut w = TFRequest::new("s");
/// w.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("a");
/// let mut p = w.clone();
/// p.add_fetch("b");
/// let report = diff(&[w.message().clone()], p.message(), &DiffOptions::default());
/// let mut out = Vec::new();
/// tfreq::render::write_github(&mut out, &report)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with("::error file=production,title=FETCH_ADDED::"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_github(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    github_head(out, r)?;
    for req in &r.requests {
        github_request(out, req)?;
    }
    github_tail(out, r)
}

/// The annotations of the unreadable files and the input problems.
fn github_head(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    for u in &r.unreadable {
        write_github_unreadable(out, &u.file, &u.error)?;
    }
    for p in &r.problems {
        write_github_finding(out, &p.file, &p.label, &p.finding)?;
    }
    Ok(())
}

/// The annotations of one request's findings.
fn github_request(out: &mut dyn Write, req: &RequestReport) -> io::Result<()> {
    for f in &req.findings {
        write_github_finding(out, &req.file, &req.label, f)?;
    }
    Ok(())
}

/// The summary line.
fn github_tail(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let c = r.counts;
    let unreadable = match r.unreadable.len() {
        0 => String::new(),
        n => format!("; {}", plural(n, "unreadable file")),
    };
    writeln!(
        out,
        "tfreq {}: {} ({}, {}, {}{unreadable})",
        match r.command {
            Command::Diff => "diff",
            Command::Check => "check",
        },
        r.verdict,
        plural(c.errors, "error"),
        plural(c.warnings, "warning"),
        plural(c.notes, "note"),
    )
}

/// One workflow annotation for a finding about `label` (a file, or a record in it).
pub fn write_github_finding(
    out: &mut dyn Write,
    file: &str,
    label: &str,
    f: &Finding,
) -> io::Result<()> {
    let level = match f.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let msg = if label == file {
        f.message.clone()
    } else {
        format!("{label}: {}", f.message)
    };
    writeln!(
        out,
        "::{level} file={},title={}::{}",
        gh_prop(file),
        gh_prop(f.code.as_str()),
        gh_data(&msg)
    )
}

/// The `::notice` annotation (title `EXAMPLES`) that shows a classify, regress or
/// multi-inference request's examples on one line: the input list, then each shown
/// example's features as `name kind[length] preview` (at most
/// [`crate::render::EXAMPLES_SHOWN`] examples and
/// [`crate::render::PREVIEW`] values each). Nothing for a predict request.
///
/// ```
/// let b = std::fs::read("tests/data/examples/requests/classify_valid_context.pb")?;
/// let m = tfreq::decode_request(b.into(), tfreq::Method::Classify)?;
/// let mut out = Vec::new();
/// tfreq::render::write_github_examples(&mut out, "r.pb", "r.pb", &m)?;
/// let line = String::from_utf8(out)?;
/// assert!(line.starts_with("::notice file=r.pb,title=EXAMPLES::ClassificationRequest, example_list_with_context of 3 examples; context: age int64[1] 40, tags bytes[1] \"ctx\"; example 0: x float[2] 1.0 2.0;"), "{line}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_github_examples(
    out: &mut dyn Write,
    file: &str,
    label: &str,
    msg: &crate::model::Message,
) -> io::Result<()> {
    use crate::render::human::{EXAMPLES_SHOWN, PREVIEW, scalar_text};
    if !msg.method.takes_examples() {
        return Ok(());
    }
    let features = |e: &crate::model::Example| -> String {
        e.features
            .iter()
            .map(|f| {
                let mut p: Vec<String> =
                    f.values.preview(PREVIEW).iter().map(scalar_text).collect();
                if f.values.len() > PREVIEW {
                    p.push("…".into());
                }
                let mut s = format!("{} {}[{}]", f.name, f.values.kind(), f.values.len());
                if !p.is_empty() {
                    s.push(' ');
                    s.push_str(&p.join(" "));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = vec![msg.method.to_string()];
    match &msg.input {
        None => parts[0].push_str(", no input (no examples)"),
        Some(i) => {
            let n = i.examples.len();
            parts[0].push_str(&format!(
                ", {} of {}",
                if i.with_context {
                    "example_list_with_context"
                } else {
                    "example_list"
                },
                crate::render::plural(n as u64, "example")
            ));
            if let Some(c) = &i.context {
                parts.push(format!("context: {}", features(c)));
            }
            for (k, e) in i.examples.iter().take(EXAMPLES_SHOWN).enumerate() {
                parts.push(format!("example {k}: {}", features(e)));
            }
            if n > EXAMPLES_SHOWN {
                parts.push(format!("{} more", n - EXAMPLES_SHOWN));
            }
        }
    }
    let text = parts.join("; ");
    let msg_text = if label == file {
        text
    } else {
        format!("{label}: {text}")
    };
    writeln!(
        out,
        "::notice file={},title=EXAMPLES::{}",
        gh_prop(file),
        gh_data(&msg_text)
    )
}

/// The `::error` annotation for a file that could not be read.
pub fn write_github_unreadable(out: &mut dyn Write, file: &str, error: &str) -> io::Result<()> {
    writeln!(
        out,
        "::error file={},title=UNREADABLE::{}",
        gh_prop(file),
        gh_data(error)
    )
}

/// The format a [`ReportWriter`] writes: that of [`write_human`] (with its colour),
/// [`write_json`] or [`write_github`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// [`write_human`].
    Human(crate::render::Color),
    /// [`write_json`].
    Json,
    /// [`write_github`].
    Github,
}

/// Writes a [`Report`] whose requests come one at a time, in memory that does not grow
/// with their number: each request report is rendered when it is given, into a writer
/// of the caller's that keeps the text (a `Vec<u8>`; for text larger than memory,
/// `tfreq::Spool`: 8 MiB in memory, then a temporary file), and dropped; what the
/// report's head and tail need of it is tallied. [`ReportWriter::finish`] then writes what
/// [`write_human`], [`write_json`] or [`write_github`] writes of the whole report, byte
/// for byte: the head (known only at the end: the unreadable files, the input problems),
/// the requests' text (the caller copies it in), the coverage table and the result.
///
/// The report given to [`ReportWriter::new`] is all of it but the requests to come: each
/// request given to [`ReportWriter::request`] is appended to its requests and, when it
/// has a coverage table (`diff`), counted in the row of its key (made when missing), as
/// [`crate::analysis::Differ::finish`] does. Of each row the JSON report lists every
/// request's label: they are kept, front-coded (each label as the length it shares with
/// the row's previous one and the rest), a few bytes per request; the human and GitHub
/// formats keep a count.
///
/// ```
/// use std::io::Write;
/// use tfreq::analysis::{diff_labeled, DiffOptions, Differ, Labeled};
/// use tfreq::render::{write_json, ReportFormat, ReportWriter};
/// use tfreq::{DType, TFRequest};
/// let mut w = TFRequest::new("s");
/// w.add_feed("x", &[1], DType::Float, vec![1.0f32])?.add_fetch("a");
/// let mut p = w.clone();
/// p.add_fetch("b");
/// let (w, p) = (w.message().clone(), p.message().clone());
/// let warmup = [Labeled::new("w.bin", "w.bin", &w)];
/// let opts = DiffOptions::default();
/// let differ = Differ::new(&warmup, &opts);
/// // The report without its requests; each request is written as it is judged.
/// let mut writer = ReportWriter::new(ReportFormat::Json, differ.finish(Vec::new()));
/// let mut spool = Vec::new();
/// for label in ["p.log (record 0)", "p.log (record 1)"] {
///     let report = differ.report(&Labeled::new("p.log", label, &p));
///     writer.request(&mut spool, &report)?;
/// }
/// writer.report_mut().model = Some("model.json".into());
/// let mut out = Vec::new();
/// let head = writer.finish(&mut out, |out| out.write_all(&spool))?;
/// assert!(head.failed && head.requests.is_empty());
///
/// // The same bytes as the whole report's.
/// let prod = [
///     Labeled::new("p.log", "p.log (record 0)", &p),
///     Labeled::new("p.log", "p.log (record 1)", &p),
/// ];
/// let mut whole = diff_labeled(&warmup, &prod, &opts);
/// whole.model = Some("model.json".into());
/// let mut expected = Vec::new();
/// write_json(&mut expected, &whole)?;
/// assert_eq!(String::from_utf8(out)?, String::from_utf8(expected)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ReportWriter {
    format: ReportFormat,
    report: Report,
    /// The requests of the report given to [`ReportWriter::new`], written first.
    held: Vec<RequestReport>,
    /// Every request, those held included.
    tally: RequestTally,
    /// The coverage table, when the report has one.
    rows: Option<BTreeMap<ExecutorKey, CoverageRow>>,
}

/// A coverage row of a [`ReportWriter`].
#[derive(Debug, Clone, Default)]
struct CoverageRow {
    warmed_by: Vec<String>,
    labels: Labels,
}

/// A list of labels, front-coded: each as the length of the prefix it shares with the
/// one before, the length of the rest, and the rest (lengths as LEB128 varints). Only
/// the count is kept when `keep` is off.
#[derive(Debug, Clone, Default)]
struct Labels {
    keep: bool,
    count: u64,
    coded: Vec<u8>,
    last: Vec<u8>,
}

impl Labels {
    fn new(keep: bool) -> Self {
        Labels {
            keep,
            ..Labels::default()
        }
    }

    fn push(&mut self, label: &str) {
        self.count += 1;
        if !self.keep {
            return;
        }
        let label = label.as_bytes();
        let shared = self
            .last
            .iter()
            .zip(label)
            .take_while(|(a, b)| a == b)
            .count();
        let rest = &label[shared..];
        put_varint(&mut self.coded, shared as u64);
        put_varint(&mut self.coded, rest.len() as u64);
        self.coded.extend_from_slice(rest);
        self.last.truncate(shared);
        self.last.extend_from_slice(rest);
    }

    /// Each label in turn, to `each`.
    fn each(&self, mut each: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let (mut at, mut label) = (0, Vec::new());
        while at < self.coded.len() {
            let shared = get_varint(&self.coded, &mut at) as usize;
            let n = get_varint(&self.coded, &mut at) as usize;
            label.truncate(shared);
            label.extend_from_slice(&self.coded[at..at + n]);
            at += n;
            // The bytes put together are those of one label pushed, a `&str`.
            each(std::str::from_utf8(&label).map_err(io::Error::other)?)?;
        }
        Ok(())
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    while let Some(&byte) = b.get(*at) {
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

/// Where a [`ReportWriter`] was: [`ReportWriter::rollback`] takes back every request
/// given since [`ReportWriter::mark`] made it.
#[derive(Debug, Clone)]
pub struct ReportMark {
    tally: RequestTally,
    /// Each coverage row's labels as they were.
    rows: Vec<(ExecutorKey, LabelsMark)>,
}

/// A [`Labels`] as it was: its count, its coded length and its last label.
#[derive(Debug, Clone)]
struct LabelsMark(u64, usize, Vec<u8>);

impl ReportWriter {
    /// A writer of `report` in `format`. Its requests, if any, come first, before those
    /// given to [`ReportWriter::request`]; its command and warm-up decide how each
    /// request is written.
    pub fn new(format: ReportFormat, mut report: Report) -> ReportWriter {
        let keep = format == ReportFormat::Json;
        let rows = report.coverage.take().map(|cov| {
            cov.into_iter()
                .map(|c| {
                    let mut labels = Labels::new(keep);
                    c.requests.iter().for_each(|l| labels.push(l));
                    let row = CoverageRow {
                        warmed_by: c.warmed_by,
                        labels,
                    };
                    (c.key, row)
                })
                .collect()
        });
        let held = std::mem::take(&mut report.requests);
        let mut tally = RequestTally::default();
        held.iter().for_each(|r| tally.add(r));
        ReportWriter {
            format,
            report,
            held,
            tally,
            rows,
        }
    }

    /// The report the requests are added to: to add what is known only at the end
    /// (unreadable files, input problems, the model). Its requests stay with the
    /// writer, and a change of its command or warm-up does not change the requests
    /// already written.
    pub fn report_mut(&mut self) -> &mut Report {
        &mut self.report
    }

    /// Writes one request report (the next of the report's requests) to `spool`, to be
    /// copied into the report by [`ReportWriter::finish`], and counts it. Fails only as
    /// `spool` fails.
    pub fn request(&mut self, spool: &mut dyn Write, r: &RequestReport) -> io::Result<()> {
        if let Some(rows) = &mut self.rows {
            let keep = self.format == ReportFormat::Json;
            rows.entry(r.key.clone())
                .or_insert_with(|| CoverageRow {
                    warmed_by: r.warmed_by.clone().unwrap_or_default(),
                    labels: Labels::new(keep),
                })
                .labels
                .push(&r.label);
        }
        let first = self.tally.requests == 0;
        self.tally.add(r);
        write_request(spool, self.format, &self.report, first, r)
    }

    /// Where the writer is now, to take back what follows ([`ReportWriter::rollback`]):
    /// the requests of an input that turns out unreadable halfway. (The caller takes
    /// back their text from its spool: `tfreq::Spool::truncate`.)
    pub fn mark(&self) -> ReportMark {
        ReportMark {
            tally: self.tally,
            rows: self
                .rows
                .iter()
                .flatten()
                .map(|(k, r)| {
                    let l = &r.labels;
                    (
                        k.clone(),
                        LabelsMark(l.count, l.coded.len(), l.last.clone()),
                    )
                })
                .collect(),
        }
    }

    /// Forgets every request given since `mark` (from this writer) was made.
    pub fn rollback(&mut self, mark: ReportMark) {
        self.tally = mark.tally;
        if let Some(rows) = &mut self.rows {
            let before: BTreeMap<_, _> = mark.rows.into_iter().collect();
            rows.retain(|k, _| before.contains_key(k));
            for (k, LabelsMark(count, coded, last)) in before {
                if let Some(r) = rows.get_mut(&k) {
                    r.labels.count = count;
                    r.labels.coded.truncate(coded);
                    r.labels.last = last;
                }
            }
        }
    }

    /// Writes the whole report to `out`, `spooled` writing the text
    /// [`ReportWriter::request`] wrote, in order, where it goes; returns the report
    /// without its requests and coverage rows, its verdict, `failed` and counts over
    /// every request ([`Report::summarise_with`]).
    pub fn finish(
        self,
        out: &mut dyn Write,
        spooled: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<Report> {
        let ReportWriter {
            format,
            mut report,
            held,
            tally,
            rows,
        } = self;
        report.summarise_with(&tally);
        let requests = |out: &mut dyn Write| -> io::Result<()> {
            for (i, r) in held.iter().enumerate() {
                write_request(out, format, &report, i == 0, r)?;
            }
            spooled(out)
        };
        match format {
            ReportFormat::Human(color) => {
                let rows_shown: Option<Vec<Row>> = rows.as_ref().map(|rows| {
                    rows.iter()
                        .map(|(key, r)| Row {
                            key,
                            requests: r.labels.count,
                            warmed: !r.warmed_by.is_empty(),
                        })
                        .collect()
                });
                human_head(&mut crate::render::Paint::new(out, color), &report)?;
                requests(out)?;
                let mut p = crate::render::Paint::new(out, color);
                human_tail(&mut p, &report, rows_shown.as_deref())?;
            }
            ReportFormat::Github => {
                github_head(out, &report)?;
                requests(out)?;
                github_tail(out, &report)?;
            }
            ReportFormat::Json => {
                let any = tally.requests > 0;
                json_spliced(out, &report, any, requests, rows.as_ref())?
            }
        }
        Ok(report)
    }
}

/// Writes one request as `format` writes it in a report of `report`'s command and
/// warm-up (`first`: the report's first request).
fn write_request(
    out: &mut dyn Write,
    format: ReportFormat,
    report: &Report,
    first: bool,
    r: &RequestReport,
) -> io::Result<()> {
    match format {
        ReportFormat::Human(color) => {
            let mut p = crate::render::Paint::new(out, color);
            human_request(&mut p, report.command, many_warmups(report), r)
        }
        ReportFormat::Github => github_request(out, r),
        ReportFormat::Json => {
            // An element of "requests" (at indent 4) as serde_json's pretty printer
            // writes it inside the whole report: JSON text has no newline but between
            // its tokens, so each line is indented 4 more.
            let text = crate::escape::json_string(r, true);
            out.write_all(if first { b"\n    " } else { b",\n    " })?;
            write_indented(out, &text, "\n    ")
        }
    }
}

/// Writes `text` with `newline` in place of each `\n`.
fn write_indented(out: &mut dyn Write, text: &str, newline: &str) -> io::Result<()> {
    let mut lines = text.split('\n');
    if let Some(first) = lines.next() {
        out.write_all(first.as_bytes())?;
    }
    for line in lines {
        out.write_all(newline.as_bytes())?;
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// [`write_json`] of `report` with the spooled request elements and the coverage rows'
/// labels in place: the report is serialized with both empty, then each empty list is
/// written out. In serde_json's pretty text a key begins its line, at two spaces per
/// level, and no string holds a newline, so `\n  "requests": []` is the report's own
/// key and, after it, each `\n      "requests": []` is the next coverage row's (the
/// coverage table comes next; its rows' keys are at level 3).
fn json_spliced(
    out: &mut dyn Write,
    report: &Report,
    any: bool,
    requests: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    rows: Option<&BTreeMap<ExecutorKey, CoverageRow>>,
) -> io::Result<()> {
    const REQUESTS: &str = "\n  \"requests\": []";
    const ROW_REQUESTS: &str = "\n      \"requests\": []";
    let mut head = report.clone();
    head.coverage = rows.map(|rows| {
        rows.iter()
            .map(|(key, r)| Coverage {
                key: key.clone(),
                requests: Vec::new(),
                warmed_by: r.warmed_by.clone(),
            })
            .collect()
    });
    let text = to_json(&head);
    drop(head);
    let missing = || io::Error::other("the report's JSON has no \"requests\" list");
    let at = text.find(REQUESTS).ok_or_else(missing)?;
    out.write_all(&text.as_bytes()[..at])?;
    if any {
        out.write_all(b"\n  \"requests\": [")?;
        requests(out)?;
        out.write_all(b"\n  ]")?;
    } else {
        out.write_all(REQUESTS.as_bytes())?;
    }
    let mut rest = &text[at + REQUESTS.len()..];
    for r in rows.into_iter().flat_map(|rows| rows.values()) {
        let at = rest.find(ROW_REQUESTS).ok_or_else(missing)?;
        out.write_all(&rest.as_bytes()[..at])?;
        if r.labels.count == 0 {
            out.write_all(ROW_REQUESTS.as_bytes())?;
        } else {
            out.write_all(b"\n      \"requests\": [")?;
            let mut first = true;
            r.labels.each(|label| {
                out.write_all(if first { b"\n        " } else { b",\n        " })?;
                first = false;
                out.write_all(crate::escape::json_string(label, true).as_bytes())
            })?;
            out.write_all(b"\n      ]")?;
        }
        rest = &rest[at + ROW_REQUESTS.len()..];
    }
    out.write_all(rest.as_bytes())?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::{Labeled, Unreadable};
    use crate::analysis::{CheckOptions, DiffOptions, check_labeled, diff_labeled};
    use crate::io::Spool;
    use crate::model::Message;
    use crate::{DType, TFRequest};

    fn request(signature: &str, feed: &str, dtype: DType, fetches: &[&str]) -> Message {
        let mut r = TFRequest::new(signature);
        match dtype {
            DType::Int64 => r.add_feed(feed, &[1, 1], dtype, vec![1i64]).unwrap(),
            _ => r.add_feed(feed, &[1, 1], dtype, vec![1.0f32]).unwrap(),
        };
        fetches.iter().for_each(|f| {
            r.add_fetch(*f);
        });
        r.message().clone()
    }

    /// Production requests of several keys, labels with what must be escaped.
    fn production() -> Vec<(String, String, Message)> {
        let kinds = [
            request("serving_default", "x", DType::Float, &["y"]),
            request("serving_default", "x", DType::Float, &["y", "z"]),
            request("serving_default", "x:0", DType::Float, &["y"]),
            request("serving_default", "x", DType::Int64, &["y"]),
            request("other", "x", DType::Float, &[]),
        ];
        (0..23)
            .map(|i| {
                let file = if i % 7 == 6 {
                    "p \"q\"\n\u{202e}é%:,.log".to_string()
                } else {
                    format!("prod{}.log", i / 10)
                };
                let label = format!("{file} (record {i})");
                (file, label, kinds[(i * 3) % kinds.len()].clone())
            })
            .collect()
    }

    /// The coverage rows `diff` makes of these requests of `r`.
    fn diff_of_requests(r: &Report, requests: &[RequestReport]) -> Report {
        let mut cov: BTreeMap<ExecutorKey, Coverage> = BTreeMap::new();
        for q in requests {
            cov.entry(q.key.clone())
                .or_insert_with(|| Coverage {
                    key: q.key.clone(),
                    requests: Vec::new(),
                    warmed_by: q.warmed_by.clone().unwrap_or_default(),
                })
                .requests
                .push(q.label.clone());
        }
        let mut out = r.clone();
        out.requests.clear();
        out.coverage = Some(cov.into_values().collect());
        out
    }

    fn labeled(v: &[(String, String, Message)]) -> Vec<Labeled<'_>> {
        v.iter().map(|(f, l, m)| Labeled::new(f, l, m)).collect()
    }

    /// Reports of `diff` (one warm-up; several, with a model, unreadable files and
    /// input problems; no production request) and `check`.
    fn reports() -> Vec<Report> {
        let prod = production();
        let p = labeled(&prod);
        let w1 = request("serving_default", "x", DType::Float, &["y"]);
        let w2 = request("serving_default", "x", DType::Float, &["y", "z"]);
        let w3 = request("", "x", DType::Float, &["y", "y"]);
        let one = [Labeled::new("w.bin", "w.bin", &w1)];
        let many = [
            Labeled::new("w.tfrecord", "w.tfrecord (record 0)", &w1),
            Labeled::new("w.tfrecord", "w.tfrecord (record 1)", &w2),
            Labeled::new("w.tfrecord", "w.tfrecord (record 2)", &w3),
        ];
        let mut out = vec![diff_labeled(&one, &p, &DiffOptions::default())];
        let strict = DiffOptions {
            strict_shapes: true,
            model: None,
        };
        let mut r = diff_labeled(&many, &p, &strict);
        r.model = Some("model \"dir\"".into());
        r.add_unreadable([
            Unreadable {
                file: "gone.log".into(),
                error: "no such file".into(),
            },
            Unreadable {
                file: "bad:%,.log".into(),
                error: "truncated record\nat byte 12".into(),
            },
        ]);
        r.add_problems(
            "w.tfrecord",
            "w.tfrecord",
            vec![crate::analysis::Finding::new(
                crate::analysis::Code::TooManyRecords,
                Severity::Error,
                "more than 1000 records",
            )],
        );
        out.push(r);
        out.push(diff_labeled(&many, &[], &DiffOptions::default()));
        let model = crate::formats::savedmodel::read_model(std::path::Path::new(
            "tests/data/models/half_plus_two.metadata.json",
        ))
        .unwrap()
        .0;
        let mut c = check_labeled(&p, &model, &CheckOptions::default());
        c.model = Some("half_plus_two.metadata.json".into());
        c.add_unreadable([Unreadable {
            file: "-".into(),
            error: "not a request".into(),
        }]);
        out.push(c);
        out.push(check_labeled(&[], &model, &CheckOptions::default()));
        out
    }

    fn formats() -> [ReportFormat; 4] {
        use crate::render::Color;
        [
            ReportFormat::Human(Color::Never),
            ReportFormat::Human(Color::Always),
            ReportFormat::Json,
            ReportFormat::Github,
        ]
    }

    fn whole(format: ReportFormat, r: &Report) -> String {
        let mut out = Vec::new();
        match format {
            ReportFormat::Human(c) => write_human(&mut out, r, c),
            ReportFormat::Json => write_json(&mut out, r),
            ReportFormat::Github => write_github(&mut out, r),
        }
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The report without its requests (and its coverage rows), as a caller that
    /// streams them starts it.
    fn head(r: &Report) -> Report {
        let mut h = r.clone();
        h.requests.clear();
        if let Some(c) = &mut h.coverage {
            c.clear();
        }
        h
    }

    fn finished(w: ReportWriter, spool: Spool) -> (String, Report) {
        let mut out = Vec::new();
        let r = w.finish(&mut out, |out| spool.copy_to(out)).unwrap();
        (String::from_utf8(out).unwrap(), r)
    }

    #[test]
    fn requests_one_at_a_time_write_what_the_whole_report_writes() {
        for r in reports() {
            for f in formats() {
                let (mut w, mut spool) = (ReportWriter::new(f, head(&r)), Spool::new());
                r.requests
                    .iter()
                    .for_each(|q| w.request(&mut spool, q).unwrap());
                let (text, h) = finished(w, spool);
                assert_eq!(text, whole(f, &r), "{f:?}");
                assert_eq!(
                    (h.verdict, h.failed, h.counts),
                    (r.verdict, r.failed, r.counts)
                );
                // The whole report given at once: the same.
                let w = ReportWriter::new(f, r.clone());
                assert_eq!(finished(w, Spool::new()).0, whole(f, &r));
                // Half of it given at once, the rest one at a time.
                let mut half = r.clone();
                let rest = half.requests.split_off(r.requests.len() / 2);
                if let Some(c) = &mut half.coverage {
                    *c = diff_of_requests(&r, &half.requests).coverage.unwrap();
                }
                let (mut w, mut spool) = (ReportWriter::new(f, half), Spool::new());
                rest.iter().for_each(|q| w.request(&mut spool, q).unwrap());
                assert_eq!(finished(w, spool).0, whole(f, &r), "{f:?} in halves");
            }
        }
    }

    #[test]
    fn what_follows_a_mark_is_taken_back() {
        let reports = reports();
        for r in &reports {
            for f in formats() {
                let (mut w, mut spool) = (ReportWriter::new(f, head(r)), Spool::new());
                let (first, rest) = r.requests.split_at(r.requests.len() / 2);
                first.iter().for_each(|q| w.request(&mut spool, q).unwrap());
                let (mark, len) = (w.mark(), spool.len());
                // Requests of other reports (other keys and labels), taken back.
                for q in reports.iter().flat_map(|o| &o.requests).take(17) {
                    w.request(&mut spool, q).unwrap();
                }
                w.rollback(mark);
                spool.truncate(len).unwrap();
                rest.iter().for_each(|q| w.request(&mut spool, q).unwrap());
                assert_eq!(finished(w, spool).0, whole(f, r), "{f:?}");
            }
        }
    }

    #[test]
    fn a_report_larger_than_the_spools_memory_is_written_whole_and_taken_back_across_it() {
        // Some 2,200 request elements of JSON: the spool moves to its file (past 64 KiB
        // here, as it does past 8 MiB by default).
        let base = production();
        let prod: Vec<_> = (0..100)
            .flat_map(|i| {
                base.iter()
                    .map(move |(f, l, m)| (f.clone(), format!("{l} {i}"), m.clone()))
            })
            .collect();
        let w = request("serving_default", "x", DType::Float, &["y"]);
        let warm = [Labeled::new("w.bin", "w.bin", &w)];
        let r = diff_labeled(&warm, &labeled(&prod), &DiffOptions::default());
        let (mut w, mut spool) = (
            ReportWriter::new(ReportFormat::Json, head(&r)),
            Spool::holding(64 << 10),
        );
        let (first, rest) = r.requests.split_at(500);
        first.iter().for_each(|q| w.request(&mut spool, q).unwrap());
        let (mark, before) = (w.mark(), spool.len());
        rest.iter().for_each(|q| w.request(&mut spool, q).unwrap());
        // The mark is behind what went to the file: the file is cut back.
        assert!(
            spool.len() > before + (64 << 10),
            "{before} {}",
            spool.len()
        );
        w.rollback(mark);
        spool.truncate(before).unwrap();
        rest.iter().for_each(|q| w.request(&mut spool, q).unwrap());
        assert_eq!(finished(w, spool).0, whole(ReportFormat::Json, &r));
    }

    #[test]
    fn labels_come_back_as_pushed() {
        let mut l = Labels::new(true);
        let v = [
            "a.log (record 9)",
            "a.log (record 10)",
            "",
            "é",
            "e\u{301}",
            "a.log",
        ];
        v.iter().for_each(|s| l.push(s));
        let mut back = Vec::new();
        l.each(|s| {
            back.push(s.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(back, v);
    }
}
