//! Sending requests to live services (feature `net`): PAI-EAS over HTTP, TF Serving
//! over gRPC and over REST, and EAS asynchronous (queue) services.
//!
//! [`Target::parse`] picks the protocol from the URL; [`Client`] connects once and
//! sends any number of requests over the same connection, converting each request to
//! the wire the service speaks with [`crate::formats::write`]'s rules (and saying
//! what the conversion lost, see [`Exchange::notes`]). Every answer is decoded into the
//! neutral [`Message`], so the same renderers, comparisons and analyses apply.
//!
//! Errors say which side failed ([`NetError`]): a service that answered and refused
//! (HTTP status, gRPC status), or one that could not be reached or did not answer in
//! time. The CLI maps the first to exit 1 and the second to exit 2.
//!
//! ```
//! use tfreq::net::{Protocol, Target};
//! let t = Target::parse("http://127.0.0.1:8080/api/predict/faq", None)?;
//! assert_eq!(t.protocol(), Protocol::Eas);
//! let t = Target::parse("grpc://127.0.0.1:8500", None)?;
//! assert_eq!(t.protocol(), Protocol::Grpc);
//! let t = Target::parse("http://127.0.0.1:8501/v1/models/faq/versions/2:predict", None)?;
//! assert_eq!(t.protocol(), Protocol::Rest);
//! # Ok::<(), tfreq::net::NetError>(())
//! ```

mod budget;
pub(crate) mod eas;
pub(crate) mod grpc;
mod load;
pub(crate) mod pool;
pub(crate) mod queue;
pub(crate) mod record;
pub(crate) mod rest;
mod status;
mod tap;
pub(crate) mod web;

pub use eas::{CONTENT_TYPE, SignedHeaders, canonical_path, headers, predict, sign};
pub use grpc::{GET_MODEL_METADATA, Grpc, PREDICT, read_metadata, status_of};
pub use pool::{AHEAD_PER_WORKER, InOrder, each};
pub use queue::{
    DataFrame, DataFrameList, FIRST_PAUSE, GID_HEADER, LAST_CODE, LAST_MESSAGE, LONGEST_PAUSE,
    PROTOBUF, Queue, REQUEST_ID_HEADER, Ticket, UID_HEADER, sink_answer, worker_failure,
};
pub use record::{
    Added, Counters, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_MODELS, DEFAULT_MAX_REQUEST_SIZE, Event, Events, Kept,
    MAX_METADATA, MAX_QUEUED, METADATA_DEADLINE, ProxyOptions, RecordOptions, Recorder, Wire,
    check_upstream, rest_predict_model, run_recorder, serve,
};
pub use rest::{Outputs, metadata_url, predict_url};

use std::fmt;
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::decode::decode_as;
use crate::encode::{TfsEncoding, encode};
use crate::model::{Kind, Message, WireFormat};
use crate::signature::ModelSignatures;

pub use load::{DEFAULT_REQUESTS, Load, LoadRequest};
pub use status::Status;

/// The largest gRPC message, sent or received: 2 GiB − 1, protobuf's own limit and TF
/// Serving's: its model server calls `builder.SetMaxMessageSize(tensorflow::kint32max)`
/// (tensorflow_serving/model_servers/server.cc, <https://github.com/tensorflow/serving>),
/// so it answers with messages up to that size. gRPC's usual default for a client,
/// 4 MiB, is too small for real responses. It is the default gRPC answer limit
/// ([`Options::max_response`]).
pub const MAX_MESSAGE: usize = i32::MAX as usize;

/// The default limit of an HTTP answer's body (EAS, TF Serving REST, the EAS queue):
/// 256 MiB, far above real prediction answers and small enough that a body that never
/// ends stops long before memory runs out ([`Options::max_response`]).
pub const DEFAULT_MAX_RESPONSE: u64 = 256 << 20;

/// The longest deadline a client uses ([`Options::timeout`] is cut to it): 24 hours. A
/// call or an asynchronous wait longer than a day is a mistake, and a bounded deadline
/// keeps every `Instant + timeout` and gRPC's `grpc-timeout` header in range.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// Text that came from a server (a body, a status message, a tag), as it is shown in an
/// error: escaped with [`crate::escape`] (src/escape.rs) and cut to 2000 characters.
pub fn shown(b: &[u8]) -> String {
    crate::escape::escape_short(b, 2000)
}

