//! The human summary `tfreq inspect` prints by default.
//!
//! It reads only what it shows: a preview of the first values, never all of them, so
//! summarising a gigabyte tensor costs what reading its header does.

use std::io::{self, Write};

use crate::analysis::{Finding, Severity};
use crate::model::{Elements, Fill, Kind, Message, Scalar, WireFormat};

/// Colour codes, written only when the caller's stream keeps them (see `anstream`).
pub mod style {
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
/// let msg = tfreq::decode(&req.to_bytes())?;
/// let mut out = Vec::new();
/// tfreq::render::human::write_summary(&mut out, "req.bin", &msg, &[])?;
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
) -> io::Result<()> {
    use style::*;
    writeln!(
        out,
        "{BOLD}{label}{RESET}: {} {}, {} bytes",
        msg.wire, msg.kind, msg.size
    )?;
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
    if msg.kind == Kind::Request || msg.wire == WireFormat::TfServing {
        if msg.signature_name.is_empty() {
            let note = if msg.wire == WireFormat::TfServing {
                " (empty: serving_default)"
            } else {
                " (none)"
            };
            writeln!(out, "signature: \"\"{note}")?;
        } else {
            writeln!(out, "signature: {}", msg.signature_name)?;
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
                t.name.clone(),
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
                msg.fetches.join(", ")
            )?;
        }
    }
    for (name, b) in &msg.extra {
        writeln!(out, "{name}: {} bytes (kept, not interpreted)", b.len())?;
    }
    if problems.is_empty() {
        writeln!(out, "problems: {GREEN}none{RESET}")?;
    } else {
        writeln!(out, "problems ({}):", problems.len())?;
        for p in problems {
            writeln!(
                out,
                "  {}{}{RESET} {}: {}",
                severity_color(p.severity),
                p.severity,
                p.code,
                p.message
            )?;
        }
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
        Scalar::Bytes(b) => format!("\"{}\"", crate::render::escape::short_bytes(b)),
        other => other.to_string(),
    }
}
