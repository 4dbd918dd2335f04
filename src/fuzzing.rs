//! The bodies of the fuzz targets in `fuzz/fuzz_targets/`, shared with the stable test
//! `tests/library/fuzz_corpus.rs` that replays the committed corpus, so `cargo test` re-runs
//! everything fuzzing found.
//!
//! Each function takes arbitrary bytes and either returns or panics. A panic is a bug:
//! either the library panicked on input, or an invariant the target checks (re-encoding
//! a decoded message decodes to the same message, printed text parses back) failed.
//! Not part of the stable API.

use std::io;

use bytes::Bytes;

use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::analysis::lint;
use crate::analysis::{DiffOptions, diff};
use crate::decode::{
    DecodeOptions, decode_as, decode_message, decode_tensor as decode_one_tensor, decode_with,
};
use crate::encode::{TfsEncoding, encode};
use crate::formats::{self, Content, InputOptions, rest_json, savedmodel, text_format, tfrecord};
use crate::model::{Kind, Message, Tensor, WireFormat};
use crate::render;
use crate::signature::ModelSignatures;

/// Every (wire format, kind) pair.
pub const CANDIDATES: [(WireFormat, Kind); 4] = [
    (WireFormat::Eas, Kind::Request),
    (WireFormat::Eas, Kind::Response),
    (WireFormat::TfServing, Kind::Request),
    (WireFormat::TfServing, Kind::Response),
];

/// The name of every fuzz target, as in `fuzz/Cargo.toml`.
pub const TARGETS: [&str; 15] = [
    "decode_auto",
    "decode_eas_request",
    "decode_tfs_request",
    "decode_responses",
    "decode_tensor",
    "text_render",
    "encode_roundtrip",
    "diff_pair",
    "containers",
    "saved_model",
    "model_metadata",
    "rest_json_build",
    "text_format_build",
    "text_detect",
    "net_response",
];

/// Runs the named target's body on `data`; `false` when no target has that name.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "decode_auto" => decode_auto(data),
        "decode_eas_request" => decode_eas_request(data),
        "decode_tfs_request" => decode_tfs_request(data),
        "decode_responses" => decode_responses(data),
        "decode_tensor" => decode_tensor(data),
        "text_render" => text_render(data),
        "encode_roundtrip" => encode_roundtrip(data),
        "diff_pair" => diff_pair(data),
        "containers" => containers(data),
        "saved_model" => saved_model(data),
        "model_metadata" => model_metadata(data),
        "rest_json_build" => rest_json_build(data),
        "text_format_build" => text_format_build(data),
        "text_detect" => text_detect(data),
        "net_response" => net_response(data),
        _ => return false,
    }
    true
}

/// Reads every element of every tensor and every finding, as the printers would.
fn exercise(msg: &Message) {
    let _ = lint(msg);
    let _ = ExecutorKey::of(msg);
    let _ = ShapeKey::of(msg);
    if msg.method.takes_examples() {
        let mut sink = Vec::new();
        let _ = render::human::write_summary(&mut sink, "x", msg, &[], Default::default());
        let _ = render::report::write_github_examples(&mut sink, "x", "x", msg);
        let _ =
            render::json::write_message(&mut sink, "x", msg, &[], render::json::ValuesMode::All);
        // What the encoder writes reads back as itself.
        if let Ok(b) = crate::encode(msg, WireFormat::TfServing, crate::TfsEncoding::AsIs) {
            let back = crate::decode::decode_request(Bytes::from(b.clone()), msg.method)
                .expect("an encoded tf.Example request decodes");
            let again = crate::encode(&back, WireFormat::TfServing, crate::TfsEncoding::AsIs)
                .expect("a decoded tf.Example request without unknown fields encodes");
            assert_eq!(again, b, "tf.Example request re-encoding");
        }
    }
    for t in &msg.tensors {
        exercise_tensor(t, msg.wire);
    }
}

