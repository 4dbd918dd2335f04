//! TF Serving REST predict requests (<https://www.tensorflow.org/tfx/serving/api_rest>) → [`Message`].
//!
//! JSON carries no dtypes: TF Serving takes each input's dtype from the signature, so
//! the caller gives them ([`Dtypes`]: an explicit annotation per input, or the
//! signature read from GetModelMetadata JSON with [`dtypes_from_metadata`]). The
//! parser follows `json_tensor.cc`: `signature_name`, exactly one of `inputs`
//! (columnar) or `instances` (row), shapes from the nesting (every list as long as its
//! first sibling, leaves at the same depth), rows concatenated on a new 0th dim,
//! `{"b64": ...}` for bytes, integers only for integer dtypes. Keys keep their order
//! in the file, so feeds are added in that order, as an SDK user would add them.
//! Values go through the builder's checks (count, range, dtype).
//!
//! ```
//! use tfreq::formats::rest_json::{from_json, Dtypes};
//! use tfreq::{DType, WireFormat};
//! let json = br#"{"signature_name": "serving_default", "inputs": {"x": [[1, 2]]}}"#;
//! let mut d = Dtypes::default();
//! d.set("x", DType::Float);
//! let msg = from_json(json, &d, &["y".to_string()], WireFormat::Eas)?;
//! assert_eq!(msg.tensors[0].shape.sizes(), vec![1, 2]);
//! assert_eq!(msg.fetches, vec!["y"]);
//! # Ok::<(), tfreq::Error>(())
//! ```

use std::fmt;

use base64::Engine;
use bytes::Bytes;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::builder::{FeedValues, TFRequest};
use crate::dtype::DType;
use crate::error::{Error, ErrorDetail};
use crate::model::{FeatureValues, Message, Method, WireFormat};