/// A message of a lower layer that may quote what a server sent (a name in a REST
/// answer): escaped with [`crate::escape`] when it holds anything unsafe to print, else
/// as it is (so its own quotes stay plain).
fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    if crate::escape::is_unsafe(s.as_bytes()) {
        std::borrow::Cow::Owned(crate::escape::escape(s))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The protocol a service speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// PAI-EAS: `POST` of the EAS `PredictRequest` bytes.
    Eas,
    /// TF Serving's gRPC `PredictionService`.
    Grpc,
    /// TF Serving's REST API (`/v1/models/NAME:predict`).
    Rest,
}

impl Protocol {
    /// `eas`, `grpc` or `rest`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Eas => "eas",
            Protocol::Grpc => "grpc",
            Protocol::Rest => "rest",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where to send requests, as the URL says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An EAS service: the full URL requests are posted to.
    Eas {
        /// `http(s)://HOST[:PORT]/api/predict/SERVICE` (or any URL, with `--protocol eas`).
        url: String,
    },
    /// TF Serving gRPC (`grpc://HOST:PORT`, `grpcs://` for TLS).
    Grpc {
        /// `http://HOST:PORT` or `https://HOST:PORT`.
        endpoint: String,
    },
    /// TF Serving REST.
    Rest {
        /// `http(s)://HOST[:PORT]`.
        base: String,
        /// The model name from the path.
        model: String,
        /// `/versions/N` of the path.
        version: Option<i64>,
        /// `/labels/L` of the path.
        label: Option<String>,
    },
}

impl Target {
    /// Reads a URL: `grpc://` / `grpcs://` is TF Serving gRPC, a path with
    /// `/v1/models/NAME` is TF Serving REST, a path with `/api/predict/` is EAS.
    /// `protocol` overrides the choice for `http(s)` URLs.
    pub fn parse(url: &str, protocol: Option<Protocol>) -> Result<Target, NetError> {
        let bad = |why: &str| NetError::BadUrl(format!("{url}: {why}"));
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad("expected grpc://HOST:PORT, http://HOST/api/predict/SERVICE or http://HOST:PORT/v1/models/NAME"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(bad("no host"));
        }
        let scheme = scheme.to_ascii_lowercase();
        match scheme.as_str() {
            "grpc" | "grpcs" => {
                if matches!(protocol, Some(p) if p != Protocol::Grpc) {
                    return Err(bad("a grpc:// URL speaks gRPC only"));
                }
                let s = if scheme == "grpcs" { "https" } else { "http" };
                Ok(Target::Grpc {
                    endpoint: format!("{s}://{authority}"),
                })
            }
            "http" | "https" => {
                let base = format!("{scheme}://{authority}");
                let rest_path = path.split_once("/v1/models/").map(|(_, p)| p);
                let chosen = protocol.unwrap_or(if rest_path.is_some() {
                    Protocol::Rest
                } else if path.contains("/api/predict/") {
                    Protocol::Eas
                } else {
                    return Err(NetError::UnknownProtocol);
                });
                match chosen {
                    Protocol::Eas => Ok(Target::Eas {
                        url: url.to_string(),
                    }),
                    Protocol::Grpc => Ok(Target::Grpc { endpoint: base }),
                    Protocol::Rest => {
                        let p = rest_path.ok_or_else(|| bad("a TF Serving REST URL has the path /v1/models/NAME[/versions/N][:predict]"))?;
                        let p = p.strip_suffix(":predict").unwrap_or(p);
                        let p = p.strip_suffix("/metadata").unwrap_or(p);
                        let p = p.trim_end_matches('/');
                        let mut parts = p.split('/');
                        let model = parts.next().unwrap_or_default().to_string();
                        if model.is_empty() {
                            return Err(bad("no model name after /v1/models/"));
                        }
                        let (mut version, mut label) = (None, None);
                        match (parts.next(), parts.next(), parts.next()) {
                            (None, _, _) => {}
                            (Some("versions"), Some(v), None) => {
                                version =
                                    Some(v.parse().map_err(|_| {
                                        bad(&format!("version {v:?} is not a number"))
                                    })?)
                            }
                            (Some("labels"), Some(l), None) => label = Some(l.to_string()),
                            _ => {
                                return Err(bad("expected /v1/models/NAME[/versions/N|/labels/L]"));
                            }
                        }
                        Ok(Target::Rest {
                            base,
                            model,
                            version,
                            label,
                        })
                    }
                }
            }
            other => Err(bad(&format!(
                "unknown scheme {other:?} (expected http, https, grpc or grpcs)"
            ))),
        }
    }

