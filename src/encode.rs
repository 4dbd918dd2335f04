//! [`Message`] → bytes, in either wire format.
//!
//! Sizes are computed first, so the output is one exact-size allocation; packed
//! fixed-width fields and `tensor_content` are written in bulk. Map entries are written
//! in the message's tensor order (the builder's `add_feed` order), which is what the
//! pure-Python protobuf of the EAS SDK does, so built requests are byte-identical to it.

use std::borrow::Cow;

use bytes::Bytes;

use crate::dtype::{DType, DTypeInfo, Float16, ValueField};
use crate::error::BuildError;
use crate::fields::{
    array_proto, array_shape, dim, eas_request, eas_response, int64_value, map_entry, model_spec,
    predict_request, predict_response, tensor_proto, tensor_shape,
};
use crate::model::{
    Elems, Ints, Kind, LeElem, Message, ModelSpec, Scope, Shape, Tensor, UnknownField, Values,
    VarintElem, WireFormat, le_bytes, put_le_elems, put_le_slice,
};
use crate::wire::reader::WireValue;
use crate::wire::writer::*;

mod examples;

/// How values are laid out in a TF Serving `TensorProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TfsEncoding {
    /// As `tf.make_tensor_proto` does: `tensor_content` when more than one value fills
    /// the shape exactly and the dtype allows it, else the typed field.
    #[default]
    Python,
    /// Always the typed field (`float_val`, `int_val`, ...).
    Typed,
    /// Always `tensor_content` where the dtype has a fixed size.
    Content,
    /// Keep each tensor's layout as it is in the message (for a message decoded from
    /// TF Serving bytes, a faithful re-encoding).
    AsIs,
}

/// Encodes a message in `wire` (converting from its own format if needed).
///
/// ```
/// use tfreq::{encode, DType, TFRequest, TfsEncoding, WireFormat};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[1, 2], DType::Float, vec![1.0f32, 2.0])?;
/// req.add_fetch("y");
/// let eas = encode(req.message(), WireFormat::Eas, TfsEncoding::Python)?;
/// assert_eq!(eas, req.to_bytes()?);
/// # Ok::<(), tfreq::BuildError>(())
/// ```
pub fn encode(msg: &Message, wire: WireFormat, style: TfsEncoding) -> Result<Vec<u8>, BuildError> {
    encode_with_spec(msg, None, wire, style)
}

