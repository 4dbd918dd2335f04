//! Byte-string escaping: Python's `text_encoding.CEscape` (as `text_format` uses it),
//! and a short, readable form for summaries.

/// C-escapes bytes as protobuf's Python `text_format` does (`as_utf8=False`).
///
/// ```
/// use tfreq::render::escape::c_escape;
/// assert_eq!(c_escape(b"\xff\x00abc"), r"\377\000abc");
/// assert_eq!(c_escape("héllo".as_bytes()), r"h\303\251llo");
/// assert_eq!(c_escape(b"q\"b\\\t\n\r'"), r#"q\"b\\\t\n\r\'"#);
/// ```
pub fn c_escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for &c in b {
        match c {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'\'' => s.push_str("\\'"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            32..=126 => s.push(c as char),
            _ => s.push_str(&format!("\\{c:03o}")),
        }
    }
    s
}

/// A string element for summaries: UTF-8 text as is (escaped like Rust `{:?}`
/// minus the quotes), other bytes as `\xNN`, cut at 40 characters.
pub fn short_bytes(b: &[u8]) -> String {
    const MAX: usize = 40;
    let mut s = String::new();
    for chunk in b.utf8_chunks() {
        for ch in chunk.valid().chars() {
            if ch.is_control() {
                s.extend(ch.escape_default());
            } else {
                s.push(ch);
            }
        }
        for &x in chunk.invalid() {
            s.push_str(&format!("\\x{x:02x}"));
        }
        if s.chars().count() > MAX {
            break;
        }
    }
    if s.chars().count() > MAX {
        let cut: String = s.chars().take(MAX).collect();
        return format!("{cut}…");
    }
    s
}
