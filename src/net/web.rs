//! The HTTP/1.1 client the EAS, REST and queue calls share: hyper with rustls for
//! `https://`, one pooled connection reused across calls.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::NetError;

/// The connector every client here uses: TCP without delay, TLS for `https` (the
/// webpki roots, or the CAs of `ca_pem`), offering HTTP/1.1 or HTTP/2 by ALPN.
pub(super) fn connector(ca_pem: Option<&[u8]>, h2: bool) -> Result<Https, NetError> {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.enforce_http(false);
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
    let builder = builder.https_or_http();
    Ok(if h2 {
        builder.enable_http2().wrap_connector(http)
    } else {
        builder.enable_http1().wrap_connector(http)
    })
}

/// [`connector`]'s connector.
pub(super) type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// An HTTP client.
#[derive(Clone)]
pub struct Http {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    limit: u64,
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
    /// given `ca_pem`, the CA certificates it holds instead (as curl's `--cacert`). An
    /// answer's body is read up to `limit` bytes ([`NetError::TooLarge`] past it).
    pub fn new(
        rt: &tokio::runtime::Runtime,
        ca_pem: Option<&[u8]>,
        limit: u64,
    ) -> Result<Http, NetError> {
        let _guard = rt.enter();
        let https = connector(ca_pem, false)?;
        Ok(Http {
            client: Client::builder(TokioExecutor::new()).build(https),
            limit,
        })
    }

