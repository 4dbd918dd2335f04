//! Adversarial inputs built from real files in tests/data (made by eas-prediction and
//! TensorFlow): every truncation point, single-bit flips, a request valid in both wire
//! formats, unknown fields and enum values, duplicate map keys, huge varints and claimed
//! sizes, negative dims, tensor_content of the wrong length, bad UTF-8. Each error must
//! name the byte offset and the field; nothing may panic or allocate what the bytes
//! merely claim.

use crate::alloc::largest_allocation;
use bytes::Bytes;
use prost::Message as _;
use tfreq::DecodeErrorKind;
use tfreq::analysis::lint;
use tfreq::wire::RECURSION_LIMIT;
use tfreq::{
    DecodeOptions, Error, ErrorDetail, Fill, Kind, Message, WireFormat, decode_as, decode_with,
};

// ---- Protobuf bytes by hand, to splice real files.

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

fn tag(n: u32, wt: u8) -> Vec<u8> {
    varint(((n as u64) << 3) | wt as u64)
}

fn len_field(n: u32, body: &[u8]) -> Vec<u8> {
    let mut out = tag(n, 2);
    out.extend(varint(body.len() as u64));
    out.extend_from_slice(body);
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn eas(file: &str) -> Vec<u8> {
    crate::common::read("eas", file)
}

fn tfs(file: &str) -> Vec<u8> {
    crate::common::read("tfs", file)
}

fn forced(bytes: &[u8], wire: WireFormat) -> Result<Message, tfreq::DecodeError> {
    decode_as(bytes, wire, Kind::Request)
}

fn codes(msg: &Message) -> Vec<&'static str> {
    lint(msg).iter().map(|f| f.code.as_str()).collect()
}

/// Renders every way the CLI does (nothing may panic).
fn render_all(bytes: &[u8], msg: &Message) {
    let problems = lint(msg);
    let mut sink = std::io::sink();
    tfreq::render::write_summary(&mut sink, "f", msg, &problems, Default::default()).unwrap();
    tfreq::render::write_message(
        &mut sink,
        "f",
        msg,
        &problems,
        tfreq::render::ValuesMode::All,
    )
    .unwrap();
    let _ = tfreq::render::write_text(
        &mut sink,
        bytes::Bytes::copy_from_slice(bytes),
        tfreq::wire::message_name(msg.wire, msg.kind),
    );
}

// ---- Truncations and bit flips of real files.

/// Every prefix decodes or fails with an offset inside the prefix; a failure without a
/// field path can only be a tag cut in two at the top level.
fn every_truncation(bytes: &[u8], wire: WireFormat) {
    for cut in 0..bytes.len() {
        let prefix = &bytes[..cut];
        match forced(prefix, wire) {
            Ok(_) => {}
            Err(e) => {
                assert!(e.offset() <= cut, "cut {cut}: {e}");
                let s = e.to_string();
                assert!(s.contains(&format!("at byte {}", e.offset())), "{s}");
                if e.path().is_empty() {
                    assert!(
                        matches!(e.kind(), DecodeErrorKind::Truncated { what: "varint", .. }),
                        "cut {cut}: no field named in {s}"
                    );
                } else {
                    assert!(s.contains(&format!("(in {})", e.path())), "{s}");
                }
            }
        }
        // Detection and every renderer, on a sample of the cuts.
        if cut % 61 == 0 {
            tfreq::fuzzing::decode_auto(prefix);
            tfreq::fuzzing::text_render(prefix);
        }
    }
}

#[test]
fn every_truncation_of_the_eas_seed_warm_up() {
    every_truncation(&eas("seed_warm_up.bin"), WireFormat::Eas);
}

#[test]
fn every_truncation_of_the_tf_serving_seed_request() {
    every_truncation(&tfs("seed_content.bin"), WireFormat::TfServing);
}

