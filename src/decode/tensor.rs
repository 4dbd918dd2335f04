//! Reading a `TensorProto` (TF Serving) or `ArrayProto` (EAS): dtype, shape and the value
//! fields, packed or not.

use bytes::Bytes;

use crate::dtype::{DTypeCode, Storage, ValueField};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::fields::{array_proto, array_shape, dim, tensor_proto, tensor_shape};
use crate::model::{Dim, Elems, Ints, Scope, Shape, Tensor, Values, WireFormat};

use super::{LAZY_VARINTS, Tally, Where, len_or_unknown, unknown, utf8, varint_or_unknown};
use crate::wire::reader::{PackedVarints, Reader, WireField, WireValue, packed_varints};

/// Accumulates one repeated value field across packed chunks and unpacked elements.
enum Acc {
    Fixed {
        chunks: Vec<Bytes>,
        size: usize,
    },
    Varint(Vec<u64>),
    /// One large packed run, kept as a checked view (decoded on access).
    Packed(PackedVarints),
    Bytes(Vec<Bytes>),
    Single(Bytes),
}

// `tensor` matches an `ArrayProto`'s dtype and shape by the `TensorProto` numbers.
const _: () = assert!(
    array_proto::DTYPE == tensor_proto::DTYPE
        && array_proto::ARRAY_SHAPE == tensor_proto::TENSOR_SHAPE
);

pub(super) fn tensor(
    mut r: Reader,
    wire: WireFormat,
    path: String,
    _entry_offset: usize,
    anomalies: &mut Tally,
) -> Result<Tensor, DecodeError> {
    let mut t = Tensor::new(String::new(), DTypeCode(0), Shape::default());
    let at = Where {
        path: &path,
        scope: Scope::Tensor,
    };
    let mut accs: Vec<(ValueField, Acc)> = Vec::new();
    let names: &[(u32, &'static str)] = match wire {
        WireFormat::Eas => array_proto::FIELDS,
        WireFormat::TfServing => tensor_proto::FIELDS,
    };
    while let Some(f) = r.next_field_named(names)? {
        if anomalies.over() {
            break;
        }
        let field = match wire {
            WireFormat::Eas => ValueField::from_eas_number(f.number),
            WireFormat::TfServing => ValueField::from_tf_number(f.number),
        };
        match (f.number, field) {
            // dtype and the shape have the same numbers in both messages (asserted below).
            (tensor_proto::DTYPE, _) => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, &mut anomalies.n) {
                    t.dtype = DTypeCode(v as i32);
                }
            }
            (tensor_proto::TENSOR_SHAPE, _) => {
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, &mut anomalies.n) {
                    let sub = r.nested(b, f.value_offset)?;
                    let name = if wire == WireFormat::Eas {
                        "array_shape"
                    } else {
                        "tensor_shape"
                    };
                    shape(
                        sub,
                        wire,
                        &mut t,
                        &format!("{path}.{name}"),
                        &mut anomalies.n,
                    )
                    .map_err(|e| e.within(name))?;
                }
            }
            (tensor_proto::VERSION_NUMBER, _) if wire == WireFormat::TfServing => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, &mut anomalies.n) {
                    t.version_number = v as i32;
                }
            }
            (tensor_proto::TENSOR_CONTENT, _) if wire == WireFormat::TfServing => {
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, &mut anomalies.n) {
                    t.content = if b.is_empty() { None } else { Some(b) };
                }
            }
            (_, Some(vf)) => {
                let pos = match accs.iter().position(|(k, _)| *k == vf) {
                    Some(p) => p,
                    None => {
                        accs.push((vf, new_acc(vf)));
                        accs.len() - 1
                    }
                };
                let ok = push_value(&mut accs[pos].1, vf, &f).map_err(|e| e.within(vf.name()))?;
                if !ok {
                    *anomalies += 1;
                    t.unknown.push(unknown(at, &f));
                } else if let (Acc::Bytes(out), WireValue::Len(_)) = (&mut accs[pos].1, &f.value) {
                    // The same field again and again (`string_val` of a batch of strings):
                    // read in one run, each element as the loop would push it.
                    if let Ok(tag) = u8::try_from(f.number << 3 | 2)
                        && tag < 0x80
                    {
                        r.len_run(tag, out);
                    }
                }
            }
            _ => {
                *anomalies += 1;
                t.unknown.push(unknown(at, &f));
            }
        }
    }
    accs.sort_by_key(|(k, _)| match wire {
        WireFormat::Eas => k.eas_number().unwrap_or(0),
        WireFormat::TfServing => k.tf_number(),
    });
    for (vf, acc) in accs {
        let v = finish(vf, acc);
        // A packed field of length 0 holds no elements: the same as absent, as in protobuf.
        if !v.is_empty() {
            t.fields.push((vf, v));
        }
    }
    // Consistency tells (`proto/eas/tf_predict.proto`): values the dtype does not read, or a
    // dtype number the format does not have.
    let own = t.value_field(wire);
    for (vf, v) in &t.fields {
        if Some(*vf) != own && !v.is_empty() {
            *anomalies += 1;
        }
    }
    let known = match wire {
        WireFormat::Eas => t.dtype.eas_known(),
        WireFormat::TfServing => t.dtype.dtype().is_some() || t.dtype.ref_of().is_some(),
    };
    if !known {
        *anomalies += 1;
    }
    if wire == WireFormat::TfServing
        && let (Some(c), Some(d)) = (&t.content, t.dtype.dtype())
        && let Some(sz) = d.info().size
        && c.len() % sz != 0
    {
        *anomalies += 1;
    }
    Ok(t)
}

