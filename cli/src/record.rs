//! `tfreq record --listen ADDR --to URL -o WARMUP [--max-records N] [--by executor|shape|batch]
//! [--scrub [FILL]]`: a transparent proxy that records one request per key into a warm-up
//! file (src/net/record/).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tfreq::analysis::By;
use tfreq::analysis::parse_duration;
use tfreq::formats::Layout;
use tfreq::net::{self, Counters, Events, ProxyOptions, RecordOptions, Recorder, Wire};

use crate::args::{Fill, PlainFormat, parse_fill};
use crate::common::{Failure, Outcome, stdout};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ByArg {
    /// One request per executor key (signature, feed and fetch sets).
    Key,
    /// One request per shape key (the executor key and every feed's dtype and shape).
    Shape,
    /// One request per executor key and batch size (the feeds' common 0th dimension; a
    /// request without one, per shape key).
    Batch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum WireArg {
    /// A bare EAS request when every request recorded is an EAS one, else a TFRecord.
    Auto,
    /// A TFRecord of PredictionLogs (TF Serving's warm-up).
    Tfrecord,
    /// One bare EAS request, the most frequent key's (the EAS processor's warm-up).
    Eas,
}

#[derive(clap::Args)]
#[command(
    after_help = "Clients send to --listen instead of the service: EAS (POST of a PredictRequest), \
TF Serving REST (/v1/models/NAME...) and TF Serving gRPC (cleartext HTTP/2) on the same port. \
Every request and answer passes through unchanged. Only the request messages are recorded: no \
header (Authorization, EAS tokens) and no answer. The file is rewritten (atomically) whenever a \
new key is recorded, so stopping at any time leaves a valid warm-up. Ctrl-C or SIGTERM stops \
cleanly: no new connection is taken, the answers under way are passed on (for at most 30 s), \
the file is written and the summary printed (`tfreq keys`' format). A second Ctrl-C or SIGTERM \
stops waiting for answers (the file is still written whole and the summary printed); a third \
ends the process at once, leaving the last file written."
)]
pub struct Args {
    /// The address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The service: http://HOST:PORT (EAS, TF Serving REST) or grpc://HOST:PORT (TF
    /// Serving gRPC); https:// and grpcs:// over TLS.
    #[arg(long, value_name = "URL")]
    to: String,
    /// Trust the CA certificates of this PEM file (at most 1 MiB) for an https:// or
    /// grpcs:// service (a private CA's), instead of the usual public roots.
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// The warm-up file written.
    #[arg(long, short = 'o')]
    output: PathBuf,
    /// The most requests recorded (TF Serving's warm-up runs at most 1000).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1000))]
    max_records: u64,
    /// What counts as one key.
    #[arg(long, value_enum, default_value_t = ByArg::Key)]
    by: ByArg,
    /// Replace the recorded values as `tfreq scrub` does: zeros (the default when no
    /// value is given), constant=V, or random (with --seed).
    #[arg(long, value_name = "FILL", num_args = 0..=1, default_missing_value = "zeros", value_parser = parse_fill)]
    scrub: Option<Fill>,
    /// Seed for --scrub random.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output layout.
    #[arg(long, value_enum, default_value_t = WireArg::Auto)]
    wire: WireArg,
    /// The model to record: only its requests (and those naming none, as EAS requests) are
    /// kept, and it is the model_spec.name of requests that name none, in a TFRecord.
    /// Without it, the first model a request names is recorded, and other models'
    /// requests are passed through and named as not recorded (a warm-up file belongs to
    /// one model).
    #[arg(long)]
    model_name: Option<String>,
    /// The model giving REST JSON inputs their dtypes (SavedModel directory, metadata
    /// JSON...). Without it each REST model's metadata is asked from the service.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Requests larger than this are passed through but not recorded: bytes, or a
    /// number with K, M or G.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = crate::input::parse_size)]
    max_size: u64,
    /// The most request bytes held at once across all connections; past it requests
    /// are passed on as they come, not recorded: bytes, or a number with K, M or G.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::input::parse_size)]
    max_inflight: u64,
    /// The most client connections served at once; past it new ones wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// How long a client may take to send a request's headers (and a kept-alive
    /// connection may wait for its next request): 30s, 500ms, 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    header_timeout: Duration,
    /// A connection with no byte either way for this long, while no answer is awaited
    /// from the service, is closed.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// How many REST models' metadata is asked for and kept (the first seen); a later
    /// model's requests are passed through, not recorded.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_models: u64,
    /// Stop after this many answers (for tests and scripts).
    #[arg(long, value_name = "N")]
    max_requests: Option<u64>,
    /// Stop after this long: 30s, 500ms, 2m, 1h.
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// The summary's format: human, or json (`tfreq keys --format json`'s summary of the
    /// traffic, which `keys merge` takes; what was recorded then goes to stderr).
    #[arg(long, short = 'f', value_enum, default_value_t = PlainFormat::Human)]
    format: PlainFormat,
}

