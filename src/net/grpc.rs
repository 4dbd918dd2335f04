//! TF Serving's gRPC `PredictionService` (tensorflow_serving/apis/prediction_service.proto,
//! <https://github.com/tensorflow/serving>): `Predict` and `GetModelMetadata`, as a gRPC
//! client on tfreq's own HTTP/2 for unary calls (`src/net/channel.rs`, which says why not
//! `h2`'s client).
//!
//! `Predict` sends the request's protobuf bytes as they are, so what goes on the wire
//! is exactly what the file holds, unknown fields included, and the answer is decoded
//! by tfreq's own decoder. The answer limit is
//! [`Options::max_response`](super::Options::max_response), by default TF Serving's own
//! ([`MAX_MESSAGE`], 2 GiB − 1); an answer's length prefix is checked against it before
//! the message is buffered.
//!
//! Why not a gRPC framework's client: a unary call here is one `HEADERS` and one
//! `DATA` frame written in one system call (hyper's HTTP/2 client, under tonic, waits
//! for the connection task to open the stream before it sends the body, which is a
//! second write and a second wake-up of the server per call). [`Grpc`] is `Clone`: the
//! clones share one HTTP/2 connection, so many calls at once travel on one connection as
//! a gRPC channel's do. A call the server did not process (it was closing the
//! connection: `GOAWAY`, `REFUSED_STREAM`) is sent again on a new connection, at most
//! twice. The wire protocol: <https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md>.
//!
//! `record`'s proxy forwards calls it terminated over `h2`'s client (`Connection`
//! here): it passes any request's headers and trailers on, which a unary client does
//! not carry.

use std::time::Duration;

use bytes::Bytes;
use prost::Message as _;

use super::channel::{error_name, request_head, Answer, Channel, Fault, Fields, Framing, Request};
use super::web::{chain, explain};
use super::{NetError, MAX_MESSAGE};
use crate::signature::{MetaGraph, ModelSignatures, SERVE_TAG};
use crate::wire::{tf, tfs};

/// `PredictionService/Predict`.
pub const PREDICT: &str = "/tensorflow.serving.PredictionService/Predict";
/// `PredictionService/GetModelMetadata`.
pub const GET_MODEL_METADATA: &str = "/tensorflow.serving.PredictionService/GetModelMetadata";

/// HTTP/2 flow-control windows offered to the server: large enough that an answer of
/// a few MiB on loopback is not held back by window updates (hyper's own defaults are
/// 2 MiB a stream and 5 MiB a connection).
const STREAM_WINDOW: u32 = 8 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

/// A gRPC connection to TF Serving. Clones share the connection.
#[derive(Clone)]
pub struct Grpc {
    shared: std::sync::Arc<Shared>,
    limit: usize,
    /// The header block last written, for the path and deadline it was written for
    /// (the same for every call of a run).
    head: Option<(&'static str, Duration, Bytes)>,
}

impl std::fmt::Debug for Grpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grpc")
            .field("endpoint", &self.shared.endpoint)
            .finish_non_exhaustive()
    }
}

