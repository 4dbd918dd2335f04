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

/// A string element for summaries, to be shown between double quotes. One rule, so
/// the text says which bytes were there: printable UTF-8 text as is; a backslash as
/// `\\` and a double quote as `\"`; newline, carriage return and tab as `\n`, `\r`,
/// `\t`, other control characters as `\u{1b}` (Rust's escapes); bytes that are not
/// UTF-8 as `\xNN`. Cut at 40 characters (`…`).
///
/// ```
/// use tfreq::render::escape::short_bytes;
/// assert_eq!(short_bytes(b"a\nb"), r"a\nb");       // a newline
/// assert_eq!(short_bytes(br"a\nb"), r"a\\nb");     // a backslash and an n
/// assert_eq!(short_bytes(b"say \"hi\"\xff"), r#"say \"hi\"\xff"#);
/// ```
pub fn short_bytes(b: &[u8]) -> String {
    const MAX: usize = 40;
    let mut s = String::new();
    for chunk in b.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\\' => s.push_str("\\\\"),
                '"' => s.push_str("\\\""),
                c if c.is_control() => s.extend(c.escape_default()),
                c => s.push(c),
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