fn exercise_tensor(t: &Tensor, wire: WireFormat) {
    let e = t.elements(wire);
    for i in 0..e.stored {
        let _ = e.stored_get(i);
    }
    // Broadcast reads: the first, the last and one past the end of what is stored.
    if let Some(n) = e.expected {
        for i in [
            0,
            e.stored,
            n.saturating_sub(1).min(usize::MAX as u64) as usize,
        ] {
            let _ = e.get(i);
        }
    }
    let _ = e.preview(render::human::PREVIEW);
}

/// Decoding with detection (`proto/eas/tf_predict.proto`), as `tfreq inspect` does.
pub fn decode_auto(data: &[u8]) {
    if let Ok((msg, det)) = decode_with(Bytes::copy_from_slice(data), DecodeOptions::default()) {
        let _ = det.describe();
        exercise(&msg);
    }
    // A size limit below the input must refuse it, never decode it.
    let limit = (data.len() as u64).saturating_sub(1);
    let opts = DecodeOptions {
        max_size: Some(limit),
        ..DecodeOptions::default()
    };
    assert!(
        data.is_empty() || decode_with(Bytes::copy_from_slice(data), opts).is_err(),
        "max_size {limit} did not refuse {} bytes",
        data.len()
    );
    // `decode_message` decides as detection does, with every option.
    same_as_detection(data, opts);
    for wire in [None, Some(WireFormat::Eas), Some(WireFormat::TfServing)] {
        for kind in [None, Some(Kind::Request), Some(Kind::Response)] {
            let opts = DecodeOptions {
                wire,
                kind,
                ..DecodeOptions::default()
            };
            same_as_detection(data, opts);
        }
    }
}

/// `decode_message` gives the message (or the error) `decode_with` gives.
pub fn same_as_detection(data: &[u8], opts: DecodeOptions) {
    let b = Bytes::copy_from_slice(data);
    let fast = decode_message(b.clone(), opts)
        .map(|m| format!("{m:?}"))
        .map_err(|e| e.to_string());
    let full = decode_with(b, opts)
        .map(|(m, _)| format!("{m:?}"))
        .map_err(|e| e.to_string());
    assert!(
        fast == full,
        "decode_message and decode_with differ on {} bytes with {opts:?}:\n{fast:?}\n{full:?}",
        data.len()
    );
}

fn forced(data: &[u8], wire: WireFormat, kind: Kind) {
    match decode_as(data, wire, kind) {
        Ok(msg) => exercise(&msg),
        Err(e) => {
            // The error must point inside the input (or at its end).
            assert!(
                e.offset() <= data.len(),
                "{e} past the end of {}",
                data.len()
            );
            let _ = e.to_string();
        }
    }
}

/// An EAS `PredictRequest`, forced.
pub fn decode_eas_request(data: &[u8]) {
    forced(data, WireFormat::Eas, Kind::Request);
}

/// A TF Serving `PredictRequest`, forced.
pub fn decode_tfs_request(data: &[u8]) {
    forced(data, WireFormat::TfServing, Kind::Request);
}

/// Both `PredictResponse`s, forced.
pub fn decode_responses(data: &[u8]) {
    forced(data, WireFormat::Eas, Kind::Response);
    forced(data, WireFormat::TfServing, Kind::Response);
}

/// One `TensorProto` / `ArrayProto` on its own (`tf.io.serialize_tensor` output).
pub fn decode_tensor(data: &[u8]) {
    for wire in [WireFormat::Eas, WireFormat::TfServing] {
        match decode_one_tensor(Bytes::copy_from_slice(data), wire) {
            Ok(t) => exercise_tensor(&t, wire),
            Err(e) => assert!(e.offset() <= data.len(), "{e}"),
        }
    }
}

