//! The print of a classify, regress or multi-inference request (a `classify_log`,
//! `regress_log` or `multi_inference_log` record), read from the borrowed bytes without
//! building its `tf.train.Example`s.
//!
//! Their shape key is the executor key (the method, the model, the signature or the
//! tasks' signatures) and the number of examples
//! ([`crate::analysis::ShapeKey::of`]), so the print holds the log type, each
//! model spec's model and signature (each task's, in order, each marked), and the count
//! of examples. The examples themselves are *checked*, not decoded: every field the
//! full reading ([`crate::decode::decode_request`], `src/decode/examples.rs`) would
//! refuse is refused here too (varints and lengths, UTF-8 feature names, packed float
//! runs of whole elements, packed int64 runs of valid varints), and any field it would
//! keep as unknown, any repeat it would merge, sends the record to the full reading.
//! Nothing is allocated: a record of 64 examples is read in one pass over its bytes.
//!
//! Field numbers: [`crate::fields`] (proto/tensorflow_serving/apis/classification.proto,
//! inference.proto, input.proto; proto/tensorflow/core/example/example.proto and
//! feature.proto).

use super::{Fields, MODEL, SIGNATURE, Value, put_bytes, put_number, spec, utf8};
use crate::analysis::{ExecutorKey, ShapeKey};
use crate::fields::{
    classification_request, example, example_list_with_context, feature, features, features_entry,
    float_list, inference_task, input, multi_inference_request, prediction_log,
};
use crate::model::Method;
use crate::wire::reader::{read_varint, valid_varints};

/// Section tags of an examples request's print (none of them is a predict print's).
const KIND: u8 = b'K';
const TASK: u8 = b'A';
const EXAMPLES: u8 = b'E';

/// Writes the print of the request `b` of a log of type `log_field` (a
/// [`prediction_log`] field number: classify, regress or multi-inference), or `None`
/// when the full reading must read it.
pub(super) fn read_request(log_field: u32, b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    put_number(out, KIND, u64::from(log_field));
    let multi = log_field == prediction_log::MULTI_INFERENCE_LOG;
    let mut f = Fields::new(b);
    let (mut spec_seen, mut examples) = (false, None);
    while let Some((n, v)) = f.next()? {
        let Value::Len(b) = v else { return None };
        match n {
            // `model_spec` and `tasks` share number 1.
            classification_request::MODEL_SPEC if !multi && !spec_seen => {
                spec_seen = true;
                let (model, signature) = spec(b)?;
                put_bytes(out, MODEL, model);
                put_bytes(out, SIGNATURE, signature);
            }
            multi_inference_request::TASKS if multi => task(b, out)?,
            // A second `input` merges into the first: left to the full reading.
            classification_request::INPUT if examples.is_none() => examples = Some(count(b)?),
            _ => return None,
        }
    }
    put_number(out, EXAMPLES, examples.unwrap_or(0));
    Some(())
}

