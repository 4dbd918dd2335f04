//! `tfreq replay WARMUP [PROD...] --to URL [--count N]`: does the warm-up warm?
//! Measured: each warm-up request N times, then each production request twice; a
//! production request whose first call is much slower than its second was cold after
//! the warm-up ran (a new executor). Shown beside `diff`'s static verdict for it.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use tfreq::analysis::{Code, Finding, Severity};
use tfreq::analysis::{ColdRule, Timing, ms};
use tfreq::analysis::{DiffOptions, diff_labeled};
use tfreq::analysis::{Labeled, Verdict};
use tfreq::net::{NetError, prepare};
use tfreq::render;

use crate::args::PlainFormat as Format;
use crate::common::{Failure, Outcome, Progress, in_file, stdout};
use crate::input::{InputArgs, Inputs, Loaded as Req};
use crate::live::{Conn, fatal};

#[derive(clap::Args)]
pub struct Args {
    /// The warm-up file (one or more requests: EAS warm_up.bin, TFRecord, text format);
    /// at most 1000 records, as TF Serving's warm-up loader reads (refused before
    /// anything is sent).
    warmup: PathBuf,
    /// Production request files.
    prod: Vec<PathBuf>,
    #[command(flatten)]
    conn: Conn,
    /// Calls per warm-up request (EAS's warm_up_count).
    #[arg(long, default_value_t = 5, value_name = "N")]
    count: u32,
    /// Calls per production request (the first is compared with the later ones).
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    prod_count: u32,
    /// A first call is cold when it takes more than this many times the later calls' median
    /// (a finite number, at least 1)...
    #[arg(long, default_value_t = ColdRule::default().factor, value_name = "X", value_parser = parse_factor, allow_negative_numbers = true)]
    cold_factor: f64,
    /// ...and more than this many milliseconds longer (a finite number from 0 to
    /// 86400000, 24 hours).
    #[arg(long, default_value_t = ColdRule::default().min_gap_ms, value_name = "MS", value_parser = parse_gap_ms, allow_negative_numbers = true)]
    cold_ms: f64,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
}

/// `--cold-factor`: a finite number, at least 1 (a first call faster than the later ones
/// is never cold); `nan` would make every comparison false, every request warm.
fn parse_factor(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 1.0 => Ok(v),
        _ => Err(format!("{s:?}: expected a finite number, at least 1")),
    }
}

/// `--cold-ms`: a finite number of milliseconds from 0 to 24 hours (the longest
/// `--timeout`, so the longest a call can take).
fn parse_gap_ms(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400_000.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?}: expected a finite number of milliseconds from 0 to 86400000"
        )),
    }
}

/// One request's measurement.
#[derive(Serialize)]
struct Row {
    request: String,
    /// Latencies of every call, in milliseconds.
    #[serde(flatten)]
    timing: Timing,
    first_ms: Option<f64>,
    later_median_ms: Option<f64>,
    /// Measured: cold (first call slow) or warm; None when a call was refused.
    cold: Option<bool>,
    /// `diff`'s verdict for a production request.
    #[serde(skip_serializing_if = "Option::is_none")]
    static_verdict: Option<Verdict>,
    findings: Vec<Finding>,
}

#[derive(Serialize)]
struct ReplayReport {
    to: String,
    protocol: tfreq::net::Protocol,
    rule: ColdRule,
    warmup: Vec<Row>,
    production: Vec<Row>,
    /// Production requests measured cold after the warm-up.
    cold: usize,
    calls: u64,
    seconds: f64,
    calls_per_second: f64,
}