/// As [`encode`], with `spec` in place of the message's own `model_spec` (the builder
/// uses it so it never has to clone the tensors to set one).
pub(crate) fn encode_with_spec(
    msg: &Message,
    spec_override: Option<&ModelSpec>,
    wire: WireFormat,
    style: TfsEncoding,
) -> Result<Vec<u8>, BuildError> {
    if msg.method.takes_examples() {
        return examples::encode_examples(msg, wire);
    }
    let plans: Vec<Plan> = msg
        .tensors
        .iter()
        .map(|t| Plan::new(t, msg.wire, wire, style))
        .collect::<Result<_, _>>()?;
    let same = msg.wire == wire;
    // EAS and TF Serving give `output_filter` one number (asserted below).
    let output_filter = predict_request::OUTPUT_FILTER;
    let map_field = match msg.kind {
        Kind::Request if wire == WireFormat::Eas => eas_request::INPUTS,
        Kind::Request => predict_request::INPUTS,
        Kind::Response if wire == WireFormat::Eas => eas_response::OUTPUTS,
        Kind::Response => predict_response::OUTPUTS,
    };
    let spec = match (wire, msg.kind) {
        (WireFormat::TfServing, _) => match spec_override.or(msg.model_spec.as_ref()) {
            Some(s) => Some(Cow::Borrowed(s)),
            None if !msg.signature_name.is_empty() => Some(Cow::Owned(ModelSpec {
                signature_name: msg.signature_name.clone(),
                ..ModelSpec::default()
            })),
            None => None,
        },
        _ => None,
    };
    let unknown: &[UnknownField] = if same { &msg.unknown } else { &[] };
    let spec_unknown = SpecUnknown::route(unknown);
    let spec_len = spec.as_deref().map(|s| model_spec_len(s, &spec_unknown));

    // Size pass.
    let mut size = 0;
    if wire == WireFormat::Eas && msg.kind == Kind::Request && !msg.signature_name.is_empty() {
        size += len_field_size(eas_request::SIGNATURE_NAME, msg.signature_name.len());
    }
    if let Some(l) = spec_len {
        size += len_field_size(
            if msg.kind == Kind::Request {
                predict_request::MODEL_SPEC
            } else {
                predict_response::MODEL_SPEC
            },
            l,
        );
    }
    for p in &plans {
        size += len_field_size(map_field, p.entry_len);
    }
    if msg.kind == Kind::Request {
        for f in &msg.fetches {
            size += len_field_size(output_filter, f.len());
        }
    }
    let extra: Vec<(u32, &Bytes)> = if same && wire == WireFormat::TfServing {
        msg.extra
            .iter()
            .map(|(name, b)| match crate::fields::kept_raw_number(name) {
                Some(n) => Ok((n, b)),
                None => Err(BuildError::UnknownRawField(name)),
            })
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    for (number, b) in &extra {
        size += len_field_size(*number, b.len());
    }
    size += spec_unknown
        .top
        .iter()
        .map(|u| unknown_len(u))
        .sum::<usize>();

    // Write pass, fields in number order as protobuf serialisers do.
    let mut out = Vec::with_capacity(size);
    match (wire, msg.kind) {
        (WireFormat::Eas, Kind::Request) => {
            if !msg.signature_name.is_empty() {
                put_bytes_field(
                    &mut out,
                    eas_request::SIGNATURE_NAME,
                    msg.signature_name.as_bytes(),
                );
            }
            write_entries(&mut out, map_field, &plans, wire);
        }
        (WireFormat::Eas, Kind::Response) => write_entries(&mut out, map_field, &plans, wire),
        (WireFormat::TfServing, Kind::Request) => {
            if let (Some(s), Some(l)) = (spec.as_deref(), spec_len) {
                put_len_header(&mut out, predict_request::MODEL_SPEC, l);
                write_model_spec(&mut out, s, &spec_unknown);
            }
            write_entries(&mut out, map_field, &plans, wire);
        }
        (WireFormat::TfServing, Kind::Response) => {
            write_entries(&mut out, map_field, &plans, wire);
            if let (Some(s), Some(l)) = (spec.as_deref(), spec_len) {
                put_len_header(&mut out, predict_response::MODEL_SPEC, l);
                write_model_spec(&mut out, s, &spec_unknown);
            }
        }
    }
    if msg.kind == Kind::Request {
        for f in &msg.fetches {
            put_bytes_field(&mut out, output_filter, f.as_bytes());
        }
    }
    for (number, b) in &extra {
        put_bytes_field(&mut out, *number, b);
    }
    for u in &spec_unknown.top {
        write_unknown(&mut out, u);
    }
    debug_assert_eq!(out.len(), size);
    Ok(out)
}

/// The bytes of one serialized `tf.train.Example` (what a `ParseExample` node reads from
/// a string tensor): features in name order, float and int64 lists packed, as in a
/// classify or regress request's `Input`.
///
/// ```
/// use tfreq::{Example, Feature, FeatureValues};
/// let e = Example { features: vec![Feature { name: "x".into(), values: FeatureValues::Float(vec![1.0]) }] };
/// let b = tfreq::encode_example(&e);
/// // features { feature { key: "x" value { float_list { value: 1 } } } }, packed
/// assert_eq!(b, [0x0a, 15, 0x0a, 13, 0x0a, 1, b'x', 0x12, 8, 0x12, 6, 0x0a, 4, 0, 0, 0x80, 0x3f]);
/// ```
pub fn encode_example(e: &crate::model::Example) -> Vec<u8> {
    examples::example_bytes(e)
}

/// One tensor's own message bytes (`TensorProto`, or EAS `ArrayProto`), converted from
/// `src` as [`encode`] converts the tensors of a request (e.g. a `SessionRunRequest`
/// feed, which is a `TensorProto` outside any `PredictRequest`).
///
/// ```
/// use tfreq::{decode_tensor, encode_tensor, TfsEncoding, WireFormat};
/// // A float scalar 2.0: dtype 1, an empty shape, float_val [2.0].
/// let bytes = [0x08, 0x01, 0x12, 0x00, 0x2a, 0x04, 0, 0, 0, 0x40];
/// let t = decode_tensor(bytes.to_vec().into(), WireFormat::TfServing)?;
/// let out = encode_tensor(&t, WireFormat::TfServing, WireFormat::TfServing, TfsEncoding::AsIs)?;
/// assert_eq!(out, bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn encode_tensor(
    t: &Tensor,
    src: WireFormat,
    wire: WireFormat,
    style: TfsEncoding,
) -> Result<Vec<u8>, BuildError> {
    let p = Plan::new(t, src, wire, style)?;
    let mut out = Vec::with_capacity(p.body_len);
    write_tensor(&mut out, &p, wire);
    debug_assert_eq!(out.len(), p.body_len);
    Ok(out)
}

