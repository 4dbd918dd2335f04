//! EAS asynchronous services: the request goes on the service's input queue, its
//! result comes back on the sink queue. The protocol is the EAS SDKs' queue clients'
//! (`eas_prediction/queue_client.py`, <https://github.com/pai-eas/eas-golang-sdk>
//! `eas/queue_client.go`):
//!
//! - **put**: `POST {url}?{tags}` with the body, headers `Authorization` (the token as
//!   it is), `X-EAS-QueueService-Redis-Uid` / `-Gid`; a 200 (or 204) answer's body is
//!   the item's index and its `X-Eas-Queueservice-Request-Id` header the request id.
//!   A put is sent **once**: the Python client retries on any non-2xx status and can
//!   enqueue the same request twice; tfreq reports the status instead.
//! - **get**: `GET {url}/sink?_index_=0&_length_=1&_timeout_=Ns&_raw_=false&_auto_delete_=true&requestId=ID`
//!   with `Accept: application/vnd.google.protobuf`; the answer is a
//!   `DataFrameListProto` whose item's `data` is the `PredictResponse`. Reading with
//!   `_auto_delete_=true` deletes the item from the sink, as the SDKs' `GetByRequestId`
//!   does. An empty list means not yet: tfreq asks again until `--timeout`, at least
//!   [`FIRST_PAUSE`] after the previous ask, the pause doubling up to [`LONGEST_PAUSE`]
//!   while the sink stays empty (at most 20 asks a second, even from a server that does
//!   not hold the call open for `_timeout_`).
//! - **a failed item**: the worker puts its failures on the sink too, the status in the
//!   item's `lastCode` tag and the reason in `lastMessage` ([`worker_failure`]); tfreq
//!   reports them as the service's refusal instead of decoding the error text.

use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use prost::Message as _;

use super::web::{Http, refusal};
use super::{Exchange, NetError, Options, Prepared};
use crate::decode::decode_as;
use crate::model::{Kind, WireFormat};

/// The SDKs' header naming the request id of a queued item.
pub const REQUEST_ID_HEADER: &str = "X-Eas-Queueservice-Request-Id";
/// The SDKs' user id header.
pub const UID_HEADER: &str = "X-EAS-QueueService-Redis-Uid";
/// The SDKs' group id header.
pub const GID_HEADER: &str = "X-EAS-QueueService-Redis-Gid";
/// The media type of protobuf data frames.
pub const PROTOBUF: &str = "application/vnd.google.protobuf";

/// The least time between two asks of an empty sink: 50 ms, so at most 20 a second.
pub const FIRST_PAUSE: Duration = Duration::from_millis(50);
/// The longest time between two asks of an empty sink: a result is seen at most this
/// late (when the server does not hold the call open).
pub const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// `streaming.DataFrameProto` (the SDKs' `queueservice.proto`).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct DataFrame {
    /// The item's index in its queue.
    #[prost(uint64, tag = "1")]
    pub index: u64,
    /// Its tags (the request id among them).
    #[prost(btree_map = "string, string", tag = "2")]
    pub tags: std::collections::BTreeMap<String, String>,
    /// The payload: the `PredictResponse` bytes on the sink.
    #[prost(bytes = "bytes", tag = "3")]
    pub data: Bytes,
    /// A message (an error's text, when the worker failed).
    #[prost(string, tag = "4")]
    pub message: String,
}

/// `streaming.DataFrameListProto`.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct DataFrameList {
    /// The items.
    #[prost(message, repeated, tag = "1")]
    pub index: Vec<DataFrame>,
}

/// A client of one queue service.
pub struct Queue {
    rt: tokio::runtime::Runtime,
    http: Http,
    input: String,
    sink: String,
    tags: Vec<(String, String)>,
    opts: Options,
    uid: String,
}

