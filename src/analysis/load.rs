//! The statistics of a load test (`tfreq load`), with no threads and no I/O: the
//! open-loop pacing schedule, latency histograms and their percentiles, the report of a
//! run ([`LoadReport`], what `tfreq load --format json` writes), and the parsing of
//! `--rate` and `--duration`. The calls themselves are made by `net::load` (feature
//! `net`); the report is written for people by `render::load`.
//!
//! Latencies are kept in an HDR histogram (<https://hdrhistogram.github.io/HdrHistogram/>,
//! the `hdrhistogram` crate): microseconds, three significant digits at any value, so
//! a percentile is within 0.1 % of the true one whatever the range. Open-loop pacing
//! measures each latency from the request's **scheduled** send time, not from the time
//! it was sent: a service that stalls delays the requests scheduled during the stall,
//! and their latencies include that wait (no "coordinated omission", as wrk2
//! <https://github.com/giltene/wrk2> explains).
//!
//! ```
//! use std::time::Duration;
//! use tfreq::analysis::{Latencies, Schedule};
//! let s = Schedule::new(Some(100.0));
//! assert_eq!(s.at(3), Some(Duration::from_millis(30)));
//! let mut l = Latencies::new();
//! for ms in 1..=100 {
//!     l.record(Duration::from_millis(ms));
//! }
//! let p = l.summary();
//! assert_eq!(p.count, 100);
//! assert!((p.p50_ms - 50.0).abs() < 0.1);
//! assert!((p.max_ms - 100.0).abs() < 0.1);
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::analysis::key::ExecutorKey;

/// When request `i` of a run is to be sent, counted from the start of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    rate: Option<f64>,
}

impl Schedule {
    /// Requests at `rate` a second (open loop), or `None`: each as soon as a worker is
    /// free (closed loop, no schedule).
    pub fn new(rate: Option<f64>) -> Schedule {
        Schedule {
            rate: rate.filter(|r| r.is_finite() && *r > 0.0),
        }
    }

    /// The rate, when the run is paced.
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// The scheduled send time of request `i` (`i / rate` seconds after the start), or
    /// `None` for a closed loop. Computed from `i` (never by adding intervals), so no
    /// rounding error builds up over a long run.
    pub fn at(&self, i: u64) -> Option<Duration> {
        let r = self.rate?;
        let secs = i as f64 / r;
        Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
    }

    /// How many requests are scheduled before `d` after the start (the count for
    /// `--duration` at this rate), `None` for a closed loop.
    pub fn count_within(&self, d: Duration) -> Option<u64> {
        let r = self.rate?;
        let n = (d.as_secs_f64() * r).ceil();
        Some(if n.is_finite() && n > 0.0 {
            n as u64
        } else {
            0
        })
    }
}

/// The largest latency a histogram holds: one day in microseconds (a longer one is
/// counted as one day: no call waits longer than `tfreq::net::MAX_TIMEOUT`).
const MAX_MICROS: u64 = 24 * 3600 * 1_000_000;

/// Latencies, in an HDR histogram of microseconds.
#[derive(Debug, Clone)]
pub struct Latencies {
    h: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

/// Milliseconds of a number of microseconds.
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl Latencies {
    /// An empty histogram: 1 µs to one day, three significant digits.
    pub fn new() -> Latencies {
        // The bounds are constants that the crate accepts: 1 <= low, high >= 2 * low,
        // sigfig <= 5.
        let h = Histogram::new_with_bounds(1, MAX_MICROS, 3)
            .unwrap_or_else(|_| unreachable!("constant bounds are valid"));
        Latencies { h }
    }

    /// Counts one latency (below 1 µs as 1 µs, above a day as a day).
    pub fn record(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros())
            .unwrap_or(MAX_MICROS)
            .clamp(1, MAX_MICROS);
        // In range by the clamp, so recording cannot fail.
        let _ = self.h.record(us);
    }