// `encode_with_spec` writes both formats' `output_filter` with one number, and an
// `ArrayProto`'s dtype and shape with the `TensorProto` numbers.
const _: () = assert!(
    eas_request::OUTPUT_FILTER == predict_request::OUTPUT_FILTER
        && array_proto::DTYPE == tensor_proto::DTYPE
        && array_proto::ARRAY_SHAPE == tensor_proto::TENSOR_SHAPE
);

/// Unknown fields of a decoded message, by the message they were found in (the decoder
/// records `model_spec` and `model_spec.version` ones in `Message::unknown` with that
/// path): each is written back where it was, so re-encoding keeps its meaning.
struct SpecUnknown<'a> {
    top: Vec<&'a UnknownField>,
    spec: Vec<&'a UnknownField>,
    version: Vec<&'a UnknownField>,
}

impl<'a> SpecUnknown<'a> {
    fn route(all: &'a [UnknownField]) -> Self {
        let mut r = SpecUnknown {
            top: Vec::new(),
            spec: Vec::new(),
            version: Vec::new(),
        };
        for u in all {
            match u.scope {
                Scope::ModelSpec => r.spec.push(u),
                Scope::ModelSpecVersion => r.version.push(u),
                _ => r.top.push(u),
            }
        }
        r
    }
}

fn unknowns_len(u: &[&UnknownField]) -> usize {
    u.iter().map(|u| unknown_len(u)).sum()
}

fn model_spec_len(s: &ModelSpec, unknown: &SpecUnknown) -> usize {
    let mut n = unknowns_len(&unknown.spec);
    if !s.name.is_empty() {
        n += len_field_size(model_spec::NAME, s.name.len());
    }
    if let Some(v) = s.version {
        n += len_field_size(
            model_spec::VERSION,
            version_len(v) + unknowns_len(&unknown.version),
        );
    }
    if !s.signature_name.is_empty() {
        n += len_field_size(model_spec::SIGNATURE_NAME, s.signature_name.len());
    }
    if let Some(l) = &s.version_label {
        n += len_field_size(model_spec::VERSION_LABEL, l.len());
    }
    n
}

fn version_len(v: i64) -> usize {
    if v == 0 {
        0
    } else {
        tag_len(int64_value::VALUE) + varint_len(v as u64)
    }
}

fn write_model_spec(out: &mut Vec<u8>, s: &ModelSpec, unknown: &SpecUnknown) {
    if !s.name.is_empty() {
        put_bytes_field(out, model_spec::NAME, s.name.as_bytes());
    }
    if let Some(v) = s.version {
        put_len_header(
            out,
            model_spec::VERSION,
            version_len(v) + unknowns_len(&unknown.version),
        );
        if v != 0 {
            put_varint_field(out, int64_value::VALUE, v as u64);
        }
        for u in &unknown.version {
            write_unknown(out, u);
        }
    }
    if !s.signature_name.is_empty() {
        put_bytes_field(out, model_spec::SIGNATURE_NAME, s.signature_name.as_bytes());
    }
    if let Some(l) = &s.version_label {
        put_bytes_field(out, model_spec::VERSION_LABEL, l.as_bytes());
    }
    for u in &unknown.spec {
        write_unknown(out, u);
    }
}

fn unknown_len(u: &UnknownField) -> usize {
    tag_len(u.number)
        + match &u.value {
            WireValue::Varint(v) => varint_len(*v),
            WireValue::I64(_) => 8,
            WireValue::I32(_) => 4,
            WireValue::Len(b) => varint_len(b.len() as u64) + b.len(),
            WireValue::Group(b) => b.len() + tag_len(u.number),
        }
}

fn write_unknown(out: &mut Vec<u8>, u: &UnknownField) {
    put_tag(out, u.number, u.value.wire_type());
    match &u.value {
        WireValue::Varint(v) => put_varint(out, *v),
        WireValue::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
        WireValue::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
        WireValue::Len(b) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        WireValue::Group(b) => {
            out.extend_from_slice(b);
            put_tag(out, u.number, 4); // end group
        }
    }
}

/// Typed value fields as a plan writes them.
type PlanFields<'a> = Vec<(ValueField, Cow<'a, Values>)>;

/// One tensor, laid out for the target format, with its sizes.
struct Plan<'a> {
    t: &'a Tensor,
    content: Option<Content<'a>>,
    fields: PlanFields<'a>,
    unknown: TensorUnknown<'a>,
    version: i32,
    shape_len: Option<usize>,
    body_len: usize,
    entry_len: usize,
}

