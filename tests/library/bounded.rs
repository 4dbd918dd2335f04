//! Memory bounds of decoding (docs/robustness.md): whatever lengths, counts or shapes the bytes
//! claim, a decode allocates at most a small constant times the input size; from a
//! `Bytes` buffer, tensor data is a view of the buffer, not a copy.
//!
//! The test binary's counting global allocator (`alloc.rs`) measures the peak of live heap
//! bytes (per thread) while one decode runs.

use crate::alloc::measure;
use bytes::Bytes;
use tfreq::wire::{put_bytes_field, put_len_header, put_varint, put_varint_field};
use tfreq::{DType, DecodeOptions, Elems, Ints, TFRequest, Values, decode, decode_with};

/// The bound every decode keeps: `K` bytes per input byte, plus a constant. The worst
/// case is many tiny map entries: each 8-byte entry becomes a `Tensor` (~200 bytes).
const K: usize = 128;
const C: usize = 64 << 10;

fn check_bound(what: &str, input: &[u8]) {
    let bytes = Bytes::copy_from_slice(input);
    let (peak, r) = measure(|| decode_with(bytes, DecodeOptions::default()).map(|_| ()));
    let limit = K * input.len() + C;
    assert!(
        peak <= limit,
        "{what}: {} input bytes, peak {peak} bytes allocated > {K} x input + {C} ({r:?})",
        input.len()
    );
    // And from a slice (which copies the input once).
    let (peak, _) = measure(|| decode(input).map(|_| ()));
    assert!(peak <= limit + input.len(), "{what} (slice): peak {peak}");
}

fn varint(v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    put_varint(&mut b, v);
    b
}

/// An EAS request `{signature_name: "s", inputs {key: name, value: <tensor>}}`.
fn eas_request(name: &[u8], tensor: &[u8]) -> Vec<u8> {
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, name);
    put_bytes_field(&mut entry, 2, tensor);
    let mut out = Vec::new();
    put_bytes_field(&mut out, 1, b"s");
    put_bytes_field(&mut out, 2, &entry);
    out
}

#[test]
fn claimed_shapes_and_lengths_allocate_nothing_for_them() {
    // A [2^40] float tensor with no values (about 20 bytes).
    let mut shape = Vec::new();
    put_bytes_field(&mut shape, 1, &varint(1 << 40));
    let mut t = Vec::new();
    put_varint_field(&mut t, 1, 1);
    put_bytes_field(&mut t, 2, &shape);
    let req = eas_request(b"x", &t);
    assert!(req.len() < 24, "{}", req.len());
    check_bound("[2^40] tensor", &req);

    // A [2^40] string tensor whose tensor_content claims 2^40 strings.
    let mut tshape = Vec::new();
    let mut dim = Vec::new();
    put_varint_field(&mut dim, 1, 1 << 40);
    put_bytes_field(&mut tshape, 2, &dim);
    let mut tp = Vec::new();
    put_varint_field(&mut tp, 1, 7);
    put_bytes_field(&mut tp, 2, &tshape);
    put_bytes_field(&mut tp, 4, &[0x80, 0x80, 0x80, 0x80, 0x10, b'a']);
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, b"x");
    put_bytes_field(&mut entry, 2, &tp);
    let mut tfs = Vec::new();
    put_bytes_field(&mut tfs, 2, &entry);
    check_bound("[2^40] string content", &tfs);

    // Fields claiming 2^60 bytes, at the top and inside a tensor.
    let mut top = vec![0x12];
    top.extend(varint(1 << 60));
    top.extend_from_slice(b"abc");
    check_bound("2^60-byte field", &top);
    let mut inner = Vec::new();
    put_varint_field(&mut inner, 1, 1);
    inner.push(0x1a); // float_val
    inner.extend(varint(1 << 60));
    inner.extend_from_slice(&[0; 8]);
    check_bound("2^60-byte float_val", &eas_request(b"x", &inner));
    let mut ints = vec![0x2a]; // int_val, packed, claims 2^60 bytes
    ints.extend(varint(1 << 60));
    ints.extend_from_slice(&[1, 2, 3]);
    check_bound("2^60-byte int_val", &eas_request(b"x", &ints));
}

