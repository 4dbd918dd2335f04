//! Predict bodies (`inputs` columnar or `instances` rows) to requests, as `json_tensor.cc` reads them.

use super::dtypes::Dtypes;
use super::err;
use super::json::{Json, nan_tokens, parse_json};
use base64::Engine;
use bytes::Bytes;

use crate::builder::{FeedValues, TFRequest};
use crate::dtype::DType;
use crate::error::{Error, ErrorDetail};
use crate::model::{Message, WireFormat};

/// Shape of a nested value by TF Serving's rule (element 0 at each level), checking
/// that every list matches and every leaf sits at depth == rank.
fn shape_of(v: &Json, name: &str) -> Result<Vec<i64>, Error> {
    let mut shape = Vec::new();
    let mut cur = v;
    while let Json::Array(a) = cur {
        shape.push(a.len() as i64);
        match a.first() {
            Some(x) => cur = x,
            None => break,
        }
    }
    check_shape(v, &shape, 0, name)?;
    Ok(shape)
}

fn check_shape(v: &Json, shape: &[i64], level: usize, name: &str) -> Result<(), Error> {
    match (v, shape.get(level)) {
        (Json::Array(a), Some(&n)) => {
            if a.len() as i64 != n {
                return Err(err(format!(
                    "input {name:?}: Encountered list at unexpected size: {} at level: {level} expected size: {n}",
                    a.len()
                )));
            }
            a.iter()
                .try_for_each(|x| check_shape(x, shape, level + 1, name))
        }
        (Json::Array(_), None) | (_, Some(_)) => Err(err(format!(
            "input {name:?}: JSON Value: {v} found at incorrect level: {} (rank is {})",
            level + 1,
            shape.len()
        ))),
        (_, None) => Ok(()),
    }
}

fn leaves<'a>(v: &'a Json, out: &mut Vec<&'a Json>) {
    match v {
        Json::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        x => out.push(x),
    }
}

fn values(name: &str, dtype: DType, leaves: &[&Json]) -> Result<FeedValues, Error> {
    let wrong = |v: &Json| {
        err(format!(
            "input {name:?}: JSON Value: {v} Type: {} is not of expected type: {}",
            v.type_name(),
            dtype.name()
        ))
    };
    let num = |v: &Json| match v {
        Json::Number(n) => n.as_f64().ok_or_else(|| wrong(v)),
        Json::NonFinite(x) => Ok(*x),
        _ => Err(wrong(v)),
    };
    let int = |v: &Json| match v {
        Json::Number(n) => n.as_i64().ok_or_else(|| wrong(v)),
        _ => Err(wrong(v)),
    };
    let uint = |v: &Json| match v {
        Json::Number(n) => n.as_u64().ok_or_else(|| wrong(v)),
        _ => Err(wrong(v)),
    };
    Ok(match dtype {
        DType::Float => leaves
            .iter()
            .map(|v| num(v).map(|x| x as f32))
            .collect::<Result<Vec<_>, _>>()?
            .into(),
        DType::Double => leaves
            .iter()
            .map(|v| num(v))
            .collect::<Result<Vec<_>, _>>()?
            .into(),
        DType::Int32 | DType::Int16 | DType::Int8 | DType::UInt8 | DType::Int64 => leaves
            .iter()
            .map(|v| int(v))
            .collect::<Result<Vec<_>, _>>()?
            .into(),
        DType::UInt32 | DType::UInt64 => leaves
            .iter()
            .map(|v| uint(v))
            .collect::<Result<Vec<_>, _>>()?
            .into(),
        DType::Bool => leaves
            .iter()
            .map(|v| match v {
                Json::Bool(b) => Ok(*b),
                _ => Err(wrong(v)),
            })
            .collect::<Result<Vec<_>, _>>()?
            .into(),
        DType::String => {
            let mut out = Vec::with_capacity(leaves.len());
            for v in leaves {
                out.push(match v {
                    Json::String(s) => Bytes::from(s.clone().into_bytes()),
                    o if o.is_b64() => match o.get("b64") {
                        Some(Json::String(s)) => Bytes::from(
                            base64::engine::general_purpose::STANDARD
                                .decode(s)
                                .map_err(|_| {
                                    err(format!("input {name:?}: Unable to base64 decode"))
                                })?,
                        ),
                        _ => return Err(wrong(v)),
                    },
                    _ => return Err(wrong(v)),
                });
            }
            FeedValues::Str(out)
        }
        d => {
            return Err(err(format!(
                "input {name:?}: TF Serving's REST API cannot carry {} (Conversion of JSON Value to type: {} is UNIMPLEMENTED)",
                d.name(),
                d.name()
            )));
        }
    })
}