/// A JSON value whose objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// `NaN`, `Infinity` or `-Infinity`, which TF Serving's REST layer parses as numbers
    /// (rapidjson's `kParseNanAndInfFlag` in tensorflow_serving/util/json_tensor.cc).
    NonFinite(f64),
    /// A string.
    String(String),
    /// A list.
    Array(Vec<Json>),
    /// An object, in file order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value under `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(o) => o.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) | Json::NonFinite(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "list",
            Json::Object(_) => "object",
        }
    }

    fn is_b64(&self) -> bool {
        matches!(self, Json::Object(o) if o.len() == 1 && o.first().is_some_and(|(k, _)| k == "b64"))
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Number(n) => write!(f, "{n}"),
            Json::NonFinite(x) if x.is_nan() => f.write_str("NaN"),
            Json::NonFinite(x) if *x > 0.0 => f.write_str("Infinity"),
            Json::NonFinite(_) => f.write_str("-Infinity"),
            Json::String(s) => write!(f, "{s:?}"),
            Json::Array(a) => write!(f, "[{} items]", a.len()),
            Json::Object(o) => write!(f, "{{{} keys}}", o.len()),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(v)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("not a finite number"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(non_finite(s).unwrap_or_else(|| Json::String(s.to_string())))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(non_finite(&s).unwrap_or(Json::String(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v: Vec<(String, Json)> = Vec::new();
                while let Some((k, x)) = a.next_entry::<String, Json>()? {
                    // A repeated key: keep the first, which rapidjson's FindMember
                    // (what TF Serving uses) finds.
                    if !v.iter().any(|(e, _)| *e == k) {
                        v.push((k, x));
                    }
                }
                Ok(Json::Object(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses JSON keeping object key order.
pub fn parse(bytes: &[u8]) -> Result<Json, Error> {
    serde_json::from_slice(&nan_tokens(bytes))
        .map_err(|e| Error::from(ErrorDetail::Format(format!("JSON parse error: {e}"))))
}

/// Each input's dtype, by name (and optionally the signature's input set, which makes
/// missing inputs an error and extra keys ignored, as TF Serving does).
#[derive(Debug, Clone, Default)]
pub struct Dtypes {
    inputs: Vec<(String, DType)>,
    /// Whether the list is the whole signature (from model metadata).
    pub complete: bool,
    /// Every signature's dtypes, when made from a whole model ([`dtypes_for_model`]):
    /// each body is then read against the signature it names, as TF Serving reads it.
    signatures: Vec<(String, Result<Dtypes, String>)>,
}

impl Dtypes {
    /// The dtypes a body naming `signature` is read with: that signature's, when these
    /// were made from a whole model ([`dtypes_for_model`]), else these.
    pub fn for_signature(&self, signature: &str) -> Result<&Dtypes, Error> {
        if self.signatures.is_empty() {
            return Ok(self);
        }
        match self.signatures.iter().find(|(n, _)| n == signature) {
            Some((_, Ok(d))) => Ok(d),
            Some((_, Err(e))) => Err(err(e.clone())),
            None => {
                let names: Vec<&str> = self.signatures.iter().map(|(n, _)| n.as_str()).collect();
                Err(err(format!(
                    "Serving signature name: {signature:?} not found in signature def (has: {})",
                    names.join(", ")
                )))
            }
        }
    }

    /// Sets one input's dtype.
    pub fn set(&mut self, name: impl Into<String>, dtype: DType) {
        let name = name.into();
        self.inputs.retain(|(n, _)| *n != name);
        self.inputs.push((name, dtype));
    }

    /// The name of the only input, when there is exactly one.
    fn single_input(&self) -> Option<String> {
        match self.inputs.as_slice() {
            [(name, _)] => Some(name.clone()),
            _ => None,
        }
    }

    /// The dtype of an input.
    pub fn get(&self, name: &str) -> Option<DType> {
        self.inputs.iter().find(|(n, _)| n == name).map(|(_, d)| *d)
    }

    /// Parses an annotation `name=DT_FLOAT` (or `name=float32`).
    ///
    /// ```
    /// let mut d = tfreq::formats::rest_json::Dtypes::default();
    /// d.annotate("x=DT_INT64")?;
    /// assert_eq!(d.get("x"), Some(tfreq::DType::Int64));
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn annotate(&mut self, s: &str) -> Result<(), Error> {
        let (name, dt) = s.rsplit_once('=').ok_or_else(|| {
            Error::from(ErrorDetail::Format(format!(
                "{s:?}: expected NAME=DTYPE (e.g. x=DT_FLOAT)"
            )))
        })?;
        let dt = dtype_named(dt)?;
        self.set(name, dt);
        for d in self
            .signatures
            .iter_mut()
            .filter_map(|(_, d)| d.as_mut().ok())
        {
            d.set(name, dt);
        }
        Ok(())
    }
}

/// The input dtypes of every signature of a model (see [`dtypes_from_model`]): each
/// REST body is read against the signature it names (`serving_default` when it names
/// none), as TF Serving reads it.
///
/// ```
/// let (model, _) = tfreq::formats::savedmodel::read_model("tests/data/models/two_sigs".as_ref())?;
/// let d = tfreq::formats::rest_json::dtypes_for_model(&model)?;
/// assert!(d.for_signature("predict_images")?.get("images").is_some());
/// assert!(d.for_signature("serving_default")?.get("images").is_none());
/// assert!(d.for_signature("nope").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dtypes_for_model(model: &crate::signature::ModelSignatures) -> Result<Dtypes, Error> {
    let mg = model
        .meta_graph("serve")
        .or_else(|| model.meta_graphs.first())
        .ok_or_else(|| err("the model has no meta graph"))?;
    let signatures = mg
        .signatures
        .keys()
        .map(|n| {
            (
                n.clone(),
                dtypes_from_model(model, n).map_err(|e| e.to_string()),
            )
        })
        .collect();
    Ok(Dtypes {
        complete: true,
        signatures,
        ..Dtypes::default()
    })
}

fn dtype_named(dt: &str) -> Result<DType, Error> {
    DType::from_name(dt)
        .or_else(|| DType::all().find(|d| d.info().short == dt))
        .ok_or_else(|| {
            Error::from(ErrorDetail::Format(format!(
                "{dt:?} is not a dtype name (DT_FLOAT, float32, ...)"
            )))
        })
}

/// The input dtypes of `signature` in a model's signatures (read by
/// [`crate::formats::savedmodel::read_model`] from a SavedModel, GetModelMetadata JSON
/// or `saved_model_cli` text), from the meta graph tagged `serve` (else the first).
/// The list is complete: every input must then be present and extra keys are ignored.
pub fn dtypes_from_model(
    model: &crate::signature::ModelSignatures,
    signature: &str,
) -> Result<Dtypes, Error> {
    let mg = model
        .meta_graph("serve")
        .or_else(|| model.meta_graphs.first())
        .ok_or_else(|| err("the model has no meta graph"))?;
    let sig = mg.signatures.get(signature).ok_or_else(|| {
        let names: Vec<&str> = mg.signatures.keys().map(String::as_str).collect();
        err(format!(
            "Serving signature name: {signature:?} not found in signature def (has: {})",
            names.join(", ")
        ))
    })?;
    if sig.inputs.is_empty() {
        // TF Serving's FillPredictRequestFromJson refuses a body for such a signature.
        return Err(err(format!(
            "Failed to get input map for signature: {}",
            if signature.is_empty() {
                "DEFAULT"
            } else {
                signature
            }
        )));
    }
    let mut d = Dtypes {
        complete: true,
        ..Dtypes::default()
    };
    for (alias, spec) in &sig.inputs {
        let dt = spec.dtype.dtype().ok_or_else(|| {
            err(format!(
                "input {alias:?} of {signature:?} has dtype {}, which has no JSON form",
                spec.dtype
            ))
        })?;
        d.set(alias.clone(), dt);
    }
    Ok(d)
}

/// The input dtypes of `signature` from GetModelMetadata JSON (<https://www.tensorflow.org/tfx/serving/api_rest>).
///
/// ```
/// let json = std::fs::read("tests/data/models/faq.metadata.json")?;
/// let d = tfreq::formats::rest_json::dtypes_from_metadata(&json, "serving_default")?;
/// assert_eq!(d.get("threshold"), Some(tfreq::DType::Float));
/// assert!(d.complete);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dtypes_from_metadata(json: &[u8], signature: &str) -> Result<Dtypes, Error> {
    let m = crate::formats::savedmodel::from_metadata_json(json, "model metadata")
        .map_err(|e| err(e.to_string()))?;
    dtypes_from_model(&m, signature)
}

/// What a bare `NaN`, `Infinity` or `-Infinity` becomes before serde_json reads the
/// text: a string no JSON producer writes (it starts with a NUL), read back as
/// [`Json::NonFinite`].
const NON_FINITE: [(&str, &str, f64); 3] = [
    ("-Infinity", "\\u0000tfreq:-Infinity", f64::NEG_INFINITY),
    ("Infinity", "\\u0000tfreq:Infinity", f64::INFINITY),
    ("NaN", "\\u0000tfreq:NaN", f64::NAN),
];

fn non_finite(s: &str) -> Option<Json> {
    let rest = s.strip_prefix("\0tfreq:")?;
    NON_FINITE
        .iter()
        .find(|(t, _, _)| *t == rest)
        .map(|(_, _, x)| Json::NonFinite(*x))
}

/// The JSON text with every bare `NaN`, `Infinity` and `-Infinity` (outside strings)
/// made a placeholder string, so serde_json, which refuses them, reads what TF Serving's
/// REST layer reads. Text without them is returned as is.
pub(crate) fn nan_tokens(b: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !b.iter().any(|&c| c == b'N' || c == b'I') {
        return std::borrow::Cow::Borrowed(b);
    }
    let mut out = Vec::with_capacity(b.len() + 16);
    let (mut i, mut in_str, mut esc) = (0, false, false);
    'scan: while i < b.len() {
        let c = b[i];
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
        } else if c == b'"' {
            in_str = true;
        } else {
            for (tok, rep, _) in NON_FINITE {
                if b[i..].starts_with(tok.as_bytes()) {
                    out.push(b'"');
                    out.extend_from_slice(rep.as_bytes());
                    out.push(b'"');
                    i += tok.len();
                    continue 'scan;
                }
            }
        }
        out.push(c);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

fn err(s: impl Into<String>) -> Error {
    Error::from(ErrorDetail::Format(s.into()))
}

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
        DType::Float => leaves.iter().map(|v| num(v).map(|x| x as f32)).collect::<Result<Vec<_>, _>>()?.into(),
        DType::Double => leaves.iter().map(|v| num(v)).collect::<Result<Vec<_>, _>>()?.into(),
        DType::Int32 | DType::Int16 | DType::Int8 | DType::UInt8 | DType::Int64 => {
            leaves.iter().map(|v| int(v)).collect::<Result<Vec<_>, _>>()?.into()
        }
        DType::UInt32 | DType::UInt64 => {
            leaves.iter().map(|v| uint(v)).collect::<Result<Vec<_>, _>>()?.into()
        }
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
                                .map_err(|_| err(format!("input {name:?}: Unable to base64 decode")))?,
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
            )))
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
    from_value(&parse(json)?, dtypes, fetches, wire)
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

/// [`for_each_json_line`] for a file that may also hold TF Serving's `:classify` /
/// `:regress` bodies: an object with `"examples"` and neither `"inputs"` nor
/// `"instances"` is read by [`examples_from_value`] as a request that cannot say whether
/// it classifies or regresses ([`Method::ClassifyOrRegress`]: the body alone does not
/// say, its URL does); a predict body needs `dtypes` ([`ErrorDetail::NoDtypes`] without).
pub(crate) fn for_each_request_line(
    json: &[u8],
    dtypes: Option<&Dtypes>,
    wire: WireFormat,
    mut f: impl FnMut(usize, Message),
) -> Result<usize, Error> {
    let examples = RestCall::method(Method::ClassifyOrRegress);
    each_value(json, |n, v| {
        let m = if is_examples_body(v) {
            examples_from_value(v, &examples)?
        } else {
            let d = dtypes.ok_or_else(|| Error::from(ErrorDetail::NoDtypes))?;
            from_value(v, d, &[], wire)?
        };
        f(n, m);
        Ok(())
    })
}

/// Whether a REST body is a `:classify`/`:regress` one: `"examples"` and neither of a
/// predict body's `"inputs"` and `"instances"`.
pub(crate) fn is_examples_body(v: &Json) -> bool {
    v.get("examples").is_some() && v.get("inputs").is_none() && v.get("instances").is_none()
}

/// Calls `f(index, value)` for each JSON value of a file (one, or several as JSON
/// lines); an error of `f` is returned naming the request and its offset. Returns the
/// count.
fn each_value(
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
                )))
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
        (Some(_), Some(_)) => return Err(err(
            "Not formatted correctly expecting only one of 'inputs' or 'instances' keys to exist",
        )),
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
                    return Err(err(format!("Failed to process element: {i} of 'instances' list: not an object like element 0")));
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

