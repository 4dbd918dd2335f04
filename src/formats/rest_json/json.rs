//! A JSON value whose objects keep their key order, and its parser (with TF Serving's
//! `NaN` / `Infinity` tokens).

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::error::Error;

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

    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) | Json::NonFinite(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "list",
            Json::Object(_) => "object",
        }
    }

    pub(super) fn is_b64(&self) -> bool {
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
pub fn parse_json(bytes: &[u8]) -> Result<Json, Error> {
    serde_json::from_slice(&nan_tokens(bytes))
        .map_err(|e| Error::from(super::RestJsonError::Parse(e.to_string())))
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