/// The queue's input and sink; the options (which may hold a token) are not shown.
impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("input", &self.input)
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl Queue {
    /// A client of the queue service at `url` (`http(s)://HOST/api/predict/SERVICE`),
    /// its results at `url/sink`. `tags` are `NAME=VALUE`.
    pub fn new(url: &str, opts: &Options, tags: &[String]) -> Result<Queue, NetError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| NetError::Unreachable(format!("cannot start the I/O runtime: {e}")))?;
        let http = Http::new(&rt, opts.ca_cert.as_deref(), opts.http_limit())?;
        let base = url
            .split(['?', '#'])
            .next()
            .unwrap_or(url)
            .trim_end_matches('/');
        let mut t = Vec::new();
        for s in tags {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| NetError::BadRequest(format!("tag {s:?}: expected NAME=VALUE")))?;
            t.push((k.to_string(), v.to_string()));
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        Ok(Queue {
            rt,
            http,
            input: base.to_string(),
            sink: format!("{base}/sink"),
            tags: t,
            opts: opts.clone(),
            uid: format!("tfreq-{}-{}", std::process::id(), now.as_nanos()),
        })
    }

    fn identity(&self) -> Vec<(&'static str, String)> {
        let mut h = vec![
            (UID_HEADER, self.uid.clone()),
            (GID_HEADER, "eas".to_string()),
        ];
        if let Some(t) = &self.opts.token {
            h.push(("authorization", t.clone()));
        }
        h
    }

    /// Another client of the same queue, with its own connection and the same identity
    /// (user id, tags, options): one a thread for many requests at once.
    pub fn worker(&self) -> Result<Queue, NetError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| NetError::Unreachable(format!("cannot start the I/O runtime: {e}")))?;
        let http = Http::new(&rt, self.opts.ca_cert.as_deref(), self.opts.http_limit())?;
        Ok(Queue {
            rt,
            http,
            input: self.input.clone(),
            sink: self.sink.clone(),
            tags: self.tags.clone(),
            opts: self.opts.clone(),
            uid: self.uid.clone(),
        })
    }

    /// Puts the request on the input queue and waits for its result on the sink.
    pub fn send(&mut self, req: &Prepared) -> Result<Exchange, NetError> {
        let t = self.put(req)?;
        self.wait(&t, req)
    }

    /// Puts the request on the input queue (once: see the module's notes) and returns
    /// what [`wait`](Self::wait) needs to fetch its result.
    pub fn put(&self, req: &Prepared) -> Result<Ticket, NetError> {
        let timeout = self.opts.deadline();
        let start = Instant::now();
        let url = with_query(&self.input, &self.tags);
        let put =
            self.rt.block_on(
                self.http
                    .post(&url, self.identity(), req.body.clone(), timeout),
            )?;
        if put.status != 200 && put.status != 204 {
            return Err(refusal(&put));
        }
        let id = put
            .header(REQUEST_ID_HEADER)
            .map(str::to_string)
            .ok_or_else(|| {
                NetError::BadResponse(format!("the put answer has no {REQUEST_ID_HEADER} header"))
            })?;
        Ok(Ticket { id, start })
    }

    /// Waits for the result of a request [`put`](Self::put) on the queue, on the sink,
    /// until `--timeout` after the put began; the latency is counted from then too.
    pub fn wait(&self, ticket: &Ticket, req: &Prepared) -> Result<Exchange, NetError> {
        let timeout = self.opts.deadline();
        let start = ticket.start;
        let deadline = start.checked_add(timeout).unwrap_or(start);
        let id = &ticket.id;
        let mut pause = FIRST_PAUSE;
        loop {
            let asked = Instant::now();
            let left = deadline.saturating_duration_since(asked);
            if left.is_zero() {
                return Err(NetError::Timeout(timeout));
            }
            // The server holds the call open up to _timeout_ while the sink is empty.
            let wait = left.as_secs().clamp(1, 60);
            let q = vec![
                ("_index_".to_string(), "0".to_string()),
                ("_length_".to_string(), "1".to_string()),
                ("_timeout_".to_string(), format!("{wait}s")),
                ("_raw_".to_string(), "false".to_string()),
                ("_auto_delete_".to_string(), "true".to_string()),
                ("requestId".to_string(), id.clone()),
            ];
            let mut h = self.identity();
            h.push(("accept", PROTOBUF.to_string()));
            let got = self.rt.block_on(self.http.get(
                &with_query(&self.sink, &q),
                h,
                left.saturating_add(Duration::from_secs(1)),
            ))?;
            let Some((response, raw)) = sink_answer(got.status, &got.body, id)? else {
                // Not yet: ask again after the pause (counted from this ask), never past
                // the deadline.
                let next = asked.checked_add(pause).unwrap_or(deadline).min(deadline);
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
                pause = (pause * 2).min(LONGEST_PAUSE);
                continue;
            };
            return Ok(Exchange {
                response,
                raw,
                latency: start.elapsed(),
                notes: req.notes.clone(),
            });
        }
    }
}

