//! A load test (`tfreq load`), in the manner of hey (<https://github.com/rakyll/hey>)
//! and ghz (<https://ghz.sh>): many calls of prepared requests to one service, at a
//! concurrency or at a rate, measured into a [`LoadReport`].
//!
//! Request `i` of the run is request `i mod N` of the `N` given, sent by one of
//! [`Load::concurrency`] workers. Without [`Load::rate`] (closed loop) the workers are
//! futures on one client's thread, sharing its connection ([`super::Caller`]); with it
//! (open loop) each is a thread with a client of its own, and request `i` is scheduled
//! `i / rate` seconds after the start ([`Schedule`]), its latency measured from that
//! time, so a request that waited for a free worker (the service stalled) counts the
//! wait. The first call of each executor key ([`ExecutorKey`]) is shown apart
//! ([`LoadReport::first_calls`]): it is the cold start a warm-up should have removed.
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use tfreq::analysis::ExecutorKey;
//! use tfreq::net::{prepare, Client, Load, LoadRequest, Options, Target};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A port nothing listens on: every call fails, and is counted by kind.
//! let target = Target::parse("http://127.0.0.1:9/api/predict/faq", None)?;
//! let bytes = bytes::Bytes::from(std::fs::read("tests/data/eas/faq_prod.bin")?);
//! let message = tfreq::decode(&bytes)?;
//! let request = prepare(&message, &bytes, &target, &Options::default())?;
//! let requests = [LoadRequest { label: "faq_prod.bin".into(), key: ExecutorKey::of(&message), request }];
//! let load = Load { requests: Some(3), ..Load::new("http://127.0.0.1:9/api/predict/faq".into()) };
//! let mut clients = (0..load.connections())
//!     .map(|_| Client::connect(target.clone(), Options::default()))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let report = load.run(&mut clients, &requests, &AtomicBool::new(false));
//! assert_eq!((report.requests, report.errors_total), (3, 3));
//! assert_eq!(report.errors["unreachable"].count, 3);
//! assert_eq!(report.first_calls.len(), 1);
//! let mut text = Vec::new();
//! tfreq::render::write_load(&mut text, &report)?;
//! assert!(String::from_utf8(text)?.starts_with("load: 3 requests to http://127.0.0.1:9/"));
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::analysis::key::ExecutorKey;
use crate::analysis::load::{Call, LoadReport, RunInfo, Schedule, Tally};

use super::{Caller, Client, NetError, Prepared};

/// Requests sent when neither [`Load::requests`] nor [`Load::duration`] is given (hey's
/// and ghz's default).
pub const DEFAULT_REQUESTS: u64 = 200;

/// The most (time, latency) points kept for a plot of latency over time
/// ([`LoadReport::points`]); the calls past it are counted in every statistic, not drawn.
const MAX_POINTS: usize = 100_000;

/// One request of a run, sent in turn with the others.
#[derive(Debug, Clone)]
pub struct LoadRequest {
    /// What it is called in the report (its file).
    pub label: String,
    /// Its executor key: the first call of each key is reported apart.
    pub key: ExecutorKey,
    /// The request as it is sent ([`super::prepare`]).
    pub request: Prepared,
}

/// How a load test runs.
#[derive(Debug, Clone)]
pub struct Load {
    /// Where the requests go, as the report names it.
    pub to: String,
    /// How many calls are under way at most at once (at least 1).
    pub concurrency: u32,
    /// Send at this rate, a second (open loop); `None`: each worker sends as soon as
    /// it is free (closed loop).
    pub rate: Option<f64>,
    /// Send this many requests in all; with neither this nor [`Load::duration`],
    /// [`DEFAULT_REQUESTS`].
    pub requests: Option<u64>,
    /// Send for at most this long, then wait for the calls under way (without
    /// [`Load::requests`], as many as are scheduled in it, or no limit for a closed loop).
    pub duration: Option<Duration>,
}