/// Every renderer: the Python text printer over prost-reflect (whose output must parse
/// back as text format), the human summary and the JSON document with every value.
pub fn text_render(data: &[u8]) {
    for (wire, kind) in CANDIDATES {
        let name = crate::wire::message_name(wire, kind);
        let mut text = Vec::new();
        let printed = render::text::write_text(&mut text, Bytes::copy_from_slice(data), name);
        let desc = crate::wire::pool()
            .get_message_by_name(name)
            .expect("descriptor of our own protos");
        if printed.is_ok() {
            let text = String::from_utf8(text.clone()).expect("text format output is UTF-8");
            if let Err(e) = prost_reflect::DynamicMessage::parse_text_format(desc.clone(), &text) {
                panic!("printed text does not parse back: {e}\n{text}");
            }
        }
        // Where tfreq's strict decoder reads the bytes with no unknown field and
        // prost-reflect reads them too, the streaming printer agrees with the printer
        // over prost-reflect's message, byte for byte. (prost-reflect reads a known field
        // of the wrong wire type, and some malformed groups, otherwise than protobuf's
        // own parsers, which skip the one and refuse the other; so does the printer.)
        let strict = decode_as(data, wire, kind);
        let clean = strict.as_ref().is_ok_and(|m| m.unknown.is_empty());
        if let (true, Ok(dynamic)) = (clean, prost_reflect::DynamicMessage::decode(desc, data)) {
            let mut expected = Vec::new();
            reference::write_message(&mut expected, &dynamic, 0).expect("to a Vec");
            assert!(
                printed.is_ok(),
                "prost-reflect decodes what the printer refused: {printed:?}"
            );
            assert_eq!(
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&expected),
                "{name}"
            );
        }
        if let Ok(msg) = strict {
            let problems = lint(&msg);
            let _ = render::human::write_summary(
                &mut io::sink(),
                "fuzz",
                &msg,
                &problems,
                Default::default(),
            );
            let _ = render::json::write_message(
                &mut io::sink(),
                "fuzz",
                &msg,
                &problems,
                render::json::ValuesMode::All,
            );
        }
    }
}

/// `msg` without what re-encoding legitimately changes: byte offsets, the size, the
/// record of duplicate keys (a re-encoded message has each key once) and the order of
/// unknown fields found in different submessages.
pub fn normalized(msg: &Message) -> Message {
    let mut m = msg.clone();
    m.size = 0;
    m.duplicate_keys.clear();
    // Unknown fields are written back into the message they were found in, after its
    // known fields: their order within one message is kept, across messages it is not.
    for u in &mut m.unknown {
        u.offset = 0;
    }
    m.unknown.sort_by(|a, b| a.path.cmp(&b.path));
    for t in &mut m.tensors {
        t.offset = 0;
        for u in &mut t.unknown {
            u.offset = 0;
        }
        t.unknown.sort_by(|a, b| a.path.cmp(&b.path));
    }
    m
}

/// Decode → encode as is → decode must succeed and give the same message.
pub fn encode_roundtrip(data: &[u8]) {
    for (wire, kind) in CANDIDATES {
        let Ok(msg) = decode_as(data, wire, kind) else {
            continue;
        };
        let bytes = match encode(&msg, wire, TfsEncoding::AsIs) {
            Ok(b) => b,
            Err(e) => panic!("decoded {wire} {kind} does not re-encode: {e}"),
        };
        let again = match decode_as(&bytes, wire, kind) {
            Ok(m) => m,
            Err(e) => panic!("re-encoded {wire} {kind} does not decode: {e}"),
        };
        assert_eq!(
            normalized(&msg),
            normalized(&again),
            "{wire} {kind} changed by decode → encode → decode"
        );
    }
}