/// A REST predict request → a request for `wire`, with `fetches` as `output_filter`
/// (REST itself cannot say which outputs to fetch).
pub fn from_json(
    json: &[u8],
    dtypes: &Dtypes,
    fetches: &[String],
    wire: WireFormat,
) -> Result<Message, Error> {
    from_value(&parse_json(json)?, dtypes, fetches, wire)
}

/// Every request of a file holding one REST request, or several as JSON lines (one
/// object after another).
pub fn from_json_lines(
    json: &[u8],
    dtypes: &Dtypes,
    fetches: &[String],
    wire: WireFormat,
) -> Result<Vec<Message>, Error> {
    let mut out = Vec::new();
    for_each_json_line(json, dtypes, fetches, wire, |_, m| out.push(m))?;
    Ok(out)
}

/// Calls `f(index, request)` for each REST request of a JSON-lines file, one at a time
/// (nothing is collected, so a large log is read in bounded memory). Returns the count.
pub fn for_each_json_line(
    json: &[u8],
    dtypes: &Dtypes,
    fetches: &[String],
    wire: WireFormat,
    mut f: impl FnMut(usize, Message),
) -> Result<usize, Error> {
    each_value(json, |n, v| {
        f(n, from_value(v, dtypes, fetches, wire)?);
        Ok(())
    })
}

/// Calls `f(index, value)` for each JSON value of a file (one, or several as JSON
/// lines); an error of `f` is returned naming the request and its offset. Returns the
/// count.
pub(super) fn each_value(
    json: &[u8],
    mut f: impl FnMut(usize, &Json) -> Result<(), Error>,
) -> Result<usize, Error> {
    let json = nan_tokens(json);
    let mut it = serde_json::Deserializer::from_slice(&json).into_iter::<Json>();
    let mut n = 0;
    loop {
        let at = it.byte_offset();
        match it.next() {
            None => break,
            Some(Ok(v)) => {
                f(n, &v).map_err(|source| {
                    Error::from(ErrorDetail::InRequest {
                        request: n,
                        offset: at,
                        source,
                    })
                })?;
                n += 1;
            }
            Some(Err(e)) => {
                return Err(err(format!(
                    "request {n} (at byte {at}): JSON parse error: {e}"
                )));
            }
        }
    }
    if n == 0 {
        return Err(err("JSON Parse error: The document is empty"));
    }
    Ok(n)
}