/// The shape key of an examples request's print (one [`read_request`] wrote): the key
/// the full reading gives the request ([`ShapeKey::of`]), made from the print alone, so
/// that a new print of a record nobody keeps is counted without decoding its examples.
/// `None` for any other print (a predict request's).
///
/// The key's parts, as [`ExecutorKey::of`] reads them from a decoded request: the
/// method of the log type; the model its `model_spec` names (a multi-inference
/// request's: its first task with a `model_spec`), none when the name is empty; the
/// signature each spec names ([`ExecutorKey::of_examples`] makes the key of them); and
/// the number of examples.
///
/// [`ExecutorKey::of`]: crate::analysis::ExecutorKey::of
/// [`ExecutorKey::of_examples`]: crate::analysis::ExecutorKey::of_examples
pub(in crate::scan) fn key(print: &[u8]) -> Option<ShapeKey> {
    let mut items = Items(print);
    let method = match items.next()? {
        (KIND, Item::Number(n)) if n == u64::from(prediction_log::CLASSIFY_LOG) => Method::Classify,
        (KIND, Item::Number(n)) if n == u64::from(prediction_log::REGRESS_LOG) => Method::Regress,
        (KIND, Item::Number(n)) if n == u64::from(prediction_log::MULTI_INFERENCE_LOG) => {
            Method::MultiInference
        }
        _ => return None,
    };
    let multi = method == Method::MultiInference;
    // Each model spec's (model, signature): a multi-inference request's one a task (a
    // task without a spec is `None`), another request's its only one.
    let mut specs: Vec<Option<(&[u8], &[u8])>> = Vec::new();
    if !multi {
        specs.push(None);
    }
    let mut examples = None;
    for item in items {
        match item {
            (TASK, Item::Number(_)) if multi => specs.push(None),
            (MODEL, Item::Bytes(m)) => *specs.last_mut()? = Some((m, b"")),
            (SIGNATURE, Item::Bytes(s)) => specs.last_mut()?.as_mut()?.1 = s,
            (EXAMPLES, Item::Number(n)) if examples.is_none() => examples = Some(n),
            _ => return None,
        }
    }
    let text = |b| std::str::from_utf8(b).ok();
    let model = match specs.iter().flatten().next() {
        Some((m, _)) if !m.is_empty() => Some(text(m)?.to_string()),
        _ => None,
    };
    // A task without a spec runs the default signature, as an empty name does.
    let signatures: Vec<&str> = specs
        .iter()
        .map(|spec| text(spec.map_or(&b""[..], |(_, s)| s)))
        .collect::<Option<_>>()?;
    let key = ExecutorKey::of_examples(model, method, signatures);
    Some(ShapeKey::of_examples(key, i64::try_from(examples?).ok()?))
}

/// A print's items, each its tag and its value: a number, or bytes (a model or
/// signature name), as [`put_number`] and [`put_bytes`] wrote them.
struct Items<'a>(&'a [u8]);

/// One item's value.
enum Item<'a> {
    Number(u64),
    Bytes(&'a [u8]),
}

impl<'a> Iterator for Items<'a> {
    type Item = (u8, Item<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (&tag, rest) = self.0.split_first()?;
        let (number, rest) = rest.split_first_chunk::<8>()?;
        let number = u64::from_le_bytes(*number);
        let (item, rest) = if matches!(tag, MODEL | SIGNATURE) {
            let (b, rest) = rest.split_at_checked(usize::try_from(number).ok()?)?;
            (Item::Bytes(b), rest)
        } else {
            (Item::Number(number), rest)
        };
        self.0 = rest;
        Some((tag, item))
    }
}

/// One `InferenceTask`: marked, then its model and signature.
fn task(b: &[u8], out: &mut Vec<u8>) -> Option<()> {
    put_number(out, TASK, 0);
    let mut f = Fields::new(b);
    let (mut spec_seen, mut method) = (false, false);
    while let Some((n, v)) = f.next()? {
        match (n, v) {
            (inference_task::MODEL_SPEC, Value::Len(b)) if !spec_seen => {
                spec_seen = true;
                let (model, signature) = spec(b)?;
                put_bytes(out, MODEL, model);
                put_bytes(out, SIGNATURE, signature);
            }
            (inference_task::METHOD_NAME, Value::Len(s)) if !method => {
                method = true;
                utf8(s)?;
            }
            _ => return None,
        }
    }
    Some(())
}

/// An `Input` holding one member: the number of its examples, each checked.
fn count(b: &[u8]) -> Option<u64> {
    let mut f = Fields::new(b);
    let mut n = None;
    while let Some((m, v)) = f.next()? {
        let (l, with_context) = match (m, v) {
            // A second member replaces or merges into the first: left to the full reading.
            _ if n.is_some() => return None,
            (input::EXAMPLE_LIST, Value::Len(l)) => (l, false),
            (input::EXAMPLE_LIST_WITH_CONTEXT, Value::Len(l)) => (l, true),
            _ => return None,
        };
        n = Some(list(l, with_context)?);
    }
    Some(n.unwrap_or(0))
}

/// An `ExampleList` (or `ExampleListWithContext`): its examples counted, each example
/// and the context checked.
fn list(b: &[u8], with_context: bool) -> Option<u64> {
    let mut f = Fields::new(b);
    let (mut n, mut context) = (0u64, false);
    while let Some((m, v)) = f.next()? {
        match (m, v) {
            (example_list_with_context::EXAMPLES, Value::Len(e)) => {
                check_example(e)?;
                n += 1;
            }
            // A second context merges into the first: left to the full reading.
            (example_list_with_context::CONTEXT, Value::Len(e)) if with_context && !context => {
                context = true;
                check_example(e)?;
            }
            _ => return None,
        }
    }
    Some(n)
}

