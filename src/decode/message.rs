//! Reading the request and response messages field by field: the top level, `ModelSpec`,
//! the tensor maps.

use bytes::Bytes;

use crate::dtype::DTypeCode;
use crate::error::DecodeError;
use crate::fields::{
    eas_request, eas_response, int64_value, map_entry, model_spec, predict_request,
    predict_response,
};
use crate::model::{Kind, Message, ModelSpec, Scope, Shape, Tensor, UnknownField, WireFormat};

use super::tensor::tensor;
use super::{TOP, Tally, Where, holds_request, len_or_unknown, unknown, utf8, varint_or_unknown};
use crate::wire::reader::{Reader, WireValue};

/// How many top-level fields of a reading are fields of the schema's own content
/// (signature name, inputs or outputs, output filter, model spec; not the kept-raw
/// `client_id` and friends) with their wire type, how many of those read with no
/// anomaly inside, and how many top-level fields are foreign to the schema (unknown, or
/// of an impossible wire type).
#[derive(Debug, Clone, Copy)]
pub(super) struct Content {
    pub(super) fields: usize,
    pub(super) clean: usize,
    pub(super) foreign: usize,
}

/// Decodes one top-level message: the message, its anomalies, and its [`Content`]. With `check_bytes`, a TF Serving request's bytes field that
/// holds a request ([`holds_request`]) is an anomaly (checked one level deep only, so
/// the cost stays linear).
///
/// With a `limit`, the reading may stop, unfinished, once it has more anomalies than
/// that ([`Tally`]): what it returns then is a count above the limit, and a message or
/// an error of no further use. Below or at the limit it is the whole reading.
pub(super) fn decode_top(
    bytes: Bytes,
    wire: WireFormat,
    kind: Kind,
    check_bytes: bool,
    limit: Option<usize>,
) -> Result<(Message, usize, Content), DecodeError> {
    let size = bytes.len();
    let mut r = Reader::new(bytes);
    let mut msg = Message::new(wire, kind);
    msg.size = size;
    let mut anomalies = Tally::new(limit);
    // Field numbers by (wire, kind).
    let (sig_or_spec, map_field, filter_field, spec_field) = match (wire, kind) {
        (WireFormat::Eas, Kind::Request) => (
            Some(eas_request::SIGNATURE_NAME),
            eas_request::INPUTS,
            Some(eas_request::OUTPUT_FILTER),
            None,
        ),
        (WireFormat::Eas, Kind::Response) => (None, eas_response::OUTPUTS, None, None),
        (WireFormat::TfServing, Kind::Request) => (
            None,
            predict_request::INPUTS,
            Some(predict_request::OUTPUT_FILTER),
            Some(predict_request::MODEL_SPEC),
        ),
        (WireFormat::TfServing, Kind::Response) => (
            None,
            predict_response::OUTPUTS,
            None,
            Some(predict_response::MODEL_SPEC),
        ),
    };
    let map_name = if kind == Kind::Request {
        "inputs"
    } else {
        "outputs"
    };
    let names: &[(u32, &'static str)] = match (wire, kind) {
        (WireFormat::Eas, Kind::Request) => eas_request::FIELDS,
        (WireFormat::Eas, Kind::Response) => eas_response::FIELDS,
        (WireFormat::TfServing, Kind::Request) => predict_request::FIELDS,
        (WireFormat::TfServing, Kind::Response) => predict_response::FIELDS,
    };
    let mut index = 0usize;
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    // Singular fields seen (signature_name / model_spec, and TF Serving's fields 5-7):
    // one that occurs again is legal protobuf (the last wins, or messages merge) but
    // no client writes it, so it counts against this reading.
    let mut seen_singular = [false; predict_request::REQUEST_OPTIONS as usize + 1];
    let (mut content_fields, mut clean_fields, mut foreign_fields) = (0usize, 0usize, 0usize);
    while let Some(f) = r.next_field_named(names)? {
        if anomalies.over() {
            break;
        }
        let n = f.number;
        let before = anomalies;
        // Every field of every schema is length-delimited.
        let len = matches!(f.value, WireValue::Len(_));
        let content = (Some(n) == sig_or_spec
            || n == map_field
            || Some(n) == filter_field
            || Some(n) == spec_field)
            && len;
        let raw = wire == WireFormat::TfServing
            && kind == Kind::Request
            && crate::fields::kept_raw_name(n).is_some();
        if !(content || raw && len) {
            foreign_fields += 1;
        }
        let singular = Some(n) == sig_or_spec
            || Some(n) == spec_field
            || (wire == WireFormat::TfServing
                && kind == Kind::Request
                && crate::fields::kept_raw_name(n).is_some());
        if singular && let Some(s) = seen_singular.get_mut(n as usize) {
            if *s {
                anomalies += 1;
            }
            *s = true;
        }
        if Some(n) == sig_or_spec {
            let b = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies.n);
            if let Some(b) = b {
                let s = utf8(&b, f.value_offset).map_err(|e| e.within("signature_name"))?;
                if s.bytes().any(|c| c < 0x20) {
                    anomalies += 1;
                }
                msg.signature_name = s;
            }
        } else if n == map_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies.n) {
                let sub = r.nested(b, f.value_offset)?;
                let t = map_entry(sub, wire, map_name, index, f.offset, &mut anomalies)?;
                index += 1;
                // A hash index of the names: a linear search per entry made many
                // entries quadratic.
                if let Some(&pos) = by_name.get(t.name.as_str()) {
                    msg.duplicate_keys.push((t.name.clone(), f.offset));
                    if let Some(slot) = msg.tensors.get_mut(pos) {
                        *slot = t; // last wins, as protobuf
                    }
                } else {
                    by_name.insert(t.name.clone(), msg.tensors.len());
                    msg.tensors.push(t);
                }
            }
        } else if Some(n) == filter_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies.n) {
                let i = msg.fetches.len();
                let s = utf8(&b, f.value_offset)
                    .map_err(|e| e.within(format!("output_filter[{i}]")))?;
                msg.fetches.push(s);
            }
        } else if Some(n) == spec_field {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies.n) {
                let sub = r.nested(b, f.value_offset)?;
                let spec = msg.model_spec.take().unwrap_or_default();
                let spec = model_spec(sub, spec, &mut msg.unknown, &mut anomalies.n)
                    .map_err(|e| e.within("model_spec"))?;
                msg.signature_name = spec.signature_name.clone();
                msg.model_spec = Some(spec);
            }
        } else if let Some(name) = crate::fields::kept_raw_name(n)
            .filter(|_| wire == WireFormat::TfServing && kind == Kind::Request)
        {
            if let Some(b) = len_or_unknown(&f, &mut msg.unknown, TOP, &mut anomalies.n) {
                if check_bytes && n == predict_request::CLIENT_ID && holds_request(&b) {
                    anomalies += 1;
                }
                msg.extra.push((name, b));
            }
        } else {
            anomalies += 1;
            msg.unknown.push(unknown(TOP, &f));
        }
        if content {
            content_fields += 1;
            if anomalies == before {
                clean_fields += 1;
            }
        }
    }
    Ok((
        msg,
        anomalies.n,
        Content {
            fields: content_fields,
            clean: clean_fields,
            foreign: foreign_fields,
        },
    ))
}

