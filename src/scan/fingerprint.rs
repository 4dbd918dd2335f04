//! What `keys` needs from one `PredictionLog` record, read from the borrowed bytes
//! without building the request: the bytes its shape key is made of (its *print*).
//!
//! Reading is a fast *accept*: [`print`] writes the print only for a record the full
//! reading ([`crate::formats::record_entry`], then [`ShapeKey::of`]) reads without an
//! error, and only in the plain shape clients write: a `predict_log` (or a
//! `classify_log`, `regress_log`, `multi_inference_log`: [`examples`], whose
//! `tf.train.Example`s are checked, not decoded) holding a non-empty request, each
//! field once where the schema allows one, known fields with their own wire types. For
//! anything else (another log kind, an unknown or repeated
//! field, a wrong wire type, any error) it returns `false`, and the caller reads the
//! record in full, which counts it or names its error exactly as before. Everything the
//! full reading checks and could refuse is checked here at least as strictly: varints,
//! lengths, UTF-8 of every string the decoder turns into text, packed runs (whole
//! elements, valid varints).
//!
//! Equal prints mean equal [`ShapeKey`]s: the print holds, in record order and each
//! item tagged and length-prefixed, the model and signature names, every input's name,
//! dtype number and dim sizes, and every `output_filter` name (repeats too: the key keeps
//! them) — everything the key is made of, so
//! the key is a function of the print (an input given twice is printed twice; the full
//! reading keeps the last). The converse does not hold (inputs in another order print
//! differently): a caller maps each new print to its key through the full reading once.
//!
//! Field numbers: [`crate::fields`]; the decoder's rules mirrored here: `src/decode/`
//! (`decode_top`, `map_entry`, `tensor`, `shape`, `model_spec`) and
//! `src/formats/prediction_log.rs` (`PredictionLog::decode`).
//!
//! [`ShapeKey`]: crate::analysis::ShapeKey
//! [`ShapeKey::of`]: crate::analysis::ShapeKey::of

use crate::dtype::{Storage, ValueField};
use crate::fields::{
    dim, int64_value, log_metadata, map_entry, model_spec, predict_log, predict_request,
    prediction_log, tensor_proto, tensor_shape,
};
use crate::wire::reader::read_varint;

pub(super) mod examples;

/// A field's value, borrowed.
pub(super) enum Value<'a> {
    Varint(u64),
    I64,
    I32,
    Len(&'a [u8]),
}

/// A cursor over one message's bytes.
pub(super) struct Fields<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn new(b: &'a [u8]) -> Self {
        Fields { b, pos: 0 }
    }

    /// A varint as the decoder reads it ([`read_varint`]).
    #[inline]
    fn varint(&mut self) -> Option<u64> {
        read_varint(self.b, &mut self.pos).ok()
    }

    /// The next field: `Some(None)` at the end, `None` on anything the decoder would
    /// refuse or this reader does not take (groups, wire types 6 and 7).
    #[inline]
    pub(super) fn next(&mut self) -> Option<Option<(u32, Value<'a>)>> {
        if self.pos >= self.b.len() {
            return Some(None);
        }
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return None;
        }
        let value = match tag & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::I64
            }
            2 => {
                let n = self.varint()?;
                Value::Len(self.take(usize::try_from(n).ok()?)?)
            }
            5 => {
                self.take(4)?;
                Value::I32
            }
            _ => return None,
        };
        Some(Some((number as u32, value)))
    }

    #[inline]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let b = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }
}

/// Section tags of a print.
const MODEL: u8 = b'M';
const SIGNATURE: u8 = b'S';
const INPUT: u8 = b'I';
const DTYPE: u8 = b'T';
const DIM: u8 = b'D';
const FETCH: u8 = b'F';

