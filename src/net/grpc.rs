//! TF Serving's gRPC `PredictionService` (tensorflow_serving/apis/prediction_service.proto,
//! <https://github.com/tensorflow/serving>): `Predict` and `GetModelMetadata`, as a gRPC
//! client on the `h2` crate (hyper's HTTP/2).
//!
//! `Predict` sends the request's protobuf bytes as they are, so what goes on the wire
//! is exactly what the file holds, unknown fields included, and the answer is decoded
//! by tfreq's own decoder. The answer limit is
//! [`Options::max_response`](super::Options::max_response), by default TF Serving's own
//! ([`MAX_MESSAGE`], 2 GiB − 1); an answer's length prefix is checked against it before
//! the message is buffered.
//!
//! The HTTP/2 is `h2`'s, with explicit bounds (`builder`): a decoded header list of
//! at most 256 KiB, flow-control windows that bound what a server can
//! send ahead, and `h2`'s own defences (one pending `PING` or `SETTINGS` ACK, a bounded
//! count of `CONTINUATION` frames and of reset streams). A call that times out, or whose
//! future is dropped, drops its stream handles, and `h2` resets the stream
//! (`RST_STREAM CANCEL`) and frees its slot at once. A connection is watched by
//! keepalive `PING`s; one whose peer stops answering them, or on which a
//! call waited its whole deadline with no answer coming on the connection, is closed, and
//! the next call opens a new one.
//!
//! [`Grpc`] is `Clone`: the clones share one HTTP/2 connection, so many calls at once
//! travel on one connection as a gRPC channel's do. A call the server did not process
//! (`GOAWAY` above it, `REFUSED_STREAM`) is sent again on a new connection, at most
//! twice. The wire protocol: <https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md>.
//!
//! `record`'s proxy forwards calls it terminated over the same connections
//! (`Connection`): it passes any request's headers and trailers on, which a unary
//! client does not carry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message as _;

use super::web::{chain, unreachable};
use super::{MAX_MESSAGE, NetError};
use crate::formats::rest_json::percent_decode;
use crate::signature::{MetaGraph, ModelSignatures, SERVE_TAG};
use crate::wire::{tf, tfs};

/// `PredictionService/Predict`.
pub const PREDICT: &str = "/tensorflow.serving.PredictionService/Predict";
/// `PredictionService/GetModelMetadata`.
pub const GET_MODEL_METADATA: &str = "/tensorflow.serving.PredictionService/GetModelMetadata";

/// HTTP/2 flow-control windows offered to the server: large enough that an answer of
/// a few MiB on loopback is not held back by window updates (hyper's own defaults are
/// 2 MiB a stream and 5 MiB a connection), and the most a server can send ahead of what
/// the client read: 8 MiB a stream, 16 MiB a connection.
const STREAM_WINDOW: u32 = 8 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

/// The largest decoded header list (or trailer list) accepted, as `h2` counts it (each
/// field's name and value and 32 bytes, RFC 9113 §6.5.2): 256 KiB. A larger one fails
/// the call; `h2` stops storing fields past it, so an HPACK block that references a
/// large table entry again and again costs no memory.
pub(crate) const MAX_HEADER_LIST: u32 = 256 << 10;

/// The largest frame the server may send: 64 KiB (HTTP/2's default is 16 KiB).
const MAX_FRAME: u32 = 64 << 10;

/// Streams this client reset that are remembered (to ignore their late frames): 64.
const MAX_RESET_STREAMS: usize = 64;

/// Streams `h2` may reset for the server's protocol errors before it closes the
/// connection: 256.
const MAX_ERROR_RESETS: usize = 256;

/// Bytes `h2` buffers for a stream's request while waiting for the server's window:
/// 1 MiB.
const MAX_SEND_BUFFER: usize = 1 << 20;

/// The keepalive `PING`'s period and the wait for its `PONG`: the call deadline, between
/// 1 and 30 seconds (gRPC's own `keepalive_timeout` default is 20 seconds).
fn keepalive_period(timeout: Duration) -> Duration {
    timeout.clamp(Duration::from_secs(1), Duration::from_secs(30))
}