/// What the clones of a [`Grpc`] share: the channel, and how to open it again when the
/// server closed it.
struct Shared {
    channel: std::sync::Mutex<Channel>,
    uri: ::http::Uri,
    https: bool,
    authority: String,
    endpoint: String,
    ca_pem: Option<std::sync::Arc<[u8]>>,
    connect_timeout: Duration,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Channel> {
        self.channel.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The channel, or a new one when the server closed it: nothing was sent on the
    /// new one yet, so nothing is sent twice.
    async fn channel(&self) -> Result<Channel, NetError> {
        {
            let c = self.lock();
            if !c.is_closed() {
                return Ok(c.clone());
            }
        }
        let io = connect(
            &self.uri,
            &self.endpoint,
            self.connect_timeout,
            self.ca_pem.as_deref(),
        )
        .await?;
        let fresh = Channel::open(io);
        let mut c = self.lock();
        if c.is_closed() {
            *c = fresh;
        }
        Ok(c.clone())
    }
}

/// One HTTP/2 connection to a server on `h2`'s client, for `record`'s proxy, opened
/// again when the server closed it (a restarted server, an idle timeout). Clones share
/// the connection.
#[derive(Clone)]
pub(crate) struct Connection {
    send: h2::client::SendRequest<Bytes>,
    scheme: ::http::uri::Scheme,
    authority: ::http::uri::Authority,
    endpoint: String,
    ca_pem: Option<std::sync::Arc<[u8]>>,
    connect_timeout: Duration,
}

impl Connection {
    /// Connects to `endpoint` (`http://HOST:PORT` or `https://HOST:PORT`; TLS with the
    /// webpki roots, or, given `ca_pem`, the CA certificates it holds instead) and
    /// starts the connection's task on the current tokio runtime.
    pub(crate) async fn open(
        endpoint: &str,
        timeout: Duration,
        ca_pem: Option<&[u8]>,
    ) -> Result<Connection, NetError> {
        let uri: ::http::Uri = endpoint
            .parse()
            .map_err(|e| NetError::BadUrl(format!("{endpoint}: {e}")))?;
        let (Some(scheme), Some(authority)) = (uri.scheme().cloned(), uri.authority().cloned())
        else {
            return Err(NetError::BadUrl(format!(
                "{endpoint}: expected http(s)://HOST:PORT"
            )));
        };
        let send = handshake(&uri, endpoint, timeout, ca_pem).await?;
        Ok(Connection {
            send,
            scheme,
            authority,
            endpoint: endpoint.to_string(),
            ca_pem: ca_pem.map(std::sync::Arc::from),
            connect_timeout: timeout,
        })
    }

    /// The connection ready for a new stream, or a new connection when the server
    /// closed this one: nothing was sent on it yet, so nothing is sent twice.
    pub(crate) async fn ready(&mut self) -> Result<h2::client::SendRequest<Bytes>, NetError> {
        if let Ok(s) = self.send.clone().ready().await {
            return Ok(s);
        }
        let uri = self.uri("/")?;
        self.send = handshake(
            &uri,
            &self.endpoint,
            self.connect_timeout,
            self.ca_pem.as_deref(),
        )
        .await?;
        self.send
            .clone()
            .ready()
            .await
            .map_err(|e| transport_error(&self.endpoint, &e))
    }

    /// The server's URI with `path_and_query`.
    pub(crate) fn uri(&self, path_and_query: &str) -> Result<::http::Uri, NetError> {
        ::http::Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|e| NetError::BadUrl(format!("{}: {e}", self.endpoint)))
    }

    /// The endpoint it was opened for.
    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

/// The TCP (or TLS) stream a connection runs on.
type Io = hyper_util::rt::TokioIo<
    hyper_rustls::MaybeHttpsStream<hyper_util::rt::TokioIo<tokio::net::TcpStream>>,
>;

impl Grpc {
    /// Connects (`https://` endpoints with TLS: the webpki roots, or, given `ca_pem`,
    /// the CA certificates it holds instead) and starts the connection's task on the
    /// current tokio runtime. Answers are read up to `limit` bytes.
    pub async fn connect(
        endpoint: &str,
        timeout: Duration,
        ca_pem: Option<&[u8]>,
        limit: usize,
    ) -> Result<Grpc, NetError> {
        let uri: ::http::Uri = endpoint
            .parse()
            .map_err(|e| NetError::BadUrl(format!("{endpoint}: {e}")))?;
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return Err(NetError::BadUrl(format!(
                "{endpoint}: expected http(s)://HOST:PORT"
            )));
        };
        let https = scheme == &::http::uri::Scheme::HTTPS;
        let authority = authority.to_string();
        let io = connect(&uri, endpoint, timeout, ca_pem).await?;
        Ok(Grpc {
            shared: std::sync::Arc::new(Shared {
                channel: std::sync::Mutex::new(Channel::open(io)),
                uri,
                https,
                authority,
                endpoint: endpoint.to_string(),
                ca_pem: ca_pem.map(std::sync::Arc::from),
                connect_timeout: timeout,
            }),
            limit: limit.min(MAX_MESSAGE),
            head: None,
        })
    }