impl Load {
    /// A closed-loop run of one call at a time and [`DEFAULT_REQUESTS`] requests to `to`.
    pub fn new(to: String) -> Load {
        Load {
            to,
            concurrency: 1,
            rate: None,
            requests: None,
            duration: None,
        }
    }

    fn schedule(&self) -> Schedule {
        Schedule::new(self.rate)
    }

    /// How many requests the run sends at most.
    fn total(&self) -> u64 {
        match (self.requests, self.duration) {
            (Some(n), _) => n,
            (None, Some(d)) => self.schedule().count_within(d).unwrap_or(u64::MAX),
            (None, None) => DEFAULT_REQUESTS,
        }
    }

    /// How many calls are under way at once: the concurrency, at most the requests.
    fn workers(&self) -> usize {
        u64::from(self.concurrency).clamp(1, self.total().max(1)) as usize
    }

    /// How many clients [`Load::run`] wants: one for a closed loop (its connection
    /// shared by the workers), one a worker for an open loop (a thread each).
    pub fn connections(&self) -> usize {
        if self.schedule().rate().is_none() {
            1
        } else {
            self.workers()
        }
    }

    /// Sends the requests, in turn, over `clients` ([`Load::connections`] of them,
    /// connected and made [`ready`](Client::ready)), and reports what the calls
    /// measured. Once `stop` is set (Ctrl-C) no further request is started; the calls
    /// under way end, and the report says it was
    /// [`interrupted`](LoadReport::interrupted). No request or no client: nothing is
    /// sent.
    pub fn run(
        &self,
        clients: &mut [Client],
        requests: &[LoadRequest],
        stop: &AtomicBool,
    ) -> LoadReport {
        // The first request of each key: call i < N of that request is the key's first call.
        let mut seen = std::collections::HashSet::new();
        let first_of_key: Vec<bool> = requests.iter().map(|r| seen.insert(&r.key)).collect();
        let schedule = self.schedule();
        let start = Instant::now();
        let run = Run {
            requests,
            first_of_key: &first_of_key,
            schedule,
            total: if requests.is_empty() || clients.is_empty() {
                0
            } else {
                self.total()
            },
            next: AtomicU64::new(0),
            stop,
            start,
            stop_at: self.duration.and_then(|d| start.checked_add(d)),
            max_points: MAX_POINTS / (self.concurrency.max(1) as usize),
        };
        let protocol = clients
            .first()
            .map_or(String::new(), |c| c.target().protocol().to_string());
        let t = match clients {
            [] => Tally::default(),
            [client, ..] if schedule.rate().is_none() => together(&run, client, self.workers()),
            _ => threads(&run, clients),
        };
        t.report(RunInfo {
            to: self.to.clone(),
            protocol,
            concurrency: self.concurrency,
            schedule,
            interrupted: stop.load(Ordering::Relaxed),
        })
    }
}

/// The kind of a failed call in [`LoadReport::errors`]: the status the service
/// answered ([`super::Status::kind`]), or what kind of failure it was.
fn error_kind(e: &NetError) -> String {
    match e {
        NetError::Refused { status, .. } => status.kind(),
        NetError::Timeout(_) => "timeout".into(),
        NetError::Unreachable(_) | NetError::Untrusted(_) => "unreachable".into(),
        NetError::TooLarge { .. } => "answer too large".into(),
        NetError::BadResponse(_) => "unreadable answer".into(),
        NetError::NotGrpc(_) => "not a gRPC service".into(),
        NetError::BadRequest(_)
        | NetError::BadUrl(_)
        | NetError::UnknownProtocol
        | NetError::NoModelName(_) => "request not sent".into(),
    }
}

/// What every worker of a run shares: the requests, when to stop, and how one call is
/// counted.
struct Run<'a> {
    requests: &'a [LoadRequest],
    first_of_key: &'a [bool],
    schedule: Schedule,
    total: u64,
    next: AtomicU64,
    stop: &'a AtomicBool,
    start: Instant,
    stop_at: Option<Instant>,
    max_points: usize,
}