/// How long a connection closed from outside (keepalive unanswered, a call waited its
/// whole deadline with no answer on it) is still driven, for the calls on it to end and
/// its resets to be written, before its socket is closed: 1 second.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// A request body up to this size is copied behind its 5-byte gRPC prefix into one
/// `DATA` frame; a larger one is sent as it is, after the prefix, without a copy.
const COPY_BELOW: usize = 64 << 10;

/// A gRPC connection to TF Serving. Clones share the connection.
#[derive(Clone)]
pub struct Grpc {
    link: Arc<Link>,
    limit: usize,
    /// The last `grpc-timeout` header written, for the deadline it was written for
    /// (the same for every call of a run).
    deadline: Option<(Duration, ::http::HeaderValue)>,
}

impl std::fmt::Debug for Grpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grpc")
            .field("endpoint", &self.link.endpoint)
            .finish_non_exhaustive()
    }
}

/// Where a connection goes, and the connection now open (opened again when it closed).
struct Link {
    scheme: ::http::uri::Scheme,
    authority: ::http::uri::Authority,
    endpoint: String,
    ca_pem: Option<Arc<[u8]>>,
    connect_timeout: Duration,
    keepalive: Duration,
    live: Mutex<Option<Live>>,
    /// Held while a connection is being opened, so that calls at once open one.
    opening: tokio::sync::Mutex<()>,
}

/// An open connection: the handle streams are opened on, and its state.
#[derive(Clone)]
struct Live {
    send: h2::client::SendRequest<Bytes>,
    state: Arc<State>,
}

/// What the calls on a connection and its tasks share.
struct State {
    /// `true` once the connection is closed, or is to be closed at once (its task
    /// drops it: the socket is closed and the calls on it fail).
    closed: tokio::sync::watch::Sender<bool>,
    /// Answers (response headers) that came on it, for telling a stuck connection.
    answers: AtomicU64,
}

impl State {
    fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    fn close(&self) {
        self.closed.send_replace(true);
    }

    fn answers(&self) -> u64 {
        self.answers.load(Ordering::Relaxed)
    }
}

impl Link {
    fn new(
        endpoint: &str,
        connect_timeout: Duration,
        ca_pem: Option<&[u8]>,
    ) -> Result<Link, NetError> {
        let uri: ::http::Uri = endpoint
            .parse()
            .map_err(|e| NetError::BadUrl(format!("{endpoint}: {e}")))?;
        let (Some(scheme), Some(authority)) = (uri.scheme().cloned(), uri.authority().cloned())
        else {
            return Err(NetError::BadUrl(format!(
                "{endpoint}: expected http(s)://HOST:PORT"
            )));
        };
        Ok(Link {
            scheme,
            authority,
            endpoint: endpoint.to_string(),
            ca_pem: ca_pem.map(Arc::from),
            connect_timeout,
            keepalive: keepalive_period(connect_timeout),
            live: Mutex::new(None),
            opening: tokio::sync::Mutex::new(()),
        })
    }

    fn current(&self) -> Option<Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A connection ready for a new stream (waiting, when the server's stream limit is
    /// reached, for a stream to end), or a new connection when the one open is closed:
    /// nothing was sent on the new one yet, so nothing is sent twice.
    async fn ready(&self) -> Result<Live, NetError> {
        if let Some(live) = self.current().filter(|l| !l.state.is_closed())
            && let Some(ready) = Self::wait_ready(&live).await
        {
            return Ok(ready);
        }
        let _opening = self.opening.lock().await;
        // Another call may have opened one meanwhile.
        if let Some(live) = self.current().filter(|l| !l.state.is_closed())
            && let Some(ready) = Self::wait_ready(&live).await
        {
            return Ok(ready);
        }
        let uri = self.uri("/")?;
        let live = handshake(
            &uri,
            &self.endpoint,
            self.connect_timeout,
            self.ca_pem.as_deref(),
            self.keepalive,
        )
        .await?;
        *self.live.lock().unwrap_or_else(|e| e.into_inner()) = Some(live.clone());
        let state = live.state.clone();
        let send = live
            .send
            .ready()
            .await
            .map_err(|e| transport_error(&self.endpoint, &e))?;
        Ok(Live { send, state })
    }

    /// `live` ready for a new stream, or `None` (and marked closed) when it closed.
    async fn wait_ready(live: &Live) -> Option<Live> {
        let mut closed = live.state.closed.subscribe();
        tokio::select! {
            r = live.send.clone().ready() => match r {
                Ok(send) => Some(Live { send, state: live.state.clone() }),
                Err(_) => {
                    live.state.close();
                    None
                }
            },
            _ = until_closed(&mut closed) => None,
        }
    }

    /// The server's URI with `path_and_query`.
    fn uri(&self, path_and_query: &str) -> Result<::http::Uri, NetError> {
        ::http::Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path_and_query)
            .build()
            .map_err(|e| NetError::BadUrl(format!("{}: {e}", self.endpoint)))
    }
}