    /// The header block of a call to `path` with `timeout` as its `grpc-timeout`,
    /// encoded once for a run's calls.
    fn head(&mut self, path: &'static str, timeout: Duration) -> Bytes {
        match &self.head {
            Some((p, t, h)) if *p == path && *t == timeout => h.clone(),
            _ => {
                let h = request_head(
                    self.shared.https,
                    &self.shared.authority,
                    path,
                    &[
                        ("grpc-timeout", &grpc_timeout(timeout)),
                        ("user-agent", concat!("tfreq/", env!("CARGO_PKG_VERSION"))),
                    ],
                );
                self.head = Some((path, timeout, h.clone()));
                h
            }
        }
    }

    /// A unary call: `body` (one message) to `path`, the answer's message. A call the
    /// server did not process because it was closing the connection is sent once more,
    /// on a new connection.
    async fn unary(
        &mut self,
        path: &'static str,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, NetError> {
        if body.len() > MAX_MESSAGE {
            return Err(NetError::BadRequest(format!(
                "a request of {} bytes is over gRPC's limit of {MAX_MESSAGE} bytes",
                body.len()
            )));
        }
        let req = Request {
            head: self.head(path, timeout),
            message: body,
            limit: self.limit,
        };
        let call = async {
            let mut tries = 0;
            loop {
                tries += 1;
                let channel = self.shared.channel().await?;
                match channel.call(req.clone()).await {
                    Err(Fault::Broken { unsent: true, .. }) if tries < 3 => continue,
                    answer => return self.answer(answer, timeout),
                }
            }
        };
        tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| NetError::Timeout(timeout))?
    }

    /// An answer's one message, or its status or failure as an error.
    fn answer(&self, answer: Result<Answer, Fault>, timeout: Duration) -> Result<Bytes, NetError> {
        let endpoint = &self.shared.endpoint;
        let answer = match answer {
            Ok(a) => a,
            Err(Fault::Broken { why, .. }) => {
                return Err(NetError::Unreachable(format!(
                    "{endpoint}: {}",
                    explain(super::shown(why.as_bytes()))
                )))
            }
            Err(Fault::Protocol(why)) => {
                return Err(NetError::NotGrpc(format!(
                    "{endpoint} does not answer as a gRPC server ({}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?",
                    super::shown(why.as_bytes())
                )))
            }
            Err(Fault::Reset(code)) => {
                return Err(NetError::Unreachable(format!(
                    "{endpoint}: the server reset the call ({})",
                    error_name(code)
                )))
            }
            Err(Fault::Framing(f)) => {
                return Err(match f {
                    Framing::TooLarge => NetError::TooLarge {
                        limit: self.limit as u64,
                    },
                    Framing::Compressed => NetError::BadResponse(format!(
                        "{endpoint}: the answer is compressed, though no compression was offered"
                    )),
                    Framing::Extra => NetError::BadResponse(format!(
                        "{endpoint}: the answer to a unary call holds more than one message"
                    )),
                })
            }
        };
        // "Trailers-Only": the status in the headers, no message.
        let status = match (&answer.head.grpc_status, &answer.trailers) {
            (Some(_), _) => Some(&answer.head),
            (None, Some(t)) if t.grpc_status.is_some() => Some(t),
            _ => None,
        };
        if answer.head.grpc_status.is_none() && answer.head.status.as_deref() != Some(b"200") {
            let code = answer.head.status.as_deref().unwrap_or(b"none");
            return Err(NetError::NotGrpc(format!(
                "{endpoint} answered over HTTP/2 with HTTP status {} and no gRPC status; is this the gRPC port (TF Serving's 8500, not REST's 8501)?",
                super::shown(code)
            )));
        }
        let Some(status) = status else {
            return Err(NetError::NotGrpc(format!(
                "{endpoint} answered over HTTP/2 without a gRPC status; is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
            )));
        };
        if status.grpc_status.as_deref() != Some(b"0") {
            return Err(self.status(status, timeout));
        }
        answer.message.ok_or_else(|| {
            NetError::BadResponse(format!(
                "{endpoint}: the answer ended before its message did"
            ))
        })
    }

    /// The status of `grpc-status` / `grpc-message` fields as an error.
    fn status(&self, f: &Fields, timeout: Duration) -> NetError {
        let code = f
            .grpc_status
            .as_deref()
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(2); // UNKNOWN, as gRPC reads a status it cannot parse
        let message = f
            .grpc_message
            .as_deref()
            .map(percent_decode)
            .unwrap_or_default();
        status_of(&self.shared.endpoint, code, &message, None, true, timeout)
    }

    /// `Predict`: the request's bytes, the response's bytes.
    pub async fn predict(&mut self, body: Bytes, timeout: Duration) -> Result<Bytes, NetError> {
        self.unary(PREDICT, body, timeout).await
    }

    /// `GetModelMetadata` for `signature_def`: the served model's signatures (one meta
    /// graph tagged `serve`, as for the REST metadata JSON).
    pub async fn metadata(
        &mut self,
        model: &str,
        timeout: Duration,
    ) -> Result<ModelSignatures, NetError> {
        let req = tfs::GetModelMetadataRequest {
            model_spec: Some(tfs::ModelSpec {
                name: model.to_string(),
                ..Default::default()
            }),
            metadata_field: vec!["signature_def".into()],
        };
        let raw = self
            .unary(
                GET_MODEL_METADATA,
                Bytes::from(req.encode_to_vec()),
                timeout,
            )
            .await?;
        read_metadata(raw)
    }
}