/// Decodes a TF Serving `ModelSpec` on its own (e.g. `LogMetadata.model_spec`); `r`
/// is positioned on the spec's bytes. Unknown fields are skipped.
pub(crate) fn decode_model_spec(r: Reader) -> Result<ModelSpec, DecodeError> {
    let mut unknown = Vec::new();
    let mut anomalies = 0;
    model_spec(r, ModelSpec::default(), &mut unknown, &mut anomalies)
}

pub(super) fn model_spec(
    mut r: Reader,
    mut spec: ModelSpec,
    unknown_out: &mut Vec<UnknownField>,
    anomalies: &mut usize,
) -> Result<ModelSpec, DecodeError> {
    let at = Where {
        path: "model_spec",
        scope: Scope::ModelSpec,
    };
    let version_at = Where {
        path: "model_spec.version",
        scope: Scope::ModelSpecVersion,
    };
    while let Some(f) = r.next_field_named(model_spec::FIELDS)? {
        match f.number {
            model_spec::NAME | model_spec::SIGNATURE_NAME | model_spec::VERSION_LABEL => {
                let name = match f.number {
                    model_spec::NAME => "name",
                    model_spec::SIGNATURE_NAME => "signature_name",
                    _ => "version_label",
                };
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let s = utf8(&b, f.value_offset).map_err(|e| e.within(name))?;
                    if s.bytes().any(|c| c < 0x20) {
                        *anomalies += 1;
                    }
                    match f.number {
                        model_spec::NAME => spec.name = s,
                        model_spec::SIGNATURE_NAME => spec.signature_name = s,
                        _ => {
                            // The oneof's other member is cleared, with what it held
                            // (as protobuf does).
                            spec.version = None;
                            unknown_out.retain(|u| u.scope != Scope::ModelSpecVersion);
                            spec.version_label = Some(s)
                        }
                    }
                }
            }
            model_spec::VERSION => {
                if let Some(b) = len_or_unknown(&f, unknown_out, at, anomalies) {
                    let mut sub = r.nested(b, f.value_offset)?;
                    let mut v = spec.version.unwrap_or(0);
                    while let Some(g) = sub.next_field().map_err(|e| e.within("version"))? {
                        if g.number == int64_value::VALUE {
                            if let Some(x) =
                                varint_or_unknown(&g, unknown_out, version_at, anomalies)
                            {
                                v = x as i64;
                            }
                        } else {
                            *anomalies += 1;
                            unknown_out.push(unknown(version_at, &g));
                        }
                    }
                    spec.version_label = None;
                    spec.version = Some(v);
                }
            }
            _ => {
                *anomalies += 1;
                unknown_out.push(unknown(at, &f));
            }
        }
    }
    Ok(spec)
}

