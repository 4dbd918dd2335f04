//! The 8- and 4-bit floats of TensorFlow's `DataType` (`DT_FLOAT8_E5M2`,
//! `DT_FLOAT8_E4M3FN`, `DT_FLOAT8_E4M3FNUZ`, `DT_FLOAT8_E4M3B11FNUZ`,
//! `DT_FLOAT8_E5M2FNUZ`, `DT_FLOAT4_E2M1FN`): what a bit pattern means, and which bit
//! pattern a number rounds to. TensorFlow's types are ml_dtypes' (its C++ and Python
//! both use them), so this follows ml_dtypes: round to nearest, ties to even; past the
//! largest finite value, infinity where the format has one, else NaN, except float4,
//! which has neither and saturates. Held to ml_dtypes' own tables
//! (`tests/data/values/ml_dtypes.json`, made by `tests/data/gen/make_values.py`).
//!
//! ```
//! use tfreq::{from_f64, to_f32, DType};
//! assert_eq!(to_f32(DType::Float8E4m3fn, 0x3c), Some(1.5));
//! assert_eq!(to_f32(DType::Float8E4m3fn, 0x80).map(f32::to_bits), Some((-0.0f32).to_bits()));
//! assert_eq!(from_f64(DType::Float8E4m3fn, 1.5), Some(0x3c));
//! assert_eq!(from_f64(DType::Float8E4m3fn, 1.0e6), Some(0x7f)); // NaN: no infinity
//! assert_eq!(from_f64(DType::Float8E5m2, 1.0e6), Some(0x7c));   // infinity
//! assert_eq!(from_f64(DType::Float4E2m1fn, 100.0), Some(0x7));  // saturates at 6.0
//! assert_eq!(to_f32(DType::Float, 0), None);
//! ```

use crate::dtype::DType;

/// How a format spends its bit patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Special {
    /// IEEE: exponent all ones is infinity (mantissa 0) or NaN (e5m2).
    Ieee,
    /// No infinity; all ones (exponent and mantissa) is NaN (e4m3fn).
    Fn,
    /// No infinity, no negative zero; the negative-zero pattern (0x80) is the one NaN.
    Fnuz,
    /// No infinity, no NaN (float4_e2m1fn).
    None,
}

/// One 8- or 4-bit float format: what [`format`] finds for a minifloat dtype, so a
/// caller that holds one needs no "not a minifloat" case.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format {
    exp: u32,
    man: u32,
    bias: i32,
    special: Special,
}

/// The format of `d`, or `None` when `d` is not an 8- or 4-bit float type.
pub(crate) fn format(d: DType) -> Option<Format> {
    use DType::*;
    let f = |exp, man, bias, special| Format {
        exp,
        man,
        bias,
        special,
    };
    Some(match d {
        Float8E5m2 => f(5, 2, 15, Special::Ieee),
        Float8E4m3fn => f(4, 3, 7, Special::Fn),
        Float8E4m3fnuz => f(4, 3, 8, Special::Fnuz),
        Float8E4m3b11fnuz => f(4, 3, 11, Special::Fnuz),
        Float8E5m2fnuz => f(5, 2, 16, Special::Fnuz),
        Float4E2m1fn => f(2, 1, 1, Special::None),
        _ => return None,
    })
}

impl Format {
    fn sign_bit(self) -> u8 {
        1 << (self.exp + self.man)
    }

    /// The value of a bit pattern (bits above the format's width are ignored).
    pub(crate) fn decode(self, bits: u8) -> f32 {
        let width = self.exp + self.man + 1;
        let bits = if width < 8 {
            bits & ((1 << width) - 1)
        } else {
            bits
        };
        let sign = bits & self.sign_bit() != 0;
        let mag = bits & !self.sign_bit();
        let e = (mag >> self.man) as i32;
        let m = (mag & ((1 << self.man) - 1)) as i32;
        let emax = (1 << self.exp) - 1;
        match self.special {
            Special::Fnuz if bits == self.sign_bit() => return f32::NAN,
            Special::Ieee if e == emax => {
                let v = if m == 0 { f32::INFINITY } else { f32::NAN };
                return if sign { -v } else { v };
            }
            Special::Fn if e == emax && m == (1 << self.man) - 1 => {
                return if sign { -f32::NAN } else { f32::NAN };
            }
            _ => {}
        }
        let v = if e == 0 {
            m as f32 * 2f32.powi(1 - self.bias - self.man as i32)
        } else {
            (1.0 + m as f32 / (1 << self.man) as f32) * 2f32.powi(e - self.bias)
        };
        if sign { -v } else { v }
    }