/// A `tf.train.Example`: `Some` when the full reading reads it without an error and
/// without a field it does not know.
///
/// One loop per nesting level over the bytes, each field's tag compared whole against
/// the few its place allows (`tag`), so a feature costs a handful of compares and no
/// dispatch on a decoded field: the examples are most of such a request's bytes. It
/// takes exactly what [`Fields`] readers of each message would take (a tag is the
/// varint [`read_varint`] reads, its number 1 to 2^29 - 1; the decoder reads the same),
/// and refuses the same (`the_example_check_takes_what_a_field_reader_takes` below).
fn check_example(b: &[u8]) -> Option<()> {
    let mut p = 0;
    while p < b.len() {
        // `Example.features`, then `Features.feature` map entries.
        let fs = len_field(b, &mut p, tag(example::FEATURES, LEN))?;
        let mut q = 0;
        while q < fs.len() {
            let entry = len_field(fs, &mut q, tag(features::FEATURE, LEN))?;
            check_entry(entry)?;
        }
    }
    Some(())
}

/// One `Features.feature` map entry: a UTF-8 name and a `Feature`.
#[inline]
fn check_entry(b: &[u8]) -> Option<()> {
    const KEY: u64 = tag(features_entry::KEY, LEN);
    const VALUE: u64 = tag(features_entry::VALUE, LEN);
    let mut p = 0;
    while p < b.len() {
        match varint(b, &mut p)? {
            KEY => utf8(bytes(b, &mut p)?)?,
            VALUE => check_feature(bytes(b, &mut p)?)?,
            _ => return None,
        }
    }
    Some(())
}

/// A `Feature`: its list's values as the full reading takes them (bytes: each a LEN
/// field; floats: fixed32 or packed runs of whole elements; int64s: varints or packed
/// runs of valid varints).
#[inline]
fn check_feature(b: &[u8]) -> Option<()> {
    const BYTES: u64 = tag(feature::BYTES_LIST, LEN);
    const FLOATS: u64 = tag(feature::FLOAT_LIST, LEN);
    const INT64S: u64 = tag(feature::INT64_LIST, LEN);
    // `value` is field 1 of each list.
    const PACKED: u64 = tag(float_list::VALUE, LEN);
    const FIXED32: u64 = tag(float_list::VALUE, I32);
    const VARINT: u64 = tag(float_list::VALUE, 0);
    let mut p = 0;
    while p < b.len() {
        let kind = varint(b, &mut p)?;
        let list = bytes(b, &mut p)?;
        let mut q = 0;
        match kind {
            BYTES => {
                while q < list.len() {
                    len_field(list, &mut q, PACKED)?;
                }
            }
            FLOATS => {
                while q < list.len() {
                    match varint(list, &mut q)? {
                        FIXED32 => skip(list, &mut q, 4)?,
                        PACKED if bytes(list, &mut q)?.len() % 4 == 0 => {}
                        _ => return None,
                    }
                }
            }
            INT64S => {
                while q < list.len() {
                    match varint(list, &mut q)? {
                        VARINT => {
                            varint(list, &mut q)?;
                        }
                        PACKED if valid_varints(bytes(list, &mut q)?) => {}
                        _ => return None,
                    }
                }
            }
            _ => return None,
        }
    }
    Some(())
}

/// Wire types of the tags below (the protobuf encoding's).
const LEN: u32 = 2;
const I32: u32 = 5;

/// The tag of field `number` of wire type `wire`, as a varint's value.
const fn tag(number: u32, wire: u32) -> u64 {
    ((number as u64) << 3) | wire as u64
}

/// The varint at `*p`, as [`read_varint`] reads it: one byte inline, longer ones by it.
#[inline(always)]
fn varint(b: &[u8], p: &mut usize) -> Option<u64> {
    match b.get(*p) {
        Some(&x) if x < 0x80 => {
            *p += 1;
            Some(u64::from(x))
        }
        _ => read_varint(b, p).ok(),
    }
}

