//! The dtypes JSON does not carry: per input, from an annotation, a SavedModel or
//! GetModelMetadata.

use super::err;
use crate::dtype::DType;
use crate::error::Error;

/// Each input's dtype, by name (and optionally the signature's input set, which makes
/// missing inputs an error and extra keys ignored, as TF Serving does).
#[derive(Debug, Clone, Default)]
pub struct Dtypes {
    pub(super) inputs: Vec<(String, DType)>,
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
    pub(super) fn single_input(&self) -> Option<String> {
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
    /// let mut d = tfreq::formats::Dtypes::default();
    /// d.annotate("x=DT_INT64")?;
    /// assert_eq!(d.get("x"), Some(tfreq::DType::Int64));
    /// # Ok::<(), tfreq::Error>(())
    /// ```
    pub fn annotate(&mut self, s: &str) -> Result<(), Error> {
        let (name, dt) = s
            .rsplit_once('=')
            .ok_or_else(|| Error::from(super::RestJsonError::Annotation(s.to_string())))?;
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
/// let (model, _) = tfreq::formats::read_model("tests/data/models/two_sigs".as_ref())?;
/// let d = tfreq::formats::dtypes_for_model(&model)?;
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
        .ok_or_else(|| Error::from(super::RestJsonError::DtypeName(dt.to_string())))
}

/// The input dtypes of `signature` in a model's signatures (read by
/// [`crate::formats::read_model`] from a SavedModel, GetModelMetadata JSON
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
/// let d = tfreq::formats::dtypes_from_metadata(&json, "serving_default")?;
/// assert_eq!(d.get("threshold"), Some(tfreq::DType::Float));
/// assert!(d.complete);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn dtypes_from_metadata(json: &[u8], signature: &str) -> Result<Dtypes, Error> {
    let m = crate::formats::savedmodel::from_metadata_json(json, "model metadata")
        .map_err(|e| err(e.to_string()))?;
    dtypes_from_model(&m, signature)
}