/// One HTTP/2 connection to a server on `h2`'s client, for `record`'s proxy, opened
/// again when the server closed it (a restarted server, an idle timeout, keepalive
/// `PING`s unanswered). Clones share the connection.
#[derive(Clone)]
pub(crate) struct Connection {
    link: Arc<Link>,
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
        let link = Arc::new(Link::new(endpoint, timeout, ca_pem)?);
        link.ready().await?;
        Ok(Connection { link })
    }

    /// The connection ready for a new stream, or a new connection when the server
    /// closed this one: nothing was sent on it yet, so nothing is sent twice.
    pub(crate) async fn ready(&mut self) -> Result<h2::client::SendRequest<Bytes>, NetError> {
        Ok(self.link.ready().await?.send)
    }

    /// The endpoint it was opened for.
    pub(crate) fn endpoint(&self) -> &str {
        &self.link.endpoint
    }
}

/// The TCP (or TLS) stream a connection runs on.
type Io = hyper_util::rt::TokioIo<
    hyper_rustls::MaybeHttpsStream<hyper_util::rt::TokioIo<tokio::net::TcpStream>>,
>;

/// What a call does with the answer's message: keep it, or count its bytes and drop
/// them as they come (`tfreq load`, which never decodes answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The message is gathered and returned.
    Message,
    /// The message's bytes are counted and dropped.
    Count,
}