fn put_bytes(out: &mut Vec<u8>, tag: u8, b: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_number(out: &mut Vec<u8>, tag: u8, v: u64) {
    out.push(tag);
    out.extend_from_slice(&v.to_le_bytes());
}

/// Writes the print of a TFRecord record's data (`PredictionLog` bytes) into `out`
/// (cleared first) and returns `true`, or returns `false` when the record must be read
/// in full (see the module docs).
pub(crate) fn print(record: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    read_log(record, out).is_some()
}

fn read_log(record: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(record);
    let mut body = None;
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (prediction_log::LOG_METADATA, Value::Len(b)) => metadata(b)?,
            (
                prediction_log::PREDICT_LOG
                | prediction_log::CLASSIFY_LOG
                | prediction_log::REGRESS_LOG
                | prediction_log::MULTI_INFERENCE_LOG,
                Value::Len(b),
            ) if body.is_none() => body = Some((n, b)),
            _ => return None,
        }
    }
    let (kind, body) = body?;
    // The four logs share `request` = 1 and `response` = 2 (src/fields.rs).
    let mut f = Fields::new(body);
    let mut request = None;
    let mut response = false;
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (predict_log::REQUEST, Value::Len(b)) if request.is_none() => request = Some(b),
            // The response is not read by the full reading either (a length is all it checks).
            (predict_log::RESPONSE, Value::Len(_)) if !response => response = true,
            _ => return None,
        }
    }
    // An empty predict request is an error of its own in the full reading (an empty
    // examples request is left to it too).
    let request = request.filter(|r| !r.is_empty())?;
    if kind == prediction_log::PREDICT_LOG {
        read_request(request, out)
    } else {
        examples::read_request(kind, request, out)
    }
}

/// `LogMetadata`: its `model_spec` is decoded strictly; other fields are skipped.
fn metadata(b: &[u8]) -> Option<()> {
    let mut f = Fields::new(b);
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (log_metadata::MODEL_SPEC, Value::Len(b)) => {
                spec(b)?;
            }
            (log_metadata::MODEL_SPEC, _) => return None,
            _ => {}
        }
    }
    Some(())
}

/// A `ModelSpec`: its model name and signature name (each empty when absent).
/// `Some` when `s` is UTF-8, as the full reading requires of a name: names are ASCII
/// nearly always, which `is_ascii` tells inline, without `from_utf8`'s call on every
/// name of every record.
#[inline]
fn utf8(s: &[u8]) -> Option<()> {
    (s.is_ascii() || std::str::from_utf8(s).is_ok()).then_some(())
}