    /// The protocol it speaks.
    pub fn protocol(&self) -> Protocol {
        match self {
            Target::Eas { .. } => Protocol::Eas,
            Target::Grpc { .. } => Protocol::Grpc,
            Target::Rest { .. } => Protocol::Rest,
        }
    }

    /// The wire format requests are converted to before sending (REST requests are
    /// written as JSON from the TF Serving form).
    pub fn wire(&self) -> WireFormat {
        match self {
            Target::Eas { .. } => WireFormat::Eas,
            _ => WireFormat::TfServing,
        }
    }
}

/// Why a call failed.
///
/// What a server said (status text, body, gRPC message, queue tags) is escaped with
/// [`crate::escape`] when the error is made, and [`Display`](fmt::Display) escapes any
/// text that would still act on a terminal, so an error never prints raw control
/// characters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NetError {
    /// The URL is not one tfreq understands.
    BadUrl(String),
    /// The request cannot be sent this way (e.g. a dtype the target cannot carry, no
    /// model name for TF Serving).
    BadRequest(String),
    /// No connection could be made, or it broke.
    Unreachable(String),
    /// No answer within the deadline.
    Timeout(Duration),
    /// The service answered and refused: an HTTP status other than 200, or a gRPC
    /// status other than OK.
    Refused {
        /// `HTTP 401`, `gRPC INVALID_ARGUMENT`, a queue worker's code.
        status: Status,
        /// The body or status message the service sent.
        message: String,
    },
    /// The service answered with something that is not the expected response.
    BadResponse(String),
    /// The answer's body is larger than the limit ([`Options::max_response`]); reading
    /// stopped there.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// Something answered, but not a gRPC service (an HTTP/1 server, a web page).
    NotGrpc(String),
    /// An `http(s)` URL whose path names neither an EAS service nor a TF Serving REST
    /// model, with no protocol given ([`Target::parse`]).
    UnknownProtocol,
    /// A call that needs a model name ([`Options::model_name`]) has none: TF Serving's
    /// `Predict` of a request without `model_spec.name`, or `GetModelMetadata`. Holds
    /// which call.
    NoModelName(String),
    /// The server's TLS certificate is not trusted (rustls: `invalid peer certificate:
    /// UnknownIssuer`, ...): one from a private CA needs that CA's certificate among the
    /// trusted ones ([`Options::ca_cert`]). Holds the connection error's text.
    Untrusted(String),
}

impl From<NetError> for crate::Error {
    /// A failed call: [`Category::Network`](crate::Category::Network).
    fn from(e: NetError) -> Self {
        crate::Error::other(crate::Category::Network, e)
    }
}

impl NetError {
    /// Whether the service answered (and refused): the CLI's exit 1, not 2.
    pub fn is_refusal(&self) -> bool {
        matches!(self, NetError::Refused { .. })
    }
}

impl fmt::Display for NetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetError::BadUrl(s) => write!(f, "bad URL: {}", safe(s)),
            NetError::BadRequest(s) => write!(f, "cannot send the request: {}", safe(s)),
            NetError::Unreachable(s) => write!(f, "could not reach the service: {}", safe(s)),
            NetError::Timeout(d) => {
                write!(f, "no answer within {:.1} s", d.as_secs_f64())
            }
            NetError::Refused { status, message } => {
                write!(f, "the service refused the request: {}", safe(&status.to_string()))?;
                if !message.is_empty() {
                    write!(f, ": {}", safe(message.trim_end()))?;
                }
                Ok(())
            }
            NetError::BadResponse(s) => write!(f, "unreadable response: {}", safe(s)),
            NetError::TooLarge { limit } => write!(
                f,
                "the answer is larger than the limit of {}; reading stopped there",
                size_text(*limit)
            ),
            NetError::NotGrpc(s) => write!(f, "no gRPC service there: {}", safe(s)),
            NetError::UnknownProtocol => f.write_str(
                "bad URL: cannot tell the protocol: the path has neither /api/predict/SERVICE (EAS) nor /v1/models/NAME (TF Serving REST)",
            ),
            NetError::NoModelName(call) => {
                write!(f, "cannot send the request: {} needs a model name", safe(call))
            }
            NetError::Untrusted(s) => write!(
                f,
                "could not reach the service: {} (the server's TLS certificate is not trusted: a certificate from a private CA needs that CA's PEM certificate among the trusted ones)",
                safe(s)
            ),
        }
    }
}

