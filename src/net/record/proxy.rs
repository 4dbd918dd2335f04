//! The proxy: accepts HTTP/1.1 and cleartext HTTP/2 on one port, forwards each request
//! unchanged and queues its body for the recorder.

use std::collections::HashSet;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Empty, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

use super::activity::{Activity, Awaited, Watched};
use super::body::{Counted, PREFACE_PATIENCE, Replay, UPSTREAM_CONNECT, Upstream, read_ahead};
use super::events::*;
use super::recorder::*;
use crate::net::budget::Budget;
use crate::net::web::{Https, connector};
use crate::net::{NetError, Protocol};

/// Where and how the proxy forwards.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    /// The upstream: `http://HOST:PORT` (`grpc://` is taken as `http://`). Its path, if
    /// any, is not used: every request keeps its own.
    pub upstream: String,
    /// The largest request body copied for the recorder.
    pub max_size: u64,
    /// Fetch each REST model's metadata from the upstream (for its input dtypes).
    pub fetch_metadata: bool,
    /// For an `https://` or `grpcs://` upstream: PEM certificates of the CAs to trust
    /// instead of the webpki roots (see [`read_ca`](crate::net::read_ca)).
    pub ca_cert: Option<Bytes>,
    /// The most request bytes the proxy holds at once, across all connections: past it
    /// a body is passed on as it comes, not recorded.
    pub max_inflight: u64,
    /// The most client connections served at once: past it new ones wait to be
    /// accepted.
    pub max_connections: usize,
    /// How long an HTTP/1.1 client may take to send a request's headers, counted from
    /// when the proxy waits for them (so also how long a kept-alive connection may wait
    /// for its next request).
    pub header_timeout: Duration,
    /// A connection that sends and receives nothing for this long while no answer is
    /// awaited from the upstream is closed (an HTTP/2 connection served by hyper is also
    /// pinged every twice that, and closed when a ping goes unanswered this long).
    pub idle_timeout: Duration,
    /// How many distinct REST models' metadata is asked for and kept (the first ones
    /// seen); a later model's requests pass through unrecorded.
    pub max_models: usize,
}

/// The default [`ProxyOptions::max_inflight`]: 256 MiB.
pub const DEFAULT_MAX_INFLIGHT: u64 = 256 << 20;
/// The default [`ProxyOptions::max_connections`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default [`ProxyOptions::header_timeout`]: 30 s (hyper's own default).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`ProxyOptions::idle_timeout`]: 60 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The largest model metadata answer read: 16 MiB (a larger one is not used).
pub const MAX_METADATA: usize = 16 << 20;
/// How long a model metadata answer may take, body included.
pub const METADATA_DEADLINE: Duration = Duration::from_secs(30);

impl ProxyOptions {
    /// Options forwarding to `upstream` with every default.
    pub fn new(upstream: impl Into<String>) -> ProxyOptions {
        ProxyOptions {
            upstream: upstream.into(),
            max_size: DEFAULT_MAX_REQUEST_SIZE,
            fetch_metadata: true,
            ca_cert: None,
            max_inflight: DEFAULT_MAX_INFLIGHT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_models: DEFAULT_MAX_MODELS,
        }
    }
}

/// Checks an upstream URL ([`ProxyOptions::upstream`]): `http://HOST:PORT`,
/// `grpc://HOST:PORT`, or over TLS `https://` / `grpcs://` (a path is not used).
pub fn check_upstream(url: &str) -> Result<(), NetError> {
    upstream_base(url).map(drop)
}

