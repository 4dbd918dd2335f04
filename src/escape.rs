//! Showing bytes that came from somewhere else — a request's names and strings, a file
//! name, a server's status text or error body — without letting them act on a terminal
//! or a CI log.
//!
//! One rule, used by every output that is not a format with its own escaping (JSON and
//! Python's text format keep theirs):
//!
//! - printable UTF-8 as is;
//! - `\\` for a backslash and `\"` for a double quote;
//! - `\n`, `\r`, `\t` for newline, carriage return and tab;
//! - `\u{..}` for every other control character (C0, DEL, C1 such as U+009B, the
//!   one-character CSI), for the bidirectional controls of the "Trojan Source" class
//!   (U+202A–U+202E, U+2066–U+2069, and the marks U+200E, U+200F, U+061C:
//!   <https://trojansource.codes/>), and for the line and paragraph separators
//!   U+2028 / U+2029, which some viewers break lines on;
//! - `\xNN` for each byte that is not UTF-8.
//!
//! So an escape sequence, a carriage return that would overwrite a line, a newline that
//! would start a forged `::error::` workflow command, or a right-to-left override that
//! reorders what a reviewer sees are all shown as text.
//!
//! ```
//! let name = b"x\x1b[2J\r\n::error::fake \xe2\x80\xae ok \xff";
//! assert_eq!(
//!     tfreq::escape_bytes(name),
//!     r"x\u{1b}[2J\r\n::error::fake \u{202e} ok \xff"
//! );
//! assert!(tfreq::is_unsafe(name));
//! assert!(!tfreq::is_unsafe("sorted_probs".as_bytes()));
//! ```

use std::fmt::Write as _;

/// Whether `c` is shown as an escape rather than as itself (besides `\\` and `\"`).
fn escaped(c: char) -> bool {
    c.is_control() || is_bidi_or_separator(c)
}

/// The bidirectional formatting characters and the Unicode line/paragraph separators.
fn is_bidi_or_separator(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            | '\u{2028}' | '\u{2029}'
    )
}

/// Appends the escaped form of one character to `out`.
fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '"' => out.push_str("\\\""),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if escaped(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Appends the escaped form of `b` to `out`, stopping once `out` has grown by more than
/// `max_chars` characters (when given). Returns whether it stopped early.
fn push_bytes(out: &mut String, b: &[u8], max_chars: Option<usize>) -> bool {
    let mut n = 0usize;
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            if max_chars.is_some_and(|m| n >= m) {
                return true;
            }
            let before = out.len();
            push_char(out, c);
            n += out[before..].chars().count();
        }
        for &x in chunk.invalid() {
            if max_chars.is_some_and(|m| n >= m) {
                return true;
            }
            let _ = write!(out, "\\x{x:02x}");
            n += 4;
        }
    }
    false
}

/// The escaped form of bytes from an input or a server (see the module's rule).
///
/// ```
/// assert_eq!(tfreq::escape_bytes(b"a\nb"), r"a\nb");
/// assert_eq!(tfreq::escape_bytes(br"a\nb"), r"a\\nb");
/// assert_eq!(tfreq::escape_bytes(b"\xc2\x9bred"), r"\u{9b}red");
/// ```
pub fn escape_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    push_bytes(&mut s, b, None);
    s
}

/// The escaped form of a string from an input or a server (see the module's rule).
///
/// ```
/// assert_eq!(tfreq::escape("rtl\u{202e}ok"), r"rtl\u{202e}ok");
/// ```
pub fn escape(s: &str) -> String {
    escape_bytes(s.as_bytes())
}

/// The escaped form cut to about `max_chars` characters, with `…` when something was cut.
///
/// ```
/// assert_eq!(tfreq::escape_short(b"abcdef", 3), "abc…");
/// assert_eq!(tfreq::escape_short(b"a\x07", 10), r"a\u{7}");
/// ```
pub fn escape_short(b: &[u8], max_chars: usize) -> String {
    let mut s = String::new();
    if push_bytes(&mut s, b, Some(max_chars)) {
        s.push('…');
    }
    s
}

