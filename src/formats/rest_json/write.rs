//! Requests to predict bodies.

use super::err;
use base64::Engine;

use crate::dtype::DType;
use crate::error::Error;
use crate::model::Message;

/// Writes a request as a TF Serving REST predict body, the columnar form
/// (`{"signature_name": ..., "inputs": {NAME: nested lists}}`), each tensor as the
/// server would build it (a short value list repeated, an empty one filled with
/// defaults). Returns the JSON and what the REST API cannot carry: `output_filter`
/// (a REST call returns every output of the signature), which a note names.
///
/// [`from_json`](super::from_json) of the result, with the same dtypes, gives the same request back.
///
/// ```
/// use tfreq::formats::{to_rest_json, from_json, Dtypes};
/// use tfreq::{DType, TFRequest};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[2, 2], DType::Float, vec![1.5f32, 2.0, 3.0, 4.0])?;
/// req.add_fetch("y");
/// let (json, notes) = to_rest_json(req.message())?;
/// assert_eq!(json, r#"{"signature_name":"serving_default","inputs":{"x":[[1.5,2],[3,4]]}}"#);
/// assert!(notes[0].contains("output_filter"));
/// let mut d = Dtypes::default();
/// d.set("x", DType::Float);
/// let back = from_json(json.as_bytes(), &d, &[], tfreq::WireFormat::Eas)?;
/// assert_eq!(back.tensors[0].shape.sizes(), vec![2, 2]);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn to_rest_json(msg: &Message) -> Result<(String, Vec<String>), Error> {
    let mut notes = Vec::new();
    if !msg.fetches.is_empty() {
        notes.push(format!(
            "TF Serving's REST API cannot carry output_filter ({}): the server runs and returns every output of the signature",
            msg.fetches.join(", ")
        ));
    }
    let mut s = String::from("{\"signature_name\":");
    s.push_str(&json_str(msg.effective_signature()));
    s.push_str(",\"inputs\":{");
    for (i, t) in msg.tensors.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&json_str(&t.name));
        s.push(':');
        let dtype = t
            .dtype
            .dtype()
            .filter(|d| rest_dtype(*d))
            .ok_or_else(|| {
                err(format!(
                    "input {:?}: TF Serving's REST API cannot carry {} (Conversion of JSON Value to type: {} is UNIMPLEMENTED)",
                    t.name, t.dtype, t.dtype
                ))
            })?;
        let e = t.elements(msg.wire);
        if matches!(
            e.fill,
            crate::model::Fill::BadShape | crate::model::Fill::BadContent
        ) {
            return Err(err(format!(
                "input {:?}: its values do not match its shape {}; TensorFlow refuses it",
                t.name, t.shape
            )));
        }
        let sizes = t.shape.sizes();
        let mut next = 0usize;
        nested(&mut s, &sizes, &mut || {
            let v = e.get(next);
            next += 1;
            let mut out = String::new();
            match v {
                Some(v) => scalar(&mut out, dtype, &v),
                None => out.push_str("null"),
            }
            out
        });
    }
    s.push_str("}}");
    Ok((s, notes))
}

/// The dtypes TF Serving's JSON reader (`json_tensor.cc`) converts.
fn rest_dtype(d: DType) -> bool {
    matches!(
        d,
        DType::Float
            | DType::Double
            | DType::Int32
            | DType::Int16
            | DType::Int8
            | DType::UInt8
            | DType::Int64
            | DType::UInt32
            | DType::UInt64
            | DType::Bool
            | DType::String
    )
}

fn nested(out: &mut String, dims: &[i64], leaf: &mut dyn FnMut() -> String) {
    match dims.split_first() {
        None => out.push_str(&leaf()),
        Some((&n, rest)) => {
            out.push('[');
            for i in 0..n.max(0) {
                if i > 0 {
                    out.push(',');
                }
                nested(out, rest, leaf);
            }
            out.push(']');
        }
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// One value: numbers as the shortest text that reads back the same (NaN and
/// infinities as `NaN`, `Infinity`, `-Infinity`, which TF Serving's reader accepts),
/// UTF-8 strings as strings, other bytes as `{"b64": ...}`.
fn scalar(out: &mut String, dtype: DType, v: &crate::model::Scalar) {
    use crate::model::Scalar;
    fn float(out: &mut String, x: f64, text: String) {
        if x.is_nan() {
            out.push_str("NaN");
        } else if x.is_infinite() {
            out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            out.push_str(&text);
        }
    }
    match v {
        Scalar::F32(x) => float(out, f64::from(*x), x.to_string()),
        Scalar::F64(x) => float(out, *x, x.to_string()),
        Scalar::I64(x) => out.push_str(&x.to_string()),
        Scalar::U64(x) => out.push_str(&x.to_string()),
        Scalar::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Scalar::Bytes(b) if dtype == DType::String => match std::str::from_utf8(b) {
            Ok(s) => out.push_str(&json_str(s)),
            Err(_) => {
                out.push_str("{\"b64\":\"");
                out.push_str(&base64::engine::general_purpose::STANDARD.encode(b));
                out.push_str("\"}");
            }
        },
        other => out.push_str(&json_str(&other.to_string())),
    }
}

// ---------------------------------------------------------------------------------------
// :classify / :regress bodies
// ---------------------------------------------------------------------------------------