/// Opens a connection to `uri`: TCP without delay, and TLS for `https` offering `h2`
/// by ALPN.
async fn connect(
    uri: &::http::Uri,
    endpoint: &str,
    timeout: Duration,
    ca_pem: Option<&[u8]>,
) -> Result<Io, NetError> {
    use tower_service::Service as _;
    let mut connector = super::web::connector(ca_pem, true)?;
    let connect = async {
        std::future::poll_fn(|cx| connector.poll_ready(cx)).await?;
        connector.call(uri.clone()).await
    };
    let io = tokio::time::timeout(timeout, connect)
        .await
        .map_err(|_| NetError::Timeout(timeout))?
        .map_err(|e| NetError::Unreachable(format!("{endpoint}: {}", explain(chain(&*e)))))?;
    Ok(hyper_util::rt::TokioIo::new(io))
}

/// Opens a connection to `uri` ([`connect`]) for `h2`, says HTTP/2's preface and starts
/// the connection's task on the current runtime.
async fn handshake(
    uri: &::http::Uri,
    endpoint: &str,
    timeout: Duration,
    ca_pem: Option<&[u8]>,
) -> Result<h2::client::SendRequest<Bytes>, NetError> {
    let io = connect(uri, endpoint, timeout, ca_pem).await?;
    let (send, connection) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .handshake::<_, Bytes>(io)
        .await
        .map_err(|e| transport_error(endpoint, &e))?;
    // The connection's errors reach the calls on it; the task ends with the connection.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(send)
}

/// An `h2` error as an error: a failing connection (I/O, the server going away or
/// resetting the call) is unreachable; the peer breaking HTTP/2, which `h2` answers
/// with a `GOAWAY` of its own, means the other end does not speak gRPC.
pub(crate) fn transport_error(endpoint: &str, e: &h2::Error) -> NetError {
    let text = super::shown(chain(e).as_bytes());
    let broken = !e.is_io()
        && !e.is_remote()
        && e.reason().is_some_and(|r| {
            r != h2::Reason::NO_ERROR && r != h2::Reason::CANCEL && r != h2::Reason::REFUSED_STREAM
        });
    if broken {
        NetError::NotGrpc(format!(
            "{endpoint} does not answer as a gRPC server ({text}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
        ))
    } else {
        NetError::Unreachable(format!("{endpoint}: {}", explain(text)))
    }
}

/// `grpc-timeout`: at most 8 digits and a unit
/// (<https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md>).
fn grpc_timeout(t: Duration) -> String {
    const MAX: u128 = 99_999_999;
    let ms = t.as_millis();
    if ms <= MAX {
        format!("{}m", ms.max(1))
    } else if u128::from(t.as_secs()) <= MAX {
        format!("{}S", t.as_secs())
    } else {
        format!("{}H", (t.as_secs() / 3600).min(MAX as u64))
    }
}

