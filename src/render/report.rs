//! Printing a `diff` / `check` [`Report`]: for people (one screen per request, colour
//! when the stream keeps it), for GitHub Actions (workflow annotations), and as JSON
//! ([`to_json`]).

use std::io::{self, Write};

use crate::escape::sanitize;

use crate::analysis::report::{Command, Report, Verdict};
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
    for req in &r.requests {
        writeln!(out)?;
        writeln!(
            out,
            "{BOLD}{}{RESET}: {}{}{RESET}",
            sanitize(&req.label),
            verdict_color(req.verdict),
            req.verdict
        )?;
        writeln!(out, "  key: {}", sanitize(&req.key.to_string()))?;
        if let Some(c) = &req.compared_with {
            if r.warmup.as_ref().is_some_and(|w| w.len() > 1) {
                writeln!(out, "  compared with: {}", sanitize(c))?;
            }
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
            let what = match r.command {
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
    }
    if let Some(cov) = &r.coverage {
        if cov.len() > 1 || r.warmup.as_ref().is_some_and(|w| w.len() > 1) {
            let cold = cov.iter().filter(|c| c.warmed_by.is_empty()).count();
            writeln!(out)?;
            writeln!(
                out,
                "coverage: {} distinct production key{}, {cold} not warmed",
                cov.len(),
                if cov.len() == 1 { "" } else { "s" }
            )?;
            for c in cov {
                let (mark, col) = if c.warmed_by.is_empty() {
                    ("not warmed", RED)
                } else {
                    ("warmed", GREEN)
                };
                writeln!(
                    out,
                    "  {col}{mark:<10}{RESET} {} ({} request{})",
                    sanitize(&c.key.to_string()),
                    c.requests.len(),
                    if c.requests.len() == 1 { "" } else { "s" }
                )?;
            }
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
    for u in &r.unreadable {
        write_github_unreadable(out, &u.file, &u.error)?;
    }
    let problems = r.problems.iter().map(|p| (&p.file, &p.label, &p.finding));
    let requests = r
        .requests
        .iter()
        .flat_map(|req| req.findings.iter().map(move |f| (&req.file, &req.label, f)));
    for (file, label, f) in problems.chain(requests) {
        write_github_finding(out, file, label, f)?;
    }
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
    use crate::render::human::{scalar_text, EXAMPLES_SHOWN, PREVIEW};
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
