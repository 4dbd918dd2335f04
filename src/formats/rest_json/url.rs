//! The REST URL: model, version or label, and method.

use super::err;
use crate::error::Error;
use crate::model::Method;

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
/// use tfreq::formats::RestCall;
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
                )));
            }
            m => return Err(bad(&format!("unknown method {m:?}"))),
        };
        let mut parts = spec.split('/');
        let name = parts.next().unwrap_or_default();
        if name.is_empty() || name.contains(':') {
            return Err(bad("no model name"));
        }
        let mut call = RestCall::method(method);
        call.model = percent_text(name);
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
                call.label = Some(percent_text(n));
            }
            _ => return Err(bad("unexpected path after the model name")),
        }
        Ok(call)
    }
}

/// `%XX` sequences as bytes (curl_easy_unescape: a `%` not followed by two hex digits
/// stays as it is; `+` is not a space): a REST URL's model name and label, and gRPC's
/// `grpc-message` (src/net/grpc.rs).
pub(crate) fn percent_decode(b: &[u8]) -> Vec<u8> {
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
    out
}

/// [`percent_decode`] read as UTF-8, lossily.
fn percent_text(s: &str) -> String {
    String::from_utf8_lossy(&percent_decode(s.as_bytes())).into_owned()
}