/// `n` bytes at `*p`, stepped over.
#[inline(always)]
fn skip(b: &[u8], p: &mut usize, n: usize) -> Option<()> {
    let end = p.checked_add(n).filter(|&e| e <= b.len())?;
    *p = end;
    Some(())
}

/// The payload of a LEN field whose tag was read: its length, then its bytes.
#[inline(always)]
fn bytes<'a>(b: &'a [u8], p: &mut usize) -> Option<&'a [u8]> {
    let n = usize::try_from(varint(b, p)?).ok()?;
    let start = *p;
    skip(b, p, n)?;
    b.get(start..*p)
}

/// The payload of the field at `*p`, which must have the tag `want`.
#[inline(always)]
fn len_field<'a>(b: &'a [u8], p: &mut usize, want: u64) -> Option<&'a [u8]> {
    if varint(b, p)? != want {
        return None;
    }
    bytes(b, p)
}

/// Test data: a `ClassificationRequest`'s bytes, `model_spec.name` = `model` when given,
/// and one example of one feature `name` whose list (field `kind` of `Feature`: 1 bytes,
/// 2 float, 3 int64) holds `list` as its field 1.
#[cfg(test)]
pub(crate) fn one_feature_classify_request(
    model: Option<&[u8]>,
    name: &[u8],
    kind: u32,
    list: &[u8],
) -> Vec<u8> {
    use crate::wire::put_bytes_field;
    let mut values = Vec::new();
    put_bytes_field(&mut values, 1, list);
    let mut feature = Vec::new();
    put_bytes_field(&mut feature, kind, &values);
    let mut entry = Vec::new();
    put_bytes_field(&mut entry, 1, name);
    put_bytes_field(&mut entry, 2, &feature);
    let mut features = Vec::new();
    put_bytes_field(&mut features, 1, &entry);
    let mut example = Vec::new();
    put_bytes_field(&mut example, 1, &features);
    let mut examples = Vec::new();
    put_bytes_field(&mut examples, 1, &example);
    let mut input = Vec::new();
    put_bytes_field(&mut input, 1, &examples);
    let mut request = Vec::new();
    if let Some(model) = model {
        let mut spec = Vec::new();
        put_bytes_field(&mut spec, 1, model);
        put_bytes_field(&mut request, 1, &spec);
    }
    put_bytes_field(&mut request, 2, &input);
    request
}

#[cfg(test)]
mod tests {
    use super::super::print;
    use super::super::tests::full_key;
    use crate::analysis::key::ShapeKey;
    use crate::formats::prediction_log::encode_request_log;
    use crate::model::Method;
    use bytes::Bytes;

