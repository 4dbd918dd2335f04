//! Did a request pay a cold start? The measurement `tfreq replay` makes: a request's
//! first call against its later ones.
//!
//! TensorFlow builds an executor the first time a session runs a new set of feeds and
//! fetches (and XLA or the batching layer compile per shape); later calls reuse it. So a
//! production request the warm-up covered is as fast on its first call as on its
//! second, and one it did not cover is much slower once. The rule ([`ColdRule`]) asks
//! for both a ratio and an absolute gap, so the jitter of fast calls (a 0.3 ms call
//! that once takes 1.2 ms) is not read as a cold start, and a slow model whose calls
//! vary by a few percent is not either.
//!
//! ```
//! use std::time::Duration;
//! use tfreq::analysis::{ColdRule, Timing};
//! let ms = |x: f64| Duration::from_secs_f64(x / 1000.0);
//! let t = Timing::new(vec![ms(48.0), ms(1.1)]);
//! assert!(t.is_cold(ColdRule::default()));
//! let t = Timing::new(vec![ms(1.4), ms(0.4)]); // jitter: 3.5x but 1 ms
//! assert!(!t.is_cold(ColdRule::default()));
//! ```

use std::time::Duration;

use serde::Serialize;

/// When a first call counts as cold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ColdRule {
    /// The first call takes more than this many times the median of the later calls...
    pub factor: f64,
    /// ...and more than this many milliseconds longer.
    pub min_gap_ms: f64,
}

impl Default for ColdRule {
    /// 3× and 5 ms: building a DirectSession executor for even a tiny graph costs
    /// several milliseconds on top of a call, while the loopback calls of a small model
    /// vary by well under that.
    fn default() -> Self {
        ColdRule {
            factor: 3.0,
            min_gap_ms: 5.0,
        }
    }
}

/// The latencies of one request's calls, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Each call's latency, in order.
    #[serde(serialize_with = "as_ms")]
    pub calls: Vec<Duration>,
}

fn as_ms<S: serde::Serializer>(v: &[Duration], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for d in v {
        seq.serialize_element(&ms(*d))?;
    }
    seq.end()
}

/// A duration in milliseconds, rounded to the microsecond.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

impl Timing {
    /// The calls' latencies.
    pub fn new(calls: Vec<Duration>) -> Self {
        Timing { calls }
    }

    /// The first call.
    pub fn first(&self) -> Option<Duration> {
        self.calls.first().copied()
    }

    /// The median of the calls after the first.
    pub fn later_median(&self) -> Option<Duration> {
        let mut later: Vec<Duration> = self.calls.iter().skip(1).copied().collect();
        if later.is_empty() {
            return None;
        }
        later.sort();
        let n = later.len();
        Some(if n % 2 == 1 {
            later[n / 2]
        } else {
            (later[n / 2 - 1] + later[n / 2]) / 2
        })
    }

    /// Whether the first call was cold by `rule` (false with fewer than two calls).
    pub fn is_cold(&self, rule: ColdRule) -> bool {
        let (Some(first), Some(later)) = (self.first(), self.later_median()) else {
            return false;
        };
        let (f, l) = (ms(first), ms(later));
        f > rule.factor * l && f - l > rule.min_gap_ms
    }
}