    /// The largest finite magnitude's bit pattern (sign clear).
    fn max_code(self) -> u8 {
        let all = self.sign_bit() - 1;
        match self.special {
            // Exponent all ones is special: the largest finite has the one below.
            Special::Ieee => (all & !((1u8 << self.man) - 1)) - 1,
            Special::Fn => all - 1,
            Special::Fnuz | Special::None => all,
        }
    }

    fn nan(self, negative: bool) -> u8 {
        match self.special {
            Special::Ieee => {
                // The quiet NaN: exponent all ones, mantissa's top bit.
                let q = (self.sign_bit() - 1) & !((1u8 << (self.man - 1)) - 1);
                q | if negative { self.sign_bit() } else { 0 }
            }
            Special::Fn => (self.sign_bit() - 1) | if negative { self.sign_bit() } else { 0 },
            // float4 has no NaN; ml_dtypes writes the negative-zero pattern.
            Special::Fnuz | Special::None => self.sign_bit(),
        }
    }

    /// What an out-of-range magnitude becomes (sign given).
    fn overflow(self, negative: bool) -> u8 {
        let s = if negative { self.sign_bit() } else { 0 };
        match self.special {
            Special::Ieee => ((self.sign_bit() - 1) & !((1u8 << self.man) - 1)) | s,
            Special::Fn => self.nan(negative),
            Special::Fnuz => self.nan(negative),
            Special::None => self.max_code() | s,
        }
    }

    /// The bit pattern ml_dtypes rounds `x` to.
    pub(crate) fn encode(self, x: f64) -> u8 {
        if x.is_nan() {
            return self.nan(x.is_sign_negative());
        }
        let negative = x.is_sign_negative();
        let a = x.abs();
        let max = self.max_code();
        let value = |c: u8| f64::from(self.decode(c));
        let top = value(max);
        let code = if a > top {
            // One step past the largest finite value, as if the exponent went on.
            let ulp = top - value(max - 1);
            let half = top + ulp / 2.0;
            if a < half || (a == half && max.is_multiple_of(2)) {
                max
            } else {
                return self.overflow(negative);
            }
        } else {
            // Magnitudes grow with the code: find the last code not above `a`.
            let (mut lo, mut hi) = (0u8, max);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if value(mid) <= a {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            if value(lo) == a || lo == max {
                lo
            } else {
                let (below, above) = (a - value(lo), value(lo + 1) - a);
                if below < above || (below == above && lo.is_multiple_of(2)) {
                    lo
                } else {
                    lo + 1
                }
            }
        };
        if negative && !(code == 0 && self.special == Special::Fnuz) {
            code | self.sign_bit()
        } else {
            code
        }
    }
}

/// Whether `d` is one of the 8- or 4-bit float types.
pub fn is_minifloat(d: DType) -> bool {
    format(d).is_some()
}

/// The number a bit pattern of `d` stands for (every one fits an `f32` exactly), or
/// `None` when `d` is not an 8- or 4-bit float type.
pub fn to_f32(d: DType, bits: u8) -> Option<f32> {
    format(d).map(|f| f.decode(bits))
}

/// The bit pattern ml_dtypes rounds `x` to in `d`, or `None` when `d` is not an 8- or
/// 4-bit float type. An `f32` widens to `f64` exactly, so this is also the rounding of
/// an `f32`.
pub fn from_f64(d: DType, x: f64) -> Option<u8> {
    format(d).map(|f| f.encode(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_round_trips() {
        for d in DType::all().filter(|d| is_minifloat(*d)) {
            let width = if d == DType::Float4E2m1fn { 4 } else { 8 };
            for b in 0..(1u16 << width) {
                let b = b as u8;
                let v = to_f32(d, b).unwrap();
                if v.is_nan() {
                    continue;
                }
                assert_eq!(from_f64(d, v as f64), Some(b), "{d} {b:#04x} = {v}");
            }
        }
    }
}