/// The upstream's scheme (`http` or `https`) and authority.
fn upstream_base(url: &str) -> Result<(&'static str, ::http::uri::Authority), NetError> {
    let bad = |why: &str| NetError::BadUrl(format!("{url}: {why}"));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad("expected http://HOST:PORT or grpc://HOST:PORT"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" | "grpc" => "http",
        "https" | "grpcs" => "https",
        s => {
            return Err(bad(&format!(
                "unknown scheme {s:?} (expected http, https, grpc or grpcs)"
            )));
        }
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let authority: ::http::uri::Authority = authority
        .parse()
        .map_err(|e| bad(&format!("bad host: {e}")))?;
    Ok((scheme, authority))
}

/// An answer's body: the upstream's as hyper's client read it, as `h2` read it
/// ([`Upstream`]), or the proxy's own.
type Out = Either<Either<Incoming, Upstream>, Full<Bytes>>;

/// The proxy's shared state.
struct Proxy {
    scheme: &'static str,
    authority: ::http::uri::Authority,
    h1: hyper_util::client::legacy::Client<Https, Replay>,
    h2: hyper_util::client::legacy::Client<Https, Replay>,
    /// The HTTP/2 connection a gRPC call read whole is sent on (opened on the first).
    grpc: Mutex<Option<crate::net::grpc::Connection>>,
    ca_cert: Option<Bytes>,
    meta: hyper_util::client::legacy::Client<Https, Empty<Bytes>>,
    events: Events,
    max_size: u64,
    fetch_metadata: bool,
    /// The REST models whose metadata was asked for (at most `max_models`).
    asked: Mutex<HashSet<String>>,
    max_models: usize,
    budget: Arc<Budget>,
    answered: Arc<AtomicU64>,
}

/// A running proxy's counters.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Answers whose body was sent to the client to its end (or that failed).
    pub answered: Arc<AtomicU64>,
}

/// Serves the proxy on `listener` until `stop` completes: every connection's requests
/// are forwarded to [`ProxyOptions::upstream`], and every request body (up to
/// [`ProxyOptions::max_size`]) is queued on `events` for a [`Recorder`]'s thread
/// ([`run_recorder`]). When `stop` completes no connection is accepted any more and
/// the open ones end once their answers are sent (an idle HTTP/1.1 connection at once,
/// HTTP/2 with a GOAWAY); `serve` returns when they have, or when `hurry` completes
/// (connections still open are then dropped with the runtime).
pub async fn serve(
    listener: tokio::net::TcpListener,
    opts: ProxyOptions,
    events: Events,
    counters: Counters,
    stop: impl Future<Output = ()>,
    hurry: impl Future<Output = ()>,
) -> Result<(), NetError> {
    let (scheme, authority) = upstream_base(&opts.upstream)?;
    let ca = opts.ca_cert.as_deref();
    let h1 = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(connector(ca, false)?);
    let h2 = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build(connector(ca, true)?);
    let meta = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(connector(ca, false)?);
    let proxy = Arc::new(Proxy {
        scheme,
        authority,
        h1,
        h2,
        grpc: Mutex::new(None),
        ca_cert: opts.ca_cert.clone(),
        meta,
        events,
        max_size: opts.max_size,
        fetch_metadata: opts.fetch_metadata,
        asked: Mutex::new(HashSet::new()),
        max_models: opts.max_models,
        budget: Budget::new(opts.max_inflight),
        answered: counters.answered.clone(),
    });
    let mut server = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    server
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(opts.header_timeout);
    server
        .http2()
        .timer(TokioTimer::new())
        // Pinged less often than the idle timeout, so that the pings' own bytes do not
        // keep an idle connection open; a peer that does not answer one in time is gone.
        .keep_alive_interval(opts.idle_timeout.saturating_mul(2))
        .keep_alive_timeout(opts.idle_timeout);
    let max_connections = opts.max_connections.clamp(1, u32::MAX as usize);
    let slots = Arc::new(tokio::sync::Semaphore::new(max_connections));
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let idle = opts.idle_timeout;
    let mut stop = std::pin::pin!(stop);
    let mut backoff = ACCEPT_BACKOFF_MIN;
    loop {
        // Past the most connections, new ones wait in the listen queue.
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s,
            _ = &mut stop => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = ACCEPT_BACKOFF_MIN;
                stream
            }
            Err(e) => {
                // Out of descriptors or memory: accepting again at once would fail
                // again, in a loop that starves every connection being served.
                if is_resource_error(&e) {
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = &mut stop => break,
                    }
                    backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (p, server, stopped) = (proxy.clone(), server.clone(), stopped.clone());
        tokio::spawn(async move {
            let _slot = slot;
            p.connection(stream, server, stopped, idle).await;
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    // Every connection's task holds a slot until it ends.
    tokio::select! {
        _ = slots.acquire_many(max_connections as u32) => {}
        _ = hurry => {}
    }
    Ok(())
}

/// The first wait after an `accept` failed for want of descriptors or memory; it
/// doubles with each failure in a row, up to [`ACCEPT_BACKOFF_MAX`].
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest wait after failed `accept`s.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Whether an `accept` error is the process or system running out of something
/// (descriptors, buffers, memory), which another `accept` at once would meet again.
fn is_resource_error(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1): not
/// forwarded.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "transfer-encoding",
    "upgrade",
    "te",
];

fn strip_hop_by_hop(h: &mut ::http::HeaderMap, keep_te_trailers: bool) {
    let te_trailers = h
        .get("te")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"trailers"));
    for name in HOP_BY_HOP {
        h.remove(name);
    }
    if keep_te_trailers && te_trailers {
        h.insert("te", ::http::HeaderValue::from_static("trailers"));
    }
}