/// A parsed REST predict request → a request (see [`from_json`]).
pub fn from_value(
    v: &Json,
    dtypes: &Dtypes,
    fetches: &[String],
    wire: WireFormat,
) -> Result<Message, Error> {
    let Json::Object(_) = &v else {
        return Err(err("JSON Parse error: the request body is not an object"));
    };
    let sig = match v.get("signature_name") {
        None => crate::model::DEFAULT_SIGNATURE.to_string(),
        Some(Json::String(s)) => s.clone(),
        Some(_) => return Err(err("'signature_name' key must be a string value.")),
    };
    let dtypes = dtypes.for_signature(&sig)?;
    let feeds: Vec<(String, Json)> = match (v.get("inputs"), v.get("instances")) {
        (Some(_), Some(_)) => {
            return Err(err(
                "Not formatted correctly expecting only one of 'inputs' or 'instances' keys to exist",
            ));
        }
        (None, None) => return Err(err("Missing 'inputs' or 'instances' key")),
        (Some(inputs), None) => columnar(inputs, dtypes)?,
        (None, Some(instances)) => rows(instances, dtypes)?,
    };
    let mut req = TFRequest::for_wire(sig, wire);
    for (name, value) in &feeds {
        let dtype = dtypes.get(name).ok_or_else(|| {
            Error::from(ErrorDetail::NoDtypeFor {
                input: name.clone(),
            })
        })?;
        let shape = shape_of(value, name)?;
        let mut l = Vec::new();
        leaves(value, &mut l);
        let vals = values(name, dtype, &l)?;
        req.add_feed(name.clone(), &shape, dtype, vals)?;
    }
    for f in fetches {
        req.add_fetch(f.clone());
    }
    Ok(req.into_message())
}

fn columnar(inputs: &Json, dtypes: &Dtypes) -> Result<Vec<(String, Json)>, Error> {
    let single = dtypes.single_input();
    match inputs {
        Json::Object(o) if !inputs.is_b64() => {
            if dtypes.complete {
                // TF Serving loops over the signature: every input must be there,
                // extra keys are ignored.
                let mut out = Vec::new();
                for (name, v) in o {
                    if dtypes.get(name).is_some() {
                        out.push((name.clone(), v.clone()));
                    }
                }
                for (name, _) in &dtypes.inputs {
                    if !o.iter().any(|(k, _)| k == name) {
                        return Err(err(format!(
                            "Missing named input: {name} in 'inputs' object."
                        )));
                    }
                }
                Ok(out)
            } else {
                Ok(o.clone())
            }
        }
        other => match single {
            Some(name) => Ok(vec![(name, other.clone())]),
            None => Err(ErrorDetail::BareInputs.into()),
        },
    }
}

fn rows(instances: &Json, dtypes: &Dtypes) -> Result<Vec<(String, Json)>, Error> {
    let Json::Array(rows) = instances else {
        return Err(err("Expecting 'instances' to be an list/array"));
    };
    let Some(first) = rows.first() else {
        return Err(err("No values in 'instances' array"));
    };
    match first {
        Json::Object(o0) if !first.is_b64() => {
            let names: Vec<&String> = o0.iter().map(|(k, _)| k).collect();
            let mut cols: Vec<(String, Vec<Json>)> =
                names.iter().map(|n| ((*n).clone(), Vec::new())).collect();
            for (i, row) in rows.iter().enumerate() {
                let Json::Object(o) = row else {
                    return Err(err(format!(
                        "Failed to process element: {i} of 'instances' list: not an object like element 0"
                    )));
                };
                let same = o.len() == names.len() && o.iter().all(|(k, _)| names.contains(&k));
                if !same {
                    let keys: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                    return Err(err(format!(
                        "Failed to process element: {i} of 'instances' list. JSON object: keys must be equal to: {}",
                        keys.join(",")
                    )));
                }
                for (name, col) in cols.iter_mut() {
                    if let Some(v) = row.get(name) {
                        col.push(v.clone());
                    }
                }
            }
            if dtypes.complete {
                for (name, _) in &dtypes.inputs {
                    if !names.contains(&name) {
                        return Err(err(format!(
                            "Failed to process element: 0 of 'instances' list. JSON object: keys must be equal to the signature inputs; {name:?} is missing"
                        )));
                    }
                }
            }
            // Each row's shape must agree: shape_of over [rows] checks it.
            Ok(cols.into_iter().map(|(n, c)| (n, Json::Array(c))).collect())
        }
        _ => match dtypes.single_input() {
            Some(name) => Ok(vec![(name, instances.clone())]),
            None => Err(err(
                "instances is a plain list, but expecting list of objects as multiple input tensors required as per tensorinfo_map",
            )),
        },
    }
}