/// Two requests from one input (split at a byte the input chooses): `analysis::diff` on
/// the pair, both ways and rendered; a request against itself, or against itself with
/// feeds and fetches reordered, never fails; the keys agree with each other.
pub fn diff_pair(data: &[u8]) {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let cut = (cut as usize * rest.len()) / 255;
    let (a, b) = rest.split_at(cut.min(rest.len()));
    let (Ok(a), Ok(b)) = (crate::decode::decode(a), crate::decode::decode(b)) else {
        return;
    };
    let (ka, kb) = (ExecutorKey::of(&a), ExecutorKey::of(&b));
    let (sa, sb) = (ShapeKey::of(&a), ShapeKey::of(&b));
    // Order of feeds and fetches is not in either key.
    let mut ra = a.clone();
    ra.tensors.reverse();
    ra.fetches.reverse();
    assert_eq!(ka, ExecutorKey::of(&ra), "executor key depends on order");
    assert_eq!(sa, ShapeKey::of(&ra), "shape key depends on order");
    let opts = DiffOptions::default();
    for (w, p) in [(&a, &b), (&b, &a)] {
        let r = diff(std::slice::from_ref(w), p, &opts);
        let _ = crate::render::report::to_json(&r);
        let _ = render::report::write_human(&mut io::sink(), &r, Default::default());
        let _ = render::report::write_github(&mut io::sink(), &r);
    }
    for m in [&a, &ra] {
        let r = diff(std::slice::from_ref(&a), m, &opts);
        // The request's own problems (what `inspect` lists) may fail the run; nothing
        // diff itself finds may.
        let diff_error = r
            .findings()
            .any(|f| f.severity == crate::analysis::Severity::Error && f.code.is_diff_only());
        assert!(
            !diff_error,
            "a request differs from itself: {}",
            crate::render::report::to_json(&r)
        );
    }
    // Equal shape keys imply equal executor keys; equal executor keys, equal feed sets.
    assert!(sa != sb || ka == kb);
    if ka == kb {
        assert_eq!(names(&a), names(&b));
    }
}

fn names(m: &Message) -> Vec<&str> {
    let mut v: Vec<&str> = m.tensors.iter().map(|t| t.name.as_str()).collect();
    v.sort_unstable();
    v
}

