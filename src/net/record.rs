//! `tfreq record`: a transparent proxy that turns the traffic passing through it into a
//! warm-up file (docs/live.md, "`record`: a warm-up from live traffic").
//!
//! Two parts. [`Recorder`] has no sockets: it is given each request's protocol, path and
//! body, decodes it, and keeps the first request of every distinct key ([`By`]), with
//! counts, up to [`Recorder::max_records`]; [`Recorder::file`] writes what it kept as a
//! warm-up. [`serve`] is the proxy. It takes HTTP/1.1 (EAS, TF Serving REST) and
//! cleartext HTTP/2 (TF Serving gRPC) on one port:
//! - cleartext HTTP/2 to a cleartext upstream is relayed byte for byte, each request read
//!   on the side once its bytes are on their way (src/net/tap.rs);
//! - the rest goes through a hyper server, which reads each request body (up to
//!   [`ProxyOptions::max_size`]; the rest of a larger one follows as it comes), forwards
//!   the request unchanged and streams the answer back unchanged (status, headers, body,
//!   gRPC trailers).
//!
//! Either way each body is queued for a [`Recorder`] running on its own thread, so
//! decoding never delays or breaks the pass-through.
//!
//! Only the request messages are recorded: no header (so no `Authorization` or EAS
//! token) and no answer ever reaches the recorder.
//!
//! ```
//! use tfreq::net::record::{By, Recorder, RecordOptions, Wire};
//! use tfreq::net::Protocol;
//! let mut r = Recorder::new(RecordOptions::default());
//! let body = std::fs::read("tests/data/eas/faq_prod.bin")?;
//! let batch4 = std::fs::read("tests/data/eas/faq_prod_batch4.bin")?;
//! assert!(r.add(Protocol::Eas, "/api/predict/faq", &body).is_new());
//! assert!(!r.add(Protocol::Eas, "/api/predict/faq", &batch4).is_new()); // same executor key
//! assert_eq!((r.requests(), r.recorded()), (2, 1));
//! let file = r.file()?; // one bare EAS request: the EAS processor's warm-up
//! assert_eq!(tfreq::decode(&file)?.tensors.len(), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Either, Empty, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};

use super::budget::{Budget, Held};
use super::web::{connector, Https};
use super::{NetError, Protocol};
use crate::analysis::batch::batch_of;
use crate::analysis::coverage::{KeyCounts, Origin};
use crate::analysis::key::{ExecutorKey, ShapeKey};
use crate::decode::{decode_as, decode_request};
use crate::formats::rest_json::{self, Dtypes};
use crate::formats::{self, Layout};
use crate::model::{Kind, Message, Method, WireFormat};
use crate::scrub::{scrub, FillMode};

/// TF Serving's warm-up runs at most this many records
/// ([`crate::analysis::warmup::MAX_RECORDS`]): the most [`Recorder`] keeps.
pub const MAX_RECORDS: usize = crate::analysis::warmup::MAX_RECORDS;

/// The default largest request body recorded: 64 MiB. A larger one is passed through
/// and counted, not recorded.
pub const DEFAULT_MAX_SIZE: u64 = 64 << 20;

/// What counts as one key: one request is kept per distinct key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum By {
    /// The executor key ([`ExecutorKey`]: signature, feed and fetch sets).
    #[default]
    Executor,
    /// The shape key ([`ShapeKey`]: the executor key and every feed's dtype and shape).
    Shape,
    /// The executor key and the batch size (the feeds' common 0th dimension, see
    /// [`batch_of`]; the number of examples of a classify, regress or multi-inference
    /// request). A request with no common batch dimension (a scalar feed, feeds of other
    /// 0th dimensions) is kept per shape key.
    Batch,
}

/// The layout of the file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wire {
    /// A bare EAS request when every request kept is an EAS request (the EAS processor
    /// reads one request as its warm-up: the most frequent key's), else a TFRecord.
    #[default]
    Auto,
    /// A TFRecord of `PredictionLog`s (TF Serving's warm-up), whatever the traffic.
    TfRecord,
    /// One bare EAS request: the most frequent key's.
    Eas,
}

/// How a [`Recorder`] works.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// What counts as one key.
    pub by: By,
    /// The most requests kept (cut to [`MAX_RECORDS`]).
    pub max_records: usize,
    /// With a fill, every request kept has its values replaced as `tfreq scrub` does
    /// ([`crate::scrub::scrub`]); a request that cannot be scrubbed is not kept.
    pub scrub: Option<FillMode>,
    /// The model recorded: only its requests (and those that name none, as EAS requests)
    /// are kept, and it is the model name given to requests that name none, for a
    /// TFRecord. Without it, the first model a request names is the one recorded.
    pub model_name: Option<String>,
    /// The output layout.
    pub wire: Wire,
    /// REST JSON's input dtypes, from a model given on the command line; without it
    /// each REST model's dtypes come from its metadata ([`Recorder::metadata`]).
    pub rest_dtypes: Option<Dtypes>,
    /// How many REST models' metadata is awaited and kept: the first ones seen (the
    /// proxy asks for no other, [`ProxyOptions::max_models`]); a later model's requests
    /// are counted as not recorded.
    pub max_models: usize,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            by: By::Executor,
            max_records: MAX_RECORDS,
            scrub: None,
            model_name: None,
            wire: Wire::Auto,
            rest_dtypes: None,
            max_models: DEFAULT_MAX_MODELS,
        }
    }
}

/// What [`Recorder::add`] did with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// A new key: the request is kept, and the file has changed.
    New,
    /// A new key, kept, but the file did not change (a bare EAS file holds only the
    /// most frequent key's request).
    Kept,
    /// A key already kept (or past the cap): counted.
    Counted,
    /// The file's one request changed (a bare EAS file holds the most frequent key's).
    Leader,
    /// Not a request to record (metadata, a status page): passed through only.
    Ignored,
    /// A REST request kept aside until its model's metadata gives the input dtypes.
    Waiting,
    /// Not recorded, for this reason.
    NotRecorded(String),
}