#[test]
fn dense_small_elements_stay_within_the_bound() {
    let n = 20_000;
    // Packed dims, one byte each.
    let mut dims = Vec::new();
    for _ in 0..n {
        put_varint(&mut dims, 1);
    }
    let mut shape = Vec::new();
    put_bytes_field(&mut shape, 1, &dims);
    let mut t = Vec::new();
    put_varint_field(&mut t, 1, 1);
    put_bytes_field(&mut t, 2, &shape);
    check_bound("20k dims", &eas_request(b"x", &t));

    // Unpacked floats (5 bytes each), unpacked ints (2 bytes each), empty strings.
    let mut floats = Vec::new();
    let mut ints = Vec::new();
    let mut strings = Vec::new();
    for i in 0..n {
        floats.push(0x1d); // float_val, fixed32
        floats.extend_from_slice(&(i as f32).to_le_bytes());
        put_varint_field(&mut ints, 5, 1);
        put_bytes_field(&mut strings, 6, b"");
    }
    check_bound("unpacked floats", &eas_request(b"x", &floats));
    check_bound("unpacked ints", &eas_request(b"x", &ints));
    check_bound("empty strings", &eas_request(b"x", &strings));

    // Packed varints below and above the size kept as a view.
    for n in [100_000usize, 2_000_000] {
        let mut packed = Vec::new();
        put_varint_field(&mut packed, 1, 3);
        let body: Vec<u8> = (0..n).flat_map(|i| varint((i % 100) as u64)).collect();
        put_bytes_field(&mut packed, 5, &body);
        check_bound("packed int_val", &eas_request(b"x", &packed));
    }

    // Many map entries with distinct names.
    let mut many = Vec::new();
    for i in 0..n {
        let mut entry = Vec::new();
        put_bytes_field(&mut entry, 1, format!("{i}").as_bytes());
        put_len_header(&mut many, 2, entry.len());
        many.extend_from_slice(&entry);
    }
    check_bound("20k entries", &many);

    // Unknown fields inside a tensor, under a short and under a very long name (each
    // `UnknownField` keeps its path cut to `UnknownField::MAX_PATH` characters, so a long
    // name times many unknown fields stays linear in the input).
    let mut unknown = Vec::new();
    put_varint_field(&mut unknown, 1, 1);
    for _ in 0..n {
        put_varint_field(&mut unknown, 20, 0);
    }
    check_bound("unknown fields", &eas_request(b"name", &unknown));
    let long_name = vec![b'n'; 30_000];
    check_bound(
        "unknown fields under a 30 KB name",
        &eas_request(&long_name, &unknown),
    );
}

fn float_request(n: usize) -> TFRequest {
    let mut req = TFRequest::new("serving_default");
    req.add_feed(
        "x",
        &[1, n as i64],
        DType::Float,
        (0..n).map(|i| i as f32).collect::<Vec<_>>(),
    )
    .expect("feed");
    req.add_fetch("y");
    req
}

fn inside(buf: &Bytes, part: &[u8]) -> bool {
    let r = buf.as_ptr_range();
    let p = part.as_ptr_range();
    r.start <= p.start && p.end <= r.end
}

#[test]
fn tensor_data_decoded_from_bytes_is_a_view_of_the_input() {
    let n = 1_000_000;
    let req = float_request(n);
    let eas = Bytes::from(req.to_bytes().unwrap());
    let (peak, r) = measure(|| decode_with(eas.clone(), DecodeOptions::default()));
    let (msg, _) = r.expect("decode");
    match &msg.tensors[0].fields[0].1 {
        Values::F32(Elems::Le(b)) => {
            assert_eq!(b.len(), 4 * n);
            assert!(inside(&eas, b), "float_val is not a view of the input");
        }
        other => panic!("float_val decoded as {other:?}"),
    }
    assert!(
        peak < 16 << 10,
        "decoding 4 MB of floats allocated {peak} bytes"
    );

    let tfs = Bytes::from(req.to_tf_serving_bytes("m").expect("tfs"));
    let (peak, r) = measure(|| decode_with(tfs.clone(), DecodeOptions::default()));
    let (msg, _) = r.expect("decode");
    let c = msg.tensors[0].content.as_ref().expect("tensor_content");
    assert_eq!(c.len(), 4 * n);
    assert!(inside(&tfs, c), "tensor_content is not a view of the input");
    assert!(
        peak < 16 << 10,
        "decoding 4 MB of content allocated {peak} bytes"
    );
}