/// A call's answer: the message, or how many bytes it had when dropped.
enum Got {
    Message(Bytes),
    Counted(u64),
}

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
        let link = Arc::new(Link::new(endpoint, timeout, ca_pem)?);
        link.ready().await?;
        Ok(Grpc {
            link,
            limit: limit.min(MAX_MESSAGE),
            deadline: None,
        })
    }

    /// `grpc-timeout` for `timeout`, written once for a run's calls.
    fn deadline_header(&mut self, timeout: Duration) -> ::http::HeaderValue {
        match &self.deadline {
            Some((t, v)) if *t == timeout => v.clone(),
            _ => {
                let v = ::http::HeaderValue::from_str(&grpc_timeout(timeout))
                    .unwrap_or_else(|_| ::http::HeaderValue::from_static("30S"));
                self.deadline = Some((timeout, v.clone()));
                v
            }
        }
    }

    /// A unary call: `body` (one message) to `path`, the answer's message (or its
    /// size, with [`Keep::Count`]). A call the server did not process because it was
    /// closing the connection is sent again, on a new connection, at most twice. A call
    /// past its deadline is dropped, which resets its stream; when no answer at all came
    /// on the connection while it waited, the connection is closed for the next call to
    /// open a new one.
    async fn unary(
        &mut self,
        path: &'static str,
        body: Bytes,
        timeout: Duration,
        keep: Keep,
    ) -> Result<Got, NetError> {
        if body.len() > MAX_MESSAGE {
            return Err(NetError::BadRequest(format!(
                "a request of {} bytes is over gRPC's limit of {MAX_MESSAGE} bytes",
                body.len()
            )));
        }
        let grpc_timeout = self.deadline_header(timeout);
        let uri = self.link.uri(path)?;
        // The connection the call last went on, and its answers when the call began.
        let mut on: Option<(Arc<State>, u64)> = None;
        let call = async {
            let mut tries = 0;
            loop {
                tries += 1;
                let live = self.link.ready().await?;
                on = Some((live.state.clone(), live.state.answers()));
                let req = ::http::Request::builder()
                    .method(::http::Method::POST)
                    .uri(uri.clone())
                    .header("content-type", "application/grpc")
                    .header("te", "trailers")
                    .header("grpc-timeout", grpc_timeout.clone())
                    .header("user-agent", concat!("tfreq/", env!("CARGO_PKG_VERSION")))
                    .body(())
                    .map_err(|e| NetError::BadUrl(format!("{}: {e}", self.link.endpoint)))?;
                let mut send = live.send;
                let (answer, mut stream) = match send.send_request(req, false) {
                    Ok(s) => s,
                    Err(e) if unprocessed(&e) && tries < 3 => {
                        live.state.close();
                        continue;
                    }
                    Err(e) => return Err(self.transport(&e)),
                };
                // The prefix: not compressed, the length (checked above to fit).
                let len = body.len() as u32;
                let sent = if body.len() < COPY_BELOW {
                    let mut frame = BytesMut::with_capacity(5 + body.len());
                    frame.put_u8(0);
                    frame.put_u32(len);
                    frame.put_slice(&body);
                    stream.send_data(frame.freeze(), true)
                } else {
                    let mut prefix = BytesMut::with_capacity(5);
                    prefix.put_u8(0);
                    prefix.put_u32(len);
                    stream
                        .send_data(prefix.freeze(), false)
                        .and_then(|()| stream.send_data(body.clone(), true))
                };
                // A failure to queue the body shows in the answer's error.
                let _ = sent;
                let answer = match answer.await {
                    Ok(a) => a,
                    Err(e) if unprocessed(&e) && tries < 3 => {
                        live.state.close();
                        continue;
                    }
                    Err(e) => return Err(self.transport(&e)),
                };
                live.state.answers.fetch_add(1, Ordering::Relaxed);
                return self.answer(answer, timeout, keep).await;
            }
        };
        match tokio::time::timeout(timeout, call).await {
            Ok(r) => r,
            Err(_) => {
                if let Some((state, before)) = on
                    && state.answers() == before
                {
                    state.close();
                }
                Err(NetError::Timeout(timeout))
            }
        }
    }

    /// Reads an answer: its one message (or its size), or its status as an error.
    async fn answer(
        &self,
        answer: ::http::Response<h2::RecvStream>,
        timeout: Duration,
        keep: Keep,
    ) -> Result<Got, NetError> {
        let endpoint = &self.link.endpoint;
        let (head, mut body) = answer.into_parts();
        // "Trailers-Only": the status in the headers, no message.
        if head.headers.contains_key("grpc-status") {
            if head.headers.get("grpc-status").map(|v| v.as_bytes()) != Some(b"0") {
                return Err(self.status(&head.headers, timeout));
            }
            return Err(NetError::BadResponse(format!(
                "{endpoint}: the answer ended before its message did"
            )));
        }
        if head.status != ::http::StatusCode::OK {
            return Err(NetError::NotGrpc(format!(
                "{endpoint} answered over HTTP/2 with HTTP status {} and no gRPC status; is this the gRPC port (TF Serving's 8500, not REST's 8501)?",
                head.status.as_u16()
            )));
        }
        let mut message = Message::new(self.limit, keep);
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|e| self.transport(&e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
            message.push(chunk).map_err(|e| match e {
                Framing::TooLarge => NetError::TooLarge {
                    limit: self.limit as u64,
                },
                Framing::Compressed => NetError::BadResponse(format!(
                    "{endpoint}: the answer is compressed, though no compression was offered"
                )),
                Framing::Extra => NetError::BadResponse(format!(
                    "{endpoint}: the answer to a unary call holds more than one message"
                )),
            })?;
        }
        let trailers = body.trailers().await.map_err(|e| self.transport(&e))?;
        match trailers {
            Some(t) if t.contains_key("grpc-status") => {
                if t.get("grpc-status").map(|v| v.as_bytes()) != Some(b"0") {
                    return Err(self.status(&t, timeout));
                }
            }
            _ => {
                return Err(NetError::NotGrpc(format!(
                    "{endpoint} answered over HTTP/2 without a gRPC status; is this the gRPC port (TF Serving's 8500, not REST's 8501)?"
                )));
            }
        }
        message.finish().ok_or_else(|| {
            NetError::BadResponse(format!(
                "{endpoint}: the answer ended before its message did"
            ))
        })
    }

    /// The status of `grpc-status` / `grpc-message` headers as an error.
    fn status(&self, h: &::http::HeaderMap, timeout: Duration) -> NetError {
        let code = h
            .get("grpc-status")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<i32>().ok())
            .unwrap_or(2); // UNKNOWN, as gRPC reads a status it cannot parse
        let message = h
            .get("grpc-message")
            .map(|v| percent_decode(v.as_bytes()))
            .unwrap_or_default();
        status_of(&self.link.endpoint, code, &message, None, true, timeout)
    }

    /// A connection or stream error as an error: the connection failing is
    /// unreachable, the peer breaking HTTP/2 no gRPC service.
    fn transport(&self, e: &h2::Error) -> NetError {
        transport_error(&self.link.endpoint, e)
    }

    /// `Predict`: the request's bytes, the response's bytes.
    pub async fn predict(&mut self, body: Bytes, timeout: Duration) -> Result<Bytes, NetError> {
        match self.unary(PREDICT, body, timeout, Keep::Message).await? {
            Got::Message(m) => Ok(m),
            Got::Counted(_) => unreachable!("a kept message is returned"),
        }
    }

    /// `Predict` whose answer is checked (framing, limit, status) but not kept: its
    /// message's size in bytes.
    pub(crate) async fn predict_counted(
        &mut self,
        body: Bytes,
        timeout: Duration,
    ) -> Result<u64, NetError> {
        match self.unary(PREDICT, body, timeout, Keep::Count).await? {
            Got::Counted(n) => Ok(n),
            Got::Message(m) => Ok(m.len() as u64),
        }
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
        let raw = match self
            .unary(
                GET_MODEL_METADATA,
                Bytes::from(req.encode_to_vec()),
                timeout,
                Keep::Message,
            )
            .await?
        {
            Got::Message(m) => m,
            Got::Counted(_) => unreachable!("a kept message is returned"),
        };
        read_metadata(raw)
    }
}