    /// Sends one request and waits for the answer's head (its body is the caller's to
    /// read): what [`Http::request`] and [`Http::post_counted`] share.
    async fn send(
        &self,
        method: ::http::Method,
        url: &str,
        headers: Vec<(&str, String)>,
        body: Bytes,
    ) -> Result<::http::Response<hyper::body::Incoming>, NetError> {
        let mut b = ::http::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            b = b.header(k, v);
        }
        let req = b
            .body(Full::new(body))
            .map_err(|e| NetError::BadUrl(format!("{url}: {e}")))?;
        self.client
            .request(req)
            .await
            .map_err(|e| unreachable(format!("{url}: {}", chain(&e))))
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
        let call = async {
            let resp = self.send(method, url, headers, body).await?;
            let status = resp.status().as_u16();
            let (parts, body) = resp.into_parts();
            let body = read_body(body, &parts.headers, self.limit)
                .await
                .map_err(|e| match e {
                    BodyError::TooLarge => NetError::TooLarge { limit: self.limit },
                    BodyError::Read(e) => {
                        NetError::Unreachable(format!("{url}: reading the answer: {}", chain(&e)))
                    }
                })?;
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

    /// `POST` whose answer is not kept: a `200 OK`'s body is read under the limit and
    /// dropped as it comes, its size returned; any other status is the service's
    /// refusal, with the first [`REFUSAL_KEPT`] bytes of its body. What `tfreq load`
    /// does, which never decodes answers.
    pub(crate) async fn post_counted(
        &self,
        url: &str,
        headers: Vec<(&str, String)>,
        body: Bytes,
        timeout: Duration,
    ) -> Result<u64, NetError> {
        let call = async {
            let resp = self.send(::http::Method::POST, url, headers, body).await?;
            let status = resp.status().as_u16();
            let mut body = resp.into_body();
            let (mut seen, mut kept) = (0u64, Vec::new());
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| {
                    NetError::Unreachable(format!("{url}: reading the answer: {}", chain(&e)))
                })?;
                if let Ok(data) = frame.into_data() {
                    seen = seen.saturating_add(data.len() as u64);
                    if seen > self.limit {
                        return Err(NetError::TooLarge { limit: self.limit });
                    }
                    if status != 200 && kept.len() < REFUSAL_KEPT {
                        let room = REFUSAL_KEPT - kept.len();
                        kept.extend_from_slice(&data[..room.min(data.len())]);
                    }
                }
            }
            if status == 200 {
                Ok(seen)
            } else {
                Err(refusal_of(status, &kept))
            }
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

/// The bytes of a refusal's body kept for its message when the answer is not kept
/// ([`Http::post_counted`]): 64 KiB.
pub(crate) const REFUSAL_KEPT: usize = 64 << 10;

/// Why a body was not read whole.
enum BodyError {
    TooLarge,
    Read(hyper::Error),
}

/// Reads a body frame by frame with a running count, stopping as soon as it would pass
/// `limit` bytes (a `Content-Length` over the limit stops it before the first byte), so
/// a body that never ends costs at most `limit` bytes of memory.
async fn read_body(
    mut body: hyper::body::Incoming,
    headers: &::http::HeaderMap,
    limit: u64,
) -> Result<Bytes, BodyError> {
    let declared = headers
        .get(::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut acc = Limited::new(limit, declared)?;
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(BodyError::Read)?.into_data() {
            acc.push(&data)?;
        }
    }
    Ok(acc.finish())
}

/// A body gathered under a limit (the pure half of reading an answer).
pub struct Limited {
    buf: Vec<u8>,
    limit: u64,
}

impl Limited {
    /// An empty body of at most `limit` bytes; `declared` (the `Content-Length`) over
    /// the limit is refused at once, and under it is reserved up front.
    fn new(limit: u64, declared: Option<u64>) -> Result<Limited, BodyError> {
        if declared.is_some_and(|n| n > limit) {
            return Err(BodyError::TooLarge);
        }
        // Reserve no more than 16 MiB on a server's word; the rest grows as it comes.
        let cap = declared.unwrap_or(0).min(16 << 20) as usize;
        Ok(Limited {
            buf: Vec::with_capacity(cap),
            limit,
        })
    }

    /// Appends a chunk, or refuses it when the body would pass the limit.
    fn push(&mut self, chunk: &[u8]) -> Result<(), BodyError> {
        if (self.buf.len() as u64).saturating_add(chunk.len() as u64) > self.limit {
            return Err(BodyError::TooLarge);
        }
        self.buf.extend_from_slice(chunk);
        Ok(())
    }

    fn finish(self) -> Bytes {
        Bytes::from(self.buf)
    }
}

/// Gathers `chunks` as an answer's body under `limit` (what reading an answer does, without
/// the network): the body, or [`NetError::TooLarge`]. For the fuzz target and tests.
#[cfg(any(test, feature = "fuzzing"))]
pub fn gather<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    declared: Option<u64>,
    limit: u64,
) -> Result<Bytes, NetError> {
    let too_large = |_| NetError::TooLarge { limit };
    let mut acc = Limited::new(limit, declared).map_err(too_large)?;
    for c in chunks {
        acc.push(c).map_err(too_large)?;
    }
    Ok(acc.finish())
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
    refusal_of(r.status, &r.body)
}

/// A non-success status and its body as a [`NetError::Refused`]: the status with its
/// standard reason (never the server's own reason phrase), and the body as
/// [`body_text`] shows it.
pub fn refusal_of(status: u16, body: &[u8]) -> NetError {
    NetError::Refused {
        status: super::Status::Http(status),
        message: body_text(body),
    }
}

/// An error body as text for a message: TF Serving REST's `{"error": "..."}` as its
/// error text, any other body as it is; escaped and cut by [`super::shown`].
pub fn body_text(b: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RestError {
        error: String,
    }
    match serde_json::from_slice::<RestError>(b) {
        Ok(e) => super::shown(e.error.as_bytes()),
        Err(_) => super::shown(b),
    }
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
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
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

/// A connection error: [`NetError::Untrusted`] when the server's certificate is not
/// trusted (rustls: `invalid peer certificate: UnknownIssuer`, ...), else
/// [`NetError::Unreachable`].
pub(crate) fn unreachable(s: String) -> NetError {
    if s.contains("invalid peer certificate") {
        NetError::Untrusted(s)
    } else {
        NetError::Unreachable(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_read_up_to_its_limit_and_no_further() {
        let chunks: [&[u8]; 3] = [b"abc", b"de", b"f"];
        assert_eq!(&gather(chunks, None, 6).unwrap()[..], b"abcdef");
        assert_eq!(
            gather(chunks, None, 5).unwrap_err(),
            NetError::TooLarge { limit: 5 }
        );
        // A declared length over the limit stops before the first chunk.
        assert_eq!(
            gather(std::iter::empty(), Some(7), 6).unwrap_err(),
            NetError::TooLarge { limit: 6 }
        );
    }

    #[test]
    fn error_bodies_are_escaped_and_rest_errors_unwrapped() {
        let e = refusal_of(400, br#"{"error": "bad \u001b[2J input"}"#);
        assert_eq!(
            e.to_string(),
            r"the service refused the request: HTTP 400 Bad Request: bad \u{1b}[2J input"
        );
        let e = refusal_of(500, b"a\r\n::error::x\xff");
        assert_eq!(
            e.to_string(),
            r"the service refused the request: HTTP 500 Internal Server Error: a\r\n::error::x\xff"
        );
    }
}
