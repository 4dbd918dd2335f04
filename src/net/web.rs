//! The HTTP/1.1 client the EAS, REST and queue calls share: hyper (which tonic already
//! brings) with rustls for `https://`, one pooled connection reused across calls.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::NetError;

/// An HTTP client.
pub struct Http {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http").finish_non_exhaustive()
    }
}

/// An HTTP answer, whatever its status.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: ::http::HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Reply {
    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Http {
    /// A client whose connections run on `rt`. `https://` trusts the webpki roots, or,
    /// given `ca_pem`, the CA certificates it holds instead (as curl's `--cacert`).
    pub fn new(rt: &tokio::runtime::Runtime, ca_pem: Option<&[u8]>) -> Result<Http, NetError> {
        let _guard = rt.enter();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match ca_pem {
            None => builder.with_webpki_roots(),
            Some(pem) => {
                let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
                let config = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| NetError::BadRequest(format!("TLS: {e}")))?
                    .with_root_certificates(roots(pem)?)
                    .with_no_client_auth();
                builder.with_tls_config(config)
            }
        };
        let https = builder.https_or_http().enable_http1().wrap_connector(http);
        Ok(Http {
            client: Client::builder(TokioExecutor::new()).build(https),
        })
    }

    /// Sends one request and reads the whole answer within `timeout`.
    pub async fn request(
        &self,
        method: ::http::Method,
        url: &str,
        headers: Vec<(&str, String)>,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Reply, NetError> {
        let mut b = ::http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            b = b.header(k, v);
        }
        let req = b
            .body(Full::new(body))
            .map_err(|e| NetError::BadUrl(format!("{url}: {e}")))?;
        let call = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| NetError::Unreachable(format!("{url}: {}", explain(chain(&e)))))?;
            let status = resp.status().as_u16();
            let (parts, body) = resp.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| {
                    NetError::Unreachable(format!("{url}: reading the answer: {}", chain(&e)))
                })?
                .to_bytes();
            Ok(Reply {
                status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| NetError::Timeout(timeout))?
    }

    /// `POST`.
    pub async fn post(
        &self,
        url: &str,
        headers: Vec<(&str, String)>,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Reply, NetError> {
        self.request(::http::Method::POST, url, headers, body, timeout)
            .await
    }

    /// `GET`.
    pub async fn get(
        &self,
        url: &str,
        headers: Vec<(&str, String)>,
        timeout: Duration,
    ) -> Result<Reply, NetError> {
        self.request(::http::Method::GET, url, headers, Bytes::new(), timeout)
            .await
    }
}

/// The body of a `200 OK`; any other status is the service's refusal, with its body.
pub fn ok_body(r: Reply) -> Result<Bytes, NetError> {
    if r.status == 200 {
        Ok(r.body)
    } else {
        Err(refusal(&r))
    }
}

/// A non-success answer as a [`NetError::Refused`] (status and body text).
pub fn refusal(r: &Reply) -> NetError {
    let reason = ::http::StatusCode::from_u16(r.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    NetError::Refused {
        status: format!("HTTP {} {reason}", r.status).trim_end().to_string(),
        message: body_text(&r.body),
    }
}

/// A body as text for a message: lossy UTF-8, cut at 2000 characters.
pub fn body_text(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let mut s: String = s.chars().take(2000).collect();
    if b.len() > s.len() {
        s.push_str(" …");
    }
    s
}

/// An error and its causes, `a: b: c` (hyper's own message alone is often just
/// "client error (Connect)").
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// The CA certificates of a PEM file, as a root store: at least one, each readable.
pub fn roots(pem: &[u8]) -> Result<rustls::RootCertStore, NetError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let bad = |why: String| NetError::BadRequest(why);
    let mut store = rustls::RootCertStore::empty();
    for (i, c) in CertificateDer::pem_slice_iter(pem).enumerate() {
        let c = c.map_err(|e| bad(format!("certificate {}: {e}", i + 1)))?;
        store
            .add(c)
            .map_err(|e| bad(format!("certificate {}: {e}", i + 1)))?;
    }
    if store.is_empty() {
        return Err(bad(
            "no certificate in it (expected -----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(store)
}

/// A connection error's text, with what to do when the server's certificate is not
/// trusted (rustls: `invalid peer certificate: UnknownIssuer`, ...).
pub fn explain(s: String) -> String {
    if s.contains("invalid peer certificate") {
        format!(
            "{s} (the server's TLS certificate is not trusted: a certificate from a private CA needs --cacert FILE, that CA's PEM certificate)"
        )
    } else {
        s
    }
}