impl std::error::Error for NetError {}

/// `256 MiB (268435456 bytes)`, or `1000 bytes` below 1 KiB.
fn size_text(n: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    for (shift, unit) in units {
        if n >= 1 << shift {
            let v = n as f64 / (1u64 << shift) as f64;
            let v = if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.1}")
            };
            return format!("{v} {unit} ({n} bytes)");
        }
    }
    format!("{n} bytes")
}

/// How to authenticate to an EAS service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EasAuth {
    /// The token as it is in `Authorization` (the EAS warm-up page's curl).
    #[default]
    Raw,
    /// The SDK's signature: `Content-MD5`, `Date` and `Authorization: EAS <HMAC-SHA1>`
    /// (see [`eas::sign`]).
    Signed,
}

/// Client settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The EAS token.
    pub token: Option<String>,
    /// How the EAS token is sent.
    pub auth: EasAuth,
    /// Connect and per-call deadline (and the whole wait of a queued request); cut to
    /// [`MAX_TIMEOUT`].
    pub timeout: Duration,
    /// The TF Serving model name, over the request's `model_spec.name`.
    pub model_name: Option<String>,
    /// PEM certificates of the CAs to trust for `https://` and `grpcs://`, instead of
    /// the webpki roots (as curl's `--cacert`): a private CA's. See [`read_ca`].
    pub ca_cert: Option<Bytes>,
    /// The largest answer body read, in bytes; past it the call fails with
    /// [`NetError::TooLarge`] without reading the rest. `None`: [`DEFAULT_MAX_RESPONSE`]
    /// for HTTP, [`MAX_MESSAGE`] (TF Serving's own limit) for gRPC. A gRPC limit is cut
    /// to [`MAX_MESSAGE`].
    pub max_response: Option<u64>,
}

impl Options {
    /// The deadline, cut to [`MAX_TIMEOUT`].
    pub fn deadline(&self) -> Duration {
        self.timeout.min(MAX_TIMEOUT)
    }

    /// The answer limit for HTTP calls.
    pub fn http_limit(&self) -> u64 {
        self.max_response.unwrap_or(DEFAULT_MAX_RESPONSE)
    }

    /// The answer limit for gRPC calls.
    pub fn grpc_limit(&self) -> usize {
        self.max_response
            .map_or(MAX_MESSAGE, |n| n.min(MAX_MESSAGE as u64) as usize)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            token: None,
            auth: EasAuth::Raw,
            timeout: Duration::from_secs(30),
            model_name: None,
            ca_cert: None,
            max_response: None,
        }
    }
}

/// Checks that `pem` holds at least one PEM certificate (`-----BEGIN CERTIFICATE-----`)
/// and returns how many; [`Options::ca_cert`] takes such bytes.
pub fn read_ca(pem: &[u8]) -> Result<usize, NetError> {
    Ok(web::roots(pem)?.len())
}

/// One request sent and its answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Exchange {
    /// The decoded response.
    pub response: Message,
    /// The response bytes as received (protobuf, or REST JSON).
    pub raw: Bytes,
    /// From just before the request was written to the end of the answer.
    pub latency: Duration,
    /// What converting the request for this protocol changed or lost.
    pub notes: Vec<String>,
}

/// A request prepared for one protocol: its bytes, and what the conversion noted.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The body to send (protobuf, or REST JSON).
    pub body: Bytes,
    /// What the conversion changed or lost.
    pub notes: Vec<String>,
    /// The request's signature (for reading REST answers).
    pub signature: String,
    /// The request's fetches (for naming a lone REST output).
    pub fetches: Vec<String>,
}