    /// Adds every latency of `other`.
    pub fn merge(&mut self, other: &Latencies) {
        // Same bounds on both sides, so adding cannot fail.
        let _ = self.h.add(&other.h);
    }

    /// How many latencies.
    pub fn len(&self) -> u64 {
        self.h.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// The latency at percentile `p` (0 to 100), in milliseconds; 0 when empty.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.h.is_empty() {
            return 0.0;
        }
        ms(self.h.value_at_percentile(p.clamp(0.0, 100.0)))
    }

    /// Count, min, mean, p50, p90, p99, p99.9 and max.
    pub fn summary(&self) -> Percentiles {
        let e = self.h.is_empty();
        let or0 = |v: f64| if e { 0.0 } else { v };
        Percentiles {
            count: self.h.len(),
            min_ms: or0(ms(self.h.min())),
            mean_ms: or0(self.h.mean() / 1000.0),
            p50_ms: self.percentile_ms(50.0),
            p90_ms: self.percentile_ms(90.0),
            p99_ms: self.percentile_ms(99.0),
            p999_ms: self.percentile_ms(99.9),
            max_ms: or0(ms(self.h.max())),
        }
    }

    /// The latency curve by percentile, as HdrHistogram's plots draw it: the latency at
    /// 0, 10, 20 … 90, 95, 99, 99.5, 99.9, 99.99 and 100 %.
    pub fn curve(&self) -> Vec<CurvePoint> {
        if self.h.is_empty() {
            return Vec::new();
        }
        CURVE
            .iter()
            .map(|&p| CurvePoint {
                percentile: p,
                latency_ms: self.percentile_ms(p),
            })
            .collect()
    }

    /// `n` bins (at least 1) from the least to the largest latency, spaced
    /// logarithmically (latencies spread over orders of magnitude: linear bins would
    /// put all but the outliers in the first), each with its count; the counts add up
    /// to [`len`](Self::len). Empty when there are no latencies.
    pub fn bins(&self, n: usize) -> Vec<Bin> {
        if self.h.is_empty() {
            return Vec::new();
        }
        let n = n.max(1);
        let (lo, hi) = (self.h.min().max(1), self.h.max().max(1));
        let edges = log_edges(lo, hi, n);
        let mut bins: Vec<Bin> = edges
            .windows(2)
            .map(|w| Bin {
                from_ms: ms(w[0]),
                to_ms: ms(w[1]),
                count: 0,
            })
            .collect();
        for v in self.h.iter_recorded() {
            let x = self.h.highest_equivalent(v.value_iterated_to()).min(hi);
            // The first bin whose upper edge holds x (the last takes the rest).
            let i = edges[1..].partition_point(|&e| e < x).min(bins.len() - 1);
            bins[i].count += v.count_at_value();
        }
        bins
    }
}

/// The percentiles of [`Latencies::curve`].
pub const CURVE: [f64; 16] = [
    0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0,
];

/// `n + 1` edges from `lo` to `hi` (microseconds), logarithmically spaced, strictly
/// increasing where the range allows it, the last exactly `hi`.
fn log_edges(lo: u64, hi: u64, n: usize) -> Vec<u64> {
    if hi <= lo {
        return vec![lo, hi.max(lo)];
    }
    let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
    let mut edges: Vec<u64> = (0..=n)
        .map(|i| (a + (b - a) * i as f64 / n as f64).exp().round() as u64)
        .collect();
    edges[0] = lo;
    edges[n] = hi;
    edges.dedup();
    if edges.len() < 2 {
        edges.push(hi);
    }
    edges
}

/// One bin of a histogram.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bin {
    /// Its lower edge, in milliseconds.
    pub from_ms: f64,
    /// Its upper edge (included), in milliseconds.
    pub to_ms: f64,
    /// How many latencies fall in it.
    pub count: u64,
}

