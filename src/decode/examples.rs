//! TF Serving's `tf.train.Example` requests: `ClassificationRequest`, `RegressionRequest`
//! and `MultiInferenceRequest` (proto/tensorflow_serving/apis/classification.proto,
//! regression.proto, inference.proto, input.proto, over
//! proto/tensorflow/core/example/example.proto and feature.proto), decoded into
//! [`Message::input`] and [`Message::tasks`].
//!
//! The reading follows protobuf's: a message field given twice merges (the examples of a
//! second `example_list` are appended), the last member of a oneof wins (an
//! `example_list_with_context` after an `example_list` replaces it; a `float_list` after
//! an `int64_list` too), a map's last entry of a name wins. Every field no schema knows,
//! or of a wire type its declaration does not allow, is kept in [`Message::unknown`]
//! (scope [`Scope::Input`]) and counted as an anomaly, so detection can weigh this reading
//! against the predict ones.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{Content, TOP, Where, len_or_unknown, model_spec, unknown, utf8};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::fields::{
    classification_request, example, example_list_with_context, feature, features, features_entry,
    float_list, inference_task, input, multi_inference_request,
};
use crate::model::{
    Example, ExampleInput, Feature, FeatureValues, InferenceTask, Kind, Message, Method, Scope,
    UnknownField, WireFormat,
};
use crate::wire::reader::{Reader, WireField, WireValue, packed_varints};

/// What the readers below share: where unknown fields go and the anomaly count.
struct Sink<'a> {
    unknown: &'a mut Vec<UnknownField>,
    anomalies: &'a mut usize,
}

impl Sink<'_> {
    /// Keeps `f` as unknown at `path` and counts it.
    fn foreign(&mut self, path: &str, f: &WireField) {
        *self.anomalies += 1;
        self.unknown.push(unknown(
            Where {
                path,
                scope: Scope::Input,
            },
            f,
        ));
    }

    /// The payload of a LEN field, or keep it as unknown.
    fn len(&mut self, path: &str, f: &WireField) -> Option<Bytes> {
        match &f.value {
            WireValue::Len(b) => Some(b.clone()),
            _ => {
                self.foreign(path, f);
                None
            }
        }
    }
}

/// Decodes a classify or regress request (`method` [`Method::Classify`],
/// [`Method::Regress`] or [`Method::ClassifyOrRegress`]: the same fields) or a
/// multi-inference one: the message, its anomalies, and its [`Content`] (the content
/// fields are `model_spec`/`tasks` and `input`).
pub(super) fn decode_examples_top(
    bytes: Bytes,
    method: Method,
) -> Result<(Message, usize, Content), DecodeError> {
    let size = bytes.len();
    let mut r = Reader::new(bytes);
    let mut msg = Message::new(WireFormat::TfServing, Kind::Request);
    msg.size = size;
    msg.method = method;
    let multi = method == Method::MultiInference;
    let names = if multi {
        multi_inference_request::FIELDS
    } else {
        classification_request::FIELDS
    };
    let mut anomalies = 0usize;
    let (mut fields, mut clean, mut foreign) = (0usize, 0usize, 0usize);
    let mut seen_spec = false;
    while let Some(f) = r.next_field_named(names)? {
        let before = anomalies;
        let is_len = matches!(f.value, WireValue::Len(_));
        match f.number {
            // `model_spec` and `tasks` share number 1 (checked by the fields test).
            classification_request::MODEL_SPEC if !multi => {
                if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                    if seen_spec {
                        // Legal (the messages merge) but no client writes it.
                        anomalies += 1;
                    }
                    seen_spec = true;
                    let sub = r.nested(b, f.value_offset)?;
                    let spec = msg.model_spec.take().unwrap_or_default();
                    let spec = model_spec(sub, spec, &mut msg.unknown, &mut anomalies)
                        .map_err(|e| e.within("model_spec"))?;
                    msg.signature_name = spec.signature_name.clone();
                    msg.model_spec = Some(spec);
                }
            }
            multi_inference_request::TASKS if multi => {
                if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                    let i = msg.tasks.len();
                    let sub = r.nested(b, f.value_offset)?;
                    let t = task(sub, &mut msg.unknown, &mut anomalies)
                        .map_err(|e| e.within(format!("tasks[{i}]")))?;
                    msg.tasks.push(t);
                }
            }
            classification_request::INPUT => {
                if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies) {
                    let sub = r.nested(b, f.value_offset)?;
                    let mut sink = Sink {
                        unknown: &mut msg.unknown,
                        anomalies: &mut anomalies,
                    };
                    let merged = read_input(sub, msg.input.take(), &mut sink)
                        .map_err(|e| e.within("input"))?;
                    msg.input = Some(merged);
                }
            }
            _ => {
                anomalies += 1;
                msg.unknown.push(unknown(TOP, &f));
            }
        }
        if (1..=2).contains(&f.number) && is_len {
            fields += 1;
            if anomalies == before {
                clean += 1;
            }
        } else {
            foreign += 1;
        }
    }
    Ok((
        msg,
        anomalies,
        Content {
            fields,
            clean,
            foreign,
        },
    ))
}