impl Added {
    /// Whether the file changed (and should be written again).
    pub fn is_new(&self) -> bool {
        matches!(self, Added::New | Added::Leader)
    }
}

/// The key one request is kept for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RecordKey {
    key: ExecutorKey,
    shapes: BTreeMap<String, (String, Vec<i64>)>,
    batch: Option<u64>,
}

/// One kept request.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The request as it goes into the file (scrubbed, named).
    pub message: Message,
    /// Requests with its key so far.
    pub count: u64,
    /// The number of the first one (0 the first request recorded).
    pub first: u64,
    /// The key, as text.
    pub key: String,
}

/// REST requests waiting for their model's metadata: at most this many bytes in all.
const MAX_WAITING: usize = 64 << 20;

/// The request recorder (see the module docs).
#[derive(Debug)]
pub struct Recorder {
    opts: RecordOptions,
    counts: KeyCounts,
    kept: Vec<Kept>,
    index: HashMap<RecordKey, usize>,
    not_recorded: BTreeMap<String, (u64, Vec<String>)>,
    metadata: HashMap<String, Result<Bytes, String>>,
    /// The REST models whose metadata is awaited or kept (the first `max_models`).
    models: HashSet<String>,
    waiting: Vec<(String, u64, Bytes)>,
    waiting_bytes: usize,
    leader: Option<usize>,
    seq: u64,
    /// The model whose requests are recorded: `--model-name`'s, else the first a request
    /// names (a warm-up file belongs to one model; TF Serving runs one session per model).
    model: Option<String>,
}

impl Recorder {
    /// A recorder with nothing recorded.
    pub fn new(mut opts: RecordOptions) -> Recorder {
        opts.max_records = opts.max_records.clamp(1, MAX_RECORDS);
        let counts = KeyCounts {
            files: vec!["traffic".into()],
            ..KeyCounts::default()
        };
        Recorder {
            opts,
            counts,
            kept: Vec::new(),
            index: HashMap::new(),
            not_recorded: BTreeMap::new(),
            metadata: HashMap::new(),
            models: HashSet::new(),
            waiting: Vec::new(),
            waiting_bytes: 0,
            leader: None,
            seq: 0,
            model: None,
        }
    }

    /// The most requests kept.
    pub fn max_records(&self) -> usize {
        self.opts.max_records
    }

    /// Requests counted (decoded).
    pub fn requests(&self) -> u64 {
        self.counts.requests
    }

    /// Requests kept (one per key, up to the cap).
    pub fn recorded(&self) -> usize {
        self.kept.len()
    }

    /// The kept requests, in the order their keys were first seen.
    pub fn kept(&self) -> &[Kept] {
        &self.kept
    }

    /// Every decoded request counted by shape key, as `tfreq keys` counts a log (the one
    /// "file" is `traffic`, its records the requests in the order they came).
    pub fn counts(&self) -> &KeyCounts {
        &self.counts
    }

    /// Requests not recorded, by reason: how many, and the first few named.
    pub fn not_recorded(&self) -> &BTreeMap<String, (u64, Vec<String>)> {
        &self.not_recorded
    }

    /// Counts a request not recorded for `why`, naming it by `what`.
    pub fn refuse(&mut self, why: &str, what: String) -> Added {
        let e = self.not_recorded.entry(why.to_string()).or_default();
        e.0 += 1;
        if e.1.len() < 5 {
            e.1.push(what);
        }
        Added::NotRecorded(why.to_string())
    }

    /// Takes one request body as it passed through the proxy: `protocol` and `path`
    /// (the URL path, which names the gRPC method or the REST model) say how to read it.
    /// Bad input is counted in [`Recorder::not_recorded`], never an error.
    pub fn add(&mut self, protocol: Protocol, path: &str, body: &[u8]) -> Added {
        match protocol {
            Protocol::Grpc => {
                let Some(method) = path.rsplit('/').next() else {
                    return Added::Ignored;
                };
                let method = match method {
                    "Predict" => Method::Predict,
                    "Classify" => Method::Classify,
                    "Regress" => Method::Regress,
                    "MultiInference" => Method::MultiInference,
                    _ => return Added::Ignored,
                };
                // gRPC's framing: 1 byte compressed flag, 4 bytes big-endian length.
                if body.len() < 5 {
                    return self.refuse(
                        "unreadable gRPC message",
                        format!("{path}: {} bytes, no 5-byte message prefix", body.len()),
                    );
                }
                let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
                if body[0] != 0 {
                    return self.refuse(
                        "compressed gRPC message (not read)",
                        format!("{path}: compressed flag {}", body[0]),
                    );
                }
                if body.len() - 5 != len {
                    return self.refuse(
                        "unreadable gRPC message",
                        format!(
                            "{path}: the prefix says {len} bytes, the stream has {} (one message per call expected)",
                            body.len() - 5
                        ),
                    );
                }
                let msg = Bytes::copy_from_slice(&body[5..]);
                match decode_request(msg, method) {
                    Ok(m) => self.add_message(m),
                    Err(e) => self.refuse(
                        "undecodable request",
                        format!("gRPC {method}: {e}", method = method.as_str()),
                    ),
                }
            }
            Protocol::Eas => match decode_as(body, WireFormat::Eas, Kind::Request) {
                Ok(m) => self.add_message(m),
                Err(e) => self.refuse("undecodable request", format!("EAS {path}: {e}")),
            },
            Protocol::Rest => {
                if let Some(model_path) = rest_predict_model(path) {
                    return self.add_rest(
                        model_path.to_string(),
                        None,
                        Bytes::copy_from_slice(body),
                    );
                }
                // `:classify` / `:regress`: the body carries its features' kinds, and
                // the URL says the method and the model (TF Serving's path pattern).
                match rest_json::RestCall::parse(path) {
                    Ok(call) if call.method.takes_examples() => {
                        match rest_json::examples_from_json(body, &call) {
                            Ok(m) => self.add_message(m),
                            Err(e) => {
                                self.refuse("undecodable request", format!("REST {path}: {e}"))
                            }
                        }
                    }
                    _ => Added::Ignored,
                }
            }
        }
    }