/// A point of the latency curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// The percentile, 0 to 100.
    pub percentile: f64,
    /// The latency at it, in milliseconds.
    pub latency_ms: f64,
}

/// The summary of a set of latencies, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Percentiles {
    /// How many.
    pub count: u64,
    /// The least.
    pub min_ms: f64,
    /// The mean.
    pub mean_ms: f64,
    /// The median.
    pub p50_ms: f64,
    /// The 90th percentile.
    pub p90_ms: f64,
    /// The 99th percentile.
    pub p99_ms: f64,
    /// The 99.9th percentile.
    pub p999_ms: f64,
    /// The largest.
    pub max_ms: f64,
}

/// Errors of one kind in a [`LoadReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorCount {
    /// How many calls failed so.
    pub count: u64,
    /// The first error's message.
    pub example: String,
}

/// The first call of an executor key: the cold start a warm-up should have removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstCall {
    /// The executor key, as text.
    pub key: String,
    /// The request that was sent (its file).
    pub request: String,
    /// From its scheduled time (or its send) to the end of the answer.
    pub latency_ms: f64,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// What a load test measured (`tfreq load --format json`, fields in this order).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LoadReport {
    /// Where the requests went, as given.
    pub to: String,
    /// The protocol spoken: `eas`, `grpc` or `rest`.
    pub protocol: String,
    /// How many calls were under way at most at once.
    pub concurrency: u32,
    /// The rate asked for, a second (open loop), or none.
    pub rate: Option<f64>,
    /// The run was stopped early: no request was started after it.
    pub interrupted: bool,
    /// Requests sent.
    pub requests: u64,
    /// Calls answered.
    pub answers: u64,
    /// Calls failed.
    pub errors_total: u64,
    /// From the start to the end of the last answer.
    pub elapsed_s: f64,
    /// Calls ended (answers and errors) a second over `elapsed_s`.
    pub throughput_per_s: f64,
    /// The rate requests were sent at: the number sent after the first over the time
    /// from the first send to the last.
    pub send_rate_per_s: f64,
    /// Failed calls by kind: the status the service answered (`net::Status::kind`), or
    /// what kind of failure it was (`timeout`, `unreachable`, …).
    pub errors: BTreeMap<String, ErrorCount>,
    /// Latencies of the answers, the first call of each key left out.
    pub latency_ms: Percentiles,
    /// The latencies in 12 logarithmic bins ([`Latencies::bins`]).
    pub histogram: Vec<Bin>,
    /// The latency by percentile ([`Latencies::curve`]).
    pub curve: Vec<CurvePoint>,
    /// The first call of each executor key, in the order they were sent.
    pub first_calls: Vec<FirstCall>,
    /// (scheduled send time s, latency ms) of the calls, by send time, at most about
    /// 100,000 of them (for a plot; not in the JSON).
    #[serde(skip)]
    pub points: Vec<(f32, f32)>,
}

/// One call of a run, as [`Tally::add`] counts it.
pub(crate) struct Call {
    /// Its number in the run.
    pub i: u64,
    /// When it was sent, after the start.
    pub sent: Duration,
    /// When it was due (open loop), else when it was sent, after the start.
    pub due: Duration,
    /// From `due` to the end of the answer.
    pub latency: Duration,
    /// Why there is no answer: the kind of error (a key of [`LoadReport::errors`]) and
    /// its message.
    pub error: Option<(String, String)>,
}

/// What the calls of one worker measured; the workers' tallies are added up at the end
/// ([`Tally::merge`]).
#[derive(Default)]
pub(crate) struct Tally {
    latencies: Latencies,
    errors: BTreeMap<String, ErrorCount>,
    firsts: Vec<(u64, FirstCall)>,
    points: Vec<(f32, f32)>,
    sent: u64,
    answers: u64,
    errors_total: u64,
    first_sent: Option<Duration>,
    last_sent: Duration,
    last_end: Duration,
}

