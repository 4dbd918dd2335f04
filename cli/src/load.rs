//! `tfreq load FILE... --to URL [--concurrency N] [--rate R/s] [--duration 30s |
//! --requests N] [--format human|json] [--html report.html]`: a load generator in the
//! manner of hey (<https://github.com/rakyll/hey>) and ghz (<https://ghz.sh>) for EAS,
//! TF Serving gRPC and REST.
//!
//! The engine is the library's ([`tfreq::net::Load`]), the report its
//! ([`tfreq::analysis::LoadReport`]), written by [`tfreq::render::write_load`]; here are
//! the arguments, the Ctrl-C flag and the output files.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tfreq::analysis::ExecutorKey;
use tfreq::analysis::{parse_duration, parse_rate};
use tfreq::net::{Client, prepare};
use tfreq::net::{Load, LoadRequest};

use crate::common::{Failure, Outcome, Progress, in_file, report_error, stdout};
use crate::input::{InputArgs, Inputs};
use crate::live::Conn;

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

pub fn run(a: Args) -> Outcome {
    let inputs = Inputs::new(&a.input, None);
    let files = inputs.expand(&a.files)?;
    crate::common::stdin_at_most_once(files.iter().map(PathBuf::as_path))?;
    let (target, opts) = a.conn.resolve()?;
    let progress = Progress::new(&files, true);
    let read = inputs.requests(&files, &progress, false);
    drop(progress);
    let mut code = if read.unreadable.is_empty() { 0u8 } else { 2 };
    let mut planned: Vec<LoadRequest> = Vec::new();
    for r in &read.requests {
        match prepare(&r.message, &r.bytes, &target, &opts) {
            Ok(p) => planned.push(LoadRequest {
                label: r.label.clone(),
                key: ExecutorKey::of(&r.message),
                request: p,
            }),
            Err(e) => {
                report_error(&in_file(&r.label, e));
                code = 2;
            }
        }
    }
    if planned.is_empty() {
        return Err(Failure::msg("no request to send"));
    }
    let load = Load {
        to: a.conn.to.clone(),
        concurrency: a.concurrency,
        rate: a.rate,
        requests: a.requests,
        duration: a.duration,
    };
    let mut clients = (0..load.connections())
        .map(|_| a.conn.connect())
        .collect::<Result<Vec<Client>, _>>()?;
    for c in &mut clients {
        c.ready();
    }
    let report = load.run(&mut clients, &planned, &interrupt_flag());
    if let Some(path) = &a.html {
        let page = tfreq::render::load_html(&report);
        crate::output::write_atomic(path, page.as_bytes())
            .map_err(|e| in_file(&path.display().to_string(), e))?;
    }
    let mut out = stdout();
    match a.format {
        LoadFormat::Json => {
            tfreq::json_write(&mut out, &report, true)?;
            writeln!(out)?;
        }
        LoadFormat::Human => tfreq::render::write_load(&mut out, &report)?,
    }
    out.flush()?;
    if report.errors_total > 0 {
        code = code.max(1);
    }
    Ok(code)
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
