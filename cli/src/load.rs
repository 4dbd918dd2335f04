//! `tfreq load FILE... --to URL [--concurrency N] [--rate R/s] [--duration 30s |
//! --requests N] [--format human|json] [--html report.html]`: a load generator in the
//! manner of hey (<https://github.com/rakyll/hey>) and ghz (<https://ghz.sh>) for EAS,
//! TF Serving gRPC and REST.
//!
//! Request `i` of the run is file `i mod FILES`, sent by one of `--concurrency`
//! workers: without `--rate`, futures on one thread sharing one client
//! ([`tfreq::net::Caller`]); with it, a thread and a client each. With `--rate` the
//! run is open-loop: request `i` is scheduled `i / rate` seconds after the start
//! ([`tfreq::analysis::load::Schedule`]) and its latency is measured from that time, so
//! a request that waited for a free worker (the service stalled) counts the wait. The
//! first call of each executor key ([`tfreq::analysis::key::ExecutorKey`]) is shown
//! apart: it is the cold start a warm-up should have removed.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tfreq::analysis::key::ExecutorKey;
use tfreq::analysis::load::{
    bar, parse_duration, parse_rate, Bin, CurvePoint, Latencies, Percentiles, Schedule,
};
use tfreq::net::{prepare, Caller, Client, NetError, Prepared, Protocol};

use crate::common::{in_file, report_error, stdout, Failure, Outcome, Progress};
use crate::input::{InputArgs, Inputs};
use crate::live::Conn;

/// Requests sent when neither `--requests` nor `--duration` is given (hey's and ghz's
/// default).
const DEFAULT_REQUESTS: u64 = 200;

/// The most (time, latency) points kept for the HTML plot of latency over time; the
/// requests past it are counted in every statistic, not drawn.
const MAX_POINTS: usize = 100_000;

/// `--format` of `load`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadFormat {
    /// A summary with a terminal histogram.
    Human,
    /// One JSON document.
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// Request files, sent in turn (request i is file i mod FILES).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    conn: Conn,
    /// How many requests are under way at most at once. Without --rate they share one
    /// thread and, for gRPC, one HTTP/2 connection (HTTP/1.1 takes a connection for each
    /// call under way); with --rate each has a thread and a connection of its own.
    #[arg(long, short = 'c', default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    /// Send at this rate, R a second (100, 100/s, 600/m), each request at its scheduled
    /// time whether or not the earlier ones were answered (open loop), its latency
    /// counted from that time. Without it, each worker sends as soon as it is free.
    #[arg(long, value_name = "R/s", value_parser = parse_rate)]
    rate: Option<f64>,
    /// Send for this long (30s, 500ms, 2m), then wait for the calls under way. Ctrl-C
    /// ends any run early: the calls under way end, and the report shows what was measured.
    #[arg(long, value_parser = parse_duration, conflicts_with = "requests")]
    duration: Option<Duration>,
    /// Send this many requests in all [default: 200].
    #[arg(long, short = 'n', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    requests: Option<u64>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = LoadFormat::Human)]
    format: LoadFormat,
    /// Also write a self-contained HTML report (an inline SVG plot of the latencies, no
    /// scripts, nothing fetched) to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    #[command(flatten)]
    input: InputArgs,
}

/// One call of the run.
struct Record {
    /// Its number in the run.
    i: u64,
    /// When it was sent, after the start.
    sent: Duration,
    /// When it was due (open loop), else when it was sent, after the start.
    due: Duration,
    /// From its scheduled time (or, closed-loop, its send) to the end of the answer.
    latency: Duration,
    /// The answer, or why there is none.
    result: Result<(), NetError>,
}

/// Errors of one status.
#[derive(serde::Serialize)]
struct Errors {
    count: u64,
    /// The first error's message.
    example: String,
}

/// The first call of an executor key.
#[derive(serde::Serialize)]
struct First {
    key: String,
    request: String,
    latency_ms: f64,
    error: Option<String>,
}

