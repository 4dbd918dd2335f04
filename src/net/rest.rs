//! TF Serving's REST API: `POST /v1/models/NAME[/versions/N]:predict` with the request
//! as JSON ([`crate::formats::to_rest_json`]), and `GET …/metadata`.
//!
//! The JSON answer (`{"outputs": {...}}`, or `{"outputs": VALUE}` when the signature
//! has one output) carries no dtypes: they are taken from the model's metadata, read
//! once per client; without it, numbers with a fraction or exponent are `DT_FLOAT`,
//! other numbers `DT_INT64`.

use bytes::Bytes;

use super::{NetError, Target};
use crate::dtype::DType;
use crate::formats::rest_json::{self, Dtypes, Json};
use crate::model::{Kind, Message, WireFormat};
use crate::signature::ModelSignatures;

fn model_path(target: &Target) -> String {
    match target {
        Target::Rest {
            base,
            model,
            version,
            label,
        } => {
            let mut s = format!("{base}/v1/models/{model}");
            if let Some(v) = version {
                s.push_str(&format!("/versions/{v}"));
            } else if let Some(l) = label {
                s.push_str(&format!("/labels/{l}"));
            }
            s
        }
        Target::Eas { url } => url.clone(),
        Target::Grpc { endpoint } => endpoint.clone(),
    }
}

/// `…/v1/models/NAME[/versions/N]:predict`.
pub fn predict_url(target: &Target) -> String {
    format!("{}:predict", model_path(target))
}

/// `…/v1/models/NAME[/versions/N]/metadata`.
pub fn metadata_url(target: &Target) -> String {
    format!("{}/metadata", model_path(target))
}

/// The output dtypes of the served model's signatures, once learned.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    model: Option<ModelSignatures>,
    tried: bool,
}

impl Outputs {
    /// Whether nothing was tried yet.
    pub fn is_empty(&self) -> bool {
        !self.tried
    }

    /// Reads the metadata JSON (a failure leaves the dtypes to be guessed).
    pub fn learn(&mut self, metadata: &[u8]) {
        self.tried = true;
        self.model = crate::formats::savedmodel::from_metadata_json(metadata, "metadata").ok();
    }

    fn signature_outputs(&self, signature: &str) -> Vec<(String, DType)> {
        let Some(m) = &self.model else {
            return Vec::new();
        };
        let Some(mg) = m
            .meta_graph(crate::signature::SERVE_TAG)
            .or(m.meta_graphs.first())
        else {
            return Vec::new();
        };
        mg.signatures
            .get(signature)
            .map(|s| {
                s.outputs
                    .iter()
                    .filter_map(|(k, v)| v.dtype.dtype().map(|d| (k.clone(), d)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Reads a `:predict` answer as a TF Serving `PredictResponse`.
    pub fn response(
        &self,
        body: &Bytes,
        signature: &str,
        fetches: &[String],
    ) -> Result<Message, NetError> {
        let bad = |e: &dyn std::fmt::Display| NetError::BadResponse(format!("REST answer: {e}"));
        let v = rest_json::parse_json(body).map_err(|e| bad(&e))?;
        let outputs = v
            .get("outputs")
            .or_else(|| v.get("predictions"))
            .ok_or_else(|| bad(&"no \"outputs\" in the answer"))?;
        let known = self.signature_outputs(signature);
        let named: Vec<(String, Json)> = match outputs {
            Json::Object(o) if !is_b64(outputs) => o.clone(),
            other => {
                // One output, its name left out: the signature's only output, or the
                // request's only fetch.
                let name = match (known.as_slice(), fetches) {
                    ([(n, _)], _) => n.clone(),
                    (_, [f]) => f.clone(),
                    _ => "outputs".to_string(),
                };
                vec![(name, other.clone())]
            }
        };
        let mut d = Dtypes::default();
        for (name, val) in &named {
            let dt = known
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| *d)
                .unwrap_or_else(|| guess(val));
            d.set(name.clone(), dt);
        }
        let doc = Json::Object(vec![
            ("signature_name".into(), Json::String(signature.to_string())),
            ("inputs".into(), Json::Object(named)),
        ]);
        let mut m =
            rest_json::from_value(&doc, &d, &[], WireFormat::TfServing).map_err(|e| bad(&e))?;
        m.kind = Kind::Response;
        m.size = body.len();
        Ok(m)
    }
}

fn is_b64(v: &Json) -> bool {
    matches!(v, Json::Object(o) if o.len() == 1 && o[0].0 == "b64")
}

/// A dtype for a JSON value with no signature to say: the first leaf decides.
fn guess(v: &Json) -> DType {
    match v {
        Json::Array(a) => a.first().map_or(DType::Float, guess),
        Json::Bool(_) => DType::Bool,
        Json::String(_) | Json::Object(_) => DType::String,
        Json::Number(n) if n.is_f64() => DType::Float,
        Json::Number(_) => DType::Int64,
        Json::Null | Json::NonFinite(_) => DType::Float,
    }
}