#[test]
fn a_cut_inside_a_tensor_names_the_entry_that_does_not_fit() {
    // seed_warm_up.bin cut in the middle of its first input: the entry claims more
    // bytes than are left, found where its length ends.
    let bytes = eas("seed_warm_up.bin");
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    let first = &msg.tensors[0];
    let cut = first.offset + 40;
    let e = forced(&bytes[..cut], WireFormat::Eas).unwrap_err();
    assert_eq!(e.path(), "inputs", "{e}");
    assert!(matches!(e.kind(), DecodeErrorKind::Truncated { .. }), "{e}");
    assert!(
        e.offset() > first.offset && e.offset() <= first.offset + 4,
        "{e}"
    );
}

#[test]
fn single_bit_flips_of_the_spec_vectors() {
    for (bytes, wire) in [
        (eas("spec_vector.bin"), WireFormat::Eas),
        (tfs("spec_vector.bin"), WireFormat::TfServing),
    ] {
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            if let Err(e) = forced(&b, wire) {
                assert!(e.offset() <= b.len(), "bit {bit}: {e}");
                assert!(e.to_string().contains("at byte"), "bit {bit}: {e}");
            }
            // The fuzz targets' invariants: no panic, re-encoding is faithful, printed
            // text parses back, size limits hold.
            tfreq::fuzzing::decode_auto(&b);
            tfreq::fuzzing::encode_roundtrip(&b);
            tfreq::fuzzing::text_render(&b);
            tfreq::fuzzing::decode_tensor(&b);
        }
    }
}

// ---- Detection.

#[test]
fn a_request_that_reads_the_same_in_both_formats_decodes() {
    // eas-prediction's TFRequest with only add_fetch: bytes 1a 01 79, output_filter in
    // both formats. Both readings mean the same request, so it decodes (as EAS), and
    // detection says the readings agree.
    let bytes = eas("fetch_only.bin");
    let (m, det) = tfreq::decode_with(bytes::Bytes::from(bytes.clone()), Default::default())
        .expect("both readings agree");
    assert!(det.agree);
    assert_eq!(
        (m.wire, m.fetches.clone()),
        (WireFormat::Eas, vec!["y".to_string()])
    );
    // Forcing either format decodes it.
    assert_eq!(forced(&bytes, WireFormat::Eas).unwrap().fetches, ["y"]);
    assert_eq!(
        forced(&bytes, WireFormat::TfServing).unwrap().fetches,
        ["y"]
    );
}

#[test]
fn a_request_whose_readings_differ_is_reported_ambiguous() {
    // 0a 00: an empty EAS signature_name, or a TF Serving model_spec that is present
    // (and empty). The readings differ, so detection does not guess.
    match tfreq::decode(&[0x0a, 0x00]).map_err(Error::into_detail) {
        Err(ErrorDetail::Ambiguous(why)) => {
            assert!(why.contains("EAS request"), "{why}");
            assert!(why.contains("TF Serving request"), "{why}");
            let shown = ErrorDetail::Ambiguous(why).to_string();
            assert!(!shown.contains('\n'), "one line: {shown}");
            // The option that settles it is the command line's to name, not the library's.
            assert!(!shown.contains("--"), "{shown}");
        }
        other => panic!("guessed instead of reporting ambiguity: {other:?}"),
    }
}

#[test]
fn bytes_of_no_format_say_why_for_each_on_one_line() {
    // The EAS spec vector with its first field claiming 127 bytes: field 1 is a string
    // or a message in every candidate, and none has the bytes.
    let mut b = eas("spec_vector.bin");
    b[1] = 0x7f;
    let e = tfreq::decode(&b).unwrap_err();
    let s = e.to_string();
    assert!(matches!(e.detail(), ErrorDetail::Unrecognised(_)), "{s}");
    assert_eq!(e.classify(), tfreq::Category::Unrecognised);
    assert!(!s.contains('\n'), "{s}");
    assert!(s.contains("as EAS request: truncated"), "{s}");
    assert!(s.contains("at byte 2 (in signature_name)"), "{s}");
    assert!(s.contains("at byte 2 (in model_spec)"), "{s}");
}

// ---- Unknown fields, unknown enum values, duplicate keys.