impl Proxy {
    /// Serves one client connection until it ends, stays idle past `idle`, or (once
    /// `stopped` turns true) has no answer left to send.
    async fn connection(
        self: Arc<Self>,
        stream: tokio::net::TcpStream,
        server: hyper_util::server::conn::auto::Builder<TokioExecutor>,
        mut stopped: tokio::sync::watch::Receiver<bool>,
        idle: Duration,
    ) {
        // Cleartext HTTP/2 to a cleartext upstream is relayed byte for byte and
        // read on the side (src/net/tap.rs); the rest goes through hyper.
        if self.scheme == "http"
            && crate::net::tap::opens_with_preface(&stream, PREFACE_PATIENCE).await
        {
            let addr = match self.authority.port_u16() {
                Some(_) => self.authority.as_str().to_string(),
                None => format!("{}:80", self.authority.as_str()),
            };
            let up =
                tokio::time::timeout(UPSTREAM_CONNECT, tokio::net::TcpStream::connect(addr)).await;
            // An upstream that cannot be reached is answered by hyper's side
            // (gRPC UNAVAILABLE for each call).
            if let Ok(Ok(up)) = up {
                let _ = up.set_nodelay(true);
                let limits = crate::net::tap::Limits {
                    max_size: self.max_size,
                    budget: self.budget.clone(),
                    idle,
                    stopped,
                };
                let answered = self.answered.clone();
                let note = self.tap_note();
                crate::net::tap::relay(stream, up, limits, answered, note).await;
                return;
            }
        }
        let activity = Activity::new();
        let io = Watched {
            io: stream,
            activity: activity.clone(),
        };
        let a = activity.clone();
        let svc = hyper::service::service_fn(move |req| {
            let (p, a) = (self.clone(), a.clone());
            async move { Ok::<_, Infallible>(p.forward(req, a).await) }
        });
        let conn = server.serve_connection(TokioIo::new(io), svc);
        let mut conn = std::pin::pin!(conn);
        let mut stopping = *stopped.borrow();
        if stopping {
            conn.as_mut().graceful_shutdown();
        }
        loop {
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = activity.idle(idle) => return,
                changed = stopped.changed(), if !stopping => {
                    stopping = true;
                    if changed.is_ok() {
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
        }
    }

    /// Forwards one request: its body read ahead ([`read_ahead`]), queued for the
    /// recorder, sent on, and the answer streamed back. From the request's last byte to
    /// the answer's, the connection counts as awaiting the upstream (not idle).
    async fn forward(
        self: Arc<Self>,
        req: ::http::Request<Incoming>,
        activity: Arc<Activity>,
    ) -> ::http::Response<Counted<Out>> {
        let grpc = is_grpc(req.headers());
        let h2 = req.version() == ::http::Version::HTTP_2;
        let path = req.uri().path().to_string();
        let protocol = self.clone().protocol_of(req.method(), &path, grpc);
        let (mut parts, body) = req.into_parts();
        let pq = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let uri = ::http::Uri::builder()
            .scheme(self.scheme)
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build();
        let Ok(uri) = uri else {
            return self.failed(grpc, "the request's path is not a valid URI".into());
        };
        parts.uri = uri;
        strip_hop_by_hop(&mut parts.headers, true);
        // The server side answered any `Expect: 100-continue` already.
        parts.headers.remove(::http::header::EXPECT);
        if !h2 {
            parts.headers.insert(
                ::http::header::HOST,
                ::http::HeaderValue::from_str(self.authority.as_str())
                    .unwrap_or(::http::HeaderValue::from_static("localhost")),
            );
        }
        let (mut replay, whole) = match read_ahead(body, self.max_size, self.budget.hold()).await {
            Ok(r) => r,
            Err(e) => {
                return self.failed(grpc, format!("tfreq record: the request broke off: {e}"));
            }
        };
        let awaited: Awaited = Arc::new(Mutex::new(None));
        replay.ended = Some((activity, awaited.clone()));
        if replay.rest.is_none() {
            replay.end();
        }
        let mut res = self
            .send_on(grpc, h2, protocol, path, parts, replay, whole)
            .await;
        res.body_mut().busy = Some(awaited);
        res
    }

    /// [`Proxy::forward`] once the body is read ahead.
    #[allow(clippy::too_many_arguments)]
    async fn send_on(
        &self,
        grpc: bool,
        h2: bool,
        protocol: Option<Protocol>,
        path: String,
        parts: ::http::request::Parts,
        replay: Replay,
        whole: Option<Bytes>,
    ) -> ::http::Response<Counted<Out>> {
        if let Some(protocol) = protocol {
            self.events.send(match (&whole, replay.over_budget) {
                (None, true) => Event::OverBudget { protocol, path },
                _ => Event::Request {
                    protocol,
                    path,
                    body: whole.clone(),
                },
            });
        }
        if h2
            && grpc
            && replay.rest.is_none()
            && replay.ahead.iter().all(Frame::is_data)
            && let Some(body) = &whole
        {
            return self.forward_whole(parts, body.clone()).await;
        }
        let up = ::http::Request::from_parts(parts, replay);
        let res = if h2 {
            self.h2.request(up).await
        } else {
            self.h1.request(up).await
        };
        match res {
            Ok(r) => {
                let (mut parts, body) = r.into_parts();
                if !h2 {
                    strip_hop_by_hop(&mut parts.headers, false);
                }
                ::http::Response::from_parts(
                    parts,
                    Counted::new(Either::Left(Either::Left(body)), self.answered.clone()),
                )
            }
            Err(e) => self.failed(grpc, format!("tfreq record: the upstream failed: {e}")),
        }
    }

    /// How a request is read, from its method, path and whether it is gRPC; asks for a
    /// REST model's metadata the first time it is seen.
    fn protocol_of(
        self: Arc<Self>,
        method: &::http::Method,
        path: &str,
        grpc: bool,
    ) -> Option<Protocol> {
        let protocol = if grpc {
            Some(Protocol::Grpc)
        } else if path.starts_with("/v1/models/") {
            Some(Protocol::Rest)
        } else if method == ::http::Method::POST {
            Some(Protocol::Eas)
        } else {
            None
        };
        if protocol == Some(Protocol::Rest)
            && self.fetch_metadata
            && let Some(m) = rest_predict_model(path)
        {
            self.ask_metadata(m.to_string());
        }
        protocol
    }

    /// Where a relayed connection's requests go (src/net/tap.rs): to the recorder,
    /// as [`Proxy::forward`] sends them.
    fn tap_note(self: Arc<Self>) -> crate::net::tap::Note {
        Arc::new(move |n| match n {
            crate::net::tap::Noted::Request(seen) => {
                let grpc = is_grpc(&seen.headers);
                if let Some(protocol) = self.clone().protocol_of(&seen.method, &seen.path, grpc) {
                    self.events.send(if seen.over_budget {
                        Event::OverBudget {
                            protocol,
                            path: seen.path,
                        }
                    } else {
                        Event::Request {
                            protocol,
                            path: seen.path,
                            body: seen.body,
                        }
                    });
                }
            }
            crate::net::tap::Noted::Lost(why) => self.events.send(Event::Unread { why }),
        })
    }

    /// A gRPC call whose request was read whole, sent on with `h2` itself: its HEADERS
    /// and DATA frames in one write (hyper's client sends the body once the connection
    /// task has opened the stream: a second write, and a second wake-up of the upstream,
    /// a call), the answer streamed back frame by frame, trailers included.
    async fn forward_whole(
        &self,
        parts: ::http::request::Parts,
        body: Bytes,
    ) -> ::http::Response<Counted<Out>> {
        let failed =
            |e: NetError| self.failed(true, format!("tfreq record: the upstream failed: {e}"));
        let mut conn = match self.grpc.lock().ok().and_then(|c| c.clone()) {
            Some(c) => c,
            None => {
                let endpoint = format!("{}://{}", self.scheme, self.authority);
                match crate::net::grpc::Connection::open(
                    &endpoint,
                    UPSTREAM_CONNECT,
                    self.ca_cert.as_deref(),
                )
                .await
                {
                    Ok(c) => c,
                    Err(e) => return failed(e),
                }
            }
        };
        let send = conn.ready().await;
        if let Ok(mut kept) = self.grpc.lock() {
            *kept = Some(conn.clone());
        }
        let mut send = match send {
            Ok(s) => s,
            Err(e) => return failed(e),
        };
        let transport =
            |e: h2::Error| failed(crate::net::grpc::transport_error(conn.endpoint(), &e));
        let req = ::http::Request::from_parts(parts, ());
        let (answer, mut stream) = match send.send_request(req, body.is_empty()) {
            Ok(s) => s,
            Err(e) => return transport(e),
        };
        if !body.is_empty()
            && let Err(e) = stream.send_data(body, true)
        {
            return transport(e);
        }
        match answer.await {
            Ok(r) => {
                let (parts, recv) = r.into_parts();
                let up = Upstream {
                    recv,
                    data_done: false,
                    done: false,
                };
                ::http::Response::from_parts(
                    parts,
                    Counted::new(Either::Left(Either::Right(up)), self.answered.clone()),
                )
            }
            Err(e) => transport(e),
        }
    }

    /// The answer when the upstream could not be reached: gRPC `UNAVAILABLE` (as a
    /// gRPC client says it), else `502 Bad Gateway`.
    fn failed(&self, grpc: bool, why: String) -> ::http::Response<Counted<Out>> {
        let mut r = ::http::Response::builder();
        let body = if grpc {
            r = r
                .status(200)
                .header("content-type", "application/grpc")
                .header("grpc-status", "14")
                .header(
                    "grpc-message",
                    ::http::HeaderValue::from_str(&percent(&why))
                        .unwrap_or(::http::HeaderValue::from_static("upstream failed")),
                );
            Full::new(Bytes::new())
        } else {
            r = r.status(502).header("content-type", "text/plain");
            Full::new(Bytes::from(why))
        };
        r.body(Counted::new(Either::Right(body), self.answered.clone()))
            .unwrap_or_else(|_| {
                ::http::Response::new(Counted::new(
                    Either::Right(Full::new(Bytes::new())),
                    self.answered.clone(),
                ))
            })
    }

    /// Fetches a REST model's metadata once, in the background, for the recorder: for
    /// the first [`ProxyOptions::max_models`] models only (the recorder counts the later
    /// ones' requests as not recorded), at most [`MAX_METADATA`] bytes within
    /// [`METADATA_DEADLINE`]. A failure is the recorder's to report: the requests
    /// themselves are passed on whatever the metadata does.
    fn ask_metadata(self: Arc<Self>, model_path: String) {
        {
            let Ok(mut asked) = self.asked.lock() else {
                return;
            };
            if asked.len() >= self.max_models || !asked.insert(model_path.clone()) {
                return;
            }
        }
        tokio::spawn(async move {
            let uri = format!(
                "{}://{}/v1/models/{model_path}/metadata",
                self.scheme, self.authority
            );
            let json = async {
                let uri: ::http::Uri = uri.parse().map_err(|e| format!("{e}"))?;
                let r = self.meta.get(uri).await.map_err(|e| e.to_string())?;
                let status = r.status();
                let body = http_body_util::Limited::new(r.into_body(), MAX_METADATA)
                    .collect()
                    .await
                    .map_err(|e| match e.downcast::<http_body_util::LengthLimitError>() {
                        Ok(_) => format!("the answer is over {} MiB", MAX_METADATA >> 20),
                        Err(e) => e.to_string(),
                    })?
                    .to_bytes();
                if status != ::http::StatusCode::OK {
                    return Err(format!("HTTP {status}: {}", crate::net::shown(&body)));
                }
                Ok(body)
            };
            let json = tokio::time::timeout(METADATA_DEADLINE, json)
                .await
                .unwrap_or_else(|_| {
                    Err(format!(
                        "no whole answer within {} s",
                        METADATA_DEADLINE.as_secs()
                    ))
                });
            self.events.send(Event::Metadata { model_path, json });
        });
    }
}

/// Whether a request is gRPC: its content type is `application/grpc` (or a `+` or `;`
/// variant of it).
fn is_grpc(headers: &::http::HeaderMap) -> bool {
    headers
        .get(::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// gRPC's `grpc-message` is percent-encoded (its spec: PROTOCOL-HTTP2.md of
/// <https://github.com/grpc/grpc>).
fn percent(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if (0x20..0x7f).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