fn new_acc(vf: ValueField) -> Acc {
    match vf.storage() {
        Storage::Fixed(size) => Acc::Fixed {
            chunks: Vec::new(),
            size,
        },
        Storage::Bytes => Acc::Bytes(Vec::new()),
        Storage::Single => Acc::Single(Bytes::new()),
        Storage::Varint => Acc::Varint(Vec::new()),
    }
}

/// Adds one occurrence of a value field. `Ok(false)`: the wire type does not fit.
fn push_value(acc: &mut Acc, vf: ValueField, f: &WireField) -> Result<bool, DecodeError> {
    // A large packed run on its own stays a view; a field given again is decoded.
    if let Acc::Packed(p) = acc {
        *acc = Acc::Varint(p.iter().collect());
    }
    if let (Acc::Varint(out), WireValue::Len(b)) = (&*acc, &f.value)
        && out.is_empty()
        && b.len() >= LAZY_VARINTS
        && vf != ValueField::Bool
    {
        *acc = Acc::Packed(PackedVarints::new(b.clone(), f.value_offset)?);
        return Ok(true);
    }
    match (acc, &f.value) {
        (Acc::Fixed { chunks, size }, WireValue::Len(b)) => {
            if b.len() % *size != 0 {
                return Err(DecodeError::new(
                    DecodeErrorKind::PackedLength {
                        field: vf.name(),
                        len: b.len(),
                        elem: *size,
                    },
                    f.value_offset,
                ));
            }
            chunks.push(b.clone());
        }
        (Acc::Fixed { chunks, size: 4 }, WireValue::I32(v)) => {
            chunks.push(Bytes::copy_from_slice(&v.to_le_bytes()))
        }
        (Acc::Fixed { chunks, size: 8 }, WireValue::I64(v)) => {
            chunks.push(Bytes::copy_from_slice(&v.to_le_bytes()))
        }
        (Acc::Varint(out), WireValue::Len(b)) => packed_varints(b, f.value_offset, out)?,
        (Acc::Varint(out), WireValue::Varint(v)) => out.push(*v),
        (Acc::Bytes(out), WireValue::Len(b)) => out.push(b.clone()),
        (Acc::Single(out), WireValue::Len(b)) => *out = b.clone(),
        _ => return Ok(false),
    }
    Ok(true)
}