#[test]
fn unknown_fields_are_kept_located_and_reported() {
    let real = eas("spec_vector.bin");
    let req = tfreq::wire::eas::PredictRequest::decode(&real[..]).unwrap();
    // Field 12 inside the tensor, field 9 at the top level.
    let mut value = req.inputs["x"].encode_to_vec();
    value.extend(len_field(12, b"hi"));
    let entry = cat(&[&len_field(1, b"x"), &len_field(2, &value)]);
    let bytes = cat(&[
        &len_field(1, req.signature_name.as_bytes()),
        &len_field(2, &entry),
        &len_field(3, b"y"),
        &tag(9, 0),
        &[1],
    ]);
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    assert_eq!(msg.unknown.len(), 1);
    assert_eq!(
        (msg.unknown[0].number, msg.unknown[0].offset),
        (9, bytes.len() - 2)
    );
    let t = &msg.tensors[0];
    assert_eq!(t.unknown.len(), 1);
    assert_eq!(t.unknown[0].number, 12);
    assert_eq!(t.unknown[0].path, "inputs[\"x\"]");
    let found: Vec<String> = lint(&msg)
        .into_iter()
        .filter(|f| f.code == "UNKNOWN_FIELD")
        .map(|f| f.message)
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .any(|m| m.contains("field 12") && m.contains("inputs[\"x\"]"))
    );
    assert!(
        found
            .iter()
            .any(|m| m.contains(&format!("at byte {}", bytes.len() - 2)))
    );
    // The values still read, and re-encoding keeps the unknown fields where they were.
    assert_eq!(t.elements(msg.wire).fill, Fill::Exact);
    tfreq::fuzzing::encode_roundtrip(&bytes);
    render_all(&bytes, &msg);
}

#[test]
fn unknown_dtype_numbers_are_kept_and_reported() {
    let mut req = tfreq::wire::eas::PredictRequest::decode(&eas("spec_vector.bin")[..]).unwrap();
    req.inputs.get_mut("x").unwrap().dtype = 77;
    let bytes = req.encode_to_vec();
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    assert_eq!(msg.tensors[0].dtype, tfreq::DTypeCode(77));
    let bad: Vec<_> = lint(&msg)
        .into_iter()
        .filter(|f| f.code == "BAD_DTYPE")
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].name.as_deref(), Some("x"));
    let text = tfreq::render::to_text(&bytes, "tfreq.eas.PredictRequest").unwrap();
    assert!(text.contains("dtype: 77"), "{text}");

    let mut req = tfreq::wire::tfs::PredictRequest::decode(&tfs("spec_vector.bin")[..]).unwrap();
    req.inputs.get_mut("x").unwrap().dtype = 250;
    let msg = forced(&req.encode_to_vec(), WireFormat::TfServing).unwrap();
    assert_eq!(msg.tensors[0].dtype, tfreq::DTypeCode(250));
    assert!(codes(&msg).contains(&"BAD_DTYPE"));
}

#[test]
fn duplicate_map_keys_last_wins_and_is_reported() {
    // spec_vector.bin (x: [1, 2]) followed by dup_feed.bin's entry (x: [2, 2]): parsing
    // concatenated messages merges them, as protobuf does.
    let first = eas("spec_vector.bin");
    let second = eas("dup_feed.bin");
    let entry = &second[17..17 + 2 + 0x17];
    assert_eq!(entry[0], 0x12);
    let bytes = cat(&[&first, entry]);
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    assert_eq!(msg.tensors.len(), 1);
    assert_eq!(msg.tensors[0].shape.sizes(), [2, 2], "the last entry wins");
    assert_eq!(msg.duplicate_keys, [("x".to_string(), first.len())]);
    let dup: Vec<_> = lint(&msg)
        .into_iter()
        .filter(|f| f.code == "DUPLICATE_KEY")
        .collect();
    assert_eq!(dup.len(), 1);
    assert_eq!(dup[0].name.as_deref(), Some("x"));
    assert!(dup[0].message.contains(&format!("at byte {}", first.len())));
    tfreq::fuzzing::encode_roundtrip(&bytes);
}

// ---- Huge varints, huge claims, negative dims, bad content.