/// Writes a request as a TF Serving REST predict body, the columnar form
/// (`{"signature_name": ..., "inputs": {NAME: nested lists}}`), each tensor as the
/// server would build it (a short value list repeated, an empty one filled with
/// defaults). Returns the JSON and what the REST API cannot carry: `output_filter`
/// (a REST call returns every output of the signature), which a note names.
///
/// [`from_json`] of the result, with the same dtypes, gives the same request back.
///
/// ```
/// use tfreq::formats::rest_json::{to_json, from_json, Dtypes};
/// use tfreq::{DType, TFRequest};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[2, 2], DType::Float, vec![1.5f32, 2.0, 3.0, 4.0])?;
/// req.add_fetch("y");
/// let (json, notes) = to_json(req.message())?;
/// assert_eq!(json, r#"{"signature_name":"serving_default","inputs":{"x":[[1.5,2],[3,4]]}}"#);
/// assert!(notes[0].contains("output_filter"));
/// let mut d = Dtypes::default();
/// d.set("x", DType::Float);
/// let back = from_json(json.as_bytes(), &d, &[], tfreq::WireFormat::Eas)?;
/// assert_eq!(back.tensors[0].shape.sizes(), vec![2, 2]);
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn to_json(msg: &Message) -> Result<(String, Vec<String>), Error> {
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

/// What a TF Serving REST URL names: the model, its version or label, and the method
/// (`POST /v1/models/NAME[/versions/N|/labels/L]:classify|regress|predict`).
///
/// The path is read as TF Serving's handler reads it: the pattern
/// `/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?:(classify|regress|predict)`
/// (`kPredictionApiGegex`, tensorflow_serving/model_servers/http_rest_api_util.cc), the
/// name and label percent-decoded (`DecodeArg`, curl's unescape). TF Serving matches the
/// pattern ignoring case but dispatches only the lowercase method names, so `:Classify`
/// is refused here as the server answers it ("Malformed request").
///
/// ```
/// use tfreq::formats::rest_json::RestCall;
/// use tfreq::Method;
/// let c = RestCall::parse("http://localhost:8501/v1/models/wide%20deep/versions/3:regress")?;
/// assert_eq!((c.method, c.model.as_str(), c.version), (Method::Regress, "wide deep", Some(3)));
/// # Ok::<(), tfreq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    /// [`Method::Classify`], [`Method::Regress`] or [`Method::Predict`].
    pub method: Method,
    /// The model name (`model_spec.name`); empty when only the method is known.
    pub model: String,
    /// `/versions/N` (`model_spec.version`).
    pub version: Option<i64>,
    /// `/labels/L` (`model_spec.version_label`).
    pub label: Option<String>,
}

