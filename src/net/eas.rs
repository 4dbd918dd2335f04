//! PAI-EAS over HTTP: `POST` of the EAS `PredictRequest` bytes to
//! `/api/predict/SERVICE`, the `PredictResponse` bytes back.
//!
//! Two ways to authenticate, as the EAS clients do: the token itself in
//! `Authorization` (the warm-up page's `curl`), or the signature of the SDKs'
//! `PredictClient` ([`sign`]).

use std::time::{Duration, SystemTime};

use base64::Engine;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};

use super::web::{Http, ok_body};
use super::{EasAuth, NetError, Options};

/// The content type the EAS SDKs send protobuf requests with.
pub const CONTENT_TYPE: &str = "application/octet-stream";

/// The headers of a signed EAS request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    /// `Content-MD5`: the body's MD5 as 32 lowercase hex digits (the SDK's
    /// `hexdigest()`, not the base64 of RFC 1864).
    pub content_md5: String,
    /// `Date`, `Thu, 03 Dec 2026 08:00:00 GMT`.
    pub date: String,
    /// `Authorization`: `EAS ` and base64(HMAC-SHA1(token, the string to sign)).
    pub authorization: String,
}

/// Signs a request as `eas_prediction/predict_client.py` (`generate_singaure`) does:
/// the string to sign is `"POST\n{md5}\n{content_type}\n{date}\n{path}"` (stripped of
/// surrounding whitespace, as the SDK does), `path` is `/api/predict/SERVICE`.
///
/// ```
/// let s = tfreq::net::sign("token", b"body", "application/octet-stream",
///     "Thu, 01 Jan 2026 00:00:00 GMT", "/api/predict/faq");
/// assert_eq!(s.content_md5, "841a2d689ad86bd1611447453c22c6fc");
/// assert!(s.authorization.starts_with("EAS "));
/// ```
pub fn sign(token: &str, body: &[u8], content_type: &str, date: &str, path: &str) -> SignedHeaders {
    let md5: String = Md5::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let to_sign = format!("POST\n{md5}\n{content_type}\n{date}\n{path}");
    // HMAC takes a key of any length: new_from_slice cannot fail for it.
    let mut mac = Hmac::<sha1::Sha1>::new_from_slice(token.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
    mac.update(to_sign.trim().as_bytes());
    let sig = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    SignedHeaders {
        content_md5: md5,
        date: date.to_string(),
        authorization: format!("EAS {sig}"),
    }
}

/// The path the SDK signs: `/api/predict/SERVICE` (from the URL's path, query cut).
pub fn canonical_path(url: &str) -> String {
    let path = url
        .split_once("://")
        .map(|(_, r)| r.find('/').map_or("/", |i| &r[i..]))
        .unwrap_or(url);
    let path = path.split(['?', '#']).next().unwrap_or(path);
    match path.find("/api/predict/") {
        Some(i) => path[i..].to_string(),
        None => path.to_string(),
    }
}

/// The headers an EAS predict call sends.
pub fn headers(body: &[u8], url: &str, opts: &Options) -> Vec<(&'static str, String)> {
    let mut h = vec![("content-type", CONTENT_TYPE.to_string())];
    match (&opts.token, opts.auth) {
        (None, _) => {}
        (Some(t), EasAuth::Raw) => h.push(("authorization", t.clone())),
        (Some(t), EasAuth::Signed) => {
            let date = httpdate::fmt_http_date(SystemTime::now());
            let s = sign(t, body, CONTENT_TYPE, &date, &canonical_path(url));
            h.push(("content-md5", s.content_md5));
            h.push(("date", s.date));
            h.push(("authorization", s.authorization));
        }
    }
    h
}

/// Posts a request and returns the response body (a 200 answer), or the refusal.
pub async fn predict(
    http: &Http,
    url: &str,
    body: &Bytes,
    opts: &Options,
) -> Result<Bytes, NetError> {
    let h = headers(body, url, opts);
    let t: Duration = opts.deadline();
    ok_body(http.post(url, h, body.clone(), t).await?)
}