impl<'a> Plan<'a> {
    fn new(
        t: &'a Tensor,
        src: WireFormat,
        dst: WireFormat,
        style: TfsEncoding,
    ) -> Result<Self, BuildError> {
        let (content, fields, unknown): (Option<Content<'a>>, PlanFields<'a>, &[UnknownField]) =
            if src == dst && (dst == WireFormat::Eas || style == TfsEncoding::AsIs) {
                (
                    t.content.clone().map(Content::Raw),
                    t.fields
                        .iter()
                        .map(|(f, v)| (*f, Cow::Borrowed(v)))
                        .collect(),
                    &t.unknown,
                )
            } else {
                let d = t
                    .dtype
                    .dtype()
                    .filter(|d| !matches!(d, DType::Invalid))
                    .ok_or_else(|| BuildError::NotBuildable {
                        name: t.name.clone(),
                        dtype: t.dtype,
                    })?;
                let canon = canonical(t, d, src)?;
                match dst {
                    WireFormat::Eas => {
                        let ef = d.info().eas_field.ok_or_else(|| BuildError::Unsupported {
                            name: t.name.clone(),
                            dtype: t.dtype,
                            wire: dst,
                        })?;
                        let v = to_eas(d, full_count(t, d, canon)?);
                        (None, if v.is_empty() { vec![] } else { vec![(ef, v)] }, &[])
                    }
                    WireFormat::TfServing => {
                        let info = d.info();
                        let n = canon.len() / d.numbers_per_element();
                        let fill = t.shape.num_elements() == Some(n as u64);
                        let use_content = match style {
                            TfsEncoding::Python => info.python_content && fill && n > 1,
                            TfsEncoding::Content => info.size.is_some() && fill && n > 0,
                            TfsEncoding::Typed | TfsEncoding::AsIs => false,
                        };
                        if use_content {
                            (Some(Content::of(d, canon)), vec![], &[])
                        } else if canon.is_empty() {
                            (None, vec![], &[])
                        } else {
                            (None, vec![(info.tf_field, canon)], &[])
                        }
                    }
                }
            };
        let unknown = TensorUnknown::route(t, unknown);
        let shape_len = (t.shape.present
            || !t.shape.dims.is_empty()
            || t.shape.unknown_rank
            || !unknown.shape.is_empty())
        .then(|| shape_len(&t.shape, dst, &unknown));
        let mut body = 0;
        if t.dtype.0 != 0 {
            body += tag_len(tensor_proto::DTYPE) + varint_len(t.dtype.0 as i64 as u64);
        }
        if let Some(l) = shape_len {
            body += len_field_size(tensor_proto::TENSOR_SHAPE, l);
        }
        let version = if src == dst { t.version_number } else { 0 };
        if dst == WireFormat::TfServing {
            if version != 0 {
                body += tag_len(tensor_proto::VERSION_NUMBER) + varint_len(version as i64 as u64);
            }
            if let Some(c) = &content {
                body += len_field_size(tensor_proto::TENSOR_CONTENT, c.len());
            }
        }
        for (f, v) in &fields {
            body += field_len(field_number(*f, dst), v);
        }
        body += unknowns_len(&unknown.tensor);
        let mut entry = len_field_size(map_entry::VALUE, body) + unknowns_len(&unknown.entry);
        if !t.name.is_empty() {
            entry += len_field_size(map_entry::KEY, t.name.len());
        }
        Ok(Plan {
            t,
            content,
            fields,
            unknown,
            version,
            shape_len,
            body_len: body,
            entry_len: entry,
        })
    }
}

/// A tensor's unknown fields by the message they were found in: the map entry, the
/// tensor, its shape, or one of its dims (the decoder's paths say which).
struct TensorUnknown<'a> {
    entry: Vec<&'a UnknownField>,
    tensor: Vec<&'a UnknownField>,
    shape: Vec<&'a UnknownField>,
    dims: Vec<(usize, &'a UnknownField)>,
}

impl<'a> TensorUnknown<'a> {
    fn route(t: &Tensor, all: &'a [UnknownField]) -> Self {
        let mut r = TensorUnknown {
            entry: Vec::new(),
            tensor: Vec::new(),
            shape: Vec::new(),
            dims: Vec::new(),
        };
        for u in all {
            match u.scope {
                Scope::Entry => r.entry.push(u),
                Scope::Dim(i) if i < t.shape.dims.len() => r.dims.push((i, u)),
                Scope::Shape => r.shape.push(u),
                _ => r.tensor.push(u),
            }
        }
        r
    }

    fn dim(&self, i: usize) -> impl Iterator<Item = &'a UnknownField> + '_ {
        self.dims
            .iter()
            .filter(move |(j, _)| *j == i)
            .map(|(_, u)| *u)
    }
}

fn field_number(f: ValueField, wire: WireFormat) -> u32 {
    match wire {
        WireFormat::Eas => f.eas_number().unwrap_or(0),
        WireFormat::TfServing => f.tf_number(),
    }
}

