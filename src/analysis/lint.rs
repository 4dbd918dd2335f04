//! Problems a single request or response carries on its own (what `tfreq inspect`
//! lists): values TensorFlow would fill or cut, malformed content, duplicate keys,
//! unknown fields, dtypes the format cannot carry, and the EAS processor's demands.

use crate::analysis::{Code, Finding, Severity};
use crate::dtype::{DType, ValueField};
use crate::model::{Elements, Fill, Kind, Message, Shape, Source, Tensor, Values, WireFormat};

/// Every problem found in `msg`.
///
/// ```
/// use tfreq::{analysis::lint, DType, TFRequest};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[2], DType::Float, vec![1.0f32, 2.0])?;
/// let msg = tfreq::decode(&req.to_bytes()?)?;
/// let codes: Vec<_> = lint(&msg).iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, vec!["NO_FETCHES"]); // the EAS processor refuses warm-ups without fetches
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn lint(msg: &Message) -> Vec<Finding> {
    let mut out = unsafe_names(msg);
    out.extend(duplicate_keys(msg));
    out.extend(unknown_fields(msg));
    out.extend(duplicate_fetches(msg));
    out.extend(no_fetches(msg));
    for t in &msg.tensors {
        let d = match bad_dtype(t) {
            Ok(d) => d,
            Err(f) => {
                out.push(f);
                continue;
            }
        };
        out.extend(eas_cannot_carry(msg, t, d));
        let e = t.elements(msg.wire);
        out.extend(values_fill(msg, t, d, &e));
        if let Some(f) = out_of_range(t, d, msg.wire, e.source) {
            out.push(f.name(t.name.clone()));
        }
        out.extend(values_ignored(msg, t, d, &e));
    }
    out
}

/// `UNSAFE_NAME`: a name that could act on a terminal or a CI log if shown raw
/// ([`crate::escape::is_unsafe`]): escape sequences, a carriage return or newline that
/// forges a line (a GitHub `::error::` command), right-to-left overrides that reorder
/// what a reviewer reads.
///
/// ```
/// use tfreq::{analysis::lint, DType, TFRequest};
/// let mut req = TFRequest::new("s");
/// req.add_feed("x\u{1b}[2J", &[1], DType::Float, vec![1.0f32])?.add_fetch("rtl\u{202e}ok");
/// let codes: Vec<_> = lint(req.message()).iter().map(|f| f.code.as_str()).collect();
/// assert_eq!(codes, ["UNSAFE_NAME", "UNSAFE_NAME"]);
/// # Ok::<(), tfreq::BuildError>(())
/// ```
fn unsafe_names(msg: &Message) -> Vec<Finding> {
    let mut names: Vec<(&str, &str)> = Vec::new();
    names.push(("signature", &msg.signature_name));
    if let Some(spec) = &msg.model_spec {
        names.push(("model name", &spec.name));
        names.push(("model_spec signature", &spec.signature_name));
    }
    let what = if msg.kind == Kind::Request {
        "feed"
    } else {
        "output"
    };
    names.extend(msg.tensors.iter().map(|t| (what, t.name.as_str())));
    names.extend(msg.fetches.iter().map(|f| ("fetch", f.as_str())));
    for t in &msg.tasks {
        names.push(("task method", t.method_name.as_str()));
        if let Some(spec) = &t.model_spec {
            names.push(("task signature", spec.signature_name.as_str()));
        }
    }
    if let Some(input) = &msg.input {
        // Each feature name once, however many examples carry it.
        let mut seen = std::collections::BTreeSet::new();
        for e in input.context.iter().chain(&input.examples) {
            for f in &e.features {
                if seen.insert(f.name.as_str()) {
                    names.push(("feature", f.name.as_str()));
                }
            }
        }
    }
    names
        .into_iter()
        .filter(|(_, n)| crate::escape::is_unsafe(n.as_bytes()))
        .map(|(what, n)| {
            Finding::new(
                Code::UnsafeName,
                Severity::Warning,
                format!(
                    "{what} name {:?} holds control characters or bidirectional controls: shown raw, it can rewrite a terminal or forge a line of a CI log; tfreq shows it escaped",
                    crate::escape::escape(n)
                ),
            )
            .name(n.to_string())
        })
        .collect()
}