pub(super) fn map_entry(
    mut r: Reader,
    wire: WireFormat,
    map_name: &str,
    index: usize,
    entry_offset: usize,
    anomalies: &mut Tally,
) -> Result<Tensor, DecodeError> {
    let mut key: Option<String> = None;
    let mut value: Option<(Bytes, usize)> = None;
    let mut unknown_fields = Vec::new();
    let entry_at = Where {
        path: map_name,
        scope: Scope::Entry,
    };
    let seg = |key: &Option<String>| match key {
        Some(k) => format!("{map_name}[{k:?}]"),
        None => format!("{map_name}[#{index}]"),
    };
    while let Some(f) = r
        .next_field_named(map_entry::FIELDS)
        .map_err(|e| e.within(seg(&key)))?
    {
        if anomalies.over() {
            break;
        }
        match f.number {
            map_entry::KEY => {
                if let Some(b) = len_or_unknown(&f, &mut unknown_fields, entry_at, &mut anomalies.n)
                {
                    key = Some(
                        utf8(&b, f.value_offset)
                            .map_err(|e| e.within(format!("{}.key", seg(&None))))?,
                    );
                }
            }
            map_entry::VALUE => {
                if let Some(b) = len_or_unknown(&f, &mut unknown_fields, entry_at, &mut anomalies.n)
                {
                    // A repeated message field merges; a map value given twice keeps the last
                    // (what protobuf's map parsing does).
                    value = Some((b, f.value_offset));
                }
            }
            _ => {
                *anomalies += 1;
                unknown_fields.push(unknown(entry_at, &f));
            }
        }
    }
    let name = key.clone().unwrap_or_default();
    let path = seg(&Some(name.clone()));
    let mut t = match value {
        Some((b, off)) => {
            let sub = r.nested(b, off)?;
            tensor(sub, wire, path.clone(), entry_offset, anomalies)
                .map_err(|e| e.within(path.clone()))?
        }
        None => Tensor::new(String::new(), DTypeCode(0), Shape::default()),
    };
    t.name = name;
    t.offset = entry_offset;
    t.unknown.extend(unknown_fields);
    Ok(t)
}
