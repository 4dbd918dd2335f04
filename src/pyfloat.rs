//! Floats as Python's `text_format` writes them (protobuf 3.20, pure Python): a leaf
//! the model's `Display` and the renderers share (`render::pyfloat` re-exports it).
//!
//! `float` fields: the shortest `%.{p}g` (p = 6, 7, …) that reads back to the same
//! float32, printed as Python `repr` prints that double. `double` fields: `repr`.

/// Text of a `float` field value.
pub fn f32_text(v: f32) -> String {
    PyFloat::f32(v).as_str().to_owned()
}

/// Python `repr` of a double.
pub fn f64_repr(v: f64) -> String {
    PyFloat::f64(v).as_str().to_owned()
}

/// A float laid out as Python prints it, in a buffer on the stack: the text printer
/// writes `as_str()` straight to its output, with no allocation per value.
#[derive(Clone, Copy, Debug)]
pub struct PyFloat {
    buf: [u8; 32],
    len: usize,
}

impl PyFloat {
    /// A `float` field value: the shortest `%.{p}g` (p = 6, 7, …) that reads back to
    /// the same float32, printed as `repr` prints that double (protobuf's
    /// `type_checkers.ToShortestFloat`).
    ///
    /// Python's loop itself, each step done in double arithmetic instead of formatting
    /// and parsing text: the value correctly rounded to p digits ([`rounded_at`]), read
    /// back as a double ([`as_double`]) and rounded to float32, as Python reads it
    /// (twice rounded: the digits that read back straight to float32 are not always
    /// Python's, in either direction — 0x15ae43fd and 0x15ae43fe). Only where the
    /// rounding to p digits is in doubt (within 1e-6 of a tie) does it run the loop on
    /// text ([`PyFloat::f32_exact`]).
    pub fn f32(v: f32) -> PyFloat {
        if let Some(p) = PyFloat::non_finite_or_zero(f64::from(v)) {
            return p;
        }
        // The decimal exponent of |v|: that of its shortest round-trip digits, or one
        // less where those rounded up to a power of ten.
        let mut z = zmij::Buffer::new();
        let (_, _, shortest_x) = digits(z.format_finite(v.abs()));
        let a = f64::from(v.abs());
        let x = if a * pow10(5 - shortest_x) < 1e5 {
            shortest_x - 1
        } else {
            shortest_x
        };
        for p in 6..=9usize {
            let Some((sig, x)) = rounded_at(a, p, x) else {
                break;
            };
            match as_double(sig, p, x) {
                Some(d) if d as f32 == v.abs() => {
                    let (mut sig, mut k) = (sig, p);
                    while sig % 10 == 0 && k > 1 {
                        sig /= 10;
                        k -= 1;
                    }
                    return PyFloat::layout(v < 0.0, sig, k, x);
                }
                Some(_) => {}
                None => break,
            }
        }
        PyFloat::f32_exact(v)
    }

    /// Python's loop as it is written: format with p significant digits, read back,
    /// compare as float32, from p = 6 on.
    fn f32_exact(v: f32) -> PyFloat {
        use std::io::Write as _;
        let d = f64::from(v);
        let mut tmp = [0u8; 40];
        for p in 6..=17usize {
            let mut w = &mut tmp[..];
            if write!(w, "{:.*e}", p - 1, d).is_err() {
                break;
            }
            let n = 40 - w.len();
            let rounded: f64 = std::str::from_utf8(&tmp[..n])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(d);
            if rounded as f32 == v {
                return PyFloat::f64(rounded);
            }
        }
        PyFloat::f64(d)
    }

    /// Python `repr` of a double: its shortest round-trip digits, in exponent form
    /// below 1e-4 and from 1e16.
    pub fn f64(v: f64) -> PyFloat {
        if let Some(p) = PyFloat::non_finite_or_zero(v) {
            return p;
        }
        let mut z = zmij::Buffer::new();
        let (sig, k, x) = digits(z.format_finite(v.abs()));
        PyFloat::layout(v < 0.0, sig, k, x)
    }

    /// `nan`, `inf`, `-inf`, `0.0` and `-0.0`, which have no significant digits.
    fn non_finite_or_zero(v: f64) -> Option<PyFloat> {
        Some(PyFloat::from_str(if v.is_nan() {
            "nan"
        } else if v.is_infinite() {
            if v > 0.0 { "inf" } else { "-inf" }
        } else if v == 0.0 {
            if v.is_sign_negative() { "-0.0" } else { "0.0" }
        } else {
            return None;
        }))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written into the buffer.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }

    fn from_str(s: &str) -> PyFloat {
        let mut p = PyFloat {
            buf: [0; 32],
            len: 0,
        };
        p.push_str(s);
        p
    }

    fn push(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    fn push_str(&mut self, s: &str) {
        for &b in s.as_bytes() {
            self.push(b);
        }
    }

    /// `sig` (`k` digits, no trailing zero) times 10^(x - k + 1), as `repr` lays it out.
    fn layout(neg: bool, sig: u64, k: usize, x: i32) -> PyFloat {
        let mut out = PyFloat {
            buf: [0; 32],
            len: 0,
        };
        let mut d = [0u8; 20];
        let mut n = sig;
        for i in (0..k).rev() {
            d[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let d = &d[..k];
        if neg {
            out.push(b'-');
        }
        if !(-4..16).contains(&x) {
            out.push(d[0]);
            if k > 1 {
                out.push(b'.');
                d[1..].iter().for_each(|&c| out.push(c));
            }
            out.push(b'e');
            out.push(if x < 0 { b'-' } else { b'+' });
            let e = x.unsigned_abs();
            if e >= 100 {
                out.push(b'0' + (e / 100) as u8);
            }
            out.push(b'0' + (e / 10 % 10) as u8);
            out.push(b'0' + (e % 10) as u8);
        } else if x >= 0 {
            let int_len = x as usize + 1;
            if k <= int_len {
                d.iter().for_each(|&c| out.push(c));
                (k..int_len).for_each(|_| out.push(b'0'));
                out.push_str(".0");
            } else {
                d[..int_len].iter().for_each(|&c| out.push(c));
                out.push(b'.');
                d[int_len..].iter().for_each(|&c| out.push(c));
            }
        } else {
            out.push_str("0.");
            (0..(-x - 1)).for_each(|_| out.push(b'0'));
            d.iter().for_each(|&c| out.push(c));
        }
        out
    }
}

/// The significant digits of a positive finite number as `zmij` prints it (`0.00001`,
/// `1.5e-7`, `123456790.0`, `1e+20`): (digits as an integer without trailing zeros,
/// their count, the decimal exponent of the first).
fn digits(s: &str) -> (u64, usize, i32) {
    let (mant, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().unwrap_or(0)),
        None => (s, 0),
    };
    let point = mant.find('.').unwrap_or(mant.len());
    let mut sig = 0u64;
    let mut k = 0usize;
    let mut first: Option<i32> = None;
    let mut zeros = 0usize;
    for (i, c) in mant.bytes().enumerate() {
        if c == b'.' {
            continue;
        }
        let dv = u64::from(c - b'0');
        if first.is_none() {
            if dv == 0 {
                continue;
            }
            // Position of this digit relative to the point: 10^(point - i - 1), one
            // less when the point came before it.
            let pos = if i < point {
                point as i32 - i as i32 - 1
            } else {
                point as i32 - i as i32
            };
            first = Some(pos + exp);
        }
        if dv == 0 {
            zeros += 1;
            continue;
        }
        for _ in 0..zeros {
            sig *= 10;
            k += 1;
        }
        zeros = 0;
        sig = sig * 10 + dv;
        k += 1;
    }
    (sig, k, first.unwrap_or(0))
}

/// `a` (positive, its first digit at 10^x) correctly rounded to p significant digits,
/// ties to even as C's `printf` rounds them: (the p digits as an integer, the decimal
/// exponent of the first, one more when the rounding carried to a power of ten).
///
/// t = a scaled so that the p-th digit is the units is within about 3e-16 relative of
/// the exact value (at most one rounding in the power of ten, one in the product), so
/// within 1e-6 absolute for t < 1e9. Within 1e-6 of a tie it must be exact to decide:
/// it is when the power of ten is (|n| <= 22) and the product or quotient lost nothing
/// (checked with a fused multiply-add), as for 123456.5 at 6 digits; `None` otherwise.
fn rounded_at(a: f64, p: usize, x: i32) -> Option<(u64, i32)> {
    let n = p as i32 - 1 - x;
    let pw = pow10(n.abs());
    let t = if n >= 0 { a * pw } else { a / pw };
    if !t.is_finite() {
        return None;
    }
    let floor = t.floor();
    let r = if ((t - floor) - 0.5).abs() < 1e-6 {
        let exact = n.abs() <= 22
            && if n >= 0 {
                a.mul_add(pw, -t) == 0.0
            } else {
                t.mul_add(pw, -a) == 0.0
            };
        if !exact {
            return None;
        }
        if t - floor == 0.5 {
            (floor as u64).next_multiple_of(2)
        } else {
            t.round() as u64
        }
    } else {
        t.round() as u64
    };
    let top = 10u64.pow(p as u32);
    Some(if r >= top { (top / 10, x + 1) } else { (r, x) })
}

/// `sig` (k digits, the first at 10^x) read as a double, correctly rounded as Python's
/// `float()` reads it: where the power of ten is exact (|e| <= 22, and `sig` < 2^53) one
/// multiplication or division rounds once (Clinger's fast path); elsewhere the standard
/// library's correctly rounded parser reads `{sig}e{e}` from a stack buffer.
fn as_double(sig: u64, k: usize, x: i32) -> Option<f64> {
    use std::io::Write as _;
    let e = x - (k as i32 - 1);
    if sig < 1 << 53 && e.abs() <= 22 {
        let (s, p) = (sig as f64, pow10(e.abs()));
        return Some(if e >= 0 { s * p } else { s / p });
    }
    let mut buf = [0u8; 32];
    let mut w = &mut buf[..];
    write!(w, "{sig}e{e}").ok()?;
    let n = 32 - w.len();
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// 10^n as the nearest double (n within the float32 range of scales, -60..=80).
fn pow10(n: i32) -> f64 {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        (-60..=80)
            .map(|e| format!("1e{e}").parse::<f64>().unwrap_or(f64::NAN))
            .collect()
    });
    t.get((n + 60) as usize).copied().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(clippy::excessive_precision)] // 3061734.25 is exact in f32 (spacing 0.25)
    fn python_text_of_floats() {
        use super::{PyFloat, f32_text, f64_repr};
        assert_eq!(f32_text(0.2), "0.2");
        assert_eq!(f32_text(1.0), "1.0");
        assert_eq!(f32_text(123456789.0), "123456790.0");
        assert_eq!(f32_text(3061734.25), "3061734.2");
        assert_eq!(f32_text(1e20), "1e+20");
        assert_eq!(f32_text(f32::from_bits(1)), "1.4013e-45");
        assert_eq!(f64_repr(0.1), "0.1");
        assert_eq!(f64_repr(5e-324), "5e-324");
        assert_eq!(f64_repr(1e16), "1e+16");
        assert_eq!(f64_repr(-0.0), "-0.0");
        assert_eq!(PyFloat::f32(0.2).as_str(), "0.2");
        assert_eq!(PyFloat::f64(1e16).as_str(), "1e+16");
    }