/// How long a clean stop waits for the answers under way.
const DRAIN: Duration = Duration::from_secs(30);

/// Counts SIGINT and SIGTERM: the first starts a clean stop, the second ends the wait
/// for answers under way. Neither ends the process: the file is always written whole
/// and the summary printed (cli/src/output.rs ends it on a third).
fn signal_count() -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    #[cfg(unix)]
    if crate::process::handlers() {
        use signal_hook::consts::{SIGINT, SIGTERM};
        for sig in [SIGINT, SIGTERM] {
            let c = Arc::clone(&count);
            // SAFETY: the action is one atomic add, which is async-signal-safe.
            let _ = unsafe {
                signal_hook::low_level::register(sig, move || {
                    c.fetch_add(1, Ordering::SeqCst);
                })
            };
        }
    }
    count
}

pub fn run(a: Args) -> Outcome {
    net::check_upstream(&a.to)?;
    let rest_dtypes = crate::common::rest_dtypes(a.model.as_deref(), &[])?;
    let opts = RecordOptions {
        by: match a.by {
            ByArg::Key => By::Executor,
            ByArg::Shape => By::Shape,
            ByArg::Batch => By::Batch,
        },
        max_records: a.max_records as usize,
        scrub: a.scrub.map(|f| f.mode(a.seed)),
        model_name: a.model_name.clone(),
        wire: match a.wire {
            WireArg::Auto => Wire::Auto,
            WireArg::Tfrecord => Wire::TfRecord,
            WireArg::Eas => Wire::Eas,
        },
        rest_dtypes,
        max_models: a.max_models as usize,
    };
    let proxy = ProxyOptions {
        upstream: a.to.clone(),
        max_size: a.max_size,
        fetch_metadata: a.model.is_none(),
        ca_cert: crate::live::read_cacert(a.cacert.as_deref())?,
        max_inflight: a.max_inflight,
        max_connections: a.max_connections as usize,
        header_timeout: a.header_timeout,
        idle_timeout: a.idle_timeout,
        max_models: a.max_models as usize,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::msg(format!("cannot start the I/O runtime: {e}")))?;
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(a.listen))
        .map_err(|e| Failure::msg(format!("cannot listen on {}: {e}", a.listen)))?;
    let local = listener.local_addr()?;
    // The recorder ends the process itself on a signal (after its last write), so the
    // atomic writer's cleanup must not end it first.
    let signals = signal_count();
    crate::output::defer_signals();
    let quiet = crate::common::quiet();
    if !a.listen.ip().is_loopback() {
        let _ = writeln!(
            anstream::stderr(),
            "tfreq: warning: listening on {local}, not a loopback address: anyone who can reach it can send through the proxy to {}",
            tfreq::sanitize(&a.to)
        );
    }
    if !quiet {
        let _ = writeln!(
            anstream::stderr(),
            "tfreq: listening on {local}, forwarding to {}, recording into {} (Ctrl-C to stop)",
            tfreq::sanitize(&a.to),
            a.output.display()
        );
    }
    let events = Events::new();
    let rx = events.clone();
    let out = a.output.clone();
    let save_failed = Arc::new(AtomicBool::new(false));
    let failed = save_failed.clone();
    let recorder = std::thread::Builder::new()
        .name("tfreq-recorder".into())
        .spawn(move || {
            net::run_recorder(Recorder::new(opts), rx, |r| {
                save(r, &out, &failed);
            })
        })?;
    let counters = Counters::default();
    let answered: Arc<AtomicU64> = counters.answered.clone();
    let start = Instant::now();
    let (max_requests, duration) = (a.max_requests, a.duration);
    let stop_signals = signals.clone();
    let stop = async move {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if stop_signals.load(Ordering::SeqCst) > 0
                || max_requests.is_some_and(|n| answered.load(Ordering::SeqCst) >= n)
                || duration.is_some_and(|d| start.elapsed() >= d)
            {
                return;
            }
        }
    };
    // Once stopping (this starts then): the drain's end, or a second signal (the first
    // when the stop came from --max-requests or --duration).
    let hurry = async move {
        let drain_end = Instant::now() + DRAIN;
        let enough = if signals.load(Ordering::SeqCst) == 0 {
            1
        } else {
            2
        };
        while signals.load(Ordering::SeqCst) < enough && Instant::now() < drain_end {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let served = rt.block_on(net::serve(
        listener,
        proxy,
        events.clone(),
        counters,
        stop,
        hurry,
    ));
    // Dropping the runtime drops every connection (a request body that ended is queued
    // as it is dropped); then the recorder takes what is queued and returns.
    rt.shutdown_timeout(Duration::from_secs(1));
    events.close();
    let mut rec = recorder
        .join()
        .map_err(|_| Failure::msg("the recorder thread failed"))?;
    served?;
    rec.finish();
    if rec.recorded() > 0 {
        save(&rec, &a.output, &save_failed);
    }
    summary(&rec, &a)?;
    if save_failed.load(Ordering::SeqCst) {
        return Ok(2);
    }
    Ok(if rec.recorded() == 0 { 1 } else { 0 })
}

/// Writes the recorder's file atomically; a failure is reported (once per message) and
/// remembered.
fn save(r: &Recorder, out: &std::path::Path, failed: &AtomicBool) {
    let res = r
        .file()
        .map_err(Failure::from)
        .and_then(|data| Ok(crate::output::write_atomic(out, &data)?));
    if let Err(e) = res {
        if !failed.swap(true, Ordering::SeqCst) {
            crate::common::report_error(&crate::common::in_file(&out.display().to_string(), e));
        }
    } else {
        failed.store(false, Ordering::SeqCst);
    }
}

fn summary(rec: &Recorder, a: &Args) -> Outcome {
    let per = match a.by {
        ByArg::Key => "executor key",
        ByArg::Shape => "shape key",
        ByArg::Batch => "executor key and batch size",
    };
    let layout = match rec.layout() {
        Layout::Eas => "a bare EAS request, the most frequent key's",
        _ => "a TFRecord of PredictionLogs",
    };
    let mut lines = Vec::new();
    if rec.recorded() == 0 {
        lines.push(format!(
            "recorded nothing; {} not written",
            a.output.display()
        ));
    } else {
        lines.push(format!(
            "recorded {} (one per {per}{}) in {} ({layout})",
            crate::common::count(rec.recorded() as u64, "request"),
            if a.scrub.is_some() { ", scrubbed" } else { "" },
            a.output.display()
        ));
        if rec.layout() == Layout::Eas && rec.recorded() > 1 {
            lines.push(format!(
                "  {} keys seen; a bare EAS file holds one: --wire tfrecord keeps them all",
                rec.recorded()
            ));
        }
    }
    for (why, (n, names)) in rec.not_recorded() {
        lines.push(format!(
            "not recorded: {}, {why}",
            crate::common::count(*n, "request")
        ));
        for name in names {
            lines.push(format!("  {}", tfreq::sanitize(name)));
        }
    }
    let mut out = stdout();
    match a.format {
        PlainFormat::Human => {
            tfreq::render::write_coverage(&mut out, rec.counts(), tfreq::render::Color::Always)?;
            writeln!(out)?;
            for l in &lines {
                writeln!(out, "{l}")?;
            }
        }
        PlainFormat::Json => {
            let summary = tfreq::analysis::Summary::of(rec.counts());
            tfreq::render::write_summary_json(&mut out, &summary)?;
            writeln!(out)?;
            if !crate::common::quiet() {
                let mut err = anstream::stderr();
                for l in &lines {
                    let _ = writeln!(err, "tfreq: {l}");
                }
            }
        }
    }
    out.flush()?;
    Ok(0)
}
