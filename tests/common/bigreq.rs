//! A large request made in the test, so none ships in the repository.
#![allow(dead_code)]

/// A bare EAS request of `n` floats: `x` of shape `[n]`, fetch `y`.
pub fn big_request(n: usize) -> Vec<u8> {
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn field(num: u64, payload: &[u8], out: &mut Vec<u8>) {
        varint(num << 3 | 2, out);
        varint(payload.len() as u64, out);
        out.extend_from_slice(payload);
    }
    let mut shape = Vec::new();
    let mut dims = Vec::new();
    varint(n as u64, &mut dims);
    field(1, &dims, &mut shape);
    let mut arr = vec![0x08, 0x01]; // dtype DT_FLOAT
    field(2, &shape, &mut arr);
    let floats: Vec<u8> = std::iter::repeat_n(1.0f32.to_le_bytes(), n)
        .flatten()
        .collect();
    field(3, &floats, &mut arr);
    let mut entry = Vec::new();
    field(1, b"x", &mut entry);
    field(2, &arr, &mut entry);
    let mut req = Vec::new();
    field(1, b"serving_default", &mut req);
    field(2, &entry, &mut req);
    field(3, b"y", &mut req);
    req
}