/// One `InferenceTask`.
fn task(
    mut r: Reader,
    unknown_out: &mut Vec<UnknownField>,
    anomalies: &mut usize,
) -> Result<InferenceTask, DecodeError> {
    let at = Where {
        path: "tasks",
        scope: Scope::Input,
    };
    let mut t = InferenceTask::default();
    while let Some(f) = r.next_field_named(inference_task::FIELDS)? {
        match f.number {
            inference_task::MODEL_SPEC => {
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let sub = r.nested(b, f.value_offset)?;
                    let spec = t.model_spec.take().unwrap_or_default();
                    let spec = model_spec(sub, spec, unknown_out, anomalies)
                        .map_err(|e| e.within("model_spec"))?;
                    t.model_spec = Some(spec);
                }
            }
            inference_task::METHOD_NAME => {
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let s = utf8(&b, f.value_offset).map_err(|e| e.within("method_name"))?;
                    if s.bytes().any(|c| c < 0x20) {
                        *anomalies += 1;
                    }
                    t.method_name = s;
                }
            }
            _ => {
                *anomalies += 1;
                unknown_out.push(unknown(at, &f));
            }
        }
    }
    Ok(t)
}

/// An `Input`, merged into what an earlier occurrence held.
fn read_input(
    mut r: Reader,
    prev: Option<ExampleInput>,
    sink: &mut Sink<'_>,
) -> Result<ExampleInput, DecodeError> {
    // What each oneof member holds so far: (examples, context).
    let mut current = prev;
    while let Some(f) = r.next_field_named(input::FIELDS)? {
        let with_context = match f.number {
            input::EXAMPLE_LIST => false,
            input::EXAMPLE_LIST_WITH_CONTEXT => true,
            _ => {
                sink.foreign("input", &f);
                continue;
            }
        };
        let member = if with_context {
            "example_list_with_context"
        } else {
            "example_list"
        };
        let Some(b) = sink.len("input", &f) else {
            continue;
        };
        // Another member of the oneof clears this one; the same one merges.
        let mut acc = match current.take() {
            Some(c) if c.with_context == with_context => c,
            _ => ExampleInput {
                with_context,
                ..ExampleInput::default()
            },
        };
        let mut sub = r.nested(b, f.value_offset)?;
        while let Some(g) = sub
            .next_field_named(example_list_with_context::FIELDS)
            .map_err(|e| e.within(member))?
        {
            match g.number {
                example_list_with_context::EXAMPLES => {
                    let i = acc.examples.len();
                    if let Some(b) = sink.len(member, &g) {
                        let ex = sub.nested(b, g.value_offset)?;
                        let e = read_example(ex, Example::default(), sink)
                            .map_err(|e| e.within(format!("{member}.examples[{i}]")))?;
                        acc.examples.push(e);
                    }
                }
                example_list_with_context::CONTEXT if with_context => {
                    if let Some(b) = sink.len(member, &g) {
                        let ex = sub.nested(b, g.value_offset)?;
                        let e = read_example(ex, acc.context.take().unwrap_or_default(), sink)
                            .map_err(|e| e.within(format!("{member}.context")))?;
                        acc.context = Some(e);
                    }
                }
                _ => sink.foreign(member, &g),
            }
        }
        current = Some(acc);
    }
    Ok(current.unwrap_or_default())
}

/// One serialized `tf.train.Example` on its own: a string of a predict request's
/// serialized-examples input, which the model's `ParseExample` reads. Fields it does not
/// know are skipped, as protobuf's parser skips them.
pub(crate) fn decode_example(bytes: Bytes) -> Result<Example, DecodeError> {
    let (mut unknown, mut anomalies) = (Vec::new(), 0);
    let mut sink = Sink {
        unknown: &mut unknown,
        anomalies: &mut anomalies,
    };
    read_example(Reader::new(bytes), Example::default(), &mut sink)
}

