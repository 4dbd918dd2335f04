//! Protobuf wire writing primitives: sizes first, then bulk writes into one
//! exact-size buffer.

/// Bytes a varint takes.
#[inline]
pub fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least 1.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends a varint.
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes a tag takes.
#[inline]
pub fn tag_len(field: u32) -> usize {
    varint_len(u64::from(field) << 3)
}

/// Appends a tag.
#[inline]
pub fn put_tag(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    put_varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// Size of a LEN field holding `len` bytes.
#[inline]
pub fn len_field_size(field: u32, len: usize) -> usize {
    tag_len(field) + varint_len(len as u64) + len
}

/// Appends a LEN field.
#[inline]
pub fn put_bytes_field(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    put_tag(out, field, 2);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends the header of a LEN field whose payload follows.
#[inline]
pub fn put_len_header(out: &mut Vec<u8>, field: u32, len: usize) {
    put_tag(out, field, 2);
    put_varint(out, len as u64);
}

/// Appends a varint field.
#[inline]
pub fn put_varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(out, field, 0);
    put_varint(out, v);
}

/// Sum of varint sizes.
pub fn varints_len(it: impl Iterator<Item = u64>) -> usize {
    it.map(varint_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths() {
        for (v, n) in [
            (0u64, 1),
            (127, 1),
            (128, 2),
            (16383, 2),
            (16384, 3),
            (u64::MAX, 10),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), n, "{v}");
            assert_eq!(varint_len(v), n, "{v}");
        }
    }
}