/// `DUPLICATE_KEY`: an input name twice in the map.
fn duplicate_keys(msg: &Message) -> Vec<Finding> {
    msg.duplicate_keys
        .iter()
        .map(|(name, offset)| {
            Finding::new(
                Code::DuplicateKey,
                Severity::Warning,
                format!("{name:?} appears more than once (again at byte {offset}); the last entry wins, as in protobuf"),
            )
            .name(name.clone())
        })
        .collect()
}

/// `UNKNOWN_FIELD`: a field the schema does not have.
fn unknown_fields(msg: &Message) -> Vec<Finding> {
    msg.all_unknown()
        .map(|u| {
            let at = if u.path.is_empty() {
                String::from("top level")
            } else {
                u.path.clone()
            };
            Finding::new(
                Code::UnknownField,
                Severity::Warning,
                format!(
                    "field {} (wire type {}) at byte {} in {at} is not part of the {} schema; kept, not interpreted",
                    u.number, u.wire_type, u.offset, msg.wire
                ),
            )
        })
        .collect()
}

/// `DUPLICATE_FETCH` for every fetch listed again.
fn duplicate_fetches(msg: &Message) -> Vec<Finding> {
    let mut seen = std::collections::HashSet::new();
    msg.fetches
        .iter()
        .filter(|f| !seen.insert(f.as_str()))
        .map(|f| duplicate_fetch(msg.wire, f))
        .collect()
}

/// `NO_FETCHES`: an EAS request without `output_filter`.
fn no_fetches(msg: &Message) -> Option<Finding> {
    (msg.kind == Kind::Request && msg.wire == WireFormat::Eas && msg.fetches.is_empty()).then(|| {
        Finding::new(
            Code::NoFetches,
            Severity::Warning,
            "no output_filter: the EAS processor refuses a warm-up without fetches, and frozen models fail with 'Must specify at least one target to fetch'",
        )
    })
}

/// The tensor's dtype, or `BAD_DTYPE`: a `_REF` type, an unknown number, `DT_INVALID`.
fn bad_dtype(t: &Tensor) -> Result<DType, Finding> {
    let name = &t.name;
    let Some(d) = t.dtype.dtype() else {
        let what = if t.dtype.ref_of().is_some() {
            "a _REF type, which a TensorProto cannot carry"
        } else {
            "not a known DataType"
        };
        return Err(Finding::new(
            Code::BadDtype,
            Severity::Error,
            format!("{name:?}: dtype {} is {what}", t.dtype),
        )
        .name(name.clone()));
    };
    if d == DType::Invalid {
        return Err(Finding::new(
            Code::BadDtype,
            Severity::Error,
            format!("{name:?}: dtype is DT_INVALID (unset)"),
        )
        .name(name.clone()));
    }
    Ok(d)
}

/// `BAD_DTYPE` on EAS: a dtype the EAS `ArrayProto` has no values field for.
fn eas_cannot_carry(msg: &Message, t: &Tensor, d: DType) -> Option<Finding> {
    (msg.wire == WireFormat::Eas && !d.eas_can_carry()).then(|| {
        Finding::new(
            Code::BadDtype,
            Severity::Error,
            format!("{:?}: EAS has no values field for {d}", t.name),
        )
        .name(t.name.clone())
    })
}

