//! Byte-string escaping: Python's `text_encoding.CEscape` (as `text_format` uses it),
//! and a short, readable form for summaries (the model's own, re-exported).

pub use crate::model::short_bytes;

/// Each byte's escape as protobuf's Python `CEscape` writes it (`as_utf8=False`): up to
/// four bytes, and how many of them are the escape. `\n`, `\r`, `\t`, `\'`, `\"` and
/// `\\` by name, printable ASCII as itself, any other byte as three octal digits.
const ESCAPES: [([u8; 4], u8); 256] = escapes();

const fn escapes() -> [([u8; 4], u8); 256] {
    let mut t = [([0u8; 4], 0u8); 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b'\n' => ([b'\\', b'n', 0, 0], 2),
            b'\r' => ([b'\\', b'r', 0, 0], 2),
            b'\t' => ([b'\\', b't', 0, 0], 2),
            b'\'' | b'"' | b'\\' => ([b'\\', b, 0, 0], 2),
            32..=126 => ([b, 0, 0, 0], 1),
            _ => (
                [
                    b'\\',
                    b'0' + (b >> 6),
                    b'0' + ((b >> 3) & 7),
                    b'0' + (b & 7),
                ],
                4,
            ),
        };
        c += 1;
    }
    t
}

/// Bytes of escapes gathered before they are written: a multi-megabyte `tensor_content`
/// goes out in pieces this size (a buffer on the stack), never as one string.
const CHUNK: usize = 8 << 10;

/// C-escapes bytes as protobuf's Python `text_format` does (`as_utf8=False`), into a
/// string (the fuzz targets' reference printer; the text printer writes
/// [`write_c_escaped`] into its output).
#[cfg(any(test, feature = "fuzzing"))]
pub fn c_escape(b: &[u8]) -> String {
    let mut out = Vec::with_capacity(b.len());
    escape_into(b, |piece| {
        out.extend_from_slice(piece);
        Ok(())
    })
    .unwrap_or_default();
    // Every escape is ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `b` C-escaped ([`c_escape`]'s text) into `out`, through a table and a buffer
/// of 8 KiB: the memory used does not grow with `b`.
pub fn write_c_escaped(out: &mut dyn std::io::Write, b: &[u8]) -> std::io::Result<()> {
    escape_into(b, |piece| out.write_all(piece))
}

/// Escapes `b` into a buffer, handing it to `emit` each time it fills and at the end.
fn escape_into(
    b: &[u8],
    mut emit: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buf = [0u8; CHUNK + 4];
    let mut n = 0;
    for &c in b {
        let (e, len) = &ESCAPES[c as usize];
        // Four bytes copied whatever the escape's length: one store, no branch.
        buf[n..n + 4].copy_from_slice(e);
        n += usize::from(*len);
        if n >= CHUNK {
            emit(&buf[..n])?;
            n = 0;
        }
    }
    if n > 0 {
        emit(&buf[..n])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{c_escape, write_c_escaped};

    #[test]
    fn octal_and_named_escapes() {
        assert_eq!(c_escape(b"\xff\x00abc"), r"\377\000abc");
        assert_eq!(c_escape("héllo".as_bytes()), r"h\303\251llo");
        assert_eq!(c_escape(b"q\"b\\\t\n\r'"), r#"q\"b\\\t\n\r\'"#);
    }

    /// Every byte, and runs longer than the buffer: the table and the chunks write what
    /// the plain loop of Python's `CEscape` writes.
    #[test]
    fn every_byte_and_long_runs_escape_as_the_plain_loop() {
        fn plain(b: &[u8]) -> String {
            let mut s = String::new();
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
        let all: Vec<u8> = (0..=255u8).collect();
        assert_eq!(c_escape(&all), plain(&all));
        let long: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let mut out = Vec::new();
        write_c_escaped(&mut out, &long).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), plain(&long));
    }
}