/// `grpc-message`'s percent-encoding undone (a `%` not followed by two hex digits is
/// kept as it is).
fn percent_decode(b: &[u8]) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Reads a `GetModelMetadataResponse` for `signature_def`: the served model's
/// signatures, as one meta graph tagged `serve`.
pub fn read_metadata(raw: Bytes) -> Result<ModelSignatures, NetError> {
    let bad =
        |e: &dyn std::fmt::Display| NetError::BadResponse(format!("GetModelMetadata answer: {e}"));
    let resp = tfs::GetModelMetadataResponse::decode(raw).map_err(|e| bad(&e))?;
    let any = resp
        .metadata
        .get("signature_def")
        .ok_or_else(|| bad(&"no \"signature_def\" in metadata"))?;
    let map = tfs::SignatureDefMap::decode(any.value.clone()).map_err(|e| bad(&e))?;
    let defs: std::collections::BTreeMap<String, tf::SignatureDef> =
        map.signature_def.into_iter().collect();
    Ok(ModelSignatures {
        meta_graphs: vec![MetaGraph {
            tags: vec![SERVE_TAG.to_string()],
            signatures: crate::formats::savedmodel::signatures(defs),
        }],
    })
}

/// A gRPC status as an error: no connection is [`NetError::Unreachable`], the deadline
/// passing (the server's `DEADLINE_EXCEEDED`) [`NetError::Timeout`], and a peer that
/// does not speak gRPC (a protocol error under the status, or an answer with no
/// `grpc-status`) [`NetError::NotGrpc`]; any other status is the server's refusal, its
/// message escaped.
///
/// `code` is the status code's number, `message` its message, `transport` the
/// transport error it was made of (if any), `from_server` whether the answer had a
/// `grpc-status`.
pub fn status_of(
    endpoint: &str,
    code: i32,
    message: &[u8],
    transport: Option<&str>,
    from_server: bool,
    timeout: Duration,
) -> NetError {
    let text = super::shown(message);
    if code == DEADLINE_EXCEEDED {
        return NetError::Timeout(timeout);
    }
    if let Some(t) = transport {
        let t = super::shown(t.as_bytes());
        // A broken, refused or reset connection is unreachable; a protocol error (made
        // INTERNAL or UNKNOWN) means the other end answered in something that is not
        // HTTP/2 gRPC.
        let garbled = matches!(code, INTERNAL | UNKNOWN) || is_protocol_error(&t);
        return if !garbled {
            NetError::Unreachable(format!("{endpoint}: {}", explain(t)))
        } else {
            NetError::NotGrpc(format!(
                "{endpoint} does not answer as a gRPC server ({t}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
            ))
        };
    }
    if !from_server {
        return NetError::NotGrpc(format!(
            "{endpoint} answered over HTTP/2 without a gRPC status ({text}); is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
        ));
    }
    if code == UNAVAILABLE {
        return NetError::Unreachable(format!("{endpoint}: {}", explain(text)));
    }
    NetError::Refused {
        status: format!("gRPC {}", code_name(code)),
        message: text,
    }
}

const UNKNOWN: i32 = 2;
const DEADLINE_EXCEEDED: i32 = 4;
const INTERNAL: i32 = 13;
const UNAVAILABLE: i32 = 14;