/// One `Example`, merged into `prev` (a `features` given twice merges its maps).
fn read_example(mut r: Reader, prev: Example, sink: &mut Sink<'_>) -> Result<Example, DecodeError> {
    let mut map: BTreeMap<String, FeatureValues> = prev
        .features
        .into_iter()
        .map(|f| (f.name, f.values))
        .collect();
    while let Some(f) = r.next_field_named(example::FIELDS)? {
        if f.number != example::FEATURES {
            sink.foreign("example", &f);
            continue;
        }
        let Some(b) = sink.len("example", &f) else {
            continue;
        };
        let mut fs = r.nested(b, f.value_offset)?;
        while let Some(g) = fs
            .next_field_named(features::FIELDS)
            .map_err(|e| e.within("features"))?
        {
            if g.number != features::FEATURE {
                sink.foreign("features", &g);
                continue;
            }
            let Some(b) = sink.len("features", &g) else {
                continue;
            };
            let mut entry = fs.nested(b, g.value_offset)?;
            let mut name = String::new();
            let mut values = FeatureValues::None;
            while let Some(h) = entry
                .next_field_named(features_entry::FIELDS)
                .map_err(|e| e.within("feature"))?
            {
                match h.number {
                    features_entry::KEY => {
                        if let Some(k) = sink.len("feature", &h) {
                            name = utf8(&k, h.value_offset).map_err(|e| e.within("feature.key"))?;
                            if name.chars().any(char::is_control) {
                                *sink.anomalies += 1;
                            }
                        }
                    }
                    features_entry::VALUE => {
                        if let Some(v) = sink.len("feature", &h) {
                            let sub = entry.nested(v, h.value_offset)?;
                            values = read_feature(sub, values, sink)
                                .map_err(|e| e.within(format!("feature[{name:?}]")))?;
                        }
                    }
                    _ => sink.foreign("feature", &h),
                }
            }
            // The last entry of a name wins, as protobuf's maps.
            map.insert(name, values);
        }
    }
    Ok(Example {
        features: map
            .into_iter()
            .map(|(name, values)| Feature { name, values })
            .collect(),
    })
}