/// What a run measured.
#[derive(serde::Serialize)]
struct Report {
    to: String,
    protocol: Protocol,
    concurrency: u32,
    /// The rate asked for, a second (open loop), or none.
    rate: Option<f64>,
    /// Ctrl-C ended the run early: no request was started after it.
    interrupted: bool,
    /// Requests sent.
    requests: u64,
    answers: u64,
    errors_total: u64,
    /// From the start to the end of the last answer.
    elapsed_s: f64,
    /// Calls ended (answers and errors) a second over `elapsed_s`.
    throughput_per_s: f64,
    /// The rate requests were sent at: the number sent after the first over the time
    /// from the first send to the last.
    send_rate_per_s: f64,
    errors: BTreeMap<String, Errors>,
    /// Latencies of the answers, the first call of each key left out.
    latency_ms: Percentiles,
    histogram: Vec<Bin>,
    curve: Vec<CurvePoint>,
    first_calls: Vec<First>,
    #[serde(skip)]
    points: Vec<(f32, f32)>,
}

/// The label of an error in `errors`: the status the service answered, or what kind
/// of failure it was.
fn status_of(e: &NetError) -> String {
    match e {
        NetError::Refused { status, .. } => status.kind(),
        NetError::Timeout(_) => "timeout".into(),
        NetError::Unreachable(_) => "unreachable".into(),
        NetError::TooLarge { .. } => "answer too large".into(),
        NetError::BadResponse(_) => "unreadable answer".into(),
        NetError::NotGrpc(_) => "not a gRPC service".into(),
        NetError::BadRequest(_) | NetError::BadUrl(_) => "request not sent".into(),
        _ => "error".into(),
    }
}

pub fn run(a: Args) -> Outcome {
    let inputs = Inputs::new(&a.input, None);
    let files = inputs.expand(&a.files)?;
    crate::common::stdin_at_most_once(files.iter().map(PathBuf::as_path))?;
    let (target, opts) = a.conn.resolve()?;
    let progress = Progress::new(&files, true);
    let read = inputs.requests(&files, &progress, false);
    drop(progress);
    let mut code = if read.unreadable.is_empty() { 0u8 } else { 2 };
    let mut planned: Vec<(String, ExecutorKey, Prepared)> = Vec::new();
    for r in &read.requests {
        match prepare(&r.message, &r.bytes, &target, &opts) {
            Ok(p) => planned.push((r.label.clone(), ExecutorKey::of(&r.message), p)),
            Err(e) => {
                report_error(&in_file(&r.label, e));
                code = 2;
            }
        }
    }
    if planned.is_empty() {
        return Err(Failure::msg("no request to send"));
    }
    // The first file of each key: request i < FILES of that file is the key's first call.
    let mut seen = std::collections::HashSet::new();
    let first_of_key: Vec<bool> = planned.iter().map(|(_, k, _)| seen.insert(k)).collect();
    let schedule = Schedule::new(a.rate);
    let total = match (a.requests, a.duration) {
        (Some(n), _) => n,
        (None, Some(d)) => schedule.count_within(d).unwrap_or(u64::MAX),
        (None, None) => DEFAULT_REQUESTS,
    };
    let concurrency = usize::try_from(a.concurrency).unwrap_or(1).max(1);
    let workers = u64::try_from(concurrency).unwrap_or(1).min(total) as usize;
    // Closed loop: one client, its connection shared by the workers; open loop: one
    // client a worker thread.
    let connections = if a.rate.is_none() { 1 } else { workers.max(1) };
    let mut clients = (0..connections)
        .map(|_| a.conn.connect())
        .collect::<Result<Vec<Client>, _>>()?;
    for c in &mut clients {
        c.ready();
    }
    let report = drive(
        &a,
        &mut clients,
        &planned,
        &first_of_key,
        schedule,
        total,
        target.protocol(),
    );
    if let Some(path) = &a.html {
        let page = html(&report);
        crate::output::write_atomic(path, page.as_bytes())
            .map_err(|e| in_file(&path.display().to_string(), e))?;
    }
    let mut out = stdout();
    match a.format {
        LoadFormat::Json => {
            tfreq::escape::json_write(&mut out, &report, true)?;
            writeln!(out)?;
        }
        LoadFormat::Human => write_human(&mut out, &report)?,
    }
    out.flush()?;
    if report.errors_total > 0 {
        code = code.max(1);
    }
    Ok(code)
}

/// What one worker measured; the workers' tallies are added up at the end (no
/// message between threads per call: a wake-up of another thread for every call would
/// cost more CPU than the call itself).
#[derive(Default)]
struct Tally {
    latencies: Latencies,
    errors: BTreeMap<String, Errors>,
    firsts: Vec<(u64, First)>,
    points: Vec<(f32, f32)>,
    sent: u64,
    answers: u64,
    errors_total: u64,
    first_sent: Option<Duration>,
    last_sent: Duration,
    last_end: Duration,
}

