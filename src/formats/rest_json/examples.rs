//! Classify and regress bodies (`examples`, `context`) to requests.

use super::read::each_value;
use super::url::RestCall;
use super::{Json, err, parse_json};
use base64::Engine;
use bytes::Bytes;

use crate::error::Error;
use crate::model::{FeatureValues, Message, Method, WireFormat};

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
/// use tfreq::formats::{examples_from_json, RestCall};
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
    examples_from_value(&parse_json(json)?, call)
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
            ));
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
            ));
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
                    ));
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
        DecodePaddingMode, GeneralPurposeConfig, general_purpose::GeneralPurpose,
    };
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    ENGINE.decode(s).ok()
}
