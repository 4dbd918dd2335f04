//! The recording policy: which requests are kept (one per executor key, [`By`]), their
//! counts, and the warm-up file written from them. No sockets.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;

use crate::analysis::coverage::{KeyCounts, Origin};
use crate::analysis::key::ShapeKey;
use crate::analysis::plan::{PlanKey, most_frequent};
use crate::decode::{decode_as, decode_request};
use crate::formats::rest_json::{self, Dtypes};
use crate::formats::{self, Layout};
use crate::model::{Kind, Message, Method, WireFormat};
use crate::net::Protocol;
use crate::scrub::{FillMode, scrub};

// TF Serving's warm-up runs at most this many records: the most `Recorder` keeps.
use crate::analysis::warmup::MAX_RECORDS;

/// The default largest request body recorded: 64 MiB. A larger one is passed through
/// and counted, not recorded.
pub const DEFAULT_MAX_REQUEST_SIZE: u64 = 64 << 20;

/// The default [`ProxyOptions::max_models`](super::ProxyOptions::max_models) and [`RecordOptions::max_models`].
pub const DEFAULT_MAX_MODELS: usize = 1024;

use crate::analysis::plan::By;

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
    /// proxy asks for no other, [`ProxyOptions::max_models`](super::ProxyOptions::max_models)); a later model's requests
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
    index: HashMap<PlanKey, usize>,
    not_recorded: BTreeMap<String, (u64, Vec<String>)>,
    pub(super) metadata: HashMap<String, Result<Bytes, String>>,
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
            rest_json::parse_json(&body)
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
                                "REST request to a model past the first {} (the model limit; passed through, not recorded)",
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
                return self.refuse("undecodable request", format!("{}: {e}", what(&model_path)));
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
                        "a model other than the one named to record (passed through, not recorded)"
                    } else {
                        "a model other than the first recorded; a warm-up file belongs to one model, a model name to record picks it (passed through, not recorded)"
                    };
                    return self.refuse(why, format!("model {named:?}"));
                }
                Some(_) => {}
            }
        }
        let key = PlanKey::of(&sk, self.opts.by);
        if let Some(&i) = self.index.get(&key) {
            self.kept[i].count += 1;
            return if self.leader_changed() {
                Added::Leader
            } else {
                Added::Counted
            };
        }
        if self.kept.len() >= self.opts.max_records {
            return self.refuse("past the record limit (key not recorded)", key.to_string());
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
        let text = key.to_string();
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
        let best = most_frequent(self.kept.iter().map(|k| (k.count, k.first)));
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
            let best = most_frequent(self.kept.iter().map(|k| (k.count, k.first)))
                .map(|i| &self.kept[i])
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

/// The model path of a REST predict URL path: `faq` of `/v1/models/faq:predict`,
/// `faq/versions/2` of `/v1/models/faq/versions/2:predict`; `None` for anything else
/// (metadata, status, `:classify`, `:regress`).
pub fn rest_predict_model(path: &str) -> Option<&str> {
    path.strip_prefix("/v1/models/")?.strip_suffix(":predict")
}

// -----------------------------------------------------------------------------------
// The proxy
// -----------------------------------------------------------------------------------