impl Tally {
    /// Counts one call. `is_first`: the first call of its key; `label` and `key` name
    /// it; at most `max_points` points are kept for the plot.
    fn add(&mut self, r: Record, first: Option<(&str, &ExecutorKey)>, max_points: usize) {
        self.sent += 1;
        self.first_sent = Some(self.first_sent.map_or(r.sent, |f| f.min(r.sent)));
        self.last_sent = self.last_sent.max(r.sent);
        self.last_end = self.last_end.max(r.due + r.latency);
        if self.points.len() < max_points {
            self.points.push((
                r.due.as_secs_f32(),
                (r.latency.as_secs_f64() * 1000.0) as f32,
            ));
        }
        let error = match &r.result {
            Ok(()) => {
                self.answers += 1;
                if first.is_none() {
                    self.latencies.record(r.latency);
                }
                None
            }
            Err(e) => {
                self.errors_total += 1;
                let entry = self.errors.entry(status_of(e)).or_insert_with(|| Errors {
                    count: 0,
                    example: e.to_string(),
                });
                entry.count += 1;
                Some(e.to_string())
            }
        };
        if let Some((label, key)) = first {
            self.firsts.push((
                r.i,
                First {
                    key: key.to_string(),
                    request: label.to_string(),
                    latency_ms: r.latency.as_secs_f64() * 1000.0,
                    error,
                },
            ));
        }
    }

    /// Adds another worker's tally.
    fn merge(&mut self, o: Tally) {
        self.latencies.merge(&o.latencies);
        for (status, e) in o.errors {
            // The first example kept is the one of the worker merged first: any of them
            // shows what the status means.
            self.errors
                .entry(status)
                .and_modify(|mine| mine.count += e.count)
                .or_insert(e);
        }
        self.firsts.extend(o.firsts);
        self.points.extend(o.points);
        self.sent += o.sent;
        self.answers += o.answers;
        self.errors_total += o.errors_total;
        self.first_sent = match (self.first_sent, o.first_sent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_sent = self.last_sent.max(o.last_sent);
        self.last_end = self.last_end.max(o.last_end);
    }
}

/// A flag the first Ctrl-C (SIGINT) sets: the run then starts no further request, waits
/// for the calls under way and reports what it measured, as hey does. A second Ctrl-C
/// ends the process at once (exit 130).
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    if crate::process::handlers() {
        use signal_hook::consts::SIGINT;
        // Registered first, so it sees the flag before the first Ctrl-C sets it.
        let _ = signal_hook::flag::register_conditional_shutdown(SIGINT, 130, Arc::clone(&flag));
        let _ = signal_hook::flag::register(SIGINT, Arc::clone(&flag));
    }
    flag
}

/// What every worker of a run shares: the requests, when to stop, and how one call is
/// counted.
struct Run<'a> {
    planned: &'a [(String, ExecutorKey, Prepared)],
    first_of_key: &'a [bool],
    schedule: Schedule,
    total: u64,
    next: AtomicU64,
    stop: Arc<AtomicBool>,
    start: Instant,
    stop_at: Option<Instant>,
    max_points: usize,
}

impl Run<'_> {
    /// The number of the next request to send and when it is due (open loop), or none
    /// when the run is over (all sent, past `--duration`, Ctrl-C).
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
        &self.planned[self.file(i)].2
    }

    fn file(&self, i: u64) -> usize {
        // `i % n` is below the number of files, so it fits a usize.
        (i % self.planned.len() as u64) as usize
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
        let rec = Record {
            i,
            sent: at - self.start,
            due: due - self.start,
            latency: end - due,
            result,
        };
        let file = self.file(i);
        let first = (i < self.planned.len() as u64 && self.first_of_key[file])
            .then(|| (self.planned[file].0.as_str(), &self.planned[file].1));
        t.add(rec, first, self.max_points);
    }
}

/// Sends the run's requests and gathers what they measured: closed loop (no `--rate`)
/// as futures on the client's one thread, their calls sharing its connection (gRPC) or
/// pool (HTTP), which costs the least CPU a call and lets the server read many calls at
/// once; open loop as one thread a worker, each with its own client, each sleeping to the
/// microsecond until its request is due (the runtime's timer counts in milliseconds,
/// which would add up to a millisecond to each latency).
fn drive(
    a: &Args,
    clients: &mut [Client],
    planned: &[(String, ExecutorKey, Prepared)],
    first_of_key: &[bool],
    schedule: Schedule,
    total: u64,
    protocol: Protocol,
) -> Report {
    let start = Instant::now();
    let run = Run {
        planned,
        first_of_key,
        schedule,
        total,
        next: AtomicU64::new(0),
        stop: interrupt_flag(),
        start,
        stop_at: a.duration.and_then(|d| start.checked_add(d)),
        max_points: MAX_POINTS / (a.concurrency.max(1) as usize),
    };
    let t = if a.rate.is_none() {
        together(&run, &clients[0], clients_workers(a, total))
    } else {
        threads(&run, clients)
    };
    report(a, t, schedule, protocol, run.stop.load(Ordering::Relaxed))
}