fn finish(vf: ValueField, acc: Acc) -> Values {
    match acc {
        Acc::Fixed { chunks, size } => {
            let bytes = if chunks.len() == 1 {
                chunks.into_iter().next().unwrap_or_default()
            } else {
                let mut v = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
                for c in &chunks {
                    v.extend_from_slice(c);
                }
                Bytes::from(v)
            };
            if size == 4 {
                Values::F32(Elems::Le(bytes))
            } else {
                Values::F64(Elems::Le(bytes))
            }
        }
        Acc::Varint(v) => match vf {
            ValueField::Int | ValueField::Half => {
                Values::I32(v.into_iter().map(|x| x as i32).collect())
            }
            ValueField::Int64 => Values::I64(v.into_iter().map(|x| x as i64).collect()),
            ValueField::UInt32 => Values::U32(v.into_iter().map(|x| x as u32).collect()),
            ValueField::UInt64 => Values::U64(v.into()),
            _ => Values::Bool(v.into_iter().map(|x| x != 0).collect()),
        },
        Acc::Packed(p) => match vf {
            ValueField::Int | ValueField::Half => Values::I32(Ints::Packed(p)),
            ValueField::Int64 => Values::I64(Ints::Packed(p)),
            ValueField::UInt32 => Values::U32(Ints::Packed(p)),
            ValueField::UInt64 => Values::U64(Ints::Packed(p)),
            _ => Values::Bool(p.iter().map(|x| x != 0).collect()),
        },
        Acc::Bytes(v) => Values::Bytes(v),
        Acc::Single(b) => Values::Raw(b),
    }
}

pub(super) fn shape(
    mut r: Reader,
    wire: WireFormat,
    t: &mut Tensor,
    path: &str,
    anomalies: &mut usize,
) -> Result<(), DecodeError> {
    t.shape.present = true;
    let at = Where {
        path,
        scope: Scope::Shape,
    };
    let names: &[(u32, &'static str)] = match wire {
        WireFormat::Eas => array_shape::FIELDS,
        WireFormat::TfServing => tensor_shape::FIELDS,
    };
    while let Some(f) = r.next_field_named(names)? {
        match (wire, f.number) {
            (WireFormat::Eas, array_shape::DIM) => {
                let mut v = Vec::new();
                match &f.value {
                    WireValue::Len(b) => {
                        // The path names the dim that failed, counting the ones before it.
                        if let Err(e) = packed_varints(b, f.value_offset, &mut v) {
                            // Varints before the bad one: each ends in a byte below 0x80.
                            let before = b
                                .get(..e.offset().saturating_sub(f.value_offset))
                                .map_or(0, |p| p.iter().filter(|&&c| c < 0x80).count());
                            let i = t.shape.dims.len() + before;
                            return Err(e.within(format!("dim[{i}]")));
                        }
                    }
                    WireValue::Varint(x) => v.push(*x),
                    _ => {
                        *anomalies += 1;
                        t.unknown.push(unknown(at, &f));
                    }
                }
                t.shape.dims.extend(v.into_iter().map(|x| Dim {
                    size: x as i64,
                    name: String::new(),
                }));
            }
            (WireFormat::TfServing, tensor_shape::DIM) => {
                let i = t.shape.dims.len();
                if let Some(b) = len_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    let mut sub = r.nested(b, f.value_offset)?;
                    let mut d = Dim {
                        size: 0,
                        name: String::new(),
                    };
                    let dpath = format!("{path}.dim[{i}]");
                    let dim_at = Where {
                        path: &dpath,
                        scope: Scope::Dim(i),
                    };
                    while let Some(g) = sub
                        .next_field()
                        .map_err(|e| e.within(format!("dim[{i}]")))?
                    {
                        match g.number {
                            dim::SIZE => {
                                if let Some(v) =
                                    varint_or_unknown(&g, &mut t.unknown, dim_at, anomalies)
                                {
                                    d.size = v as i64;
                                }
                            }
                            dim::NAME => {
                                if let Some(b) =
                                    len_or_unknown(&g, &mut t.unknown, dim_at, anomalies)
                                {
                                    d.name = utf8(&b, g.value_offset)
                                        .map_err(|e| e.within(format!("dim[{i}].name")))?;
                                }
                            }
                            _ => {
                                *anomalies += 1;
                                t.unknown.push(unknown(dim_at, &g));
                            }
                        }
                    }
                    t.shape.dims.push(d);
                }
            }
            (WireFormat::TfServing, tensor_shape::UNKNOWN_RANK) => {
                if let Some(v) = varint_or_unknown(&f, &mut t.unknown, at, anomalies) {
                    t.shape.unknown_rank = v != 0;
                }
            }
            _ => {
                *anomalies += 1;
                t.unknown.push(unknown(at, &f));
            }
        }
    }
    Ok(())
}