/// Whether a call failed before the server processed it: a `GOAWAY` from the server
/// above its stream, or its stream refused (RFC 9113 §8.7).
fn unprocessed(e: &h2::Error) -> bool {
    e.is_remote() && (e.is_go_away() || e.reason() == Some(h2::Reason::REFUSED_STREAM))
}

/// `h2`'s client with this client's bounds (each constant above says its value).
fn builder() -> h2::client::Builder {
    let mut b = h2::client::Builder::new();
    b.initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .max_frame_size(MAX_FRAME)
        .max_header_list_size(MAX_HEADER_LIST)
        .header_table_size(4096)
        .max_concurrent_reset_streams(MAX_RESET_STREAMS)
        .max_local_error_reset_streams(Some(MAX_ERROR_RESETS))
        .max_send_buffer_size(MAX_SEND_BUFFER)
        .enable_push(false);
    b
}

/// Opens a connection to `uri` (TCP without delay, and TLS for `https` offering `h2` by
/// ALPN), says HTTP/2's preface, and starts the connection's task and its keepalive
/// task on the current runtime.
async fn handshake(
    uri: &::http::Uri,
    endpoint: &str,
    timeout: Duration,
    ca_pem: Option<&[u8]>,
    keepalive_every: Duration,
) -> Result<Live, NetError> {
    use tower_service::Service as _;
    let mut connector = super::web::connector(ca_pem, true)?;
    let connect = async {
        std::future::poll_fn(|cx| connector.poll_ready(cx)).await?;
        connector.call(uri.clone()).await
    };
    let io = tokio::time::timeout(timeout, connect)
        .await
        .map_err(|_| NetError::Timeout(timeout))?
        .map_err(|e| unreachable(format!("{endpoint}: {}", chain(&*e))))?;
    let io: Io = hyper_util::rt::TokioIo::new(io);
    let (send, mut connection) = tokio::time::timeout(timeout, builder().handshake::<_, Bytes>(io))
        .await
        .map_err(|_| NetError::Timeout(timeout))?
        .map_err(|e| transport_error(endpoint, &e))?;
    let state = Arc::new(State {
        closed: tokio::sync::watch::Sender::new(false),
        answers: AtomicU64::new(0),
    });
    if let Some(pings) = connection.ping_pong() {
        tokio::spawn(keepalive(pings, state.clone(), keepalive_every));
    }
    // The connection's errors reach the calls on it; the task ends with the connection,
    // or, when it is closed from outside, writes what is queued (the resets of calls
    // that timed out) for at most CLOSE_GRACE, then drops it, closing the socket.
    let s = state.clone();
    tokio::spawn(async move {
        let mut closed = s.closed.subscribe();
        tokio::select! {
            _ = &mut connection => {}
            _ = until_closed(&mut closed) => {
                let _ = tokio::time::timeout(CLOSE_GRACE, &mut connection).await;
            }
        }
        s.close();
    });
    Ok(Live { send, state })
}