impl Run<'_> {
    /// The number of the next request to send and when it is due (open loop), or none
    /// when the run is over (all sent, past the duration, stopped).
    fn take(&self) -> Option<(u64, Option<Instant>)> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.total {
            return None;
        }
        let due = self.schedule.at(i).and_then(|o| self.start.checked_add(o));
        match (due, self.stop_at) {
            (Some(due), Some(stop)) if due >= stop => None,
            (None, Some(stop)) if Instant::now() >= stop => None,
            _ => Some((i, due)),
        }
    }

    /// The request of call `i`.
    fn request(&self, i: u64) -> &Prepared {
        &self.requests[self.index(i)].request
    }

    fn index(&self, i: u64) -> usize {
        // `i % n` is below the number of requests, so it fits a usize.
        (i % self.requests.len() as u64) as usize
    }

    /// Counts call `i`, due at `due` (or sent then), sent at `at`, ended now.
    fn count(
        &self,
        t: &mut Tally,
        i: u64,
        due: Option<Instant>,
        at: Instant,
        result: Result<(), NetError>,
    ) {
        let end = Instant::now();
        let due = due.unwrap_or(at);
        let call = Call {
            i,
            sent: at - self.start,
            due: due - self.start,
            latency: end - due,
            error: result.err().map(|e| (error_kind(&e), e.to_string())),
        };
        let r = self.index(i);
        let first = (i < self.requests.len() as u64 && self.first_of_key[r])
            .then(|| (self.requests[r].label.as_str(), &self.requests[r].key));
        t.add(call, first, self.max_points);
    }
}

/// Closed loop: `workers` futures on the client's runtime, their calls sharing its
/// connection (gRPC) or pool (HTTP), which costs the least CPU a call and lets the
/// server read many calls at once. Each worker keeps its own tally (no message between
/// workers per call), added up at the end.
fn together(run: &Run<'_>, client: &Client, workers: usize) -> Tally {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let worker = |mut caller: Caller| async move {
        let mut t = Tally::default();
        while let Some((i, _)) = run.take() {
            let at = Instant::now();
            let result = caller.call_counted(run.request(i)).await.map(drop);
            run.count(&mut t, i, None, at, result);
        }
        t
    };
    let mut running: FuturesUnordered<_> = (0..workers).map(|_| worker(client.caller())).collect();
    client.block_on(async {
        let mut t = Tally::default();
        while let Some(w) = running.next().await {
            t.merge(w);
        }
        t
    })
}

/// Open loop: a thread and a client a worker ([`super::pool`]'s threads), each sleeping
/// to the microsecond until its request is due (the runtime's timer counts in
/// milliseconds, which would add up to a millisecond to each latency), each keeping
/// its own tally: a wake-up of another thread for every call would cost more CPU than
/// the call itself.
fn threads(run: &Run<'_>, clients: &mut [Client]) -> Tally {
    let tallies = super::pool::on_threads(
        clients,
        |c| {
            let mut t = Tally::default();
            while let Some((i, due)) = run.take() {
                if let Some(due) = due
                    && !sleep_until(due, run.stop)
                {
                    break;
                }
                let at = Instant::now();
                let result = c.call_counted(run.request(i)).map(drop);
                run.count(&mut t, i, due, at, result);
            }
            t
        },
        || {},
    );
    let mut t = Tally::default();
    for w in tallies {
        t.merge(w);
    }
    t
}

/// Sleeps until `due`, in steps of at most 50 ms so that a stop is seen at a low rate;
/// false when the stop came first.
fn sleep_until(due: Instant, stop: &AtomicBool) -> bool {
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if due <= now {
            return true;
        }
        std::thread::sleep((due - now).min(Duration::from_millis(50)));
    }
}
