//! Floats as Python's `text_format` writes them (protobuf 3.20, pure Python).
//!
//! `float` fields: the shortest `%.{p}g` (p = 6, 7, …) that reads back to the same
//! float32, printed as Python `repr` prints that double. `double` fields: `repr`.
//!
//! ```
//! use tfreq::render::pyfloat::{f32_text, f64_repr};
//! assert_eq!(f32_text(0.2), "0.2");
//! assert_eq!(f32_text(1.0), "1.0");
//! assert_eq!(f32_text(123456789.0), "123456790.0");
//! assert_eq!(f32_text(3061734.25), "3061734.2");
//! assert_eq!(f32_text(1e20), "1e+20");
//! assert_eq!(f32_text(f32::from_bits(1)), "1.4013e-45");
//! assert_eq!(f64_repr(0.1), "0.1");
//! assert_eq!(f64_repr(5e-324), "5e-324");
//! assert_eq!(f64_repr(1e16), "1e+16");
//! assert_eq!(f64_repr(-0.0), "-0.0");
//! ```

/// Text of a `float` field value.
pub fn f32_text(v: f32) -> String {
    if !v.is_finite() {
        return special(v as f64);
    }
    let d = v as f64;
    for p in 6..=17usize {
        let s = format!("{:.*e}", p - 1, d);
        let rounded: f64 = s.parse().unwrap_or(d);
        if rounded as f32 == v {
            return f64_repr(rounded);
        }
    }
    f64_repr(d)
}

/// Python `repr` of a double.
pub fn f64_repr(v: f64) -> String {
    if !v.is_finite() {
        return special(v);
    }
    // Shortest round-trip digits, in exponent form: "d.ddde±x".
    let s = format!("{:e}", v);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    } else {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
        out.push_str(&digits);
    }
    out
}

fn special(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