impl RestCall {
    /// A call known only by its method (no model name, version or label).
    pub fn method(method: Method) -> RestCall {
        RestCall {
            method,
            model: String::new(),
            version: None,
            label: None,
        }
    }

    /// Reads a URL or a bare path (see [`RestCall`]); a query string is ignored.
    pub fn parse(url: &str) -> Result<RestCall, Error> {
        let bad = |why: &str| {
            err(format!(
                "{url:?}: {why} (expected .../v1/models/NAME[/versions/N|/labels/L]:classify, :regress or :predict)"
            ))
        };
        let path = url.split(['?', '#']).next().unwrap_or_default();
        let lower = path.to_ascii_lowercase();
        let at = lower
            .find("/v1/models/")
            .ok_or_else(|| bad("no /v1/models/ in the path"))?;
        let rest = &path[at + "/v1/models/".len()..];
        let (spec, method) = rest
            .rsplit_once(':')
            .ok_or_else(|| bad("no :METHOD at the end"))?;
        let method = match method {
            "classify" => Method::Classify,
            "regress" => Method::Regress,
            "predict" => Method::Predict,
            m if ["classify", "regress", "predict"].contains(&m.to_ascii_lowercase().as_str()) => {
                return Err(bad(&format!(
                    "TF Serving dispatches only the lowercase method, {m:?} gets \"Malformed request\""
                )))
            }
            m => return Err(bad(&format!("unknown method {m:?}"))),
        };
        let mut parts = spec.split('/');
        let name = parts.next().unwrap_or_default();
        if name.is_empty() || name.contains(':') {
            return Err(bad("no model name"));
        }
        let mut call = RestCall::method(method);
        call.model = percent_decode(name);
        match (parts.next(), parts.next(), parts.next()) {
            (None, _, _) => {}
            (Some(v), Some(n), None)
                if v.eq_ignore_ascii_case("versions")
                    && !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit()) =>
            {
                call.version = Some(n.parse().map_err(|_| {
                    bad(&format!(
                        "Failed to convert version: {n} to numeric (TF Serving's words)"
                    ))
                })?);
            }
            (Some(l), Some(n), None) if l.eq_ignore_ascii_case("labels") && !n.is_empty() => {
                call.label = Some(percent_decode(n));
            }
            _ => return Err(bad("unexpected path after the model name")),
        }
        Ok(call)
    }
}