/// What a [`LoadReport`] says of the run beside its measures.
pub(crate) struct RunInfo {
    pub to: String,
    pub protocol: String,
    pub concurrency: u32,
    pub schedule: Schedule,
    pub interrupted: bool,
}

impl Tally {
    /// Counts one call. `first`: the label and key of a key's first call (its latency is
    /// shown apart, not in the percentiles); at most `max_points` points are kept for
    /// the plot.
    pub fn add(&mut self, c: Call, first: Option<(&str, &ExecutorKey)>, max_points: usize) {
        self.sent += 1;
        self.first_sent = Some(self.first_sent.map_or(c.sent, |f| f.min(c.sent)));
        self.last_sent = self.last_sent.max(c.sent);
        self.last_end = self.last_end.max(c.due + c.latency);
        if self.points.len() < max_points {
            self.points.push((
                c.due.as_secs_f32(),
                (c.latency.as_secs_f64() * 1000.0) as f32,
            ));
        }
        let error = match c.error {
            None => {
                self.answers += 1;
                if first.is_none() {
                    self.latencies.record(c.latency);
                }
                None
            }
            Some((kind, message)) => {
                self.errors_total += 1;
                self.errors
                    .entry(kind)
                    .or_insert_with(|| ErrorCount {
                        count: 0,
                        example: message.clone(),
                    })
                    .count += 1;
                Some(message)
            }
        };
        if let Some((label, key)) = first {
            self.firsts.push((
                c.i,
                FirstCall {
                    key: key.to_string(),
                    request: label.to_string(),
                    latency_ms: c.latency.as_secs_f64() * 1000.0,
                    error,
                },
            ));
        }
    }