fn shape_len(s: &Shape, wire: WireFormat, unknown: &TensorUnknown) -> usize {
    unknowns_len(&unknown.shape)
        + match wire {
            WireFormat::Eas => {
                if s.dims.is_empty() {
                    0
                } else {
                    len_field_size(
                        array_shape::DIM,
                        varints_len(s.dims.iter().map(|d| d.size as u64)),
                    )
                }
            }
            WireFormat::TfServing => {
                let mut n = 0;
                for (i, d) in s.dims.iter().enumerate() {
                    n += len_field_size(tensor_shape::DIM, dim_len(d.size, &d.name, unknown, i));
                }
                if s.unknown_rank {
                    n += tag_len(tensor_shape::UNKNOWN_RANK) + 1; // varint 1
                }
                n
            }
        }
}

fn dim_len(size: i64, name: &str, unknown: &TensorUnknown, i: usize) -> usize {
    let mut n = unknown.dim(i).map(unknown_len).sum::<usize>();
    if size != 0 {
        n += tag_len(dim::SIZE) + varint_len(size as u64);
    }
    if !name.is_empty() {
        n += len_field_size(dim::NAME, name.len());
    }
    n
}

fn write_entries(out: &mut Vec<u8>, field: u32, plans: &[Plan], wire: WireFormat) {
    for p in plans {
        put_len_header(out, field, p.entry_len);
        if !p.t.name.is_empty() {
            put_bytes_field(out, map_entry::KEY, p.t.name.as_bytes());
        }
        put_len_header(out, map_entry::VALUE, p.body_len);
        write_tensor(out, p, wire);
        for u in &p.unknown.entry {
            write_unknown(out, u);
        }
    }
}

fn write_tensor(out: &mut Vec<u8>, p: &Plan, wire: WireFormat) {
    let t = p.t;
    if t.dtype.0 != 0 {
        put_varint_field(out, tensor_proto::DTYPE, t.dtype.0 as i64 as u64);
    }
    if let Some(l) = p.shape_len {
        put_len_header(out, tensor_proto::TENSOR_SHAPE, l);
        match wire {
            WireFormat::Eas => {
                if !t.shape.dims.is_empty() {
                    let n = varints_len(t.shape.dims.iter().map(|d| d.size as u64));
                    put_len_header(out, array_shape::DIM, n);
                    for d in &t.shape.dims {
                        put_varint(out, d.size as u64);
                    }
                }
            }
            WireFormat::TfServing => {
                for (i, d) in t.shape.dims.iter().enumerate() {
                    put_len_header(
                        out,
                        tensor_shape::DIM,
                        dim_len(d.size, &d.name, &p.unknown, i),
                    );
                    if d.size != 0 {
                        put_varint_field(out, dim::SIZE, d.size as u64);
                    }
                    if !d.name.is_empty() {
                        put_bytes_field(out, dim::NAME, d.name.as_bytes());
                    }
                    for u in p.unknown.dim(i) {
                        write_unknown(out, u);
                    }
                }
                if t.shape.unknown_rank {
                    put_varint_field(out, tensor_shape::UNKNOWN_RANK, 1);
                }
            }
        }
        for u in &p.unknown.shape {
            write_unknown(out, u);
        }
    }
    if wire == WireFormat::TfServing {
        if p.version != 0 {
            put_varint_field(out, tensor_proto::VERSION_NUMBER, p.version as i64 as u64);
        }
        if let Some(c) = &p.content {
            c.write(out);
        }
    }
    for (f, v) in &p.fields {
        write_field(out, field_number(*f, wire), v);
    }
    for u in &p.unknown.tensor {
        write_unknown(out, u);
    }
}

/// Calls `f` with each value as the varint protobuf writes (owned values in a plain
/// loop over the slice; packed views decoded as they go).
#[inline]
fn each_int<T: VarintElem>(e: &Ints<T>, conv: impl Fn(T) -> u64, mut f: impl FnMut(u64)) {
    match e {
        Ints::Vec(v) => v.iter().for_each(|&x| f(conv(x))),
        Ints::Packed(p) => p.iter().for_each(|x| f(conv(T::from_varint(x)))),
    }
}

fn ints_len<T: VarintElem>(e: &Ints<T>, conv: impl Fn(T) -> u64) -> usize {
    let mut n = 0;
    each_int(e, conv, |x| n += varint_len(x));
    n
}

fn put_ints<T: VarintElem>(
    out: &mut Vec<u8>,
    num: u32,
    e: &Ints<T>,
    conv: impl Fn(T) -> u64 + Copy,
) {
    put_len_header(out, num, ints_len(e, conv));
    each_int(e, conv, |x| put_varint(out, x));
}