#[test]
fn an_overlong_varint_names_the_field_and_offset() {
    // The EAS spec vector with its dtype (08 01) written as an 11-byte varint.
    let real = eas("spec_vector.bin");
    let req = tfreq::wire::eas::PredictRequest::decode(&real[..]).unwrap();
    let body = req.inputs["x"].encode_to_vec();
    assert_eq!(&body[..2], &[0x08, 0x01]);
    let bad = cat(&[&[0x08], &[0xff; 10], &[0x01], &body[2..]]);
    let entry = cat(&[&len_field(1, b"x"), &len_field(2, &bad)]);
    let head = len_field(1, req.signature_name.as_bytes());
    let bytes = cat(&[&head, &len_field(2, &entry)]);
    let e = forced(&bytes, WireFormat::Eas).unwrap_err();
    assert_eq!(e.kind(), &DecodeErrorKind::BadVarint, "{e}");
    assert_eq!(e.path(), "inputs[\"x\"].dtype", "{e}");
    // After the signature, the entry's tag and length, the key (3 bytes), the value's
    // tag and length, then the dtype tag: the varint starts there.
    assert_eq!(e.offset(), head.len() + 2 + 3 + 2 + 1, "{e}");
}

#[test]
fn a_bad_varint_in_packed_dims_names_the_dim() {
    // spec_vector.bin's array_shape is 0a 02 01 02: make the second dim a cut varint.
    let mut b = eas("spec_vector.bin");
    assert_eq!(&b[0x1c..0x20], &[0x0a, 0x02, 0x01, 0x02]);
    b[0x1f] = 0x80;
    let e = forced(&b, WireFormat::Eas).unwrap_err();
    assert_eq!(e.path(), "inputs[\"x\"].array_shape.dim[1]", "{e}");
    assert_eq!(e.offset(), 0x1f, "{e}");
    assert!(matches!(
        e.kind(),
        DecodeErrorKind::Truncated { what: "varint", .. }
    ));
    let s = e.to_string();
    assert!(
        s.contains("at byte 31 (in inputs[\"x\"].array_shape.dim[1])"),
        "{s}"
    );
}

#[test]
fn a_bad_tf_serving_dim_names_the_dim() {
    // tfs/spec_vector.bin's second dim is 12 02 08 02: claim 3 bytes instead of 2.
    let mut b = tfs("spec_vector.bin");
    let at = b
        .windows(4)
        .rposition(|w| w == [0x12, 0x02, 0x08, 0x02])
        .unwrap();
    b[at + 1] = 0x03;
    let e = forced(&b, WireFormat::TfServing).unwrap_err();
    assert_eq!(e.path(), "inputs[\"x\"].tensor_shape.dim", "{e}");
    assert!(matches!(e.kind(), DecodeErrorKind::Truncated { .. }), "{e}");
    // Inside the dim: its size's varint cut.
    let mut b = tfs("spec_vector.bin");
    b[at + 3] = 0x82;
    let e = forced(&b, WireFormat::TfServing).unwrap_err();
    assert_eq!(e.path(), "inputs[\"x\"].tensor_shape.dim[1]", "{e}");
    assert_eq!(e.offset(), at + 3, "{e}");
}

#[test]
fn a_huge_claimed_length_allocates_nothing() {
    // The EAS spec vector whose input entry claims 2^60 bytes.
    let real = eas("spec_vector.bin");
    let head = &real[..0x11];
    let bytes = cat(&[head, &tag(2, 2), &varint(1 << 60), &real[0x13..]]);
    let mut err = None;
    let largest = largest_allocation(|| {
        err = forced(&bytes, WireFormat::Eas).err();
        let _ = tfreq::decode(&bytes);
    });
    let e = err.unwrap();
    assert!(matches!(e.kind(), DecodeErrorKind::Truncated { needed, .. } if *needed == 1 << 60));
    assert_eq!(e.path(), "inputs");
    assert_eq!(e.offset(), 0x11 + 1 + 9, "{e}");
    assert!(largest < 64 << 10, "allocated {largest} bytes");
}

