//! The human summary `tfreq inspect` prints by default.
//!
//! It reads only what it shows: a preview of the first values, never all of them, so
//! summarising a gigabyte tensor costs what reading its header does.

use std::io::{self, Write};

use crate::escape::sanitize;

use crate::analysis::{Finding, Severity};
use crate::model::{Elements, Example, ExampleInput, Fill, Kind, Message, Scalar, WireFormat};

/// Colour codes, written only when the caller's stream keeps them (see `anstream`).
pub(crate) mod style {
    /// Bold.
    pub const BOLD: &str = "\x1b[1m";
    /// Red.
    pub const RED: &str = "\x1b[31m";
    /// Yellow.
    pub const YELLOW: &str = "\x1b[33m";
    /// Cyan.
    pub const CYAN: &str = "\x1b[36m";
    /// Green.
    pub const GREEN: &str = "\x1b[32m";
    /// Reset.
    pub const RESET: &str = "\x1b[0m";
}

/// The colour of a severity.
pub fn severity_color(s: Severity) -> &'static str {
    match s {
        Severity::Error => style::RED,
        Severity::Warning => style::YELLOW,
        Severity::Note => style::CYAN,
    }
}

/// How many values a preview shows.
pub const PREVIEW: usize = 6;

/// Writes the summary of one message.
///
/// ```
/// use tfreq::{DType, TFRequest};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])?;
/// req.add_fetch("y");
/// let msg = tfreq::decode(&req.to_bytes()?)?;
/// let mut out = Vec::new();
/// tfreq::render::write_summary(&mut out, "req.bin", &msg, &[], Default::default())?;
/// let s = String::from_utf8(out).unwrap();
/// assert!(s.contains("EAS PredictRequest"));
/// assert!(s.contains("DT_FLOAT"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_summary(
    out: &mut dyn Write,
    label: &str,
    msg: &Message,
    problems: &[Finding],
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    use style::*;
    let label = sanitize(label);
    if msg.method.takes_examples() {
        writeln!(
            out,
            "{BOLD}{label}{RESET}: {} {}, {} bytes",
            msg.wire, msg.method, msg.size
        )?;
    } else {
        writeln!(
            out,
            "{BOLD}{label}{RESET}: {} {}, {} bytes",
            msg.wire, msg.kind, msg.size
        )?;
    }
    if let Some(spec) = &msg.model_spec {
        let mut s = format!("model: {:?}", spec.name);
        if let Some(v) = spec.version {
            s.push_str(&format!(", version {v}"));
        }
        if let Some(l) = &spec.version_label {
            s.push_str(&format!(", label {l:?}"));
        }
        writeln!(out, "{s}")?;
    }
    if msg.method.takes_examples() {
        write_examples(out, msg)?;
        return write_problems(out, problems);
    }
    if msg.kind == Kind::Request || msg.wire == WireFormat::TfServing {
        if msg.signature_name.is_empty() {
            let note = if msg.wire == WireFormat::TfServing {
                format!(" (empty: {})", crate::model::DEFAULT_SIGNATURE)
            } else {
                " (none)".to_string()
            };
            writeln!(out, "signature: \"\"{note}")?;
        } else {
            writeln!(out, "signature: {}", sanitize(&msg.signature_name))?;
        }
    }
    let what = if msg.kind == Kind::Request {
        "feeds"
    } else {
        "outputs"
    };
    writeln!(out, "{what} ({}):", msg.tensors.len())?;
    let rows: Vec<[String; 6]> = msg
        .tensors
        .iter()
        .map(|t| {
            let e = t.elements(msg.wire);
            [
                sanitize(&t.name).into_owned(),
                t.dtype.to_string(),
                t.shape.to_string(),
                count_text(&e),
                e.source.to_string(),
                preview(&e),
            ]
        })
        .collect();
    if !rows.is_empty() {
        let head = ["name", "dtype", "shape", "values", "encoding", "preview"];
        let mut w = head.map(|h| h.chars().count());
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String; 6]| {
            let mut s = String::from("  ");
            for (i, c) in cells.iter().enumerate() {
                if i == 5 {
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    s.extend(std::iter::repeat_n(' ', w[i] - c.chars().count() + 2));
                }
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&head.map(String::from)))?;
        for r in &rows {
            writeln!(out, "{}", line(r))?;
        }
    }
    if msg.kind == Kind::Request {
        if msg.fetches.is_empty() {
            let note = if msg.wire == WireFormat::TfServing {
                " (empty: every output of the signature)"
            } else {
                ""
            };
            writeln!(out, "fetches (0){note}")?;
        } else {
            writeln!(
                out,
                "fetches ({}): {}",
                msg.fetches.len(),
                msg.fetches
                    .iter()
                    .map(|f| sanitize(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
        }
    }
    for (name, b) in &msg.extra {
        writeln!(
            out,
            "{}: {} bytes (kept, not interpreted)",
            sanitize(name),
            b.len()
        )?;
    }
    write_problems(out, problems)
}

/// The `problems` lines of a summary (`out` already paints).
fn write_problems(out: &mut dyn Write, problems: &[Finding]) -> io::Result<()> {
    use style::*;
    if problems.is_empty() {
        writeln!(out, "problems: {GREEN}none{RESET}")?;
    } else {
        writeln!(out, "problems ({}):", problems.len())?;
        write_findings(out, problems, crate::render::Color::Always)?;
    }
    Ok(())
}

/// How many examples a summary lists (the count is always given).
pub const EXAMPLES_SHOWN: usize = 8;

/// The body of a classify, regress or multi-inference request's summary: signature
/// (or tasks), then the input and every shown example's features (name, kind, length,
/// a preview of the values).
fn write_examples(out: &mut dyn Write, msg: &Message) -> io::Result<()> {
    if msg.tasks.is_empty() && msg.method == crate::model::Method::MultiInference {
        writeln!(out, "tasks (0)")?;
    } else if !msg.tasks.is_empty() {
        writeln!(out, "tasks ({}):", msg.tasks.len())?;
        for t in &msg.tasks {
            let model = t
                .model_spec
                .as_ref()
                .map(|s| format!(" (model {:?})", s.name))
                .unwrap_or_default();
            writeln!(
                out,
                "  {}: method {}{model}",
                sanitize(t.signature()),
                if t.method_name.is_empty() {
                    "\"\" (empty)".to_string()
                } else {
                    sanitize(&t.method_name).into_owned()
                }
            )?;
        }
    } else if msg.signature_name.is_empty() {
        writeln!(
            out,
            "signature: \"\" (empty: {})",
            crate::model::DEFAULT_SIGNATURE
        )?;
    } else {
        writeln!(out, "signature: {}", sanitize(&msg.signature_name))?;
    }
    let Some(input) = &msg.input else {
        return writeln!(out, "input: none (no examples)");
    };
    write_input(out, input)
}

fn write_input(out: &mut dyn Write, input: &ExampleInput) -> io::Result<()> {
    let list = if input.with_context {
        "example_list_with_context"
    } else {
        "example_list"
    };
    let n = input.examples.len();
    writeln!(
        out,
        "input: {list}, {n} example{}",
        if n == 1 { "" } else { "s" }
    )?;
    if let Some(ctx) = &input.context {
        writeln!(
            out,
            "  context ({}):",
            crate::render::plural(ctx.features.len() as u64, "feature")
        )?;
        write_features(out, ctx)?;
    }
    for (i, ex) in input.examples.iter().take(EXAMPLES_SHOWN).enumerate() {
        writeln!(
            out,
            "  example {i} ({}):",
            crate::render::plural(ex.features.len() as u64, "feature")
        )?;
        write_features(out, ex)?;
    }
    if n > EXAMPLES_SHOWN {
        writeln!(out, "  … {} more examples", n - EXAMPLES_SHOWN)?;
    }
    Ok(())
}

/// One example's features as a table: name, kind, length, preview.
fn write_features(out: &mut dyn Write, ex: &Example) -> io::Result<()> {
    if ex.features.is_empty() {
        return Ok(());
    }
    let rows: Vec<[String; 4]> = ex
        .features
        .iter()
        .map(|f| {
            let vals = f.values.preview(PREVIEW);
            let mut p = vals.iter().map(scalar_text).collect::<Vec<_>>().join(", ");
            if f.values.len() > PREVIEW {
                p.push_str(", …");
            }
            [
                sanitize(&f.name).into_owned(),
                f.values.kind().to_string(),
                f.values.len().to_string(),
                p,
            ]
        })
        .collect();
    let head = ["name", "kind", "length", "preview"].map(String::from);
    let mut w = head.clone().map(|h| h.chars().count());
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    for r in std::iter::once(&head).chain(&rows) {
        let mut s = String::from("    ");
        for (i, c) in r.iter().enumerate() {
            s.push_str(c);
            if i < 3 {
                s.extend(std::iter::repeat_n(' ', w[i] - c.chars().count() + 2));
            }
        }
        writeln!(out, "{}", s.trim_end())?;
    }
    Ok(())
}

/// One indented, coloured line per finding: `  error CODE: message`.
pub fn write_findings(
    out: &mut dyn Write,
    findings: &[Finding],
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    use style::RESET;
    for p in findings {
        writeln!(
            out,
            "  {}{}{RESET} {}: {}",
            severity_color(p.severity),
            p.severity,
            p.code,
            sanitize(&p.message)
        )?;
    }
    Ok(())
}

fn count_text(e: &Elements) -> String {
    match (e.fill, e.expected) {
        (Fill::Exact, Some(n)) => n.to_string(),
        (_, Some(n)) => format!("{}/{n}", e.stored),
        (_, None) => format!("{}/?", e.stored),
    }
}

/// A short preview of the first stored values.
pub fn preview(e: &Elements) -> String {
    let vals = e.preview(PREVIEW);
    let mut s = vals.iter().map(scalar_text).collect::<Vec<_>>().join(", ");
    if e.stored > PREVIEW {
        s.push_str(", …");
    }
    if e.fill == Fill::RepeatLast {
        s.push_str(" (last repeated)");
    }
    s
}

/// One value as the summary shows it.
pub fn scalar_text(v: &Scalar) -> String {
    match v {
        Scalar::F32(x) => crate::render::pyfloat::f32_text(*x),
        Scalar::F64(x) => crate::render::pyfloat::f64_repr(*x),
        // Half floats as the float32 they widen to, exactly, as Python prints it
        // (`2.990763e+38`, not 39 digits).
        Scalar::F16(x) => crate::render::pyfloat::f32_text(x.to_f32()),
        Scalar::BF16(x) => crate::render::pyfloat::f32_text(x.to_f32()),
        Scalar::Bytes(b) => format!("\"{}\"", crate::render::escape::short_bytes(b)),
        other => other.to_string(),
    }
}

/// The head of a multi-entry file's summary: its kind, entry count by kind, and the
/// findings about the file as a whole.
pub fn write_container_head(
    out: &mut dyn Write,
    label: &str,
    c: &crate::formats::Container,
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    let label = &*sanitize(label);
    use crate::formats::ContainerKind;
    use style::*;
    match c.kind {
        ContainerKind::TfRecord | ContainerKind::UnframedLogs => {
            let tally = crate::formats::LogTally::of(c);
            write_log_line(out, label, c.kind, c.compression, &tally)?;
        }
        ContainerKind::Text => {
            let lines: Vec<&[u8]> = c.entries.iter().map(|e| &e.bytes[..]).collect();
            let s = crate::formats::text::summary(&lines);
            writeln!(
                out,
                "{BOLD}{label}{RESET}: EAS text warm-up, {} request line{} (string requests, one per line)",
                s.lines,
                if s.lines == 1 { "" } else { "s" }
            )?;
            if s.lines > 0 {
                writeln!(
                    out,
                    "line length: min {}, max {}, mean {:.1} bytes",
                    s.min_len,
                    s.max_len,
                    s.total_len as f64 / s.lines as f64
                )?;
            }
        }
        ContainerKind::TextFormat => writeln!(
            out,
            "{BOLD}{label}{RESET}: protobuf text format, {} request{}",
            c.entries.len(),
            if c.entries.len() == 1 { "" } else { "s" }
        )?,
        ContainerKind::RestJson => {
            // A :classify/:regress body carries its kinds; a :predict body's dtypes
            // came from --model / --dtype.
            let examples = c.entries.iter().all(|e| {
                matches!(&e.content, crate::formats::Content::Message(m) if m.method.takes_examples())
            });
            writeln!(
                out,
                "{BOLD}{label}{RESET}: TF Serving REST JSON {} body, {} request{}{}",
                if examples {
                    ":classify/:regress"
                } else {
                    "predict"
                },
                c.entries.len(),
                if c.entries.len() == 1 { "" } else { "s" },
                if examples {
                    ""
                } else {
                    " (dtypes from the model, or given by name)"
                },
            )?
        }
        ContainerKind::Bare => writeln!(out, "{BOLD}{label}{RESET}: one message")?,
    }
    write_file_problems(out, &c.findings)
}

/// The head of [`write_container_head`] for a TFRecord log (`kind`) whose entries were
/// not kept: its line (`compression`, the `tally` of its entries) and the file's
/// `findings` (TF Serving's warm-up limits, what detection found).
pub fn write_log_head(
    out: &mut dyn Write,
    label: &str,
    compression: Option<crate::formats::compression::Compression>,
    tally: &crate::formats::LogTally,
    findings: &[Finding],
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    let label = &*sanitize(label);
    let kind = crate::formats::ContainerKind::TfRecord;
    write_log_line(out, label, kind, compression, tally)?;
    write_file_problems(out, findings)
}

/// The first line of a log's head: what it is and how many records of each kind.
fn write_log_line(
    out: &mut dyn Write,
    label: &str,
    kind: crate::formats::ContainerKind,
    compression: Option<crate::formats::compression::Compression>,
    tally: &crate::formats::LogTally,
) -> io::Result<()> {
    use style::*;
    let by: Vec<String> = tally
        .kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let what = if kind == crate::formats::ContainerKind::TfRecord {
        "TFRecord of PredictionLog"
    } else {
        "PredictionLog messages without TFRecord framing (TF Serving refuses this as a warm-up file)"
    };
    let by = if by.is_empty() {
        String::new()
    } else {
        format!(" ({})", by.join(", "))
    };
    let how = compression.map_or(String::new(), |z| format!("{z}-compressed "));
    writeln!(
        out,
        "{BOLD}{label}{RESET}: {how}{what}, {} record{}{by}",
        tally.entries,
        if tally.entries == 1 { "" } else { "s" },
    )
}

/// A file's findings under its head (nothing when there are none).
fn write_file_problems(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    if !findings.is_empty() {
        writeln!(out, "file problems ({}):", findings.len())?;
        write_findings(out, findings, crate::render::Color::Always)?;
    }
    Ok(())
}

/// One line for an entry that is not a decoded message (another log kind, a text line).
pub fn write_entry_line(
    out: &mut dyn Write,
    label: &str,
    e: &crate::formats::Entry,
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    use crate::formats::Content;
    use style::*;
    let label = &*sanitize(label);
    match &e.content {
        Content::Line(l) => writeln!(
            out,
            "{label}: {} bytes: \"{}\"",
            l.len(),
            crate::render::escape::short_bytes(l)
        ),
        Content::Log(log) => {
            let mut s = format!(
                "{BOLD}{label}{RESET}: {}, {} bytes at byte {}",
                log.kind, e.size, e.offset
            );
            let specs = log.request_model_specs();
            if !specs.is_empty() {
                let names: Vec<String> = specs
                    .iter()
                    .map(|m| {
                        format!(
                            "{:?}/{}",
                            m.name,
                            if m.signature_name.is_empty() {
                                "\"\"".into()
                            } else {
                                sanitize(&m.signature_name)
                            }
                        )
                    })
                    .collect();
                s.push_str(&format!(", model/signature {}", names.join(", ")));
            }
            if let Some(spec) = &e.log_model_spec {
                s.push_str(&format!(", log_metadata model {:?}", spec.name));
            }
            if log.kind == crate::formats::prediction_log::LogKind::PredictStreamed {
                s.push_str(&format!(", {} request(s)", log.requests.len()));
            }
            s.push_str(match log.kind {
                crate::formats::prediction_log::LogKind::None => " (empty: no log_type)",
                crate::formats::prediction_log::LogKind::Predict => " (no request)",
                _ => " (not a PredictRequest: not decoded further)",
            });
            writeln!(out, "{s}")
        }
        Content::Message(m) if m.method.takes_examples() => {
            writeln!(out, "{label}: {} {}", m.wire, m.method)
        }
        Content::Message(m) => writeln!(out, "{label}: {} {}", m.wire, m.kind),
    }
}

/// The entries of `c` in `range` as `tfreq inspect` writes them after the file's head
/// ([`write_container_head`], not written for a `bare` file of one message): each
/// message's summary with its findings (`problems`, one list per entry of `c`), each
/// other entry on a line; a file's entries labelled `label` and their record.
///
/// ```
/// use tfreq::formats::{read, InputOptions};
/// let bytes = tfreq::read_input("tests/data/tfrecord/warmup_predict.tfrecord".as_ref())?;
/// let c = read(bytes, &InputOptions::new())?.into_container()?;
/// let problems = vec![Vec::new(); c.entries.len()];
/// let mut out = Vec::new();
/// tfreq::render::write_entries(&mut out, "log", &c, &problems, 2..3, false, tfreq::render::Color::Never)?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("log record 2") && !text.contains("log record 1"), "{text}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_entries(
    out: &mut dyn Write,
    label: &str,
    c: &crate::formats::Container,
    problems: &[Vec<Finding>],
    range: std::ops::Range<usize>,
    bare: bool,
    color: crate::render::Color,
) -> io::Result<()> {
    let mut after_message = false;
    let entries = c.entries.get(range.clone()).unwrap_or(&[]);
    let problems = problems.get(range).unwrap_or(&[]);
    for (e, p) in entries.iter().zip(problems) {
        write_entry(out, label, c.kind, e, p, bare, &mut after_message, color)?;
    }
    Ok(())
}

/// One entry of [`write_entries`], for a caller that walks a file's entries without
/// keeping them: `kind` is the file's, `problems` the entry's findings;
/// `after_message` says whether the entry before was a message (false before the
/// first) and is updated.
#[allow(clippy::too_many_arguments)]
pub fn write_entry(
    out: &mut dyn Write,
    label: &str,
    kind: crate::formats::ContainerKind,
    e: &crate::formats::Entry,
    problems: &[Finding],
    bare: bool,
    after_message: &mut bool,
    color: crate::render::Color,
) -> io::Result<()> {
    use crate::formats::Content;
    let elabel = if bare {
        label.to_string()
    } else {
        format!("{label} {}", e.label(kind))
    };
    match &e.content {
        Content::Message(msg) => {
            if !bare {
                writeln!(out)?;
            }
            write_summary(out, &elabel, msg, problems, color)?;
            *after_message = true;
        }
        _ => {
            if *after_message {
                writeln!(out)?;
            }
            write_entry_line(out, &elabel, e, color)?;
            *after_message = false;
        }
    }
    Ok(())
}

/// The `tfreq keys` table: each executor key with its count, and under it each shape
/// key (feed dtypes and dims) with its count and first occurrence.
pub fn write_coverage(
    out: &mut dyn Write,
    cov: &crate::analysis::coverage::KeyCounts,
    color: crate::render::Color,
) -> io::Result<()> {
    let out: &mut dyn Write = &mut crate::render::Paint::new(out, color);
    use style::*;
    let groups = cov.executor_keys();
    use crate::render::plural;
    let mut skipped = Vec::new();
    if cov.skipped > 0 {
        skipped.push(format!(
            "{} skipped: no request in them",
            if cov.skipped == 1 {
                "1 entry".to_string()
            } else {
                format!("{} entries", crate::digits::group_digits(cov.skipped))
            }
        ));
    }
    if !cov.unreadable.is_empty() {
        let names: Vec<_> = cov.unreadable.iter().map(|u| sanitize(&u.file)).collect();
        skipped.push(format!(
            "{} skipped: {}",
            plural(cov.unreadable.len() as u64, "unreadable file"),
            names.join(", ")
        ));
    }
    writeln!(
        out,
        "{} in {}: {}, {}{}",
        plural(cov.requests, "request"),
        plural(cov.files.len() as u64, "file"),
        plural(groups.len() as u64, "executor key"),
        plural(cov.keys.len() as u64, "shape key"),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(" ({})", skipped.join("; "))
        }
    )?;
    for (i, g) in groups.iter().enumerate() {
        let share = if cov.requests > 0 {
            100.0 * g.count as f64 / cov.requests as f64
        } else {
            0.0
        };
        writeln!(
            out,
            "\n{BOLD}key {}{RESET}: {} ({share:.1}%)\n  {}",
            i + 1,
            plural(g.count, "request"),
            sanitize(&g.key.to_string())
        )?;
        for (k, n, first) in &g.shapes {
            let shapes: Vec<String> = k
                .shapes
                .iter()
                .map(|(name, (dt, dims))| format!("{} {dt} {dims:?}", sanitize(name)))
                .collect();
            writeln!(
                out,
                "  {:>8}  {}  (first: {})",
                crate::digits::group_digits(*n),
                shapes.join(", "),
                sanitize(&cov.describe(*first))
            )?;
        }
    }
    Ok(())
}