    /// A REST body for `model_path` (`NAME` or `NAME/versions/N`): read now if its dtypes
    /// are known, else kept aside until [`Recorder::metadata`] brings them.
    fn add_rest(&mut self, model_path: String, seq: Option<u64>, body: Bytes) -> Added {
        let meta = self.metadata.get(&model_path).cloned();
        let what = |m: &str| format!("REST {m}:predict");
        let sig = || {
            rest_json::parse(&body)
                .ok()
                .and_then(|v| match v.get("signature_name") {
                    Some(rest_json::Json::String(s)) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "serving_default".into())
        };
        let dtypes = match (&self.opts.rest_dtypes, meta) {
            (Some(d), _) => d.for_signature(&sig()).cloned().map_err(|e| e.to_string()),
            (None, Some(Ok(json))) => {
                rest_json::dtypes_from_metadata(&json, &sig()).map_err(|e| e.to_string())
            }
            (None, Some(Err(e))) => Err(format!("no model metadata: {e}")),
            (None, None) => {
                if !self.models.contains(&model_path) {
                    if self.models.len() >= self.opts.max_models {
                        return self.refuse(
                            &format!(
                                "REST request to a model past the first {} (--max-models; passed through, not recorded)",
                                self.opts.max_models
                            ),
                            what(&model_path),
                        );
                    }
                    self.models.insert(model_path.clone());
                }
                if self.waiting_bytes + body.len() > MAX_WAITING {
                    return self.refuse(
                        "REST request waiting for its model's metadata (over 64 MiB waiting)",
                        what(&model_path),
                    );
                }
                self.waiting_bytes += body.len();
                let seq = seq.unwrap_or_else(|| {
                    self.seq += 1;
                    self.seq - 1
                });
                self.waiting.push((model_path, seq, body));
                return Added::Waiting;
            }
        };
        let dtypes = match dtypes {
            Ok(d) => d,
            Err(e) => {
                return self.refuse("undecodable request", format!("{}: {e}", what(&model_path)))
            }
        };
        match rest_json::from_json(&body, &dtypes, &[], WireFormat::TfServing) {
            Ok(mut m) => {
                let name = model_path.split('/').next().unwrap_or_default();
                formats::set_model_name(&mut m, name);
                self.add_at(m, seq)
            }
            Err(e) => self.refuse("undecodable request", format!("{}: {e}", what(&model_path))),
        }
    }

    /// A REST model's metadata answer (`GET /v1/models/MODEL_PATH/metadata`), or why
    /// there is none: the REST requests waiting for it are read now. Returns whether
    /// the file changed.
    pub fn metadata(&mut self, model_path: &str, json: Result<Bytes, String>) -> bool {
        if self.models.contains(model_path) || self.models.len() < self.opts.max_models {
            self.models.insert(model_path.to_string());
            self.metadata.insert(model_path.to_string(), json);
        }
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(m, _, _)| m == model_path);
        self.waiting = later;
        let mut changed = false;
        for (m, seq, body) in now {
            self.waiting_bytes -= body.len();
            changed |= self.add_rest(m, Some(seq), body).is_new();
        }
        changed
    }

    /// The REST model paths whose metadata is still awaited.
    pub fn awaited(&self) -> HashSet<String> {
        self.waiting.iter().map(|(m, _, _)| m.clone()).collect()
    }

    /// Ends the recording: REST requests still waiting for metadata are counted as not
    /// recorded.
    pub fn finish(&mut self) {
        for (m, _, _) in std::mem::take(&mut self.waiting) {
            self.refuse(
                "REST request whose model's metadata never came",
                format!("REST {m}:predict"),
            );
        }
        self.waiting_bytes = 0;
    }

    /// Takes one decoded request.
    pub fn add_message(&mut self, msg: Message) -> Added {
        self.add_at(msg, None)
    }

    fn add_at(&mut self, msg: Message, seq: Option<u64>) -> Added {
        if msg.kind != Kind::Request {
            return self.refuse("not a request", format!("a {}", msg.kind));
        }
        let seq = seq.unwrap_or_else(|| {
            self.seq += 1;
            self.seq - 1
        });
        let at = Origin {
            file: 0,
            entry: seq as usize,
            record: true,
        };
        self.counts.add(&msg, at, false);
        let sk = ShapeKey::of(&msg);
        if let Some(named) = &sk.key.model {
            let recorded = self.opts.model_name.as_ref().or(self.model.as_ref());
            match recorded {
                None => self.model = Some(named.clone()),
                Some(m) if m != named => {
                    let why = if self.opts.model_name.is_some() {
                        "a model other than --model-name's (passed through, not recorded)"
                    } else {
                        "a model other than the first recorded; a warm-up file belongs to one model, --model-name picks it (passed through, not recorded)"
                    };
                    return self.refuse(why, format!("model {named:?}"));
                }
                Some(_) => {}
            }
        }
        let batch = || {
            batch_of(
                sk.shapes
                    .iter()
                    .map(|(n, (_, d))| (n.as_str(), d.as_slice())),
            )
            .ok()
            .flatten()
        };
        let key = match self.opts.by {
            By::Executor => RecordKey {
                key: sk.key.clone(),
                shapes: BTreeMap::new(),
                batch: None,
            },
            By::Shape => RecordKey {
                key: sk.key.clone(),
                shapes: sk.shapes.clone(),
                batch: None,
            },
            By::Batch => match batch() {
                Some(b) => RecordKey {
                    key: sk.key.clone(),
                    shapes: BTreeMap::new(),
                    batch: Some(b),
                },
                // No common batch dimension (a scalar feed...): every shape is its own.
                None => RecordKey {
                    key: sk.key.clone(),
                    shapes: sk.shapes.clone(),
                    batch: None,
                },
            },
        };
        if let Some(&i) = self.index.get(&key) {
            self.kept[i].count += 1;
            return if self.leader_changed() {
                Added::Leader
            } else {
                Added::Counted
            };
        }
        if self.kept.len() >= self.opts.max_records {
            let text = key_text(&key);
            return self.refuse("past --max-records (key not recorded)", text);
        }
        let mut m = match self.opts.scrub {
            Some(fill) => match scrub(&msg, fill) {
                Ok(m) => m,
                Err(e) => return self.refuse("cannot be scrubbed (not recorded)", e.to_string()),
            },
            None => msg,
        };
        if let Some(name) = &self.opts.model_name {
            formats::set_model_name(&mut m, name);
        }
        let text = key_text(&key);
        self.index.insert(key, self.kept.len());
        self.kept.push(Kept {
            message: m,
            count: 1,
            first: seq,
            key: text,
        });
        if self.layout() == Layout::Eas && !self.leader_changed() {
            // A bare file holds the most frequent key's request, which did not change.
            return Added::Kept;
        }
        self.leader_changed();
        Added::New
    }