#[test]
fn a_tiny_file_claiming_a_huge_tensor_allocates_nothing_large() {
    // 20-odd bytes: inputs { key: "x" value { dtype: DT_FLOAT array_shape { dim: 2^40 }
    // float_val: 1.0 } }, shaped like spec_vector.bin.
    let shape = len_field(1, &varint(1 << 40));
    let value = cat(&[
        &[0x08, 0x01],
        &len_field(2, &shape),
        &len_field(3, &1f32.to_le_bytes()),
    ]);
    let bytes = len_field(2, &cat(&[&len_field(1, b"x"), &len_field(2, &value)]));
    assert_eq!(bytes.len(), 25);
    let largest = largest_allocation(|| {
        let msg = forced(&bytes, WireFormat::Eas).unwrap();
        let e = msg.tensors[0].elements(msg.wire);
        assert_eq!(e.expected, Some(1 << 40));
        assert_eq!(e.fill, Fill::RepeatLast);
        assert_eq!(e.get((1 << 40) - 1), Some(tfreq::Scalar::F32(1.0)));
        assert!(codes(&msg).contains(&"VALUES_REPEAT_LAST"));
        render_all(&bytes, &msg);
        tfreq::fuzzing::encode_roundtrip(&bytes);
    });
    assert!(largest < 64 << 10, "allocated {largest} bytes");

    // TF Serving: [2^40] float with 4 bytes of tensor_content, and a [2^40] string
    // tensor with 3 bytes of content: both BAD_CONTENT, nothing large allocated.
    for (dtype, content) in [(1u8, &[0u8, 0, 0x80, 0x3f][..]), (7, &[1, 2, b'a'][..])] {
        let dim = len_field(2, &cat(&[&[0x08], &varint(1 << 40)]));
        let value = cat(&[&[0x08, dtype], &len_field(2, &dim), &len_field(4, content)]);
        let bytes = len_field(2, &cat(&[&len_field(1, b"x"), &len_field(2, &value)]));
        let largest = largest_allocation(|| {
            let msg = forced(&bytes, WireFormat::TfServing).unwrap();
            assert_eq!(msg.tensors[0].elements(msg.wire).fill, Fill::BadContent);
            assert!(codes(&msg).contains(&"BAD_CONTENT"));
            render_all(&bytes, &msg);
            let _ = tfreq::encode(&msg, WireFormat::Eas, tfreq::TfsEncoding::Python);
        });
        assert!(
            largest < 64 << 10,
            "dtype {dtype}: allocated {largest} bytes"
        );
    }
}

#[test]
fn shapes_whose_product_overflows_are_bad_shapes() {
    let shape = len_field(1, &cat(&[&varint(1 << 40), &varint(1 << 40)]));
    let value = cat(&[&[0x08, 0x01], &len_field(2, &shape)]);
    let bytes = len_field(2, &cat(&[&len_field(1, b"x"), &len_field(2, &value)]));
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    assert_eq!(msg.tensors[0].elements(msg.wire).fill, Fill::BadShape);
    assert!(codes(&msg).contains(&"BAD_SHAPE"));
}

#[test]
fn negative_dims_are_bad_shapes() {
    let mut req = tfreq::wire::eas::PredictRequest::decode(&eas("spec_vector.bin")[..]).unwrap();
    req.inputs
        .get_mut("x")
        .unwrap()
        .array_shape
        .as_mut()
        .unwrap()
        .dim[0] = -1;
    let bytes = req.encode_to_vec();
    let msg = forced(&bytes, WireFormat::Eas).unwrap();
    assert_eq!(msg.tensors[0].shape.sizes(), [-1, 2]);
    assert_eq!(msg.tensors[0].elements(msg.wire).fill, Fill::BadShape);
    assert!(codes(&msg).contains(&"BAD_SHAPE"));
    render_all(&bytes, &msg);
    tfreq::fuzzing::encode_roundtrip(&bytes);

    let mut req = tfreq::wire::tfs::PredictRequest::decode(&tfs("spec_vector.bin")[..]).unwrap();
    req.inputs
        .get_mut("x")
        .unwrap()
        .tensor_shape
        .as_mut()
        .unwrap()
        .dim[1]
        .size = -7;
    let bytes = req.encode_to_vec();
    let msg = forced(&bytes, WireFormat::TfServing).unwrap();
    assert_eq!(msg.tensors[0].shape.sizes(), [1, -7]);
    assert!(codes(&msg).contains(&"BAD_SHAPE"));
    tfreq::fuzzing::encode_roundtrip(&bytes);
}