fn field_len(num: u32, v: &Values) -> usize {
    let packed = |n: usize| if n == 0 { 0 } else { len_field_size(num, n) };
    match v {
        Values::F32(e) => packed(e.len() * 4),
        Values::F64(e) => packed(e.len() * 8),
        Values::I32(e) => packed(ints_len(e, |x| x as i64 as u64)),
        Values::I64(e) => packed(ints_len(e, |x| x as u64)),
        Values::U32(e) => packed(ints_len(e, u64::from)),
        Values::U64(e) => packed(ints_len(e, |x| x)),
        Values::Bool(e) => packed(e.len()),
        Values::Bytes(e) => e.iter().map(|b| len_field_size(num, b.len())).sum(),
        Values::Raw(b) => len_field_size(num, b.len()),
    }
}

fn write_field(out: &mut Vec<u8>, num: u32, v: &Values) {
    match v {
        Values::F32(e) if !e.is_empty() => {
            put_len_header(out, num, e.len() * 4);
            put_le_elems(out, e);
        }
        Values::F64(e) if !e.is_empty() => {
            put_len_header(out, num, e.len() * 8);
            put_le_elems(out, e);
        }
        Values::I32(e) if !e.is_empty() => put_ints(out, num, e, |x| x as i64 as u64),
        Values::I64(e) if !e.is_empty() => put_ints(out, num, e, |x| x as u64),
        Values::U32(e) if !e.is_empty() => put_ints(out, num, e, u64::from),
        Values::U64(e) if !e.is_empty() => put_ints(out, num, e, |x| x),
        Values::Bool(e) if !e.is_empty() => {
            put_len_header(out, num, e.len());
            out.extend(e.iter().map(|&b| b as u8));
        }
        Values::Bytes(e) => {
            for b in e {
                put_bytes_field(out, num, b);
            }
        }
        Values::Raw(b) => put_bytes_field(out, num, b),
        _ => {}
    }
}

/// The tensor's stored values in the TF Serving typed field of its dtype
/// (`tensor_content` decoded; EAS conventions undone). No broadcast is applied.
pub fn canonical<'a>(
    t: &'a Tensor,
    d: DType,
    src: WireFormat,
) -> Result<Cow<'a, Values>, BuildError> {
    let info = d.info();
    if matches!(d, DType::Resource | DType::Variant) && src == WireFormat::Eas {
        return Err(BuildError::NotBuildable {
            name: t.name.clone(),
            dtype: t.dtype,
        });
    }
    if src == WireFormat::TfServing {
        if let Some(c) = &t.content
            && t.shape.num_elements() != Some(0)
        {
            return Ok(Cow::Owned(from_content(t, d, info, c)?));
        }
        return Ok(match t.field(info.tf_field) {
            Some(v) => Cow::Borrowed(v),
            None => Cow::Owned(Values::empty_for(info.tf_field)),
        });
    }
    // EAS: the dtype's ArrayProto field, by the DeepRec / Java SDK conventions.
    let Some(ef) = info.eas_field else {
        return Ok(Cow::Owned(Values::empty_for(info.tf_field)));
    };
    let v = match t.field(ef) {
        Some(v) => v,
        None => return Ok(Cow::Owned(Values::empty_for(info.tf_field))),
    };
    Ok(match (Float16::of(d), v) {
        (Some(h), Values::F32(e)) => {
            Cow::Owned(Values::I32(e.iter().map(|x| h.bits(x) as i32).collect()))
        }
        _ => Cow::Borrowed(v),
    })
}

fn from_content(t: &Tensor, d: DType, info: &DTypeInfo, c: &Bytes) -> Result<Values, BuildError> {
    use DType::*;
    let bad = || BuildError::NotBuildable {
        name: t.name.clone(),
        dtype: t.dtype,
    };
    if d == String {
        return crate::model::parse_string_list(c, t.shape.num_elements())
            .map(Values::Bytes)
            .ok_or_else(bad);
    }
    let sz = info.size.ok_or_else(bad)?;
    if !c.len().is_multiple_of(sz) {
        return Err(bad());
    }
    // Whole elements only (the length is a multiple of `sz`, checked above), so
    // nothing is dropped or padded.
    fn le<T: LeElem>(c: &[u8]) -> Vec<T> {
        let mut v = Vec::new();
        T::extend_from_le(&mut v, c);
        v
    }
    Ok(match d {
        Float | Complex64 => Values::F32(Elems::Le(c.clone())),
        Double | Complex128 => Values::F64(Elems::Le(c.clone())),
        Int32 | QInt32 => Values::I32(le::<i32>(c).into_iter().collect()),
        Int16 | QInt16 => Values::I32(le::<i16>(c).into_iter().map(i32::from).collect()),
        UInt16 | QUInt16 | Half | BFloat16 => {
            Values::I32(le::<u16>(c).into_iter().map(i32::from).collect())
        }
        Int8 | QInt8 | Int4 | Int2 => Values::I32(c.iter().map(|&b| b as i8 as i32).collect()),
        UInt8 | QUInt8 | UInt4 | UInt2 => Values::I32(c.iter().map(|&b| b as i32).collect()),
        Int64 => Values::I64(le::<i64>(c).into_iter().collect()),
        UInt32 => Values::U32(le::<u32>(c).into_iter().collect()),
        UInt64 => Values::U64(le::<u64>(c).into_iter().collect()),
        Bool => Values::Bool(c.iter().map(|&b| b != 0).collect()),
        _ => Values::Raw(c.clone()),
    })
}