/// A request on the queue: its id, and when its put began.
#[derive(Debug, Clone)]
pub struct Ticket {
    /// The request id the put answer named ([`REQUEST_ID_HEADER`]).
    pub id: String,
    /// When the put began.
    pub start: Instant,
}

/// Reads the sink's answer to a get for `request_id`: `None` while the sink is empty,
/// else the item's `PredictResponse` and its bytes, or why it is none (a refused get, a
/// failed item, data that is not a response). What the server said is escaped in the
/// error.
pub fn sink_answer(
    status: u16,
    body: &Bytes,
    request_id: &str,
) -> Result<Option<(crate::model::Message, Bytes)>, NetError> {
    if !(200..300).contains(&status) {
        return Err(super::web::refusal_of(status, body));
    }
    let list = DataFrameList::decode(body.clone()).map_err(|e| {
        NetError::BadResponse(format!(
            "the sink's answer is not a DataFrameListProto: {e}"
        ))
    })?;
    let Some(df) = list.index.into_iter().next() else {
        return Ok(None);
    };
    if let Some(e) = worker_failure(&df, request_id) {
        return Err(e);
    }
    let response = decode_as(&df.data, WireFormat::Eas, Kind::Response).map_err(|e| {
        let msg = if df.message.is_empty() {
            super::web::body_text(&df.data)
        } else {
            super::shown(df.message.as_bytes())
        };
        NetError::BadResponse(format!(
            "sink item {} (request {}) is not an EAS PredictResponse ({e}): {msg}",
            df.index,
            super::shown(request_id.as_bytes())
        ))
    })?;
    Ok(Some((response, df.data)))
}

/// The sink item's tag with the HTTP status the worker's call of the model ended with.
pub const LAST_CODE: &str = "lastCode";
/// The sink item's tag with the worker's error message, beside a failing [`LAST_CODE`].
pub const LAST_MESSAGE: &str = "lastMessage";

/// A sink item whose worker call failed: its `lastCode` tag is not a 2xx status (as
/// tests/live/server.py's worker writes its failures; the SDKs hand `DataFrame.tags`
/// and `message` over untouched). The failure is the worker's answer to this request,
/// so it is the service's refusal (exit 1), with `lastMessage` (else the item's
/// `message`, else its data as text) as the reason.
pub fn worker_failure(df: &DataFrame, request_id: &str) -> Option<NetError> {
    let code = df.tags.get(LAST_CODE)?.trim();
    if code.parse::<u16>().is_ok_and(|c| (200..300).contains(&c)) {
        return None;
    }
    let message = [df.tags.get(LAST_MESSAGE), Some(&df.message)]
        .into_iter()
        .flatten()
        .find(|m| !m.is_empty())
        .map(|m| super::shown(m.as_bytes()))
        .unwrap_or_else(|| super::web::body_text(&df.data));
    Some(NetError::Refused {
        status: super::Status::Worker {
            code: super::shown(code.as_bytes()),
            item: df.index,
            request_id: super::shown(request_id.as_bytes()),
        },
        message,
    })
}

/// `url?k=v&...`, percent-encoded.
fn with_query(url: &str, q: &[(String, String)]) -> String {
    if q.is_empty() {
        return url.to_string();
    }
    let enc = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    let qs: Vec<String> = q
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    format!("{url}?{}", qs.join("&"))
}