#[test]
fn large_packed_varints_are_a_view_and_read_back_exactly() {
    let n = 1_000_000;
    let ids: Vec<i32> = (0..n).map(|i| ((i * 7919) % 100_000) as i32 - 50).collect();
    let mut req = TFRequest::new("serving_default");
    req.add_feed("ids", &[1, n as i64], DType::Int32, ids.clone())
        .expect("feed");
    req.add_fetch("y");
    let bytes = Bytes::from(req.to_bytes().unwrap());
    assert!(bytes.len() > 1 << 20);
    let (peak, r) = measure(|| decode_with(bytes.clone(), DecodeOptions::default()));
    let (msg, _) = r.expect("decode");
    assert!(
        peak < 16 << 10,
        "decoding 1M varints allocated {peak} bytes"
    );
    let Values::I32(v) = &msg.tensors[0].fields[0].1 else {
        panic!("int_val: {:?}", msg.tensors[0].fields[0].1)
    };
    assert!(matches!(v, Ints::Packed(p) if inside(&bytes, p.bytes())));
    assert_eq!(v.len(), n);
    assert_eq!(v.get(n - 1), Some(ids[n - 1]));
    assert_eq!(v.get(300_001), Some(ids[300_001]));
    assert_eq!(v.to_vec(), ids);
    let e = msg.tensors[0].elements(msg.wire);
    assert_eq!(e.stored, n);
    assert_eq!(
        e.preview(2),
        vec![
            tfreq::Scalar::I64(ids[0] as i64),
            tfreq::Scalar::I64(ids[1] as i64)
        ]
    );
    // Re-encoding the view gives the same bytes.
    let again = tfreq::encode(&msg, msg.wire, tfreq::TfsEncoding::AsIs).expect("encode");
    assert_eq!(again, bytes);
}

#[test]
fn large_typed_int_val_of_tf_serving_is_a_view_too() {
    let n = 600_000;
    let ids: Vec<i64> = (0..n).map(|i| (i as i64 - 300_000) * 1_000_003).collect();
    let mut req = TFRequest::for_wire("serving_default", tfreq::WireFormat::TfServing);
    req.add_feed("ids", &[n as i64], DType::Int64, ids.clone())
        .expect("feed");
    let spec = tfreq::ModelSpec {
        name: "m".into(),
        ..Default::default()
    };
    let bytes = Bytes::from(
        req.to_tf_serving_bytes_with(&spec, tfreq::TfsEncoding::Typed)
            .expect("tfs"),
    );
    let (msg, _) = decode_with(bytes.clone(), DecodeOptions::default()).expect("decode");
    let Values::I64(v) = &msg.tensors[0].fields[0].1 else {
        panic!("int64_val: {:?}", msg.tensors[0].fields[0].1)
    };
    assert!(matches!(v, Ints::Packed(_)));
    assert_eq!(v.to_vec(), ids);
    // Converted to EAS and back to TF Serving content, the values survive.
    let eas = tfreq::encode(&msg, tfreq::WireFormat::Eas, tfreq::TfsEncoding::Python).expect("eas");
    let back = decode(&eas).expect("decode eas");
    let content = tfreq::encode(
        &back,
        tfreq::WireFormat::TfServing,
        tfreq::TfsEncoding::Content,
    )
    .expect("content");
    let again = decode(&content).expect("decode content");
    let e = again.tensors[0].elements(again.wire);
    assert_eq!(e.source, tfreq::Source::Content);
    assert_eq!(e.stored_get(n - 1), Some(tfreq::Scalar::I64(ids[n - 1])));
}
