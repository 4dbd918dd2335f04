//! Classify, regress and multi-inference requests ([`Message::input`],
//! [`Message::tasks`]) → TF Serving bytes, fields in number order as protobuf
//! serialisers write them (proto/tensorflow_serving/apis/classification.proto,
//! inference.proto, input.proto; proto/tensorflow/core/example/feature.proto). Float and
//! int64 lists are written packed, features in name order.

use super::{SpecUnknown, write_model_spec};
use crate::error::BuildError;
use crate::fields::{
    classification_request, example, example_list_with_context, feature, features, features_entry,
    float_list, inference_task, input, multi_inference_request,
};
use crate::model::{Example, ExampleInput, FeatureValues, Message, Method, WireFormat};
use crate::wire::writer::{put_bytes_field, put_len_header, put_varint, varint_len};

/// The bytes of an examples request. Unknown fields are not written back: a message
/// that holds some is refused rather than written without them.
pub(super) fn encode_examples(msg: &Message, wire: WireFormat) -> Result<Vec<u8>, BuildError> {
    if wire != WireFormat::TfServing {
        return Err(BuildError::Examples(format!(
            "a {} holds tf.train.Examples, which EAS requests cannot carry",
            msg.method
        )));
    }
    if let Some(u) = msg.unknown.first() {
        return Err(BuildError::Examples(format!(
            "the {} has fields no schema knows (field {} at byte {}), which tfreq does not write back into these requests",
            msg.method, u.number, u.offset
        )));
    }
    let none = SpecUnknown::route(&[]);
    let mut out = Vec::new();
    if msg.method == Method::MultiInference {
        for t in &msg.tasks {
            let mut task = Vec::new();
            if let Some(s) = &t.model_spec {
                let mut spec = Vec::new();
                write_model_spec(&mut spec, s, &none);
                put_bytes_field(&mut task, inference_task::MODEL_SPEC, &spec);
            }
            if !t.method_name.is_empty() {
                put_bytes_field(
                    &mut task,
                    inference_task::METHOD_NAME,
                    t.method_name.as_bytes(),
                );
            }
            put_bytes_field(&mut out, multi_inference_request::TASKS, &task);
        }
    } else if let Some(s) = &msg.model_spec {
        let mut spec = Vec::new();
        write_model_spec(&mut spec, s, &none);
        put_bytes_field(&mut out, classification_request::MODEL_SPEC, &spec);
    }
    if let Some(i) = &msg.input {
        put_bytes_field(&mut out, classification_request::INPUT, &input_bytes(i));
    }
    Ok(out)
}

fn input_bytes(i: &ExampleInput) -> Vec<u8> {
    let mut list = Vec::new();
    for e in &i.examples {
        put_bytes_field(
            &mut list,
            example_list_with_context::EXAMPLES,
            &example_bytes(e),
        );
    }
    if let Some(c) = i.context.as_ref().filter(|_| i.with_context) {
        put_bytes_field(
            &mut list,
            example_list_with_context::CONTEXT,
            &example_bytes(c),
        );
    }
    let mut out = Vec::new();
    let member = if i.with_context {
        input::EXAMPLE_LIST_WITH_CONTEXT
    } else {
        input::EXAMPLE_LIST
    };
    put_bytes_field(&mut out, member, &list);
    out
}

pub(super) fn example_bytes(e: &Example) -> Vec<u8> {
    let mut map = Vec::new();
    for f in &e.features {
        let mut value = Vec::new();
        let mut list = Vec::new();
        match &f.values {
            FeatureValues::None => {}
            FeatureValues::Bytes(v) => {
                for b in v {
                    put_bytes_field(&mut list, float_list::VALUE, b);
                }
                put_bytes_field(&mut value, feature::BYTES_LIST, &list);
            }
            FeatureValues::Float(v) => {
                if !v.is_empty() {
                    let mut packed = Vec::with_capacity(v.len() * 4);
                    for x in v {
                        packed.extend_from_slice(&x.to_le_bytes());
                    }
                    put_bytes_field(&mut list, float_list::VALUE, &packed);
                }
                put_bytes_field(&mut value, feature::FLOAT_LIST, &list);
            }
            FeatureValues::Int64(v) => {
                if !v.is_empty() {
                    let len: usize = v.iter().map(|&x| varint_len(x as u64)).sum();
                    put_len_header(&mut list, float_list::VALUE, len);
                    for &x in v {
                        put_varint(&mut list, x as u64);
                    }
                }
                put_bytes_field(&mut value, feature::INT64_LIST, &list);
            }
        }
        let mut entry = Vec::new();
        put_bytes_field(&mut entry, features_entry::KEY, f.name.as_bytes());
        put_bytes_field(&mut entry, features_entry::VALUE, &value);
        put_bytes_field(&mut map, features::FEATURE, &entry);
    }
    let mut out = Vec::new();
    if !e.features.is_empty() {
        put_bytes_field(&mut out, example::FEATURES, &map);
    }
    out
}