    /// Whether the most frequent kept request changed since last asked (only matters
    /// for a bare EAS file).
    fn leader_changed(&mut self) -> bool {
        if self.layout() != Layout::Eas {
            return false;
        }
        let best = self
            .kept
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.count.cmp(&b.1.count).then(b.1.first.cmp(&a.1.first)))
            .map(|(i, _)| i);
        let changed = best != self.leader;
        self.leader = best;
        changed
    }

    /// The layout of [`Recorder::file`].
    pub fn layout(&self) -> Layout {
        match self.opts.wire {
            Wire::TfRecord => Layout::TfRecord,
            Wire::Eas => Layout::Eas,
            Wire::Auto => {
                if !self.kept.is_empty()
                    && self.kept.iter().all(|k| k.message.wire == WireFormat::Eas)
                {
                    Layout::Eas
                } else {
                    Layout::TfRecord
                }
            }
        }
    }

    /// The warm-up file of what is kept: a TFRecord of `PredictionLog`s, one per key in
    /// the order first seen, or one bare EAS request (the most frequent key's) — see
    /// [`Wire`]. With nothing kept, an empty TFRecord (or an error for a bare file).
    pub fn file(&self) -> Result<Vec<u8>, crate::Error> {
        let layout = self.layout();
        if layout == Layout::Eas {
            let best = self
                .kept
                .iter()
                .max_by(|a, b| a.count.cmp(&b.count).then(b.first.cmp(&a.first)))
                .ok_or_else(|| {
                    crate::Error::from(crate::ErrorDetail::Format(
                        "no request recorded yet: a bare EAS file holds one".into(),
                    ))
                })?;
            return formats::write(std::slice::from_ref(&best.message), layout);
        }
        let msgs: Vec<Message> = self.kept.iter().map(|k| k.message.clone()).collect();
        formats::write(&msgs, layout)
    }
}

/// The key as text, for the summary.
fn key_text(k: &RecordKey) -> String {
    let mut s = k.key.to_string();
    if !k.shapes.is_empty() {
        let shapes: Vec<String> = k
            .shapes
            .iter()
            .map(|(n, (dt, d))| format!("{n} {dt} {d:?}"))
            .collect();
        s.push_str(&format!(" [{}]", shapes.join(", ")));
    }
    if let Some(b) = k.batch {
        s.push_str(&format!(" (batch {b})"));
    }
    s
}

/// The model path of a REST predict URL path: `faq` of `/v1/models/faq:predict`,
/// `faq/versions/2` of `/v1/models/faq/versions/2:predict`; `None` for anything else
/// (metadata, status, `:classify`, `:regress`).
pub fn rest_predict_model(path: &str) -> Option<&str> {
    path.strip_prefix("/v1/models/")?.strip_suffix(":predict")
}

// -----------------------------------------------------------------------------------
// The proxy
// -----------------------------------------------------------------------------------

/// What the proxy hands the recorder's thread.
#[derive(Debug)]
pub enum Event {
    /// A request body that passed through whole (`None`: larger than the limit).
    Request {
        /// How it was read.
        protocol: Protocol,
        /// The URL path.
        path: String,
        /// The body, or `None` past [`ProxyOptions::max_size`].
        body: Option<Bytes>,
    },
    /// A request body passed through unread because the proxy held
    /// [`ProxyOptions::max_inflight`] request bytes already.
    OverBudget {
        /// How it would have been read.
        protocol: Protocol,
        /// The URL path.
        path: String,
    },
    /// A connection whose requests from here on pass through unread, and why (its
    /// HTTP/2 could not be read, or the recorder fell behind on it).
    Unread {
        /// What happened.
        why: String,
    },
    /// A REST model's metadata, fetched from the upstream.
    Metadata {
        /// `NAME` or `NAME/versions/N`.
        model_path: String,
        /// The answer's body, or why there is none.
        json: Result<Bytes, String>,
    },
}

/// The queue from the proxy to the recorder's thread. Sending takes an uncontended lock
/// and wakes nobody: the recorder takes what is queued every few milliseconds
/// ([`run_recorder`]), so the proxy's thread never pays for waking another one (a
/// futex call and a context switch a request, measurable on loopback).
#[derive(Debug, Clone, Default)]
pub struct Events(Arc<Queue>);

#[derive(Debug, Default)]
struct Queue {
    /// The events, and the request bytes they hold.
    items: Mutex<(Vec<Event>, usize)>,
    closed: AtomicBool,
    /// Requests left out because the queue held [`MAX_QUEUED`] bytes.
    dropped: AtomicU64,
}

/// The most request bytes queued for the recorder: past it a request is passed through
/// and counted, not copied (the recorder fell behind).
pub const MAX_QUEUED: usize = 256 << 20;

impl Events {
    /// An empty, open queue.
    pub fn new() -> Events {
        Events::default()
    }

    /// Queues an event (dropped once the queue is closed, or counted and dropped when
    /// it would take the queue past [`MAX_QUEUED`] bytes).
    pub fn send(&self, e: Event) {
        if self.0.closed.load(Ordering::SeqCst) {
            return;
        }
        let n = match &e {
            Event::Request { body: Some(b), .. } => b.len(),
            _ => 0,
        };
        if let Ok(mut q) = self.0.items.lock() {
            if q.1 + n > MAX_QUEUED {
                self.0.dropped.fetch_add(1, Ordering::SeqCst);
                return;
            }
            q.1 += n;
            q.0.push(e);
        }
    }