/// Prepares `msg` (read from `raw`, its bytes in the file) for `target`: the file's own
/// bytes when the wire already matches and nothing is to change, else re-encoded with
/// `convert`'s rules.
pub fn prepare(
    msg: &Message,
    raw: &Bytes,
    target: &Target,
    opts: &Options,
) -> Result<Prepared, NetError> {
    if msg.kind != Kind::Request {
        return Err(NetError::BadRequest(format!(
            "it is a {}, not a request",
            msg.kind
        )));
    }
    if msg.method.takes_examples() {
        return Err(NetError::BadRequest(format!(
            "it is a {}: tfreq sends predict requests only",
            msg.method
        )));
    }
    let mut notes = Vec::new();
    let signature = msg.effective_signature().to_string();
    let body = match target {
        Target::Eas { .. } => {
            if msg.wire == WireFormat::Eas {
                raw.clone()
            } else {
                notes.push(
                    "converted from a TF Serving request to EAS (as formats::convert does)".into(),
                );
                if let Some(spec) = msg.model_spec.as_ref().filter(|s| !s.name.is_empty()) {
                    notes.push(format!(
                        "model_spec (name {:?}) is not sent: an EAS service is chosen by its URL",
                        spec.name
                    ));
                }
                Bytes::from(encode(msg, WireFormat::Eas, TfsEncoding::Python).map_err(bad)?)
            }
        }
        Target::Grpc { .. } => {
            let has_name = msg.model_spec.as_ref().is_some_and(|s| !s.name.is_empty());
            if msg.wire == WireFormat::TfServing && has_name && opts.model_name.is_none() {
                raw.clone()
            } else {
                let mut m = msg.clone();
                if msg.wire == WireFormat::Eas {
                    notes.push(
                        "converted from an EAS request to TF Serving (as formats::convert does)"
                            .into(),
                    );
                }
                match (&opts.model_name, has_name) {
                    (Some(name), _) => set_name(&mut m, name),
                    (None, true) => {}
                    (None, false) => {
                        return Err(NetError::NoModelName(
                            "TF Serving's Predict of a request without model_spec.name".into(),
                        ));
                    }
                }
                let style = if msg.wire == WireFormat::TfServing {
                    TfsEncoding::AsIs
                } else {
                    TfsEncoding::Python
                };
                Bytes::from(encode(&m, WireFormat::TfServing, style).map_err(bad)?)
            }
        }
        Target::Rest { model, .. } => {
            if msg.wire == WireFormat::Eas {
                notes.push("converted from an EAS request to TF Serving REST JSON".into());
            }
            if let Some(spec) = msg.model_spec.as_ref().filter(|s| !s.name.is_empty())
                && spec.name != *model
            {
                notes.push(format!(
                    "the request's model_spec names {:?}; REST sends to the URL's model {model:?}",
                    spec.name
                ));
            }
            let (json, lost) = crate::formats::rest_json::to_rest_json(msg).map_err(bad)?;
            notes.extend(lost);
            Bytes::from(json)
        }
    };
    Ok(Prepared {
        body,
        notes,
        signature,
        fetches: msg.fetches.clone(),
    })
}

/// Sets `model_spec.name`, over any name the request has.
fn set_name(m: &mut Message, name: &str) {
    if let Some(spec) = m.model_spec.as_mut() {
        spec.name.clear();
    }
    crate::formats::set_model_name(m, name);
}

/// The service it talks to; the options (which may hold a token) are not shown.
impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.caller.target)
            .finish_non_exhaustive()
    }
}

fn bad(e: impl fmt::Display) -> NetError {
    NetError::BadRequest(e.to_string())
}

/// Decodes a `Predict` answer's bytes: an EAS `PredictResponse` for [`Protocol::Eas`], a
/// TF Serving one for [`Protocol::Grpc`] (a REST answer is JSON: see
/// [`rest::Outputs::response`]).
pub fn decode_answer(protocol: Protocol, raw: &Bytes) -> Result<Message, NetError> {
    match protocol {
        Protocol::Eas => decode_as(raw, WireFormat::Eas, Kind::Response)
            .map_err(|e| NetError::BadResponse(format!("not an EAS PredictResponse: {e}"))),
        Protocol::Grpc => decode_as(raw, WireFormat::TfServing, Kind::Response)
            .map_err(|e| NetError::BadResponse(format!("not a TF Serving PredictResponse: {e}"))),
        Protocol::Rest => Err(NetError::BadRequest(
            "a REST answer is JSON: read it with rest::Outputs::response".into(),
        )),
    }
}