/// How the values fill the shape: `VALUES_MISSING`, `VALUES_REPEAT_LAST`,
/// `VALUES_TRUNCATED`, `BAD_SHAPE` or `BAD_CONTENT` (nothing when exact).
fn values_fill(msg: &Message, t: &Tensor, d: DType, e: &Elements) -> Option<Finding> {
    let name = &t.name;
    let expected = e.expected.map_or("?".to_string(), |n| n.to_string());
    let eas_error = if msg.wire == WireFormat::Eas {
        Severity::Error
    } else {
        Severity::Note
    };
    let f = match e.fill {
        Fill::Exact => return None,
        Fill::Defaults if e.expected.unwrap_or(0) == 0 => return None,
        Fill::Defaults => Finding::new(
            Code::ValuesMissing,
            eas_error,
            format!(
                "{name:?}: shape {} holds {expected} values and none are given; TensorFlow fills zeros{}",
                t.shape,
                eas_fatal(msg)
            ),
        ),
        Fill::RepeatLast => Finding::new(
            Code::ValuesRepeatLast,
            eas_error,
            format!(
                "{name:?}: {} values for shape {} ({expected}); TensorFlow repeats the last value to fill it{}",
                e.stored,
                t.shape,
                eas_fatal(msg)
            ),
        ),
        Fill::Truncated => Finding::new(
            Code::ValuesTruncated,
            Severity::Error,
            format!(
                "{name:?}: {} values for shape {} ({expected}); TensorFlow silently drops the extra {}{}",
                e.stored,
                t.shape,
                e.stored as u64 - e.expected.unwrap_or(0),
                eas_fatal(msg)
            ),
        ),
        Fill::BadShape => Finding::new(
            Code::BadShape,
            Severity::Error,
            format!(
                "{name:?}: shape {} is not a tensor shape TensorFlow takes: {}; Tensor::FromProto refuses it",
                short_shape(&t.shape),
                t.shape.invalid().unwrap_or_default()
            ),
        ),
        Fill::BadContent => Finding::new(
            Code::BadContent,
            Severity::Error,
            format!(
                "{name:?}: {}; TensorFlow refuses it",
                content_size_text(t, d, e.expected)
            ),
        ),
    };
    Some(f.name(name.clone()))
}

/// `VALUES_IGNORED`: values in a field the dtype does not read (or beside
/// `tensor_content`).
fn values_ignored(msg: &Message, t: &Tensor, d: DType, e: &Elements) -> Vec<Finding> {
    let own = t.value_field(msg.wire);
    t.fields
        .iter()
        .filter(|(f, v)| (Some(*f) != own || e.source == Source::Content) && !v.is_empty())
        .map(|(f, v)| {
            Finding::new(
                Code::ValuesIgnored,
                Severity::Warning,
                format!(
                    "{:?}: {} values in {} are ignored: {d} reads {}",
                    t.name,
                    v.len(),
                    f.name(),
                    e.source
                ),
            )
            .name(t.name.clone())
        })
        .collect()
}

/// Adds the findings of [`lint`] to a command's own findings about the same request,
/// leaving out what the command already says: a finding with the same code and name,
/// and `NO_FETCHES` where `check`'s `EMPTY_OUTPUT_FILTER` says it with the model's
/// outputs. So `check` and `diff` report what `inspect` reports, at the same severity.
pub fn merge(into: &mut Vec<Finding>, lint: Vec<Finding>) {
    for f in lint {
        let said = into.iter().any(|g| {
            (g.code == f.code && g.name == f.name)
                || (f.code == Code::NoFetches && g.code == Code::EmptyOutputFilter)
        });
        if !said {
            into.push(f);
        }
    }
}

/// `DUPLICATE_FETCH` as every command reports it: TF Serving refuses the request
/// ("duplicate output tensor alias"); `Session::Run` on EAS computes it once and returns
/// it twice, so a warning there.
pub fn duplicate_fetch(wire: WireFormat, f: &str) -> Finding {
    let tfs = wire == WireFormat::TfServing;
    Finding::new(
        Code::DuplicateFetch,
        if tfs { Severity::Error } else { Severity::Warning },
        if tfs {
            format!("{f:?} is fetched twice: TF Serving refuses it ('duplicate output tensor alias: {f}')")
        } else {
            format!("{f:?} is fetched twice: TensorFlow computes it once and returns it twice")
        },
    )
    .name(f.to_string())
}

/// A shape for a message: the dims, or the rank and the first dims when there are many.
fn short_shape(s: &Shape) -> String {
    if s.dims.len() <= 16 {
        return s.to_string();
    }
    let head: Vec<String> = s.dims.iter().take(8).map(|d| d.size.to_string()).collect();
    format!("[{}, … ({} dims)]", head.join(", "), s.dims.len())
}