    /// Closes the queue: [`run_recorder`] takes what is left and returns.
    pub fn close(&self) {
        self.0.closed.store(true, Ordering::SeqCst);
    }

    /// What is queued, how many requests were dropped since last asked, and whether the
    /// queue is closed.
    fn take(&self) -> (Vec<Event>, u64, bool) {
        let closed = self.0.closed.load(Ordering::SeqCst);
        let v = self
            .0
            .items
            .lock()
            .map(|mut q| {
                q.1 = 0;
                std::mem::take(&mut q.0)
            })
            .unwrap_or_default();
        (v, self.0.dropped.swap(0, Ordering::SeqCst), closed)
    }
}

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
    /// instead of the webpki roots (see [`super::read_ca`]).
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
/// The default [`ProxyOptions::max_models`] and [`RecordOptions::max_models`].
pub const DEFAULT_MAX_MODELS: usize = 1024;
/// The largest model metadata answer read: 16 MiB (a larger one is not used).
pub const MAX_METADATA: usize = 16 << 20;
/// How long a model metadata answer may take, body included.
pub const METADATA_DEADLINE: Duration = Duration::from_secs(30);

impl ProxyOptions {
    /// Options forwarding to `upstream` with every default.
    pub fn new(upstream: impl Into<String>) -> ProxyOptions {
        ProxyOptions {
            upstream: upstream.into(),
            max_size: DEFAULT_MAX_SIZE,
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
            )))
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
    grpc: Mutex<Option<super::grpc::Connection>>,
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

/// A client connection's last byte in either direction, and the answers it awaits from
/// the upstream, for its idle timeout.
#[derive(Debug)]
struct Activity {
    since: tokio::time::Instant,
    last_ms: AtomicU64,
    busy: AtomicUsize,
}

impl Activity {
    fn new() -> Arc<Activity> {
        Arc::new(Activity {
            since: tokio::time::Instant::now(),
            last_ms: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        })
    }