/// How many calls are under way at once: `--concurrency`, at most the run's requests.
fn clients_workers(a: &Args, total: u64) -> usize {
    u64::from(a.concurrency).clamp(1, total.max(1)) as usize
}

/// Closed loop: `workers` futures on the client's runtime.
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

/// Open loop: a thread and a client a worker.
fn threads(run: &Run<'_>, clients: &mut [Client]) -> Tally {
    let mut t = Tally::default();
    std::thread::scope(|s| {
        let running: Vec<_> = clients
            .iter_mut()
            .map(|c| {
                s.spawn(move || {
                    let mut t = Tally::default();
                    while let Some((i, due)) = run.take() {
                        if let Some(due) = due {
                            if !sleep_until(due, &run.stop) {
                                break;
                            }
                        }
                        let at = Instant::now();
                        let result = c.call_counted(run.request(i)).map(drop);
                        run.count(&mut t, i, due, at, result);
                    }
                    t
                })
            })
            .collect();
        for h in running {
            match h.join() {
                Ok(w) => t.merge(w),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
    });
    t
}

/// Sleeps until `due`, in steps of at most 50 ms so that Ctrl-C is seen at a low rate;
/// false when Ctrl-C came first.
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

/// The report of a run from the workers' merged tally.
fn report(
    a: &Args,
    mut t: Tally,
    schedule: Schedule,
    protocol: Protocol,
    interrupted: bool,
) -> Report {
    t.firsts.sort_by_key(|(i, _)| *i);
    t.points
        .sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap_or(std::cmp::Ordering::Equal));
    let elapsed = t.last_end.as_secs_f64();
    let per_s = |count: u64, secs: f64| if secs > 0.0 { count as f64 / secs } else { 0.0 };
    let span = t
        .first_sent
        .map_or(0.0, |f| (t.last_sent - f).as_secs_f64());
    Report {
        to: a.conn.to.clone(),
        protocol,
        concurrency: a.concurrency,
        rate: schedule.rate(),
        interrupted,
        requests: t.sent,
        answers: t.answers,
        errors_total: t.errors_total,
        elapsed_s: elapsed,
        throughput_per_s: per_s(t.sent, elapsed),
        send_rate_per_s: per_s(t.sent.saturating_sub(1), span),
        errors: t.errors,
        latency_ms: t.latencies.summary(),
        histogram: t.latencies.bins(12),
        curve: t.latencies.curve(),
        first_calls: t.firsts.into_iter().map(|(_, f)| f).collect(),
        points: t.points,
    }
}

fn write_human(out: &mut dyn Write, r: &Report) -> std::io::Result<()> {
    let mode = match r.rate {
        Some(rate) => format!("open loop at {}/s", trim(rate)),
        None => "closed loop".to_string(),
    };
    writeln!(
        out,
        "load: {} requests to {} ({}), {} at once, {mode}",
        r.requests,
        tfreq::escape::sanitize(&r.to),
        r.protocol,
        r.concurrency
    )?;
    writeln!(
        out,
        "  elapsed {:.3} s, throughput {:.1}/s, sent at {:.1}/s",
        r.elapsed_s, r.throughput_per_s, r.send_rate_per_s
    )?;
    writeln!(out, "  answers {}, errors {}", r.answers, r.errors_total)?;
    if r.interrupted {
        writeln!(out, "  interrupted (Ctrl-C): no request started after it")?;
    }
    for (status, e) in &r.errors {
        writeln!(
            out,
            "  {}: {} (first: {})",
            tfreq::escape::sanitize(status),
            e.count,
            tfreq::escape::sanitize(&e.example)
        )?;
    }
    let p = &r.latency_ms;
    writeln!(
        out,
        "\nlatency of {} answers (ms, the first call of each key left out):",
        p.count
    )?;
    if p.count > 0 {
        writeln!(
            out,
            "  min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            m(p.min_ms),
            m(p.mean_ms),
            m(p.p50_ms),
            m(p.p90_ms),
            m(p.p99_ms),
            m(p.p999_ms),
            m(p.max_ms)
        )?;
        writeln!(out, "  histogram (each bin: latencies up to its bound):")?;
        let most = r.histogram.iter().map(|b| b.count).max().unwrap_or(0);
        let width = r
            .histogram
            .iter()
            .map(|b| b.count.to_string().len())
            .max()
            .unwrap_or(1);
        for b in &r.histogram {
            writeln!(
                out,
                "  {:>12} ms [{:>width$}] {}",
                m(b.to_ms),
                b.count,
                bar(b.count, most, 40)
            )?;
        }
    }
    if !r.first_calls.is_empty() {
        writeln!(out, "\nfirst call of each executor key:")?;
        for f in &r.first_calls {
            let what = match &f.error {
                None => format!("{} ms", m(f.latency_ms)),
                Some(e) => format!("failed: {}", tfreq::escape::sanitize(e)),
            };
            writeln!(
                out,
                "  {what}  {}  ({})",
                tfreq::escape::sanitize(&f.key),
                tfreq::escape::sanitize(&f.request)
            )?;
        }
    }
    Ok(())
}

/// Milliseconds with three decimals.
fn m(ms: f64) -> String {
    format!("{ms:.3}")
}

/// A number without a needless `.0`.
fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Text for HTML and SVG: shown safe ([`tfreq::escape`]), then `&`, `<`, `>`, `"` and
/// `'` as character references, so the page is well-formed XML as well as HTML.
fn x(s: &str) -> String {
    tfreq::escape::sanitize(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The plot's width and height, and its margin for the axes' labels.
const W: f64 = 640.0;
const H: f64 = 320.0;
const MARGIN: f64 = 56.0;

/// x of a percentile on the HdrHistogram plots' scale: log10 of 1 / (1 - p), so
/// 90, 99, 99.9 and 99.99 % are evenly spaced (100 % drawn at 99.999 %).
fn nines(p: f64) -> f64 {
    let q = (1.0 - p / 100.0).max(1e-5);
    (1.0 / q).log10()
}

/// The report as a self-contained page: the numbers, an SVG plot of latency by
/// percentile (a circle a point, its values in `data-percentile` and
/// `data-latency-ms`), and one of latency over the run.
fn html(r: &Report) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    s.push_str(&format!("<title>tfreq load: {}</title>\n", x(&r.to)));
    s.push_str("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}svg{background:#fff;border:1px solid #ccc}.grid{stroke:#ddd}.line{fill:none;stroke:#1f77b4;stroke-width:2}.dot{fill:#1f77b4}.pt{fill:#d62728;fill-opacity:0.5}</style>\n</head>\n<body>\n");
    s.push_str(&format!(
        "<h1>tfreq load</h1>\n<p>{} requests to <code>{}</code> ({}), {} at once, {}; elapsed {:.3} s, throughput {:.1}/s, sent at {:.1}/s; answers {}, errors {}.</p>\n",
        r.requests,
        x(&r.to),
        r.protocol,
        r.concurrency,
        match r.rate {
            Some(v) => format!("open loop at {}/s", trim(v)),
            None => "closed loop".into(),
        },
        r.elapsed_s,
        r.throughput_per_s,
        r.send_rate_per_s,
        r.answers,
        r.errors_total
    ));
    let p = &r.latency_ms;
    s.push_str("<h2>Latency (ms), the first call of each key left out</h2>\n<table>\n<tr><th>answers</th><th>min</th><th>mean</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>\n");
    s.push_str(&format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n</table>\n",
        p.count,
        m(p.min_ms),
        m(p.mean_ms),
        m(p.p50_ms),
        m(p.p90_ms),
        m(p.p99_ms),
        m(p.p999_ms),
        m(p.max_ms)
    ));
    s.push_str(&curve_svg(&r.curve));
    s.push_str("<h2>Latency over the run</h2>\n");
    s.push_str(&time_svg(&r.points));
    if !r.errors.is_empty() {
        s.push_str(
            "<h2>Errors</h2>\n<table>\n<tr><th>status</th><th>count</th><th>first</th></tr>\n",
        );
        for (status, e) in &r.errors {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td style=\"text-align:left\">{}</td></tr>\n",
                x(status),
                e.count,
                x(&e.example)
            ));
        }
        s.push_str("</table>\n");
    }
    if !r.first_calls.is_empty() {
        s.push_str("<h2>First call of each executor key</h2>\n<table>\n<tr><th>ms</th><th>key</th><th>request</th></tr>\n");
        for f in &r.first_calls {
            let v = match &f.error {
                None => m(f.latency_ms),
                Some(e) => format!("failed: {}", e),
            };
            s.push_str(&format!(
                "<tr><td>{}</td><td style=\"text-align:left\">{}</td><td style=\"text-align:left\">{}</td></tr>\n",
                x(&v),
                x(&f.key),
                x(&f.request)
            ));
        }
        s.push_str("</table>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// The latency-by-percentile plot.
fn curve_svg(curve: &[CurvePoint]) -> String {
    let mut s = format!(
        "<h2>Latency by percentile</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"curve\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">\n"
    );
    let top = curve.iter().map(|c| c.latency_ms).fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.05 } else { 1.0 };
    let x_max = nines(100.0);
    let px = |p: f64| MARGIN + (W - 2.0 * MARGIN) * nines(p) / x_max;
    let py = |v: f64| H - MARGIN - (H - 2.0 * MARGIN) * v / top;
    for (p, label) in [
        (0.0, "0%"),
        (90.0, "90%"),
        (99.0, "99%"),
        (99.9, "99.9%"),
        (99.99, "99.99%"),
        (100.0, "100%"),
    ] {
        let xx = px(p);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{xx:.1}\" y1=\"{:.1}\" x2=\"{xx:.1}\" y2=\"{:.1}\"/><text x=\"{xx:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{label}</text>\n",
            MARGIN,
            H - MARGIN,
            H - MARGIN + 16.0
        ));
    }
    for k in 0..=4 {
        let v = top * f64::from(k) / 4.0;
        let yy = py(v);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{MARGIN}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{v:.3}</text>\n",
            W - MARGIN,
            MARGIN - 4.0,
            yy + 4.0
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">percentile</text><text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">latency (ms)</text>\n",
        W / 2.0,
        H - 12.0,
        H / 2.0,
        H / 2.0
    ));
    let pts: Vec<String> = curve
        .iter()
        .map(|c| format!("{:.1},{:.1}", px(c.percentile), py(c.latency_ms)))
        .collect();
    s.push_str(&format!(
        "<polyline class=\"line\" points=\"{}\"/>\n",
        pts.join(" ")
    ));
    for c in curve {
        s.push_str(&format!(
            "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" data-percentile=\"{}\" data-latency-ms=\"{}\"><title>p{}: {} ms</title></circle>\n",
            px(c.percentile),
            py(c.latency_ms),
            c.percentile,
            c.latency_ms,
            c.percentile,
            m(c.latency_ms)
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// The latency of every request (up to [`MAX_POINTS`]) by its scheduled send time.
fn time_svg(points: &[(f32, f32)]) -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"over-time\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">\n"
    );
    let t_max = points
        .iter()
        .map(|p| f64::from(p.0))
        .fold(0.0, f64::max)
        .max(1e-3);
    let v_max = points
        .iter()
        .map(|p| f64::from(p.1))
        .fold(0.0, f64::max)
        .max(1e-3)
        * 1.05;
    let px = |t: f64| MARGIN + (W - 2.0 * MARGIN) * t / t_max;
    let py = |v: f64| H - MARGIN - (H - 2.0 * MARGIN) * v / v_max;
    for k in 0..=4 {
        let v = v_max * f64::from(k) / 4.0;
        let t = t_max * f64::from(k) / 4.0;
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{MARGIN}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{v:.3}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{t:.2} s</text>\n",
            py(v),
            W - MARGIN,
            py(v),
            MARGIN - 4.0,
            py(v) + 4.0,
            px(t),
            H - MARGIN + 16.0
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">scheduled send time (s)</text><text x=\"14\" y=\"{:.1}\" font-size=\"12\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">latency (ms)</text>\n",
        W / 2.0,
        H - 12.0,
        H / 2.0,
        H / 2.0
    ));
    // One path of tiny squares: small enough for 100 000 points.
    let mut d = String::with_capacity(points.len() * 20);
    for &(t, v) in points {
        d.push_str(&format!(
            "M{:.1} {:.1}h2v2h-2z",
            px(f64::from(t)),
            py(f64::from(v))
        ));
    }
    s.push_str(&format!("<path class=\"pt\" d=\"{d}\"/>\n</svg>\n"));
    s
}