fn spec(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut f = Fields::new(b);
    let mut seen = [false; 5];
    let mut signature: &[u8] = b"";
    let mut name: &[u8] = b"";
    while let Some((n, v)) = f.next()? {
        let once = seen.get_mut(n as usize)?;
        if std::mem::replace(once, true) {
            return None;
        }
        match (n, v) {
            (model_spec::NAME, Value::Len(s)) => {
                utf8(s)?;
                name = s;
            }
            (model_spec::VERSION_LABEL, Value::Len(s)) => {
                utf8(s)?;
            }
            (model_spec::SIGNATURE_NAME, Value::Len(s)) => {
                utf8(s)?;
                signature = s;
            }
            (model_spec::VERSION, Value::Len(s)) => {
                let mut g = Fields::new(s);
                let mut value = false;
                while let Some((m, w)) = g.next()? {
                    match (m, w) {
                        (int64_value::VALUE, Value::Varint(_)) if !value => value = true,
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
    }
    Some((name, signature))
}

fn read_request(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(b);
    let mut spec_seen = false;
    let mut raw_seen = [false; predict_request::REQUEST_OPTIONS as usize + 1];
    while let Some((n, v)) = f.next()? {
        let Value::Len(b) = v else { return None };
        match n {
            predict_request::MODEL_SPEC if !spec_seen => {
                spec_seen = true;
                let (model, signature) = spec(b)?;
                put_bytes(out, MODEL, model);
                put_bytes(out, SIGNATURE, signature);
            }
            // A name given twice is printed twice: the full reading keeps the last.
            predict_request::INPUTS => input(b, out)?,
            predict_request::OUTPUT_FILTER => {
                utf8(b)?;
                put_bytes(out, FETCH, b);
            }
            // Kept as bytes by the full reading; a `client_id` holding a request is an
            // anomaly there, not an error.
            predict_request::PREDICT_STREAMED_OPTIONS
            | predict_request::CLIENT_ID
            | predict_request::REQUEST_OPTIONS => {
                let once = raw_seen.get_mut(n as usize)?;
                if std::mem::replace(once, true) {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(())
}

/// One `inputs` map entry: its name, its tensor's dtype and dims.
fn input(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(b);
    let (mut key, mut value) = (None, None);
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (map_entry::KEY, Value::Len(k)) if key.is_none() => {
                utf8(k)?;
                key = Some(k);
            }
            (map_entry::VALUE, Value::Len(t)) if value.is_none() => value = Some(t),
            _ => return None,
        }
    }
    let (key, value) = (key?, value?);
    put_bytes(out, INPUT, key);
    tensor(value, out)
}

/// A `TensorProto`: dtype and dims printed, every value field checked as the decoder
/// reads it.
fn tensor(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(b);
    let (mut dtype, mut shape, mut version) = (None, None, false);
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (tensor_proto::DTYPE, Value::Varint(d)) if dtype.is_none() => dtype = Some(d),
            (tensor_proto::TENSOR_SHAPE, Value::Len(s)) if shape.is_none() => shape = Some(s),
            (tensor_proto::VERSION_NUMBER, Value::Varint(_)) if !version => version = true,
            (tensor_proto::TENSOR_CONTENT, Value::Len(_)) => {}
            (n, v) => {
                let storage = ValueField::from_tf_number(n)?.storage();
                let fits = match (storage, v) {
                    (Storage::Fixed(size), Value::Len(b)) => b.len() % size == 0,
                    (Storage::Fixed(4), Value::I32) | (Storage::Fixed(8), Value::I64) => true,
                    (Storage::Varint, Value::Len(b)) => crate::wire::reader::valid_varints(b),
                    (Storage::Varint, Value::Varint(_)) => true,
                    (Storage::Bytes | Storage::Single, Value::Len(_)) => true,
                    _ => false,
                };
                if !fits {
                    return None;
                }
            }
        }
    }
    // A tensor without a dtype is DT_INVALID: an anomaly the full reading names.
    put_number(out, DTYPE, dtype?);
    if let Some(s) = shape {
        dims(s, out)?;
    }
    Some(())
}

/// A `TensorShapeProto`: each dim's size printed.
fn dims(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(b);
    let mut unknown_rank = false;
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (tensor_shape::DIM, Value::Len(d)) => {
                let mut g = Fields::new(d);
                let (mut size, mut name) = (None, false);
                while let Some((m, w)) = g.next()? {
                    match (m, w) {
                        (dim::SIZE, Value::Varint(s)) if size.is_none() => size = Some(s),
                        (dim::NAME, Value::Len(s)) if !name => {
                            utf8(s)?;
                            name = true;
                        }
                        _ => return None,
                    }
                }
                put_number(out, DIM, size.unwrap_or(0));
            }
            (tensor_shape::UNKNOWN_RANK, Value::Varint(_)) if !unknown_rank => unknown_rank = true,
            _ => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::key::ShapeKey;
    use crate::decode::DecodeOptions;
    use crate::formats::tfrecord::RawRecord;
    use crate::formats::{self, Content};
    use crate::wire::writer::put_tag;
    use crate::wire::{put_bytes_field, put_varint};
    use bytes::Bytes;

    /// The full reading's key of a record's data, or `None` when it is an error or not
    /// a predict request.
    pub(super) fn full_key(data: &[u8]) -> Option<ShapeKey> {
        let rec = RawRecord {
            index: 0,
            offset: 0,
            data: Bytes::copy_from_slice(data),
            stored_crc: 0,
        };
        match formats::record_entry(rec, DecodeOptions::default())
            .ok()?
            .content
        {
            Content::Message(m) => Some(ShapeKey::of(&m)),
            _ => None,
        }
    }

    /// A request wrapped as `PredictionLog { predict_log { request } }`.
    fn wrap(request: &[u8]) -> Vec<u8> {
        crate::formats::prediction_log::encode_predict_log(request)
    }

    fn file(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn requests_clients_write_are_printed_and_keyed_as_the_full_reading_keys_them() {
        let mut out = Vec::new();
        let names = [
            "tfs/faq_prod.bin",
            "tfs/faq_prod_batch4.bin",
            "tfs/seed_typed.bin",
            "tfs/seed_content.bin",
        ];
        let mut prints = Vec::new();
        for name in names {
            let rec = wrap(&file(name));
            assert!(print(&rec, &mut out), "{name} not printed");
            prints.push((out.clone(), full_key(&rec).expect(name)));
        }
        // Distinct keys print differently.
        for (i, a) in prints.iter().enumerate() {
            for b in &prints[i + 1..] {
                assert_eq!(a.0 == b.0, a.1 == b.1);
            }
        }
    }

    /// The model and a repeated fetch are in the key, so they are in the print: two
    /// requests that differ only there print differently, and each print's key is the
    /// full reading's.
    #[test]
    fn the_model_and_a_repeated_fetch_are_printed() {
        let req = file("tfs/faq_prod.bin");
        let mut twice = req.clone();
        put_bytes_field(&mut twice, predict_request::OUTPUT_FILTER, b"sorted_probs");
        // The same request naming another model.
        let mut m = crate::decode(&req).unwrap();
        m.model_spec.as_mut().unwrap().name = "faq_v2".into();
        let other = crate::encode::encode(
            &m,
            crate::WireFormat::TfServing,
            crate::encode::TfsEncoding::default(),
        )
        .unwrap();
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        assert!(print(&wrap(&req), &mut a));
        assert!(print(&wrap(&twice), &mut b));
        assert!(print(&wrap(&other), &mut c));
        assert!(a != b && a != c && b != c);
        let (ka, kb, kc) = (
            full_key(&wrap(&req)).unwrap(),
            full_key(&wrap(&twice)).unwrap(),
            full_key(&wrap(&other)).unwrap(),
        );
        assert!(ka != kb && ka != kc);
        assert_eq!(kc.key.model.as_deref(), Some("faq_v2"));
        assert_eq!(
            kb.key
                .fetches
                .iter()
                .filter(|f| *f == "sorted_probs")
                .count(),
            2
        );
    }

    #[test]
    fn what_it_declines_is_left_to_the_full_reading() {
        let mut out = Vec::new();
        let req = file("tfs/faq_prod.bin");
        // An empty request, a log without a request, an unknown top-level field.
        assert!(!print(&wrap(&[]), &mut out));
        assert!(!print(&[0x32, 0x00], &mut out));
        let mut unknown = wrap(&req);
        put_bytes_field(&mut unknown, 9, b"x");
        assert!(!print(&unknown, &mut out));
        // A bad UTF-8 output_filter name: an error in the full reading.
        let mut bad = req.clone();
        put_bytes_field(&mut bad, predict_request::OUTPUT_FILTER, &[0xff]);
        assert!(!print(&wrap(&bad), &mut out));
        assert!(full_key(&wrap(&bad)).is_none());
        // A classify log.
        let mut classify = Vec::new();
        put_bytes_field(&mut classify, prediction_log::CLASSIFY_LOG, &[]);
        assert!(!print(&classify, &mut out));
    }

    /// Every TFRecord file under `tests/data` (TensorFlow's and tfreq's): a printed
    /// record is one the full reading keys, and the predict records TensorFlow and the
    /// SDKs wrote are printed (the fast reading is used on real logs).
    #[test]
    fn every_record_of_the_test_logs_prints_only_what_the_full_reading_keys() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "tfrecord") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            std::path::Path::new(&format!("{}/tests/data", env!("CARGO_MANIFEST_DIR"))),
            &mut files,
        );
        let (mut keyed, mut printed) = (0, 0);
        for path in files {
            let bytes = crate::io::read_input(&path).unwrap();
            for r in formats::tfrecord::Records::new(bytes).flatten() {
                let mut out = Vec::new();
                let key = full_key(&r.data);
                keyed += usize::from(key.is_some());
                if print(&r.data, &mut out) {
                    assert!(key.is_some(), "{} record {}", path.display(), r.index);
                    printed += 1;
                } else if key.is_some() {
                    eprintln!("declined: {} record {}", path.display(), r.index);
                }
            }
        }
        assert!(
            keyed > 2000 && printed * 10 >= keyed * 9,
            "{printed} of {keyed} predict records printed"
        );
    }

    /// A protobuf field, for building messages field by field (lengths computed).
    #[derive(Debug, Clone)]
    enum F {
        V(u32, u64),
        L(u32, Vec<u8>),
        M(u32, Vec<F>),
        I32(u32),
        I64(u32),
    }

    fn encode(fields: &[F], out: &mut Vec<u8>) {
        for f in fields {
            match f {
                F::V(n, v) => {
                    put_tag(out, *n, 0);
                    put_varint(out, *v);
                }
                F::L(n, b) => put_bytes_field(out, *n, b),
                F::M(n, m) => {
                    let mut b = Vec::new();
                    encode(m, &mut b);
                    put_bytes_field(out, *n, &b);
                }
                F::I32(n) => {
                    put_tag(out, *n, 5);
                    out.extend_from_slice(&[0, 0, 0x80, 0x3f]);
                }
                F::I64(n) => {
                    put_tag(out, *n, 1);
                    out.extend_from_slice(&[0; 8]);
                }
            }
        }
    }

    mod r#gen {
        use super::F;
        use proptest::prelude::*;

        /// Names that collide often, some invalid UTF-8 or empty.
        pub fn name() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                Just(b"x".to_vec()),
                Just(b"y".to_vec()),
                Just(Vec::new()),
                Just(vec![0xff]),
                Just(b"a\x01".to_vec()),
            ]
        }

        /// Payloads for value fields: valid and invalid packed runs of both kinds.
        pub fn payload() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                Just(vec![1, 2, 0x81, 0x01]),
                Just(vec![0x80]),
                Just(vec![0xff; 10]),
                Just(vec![
                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
                ]),
                Just(vec![0; 3]),
                Just(vec![0; 8]),
                proptest::collection::vec(any::<u8>(), 0..12),
            ]
        }

        /// Any field: a random number and wire type.
        pub fn junk() -> impl Strategy<Value = F> {
            (1u32..20, 0u8..5, payload(), any::<u64>()).prop_map(|(n, w, b, v)| match w {
                0 => F::V(n, v % 300),
                1 => F::I64(n),
                2 => F::L(n, b),
                3 => F::I32(n),
                _ => F::M(n, vec![F::V(1, v % 4)]),
            })
        }

        pub fn dim() -> impl Strategy<Value = Vec<F>> {
            proptest::collection::vec(
                prop_oneof![
                    4 => (0u64..3).prop_map(|v| F::V(1, v)),
                    1 => name().prop_map(|b| F::L(2, b)),
                    1 => junk(),
                ],
                0..3,
            )
        }

        pub fn shape() -> impl Strategy<Value = Vec<F>> {
            proptest::collection::vec(
                prop_oneof![
                    4 => dim().prop_map(|d| F::M(2, d)),
                    1 => (0u64..2).prop_map(|v| F::V(3, v)),
                    1 => junk(),
                ],
                0..3,
            )
        }

        pub fn tensor() -> impl Strategy<Value = Vec<F>> {
            let value = (5u32..19, 0u8..4, payload(), 0u64..300).prop_map(|(n, w, b, v)| match w {
                0 => F::L(n, b),
                1 => F::V(n, v),
                2 => F::I32(n),
                _ => F::I64(n),
            });
            proptest::collection::vec(
                prop_oneof![
                    4 => (0u64..4).prop_map(|v| F::V(1, v)),
                    4 => shape().prop_map(|s| F::M(2, s)),
                    1 => Just(F::V(3, 0)),
                    1 => payload().prop_map(|b| F::L(4, b)),
                    4 => value,
                    1 => junk(),
                ],
                0..5,
            )
        }

        pub fn entry() -> impl Strategy<Value = Vec<F>> {
            proptest::collection::vec(
                prop_oneof![
                    4 => name().prop_map(|b| F::L(1, b)),
                    4 => tensor().prop_map(|t| F::M(2, t)),
                    1 => junk(),
                ],
                0..4,
            )
        }

        pub fn spec() -> impl Strategy<Value = Vec<F>> {
            proptest::collection::vec(
                prop_oneof![
                    2 => name().prop_map(|b| F::L(1, b)),
                    1 => (0u64..3).prop_map(|v| F::M(2, vec![F::V(1, v)])),
                    4 => name().prop_map(|b| F::L(3, b)),
                    1 => name().prop_map(|b| F::L(4, b)),
                    1 => junk(),
                ],
                0..3,
            )
        }

        pub fn request() -> impl Strategy<Value = Vec<F>> {
            proptest::collection::vec(
                prop_oneof![
                    2 => spec().prop_map(|s| F::M(1, s)),
                    6 => entry().prop_map(|e| F::M(2, e)),
                    3 => name().prop_map(|b| F::L(3, b)),
                    1 => payload().prop_map(|b| F::L(6, b)),
                    1 => junk(),
                ],
                0..6,
            )
        }

        /// A `PredictionLog` around a request, sometimes with metadata or other fields.
        pub fn log() -> impl Strategy<Value = Vec<F>> {
            (request(), 0u8..6, spec()).prop_map(|(r, how, s)| {
                let body = vec![F::M(1, r)];
                match how {
                    0 => vec![F::M(1, vec![F::M(1, s)]), F::M(6, body)],
                    1 => vec![F::M(6, body.into_iter().chain([F::L(2, vec![])]).collect())],
                    2 => vec![F::M(6, body.clone()), F::M(6, body)],
                    3 => vec![F::M(2, body)],
                    _ => vec![F::M(6, body)],
                }
            })
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
        /// Logs built field by field, valid and not: a printed record is one the full
        /// reading keys, and two records with one print have one key.
        #[test]
        fn built_records_print_only_what_the_full_reading_keys(
            a in r#gen::log(),
            b in r#gen::log(),
        ) {
            let (mut ra, mut rb) = (Vec::new(), Vec::new());
            encode(&a, &mut ra);
            encode(&b, &mut rb);
            let (mut pa, mut pb) = (Vec::new(), Vec::new());
            let (ka, kb) = (full_key(&ra), full_key(&rb));
            let printed_a = print(&ra, &mut pa);
            let printed_b = print(&rb, &mut pb);
            if printed_a {
                proptest::prop_assert!(ka.is_some());
            }
            if printed_b {
                proptest::prop_assert!(kb.is_some());
            }
            if printed_a && printed_b && pa == pb {
                proptest::prop_assert_eq!(ka, kb);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Mutated records: whatever is printed, the full reading keys without an error,
        /// and two records with one print have one key.
        #[test]
        fn a_print_always_means_the_full_readings_key(
            which in 0usize..4,
            edits in proptest::collection::vec((0usize..1 << 16, 0u8..=255, 0u8..3), 0..4),
        ) {
            let names = ["tfs/faq_prod.bin", "tfs/faq_prod_batch4.bin",
                         "tfs/seed_typed.bin", "tfs/seed_content.bin"];
            let mut req = file(names[which]);
            for &(at, byte, op) in &edits {
                let at = at % (req.len() + 1);
                match op {
                    0 if at < req.len() => req[at] = byte,
                    1 => req.insert(at, byte),
                    _ if at < req.len() => { req.remove(at); }
                    _ => {}
                }
            }
            let rec = wrap(&req);
            let mut out = Vec::new();
            if print(&rec, &mut out) {
                let key = full_key(&rec);
                proptest::prop_assert!(key.is_some());
                // The unmutated request with the same print has the same key.
                let orig = wrap(&file(names[which]));
                let mut o = Vec::new();
                proptest::prop_assert!(print(&orig, &mut o));
                if o == out {
                    proptest::prop_assert_eq!(key, full_key(&orig));
                }
            }
        }
    }
}