/// Every entry of a container, as the commands read files: detection (bare message,
/// TFRecord, EAS text warm-up, text format), TFRecord framing, `PredictionLog`s.
pub fn containers(data: &[u8]) {
    let read = |bytes: Bytes, name: &str| {
        let opts = InputOptions::new().for_path(name.as_ref());
        if let Ok(c) = formats::read(bytes, &opts).and_then(|e| e.into_container()) {
            for e in &c.entries {
                let _ = e.label(c.kind);
                if let Content::Message(m) = &e.content {
                    exercise(m);
                }
            }
        }
    };
    read(Bytes::copy_from_slice(data), "input");
    read(Bytes::copy_from_slice(data), "input.txt");
    // The same bytes as one TFRecord record: past the CRCs a fuzzer cannot forge, into
    // the `PredictionLog` decoder.
    read(Bytes::from(tfrecord::frame([data])), "input");
    for r in tfrecord::Records::new(Bytes::copy_from_slice(data)).take(1 << 16) {
        match r {
            Ok(r) => {
                let _ = r.verify();
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
}

fn exercise_model(m: &ModelSignatures) {
    let _ = render::signature::write_saved_model_cli(&mut io::sink(), m);
    let _ = serde_json::to_string(m);
    // Check a real request shape (`tests/data/gen/README.md`) against it.
    let mut req = crate::builder::TFRequest::new("serving_default");
    if req
        .add_feed("x", &[1, 2], crate::DType::Float, vec![1.0f32, 2.0])
        .is_ok()
    {
        req.add_fetch("y");
        let opts = crate::analysis::CheckOptions::default();
        let r = crate::analysis::check(req.message(), m, &opts);
        let _ = crate::render::report::to_json(&r);
    }
}

/// `saved_model.pb` → signatures (`tfreq signature`, `check --model`).
pub fn saved_model(data: &[u8]) {
    if let Ok(m) = savedmodel::from_saved_model_pb(data, "fuzz") {
        exercise_model(&m);
    }
}

/// GetModelMetadata JSON and `saved_model_cli show --all` text → signatures; REST dtype
/// lookup from the metadata.
pub fn model_metadata(data: &[u8]) {
    if let Ok(m) = savedmodel::from_metadata_json(data, "fuzz") {
        exercise_model(&m);
    }
    let _ = rest_json::dtypes_from_metadata(data, "serving_default");
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(m) = savedmodel::from_saved_model_cli(text, "fuzz")
    {
        exercise_model(&m);
    }
}

/// Requests we build must encode to bytes we decode.
fn build_round_trip(m: &Message) {
    exercise(m);
    if let Ok(b) = encode(m, m.wire, TfsEncoding::Python) {
        let back = if m.method.takes_examples() {
            crate::decode::decode_request(Bytes::from(b), m.method)
        } else {
            decode_as(&b, m.wire, m.kind)
        };
        if let Err(e) = back {
            panic!("built {} {} does not decode: {e}", m.wire, m.kind);
        }
    }
}

/// `tfreq build --from json`: TF Serving REST requests (one, or JSON lines).
pub fn rest_json_build(data: &[u8]) {
    let mut dtypes = rest_json::Dtypes::default();
    dtypes.set("x", crate::DType::Float);
    for d in [rest_json::Dtypes::default(), dtypes] {
        for wire in [WireFormat::Eas, WireFormat::TfServing] {
            if let Ok(msgs) = rest_json::from_json_lines(data, &d, &["y".to_string()], wire) {
                msgs.iter().for_each(build_round_trip);
            }
        }
    }
}

/// `tfreq build --from text`: protobuf text format of either wire format.
pub fn text_format_build(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for wire in [None, Some(WireFormat::Eas), Some(WireFormat::TfServing)] {
        if let Ok(msgs) = text_format::from_text(text, wire) {
            msgs.iter().for_each(build_round_trip);
        }
    }
}

/// Text-like input as every command reads it: detection (which tries protobuf text
/// format, REST JSON and the EAS text warm-up on text), then each text reading forced.
/// Nesting is bounded before prost-reflect's recursive parser sees the text; the
/// depth scan and the parser must agree that nothing deeper gets through.
pub fn text_detect(data: &[u8]) {
    use crate::formats::InputFormat;
    use crate::formats::text_format::text_depth;
    let bytes = Bytes::copy_from_slice(data);
    for format in [
        InputFormat::Auto,
        InputFormat::Text,
        InputFormat::EasText,
        InputFormat::Eas,
        InputFormat::TfServing,
    ] {
        for name in ["input", "input.txt", "input.json"] {
            let src = InputOptions::new().format(format).for_path(name.as_ref());
            if let Ok(c) = formats::read(bytes.clone(), &src).and_then(|e| e.into_container()) {
                for e in &c.entries {
                    if let Content::Message(m) = &e.content {
                        exercise(m);
                    }
                }
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let deep = text_depth(text) > crate::wire::reader::RECURSION_LIMIT;
        let parsed = text_format::from_text(text, None);
        assert!(
            !(deep && parsed.is_ok()),
            "text deeper than the limit parsed"
        );
    }
}

/// The text printer as it was first written, over prost-reflect's `DynamicMessage`:
/// the oracle for [`text_render`]. Wherever prost-reflect decodes the bytes, the
/// streaming printer of [`render::text`] must print exactly this.
mod reference {
    use std::io::{self, Write};

    use prost_reflect::{
        DynamicMessage, FieldDescriptor, Kind as FieldKind, MapKey, ReflectMessage, Value,
    };

    use crate::render::escape::c_escape;
    use crate::render::pyfloat::{f32_text, f64_repr};

    /// Streams the text of an already decoded dynamic message.
    pub(super) fn write_message(
        out: &mut dyn Write,
        msg: &DynamicMessage,
        indent: usize,
    ) -> io::Result<()> {
        let mut fields: Vec<(FieldDescriptor, &Value)> = msg.fields().collect();
        fields.sort_by_key(|(f, _)| f.number());
        for (field, value) in fields {
            if field.is_map() {
                let Value::Map(map) = value else { continue };
                let FieldKind::Message(entry) = field.kind() else {
                    continue;
                };
                let value_field = entry.map_entry_value_field();
                let mut keys: Vec<&MapKey> = map.keys().collect();
                keys.sort();
                for k in keys {
                    pad(out, indent)?;
                    writeln!(out, "{} {{", field.name())?;
                    if !is_default_key(k) {
                        pad(out, indent + 2)?;
                        write!(out, "key: ")?;
                        write_key(out, k)?;
                        writeln!(out)?;
                    }
                    let v = &map[k];
                    if matches!(value_field.kind(), FieldKind::Message(_)) || !is_default(v) {
                        write_field(out, &value_field, v, indent + 2)?;
                    }
                    pad(out, indent)?;
                    writeln!(out, "}}")?;
                }
            } else if let Value::List(items) = value {
                for v in items {
                    write_field(out, &field, v, indent)?;
                }
            } else {
                if !field.supports_presence() && is_default(value) {
                    continue;
                }
                write_field(out, &field, value, indent)?;
            }
        }
        Ok(())
    }

    fn pad(out: &mut dyn Write, n: usize) -> io::Result<()> {
        write!(out, "{:n$}", "")
    }

    fn is_default_key(k: &MapKey) -> bool {
        match k {
            MapKey::Bool(b) => !b,
            MapKey::I32(v) => *v == 0,
            MapKey::I64(v) => *v == 0,
            MapKey::U32(v) => *v == 0,
            MapKey::U64(v) => *v == 0,
            MapKey::String(s) => s.is_empty(),
        }
    }

    fn is_default(v: &Value) -> bool {
        match v {
            Value::Bool(b) => !b,
            Value::I32(x) => *x == 0,
            Value::I64(x) => *x == 0,
            Value::U32(x) => *x == 0,
            Value::U64(x) => *x == 0,
            // -0.0 is not the default in Python (it compares bits for presence).
            Value::F32(x) => x.to_bits() == 0,
            Value::F64(x) => x.to_bits() == 0,
            Value::String(s) => s.is_empty(),
            Value::Bytes(b) => b.is_empty(),
            Value::EnumNumber(n) => *n == 0,
            Value::Message(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Map(m) => m.is_empty(),
        }
    }

    fn write_key(out: &mut dyn Write, k: &MapKey) -> io::Result<()> {
        match k {
            MapKey::Bool(b) => write!(out, "{b}"),
            MapKey::I32(v) => write!(out, "{v}"),
            MapKey::I64(v) => write!(out, "{v}"),
            MapKey::U32(v) => write!(out, "{v}"),
            MapKey::U64(v) => write!(out, "{v}"),
            MapKey::String(s) => write!(out, "\"{}\"", c_escape(s.as_bytes())),
        }
    }

    fn write_field(
        out: &mut dyn Write,
        field: &FieldDescriptor,
        v: &Value,
        indent: usize,
    ) -> io::Result<()> {
        pad(out, indent)?;
        match v {
            Value::Message(m) => {
                writeln!(out, "{} {{", field.name())?;
                write_message(out, m, indent + 2)?;
                pad(out, indent)?;
                writeln!(out, "}}")
            }
            _ => {
                write!(out, "{}: ", field.name())?;
                write_scalar(out, field, v)?;
                writeln!(out)
            }
        }
    }

    fn write_scalar(out: &mut dyn Write, field: &FieldDescriptor, v: &Value) -> io::Result<()> {
        match v {
            Value::Bool(b) => write!(out, "{b}"),
            Value::I32(x) => write!(out, "{x}"),
            Value::I64(x) => write!(out, "{x}"),
            Value::U32(x) => write!(out, "{x}"),
            Value::U64(x) => write!(out, "{x}"),
            Value::F32(x) => write!(out, "{}", f32_text(*x)),
            Value::F64(x) => write!(out, "{}", f64_repr(*x)),
            Value::String(s) => write!(out, "\"{}\"", c_escape(s.as_bytes())),
            Value::Bytes(b) => write!(out, "\"{}\"", c_escape(b)),
            Value::EnumNumber(n) => match field.kind() {
                FieldKind::Enum(e) => match e.get_value(*n) {
                    Some(ev) => write!(out, "{}", ev.name()),
                    None => write!(out, "{n}"),
                },
                _ => write!(out, "{n}"),
            },
            Value::Message(m) => write!(out, "{}", m.descriptor().name()),
            Value::List(_) | Value::Map(_) => Ok(()),
        }
    }
}

/// What the network clients make of a server's answer, without the network: the first
/// byte chooses the limits, the status and how the rest is cut into chunks; the rest is
/// the body. Every reader runs on it: gathering an HTTP body under a limit (never more
/// than the limit, the body whole when it fits), an HTTP refusal, an EAS and a TF
/// Serving `Predict` answer, a TF Serving REST answer (without, then with, the same bytes
/// as the model's metadata), an EAS queue sink's answer, a gRPC `GetModelMetadata`
/// answer and a gRPC status. Every error they make must show nothing a terminal would
/// act on (what a server says is escaped, src/escape.rs).
#[cfg(feature = "net")]
pub fn net_response(data: &[u8]) {
    use crate::net::{self, NetError, Protocol, grpc, queue, rest, web};
    use std::time::Duration;
    let (&sel, rest_bytes) = data.split_first().unwrap_or((&0, &[]));
    let body = Bytes::copy_from_slice(rest_bytes);
    let check = |e: &NetError| {
        let s = e.to_string();
        assert!(!crate::escape::is_unsafe(s.as_bytes()), "{s:?}");
    };
    // An HTTP body in chunks under a limit.
    let limit = u64::from(sel) * 8;
    let declared = (sel & 1 == 1).then_some(rest_bytes.len() as u64);
    match web::gather(
        rest_bytes.chunks(usize::from(sel % 13) + 1),
        declared,
        limit,
    ) {
        Ok(b) => assert!(b.len() as u64 <= limit && b[..] == *rest_bytes),
        Err(e) => {
            assert!(rest_bytes.len() as u64 > limit);
            assert_eq!(e, NetError::TooLarge { limit });
            check(&e);
        }
    }
    check(&web::refusal_of(300 + u16::from(sel), rest_bytes));
    // The binary answers.
    for p in [Protocol::Eas, Protocol::Grpc] {
        match net::decode_answer(p, &body) {
            Ok(m) => exercise(&m),
            Err(e) => check(&e),
        }
    }
    // REST JSON, with no dtypes known, then with these bytes read as the metadata.
    let mut outs = rest::Outputs::default();
    for _ in 0..2 {
        match outs.response(&body, crate::DEFAULT_SIGNATURE, &["y".to_string()]) {
            Ok(m) => exercise(&m),
            Err(e) => check(&e),
        }
        outs.learn(rest_bytes);
    }
    // The EAS queue's sink.
    let status = if sel & 2 == 0 { 200 } else { 500 };
    match queue::sink_answer(status, &body, "r\x1b1") {
        Ok(Some((m, raw))) => {
            assert!(raw.len() <= body.len());
            exercise(&m);
        }
        Ok(None) => {}
        Err(e) => check(&e),
    }
    // gRPC metadata and status.
    match grpc::read_metadata(body.clone()) {
        Ok(sigs) => {
            let _ = sigs.meta_graphs.len();
        }
        Err(e) => check(&e),
    }
    let text = String::from_utf8_lossy(rest_bytes);
    let transport = (sel & 4 != 0).then_some(text.as_ref());
    check(&grpc::status_of(
        "http://127.0.0.1:8500",
        i32::from(sel % 18),
        rest_bytes,
        transport,
        sel & 8 != 0,
        Duration::from_secs(1),
    ));
}

/// Without the `net` feature there are no network readers to run.
#[cfg(not(feature = "net"))]
pub fn net_response(_data: &[u8]) {}