/// `%XX` sequences as bytes (curl_easy_unescape: a `%` not followed by two hex digits
/// stays as it is; `+` is not a space).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A TF Serving REST `:classify` or `:regress` body → the `ClassificationRequest` or
/// `RegressionRequest` TF Serving makes of it (`call.method` says which: the two bodies
/// are the same).
///
/// Follows `FillClassifyRegressRequestFromJson`, `MakeExampleFromJsonObject` and
/// `AddValueToFeature` in tensorflow_serving/util/json_tensor.cc:
///
/// - `model_spec` is the URL's name, version and label
///   (`FillModelSpecWithNameVersionAndLabel`, http_rest_api_util.cc), then the body's
///   `signature_name`, which must be a string;
/// - `"context"`, when present, makes the input an `example_list_with_context` whose
///   context is that object; `"examples"` must be a non-empty list of objects;
/// - each key of an example object is a feature; its value is one value or a list of
///   them (a list of lists is refused). A number written with a fraction or an
///   exponent (rapidjson's `IsDouble`, which also holds for `NaN`, `Infinity` and an
///   integer too large for 64 bits) is a `float_list` value, rounded from the double to
///   float; any other number is an `int64_list` value (one above 2^63-1 is refused:
///   "has uint64_t element"); `true`/`false` are int64 1/0; a string or
///   `{"b64": "..."}` is a `bytes_list` value; every value of a feature must be of its
///   first value's kind; an empty list is a feature with no kind set.
///
/// Errors quote TF Serving's words and say where (`examples[1]`, the feature).
/// Differences, both in bodies no client writes: a feature name given twice in one
/// object keeps its first value here, TF Serving its last; `-0` is read as a float here
/// (serde_json) and as int64 0 by TF Serving.
///
/// ```
/// use tfreq::formats::rest_json::{examples_from_json, RestCall};
/// use tfreq::{FeatureValues, Method};
/// let body = br#"{"examples": [{"x": [1.0, 2], "age": 30}]}"#;
/// let e = examples_from_json(body, &RestCall::method(Method::Classify)).unwrap_err();
/// assert!(e.to_string().contains("Unexpected element type in feature: x expecting type: float"));
/// let body = br#"{"signature_name": "s", "examples": [{"x": [1.0, 2.5], "age": 30, "tag": {"b64": "YQ=="}}]}"#;
/// let call = RestCall::parse("/v1/models/m:classify")?;
/// let msg = examples_from_json(body, &call)?;
/// assert_eq!(msg.method, Method::Classify);
/// let ex = &msg.input.as_ref().unwrap().examples[0];
/// assert_eq!(ex.feature("x").unwrap().values, FeatureValues::Float(vec![1.0, 2.5]));
/// assert_eq!(ex.feature("age").unwrap().values, FeatureValues::Int64(vec![30]));
/// assert_eq!(ex.feature("tag").unwrap().values, FeatureValues::Bytes(vec![b"a"[..].into()]));
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn examples_from_json(json: &[u8], call: &RestCall) -> Result<Message, Error> {
    examples_from_value(&parse(json)?, call)
}