/// `tensor_content` as a plan writes it: bytes already at hand, or a borrowed slice
/// of numbers whose little-endian bytes are written straight into the output (no
/// intermediate copy).
enum Content<'a> {
    Raw(Bytes),
    F32(&'a [f32]),
    F64(&'a [f64]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    /// Integers kept as a view of packed varints: decoded straight into the output.
    PackedI32(&'a Ints<i32>),
    PackedI64(&'a Ints<i64>),
    PackedU32(&'a Ints<u32>),
    PackedU64(&'a Ints<u64>),
}

impl<'a> Content<'a> {
    fn of(d: DType, v: Cow<'a, Values>) -> Self {
        let size = d.info().size;
        match v {
            Cow::Borrowed(Values::F32(Elems::Vec(v))) => Content::F32(v),
            Cow::Borrowed(Values::F64(Elems::Vec(v))) => Content::F64(v),
            Cow::Borrowed(Values::I32(Ints::Vec(v))) if size == Some(4) => Content::I32(v),
            Cow::Borrowed(Values::I64(Ints::Vec(v))) => Content::I64(v),
            Cow::Borrowed(Values::U32(Ints::Vec(v))) => Content::U32(v),
            Cow::Borrowed(Values::U64(Ints::Vec(v))) => Content::U64(v),
            Cow::Borrowed(Values::I32(v @ Ints::Packed(_))) if size == Some(4) => {
                Content::PackedI32(v)
            }
            Cow::Borrowed(Values::I64(v @ Ints::Packed(_))) => Content::PackedI64(v),
            Cow::Borrowed(Values::U32(v @ Ints::Packed(_))) => Content::PackedU32(v),
            Cow::Borrowed(Values::U64(v @ Ints::Packed(_))) => Content::PackedU64(v),
            v => Content::Raw(to_content(d, &v)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Content::Raw(b) => b.len(),
            Content::F32(v) => v.len() * 4,
            Content::F64(v) => v.len() * 8,
            Content::I32(v) => v.len() * 4,
            Content::I64(v) => v.len() * 8,
            Content::U32(v) => v.len() * 4,
            Content::U64(v) => v.len() * 8,
            Content::PackedI32(v) => v.len() * 4,
            Content::PackedI64(v) => v.len() * 8,
            Content::PackedU32(v) => v.len() * 4,
            Content::PackedU64(v) => v.len() * 8,
        }
    }

    /// Writes the `tensor_content` field (tag, length, bytes).
    fn write(&self, out: &mut Vec<u8>) {
        put_len_header(out, tensor_proto::TENSOR_CONTENT, self.len());
        match self {
            Content::Raw(b) => out.extend_from_slice(b),
            Content::F32(v) => put_le_slice(out, v),
            Content::F64(v) => put_le_slice(out, v),
            Content::I32(v) => put_le_slice(out, v),
            Content::I64(v) => put_le_slice(out, v),
            Content::U32(v) => put_le_slice(out, v),
            Content::U64(v) => put_le_slice(out, v),
            Content::PackedI32(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Content::PackedI64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Content::PackedU32(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Content::PackedU64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        }
    }
}

fn ints_le_bytes<T: VarintElem + crate::model::LeElem>(e: &Ints<T>) -> Bytes {
    match e.as_slice() {
        Some(v) => le_bytes(v),
        None => le_bytes(&e.to_vec()),
    }
}

/// Canonical (TF Serving typed) values → the `tensor_content` bytes.
fn to_content(d: DType, v: &Values) -> Bytes {
    use DType::*;
    match v {
        Values::F32(e) => e.to_le_bytes(),
        Values::F64(e) => e.to_le_bytes(),
        Values::I32(e) => match d.info().size {
            Some(1) => Bytes::from(e.iter().map(|x| x as u8).collect::<Vec<u8>>()),
            Some(2) => le_bytes(&e.iter().map(|x| x as u16).collect::<Vec<u16>>()),
            _ => ints_le_bytes(e),
        },
        Values::I64(e) => ints_le_bytes(e),
        Values::U32(e) => ints_le_bytes(e),
        Values::U64(e) => ints_le_bytes(e),
        Values::Bool(e) => Bytes::from(e.iter().map(|&b| b as u8).collect::<Vec<u8>>()),
        Values::Raw(b) => b.clone(),
        Values::Bytes(e) if d == String => {
            let mut out = Vec::new();
            for b in e {
                put_varint(&mut out, b.len() as u64);
            }
            for b in e {
                out.extend_from_slice(b);
            }
            Bytes::from(out)
        }
        Values::Bytes(_) => Bytes::new(),
    }
}

/// The most elements a short tensor is expanded to for EAS (64 Mi: 512 MiB of doubles).
pub const MAX_EXPAND: u64 = 1 << 26;

/// Canonical values filled to the shape's element count as TensorFlow reads them (the
/// last value repeated, or the dtype's zero when there is none), for EAS: its
/// open-source processor takes exactly the shape's count and aborts on anything else
/// (`Proto2Tensor` in DeepRec-AI/DeepRec serving/processor/serving/util.cc). The full
/// form means the same to every reader. Longer or exact lists are kept as they are.
fn full_count<'a>(t: &Tensor, d: DType, v: Cow<'a, Values>) -> Result<Cow<'a, Values>, BuildError> {
    let per = d.numbers_per_element();
    let have = v.len() / per;
    let Some(want) = t.shape.num_elements() else {
        return Ok(v);
    };
    if want <= have as u64 {
        return Ok(v);
    }
    if want > MAX_EXPAND {
        return Err(BuildError::TooLargeToExpand {
            name: t.name.clone(),
            shape: t.shape.sizes(),
            expected: want,
            got: have,
            limit: MAX_EXPAND,
        });
    }
    let want = want as usize;
    Ok(Cow::Owned(match v.as_ref() {
        Values::F32(e) => Values::F32(Elems::Vec(repeat_last(e.to_vec(), per, want))),
        Values::F64(e) => Values::F64(Elems::Vec(repeat_last(e.to_vec(), per, want))),
        Values::I32(e) => Values::I32(repeat_last(e.to_vec(), per, want).into()),
        Values::I64(e) => Values::I64(repeat_last(e.to_vec(), per, want).into()),
        Values::U32(e) => Values::U32(repeat_last(e.to_vec(), per, want).into()),
        Values::U64(e) => Values::U64(repeat_last(e.to_vec(), per, want).into()),
        Values::Bool(e) => Values::Bool(repeat_last(e.clone(), per, want)),
        Values::Bytes(e) => Values::Bytes(repeat_last(e.clone(), per, want)),
        Values::Raw(e) => Values::Raw(repeat_last(e.to_vec(), per, want).into()),
    }))
}

/// `v` (elements of `per` numbers each) extended to `want` elements by repeating its
/// last element, or with defaults when it has none.
fn repeat_last<T: Clone + Default>(mut v: Vec<T>, per: usize, want: usize) -> Vec<T> {
    let have = v.len() / per;
    v.truncate(have * per);
    let last = match have.checked_sub(1) {
        Some(i) => v.get(i * per..).map(<[T]>::to_vec).unwrap_or_default(),
        None => vec![T::default(); per],
    };
    v.reserve(want.saturating_sub(have) * per);
    for _ in have..want {
        v.extend_from_slice(&last);
    }
    v
}

/// Canonical values → the EAS field's values (halves become floats, by convention).
fn to_eas(d: DType, v: Cow<'_, Values>) -> Cow<'_, Values> {
    match (Float16::of(d), v.as_ref()) {
        (Some(h), Values::I32(e)) => Cow::Owned(Values::F32(Elems::Vec(
            e.iter().map(|x| h.value(x as u16)).collect(),
        ))),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_raw_fields_are_written_at_their_numbers_and_others_refused() {
        let mut msg = Message::new(WireFormat::TfServing, Kind::Request);
        msg.extra.push(("client_id", Bytes::from_static(b"c")));
        let out = encode(&msg, WireFormat::TfServing, TfsEncoding::AsIs).unwrap();
        // field 6, wire type 2, length 1, "c"
        assert_eq!(out, [0x32, 0x01, b'c']);
        msg.extra.push(("not_a_field", Bytes::from_static(b"x")));
        assert!(matches!(
            encode(&msg, WireFormat::TfServing, TfsEncoding::AsIs),
            Err(BuildError::UnknownRawField("not_a_field"))
        ));
    }
}