/// Waits until the connection is closed.
async fn until_closed(closed: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = closed.wait_for(|c| *c).await;
}

/// Sends a `PING` every `every` while the connection is open; one whose `PONG` does
/// not come within `every` closes the connection (the peer is gone or stuck).
async fn keepalive(mut pings: h2::PingPong, state: Arc<State>, every: Duration) {
    let mut closed = state.closed.subscribe();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = until_closed(&mut closed) => return,
        }
        match tokio::time::timeout(every, pings.ping(h2::Ping::opaque())).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => {
                state.close();
                return;
            }
        }
    }
}

/// An `h2` error as an error: a failing connection (I/O, the server going away or
/// resetting the call) is unreachable; the peer breaking HTTP/2, which `h2` answers
/// with a `GOAWAY` of its own, means the other end does not speak gRPC; an answer whose
/// headers are over [`MAX_HEADER_LIST`] (the stream `h2` refused itself) says so.
pub(crate) fn transport_error(endpoint: &str, e: &h2::Error) -> NetError {
    let text = super::shown(chain(e).as_bytes());
    if e.is_reset() && !e.is_remote() && e.reason() == Some(h2::Reason::REFUSED_STREAM) {
        return NetError::BadResponse(format!(
            "{endpoint}: the answer's headers are larger than the limit of {} KiB (decoded), or broke HTTP/2; the call was refused ({text})",
            MAX_HEADER_LIST >> 10
        ));
    }
    if !e.is_remote() && e.reason() == Some(h2::Reason::ENHANCE_YOUR_CALM) {
        return NetError::BadResponse(format!(
            "{endpoint}: the server sent more than this client's limits allow (header lists of at most {} KiB decoded, a bounded count of CONTINUATION frames, resets and small frames); the connection was closed ({text})",
            MAX_HEADER_LIST >> 10
        ));
    }
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
        unreachable(format!("{endpoint}: {text}"))
    }
}

/// Why an answer's body is not one gRPC message.
#[derive(Debug, PartialEq)]
enum Framing {
    TooLarge,
    Compressed,
    Extra,
}

/// An answer's one length-prefixed message, gathered from its `DATA` frames (or, with
/// [`Keep::Count`], counted and dropped): the prefix is checked against the limit as
/// soon as it has come, and a message that came in one frame is kept without a copy.
struct Message {
    limit: usize,
    keep: Keep,
    first: Option<Bytes>,
    rest: BytesMut,
    /// The prefix's bytes while it is incomplete (counting only).
    prefix: Vec<u8>,
    /// Bytes seen, prefix included.
    seen: u64,
    /// The prefix and message's length, once the prefix has come.
    whole: Option<u64>,
}

impl Message {
    fn new(limit: usize, keep: Keep) -> Message {
        Message {
            limit,
            keep,
            first: None,
            rest: BytesMut::new(),
            prefix: Vec::new(),
            seen: 0,
            whole: None,
        }
    }