/// Every request of a file holding one `:classify`/`:regress` body, or several as JSON
/// lines (see [`examples_from_json`]).
pub fn examples_from_json_lines(json: &[u8], call: &RestCall) -> Result<Vec<Message>, Error> {
    let mut out = Vec::new();
    each_value(json, |_, v| {
        out.push(examples_from_value(v, call)?);
        Ok(())
    })?;
    Ok(out)
}

/// A parsed `:classify`/`:regress` body → a request (see [`examples_from_json`]).
pub fn examples_from_value(v: &Json, call: &RestCall) -> Result<Message, Error> {
    use crate::model::{ExampleInput, Kind, ModelSpec};
    if !call.method.takes_examples() || call.method == Method::MultiInference {
        return Err(err(format!(
            "a REST body with examples is for :classify or :regress, not {}",
            call.method.as_str()
        )));
    }
    if !matches!(v, Json::Object(_)) {
        return Err(err(format!(
            "JSON Value: {v} Is not object (the body must be a JSON object)"
        )));
    }
    let signature = match v.get("signature_name") {
        None => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(err(
                "not formatted correctly. 'signature_name' key must be a string value.",
            ))
        }
    };
    let mut msg = Message::new(WireFormat::TfServing, Kind::Request);
    msg.method = call.method;
    if !call.model.is_empty()
        || signature.is_some()
        || call.version.is_some()
        || call.label.is_some()
    {
        msg.model_spec = Some(ModelSpec {
            name: call.model.clone(),
            version: call.version,
            version_label: call.label.clone(),
            signature_name: signature.clone().unwrap_or_default(),
        });
    }
    msg.signature_name = signature.unwrap_or_default();
    let mut input = ExampleInput::default();
    if let Some(c) = v.get("context") {
        input.with_context = true;
        input.context = Some(json_example(c).map_err(|e| within("context", e))?);
    }
    let examples = match v.get("examples") {
        None => {
            return Err(err(
                "When method is classify, key 'examples' is expected and was not found",
            ))
        }
        Some(Json::Array(a)) => a,
        Some(_) => return Err(err("Expecting 'examples' value to be an list/array")),
    };
    if examples.is_empty() {
        return Err(err("'examples' value is an empty array"));
    }
    for (i, e) in examples.iter().enumerate() {
        input
            .examples
            .push(json_example(e).map_err(|x| within(&format!("examples[{i}]"), x))?);
    }
    msg.input = Some(input);
    Ok(msg)
}

fn within(place: &str, e: String) -> Error {
    err(format!("{place}: {e}"))
}