    /// Adds another worker's tally.
    pub fn merge(&mut self, o: Tally) {
        self.latencies.merge(&o.latencies);
        for (kind, e) in o.errors {
            // The first example kept is the one of the worker merged first: any of them
            // shows what the kind means.
            self.errors
                .entry(kind)
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

    /// The report of a run from the workers' merged tally.
    pub fn report(mut self, run: RunInfo) -> LoadReport {
        self.firsts.sort_by_key(|(i, _)| *i);
        self.points
            .sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap_or(std::cmp::Ordering::Equal));
        let elapsed = self.last_end.as_secs_f64();
        let per_s = |count: u64, secs: f64| if secs > 0.0 { count as f64 / secs } else { 0.0 };
        let span = self
            .first_sent
            .map_or(0.0, |f| (self.last_sent - f).as_secs_f64());
        LoadReport {
            to: run.to,
            protocol: run.protocol,
            concurrency: run.concurrency,
            rate: run.schedule.rate(),
            interrupted: run.interrupted,
            requests: self.sent,
            answers: self.answers,
            errors_total: self.errors_total,
            elapsed_s: elapsed,
            throughput_per_s: per_s(self.sent, elapsed),
            send_rate_per_s: per_s(self.sent.saturating_sub(1), span),
            errors: self.errors,
            latency_ms: self.latencies.summary(),
            histogram: self.latencies.bins(12),
            curve: self.latencies.curve(),
            first_calls: self.firsts.into_iter().map(|(_, f)| f).collect(),
            points: self.points,
        }
    }
}

/// Reads `--rate`: requests a second, as `100`, `100/s`, `2.5/s` or `600/m` (a
/// minute): a finite number above 0, at most a million a second.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, per) = match t.split_once('/') {
        None => (t, 1.0),
        Some((n, "s")) => (n, 1.0),
        Some((n, "m" | "min")) => (n, 60.0),
        Some(_) => {
            return Err(format!(
                "{s:?}: expected requests a second, e.g. 100 or 100/s (or 600/m)"
            ));
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of requests a second, e.g. 100/s"))?;
    let r = v / per;
    if !r.is_finite() || r <= 0.0 {
        return Err(format!("{s:?}: expected a rate above 0"));
    }
    if r > 1e6 {
        return Err(format!("{s:?}: at most 1000000 requests a second"));
    }
    Ok(r)
}

/// Reads `--duration`: `30s`, `500ms`, `2m`, `1h` or a bare number of seconds; above 0
/// and at most 24 hours.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "{s:?}: expected a duration, e.g. 30s, 500ms, 2m or 1h"
            ));
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a duration, e.g. 30s, 500ms, 2m or 1h"))?;
    let secs = v * scale;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!("{s:?}: expected a duration above 0"));
    }
    if secs > 24.0 * 3600.0 {
        return Err(format!("{s:?}: at most 24 hours"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{s:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_computed_from_the_index() {
        let s = Schedule::new(Some(3.0));
        assert_eq!(s.at(0), Some(Duration::ZERO));
        // 1/3 s each: the millionth is at exactly 333333.33 s, no drift from summing.
        let t = s.at(1_000_000).unwrap().as_secs_f64();
        assert!((t - 1_000_000.0 / 3.0).abs() < 1e-6, "{t}");
        assert_eq!(Schedule::new(None).at(5), None);
        assert_eq!(Schedule::new(Some(0.0)).rate(), None);
        assert_eq!(Schedule::new(Some(f64::NAN)).rate(), None);
        assert_eq!(
            Schedule::new(Some(100.0)).count_within(Duration::from_secs(2)),
            Some(200)
        );
        assert_eq!(
            Schedule::new(Some(3.0)).count_within(Duration::from_millis(1001)),
            Some(4)
        );
    }

    #[test]
    fn percentiles_of_known_values() {
        let mut l = Latencies::new();
        assert!(l.is_empty());
        assert_eq!(l.summary(), Percentiles::default());
        assert!(l.bins(10).is_empty());
        assert!(l.curve().is_empty());
        // 1..=1000 ms: p50 500, p90 900, p99 990, p99.9 999, max 1000, each within the
        // histogram's precision (1 part in 1024 a bucket, reported at its top).
        for i in 1..=1000u64 {
            l.record(Duration::from_millis(i));
        }
        let p = l.summary();
        assert_eq!(p.count, 1000);
        let near = |got: f64, want: f64| (got - want).abs() <= want * 0.002 + 1e-9;
        assert!(near(p.min_ms, 1.0), "{p:?}");
        assert!(near(p.p50_ms, 500.0), "{p:?}");
        assert!(near(p.p90_ms, 900.0), "{p:?}");
        assert!(near(p.p99_ms, 990.0), "{p:?}");
        assert!(near(p.p999_ms, 999.0), "{p:?}");
        assert!(near(p.max_ms, 1000.0), "{p:?}");
        assert!(near(p.mean_ms, 500.5), "{p:?}");
        let c = l.curve();
        assert_eq!(c.len(), CURVE.len());
        assert!(c.windows(2).all(|w| w[0].latency_ms <= w[1].latency_ms));
        assert!(near(c.last().unwrap().latency_ms, 1000.0));
    }

    #[test]
    fn extremes_are_clamped_not_lost() {
        let mut l = Latencies::new();
        l.record(Duration::ZERO);
        l.record(Duration::from_secs(10 * 24 * 3600));
        assert_eq!(l.len(), 2);
        let p = l.summary();
        assert!((p.min_ms - 0.001).abs() < 1e-9);
        assert!(p.max_ms >= 86_400_000.0 * 0.999);
        let mut m = Latencies::new();
        m.record(Duration::from_millis(5));
        m.merge(&l);
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn bins_hold_every_latency_in_order() {
        let mut l = Latencies::new();
        // 990 fast calls and 10 that waited out a stall.
        for i in 0..990u64 {
            l.record(Duration::from_micros(200 + i % 50));
        }
        for _ in 0..10 {
            l.record(Duration::from_millis(500));
        }
        let bins = l.bins(10);
        assert_eq!(bins.len(), 10);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert!(bins.windows(2).all(|w| w[0].to_ms <= w[1].from_ms + 1e-9));
        assert!((bins[0].from_ms - 0.2).abs() < 1e-9);
        assert!((bins[9].to_ms - l.summary().max_ms).abs() < 1e-9);
        // Log bins: the fast calls are in the first bin or two, the stalled in the last.
        assert_eq!(bins[9].count, 10);
        assert_eq!(bins[..2].iter().map(|b| b.count).sum::<u64>(), 990);
        // One value: one bin.
        let mut one = Latencies::new();
        one.record(Duration::from_millis(3));
        one.record(Duration::from_millis(3));
        let b = one.bins(10);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].count, 2);
    }

    fn call(i: u64, due_ms: u64, latency_ms: u64, error: Option<&str>) -> Call {
        Call {
            i,
            sent: Duration::from_millis(due_ms),
            due: Duration::from_millis(due_ms),
            latency: Duration::from_millis(latency_ms),
            error: error.map(|k| (k.to_string(), format!("{k} #{i}"))),
        }
    }

    /// Two workers' tallies: the first call of a key is apart from the percentiles,
    /// errors are counted by kind with the first message, and the figures come from the
    /// merged tally.
    #[test]
    fn tallies_merge_into_one_report() {
        let bytes = crate::builder::TFRequest::new("s").to_bytes().unwrap();
        let key = ExecutorKey::of(&crate::decode(&bytes).unwrap());
        let mut a = Tally::default();
        a.add(call(0, 0, 500, None), Some(("cold.bin", &key)), 10);
        a.add(call(2, 20, 10, None), None, 10);
        a.add(call(4, 40, 30, Some("timeout")), None, 10);
        let mut b = Tally::default();
        b.add(call(1, 10, 20, Some("timeout")), None, 10);
        b.add(call(3, 30, 10, Some("unreachable")), None, 10);
        a.merge(b);
        let r = a.report(RunInfo {
            to: "http://x".into(),
            protocol: "eas".into(),
            concurrency: 2,
            schedule: Schedule::new(Some(100.0)),
            interrupted: false,
        });
        assert_eq!((r.requests, r.answers, r.errors_total), (5, 2, 3));
        assert_eq!(r.latency_ms.count, 1, "the first call is left out");
        assert_eq!(r.errors["timeout"].count, 2);
        assert_eq!(r.errors["timeout"].example, "timeout #4");
        assert_eq!(r.errors["unreachable"].count, 1);
        assert_eq!(r.first_calls.len(), 1);
        assert_eq!(r.first_calls[0].request, "cold.bin");
        assert!((r.first_calls[0].latency_ms - 500.0).abs() < 1e-9);
        // The last answer ends at 0 + 500 ms; five sent over the 40 ms from first to last.
        assert!((r.elapsed_s - 0.5).abs() < 1e-9, "{}", r.elapsed_s);
        assert!(
            (r.send_rate_per_s - 100.0).abs() < 1e-6,
            "{}",
            r.send_rate_per_s
        );
        assert_eq!(r.rate, Some(100.0));
        let times: Vec<f32> = r.points.iter().map(|p| p.0).collect();
        assert_eq!(times, [0.0, 0.01, 0.02, 0.03, 0.04]);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json.get("points").is_none());
        assert_eq!(json["protocol"], "eas");
    }

    #[test]
    fn rates_and_durations() {
        assert_eq!(parse_rate("100"), Ok(100.0));
        assert_eq!(parse_rate("100/s"), Ok(100.0));
        assert_eq!(parse_rate("600/m"), Ok(10.0));
        assert_eq!(parse_rate(" 2.5/s "), Ok(2.5));
        for bad in ["0", "-1", "nan", "inf", "1e9", "x", "10/h", ""] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        for bad in ["0s", "-1s", "25h", "nan", "1x", "", "s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