/// A connection to one service, reused for every call, with the runtime its I/O runs
/// on. Calls made from one thread go through [`Client::send`]; many at once through
/// [`Caller`]s on [`Client::block_on`].
pub struct Client {
    rt: tokio::runtime::Runtime,
    caller: Caller,
}

/// A client's calls as futures, for making many at once on its runtime
/// ([`Client::block_on`]). Clones share the client's connections: gRPC calls are
/// multiplexed on one HTTP/2 connection, as a gRPC channel's are, and HTTP calls take
/// connections from one pool (HTTP/1.1 has one call on a connection at a time).
#[derive(Clone)]
pub struct Caller {
    target: Target,
    opts: Options,
    inner: Inner,
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
enum Inner {
    Eas(web::Http),
    Grpc(grpc::Grpc),
    Rest(web::Http, rest::Outputs),
}

impl Client {
    /// Connects to `target` (gRPC connects now; HTTP on the first call).
    pub fn connect(target: Target, opts: Options) -> Result<Client, NetError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| NetError::Unreachable(format!("cannot start the I/O runtime: {e}")))?;
        let inner = match &target {
            Target::Eas { .. } => Inner::Eas(web::Http::new(
                &rt,
                opts.ca_cert.as_deref(),
                opts.http_limit(),
            )?),
            Target::Rest { .. } => Inner::Rest(
                web::Http::new(&rt, opts.ca_cert.as_deref(), opts.http_limit())?,
                rest::Outputs::default(),
            ),
            Target::Grpc { endpoint } => Inner::Grpc(rt.block_on(grpc::Grpc::connect(
                endpoint,
                opts.deadline(),
                opts.ca_cert.as_deref(),
                opts.grpc_limit(),
            ))?),
        };
        Ok(Client {
            rt,
            caller: Caller {
                target,
                opts,
                inner,
            },
        })
    }

    /// The target.
    pub fn target(&self) -> &Target {
        &self.caller.target
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.caller.opts
    }

    /// Sends a prepared request and decodes the answer.
    pub fn send(&mut self, req: &Prepared) -> Result<Exchange, NetError> {
        self.rt.block_on(self.caller.send(req))
    }

    /// Sends a prepared request and returns the answer's bytes as they came, not
    /// decoded ([`Caller::call`]).
    pub fn call(&mut self, req: &Prepared) -> Result<Bytes, NetError> {
        self.rt.block_on(self.caller.call(req))
    }

    /// Sends a prepared request and checks the answer without keeping it: its size in
    /// bytes ([`Caller::call_counted`]).
    pub fn call_counted(&mut self, req: &Prepared) -> Result<u64, NetError> {
        self.rt.block_on(self.caller.call_counted(req))
    }

    /// Does ahead what the first call would do besides sending: for TF Serving REST,
    /// reads the model's output dtypes from its metadata (JSON carries none), so that
    /// no call's latency includes that read. Nothing for EAS and gRPC. A metadata
    /// endpoint that does not answer is left for the first call to try again.
    pub fn ready(&mut self) {
        self.rt.block_on(self.caller.learn_outputs());
    }

    /// A caller that shares this client's connections (and what [`Client::ready`]
    /// learnt), for calls made at once on [`Client::block_on`].
    pub fn caller(&self) -> Caller {
        self.caller.clone()
    }

    /// Runs `future` to its end on this client's runtime, the one its connections
    /// live on: the [`Caller`]s' calls must be awaited here.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), tfreq::net::NetError> {
    /// use tfreq::net::{Client, Options, Target};
    /// let client = Client::connect(Target::parse("grpc://127.0.0.1:8500", None)?, Options::default())?;
    /// # let req: tfreq::net::Prepared = unimplemented!();
    /// let (mut a, mut b) = (client.caller(), client.caller());
    /// let (x, y) = client.block_on(async { (a.send(&req).await, b.send(&req).await) });
    /// # Ok(()) }
    /// ```
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.rt.block_on(future)
    }

    /// Reads the served model's signatures: gRPC GetModelMetadata, or REST
    /// `GET /v1/models/NAME[/versions/N]/metadata`.
    pub fn metadata(&mut self) -> Result<ModelSignatures, NetError> {
        let t = self.caller.opts.deadline();
        let c = &mut self.caller;
        match (&mut c.inner, &c.target) {
            (Inner::Grpc(g), _) => {
                let name = c
                    .opts
                    .model_name
                    .clone()
                    .ok_or_else(|| NetError::NoModelName("GetModelMetadata".into()))?;
                self.rt.block_on(g.metadata(&name, t))
            }
            (Inner::Rest(h, _), target) => {
                let url = rest::metadata_url(target);
                let raw = web::ok_body(self.rt.block_on(h.get(&url, vec![], t))?)?;
                crate::formats::savedmodel::from_metadata_json(&raw, &url)
                    .map_err(|e| NetError::BadResponse(e.to_string()))
            }
            (Inner::Eas(_), _) => Err(NetError::BadRequest(
                "an EAS service has no metadata endpoint; give a TF Serving grpc:// or REST URL"
                    .into(),
            )),
        }
    }
}