/// Free text made safe to show: the same characters as [`escape`] are escaped (controls,
/// bidirectional controls, line separators), but backslashes and double quotes are left
/// as they are. For messages that already quote the names in them (a finding's message,
/// an error, a server's status text), and for file names and labels shown unquoted.
/// Borrows when there is nothing to escape.
///
/// ```
/// assert_eq!(tfreq::sanitize(r#"feed "x": ok"#), r#"feed "x": ok"#);
/// assert_eq!(tfreq::sanitize("a\r\n::error::x"), r"a\r\n::error::x");
/// assert_eq!(tfreq::sanitize("\u{1b}[2J"), r"\u{1b}[2J");
/// ```
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' | '"' => out.push(c),
            c => push_char(&mut out, c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `b` holds anything that [`escape_bytes`] shows as an escape other than `\\`
/// and `\"`: a control character, a bidirectional control, a line separator, or bytes
/// that are not UTF-8. A name with any of these is a finding (`UNSAFE_NAME`), since it
/// can change what a terminal or a log viewer shows.
///
/// ```
/// assert!(tfreq::is_unsafe(b"a\tb"));
/// assert!(tfreq::is_unsafe(b"\xff"));
/// assert!(!tfreq::is_unsafe("caf\u{e9} \"q\"".as_bytes()));
/// ```
pub fn is_unsafe(b: &[u8]) -> bool {
    b.utf8_chunks()
        .any(|c| !c.invalid().is_empty() || c.valid().chars().any(escaped))
}

/// JSON whose strings hold the exact text, with every character [`escape`] would escape
/// written as a `\uXXXX` escape — serde_json escapes only U+0000 to U+001F, as JSON
/// requires, so a C1 control (U+009B, a one-character CSI), DEL or a bidirectional
/// override would otherwise reach a terminal that shows the document. A custom
/// [`serde_json::ser::Formatter`] does it, so the document is still built by serde_json.
///
/// ```
/// let v = serde_json::json!({"name": "x\u{9b}31m\u{202e}"});
/// let text = tfreq::json_string(&v, false);
/// assert_eq!(text, r#"{"name":"x\u009b31m\u202e"}"#);
/// let back: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert_eq!(back, v);
/// ```
pub fn json_string<T: serde::Serialize + ?Sized>(value: &T, pretty: bool) -> String {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail; a value that cannot be serialized gives "null".
    if json_write(&mut out, value, pretty).is_err() {
        return "null".to_string();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// [`json_string`] into a writer.
pub fn json_write<W: std::io::Write, T: serde::Serialize + ?Sized>(
    out: W,
    value: &T,
    pretty: bool,
) -> std::io::Result<()> {
    let r = if pretty {
        let f = SafeJson(serde_json::ser::PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(out, f))
    } else {
        let f = SafeJson(serde_json::ser::CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(out, f))
    };
    r.map_err(std::io::Error::other)
}

/// A serde_json formatter that escapes, inside strings, what [`escape`] escapes.
struct SafeJson<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for SafeJson<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if escaped(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    // Everything else as the wrapped formatter writes it.
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forged_name_with_escapes_and_an_annotation_is_inert() {
        let name = b"x\x1b[2J\x1b[31mPWNED\x1b]0;title\x07\r\n::error::fake";
        let s = escape_bytes(name);
        assert!(!s.chars().any(|c| c.is_control()), "{s}");
        assert_eq!(
            s,
            r"x\u{1b}[2J\u{1b}[31mPWNED\u{1b}]0;title\u{7}\r\n::error::fake"
        );
    }

    #[test]
    fn c1_del_bidi_and_separators_are_escaped() {
        for c in [
            '\u{7f}', '\u{80}', '\u{9b}', '\u{9f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
            '\u{200e}', '\u{200f}', '\u{61c}', '\u{2028}', '\u{2029}',
        ] {
            let s = escape(&c.to_string());
            assert_eq!(s, format!("\\u{{{:x}}}", c as u32));
            assert!(is_unsafe(c.to_string().as_bytes()));
        }
        // Neighbours that are harmless stay as they are.
        for c in ['\u{a0}', '\u{2065}', '\u{202f}', '\u{200d}', 'é', '中'] {
            assert_eq!(escape(&c.to_string()), c.to_string());
        }
    }

    #[test]
    fn escape_short_cuts_on_characters_not_bytes() {
        assert_eq!(escape_short("ééé".as_bytes(), 2), "éé…");
        assert_eq!(escape_short(b"ab", 2), "ab");
        assert_eq!(escape_short(b"\n\n", 3), r"\n\n");
    }
}