    fn touch(&self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Marks an answer awaited until the guard is dropped.
    fn busy(self: &Arc<Self>) -> BusyGuard {
        self.busy.fetch_add(1, Ordering::SeqCst);
        BusyGuard(self.clone())
    }

    /// Completes once the connection has been quiet for `limit` with no answer awaited.
    async fn idle(&self, limit: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let quiet = self.since.elapsed().saturating_sub(last);
            let busy = self.busy.load(Ordering::SeqCst) > 0;
            if !busy && quiet >= limit {
                return;
            }
            let wait = if busy {
                limit
            } else {
                limit.saturating_sub(quiet)
            };
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
    }
}

/// An answer awaited on a connection ([`Activity::busy`]).
struct BusyGuard(Arc<Activity>);

/// Where a request's [`BusyGuard`] is kept from the request's end (as the upstream
/// reads it, [`Replay::end`]) until its answer is dropped.
type Awaited = Arc<Mutex<Option<BusyGuard>>>;

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A client's stream, noting each byte read or written in its [`Activity`].
struct Watched {
    io: tokio::net::TcpStream,
    activity: Arc<Activity>,
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, b);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        b: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, b);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
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
        if self.scheme == "http" && super::tap::opens_with_preface(&stream, PREFACE_PATIENCE).await
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
                let limits = super::tap::Limits {
                    max_size: self.max_size,
                    budget: self.budget.clone(),
                    idle,
                    stopped,
                };
                let answered = self.answered.clone();
                let note = self.tap_note();
                super::tap::relay(stream, up, limits, answered, note).await;
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
                return self.failed(grpc, format!("tfreq record: the request broke off: {e}"))
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
        if h2 && grpc && replay.rest.is_none() && replay.ahead.iter().all(Frame::is_data) {
            if let Some(body) = &whole {
                return self.forward_whole(parts, body.clone()).await;
            }
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
        if protocol == Some(Protocol::Rest) && self.fetch_metadata {
            if let Some(m) = rest_predict_model(path) {
                self.ask_metadata(m.to_string());
            }
        }
        protocol
    }

    /// Where a relayed connection's requests go (src/net/tap.rs): to the recorder,
    /// as [`Proxy::forward`] sends them.
    fn tap_note(self: Arc<Self>) -> super::tap::Note {
        Arc::new(move |n| match n {
            super::tap::Noted::Request(seen) => {
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
            super::tap::Noted::Lost(why) => self.events.send(Event::Unread { why }),
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
                match super::grpc::Connection::open(
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
        let transport = |e: h2::Error| failed(super::grpc::transport_error(conn.endpoint(), &e));
        let req = ::http::Request::from_parts(parts, ());
        let (answer, mut stream) = match send.send_request(req, body.is_empty()) {
            Ok(s) => s,
            Err(e) => return transport(e),
        };
        if !body.is_empty() {
            if let Err(e) = stream.send_data(body, true) {
                return transport(e);
            }
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
                    return Err(format!("HTTP {status}: {}", super::shown(&body)));
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

/// The request body on its way upstream: the frames read ahead ([`read_ahead`]), then the
/// rest (if the body was larger than the limit) as it comes.
struct Replay {
    ahead: VecDeque<Frame<Bytes>>,
    ahead_len: u64,
    rest: Option<Incoming>,
    /// The bytes read ahead, held against the proxy's budget until passed on.
    held: Held,
    /// Reading ahead stopped because the budget was spent.
    over_budget: bool,
    /// The connection, marked as awaiting the upstream once the body has ended.
    ended: Option<(Arc<Activity>, Awaited)>,
}

impl Replay {
    /// The body has ended: the connection now awaits the upstream's answer.
    fn end(&mut self) {
        if let Some((activity, awaited)) = self.ended.take() {
            if let Ok(mut a) = awaited.lock() {
                *a = Some(activity.busy());
            }
        }
    }
}

/// Reads a request body ahead, up to `limit` bytes and as long as `held` can take them
/// from the proxy's budget: the body to send on, and the whole body when it ended
/// within both. A small body is thus handed to the client whole, and hyper's HTTP/2
/// client writes its HEADERS and DATA frames in one write, instead of HEADERS first and
/// DATA once the incoming frame is read (one more wake-up of the upstream a call).
async fn read_ahead(
    mut body: Incoming,
    limit: u64,
    mut held: Held,
) -> Result<(Replay, Option<Bytes>), hyper::Error> {
    let mut ahead = VecDeque::new();
    let mut len = 0u64;
    while !body.is_end_stream() {
        match body.frame().await {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(f)) => {
                let n = f.data_ref().map_or(0, |d| d.len() as u64);
                len += n;
                let over_budget = !held.grow(n);
                ahead.push_back(f);
                if len > limit || over_budget {
                    // The frame just read is held beyond the budget until sent on.
                    let r = Replay {
                        ahead,
                        ahead_len: len,
                        rest: Some(body),
                        held,
                        over_budget: over_budget && len <= limit,
                        ended: None,
                    };
                    return Ok((r, None));
                }
            }
        }
    }
    let data: Vec<&Bytes> = ahead.iter().filter_map(Frame::data_ref).collect();
    let whole = match data.as_slice() {
        [one] => (*one).clone(),
        many => {
            let mut b = BytesMut::with_capacity(len as usize);
            for d in many {
                b.extend_from_slice(d);
            }
            b.freeze()
        }
    };
    let r = Replay {
        ahead,
        ahead_len: len,
        rest: None,
        held,
        over_budget: false,
        ended: None,
    };
    Ok((r, Some(whole)))
}

impl Body for Replay {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        if let Some(f) = this.ahead.pop_front() {
            if let Some(d) = f.data_ref() {
                this.ahead_len -= d.len() as u64;
                this.held.shrink(d.len() as u64);
            }
            return Poll::Ready(Some(Ok(f)));
        }
        match &mut this.rest {
            Some(r) => {
                let f = std::task::ready!(Pin::new(&mut *r).poll_frame(cx));
                if f.is_none() || r.is_end_stream() {
                    this.end();
                }
                Poll::Ready(f)
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ahead.is_empty() && self.rest.as_ref().is_none_or(|r| r.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match &self.rest {
            None => SizeHint::with_exact(self.ahead_len),
            Some(r) => {
                let h = r.size_hint();
                let mut s = SizeHint::new();
                s.set_lower(h.lower().saturating_add(self.ahead_len));
                if let Some(u) = h.upper() {
                    s.set_upper(u.saturating_add(self.ahead_len));
                }
                s
            }
        }
    }
}

/// How long the proxy waits for a connection to the upstream ([`Proxy::forward_whole`],
/// and a relayed connection's own).
const UPSTREAM_CONNECT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a new connection may take to send the 24 bytes of the HTTP/2 preface (they
/// come in one piece from every client seen) before it is served by hyper instead.
const PREFACE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// An answer read by `h2` as a body for hyper's server: its DATA frames (their
/// flow-control window given back as each is passed on), then its trailers.
struct Upstream {
    recv: h2::RecvStream,
    data_done: bool,
    done: bool,
}

impl Body for Upstream {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if !this.data_done {
            match std::task::ready!(this.recv.poll_data(cx)) {
                Some(Ok(d)) => {
                    let _ = this.recv.flow_control().release_capacity(d.len());
                    return Poll::Ready(Some(Ok(Frame::data(d))));
                }
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                None => this.data_done = true,
            }
        }
        let t = std::task::ready!(this.recv.poll_trailers(cx));
        this.done = true;
        Poll::Ready(match t {
            Ok(Some(t)) => Some(Ok(Frame::trailers(t))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.recv.is_end_stream()
    }
}

/// An answer body passed on unchanged, counted when it ends (or is dropped).
struct Counted<B> {
    inner: B,
    counter: Option<Arc<AtomicU64>>,
    /// The connection awaits this answer until it is dropped.
    busy: Option<Awaited>,
}

impl<B> Counted<B> {
    fn new(inner: B, counter: Arc<AtomicU64>) -> Self {
        Counted {
            inner,
            counter: Some(counter),
            busy: None,
        }
    }

    fn count(&mut self) {
        if let Some(c) = self.counter.take() {
            c.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl<B> Drop for Counted<B> {
    fn drop(&mut self) {
        self.count();
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Counted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = r {
            self.count();
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Whether a request of `protocol` to `path` is one [`Recorder::add`] would read (not
/// metadata, not a status page).
fn is_recordable(protocol: Protocol, path: &str) -> bool {
    match protocol {
        Protocol::Grpc => !path.ends_with("/GetModelMetadata"),
        Protocol::Rest => {
            rest_predict_model(path).is_some()
                || rest_json::RestCall::parse(path).is_ok_and(|c| c.method.takes_examples())
        }
        Protocol::Eas => true,
    }
}

/// The recorder's loop: takes the queued [`Event`]s every 5 ms until the queue is
/// closed ([`Events::close`]) and emptied, calling `save` with the recorder each time
/// its file changed. Returns the recorder.
pub fn run_recorder(
    mut rec: Recorder,
    events: Events,
    mut save: impl FnMut(&Recorder),
) -> Recorder {
    loop {
        let (batch, dropped, closed) = events.take();
        for _ in 0..dropped {
            rec.refuse(
                "the recorder fell behind (passed through, not recorded)",
                format!("over {} MiB of requests waited for it", MAX_QUEUED >> 20),
            );
        }
        let mut changed = false;
        for ev in batch {
            changed |= match ev {
                Event::Request {
                    protocol,
                    path,
                    body: Some(body),
                } => rec.add(protocol, &path, &body).is_new(),
                Event::Request {
                    protocol,
                    path,
                    body: None,
                } => {
                    if is_recordable(protocol, &path) {
                        rec.refuse(
                            "larger than --max-size (passed through, not recorded)",
                            format!("{protocol} {path}"),
                        );
                    }
                    false
                }
                Event::OverBudget { protocol, path } => {
                    if is_recordable(protocol, &path) {
                        rec.refuse(
                            "read while the proxy held --max-inflight bytes of requests (passed through, not recorded)",
                            format!("{protocol} {path}"),
                        );
                    }
                    false
                }
                Event::Unread { why } => {
                    rec.refuse(
                        "a connection's requests not read (passed through, not recorded)",
                        why,
                    );
                    false
                }
                Event::Metadata { model_path, json } => rec.metadata(&model_path, json),
            };
        }
        if changed {
            save(&rec);
        }
        if closed {
            return rec;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(p: &str) -> Vec<u8> {
        std::fs::read(p).unwrap()
    }

    fn grpc_frame(b: &[u8]) -> Vec<u8> {
        let mut v = vec![0];
        v.extend_from_slice(&(b.len() as u32).to_be_bytes());
        v.extend_from_slice(b);
        v
    }

    #[test]
    fn one_request_per_executor_key_with_counts() {
        let mut r = Recorder::new(RecordOptions {
            wire: Wire::TfRecord,
            model_name: Some("faq".into()),
            ..RecordOptions::default()
        });
        let prod = data("tests/data/eas/faq_prod.bin");
        assert_eq!(r.add(Protocol::Eas, "/api/predict/faq", &prod), Added::New);
        assert_eq!(
            r.add(
                Protocol::Eas,
                "/api/predict/faq",
                &data("tests/data/eas/faq_prod_batch4.bin")
            ),
            Added::Counted
        );
        let tfs = data("tests/data/tfs/faq_warmup.bin");
        let a = r.add(
            Protocol::Grpc,
            "/tensorflow.serving.PredictionService/Predict",
            &grpc_frame(&tfs),
        );
        assert_eq!(a, Added::New);
        assert_eq!(r.recorded(), 2);
        assert_eq!(r.requests(), 3);
        assert_eq!(r.kept()[0].count, 2);
        assert_eq!(r.counts().keys.len(), 3);
        // The file reads back as a TFRecord of the two kept requests.
        let back = formats::read(r.file().unwrap().into(), &formats::InputOptions::new())
            .unwrap()
            .into_records()
            .unwrap();
        assert_eq!(back.len(), 2);
    }

    /// A warm-up file belongs to one model: `--model-name`'s, else the first named; the
    /// requests of another model are passed through, counted and named, not recorded.
    #[test]
    fn one_model_is_recorded() {
        let faq = data("tests/data/tfs/faq_warmup.bin");
        let mut other = crate::decode(&faq).unwrap();
        other.model_spec.as_mut().unwrap().name = "faq_v2".into();
        let other = crate::encode::encode(
            &other,
            WireFormat::TfServing,
            crate::encode::TfsEncoding::default(),
        )
        .unwrap();
        let path = "/tensorflow.serving.PredictionService/Predict";
        for (model_name, kept, refused) in
            [(None, "faq", "faq_v2"), (Some("faq_v2"), "faq_v2", "faq")]
        {
            let mut r = Recorder::new(RecordOptions {
                wire: Wire::TfRecord,
                model_name: model_name.map(str::to_string),
                ..RecordOptions::default()
            });
            r.add(Protocol::Grpc, path, &grpc_frame(&faq));
            r.add(Protocol::Grpc, path, &grpc_frame(&other));
            // An EAS request names no model: recorded beside either.
            r.add(
                Protocol::Eas,
                "/api/predict/faq",
                &data("tests/data/eas/faq_prod.bin"),
            );
            assert_eq!(r.requests(), 3, "{model_name:?}");
            assert_eq!(r.recorded(), 2, "{model_name:?}");
            let models: Vec<_> = r
                .kept()
                .iter()
                .filter_map(|k| k.message.model_spec.as_ref().map(|s| s.name.clone()))
                .collect();
            assert!(models.iter().all(|m| m == kept), "{models:?}");
            let named: Vec<&String> = r.not_recorded().values().flat_map(|(_, w)| w).collect();
            assert_eq!(named, [&format!("model {refused:?}")], "{model_name:?}");
        }
    }

    #[test]
    fn by_shape_and_batch_keep_more() {
        for (by, n) in [(By::Executor, 1), (By::Shape, 2), (By::Batch, 2)] {
            let mut r = Recorder::new(RecordOptions {
                by,
                ..RecordOptions::default()
            });
            for f in [
                "faq_prod.bin",
                "faq_prod_batch4.bin",
                "faq_prod_reordered.bin",
            ] {
                r.add(
                    Protocol::Eas,
                    "/api/predict/faq",
                    &data(&format!("tests/data/eas/{f}")),
                );
            }
            assert_eq!(r.recorded(), n, "{by:?}");
        }
    }

    #[test]
    fn by_batch_keeps_one_per_batch_size() {
        let req = |dims: &[i64]| {
            let n = dims.iter().product::<i64>() as usize;
            let mut r = crate::TFRequest::new("s");
            r.add_feed("x", dims, crate::DType::Float, vec![0f32; n])
                .unwrap()
                .add_fetch("y");
            r.message().clone()
        };
        let mut r = Recorder::new(RecordOptions {
            by: By::Batch,
            wire: Wire::TfRecord,
            ..RecordOptions::default()
        });
        // [2, 3] and [2, 5]: one batch size; [4, 3] another.
        assert_eq!(r.add_message(req(&[2, 3])), Added::New);
        assert_eq!(r.add_message(req(&[2, 5])), Added::Counted);
        assert_eq!(r.add_message(req(&[4, 3])), Added::New);
        assert_eq!(r.recorded(), 2);
        assert!(
            r.kept()[1].key.ends_with("(batch 4)"),
            "{}",
            r.kept()[1].key
        );
    }

    #[test]
    fn cap_and_bad_input_are_counted_not_recorded() {
        let mut r = Recorder::new(RecordOptions {
            max_records: 1,
            wire: Wire::TfRecord,
            ..RecordOptions::default()
        });
        r.add(
            Protocol::Eas,
            "/api/predict/faq",
            &data("tests/data/eas/faq_prod.bin"),
        );
        let tfs = data("tests/data/tfs/faq_warmup.bin");
        let p = "/tensorflow.serving.PredictionService/Predict";
        assert!(matches!(
            r.add(Protocol::Grpc, p, &grpc_frame(&tfs)),
            Added::NotRecorded(_)
        ));
        assert!(matches!(
            r.add(Protocol::Grpc, p, b"\0\0\0"),
            Added::NotRecorded(_)
        ));
        assert!(matches!(
            r.add(Protocol::Eas, "/api/predict/faq", b"\xff\xff\xff"),
            Added::NotRecorded(_)
        ));
        assert_eq!(
            r.add(
                Protocol::Grpc,
                "/tensorflow.serving.PredictionService/GetModelMetadata",
                b""
            ),
            Added::Ignored
        );
        assert_eq!(r.recorded(), 1);
        let n: u64 = r.not_recorded().values().map(|v| v.0).sum();
        assert_eq!(n, 3, "{:?}", r.not_recorded());
        assert!(r
            .not_recorded()
            .contains_key("past --max-records (key not recorded)"));
    }

    #[test]
    fn classify_regress_and_multi_inference_over_grpc() {
        let mut r = Recorder::new(RecordOptions::default());
        let dir = "tests/data/examples/requests";
        for (method, file) in [
            ("Classify", "classify_valid.pb"),
            ("Classify", "classify_valid_context.pb"),
            ("Regress", "regress_valid.pb"),
            ("MultiInference", "multi_valid.pb"),
        ] {
            let body = grpc_frame(&data(&format!("{dir}/{file}")));
            let path = format!("/tensorflow.serving.PredictionService/{method}");
            let a = r.add(Protocol::Grpc, &path, &body);
            assert!(!matches!(a, Added::NotRecorded(_)), "{file}: {a:?}");
        }
        // Two classify requests share their key (the signature's); the regress and the
        // multi-inference ones are others.
        assert_eq!((r.requests(), r.recorded()), (4, 3));
        assert_eq!(r.kept()[0].message.method, Method::Classify);
        assert_eq!(r.kept()[1].message.method, Method::Regress);
        assert_eq!(r.kept()[2].message.method, Method::MultiInference);
        let back = formats::read(r.file().unwrap().into(), &formats::InputOptions::new())
            .unwrap()
            .into_records()
            .unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[1].message.method, Method::Regress);
        assert_eq!(back[2].message.method, Method::MultiInference);
    }

    /// A REST `:classify` / `:regress` body is recorded as the request TF Serving
    /// makes of it (the bytes `tensorflow-serving-api` wrote for the same examples,
    /// tests/data/examples/rest/), its method and model from the URL; a body TF Serving
    /// refuses is named as not recorded.
    #[test]
    fn rest_classify_and_regress_bodies() {
        let mut r = Recorder::new(RecordOptions::default());
        let body = data("tests/data/examples/rest/classify_context.json");
        assert!(r
            .add(Protocol::Rest, "/v1/models/tf1_examples:classify", &body)
            .is_new());
        let body = data("tests/data/examples/rest/regress_context.json");
        assert!(r
            .add(Protocol::Rest, "/v1/models/tf1_examples:regress", &body)
            .is_new());
        assert_eq!((r.requests(), r.recorded()), (2, 2));
        let (c, g) = (&r.kept()[0].message, &r.kept()[1].message);
        assert_eq!((c.method, g.method), (Method::Classify, Method::Regress));
        assert_eq!(c.model_spec.as_ref().unwrap().name, "tf1_examples");
        let want = data("tests/data/examples/rest/classify_context.pb");
        let got = crate::encode(c, WireFormat::TfServing, crate::TfsEncoding::AsIs).unwrap();
        assert_eq!(got, want);
        r.add(
            Protocol::Rest,
            "/v1/models/tf1_examples:classify",
            br#"{"examples": [{"x": [1.0, 2]}]}"#,
        );
        assert!(r.not_recorded()["undecodable request"].1[0].contains("expecting type: float"));
    }

    /// Past `max_models` REST models, a new model's requests are counted as not
    /// recorded (no metadata is awaited or kept for them); known models still record.
    #[test]
    fn rest_models_past_the_cap_are_counted_not_kept() {
        let mut r = Recorder::new(RecordOptions {
            max_models: 2,
            ..RecordOptions::default()
        });
        let body = br#"{"inputs": {"input_holder": ["hi"], "model_id": "m", "threshold": 0.5}}"#;
        for m in ["a", "b", "c", "d", "a"] {
            r.add(Protocol::Rest, &format!("/v1/models/{m}:predict"), body);
        }
        assert_eq!(r.awaited().len(), 2);
        let json = Bytes::from(data("tests/data/models/faq.metadata.json"));
        for m in ["a", "b", "c"] {
            r.metadata(m, Ok(json.clone()));
        }
        assert_eq!(r.metadata.len(), 2);
        assert_eq!(r.requests(), 3);
        let (n, names) = r
            .not_recorded()
            .iter()
            .find(|(why, _)| why.contains("past the first 2 (--max-models"))
            .map(|(_, v)| v.clone())
            .unwrap();
        assert_eq!(
            (n, names),
            (2, vec!["REST c:predict".into(), "REST d:predict".into()])
        );
    }

    #[test]
    fn rest_waits_for_metadata() {
        let mut r = Recorder::new(RecordOptions::default());
        let body = br#"{"inputs": {"input_holder": ["hi"], "model_id": "m", "threshold": 0.5}}"#;
        assert_eq!(
            r.add(Protocol::Rest, "/v1/models/faq:predict", body),
            Added::Waiting
        );
        assert_eq!(r.requests(), 0);
        let json = Bytes::from(data("tests/data/models/faq.metadata.json"));
        assert!(r.metadata("faq", Ok(json)));
        assert_eq!((r.requests(), r.recorded()), (1, 1));
        let m = &r.kept()[0].message;
        assert_eq!(m.model_spec.as_ref().unwrap().name, "faq");
        assert_eq!(m.tensor("threshold").unwrap().dtype.to_string(), "DT_FLOAT");
        // A model whose metadata failed: its requests are named as not recorded.
        r.add(Protocol::Rest, "/v1/models/nope:predict", body);
        r.metadata("nope", Err("HTTP 404".into()));
        assert!(r.not_recorded()["undecodable request"].1[0].contains("no model metadata"));
    }
}