impl Caller {
    /// The target.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Sends a prepared request and decodes the answer.
    pub async fn send(&mut self, req: &Prepared) -> Result<Exchange, NetError> {
        let start = Instant::now();
        let raw = self.call(req).await?;
        let latency = start.elapsed();
        let response = match &mut self.inner {
            Inner::Eas(_) => decode_answer(Protocol::Eas, &raw)?,
            Inner::Grpc(_) => decode_answer(Protocol::Grpc, &raw)?,
            Inner::Rest(_, outs) => {
                if outs.is_empty() {
                    self.learn_outputs().await;
                }
                let Inner::Rest(_, outs) = &self.inner else {
                    unreachable!("a REST caller stays one")
                };
                outs.response(&raw, &req.signature, &req.fetches)?
            }
        };
        Ok(Exchange {
            response,
            raw,
            latency,
            notes: req.notes.clone(),
        })
    }

    /// Sends a prepared request and returns the answer's bytes as they came, not
    /// decoded: the protobuf response (EAS, gRPC) or the JSON body (REST) of a call the
    /// service answered with success. What `tfreq load` times.
    pub async fn call(&mut self, req: &Prepared) -> Result<Bytes, NetError> {
        let t = self.opts.deadline();
        match (&mut self.inner, &self.target) {
            (Inner::Eas(h), Target::Eas { url }) => {
                eas::predict(h, url, &req.body, &self.opts).await
            }
            (Inner::Grpc(g), _) => g.predict(req.body.clone(), t).await,
            (Inner::Rest(h, _), target) => {
                let url = rest::predict_url(target);
                let raw = h
                    .post(
                        &url,
                        vec![("content-type", "application/json".into())],
                        req.body.clone(),
                        t,
                    )
                    .await?;
                web::ok_body(raw)
            }
            _ => unreachable!("the client's connection matches its target"),
        }
    }

    /// Sends a prepared request and checks the answer without keeping it: the size in
    /// bytes of the answer's message (EAS, gRPC) or JSON body (REST), whose bytes were
    /// dropped as they came. What `tfreq load` times: however many calls are in flight
    /// and however long their answers, no answer is held, so memory stays bounded.
    pub async fn call_counted(&mut self, req: &Prepared) -> Result<u64, NetError> {
        let t = self.opts.deadline();
        match (&mut self.inner, &self.target) {
            (Inner::Eas(h), Target::Eas { url }) => {
                let headers = eas::headers(&req.body, url, &self.opts);
                h.post_counted(url, headers, req.body.clone(), t).await
            }
            (Inner::Grpc(g), _) => g.predict_counted(req.body.clone(), t).await,
            (Inner::Rest(h, _), target) => {
                let url = rest::predict_url(target);
                h.post_counted(
                    &url,
                    vec![("content-type", "application/json".into())],
                    req.body.clone(),
                    t,
                )
                .await
            }
            _ => unreachable!("the client's connection matches its target"),
        }
    }

    /// TF Serving REST: reads the model's output dtypes from its metadata, when not yet
    /// known (JSON carries none, the signature has them). Nothing for EAS and gRPC.
    async fn learn_outputs(&mut self) {
        let t = self.opts.deadline();
        if let (Inner::Rest(h, outs), target) = (&mut self.inner, &self.target)
            && outs.is_empty()
        {
            let meta = rest::metadata_url(target);
            if let Ok(r) = h.get(&meta, vec![], t).await
                && let Ok(b) = web::ok_body(r)
            {
                outs.learn(&b);
            }
        }
    }
}
