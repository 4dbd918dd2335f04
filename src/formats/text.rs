//! EAS text warm-ups (<https://www.alibabacloud.com/help/en/pai/user-guide/warm-up-model-services>): one string request per line, for models with a
//! string input.
//!
//! ```
//! use tfreq::formats::{summary, Lines};
//! let lines: Vec<_> = Lines::new("hello\nworld!\r\n\n".into()).map(|(_, _, l)| l).collect();
//! assert_eq!(lines, vec![&b"hello"[..], b"world!"]);
//! let s = summary(&lines);
//! assert_eq!((s.lines, s.min_len, s.max_len), (2, 5, 6));
//! ```

use bytes::Bytes;

/// Whether `bytes` reads as text lines: UTF-8 with no control characters other than
/// tab, CR and LF, and not empty.
pub fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && std::str::from_utf8(bytes).is_ok_and(|s| {
            s.chars()
                .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        })
}

/// The non-empty lines of a text warm-up, as `(index, byte offset, line)`: views
/// into the input, without the `\n` or `\r\n`. Blank lines are skipped (they carry no
/// request) but still count in the index.
#[derive(Debug, Clone)]
pub struct Lines {
    buf: Bytes,
    pos: usize,
    index: usize,
}

impl Lines {
    /// Lines of a whole file.
    pub fn new(buf: Bytes) -> Self {
        Lines {
            buf,
            pos: 0,
            index: 0,
        }
    }
}

impl Iterator for Lines {
    type Item = (usize, usize, Bytes);

    fn next(&mut self) -> Option<Self::Item> {
        while self.pos < self.buf.len() {
            let start = self.pos;
            let rest = self.buf.get(start..)?;
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.buf.len(), |i| start + i);
            self.pos = end + 1;
            let index = self.index;
            self.index += 1;
            let mut stop = end;
            if stop > start && self.buf.get(stop - 1) == Some(&b'\r') {
                stop -= 1;
            }
            if stop > start {
                return Some((index, start, self.buf.slice(start..stop)));
            }
        }
        None
    }
}

/// Line count and lengths (in bytes) of a text warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TextSummary {
    /// Non-empty lines (requests).
    pub lines: usize,
    /// Shortest line.
    pub min_len: usize,
    /// Longest line.
    pub max_len: usize,
    /// Total bytes of all lines.
    pub total_len: usize,
}

/// Summarises the lines.
pub fn summary<B: AsRef<[u8]>>(lines: &[B]) -> TextSummary {
    let lens = lines.iter().map(|l| l.as_ref().len());
    TextSummary {
        lines: lines.len(),
        min_len: lens.clone().min().unwrap_or(0),
        max_len: lens.clone().max().unwrap_or(0),
        total_len: lens.sum(),
    }
}
