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
//! use tfreq::formats::{from_json, Dtypes};
//! use tfreq::{DType, WireFormat};
//! let json = br#"{"signature_name": "serving_default", "inputs": {"x": [[1, 2]]}}"#;
//! let mut d = Dtypes::default();
//! d.set("x", DType::Float);
//! let msg = from_json(json, &d, &["y".to_string()], WireFormat::Eas)?;
//! assert_eq!(msg.tensors[0].shape.sizes(), vec![1, 2]);
//! assert_eq!(msg.fetches, vec!["y"]);
//! # Ok::<(), tfreq::Error>(())
//! ```

use crate::error::{Error, ErrorDetail};
use crate::model::{Message, Method, WireFormat};

mod dtypes;
mod examples;
mod json;
mod read;
mod url;
mod write;

pub use dtypes::*;
pub use examples::*;
pub use json::*;
pub use read::*;
pub use url::*;
pub use write::*;

fn err(s: impl Into<String>) -> Error {
    Error::from(RestJsonError::Body(s.into()))
}

/// Why a TF Serving REST JSON body, or a dtype given for one, cannot be read.
///
/// ```
/// use tfreq::formats::RestJsonError;
/// let e = tfreq::Error::from(RestJsonError::DtypeName("f33".into()));
/// assert_eq!(e.to_string(), r#""f33" is not a dtype name (DT_FLOAT, float32, ...)"#);
/// assert_eq!(e.classify(), tfreq::Category::Container);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestJsonError {
    /// The bytes are not JSON: serde_json's message.
    #[error("JSON parse error: {0}")]
    Parse(String),
    /// A dtype given as other than `NAME=DTYPE`.
    #[error("{0:?}: expected NAME=DTYPE (e.g. x=DT_FLOAT)")]
    Annotation(String),
    /// A dtype name no dtype has.
    #[error("{0:?} is not a dtype name (DT_FLOAT, float32, ...)")]
    DtypeName(String),
    /// JSON that is not a body TF Serving reads, in TF Serving's words where it has
    /// them (tensorflow_serving/util/json_tensor.cc).
    #[error("{0}")]
    Body(String),
}

/// A [`RestJsonError`] is a container problem, as other unreadable files are.
impl From<RestJsonError> for Error {
    fn from(e: RestJsonError) -> Self {
        Error::other(crate::error::Category::Container, e)
    }
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
