//! Rendering: the decoded model (or, for text format, the wire message) to what a
//! person or a program reads. Renderers never decode request semantics themselves.

pub(crate) mod escape;
pub(crate) mod human;
pub(crate) mod json;
#[cfg(feature = "net")]
mod load;
pub(crate) mod report;
pub(crate) mod signature;
pub(crate) mod text;

pub use human::{
    EXAMPLES_SHOWN, PREVIEW, preview, scalar_text, severity_color, write_container_head,
    write_coverage, write_entries, write_entry, write_entry_line, write_findings, write_log_head,
    write_summary,
};
pub use json::{
    FindingsJson, JSON_PREVIEW, MessageJson, StreamedContainer, ValuesMode, scalar_json,
    write_container, write_coverage_json, write_log_end, write_log_entry, write_log_start,
    write_message, write_summary_json,
};
pub use report::{
    ReportFormat, ReportMark, ReportWriter, to_json, write_batching, write_github,
    write_github_examples, write_github_finding, write_github_unreadable, write_human, write_json,
};
pub use signature::{write_saved_model_cli, write_with_examples};
pub use text::{to_text, write_text};

/// Whether a human-readable writer colours its text with ANSI escapes: only when the
/// caller asks ([`Color::Always`]); a program writing to a file or a `Vec` gets plain
/// text by default.
///
/// ```
/// use tfreq::render::{self, Color};
/// let msg = tfreq::decode(&tfreq::TFRequest::new("s").to_bytes()?)?;
/// let (mut plain, mut coloured) = (Vec::new(), Vec::new());
/// render::write_summary(&mut plain, "req", &msg, &[], Color::Never)?;
/// render::write_summary(&mut coloured, "req", &msg, &[], Color::Always)?;
/// assert!(!plain.contains(&0x1b) && coloured.contains(&0x1b));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    /// Plain text.
    #[default]
    Never,
    /// ANSI colour and bold.
    Always,
}

/// A writer that drops the ANSI SGR sequences (`ESC [ … m`) the human writers emit,
/// for [`Color::Never`]. Untrusted text never carries an ESC here: it is escaped first
/// ([`crate::escape`]), so only our own sequences are removed.
pub(crate) struct Paint<'a> {
    out: &'a mut dyn std::io::Write,
    strip: bool,
    in_seq: bool,
}

impl<'a> Paint<'a> {
    pub(crate) fn new(out: &'a mut dyn std::io::Write, color: Color) -> Self {
        Paint {
            out,
            strip: color == Color::Never,
            in_seq: false,
        }
    }
}

impl std::io::Write for Paint<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.strip {
            return self.out.write(buf);
        }
        let mut start = 0;
        for (i, &b) in buf.iter().enumerate() {
            if self.in_seq {
                if b == b'm' {
                    self.in_seq = false;
                    start = i + 1;
                }
            } else if b == 0x1b {
                self.out.write_all(&buf[start..i])?;
                self.in_seq = true;
            }
        }
        if !self.in_seq {
            self.out.write_all(&buf[start..])?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Python's float text, which the model's `Display` uses too (it lives below the model).
pub(crate) use crate::pyfloat;

/// `1234567` as `1,234,567`: how tfreq prints large counts (the command line too).
///
/// ```
/// assert_eq!(tfreq::render::group_digits(2147483648), "2,147,483,648");
/// ```
pub use crate::digits::group_digits;
#[cfg(feature = "net")]
pub use load::{load_html, write_load};

/// `1 error`, `2 errors`, `12,345 requests`: a count with its noun, grammatical, with
/// digit groups.
///
/// ```
/// assert_eq!(tfreq::render::plural(12345, "request"), "12,345 requests");
/// ```
pub fn plural(n: u64, what: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {what}{s}", crate::digits::group_digits(n))
}

#[cfg(test)]
mod tests {
    #[test]
    fn plural_counts() {
        assert_eq!(super::plural(1, "error"), "1 error");
        assert_eq!(super::plural(12345, "request"), "12,345 requests");
    }
}