/// Whether a transport error says the peer spoke something else than HTTP/2.
fn is_protocol_error(t: &str) -> bool {
    [
        "protocol error",
        "frame",
        "HTTP/1",
        "preface",
        "invalid",
        "PROTOCOL_ERROR",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// The status code's canonical name (`INVALID_ARGUMENT`), from grpc's
/// include/grpcpp/support/status_code_enum.h; a number outside it is `CODE_N`.
fn code_name(code: i32) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(code)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| format!("CODE_{code}").into(), |n| (*n).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: i32, msg: &str, transport: Option<&str>, from_server: bool) -> NetError {
        let t = Duration::from_secs(1);
        status_of(
            "http://h:1",
            code,
            msg.as_bytes(),
            transport,
            from_server,
            t,
        )
    }

    #[test]
    fn who_made_the_status_decides_the_error() {
        // The server's own status is its refusal, its message escaped.
        let e = status(5, "no \x1b[31m model", None, true);
        assert!(e.is_refusal());
        assert!(
            e.to_string()
                .ends_with(r"gRPC NOT_FOUND: no \u{1b}[31m model"),
            "{e}"
        );
        assert_eq!(
            status(4, "late", None, true),
            NetError::Timeout(Duration::from_secs(1))
        );
        assert!(matches!(
            status(14, "down", None, true),
            NetError::Unreachable(_)
        ));
        assert!(status(99, "odd", None, true)
            .to_string()
            .contains("gRPC CODE_99"));
        // A protocol error under the status: no gRPC there.
        let h2 = "connection error detected: frame with invalid size";
        assert!(matches!(
            status(13, "h2", Some(h2), false),
            NetError::NotGrpc(_)
        ));
        // An answer without a status is no gRPC service.
        assert!(matches!(
            status(12, "404", None, false),
            NetError::NotGrpc(_)
        ));
        // A refused connection is unreachable.
        let refused = "tcp connect error: Connection refused";
        assert!(matches!(
            status(14, "x", Some(refused), false),
            NetError::Unreachable(_)
        ));
    }

    #[test]
    fn timeouts_and_messages_are_written_as_grpc_says() {
        assert_eq!(grpc_timeout(Duration::from_secs(30)), "30000m");
        assert_eq!(grpc_timeout(Duration::from_micros(10)), "1m");
        assert_eq!(grpc_timeout(Duration::from_secs(200_000)), "200000S");
        assert_eq!(grpc_timeout(Duration::MAX), "99999999H");
        assert_eq!(percent_decode(b"a%20b%zz%4"), b"a b%zz%4");
        assert_eq!(percent_decode(b"%E2%9C%93"), "\u{2713}".as_bytes());
    }

    /// A server that closes each connection after one call (h2's graceful shutdown: a
    /// GOAWAY, then the call it took answered): every call is answered, those it did
    /// not take sent again on a new connection, none twice.
    #[test]
    fn calls_go_on_across_connections_the_server_closes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (conns, calls) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (c2, k2) = (conns.clone(), calls.clone());
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            tokio::spawn(async move {
                loop {
                    let (s, _) = l.accept().await.unwrap();
                    c2.fetch_add(1, Ordering::SeqCst);
                    let k2 = k2.clone();
                    tokio::spawn(async move {
                        let mut conn = h2::server::handshake(s).await.unwrap();
                        if let Some(Ok((req, mut respond))) = conn.accept().await {
                            conn.graceful_shutdown();
                            k2.fetch_add(1, Ordering::SeqCst);
                            tokio::spawn(async move {
                                let mut body = req.into_body();
                                let mut got = Vec::new();
                                while let Some(c) = body.data().await {
                                    got.extend_from_slice(&c.unwrap());
                                }
                                let mut send = respond
                                    .send_response(::http::Response::new(()), false)
                                    .unwrap();
                                send.send_data(Bytes::from(got), false).unwrap();
                                let mut t = ::http::HeaderMap::new();
                                t.insert("grpc-status", "0".parse().unwrap());
                                send.send_trailers(t).unwrap();
                            });
                            // Refuses what comes after, and ends.
                            while let Some(r) = conn.accept().await {
                                if let Ok((_, mut respond)) = r {
                                    respond.send_reset(h2::Reason::REFUSED_STREAM);
                                }
                            }
                        }
                    });
                }
            });
            let t = Duration::from_secs(10);
            let g = Grpc::connect(&format!("http://{addr}"), t, None, 1 << 20)
                .await
                .unwrap();
            for i in 0..5u8 {
                let mut g = g.clone();
                let got = g.predict(Bytes::from(vec![i; 3]), t).await.unwrap();
                assert_eq!(&got[..], &[i; 3][..]);
            }
            // Two at once: one is taken, the other sent again.
            let (mut a, mut b) = (g.clone(), g.clone());
            let (x, y) = tokio::join!(
                a.predict(Bytes::from_static(b"x"), t),
                b.predict(Bytes::from_static(b"y"), t)
            );
            assert_eq!((&x.unwrap()[..], &y.unwrap()[..]), (&b"x"[..], &b"y"[..]));
        });
        assert_eq!(calls.load(Ordering::SeqCst), 7, "each call taken once");
        assert!(conns.load(Ordering::SeqCst) >= 7);
    }
}
