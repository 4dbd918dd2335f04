//! Golden responses: is a service's answer the expected one? Output names, dtypes,
//! shapes, and values within a tolerance, each difference a finding (the check TFX
//! InfraValidator users ask for, tensorflow/tfx#5485).
//!
//! Numbers are close when `|got − expected| ≤ atol + rtol·|expected|` (numpy's
//! `allclose`, with NaN equal to NaN); strings and booleans must be equal. Values are
//! compared as TensorFlow reads them, so a TF Serving answer and an EAS answer holding
//! the same tensor compare equal.
//!
//! ```
//! use tfreq::analysis::{compare, Tolerance};
//! use tfreq::{DType, TFRequest};
//! let mut a = TFRequest::new("s");
//! a.add_feed("y", &[2], DType::Float, vec![1.0f32, 2.0])?;
//! let mut b = TFRequest::new("s");
//! b.add_feed("y", &[2], DType::Float, vec![1.0f32, 2.5])?;
//! let (mut want, mut got) = (a.into_message(), b.into_message());
//! want.kind = tfreq::Kind::Response;
//! got.kind = tfreq::Kind::Response;
//! let f = compare(&want, &got, Tolerance::default());
//! assert_eq!(f[0].code, "OUTPUT_VALUES_DIFFER");
//! assert_eq!(f[0].name.as_deref(), Some("y"));
//! assert!(compare(&want, &want, Tolerance::default()).is_empty());
//! # Ok::<(), tfreq::BuildError>(())
//! ```

use crate::analysis::{Code, Finding, Severity};
use crate::model::{Message, Scalar, Tensor};

/// How close two numbers must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance (of the expected value).
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Default for Tolerance {
    /// numpy's defaults: `rtol = 1e-5`, `atol = 1e-8`.
    fn default() -> Self {
        Tolerance {
            rtol: 1e-5,
            atol: 1e-8,
        }
    }
}

/// Compares a response with the expected one: an output missing, of another dtype or
/// shape, or with values out of tolerance is an error; an output the expected response
/// does not have is a warning (TF Serving's REST API returns every output, where the
/// request may have fetched fewer).
pub fn compare(expected: &Message, got: &Message, tol: Tolerance) -> Vec<Finding> {
    let mut out = Vec::new();
    for want in &expected.tensors {
        let Some(have) = got.tensor(&want.name) else {
            out.push(
                Finding::new(
                    Code::OutputMissing,
                    Severity::Error,
                    format!("the answer has no output {:?}", want.name),
                )
                .name(&want.name),
            );
            continue;
        };
        if let Some(f) = compare_tensor(want, expected, have, got, tol) {
            out.push(f);
        }
    }
    for have in &got.tensors {
        if expected.tensor(&have.name).is_none() {
            out.push(
                Finding::new(
                    Code::OutputUnexpected,
                    Severity::Warning,
                    format!(
                        "the answer has an output {:?} the expected response does not",
                        have.name
                    ),
                )
                .name(&have.name),
            );
        }
    }
    out
}

fn compare_tensor(
    want: &Tensor,
    wmsg: &Message,
    have: &Tensor,
    hmsg: &Message,
    tol: Tolerance,
) -> Option<Finding> {
    let name = &want.name;
    if want.dtype != have.dtype {
        return Some(
            Finding::new(
                Code::OutputDtypeChanged,
                Severity::Error,
                format!("output {name:?} is {}, expected {}", have.dtype, want.dtype),
            )
            .name(name)
            .sides(Some(want.dtype.to_string()), Some(have.dtype.to_string())),
        );
    }
    if want.shape.sizes() != have.shape.sizes()
        || want.shape.unknown_rank != have.shape.unknown_rank
    {
        return Some(
            Finding::new(
                Code::OutputShapeChanged,
                Severity::Error,
                format!(
                    "output {name:?} has shape {}, expected {}",
                    have.shape, want.shape
                ),
            )
            .name(name)
            .sides(Some(want.shape.to_string()), Some(have.shape.to_string())),
        );
    }
    let (we, he) = (want.elements(wmsg.wire), have.elements(hmsg.wire));
    let n = we.expected.unwrap_or(0).min(he.expected.unwrap_or(0));
    let mut differ = 0u64;
    let mut first: Option<(u64, Option<Scalar>, Option<Scalar>)> = None;
    let mut worst = 0.0f64;
    for i in 0..n {
        let (w, h) = (we.get(i as usize), he.get(i as usize));
        let (same, gap) = match (&w, &h) {
            (Some(w), Some(h)) => close(w, h, tol),
            (None, None) => (true, 0.0),
            _ => (false, f64::INFINITY),
        };
        if !same {
            differ += 1;
            worst = worst.max(gap);
            if first.is_none() {
                first = Some((i, w, h));
            }
        }
    }
    let (i, w, h) = first?;
    let show = |s: &Option<Scalar>| s.as_ref().map_or("(none)".to_string(), |v| v.to_string());
    let mut msg = format!(
        "output {name:?}: {differ} of {n} values differ beyond rtol {} / atol {}; first at flat index {i}: {}, expected {}",
        tol.rtol,
        tol.atol,
        show(&h),
        show(&w)
    );
    if worst.is_finite() && worst > 0.0 {
        msg.push_str(&format!(" (largest difference {worst:e})"));
    }
    Some(
        Finding::new(Code::OutputValuesDiffer, Severity::Error, msg)
            .name(name)
            .sides(Some(show(&w)), Some(show(&h))),
    )
}

fn num(v: &Scalar) -> Option<f64> {
    Some(match v {
        Scalar::F32(x) => f64::from(*x),
        Scalar::F64(x) => *x,
        Scalar::F16(x) => x.to_f64(),
        Scalar::BF16(x) => x.to_f64(),
        Scalar::I64(x) => *x as f64,
        Scalar::U64(x) => *x as f64,
        Scalar::Byte(b) => f64::from(*b),
        _ => return None,
    })
}

fn close_f(w: f64, h: f64, tol: Tolerance) -> (bool, f64) {
    if w.is_nan() || h.is_nan() {
        return (w.is_nan() && h.is_nan(), f64::INFINITY);
    }
    if w == h {
        return (true, 0.0);
    }
    let gap = (h - w).abs();
    (gap <= tol.atol + tol.rtol * w.abs(), gap)
}

/// Whether two values are equal within the tolerance, and how far apart they are.
fn close(w: &Scalar, h: &Scalar, tol: Tolerance) -> (bool, f64) {
    match (w, h) {
        (Scalar::C64(a, b), Scalar::C64(c, d)) => {
            let (x, g1) = close_f(f64::from(*a), f64::from(*c), tol);
            let (y, g2) = close_f(f64::from(*b), f64::from(*d), tol);
            (x && y, g1.max(g2))
        }
        (Scalar::C128(a, b), Scalar::C128(c, d)) => {
            let (x, g1) = close_f(*a, *c, tol);
            let (y, g2) = close_f(*b, *d, tol);
            (x && y, g1.max(g2))
        }
        _ => match (num(w), num(h)) {
            (Some(a), Some(b)) => close_f(a, b, tol),
            _ => (w == h, if w == h { 0.0 } else { f64::INFINITY }),
        },
    }
}