#[test]
fn tensor_content_of_the_wrong_length_is_bad_content() {
    let mut req = tfreq::wire::tfs::PredictRequest::decode(&tfs("seed_content.bin")[..]).unwrap();
    let images = req.inputs.get_mut("images").unwrap();
    images.tensor_content = images
        .tensor_content
        .slice(..images.tensor_content.len() - 1);
    let bytes = req.encode_to_vec();
    let msg = forced(&bytes, WireFormat::TfServing).unwrap();
    let t = msg.tensor("images").unwrap();
    assert_eq!(t.elements(msg.wire).fill, Fill::BadContent);
    let bad: Vec<_> = lint(&msg)
        .into_iter()
        .filter(|f| f.code == "BAD_CONTENT")
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].name.as_deref(), Some("images"));
    assert!(bad[0].message.contains("3135 bytes"), "{}", bad[0].message);
    // Every other input is untouched.
    for name in ["sentence1", "sentence2", "y", "keep_rate"] {
        let t = msg.tensor(name).unwrap();
        assert_eq!(t.elements(msg.wire).fill, Fill::Exact, "{name}");
    }
    render_all(&bytes, &msg);
    // Converting refuses what TensorFlow would refuse, with the name.
    let e = tfreq::encode(&msg, WireFormat::Eas, tfreq::TfsEncoding::Python).unwrap_err();
    assert!(e.to_string().contains("images"), "{e}");
}

#[test]
fn packed_floats_of_the_wrong_length_name_the_field() {
    // spec_vector.bin's float_val (1a 08 + 8 bytes) cut to 7 bytes.
    let req = tfreq::wire::eas::PredictRequest::decode(&eas("spec_vector.bin")[..]).unwrap();
    let body = req.inputs["x"].encode_to_vec();
    let at = body.len() - 10;
    assert_eq!(&body[at..at + 2], &[0x1a, 0x08]);
    let bad = cat(&[&body[..at], &[0x1a, 0x07], &body[at + 2..at + 9]]);
    let head = len_field(1, req.signature_name.as_bytes());
    let entry = cat(&[&len_field(1, b"x"), &len_field(2, &bad)]);
    let bytes = cat(&[&head, &len_field(2, &entry)]);
    let e = forced(&bytes, WireFormat::Eas).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            DecodeErrorKind::PackedLength {
                len: 7,
                elem: 4,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.path(), "inputs[\"x\"].float_val", "{e}");
    assert_eq!(e.offset(), head.len() + 2 + 3 + 2 + at + 2, "{e}");
}

// ---- Bad UTF-8 where a string is required.

#[test]
fn bad_utf8_names_the_string_field() {
    let b = eas("spec_vector.bin");
    // (byte to spoil, the path the error must name)
    let cases = [
        (2, "signature_name"),
        (0x15, "inputs[#0].key"),
        (b.len() - 1, "output_filter[0]"),
    ];
    for (at, path) in cases {
        let mut bad = b.clone();
        bad[at] = 0xff;
        let e = forced(&bad, WireFormat::Eas).unwrap_err();
        assert_eq!(
            e.kind(),
            &DecodeErrorKind::InvalidUtf8 { byte: 0xff },
            "{e}"
        );
        assert!(e.to_string().contains("(byte 0xff)"), "{e}");
        assert_eq!((e.offset(), e.path().as_str()), (at, path), "{e}");
    }
    let b = tfs("spec_vector.bin");
    for (at, path) in [(4, "model_spec.name"), (11, "model_spec.signature_name")] {
        let mut bad = b.clone();
        bad[at] = 0xc0;
        let e = forced(&bad, WireFormat::TfServing).unwrap_err();
        assert_eq!(
            e.kind(),
            &DecodeErrorKind::InvalidUtf8 { byte: 0xc0 },
            "{e}"
        );
        assert_eq!((e.offset(), e.path().as_str()), (at, path), "{e}");
    }
}