    /// The requests TensorFlow Serving's protobufs wrote (tests/data/gen/make_examples.py),
    /// each in its own log type.
    fn requests() -> Vec<(String, Method, Vec<u8>)> {
        let dir = format!(
            "{}/tests/data/examples/requests",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut out = Vec::new();
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".pb"))
            .collect();
        names.sort();
        for name in names {
            let stem = name.trim_start_matches("keras_");
            let method = if stem.starts_with("classify") {
                Method::Classify
            } else if stem.starts_with("regress") {
                Method::Regress
            } else if stem.starts_with("multi") {
                Method::MultiInference
            } else {
                continue;
            };
            let b = std::fs::read(format!("{dir}/{name}")).unwrap();
            out.push((name, method, b));
        }
        out
    }

    /// Each request TF Serving's protobufs wrote is printed (the fast reading is used on
    /// real requests) and keyed as the full reading keys it; equal prints mean equal keys
    /// (the converse need not hold: a version or an empty signature name is printed),
    /// and a classify request read as a regress one prints and keys differently.
    #[test]
    fn examples_requests_print_and_key_as_the_full_reading() {
        let mut prints = Vec::new();
        let all = requests();
        assert!(all.len() > 30, "{} requests", all.len());
        for (name, method, req) in &all {
            let rec = &encode_request_log(*method, req).unwrap();
            let mut out = Vec::new();
            let key = full_key(rec);
            if print(rec, &mut out) {
                // The key made from the print alone is the full reading's.
                assert_eq!(super::key(&out), key, "{name}");
                prints.push((out, key.expect(name)));
            } else {
                // Only requests the full reading refuses or keeps anomalies of.
                assert!(
                    name.contains("empty") || key.is_none(),
                    "{name} not printed"
                );
            }
        }
        assert!(
            prints.len() * 10 >= all.len() * 9,
            "{} printed",
            prints.len()
        );
        for (i, a) in prints.iter().enumerate() {
            for b in &prints[i + 1..] {
                if a.0 == b.0 {
                    assert_eq!(a.1, b.1);
                }
            }
        }
        // The log type is in the print: the same request as a regress log.
        let (_, _, raw) = &all.iter().find(|(n, ..)| n == "classify_valid.pb").unwrap();
        let classify = encode_request_log(Method::Classify, raw).unwrap();
        let regress = encode_request_log(Method::Regress, raw).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(print(&classify, &mut a) && print(&regress, &mut b));
        assert_ne!(a, b);
        assert_ne!(full_key(&classify), full_key(&regress));
    }

    /// A model spec's name and signature, or none.
    type Spec<'a> = Option<(&'a [u8], &'a [u8])>;

    /// A request of one example with the model specs `specs` (name, signature; `None`:
    /// a multi-inference task without one), as a classify request (the first spec) or a
    /// multi-inference request (a task for each).
    fn with_specs(multi: bool, specs: &[Spec]) -> Vec<u8> {
        use crate::wire::put_bytes_field;
        let spec = |(name, signature): (&[u8], &[u8])| {
            let mut s = Vec::new();
            put_bytes_field(&mut s, 1, name);
            if !signature.is_empty() {
                put_bytes_field(&mut s, 3, signature);
            }
            s
        };
        // The input of a one-example classify request: its field 2.
        let one = super::one_feature_classify_request(None, b"x", 2, &[0, 0, 0x80, 0x3f]);
        let mut request = Vec::new();
        for s in specs {
            if multi {
                let mut task = Vec::new();
                if let Some(s) = s {
                    put_bytes_field(&mut task, 1, &spec(*s));
                }
                put_bytes_field(&mut task, 2, b"tensorflow/serving/classify");
                put_bytes_field(&mut request, 1, &task);
            } else if let Some(s) = s {
                put_bytes_field(&mut request, 1, &spec(*s));
            }
        }
        request.extend_from_slice(&one);
        request
    }

    /// The key made from a print alone follows the full reading where names are empty
    /// or missing: an empty model name is no model; a missing signature runs the
    /// default; a multi-inference request's model is its first task's with a spec, and
    /// its signatures are every task's, sorted, each once.
    #[test]
    fn a_print_keys_empty_and_missing_names_as_the_full_reading() {
        let cases: [(bool, &[Spec], Option<&str>, &str); 6] = [
            (false, &[Some((b"", b"s"))], None, "s"),
            (false, &[Some((b"m", b""))], Some("m"), "serving_default"),
            (false, &[], None, "serving_default"),
            (
                true,
                &[
                    None,
                    Some((b"m", b"b")),
                    Some((b"", b"a")),
                    Some((b"n", b"b")),
                ],
                Some("m"),
                "a,b,serving_default",
            ),
            (
                true,
                &[Some((b"", b"")), Some((b"m", b"a"))],
                None,
                "a,serving_default",
            ),
            (true, &[None, None], None, "serving_default"),
        ];
        for (multi, specs, model, signature) in cases {
            let method = if multi {
                Method::MultiInference
            } else {
                Method::Classify
            };
            let rec = encode_request_log(method, &with_specs(multi, specs)).unwrap();
            let mut out = Vec::new();
            assert!(print(&rec, &mut out), "{specs:?} not printed");
            let key = super::key(&out).expect("a key");
            assert_eq!(Some(&key), full_key(&rec).as_ref(), "{specs:?}");
            assert_eq!(key.key.model.as_deref(), model, "{specs:?}");
            assert_eq!(key.key.signature, signature, "{specs:?}");
            assert_eq!(key.shapes[ShapeKey::SERIALIZED_EXAMPLES].1, [1]);
        }
        // A predict request's print is no examples request's.
        let predict = crate::formats::prediction_log::encode_predict_log(
            &std::fs::read(format!(
                "{}/tests/data/tfs/faq_prod.bin",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        );
        let mut out = Vec::new();
        assert!(print(&predict, &mut out));
        assert_eq!(super::key(&out), None);
    }

    /// The example count is the key's: a request with one example more prints
    /// differently and its key counts one more.
    #[test]
    fn one_example_more_is_another_print_and_key() {
        let all = requests();
        let (_, _, raw) = all.iter().find(|(n, ..)| n == "regress_valid.pb").unwrap();
        let rec = &encode_request_log(Method::Regress, raw).unwrap();
        let req =
            crate::decode::decode_request(Bytes::copy_from_slice(raw), Method::Regress).unwrap();
        let mut more = req.clone();
        let input = more.input.as_mut().unwrap();
        input.examples.push(input.examples[0].clone());
        let bytes = crate::encode::encode(
            &more,
            crate::WireFormat::TfServing,
            crate::encode::TfsEncoding::default(),
        )
        .unwrap();
        let more_rec = encode_request_log(Method::Regress, &bytes).unwrap();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(print(rec, &mut a) && print(&more_rec, &mut b));
        assert_ne!(a, b);
        let n = |k: ShapeKey| k.shapes[ShapeKey::SERIALIZED_EXAMPLES].1[0];
        assert_eq!(
            n(full_key(&more_rec).unwrap()),
            n(full_key(rec).unwrap()) + 1
        );
    }

    /// What the full reading refuses inside an example is declined: a packed float run
    /// of a partial element, packed int64s ending mid-varint, a feature name that is not
    /// UTF-8; the same example made whole is printed.
    #[test]
    fn damaged_examples_are_left_to_the_full_reading() {
        let log = |name: &[u8], kind: u32, list: &[u8]| {
            let req = super::one_feature_classify_request(None, name, kind, list);
            encode_request_log(Method::Classify, &req).unwrap()
        };
        let mut out = Vec::new();
        for (name, kind, list, whole) in [
            (&b"x"[..], 2, &[0u8, 0, 0x80][..], false),
            (b"x", 2, &[0, 0, 0x80, 0x3f], true),
            (b"x", 3, &[0x81, 0x80], false),
            (b"x", 3, &[0x81, 0x01], true),
            (b"\xff", 1, &[], false),
        ] {
            let rec = log(name, kind, list);
            assert_eq!(full_key(&rec).is_some(), whole, "{name:?} {list:?}");
            assert_eq!(print(&rec, &mut out), whole, "{name:?} {list:?}");
        }
    }

    /// The check of an example as it was written over [`Fields`], one field at a time:
    /// the reference the one-loop check must agree with.
    fn reference_check(b: &[u8]) -> Option<()> {
        use super::super::{Fields, Value};
        use crate::fields::{example, feature, features, features_entry, float_list};
        let mut f = Fields::new(b);
        while let Some((n, v)) = f.next()? {
            let (example::FEATURES, Value::Len(fs)) = (n, v) else {
                return None;
            };
            let mut g = Fields::new(fs);
            while let Some((m, w)) = g.next()? {
                let (features::FEATURE, Value::Len(entry)) = (m, w) else {
                    return None;
                };
                let mut h = Fields::new(entry);
                while let Some((k, x)) = h.next()? {
                    let b = match (k, x) {
                        (features_entry::KEY, Value::Len(s)) => {
                            super::super::utf8(s)?;
                            continue;
                        }
                        (features_entry::VALUE, Value::Len(b)) => b,
                        _ => return None,
                    };
                    let mut i = Fields::new(b);
                    while let Some((n, v)) = i.next()? {
                        let Value::Len(list) = v else { return None };
                        if !matches!(
                            n,
                            feature::BYTES_LIST | feature::FLOAT_LIST | feature::INT64_LIST
                        ) {
                            return None;
                        }
                        let mut j = Fields::new(list);
                        while let Some((m, w)) = j.next()? {
                            let fits = match (n, m, w) {
                                (_, m, _) if m != float_list::VALUE => false,
                                (feature::BYTES_LIST, _, Value::Len(_)) => true,
                                (feature::FLOAT_LIST, _, Value::I32) => true,
                                (feature::FLOAT_LIST, _, Value::Len(x)) => x.len() % 4 == 0,
                                (feature::INT64_LIST, _, Value::Varint(_)) => true,
                                (feature::INT64_LIST, _, Value::Len(x)) => {
                                    crate::wire::reader::valid_varints(x)
                                }
                                _ => false,
                            };
                            if !fits {
                                return None;
                            }
                        }
                    }
                }
            }
        }
        Some(())
    }

    /// An example of three features (int64, float and bytes lists, packed and not), its
    /// fields' tags and lengths written with long varints when `long` says.
    fn example(long: bool) -> Vec<u8> {
        use crate::wire::put_bytes_field;
        // A LEN field, its tag and length each padded to two bytes when `long`.
        let put = |out: &mut Vec<u8>, field: u32, b: &[u8]| {
            if long {
                out.extend_from_slice(&[0x80 | ((field << 3) | 2) as u8, 0]);
                out.extend_from_slice(&[0x80 | (b.len() as u8 & 0x7f), (b.len() >> 7) as u8]);
                out.extend_from_slice(b);
            } else {
                put_bytes_field(out, field, b);
            }
        };
        let mut fs = Vec::new();
        for (name, kind, list) in [
            (&b"age"[..], 3, vec![0x08, 0x2a, 0x0a, 0x02, 0x81, 0x01]),
            (
                b"embedding",
                2,
                vec![0x0d, 0, 0, 0x80, 0x3f, 0x0a, 4, 1, 2, 3, 4],
            ),
            (b"title", 1, vec![0x0a, 0x03, b'a', b'b', b'c', 0x0a, 0x00]),
        ] {
            let mut f = Vec::new();
            put(&mut f, kind, &list);
            let mut e = Vec::new();
            put(&mut e, 1, name);
            put(&mut e, 2, &f);
            put(&mut fs, 1, &e);
        }
        let mut ex = Vec::new();
        put(&mut ex, 1, &fs);
        ex
    }

    /// Both examples are taken whole.
    #[test]
    fn whole_examples_are_taken() {
        for long in [false, true] {
            let e = example(long);
            assert!(reference_check(&e).is_some() && super::check_example(&e).is_some());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20000))]
        /// Mutated examples: the one-loop check takes exactly what the field reader takes.
        #[test]
        fn the_example_check_takes_what_a_field_reader_takes(
            long: bool,
            edits in proptest::collection::vec((0usize..256, 0u8..=255, 0u8..3), 1..4),
        ) {
            let mut e = example(long);
            for &(at, byte, op) in &edits {
                let at = at % (e.len() + 1);
                match op {
                    0 if at < e.len() => e[at] = byte,
                    1 => e.insert(at, byte),
                    _ if at < e.len() => { e.remove(at); }
                    _ => {}
                }
            }
            proptest::prop_assert_eq!(super::check_example(&e), reference_check(&e));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Mutated examples requests: whatever is printed, the full reading keys without
        /// an error, and a print equal to the unmutated request's has its key.
        #[test]
        fn a_print_of_a_mutated_examples_request_is_the_full_readings_key(
            which in 0usize..64,
            edits in proptest::collection::vec((0usize..1 << 16, 0u8..=255, 0u8..3), 1..4),
        ) {
            let all = requests();
            let (_, method, raw) = &all[which % all.len()];
            let mut req = raw.clone();
            for &(at, byte, op) in &edits {
                let at = at % (req.len() + 1);
                match op {
                    0 if at < req.len() => req[at] = byte,
                    1 => req.insert(at, byte),
                    _ if at < req.len() => { req.remove(at); }
                    _ => {}
                }
            }
            let rec = encode_request_log(*method, &req).unwrap();
            let orig = encode_request_log(*method, raw).unwrap();
            let mut out = Vec::new();
            if print(&rec, &mut out) {
                let key = full_key(&rec);
                proptest::prop_assert!(key.is_some());
                proptest::prop_assert_eq!(&super::key(&out), &key);
                let mut o = Vec::new();
                if print(&orig, &mut o) && o == out {
                    proptest::prop_assert_eq!(key, full_key(&orig));
                }
            }
        }
    }
}