pub fn run(a: Args) -> Outcome {
    crate::common::stdin_at_most_once(
        std::iter::once(a.warmup.as_path()).chain(a.prod.iter().map(PathBuf::as_path)),
    )?;
    let rule = ColdRule {
        factor: a.cold_factor,
        min_gap_ms: a.cold_ms,
    };
    let inputs = Inputs::new(&a.input, None);
    let prod_files = inputs.expand(&a.prod)?;
    let progress = Progress::new(&prod_files, true);
    // Without the warm-up there is nothing to replay: that one is fatal.
    let warm = inputs.warmup(&a.warmup, &progress)?.requests;
    refuse_too_many_records(&a.warmup, warm.len())?;
    // A production file that cannot be read is reported in its place; the others run.
    let read = inputs.requests(&prod_files, &progress, false);
    drop(progress);
    let unreadable = !read.unreadable.is_empty();
    let prod = read.requests;
    let mut client = a.conn.connect()?;
    let target = client.target().clone();
    let opts = client.options().clone();
    let prep =
        |r: &Req| prepare(&r.message, &r.bytes, &target, &opts).map_err(|e| in_file(&r.label, e));
    let wp: Vec<_> = warm.iter().map(prep).collect::<Result<_, _>>()?;
    let pp: Vec<_> = prod.iter().map(prep).collect::<Result<_, _>>()?;

    let sent = send_all(&mut client, &a, (&wp, &pp))?;
    let wrows: Vec<Row> = warm
        .iter()
        .zip(sent.warmup)
        .map(|(r, (t, refused))| row(r, t, refused, None, rule, false))
        .collect();
    let (calls, seconds) = (sent.calls, sent.seconds);

    // The static verdict for the same pairs.
    let wl: Vec<Labeled> = warm
        .iter()
        .map(|r| Labeled::new(&r.file, &r.label, &r.message))
        .collect();
    let pl: Vec<Labeled> = prod
        .iter()
        .map(|r| Labeled::new(&r.file, &r.label, &r.message))
        .collect();
    let report = diff_labeled(&wl, &pl, &DiffOptions::default());
    let production: Vec<Row> = prod
        .iter()
        .zip(sent.production)
        .zip(&report.requests)
        .map(|((r, (t, refused)), rr)| row(r, t, refused, Some(rr.verdict), rule, true))
        .collect();
    let cold = production.iter().filter(|r| r.cold == Some(true)).count();
    let refused = wrows.iter().chain(&production).any(|r| r.cold.is_none());
    let rep = ReplayReport {
        to: a.conn.to.clone(),
        protocol: target.protocol(),
        rule,
        warmup: wrows,
        production,
        cold,
        calls,
        seconds,
        calls_per_second: if seconds > 0.0 {
            calls as f64 / seconds
        } else {
            0.0
        },
    };
    let mut out = stdout();
    match a.format {
        Format::Json => writeln!(out, "{}", tfreq::json_string(&rep, true))?,
        Format::Human => write_human(&mut out, &rep)?,
    }
    out.flush()?;
    Ok(if unreadable {
        2
    } else {
        u8::from(cold > 0 || refused)
    })
}

/// Each request's timing, and the refusal that ended its calls early if one did.
type Timed = (Timing, Option<NetError>);

/// What [`send_all`] measured: each warm-up request's and production request's calls.
struct Sent {
    warmup: Vec<Timed>,
    production: Vec<Timed>,
    calls: u64,
    seconds: f64,
}