    fn push(&mut self, chunk: Bytes) -> Result<(), Framing> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.whole.is_none() {
            let need = 5 - self.prefix.len();
            self.prefix
                .extend_from_slice(&chunk[..need.min(chunk.len())]);
            if self.prefix.len() == 5 {
                if self.prefix[0] != 0 {
                    return Err(Framing::Compressed);
                }
                let p = &self.prefix;
                let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]) as usize;
                if len > self.limit {
                    return Err(Framing::TooLarge);
                }
                self.whole = Some(5 + len as u64);
            }
        }
        self.seen += chunk.len() as u64;
        if let Some(w) = self.whole
            && self.seen > w
        {
            return Err(Framing::Extra);
        }
        if self.keep == Keep::Count {
            return Ok(());
        }
        if self.first.is_none() && self.rest.is_empty() {
            self.first = Some(chunk);
        } else {
            if let Some(f) = self.first.take() {
                // At most 64 MiB ahead: a length prefix alone makes no allocation.
                let want = self.whole.unwrap_or(0).min(64 << 20) as usize;
                self.rest.reserve(want.max(f.len() + chunk.len()));
                self.rest.extend_from_slice(&f);
            }
            self.rest.extend_from_slice(&chunk);
        }
        Ok(())
    }

    /// The message (or its size), when exactly one came whole.
    fn finish(self) -> Option<Got> {
        if self.whole? != self.seen {
            return None;
        }
        if self.keep == Keep::Count {
            return Some(Got::Counted(self.seen - 5));
        }
        let mut all = match self.first {
            Some(f) => f,
            None => self.rest.freeze(),
        };
        all.advance(5);
        Some(Got::Message(all))
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
            unreachable(format!("{endpoint}: {t}"))
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
        return unreachable(format!("{endpoint}: {text}"));
    }
    NetError::Refused {
        status: super::Status::Grpc(code),
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
        assert!(
            status(99, "odd", None, true)
                .to_string()
                .contains("gRPC CODE_99")
        );
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
    fn messages_are_framed_checked_and_kept_whole_or_counted() {
        let framed = |m: &[u8]| {
            let mut v = vec![0u8];
            v.extend_from_slice(&(m.len() as u32).to_be_bytes());
            v.extend_from_slice(m);
            v
        };
        let kept = |g: Option<Got>| match g {
            Some(Got::Message(m)) => Some(m),
            _ => None,
        };
        // One frame, or split anywhere, gives the same message, or the same count.
        let f = framed(b"hello");
        for cut in 0..=f.len() {
            let mut m = Message::new(100, Keep::Message);
            m.push(Bytes::copy_from_slice(&f[..cut])).unwrap();
            m.push(Bytes::copy_from_slice(&f[cut..])).unwrap();
            assert_eq!(
                kept(m.finish()).as_deref(),
                Some(&b"hello"[..]),
                "cut at {cut}"
            );
            let mut c = Message::new(100, Keep::Count);
            c.push(Bytes::copy_from_slice(&f[..cut])).unwrap();
            c.push(Bytes::copy_from_slice(&f[cut..])).unwrap();
            assert!(matches!(c.finish(), Some(Got::Counted(5))), "cut at {cut}");
        }
        // Over the limit: refused on the prefix alone, counted or kept.
        for keep in [Keep::Message, Keep::Count] {
            let mut m = Message::new(4, keep);
            assert_eq!(
                m.push(Bytes::copy_from_slice(&f[..5])),
                Err(Framing::TooLarge)
            );
        }
        // Compressed, a second message, a cut message.
        let mut c = f.clone();
        c[0] = 1;
        assert_eq!(
            Message::new(100, Keep::Count).push(c.into()),
            Err(Framing::Compressed)
        );
        let mut two = f.clone();
        two.extend_from_slice(&f);
        assert_eq!(
            Message::new(100, Keep::Count).push(two.into()),
            Err(Framing::Extra)
        );
        let mut short = Message::new(100, Keep::Message);
        short.push(Bytes::copy_from_slice(&f[..7])).unwrap();
        assert!(short.finish().is_none());
        assert!(Message::new(100, Keep::Message).finish().is_none());
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
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
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