/// One `Feature` (merged into `prev` when the same list is given again).
fn read_feature(
    mut r: Reader,
    prev: FeatureValues,
    sink: &mut Sink<'_>,
) -> Result<FeatureValues, DecodeError> {
    let mut cur = prev;
    while let Some(f) = r.next_field_named(feature::FIELDS)? {
        let Some(b) = (if (1..=3).contains(&f.number) {
            sink.len("feature", &f)
        } else {
            sink.foreign("feature", &f);
            None
        }) else {
            continue;
        };
        let mut list = r.nested(b, f.value_offset)?;
        match f.number {
            feature::BYTES_LIST => {
                let mut v = match cur {
                    FeatureValues::Bytes(v) => v,
                    _ => Vec::new(),
                };
                while let Some(g) = list.next_field().map_err(|e| e.within("bytes_list"))? {
                    match (g.number, &g.value) {
                        (float_list::VALUE, WireValue::Len(x)) => v.push(x.clone()),
                        _ => sink.foreign("bytes_list", &g),
                    }
                }
                cur = FeatureValues::Bytes(v);
            }
            feature::FLOAT_LIST => {
                let mut v = match cur {
                    FeatureValues::Float(v) => v,
                    _ => Vec::new(),
                };
                while let Some(g) = list.next_field().map_err(|e| e.within("float_list"))? {
                    match (g.number, &g.value) {
                        (float_list::VALUE, WireValue::I32(x)) => v.push(f32::from_bits(*x)),
                        (float_list::VALUE, WireValue::Len(x)) => {
                            if x.len() % 4 != 0 {
                                return Err(DecodeError::new(
                                    DecodeErrorKind::PackedLength {
                                        field: "float_list.value",
                                        len: x.len(),
                                        elem: 4,
                                    },
                                    g.value_offset,
                                ));
                            }
                            v.extend(
                                x.chunks_exact(4)
                                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                            );
                        }
                        _ => sink.foreign("float_list", &g),
                    }
                }
                cur = FeatureValues::Float(v);
            }
            _ => {
                let mut v = match cur {
                    FeatureValues::Int64(v) => v,
                    _ => Vec::new(),
                };
                while let Some(g) = list.next_field().map_err(|e| e.within("int64_list"))? {
                    match (g.number, &g.value) {
                        (float_list::VALUE, WireValue::Varint(x)) => v.push(*x as i64),
                        (float_list::VALUE, WireValue::Len(x)) => {
                            let mut raw = Vec::new();
                            packed_varints(x, g.value_offset, &mut raw)
                                .map_err(|e| e.within("int64_list.value"))?;
                            v.extend(raw.into_iter().map(|x| x as i64));
                        }
                        _ => sink.foreign("int64_list", &g),
                    }
                }
                cur = FeatureValues::Int64(v);
            }
        }
    }
    Ok(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::writer::{put_bytes_field, put_tag, put_varint};

    fn len(n: u32, b: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_bytes_field(&mut out, n, b);
        out
    }

    /// `Example { features { feature { key: name, value: feature } } }`.
    fn example(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut map = Vec::new();
        for (k, v) in entries {
            let mut e = len(1, k.as_bytes());
            e.extend(len(2, v));
            map.extend(len(1, &e));
        }
        len(1, &map)
    }

    fn floats(v: &[f32]) -> Vec<u8> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        len(2, &len(1, &b))
    }

    fn ints(v: &[u64]) -> Vec<u8> {
        let mut p = Vec::new();
        for &x in v {
            put_varint(&mut p, x);
        }
        len(3, &len(1, &p))
    }

    fn decode(b: Vec<u8>, m: Method) -> (Message, usize) {
        let (m, a, _) = decode_examples_top(Bytes::from(b), m).unwrap();
        (m, a)
    }

    #[test]
    fn protobuf_merging_rules_hold() {
        // Two example_list inputs merge (examples appended); an
        // example_list_with_context after them replaces them (a oneof).
        let ex1 = example(&[("x", floats(&[1.0]))]);
        let ex2 = example(&[("x", floats(&[2.0]))]);
        let list = |e: &[u8]| len(1, &len(1, e));
        let mut req = len(2, &list(&ex1));
        req.extend(len(2, &list(&ex2)));
        let (m, a) = decode(req.clone(), Method::Classify);
        assert_eq!(a, 0);
        let i = m.input.unwrap();
        assert_eq!((i.with_context, i.examples.len()), (false, 2));
        let ctx = example(&[("age", ints(&[7]))]);
        let mut wc = len(1, &ex1);
        wc.extend(len(2, &ctx));
        req.extend(len(2, &len(2, &wc)));
        let (m, _) = decode(req, Method::Classify);
        let i = m.input.unwrap();
        assert_eq!((i.with_context, i.examples.len()), (true, 1));
        assert_eq!(
            i.context.unwrap().feature("age").unwrap().values,
            FeatureValues::Int64(vec![7])
        );
        // A name given twice keeps the last entry; a float_list after an int64_list in
        // one Feature replaces it; an unpacked float and a negative int64 read as such.
        let mut feat = ints(&[1]);
        let mut fl = Vec::new();
        put_tag(&mut fl, 1, 5);
        fl.extend(2.5f32.to_le_bytes());
        feat.extend(len(2, &fl));
        let ex = example(&[("a", ints(&[u64::MAX])), ("b", feat), ("a", floats(&[3.0]))]);
        let (m, a) = decode(len(2, &len(1, &len(1, &ex))), Method::Regress);
        assert_eq!(a, 0);
        let e = &m.input.unwrap().examples[0];
        let names: Vec<&str> = e.features.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(e.features[0].values, FeatureValues::Float(vec![3.0]));
        assert_eq!(e.features[1].values, FeatureValues::Float(vec![2.5]));
        let ex = example(&[("n", ints(&[u64::MAX]))]);
        let (m, _) = decode(len(2, &len(1, &len(1, &ex))), Method::Regress);
        assert_eq!(
            m.input.unwrap().examples[0].features[0].values,
            FeatureValues::Int64(vec![-1])
        );
    }

    #[test]
    fn foreign_fields_are_kept_and_counted() {
        // An unknown field in a Feature and one at the top; a control character in a
        // feature name.
        let mut feat = floats(&[1.0]);
        feat.extend(len(9, b"?"));
        let ex = example(&[("x\u{1b}", feat)]);
        let mut req = len(2, &len(1, &len(1, &ex)));
        put_tag(&mut req, 5, 0);
        put_varint(&mut req, 1);
        let (m, a) = decode(req, Method::Classify);
        assert_eq!(a, 3);
        let scopes: Vec<(Scope, u32)> = m.unknown.iter().map(|u| (u.scope, u.number)).collect();
        assert_eq!(scopes, [(Scope::Input, 9), (Scope::Top, 5)]);
    }

    #[test]
    fn malformed_lists_are_errors_with_their_place() {
        // A packed float run of 3 bytes.
        let bad = len(2, &len(1, &[0, 0, 0]));
        let ex = example(&[("x", bad)]);
        let req = len(2, &len(1, &len(1, &ex)));
        let e = decode_examples_top(Bytes::from(req), Method::Classify).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("float_list.value") && s.contains("input"), "{s}");
        // A task's method_name that is not UTF-8.
        let mut task = len(2, &[0xff]);
        task = len(1, &task);
        let e = decode_examples_top(Bytes::from(task), Method::MultiInference).unwrap_err();
        assert!(e.to_string().contains("method_name"), "{e}");
    }

    #[test]
    fn detection_keeps_a_bare_example_and_a_predict_request() {
        // A tf.train.Example alone is still named as one.
        let ex = example(&[("x", floats(&[1.0]))]);
        let e = crate::decode(&ex).unwrap_err();
        assert!(e.to_string().contains("tf.train.Example"), "{e}");
        // A classify request wins over the predict reading.
        let req = len(2, &len(1, &len(1, &ex)));
        assert_eq!(
            crate::decode(&req).unwrap().method,
            Method::ClassifyOrRegress
        );
    }
}