/// What `tensor_content` holds and what the shape needs:
/// `tensor_content is 20 bytes; 6 elements of DT_FLOAT need 24`.
pub fn content_size_text(t: &Tensor, d: DType, expected: Option<u64>) -> String {
    let have = t.content.as_ref().map_or(0, |c| c.len());
    let n = expected.map_or("?".to_string(), |n| n.to_string());
    match (d.info().size, expected) {
        (Some(sz), Some(e)) => format!(
            "tensor_content is {have} bytes; {e} element{} of {d} need {}",
            if e == 1 { "" } else { "s" },
            (e as u128) * sz as u128
        ),
        (None, _) if d == DType::String => format!(
            "tensor_content is {have} bytes, which is not {n} strings in TensorFlow's string list layout ({n} varint lengths, then the bytes, nothing after)"
        ),
        _ => format!("tensor_content is {have} bytes; {d} cannot be read from tensor_content"),
    }
}

/// Bits of the integer TensorFlow stores, for the dtypes whose typed field is wider
/// than they are: (bits, signed).
fn narrow_int(d: DType) -> Option<(u32, bool)> {
    use DType::*;
    Some(match d {
        Int8 | QInt8 => (8, true),
        UInt8 | QUInt8 => (8, false),
        Int16 | QInt16 => (16, true),
        UInt16 | QUInt16 => (16, false),
        Int4 => (4, true),
        UInt4 => (4, false),
        Int2 => (2, true),
        UInt2 => (2, false),
        _ => return None,
    })
}

/// The value TensorFlow's C++ reader keeps from `v` for an integer of `bits`
/// (`static_cast` to the narrow type: the low bits, sign-extended when signed).
pub fn wrap_int(v: i64, bits: u32, signed: bool) -> i64 {
    let shift = 64 - bits;
    if signed {
        (v << shift) >> shift
    } else {
        ((v as u64) << shift >> shift) as i64
    }
}

/// `VALUE_OUT_OF_RANGE`: values of a typed field wider than the dtype (`int_val` of an
/// int8, `half_val` bits above 16) that the builder refuses. TensorFlow's C++ reader
/// (`Tensor::FromProto`, used by TF Serving and the EAS processors) keeps the low bits
/// without a word (300 in an int8 becomes 44; checked with TensorFlow 2.21's
/// `ParseTensor`, recorded in `tests/data/values/manifest.json`), so the model computes
/// on another value than the file says: an error, as for `VALUES_TRUNCATED`.
/// `tf.make_ndarray` raises `OverflowError` on the same tensor.
fn out_of_range(t: &Tensor, d: DType, wire: WireFormat, source: Source) -> Option<Finding> {
    let Source::Field(field) = source else {
        return None;
    };
    let (bits, signed, what) = match (field, narrow_int(d)) {
        (ValueField::Int, Some((bits, signed))) => (bits, signed, d.name().to_string()),
        (ValueField::Half, _) if wire == WireFormat::TfServing => {
            (16, false, format!("the 16-bit patterns of {d}"))
        }
        _ => return None,
    };
    let Some(Values::I32(v)) = t.field(field) else {
        return None;
    };
    let (lo, hi) = if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let mut first = None;
    let mut count = 0usize;
    for (i, x) in v.iter().enumerate() {
        let x = x as i64;
        if x < lo || x > hi {
            count += 1;
            first.get_or_insert((i, x));
        }
    }
    let (i, x) = first?;
    Some(Finding::new(
        Code::ValueOutOfRange,
        Severity::Error,
        format!(
            "{:?}: {}[{i}] is {x}, outside {what} ({lo}..={hi}){}; TensorFlow keeps the low {bits} bits without a word ({x} becomes {}), so the model sees another value than the file holds",
            t.name,
            field.name(),
            if count > 1 {
                format!(" ({count} values out of range in all)")
            } else {
                String::new()
            },
            wrap_int(x, bits, signed)
        ),
    ))
}

fn eas_fatal(msg: &Message) -> &'static str {
    if msg.wire == WireFormat::Eas {
        " (the open-source EAS processor aborts on any count other than the exact one)"
    } else {
        ""
    }
}
