//! The queue between the proxy and the recorder's thread, and the loop that drains it.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::recorder::*;
use crate::formats::rest_json::{self};
use crate::net::Protocol;

/// What the proxy hands the recorder's thread.
#[derive(Debug)]
pub enum Event {
    /// A request body that passed through whole (`None`: larger than the limit).
    Request {
        /// How it was read.
        protocol: Protocol,
        /// The URL path.
        path: String,
        /// The body, or `None` past [`ProxyOptions::max_size`](super::ProxyOptions::max_size).
        body: Option<Bytes>,
    },
    /// A request body passed through unread because the proxy held
    /// [`ProxyOptions::max_inflight`](super::ProxyOptions::max_inflight) request bytes already.
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
                            "larger than the size limit (passed through, not recorded)",
                            format!("{protocol} {path}"),
                        );
                    }
                    false
                }
                Event::OverBudget { protocol, path } => {
                    if is_recordable(protocol, &path) {
                        rec.refuse(
                            "read while the proxy held its in-flight limit of request bytes (passed through, not recorded)",
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
