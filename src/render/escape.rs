//! Byte-string escaping: Python's `text_encoding.CEscape` (as `text_format` uses it),
//! and a short, readable form for summaries (the model's own, re-exported).

pub use crate::model::short_bytes;

/// C-escapes bytes as protobuf's Python `text_format` does (`as_utf8=False`).
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

#[cfg(test)]
mod tests {
    use super::c_escape;

    #[test]
    fn octal_and_named_escapes() {
        assert_eq!(c_escape(b"\xff\x00abc"), r"\377\000abc");
        assert_eq!(c_escape("héllo".as_bytes()), r"h\303\251llo");
        assert_eq!(c_escape(b"q\"b\\\t\n\r'"), r#"q\"b\\\t\n\r\'"#);
    }
}