    use super::*;

    /// Python's algorithm as written (protobuf's `ToShortestFloat`, then `repr`), with
    /// the standard library's exact formatting and parsing: the reference.
    fn f32_reference(v: f32) -> String {
        if !v.is_finite() {
            return PyFloat::f64(f64::from(v)).as_str().to_owned();
        }
        let d = v as f64;
        for p in 6..=17usize {
            let s = format!("{:.*e}", p - 1, d);
            let rounded: f64 = s.parse().unwrap();
            if rounded as f32 == v {
                return f64_reference(rounded);
            }
        }
        unreachable!("9 digits always round-trip a float32")
    }

    /// `repr` of a double from the standard library's shortest digits.
    fn f64_reference(v: f64) -> String {
        let s = format!("{:e}", v);
        let (mant, exp) = s.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        let (neg, mant) = match mant.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, mant),
        };
        let digits: String = mant.chars().filter(|c| *c != '.').collect();
        let mut out = String::from(if neg { "-" } else { "" });
        if !(-4..16).contains(&exp) {
            out.push_str(&digits[..1]);
            if digits.len() > 1 {
                out.push('.');
                out.push_str(&digits[1..]);
            }
            out.push_str(&format!(
                "e{}{:02}",
                if exp < 0 { '-' } else { '+' },
                exp.abs()
            ));
        } else if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.push_str(&"0".repeat(int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
        out
    }

    /// xorshift64*: a fixed sequence, so a failure reproduces.
    fn rng(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn f32_equals_pythons_loop_on_a_random_sample() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let check = |bits: u32| {
            let v = f32::from_bits(bits);
            assert_eq!(f32_text(v), f32_reference(v), "{bits:#010x}");
        };
        // Every bit pattern is equally likely (so every exponent), then the edges:
        // powers of two (asymmetric intervals), subnormals, values near ties.
        for _ in 0..100_000 {
            check(rng(&mut s) as u32);
        }
        for e in 0..=255u32 {
            for m in [0u32, 1, 2, 0x7f_ffff, 0x40_0000] {
                check(e << 23 | m);
                check(1 << 31 | e << 23 | m);
            }
        }
        for bits in 0..20_000u32 {
            check(bits);
        }
        // Digits that round-trip as float32 but not through a double (found by
        // f32_all_bit_patterns).
        // Exact decimal ties at 6 digits (123456.5), which C's printf rounds to even.
        for h in (0..2_000_000u32).step_by(7) {
            check((h as f32 * 0.5).to_bits());
        }
        for bits in [0x15ae_43fd, 0x15ae_43fe] {
            check(bits);
            check(1 << 31 | bits);
        }
    }

    #[test]
    fn f64_equals_the_standard_librarys_shortest_digits() {
        let mut s = 0x1234_5678_9abc_def1u64;
        for _ in 0..100_000 {
            let v = f64::from_bits(rng(&mut s));
            if !v.is_finite() {
                continue;
            }
            let (new, std) = (f64_repr(v), f64_reference(v));
            if new != std {
                // Two shortest candidates exactly as close (a 17-digit tie): Python
                // (David Gay's dtoa) takes the even last digit, as Schubfach does; the
                // standard library takes the other one. Python prints
                // repr(1341538170625153.25) as 1341538170625153.2.
                let last = |s: &str| s.bytes().rfind(u8::is_ascii_digit).unwrap();
                assert!(
                    new.parse::<f64>().unwrap() == v
                        && new.len() == std.len()
                        && last(&new) % 2 == 0
                        && last(&std) % 2 == 1,
                    "{:#018x}: {new} against {std}",
                    v.to_bits()
                );
            }
        }
        for v in [0.1, 1e-4, 1e-5, 1e15, 1e16, 5e-324, f64::MAX, 123456789.123] {
            assert_eq!(f64_repr(v), f64_reference(v));
        }
        assert_eq!(
            f64_repr(f64::from_bits(0x4313_107c_c873_7205)),
            "1341538170625153.2"
        );
    }

    /// All 2^32 float32 bit patterns against Python's loop, on every core:
    /// `cargo test --release --lib pyfloat::tests::f32_all_bit_patterns -- --ignored`.
    /// `TFREQ_F32_BITS=LO..HI` (hexadecimal, HI excluded) checks that contiguous part
    /// only (`0x0..0x100000000` is all of it).
    #[test]
    #[ignore = "an hour of CPU; run on demand"]
    fn f32_all_bit_patterns() {
        let (from, to) = match std::env::var("TFREQ_F32_BITS") {
            Ok(r) => {
                let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
                let (a, b) = r.split_once("..").expect("TFREQ_F32_BITS=LO..HI");
                (hex(a), hex(b).min(1 << 32))
            }
            Err(_) => (0, 1 << 32),
        };
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
        let start = std::time::Instant::now();
        std::thread::scope(|sc| {
            for t in 0..threads {
                sc.spawn(move || {
                    let n = to.saturating_sub(from);
                    let (lo, hi) = (from + n * t / threads, from + n * (t + 1) / threads);
                    for bits in lo..hi {
                        let v = f32::from_bits(bits as u32);
                        if v.is_nan() {
                            continue;
                        }
                        assert_eq!(f32_text(v), f32_reference(v), "{bits:#010x}");
                    }
                });
            }
        });
        eprintln!(
            "bit patterns {from:#x}..{to:#x} on {threads} threads in {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn layouts() {
        assert_eq!(f64_repr(1e-4), "0.0001");
        assert_eq!(f64_repr(1e-5), "1e-05");
        assert_eq!(f64_repr(1e15), "1000000000000000.0");
        assert_eq!(f64_repr(1.7976931348623157e308), "1.7976931348623157e+308");
        assert_eq!(f64_repr(123456789.123), "123456789.123");
        assert_eq!(f64_repr(0.0), "0.0");
        assert_eq!(f32_text(-0.0), "-0.0");
        assert_eq!(f32_text(f32::MAX), "3.4028235e+38");
        assert_eq!(f32_text(1e-5), "1e-05");
        assert_eq!(f32_text(16777217.0), "16777216.0");
        assert_eq!(f32_text(f32::NAN), "nan");
        assert_eq!(f32_text(f32::NEG_INFINITY), "-inf");
    }
}