/// Sends each warm-up request `--count` times, then each production request
/// `--prod-count` times, in order on one connection. A refusal ends that request's
/// calls (it is reported in its row); a service that cannot be reached ends the run.
fn send_all(
    client: &mut tfreq::net::Client,
    a: &Args,
    (warm, prod): (&[tfreq::net::Prepared], &[tfreq::net::Prepared]),
) -> Result<Sent, Failure> {
    let started = std::time::Instant::now();
    let mut calls = 0u64;
    let mut measure = |p: &tfreq::net::Prepared, n: u32| -> Result<Timed, Failure> {
        let mut lat = Vec::with_capacity(n as usize);
        for _ in 0..n {
            calls += 1;
            match client.send(p) {
                Ok(ex) => lat.push(ex.latency),
                Err(e @ NetError::Refused { .. }) => return Ok((Timing::new(lat), Some(e))),
                Err(e) => return Err(fatal(&a.conn.to, e)),
            }
        }
        Ok((Timing::new(lat), None))
    };
    let warmup = warm
        .iter()
        .map(|p| measure(p, a.count))
        .collect::<Result<Vec<_>, _>>()?;
    let production = prod
        .iter()
        .map(|p| measure(p, a.prod_count))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Sent {
        warmup,
        production,
        calls,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Refuses a warm-up file of more records than TF Serving's loader reads, before
/// anything is sent: `WarmupConsts::kMaxNumRecords` (1000) in
/// tensorflow_serving/servables/tensorflow/saved_model_warmup_util.h, checked in
/// saved_model_warmup_util.cc, fails the model's load at the 1001st record, so such a
/// file never warms a server.
fn refuse_too_many_records(warmup: &std::path::Path, n: usize) -> Result<(), Failure> {
    let max = tfreq::analysis::MAX_RECORDS;
    if n > max {
        return Err(Failure::msg(format!(
            "{}: {} warm-up records, more than TF Serving reads: its loader fails the model's load past {max} records (WarmupConsts::kMaxNumRecords, tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc); nothing was sent",
            tfreq::escape(&warmup.display().to_string()),
            crate::common::group_digits(n as u64)
        )));
    }
    Ok(())
}

fn row(
    r: &Req,
    t: Timing,
    refused: Option<NetError>,
    verdict: Option<Verdict>,
    rule: ColdRule,
    production: bool,
) -> Row {
    let mut findings = Vec::new();
    let cold = match &refused {
        Some(e) => {
            findings.push(
                Finding::new(Code::RequestRefused, Severity::Error, e.to_string()).name(&r.label),
            );
            None
        }
        None => Some(t.is_cold(rule)),
    };
    let (first, later) = (t.first().map(ms), t.later_median().map(ms));
    if production && let (Some(c), Some(f), Some(l)) = (cold, first, later) {
        let v = verdict.map_or(String::new(), |v| format!("; static diff: {v}"));
        // The warm-up built this request's executor, so the cold call paid for something
        // else: a model compiled per input shape (XLA's jit_compile, TF-TRT) compiles on
        // each new shape (tests/data/gen/make_xla_model.py measures it).
        let cause = if verdict == Some(Verdict::SameExecutor) {
            "the executor was warmed, so evidence of a compile for a new input shape (XLA, TF-TRT: a batch size or dimension the warm-up never sent; see diff --allowed-batch-sizes)"
        } else {
            "evidence of a new executor"
        };
        findings.push(if c {
                Finding::new(
                    Code::MeasuredCold,
                    Severity::Error,
                    format!("first call {f:.3} ms against {l:.3} ms later, after the warm-up ran: {cause}, the warm-up does not warm this request{v}"),
                )
            } else {
                Finding::new(
                    Code::MeasuredWarm,
                    Severity::Note,
                    format!("first call {f:.3} ms against {l:.3} ms later: already warm{v}"),
                )
            }.name(&r.label));
    }
    Row {
        request: r.label.clone(),
        first_ms: first,
        later_median_ms: later,
        timing: t,
        cold,
        static_verdict: verdict,
        findings,
    }
}

fn write_human(out: &mut dyn Write, rep: &ReplayReport) -> std::io::Result<()> {
    writeln!(
        out,
        "replay to {} ({}): cold = first call > {}x the later calls' median and > {} ms longer",
        rep.to, rep.protocol, rep.rule.factor, rep.rule.min_gap_ms
    )?;
    let line = |out: &mut dyn Write, what: &str, r: &Row| -> std::io::Result<()> {
        let f = r.first_ms.map_or("-".into(), |v| format!("{v:.3} ms"));
        let l = r
            .later_median_ms
            .map_or("-".into(), |v| format!("{v:.3} ms"));
        let m = match r.cold {
            Some(true) => "COLD",
            Some(false) => "warm",
            None => "refused",
        };
        write!(
            out,
            "  {what} {}: {} calls, first {f}, later median {l}: {m}",
            r.request,
            r.timing.calls.len()
        )?;
        if let Some(v) = r.static_verdict {
            write!(out, " (static diff: {v})")?;
        }
        writeln!(out)
    };
    for r in &rep.warmup {
        line(out, "warm-up", r)?;
    }
    for r in &rep.production {
        line(out, "production", r)?;
    }
    let findings: Vec<Finding> = rep
        .warmup
        .iter()
        .chain(&rep.production)
        .flat_map(|r| r.findings.iter().cloned())
        .collect();
    if !findings.is_empty() {
        render::write_findings(out, &findings, tfreq::render::Color::Always)?;
    }
    writeln!(
        out,
        "{} calls in {:.3} s ({:.0} calls/s); {} of {} production requests cold after the warm-up",
        rep.calls,
        rep.seconds,
        rep.calls_per_second,
        rep.cold,
        rep.production.len()
    )
}