// ---- Limits: whole-input size, nesting depth.

#[test]
fn max_size_refuses_larger_inputs() {
    let bytes = Bytes::from(eas("seed_warm_up.bin"));
    let n = bytes.len() as u64;
    let opts = |max| DecodeOptions {
        max_size: Some(max),
        ..DecodeOptions::default()
    };
    assert!(decode_with(bytes.clone(), opts(n)).is_ok());
    match decode_with(bytes.clone(), opts(n - 1)).map_err(Error::into_detail) {
        Err(ErrorDetail::Decode { source, .. }) => {
            assert_eq!(
                source.kind(),
                &DecodeErrorKind::TooLarge {
                    size: n,
                    limit: n - 1
                }
            );
            assert!(source.to_string().contains("over the limit"), "{source}");
        }
        other => panic!("not refused: {other:?}"),
    }
}

/// An EAS request whose unknown field 15 is `depth` nested groups.
fn nested_groups(depth: usize, closed: bool) -> Vec<u8> {
    let mut b = eas("spec_vector.bin");
    for _ in 0..depth {
        b.extend(tag(15, 3));
    }
    if closed {
        for _ in 0..depth {
            b.extend(tag(15, 4));
        }
    }
    b
}

#[test]
fn deep_groups_are_refused_not_recursed() {
    let ok = nested_groups(RECURSION_LIMIT / 2, true);
    let msg = forced(&ok, WireFormat::Eas).unwrap();
    assert_eq!(msg.unknown.len(), 1);
    assert!(codes(&msg).contains(&"UNKNOWN_FIELD"));
    tfreq::fuzzing::encode_roundtrip(&ok);

    let deep = nested_groups(RECURSION_LIMIT * 2, true);
    let e = forced(&deep, WireFormat::Eas).unwrap_err();
    assert_eq!(e.kind(), &DecodeErrorKind::TooDeep(RECURSION_LIMIT), "{e}");
    assert_eq!(e.path(), "field 15", "{e}");
    let first = eas("spec_vector.bin").len();
    assert_eq!(e.offset(), first + RECURSION_LIMIT, "{e}");
    // The text printer (prost-reflect) refuses it too, without overflowing the stack.
    let very = nested_groups(100_000, false);
    assert!(tfreq::render::to_text(&very, "tfreq.eas.PredictRequest").is_err());
    tfreq::fuzzing::decode_auto(&very);
}

#[test]
fn recursive_variant_tensors_are_bounded() {
    // TensorProto.variant_val → VariantTensorDataProto.tensors → TensorProto ... is the
    // one recursive path of the schema: 2000 levels, from the TF Serving spec vector.
    let real = tfreq::wire::tfs::PredictRequest::decode(&tfs("spec_vector.bin")[..]).unwrap();
    let mut t = real.inputs["x"].encode_to_vec();
    for _ in 0..2000 {
        t = cat(&[&[0x08, 21], &len_field(15, &len_field(3, &t))]);
    }
    // Our decoder keeps variant values raw: no recursion at all.
    let tensor = tfreq::decode_tensor(Bytes::from(t.clone()), WireFormat::TfServing).unwrap();
    assert_eq!(tensor.dtype, tfreq::DTypeCode(21));
    let entry = cat(&[&len_field(1, b"v"), &len_field(2, &t)]);
    let bytes = cat(&[&len_field(2, &entry)]);
    let msg = forced(&bytes, WireFormat::TfServing).unwrap();
    render_all(&bytes, &msg);
    // The text printer's decoder (prost-reflect) stops at its recursion limit.
    let e = tfreq::render::to_text(&bytes, "tensorflow.serving.PredictRequest");
    assert!(e.is_err(), "2000 levels printed");
    tfreq::fuzzing::text_render(&bytes);
}