/// `MakeExampleFromJsonObject`: an object's keys as features, sorted by name.
fn json_example(v: &Json) -> Result<crate::model::Example, String> {
    use crate::model::{Example, Feature};
    let Json::Object(o) = v else {
        return Err(format!(
            "Example must be JSON object but got JSON {}",
            json_type_string(v)
        ));
    };
    let mut features = Vec::with_capacity(o.len());
    for (name, content) in o {
        let mut values = FeatureValues::None;
        match content {
            Json::Array(a) => {
                for x in a {
                    add_value_to_feature(x, name, &mut values)?;
                }
            }
            x => add_value_to_feature(x, name, &mut values)?,
        }
        features.push(Feature {
            name: name.clone(),
            values,
        });
    }
    features.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Example { features })
}

/// rapidjson's type names as json_tensor.cc's `JsonTypeString` prints them.
fn json_type_string(v: &Json) -> &'static str {
    match v {
        Json::Null => "Null",
        Json::Bool(false) => "False",
        Json::Bool(true) => "True",
        Json::Object(_) => "Object",
        Json::Array(_) => "Array",
        Json::String(_) => "String",
        Json::Number(_) | Json::NonFinite(_) => "Number",
    }
}

/// `AddValueToFeature`: one JSON value appended to a feature, whose kind its first
/// value sets.
fn add_value_to_feature(v: &Json, name: &str, f: &mut FeatureValues) -> Result<(), String> {
    let unexpected = || {
        format!(
            "Feature: {name} has element with unexpected JSON type: {}",
            json_type_string(v)
        )
    };
    match v {
        Json::Null | Json::Array(_) => return Err(unexpected()),
        Json::Bool(b) => int64s(f, name)?.push(i64::from(*b)),
        Json::Object(_) => {
            let Some(Json::String(s)) = v.get("b64").filter(|_| v.is_b64()) else {
                return Err(unexpected());
            };
            let bytes = b64_unescape(s).ok_or_else(|| "Unable to base64 decode".to_string())?;
            byte_values(f, name)?.push(Bytes::from(bytes));
        }
        Json::String(s) => byte_values(f, name)?.push(Bytes::from(s.clone().into_bytes())),
        Json::NonFinite(x) => floats(f, name)?.push(*x as f32),
        Json::Number(n) if n.is_f64() => {
            floats(f, name)?.push(n.as_f64().unwrap_or(f64::NAN) as f32)
        }
        Json::Number(n) => {
            let list = int64s(f, name)?;
            match n.as_i64() {
                Some(i) => list.push(i),
                None => {
                    return Err(format!(
                        "Feature: {name} has uint64_t element. Only int64_t is supported."
                    ))
                }
            }
        }
    }
    Ok(())
}

/// `IncompatibleFeatureKindError`.
fn incompatible(f: &FeatureValues, name: &str) -> String {
    format!(
        "Unexpected element type in feature: {name} expecting type: {}",
        f.kind()
    )
}

fn floats<'a>(f: &'a mut FeatureValues, name: &str) -> Result<&'a mut Vec<f32>, String> {
    if matches!(f, FeatureValues::None) {
        *f = FeatureValues::Float(Vec::new());
    }
    match f {
        FeatureValues::Float(v) => Ok(v),
        other => Err(incompatible(other, name)),
    }
}

fn int64s<'a>(f: &'a mut FeatureValues, name: &str) -> Result<&'a mut Vec<i64>, String> {
    if matches!(f, FeatureValues::None) {
        *f = FeatureValues::Int64(Vec::new());
    }
    match f {
        FeatureValues::Int64(v) => Ok(v),
        other => Err(incompatible(other, name)),
    }
}

fn byte_values<'a>(f: &'a mut FeatureValues, name: &str) -> Result<&'a mut Vec<Bytes>, String> {
    if matches!(f, FeatureValues::None) {
        *f = FeatureValues::Bytes(Vec::new());
    }
    match f {
        FeatureValues::Bytes(v) => Ok(v),
        other => Err(incompatible(other, name)),
    }
}

/// absl::Base64Unescape (what json_tensor.cc's `JsonDecodeBase64Object` calls): the
/// standard alphabet, `=` padding optional.
fn b64_unescape(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{
        general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig,
    };
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE.decode(s).ok()
}
