//! Problems a single request or response carries on its own (what `tfreq inspect`
//! lists): values TensorFlow would fill or cut, malformed content, duplicate keys,
//! unknown fields, dtypes the format cannot carry, and the EAS processor's demands.

use crate::analysis::{Finding, Severity};
use crate::model::{Fill, Kind, Message, Source, WireFormat};

/// Every problem found in `msg`.
///
/// ```
/// use tfreq::{analysis::lint::lint, DType, TFRequest};
/// let mut req = TFRequest::new("serving_default");
/// req.add_feed("x", &[2], DType::Float, vec![1.0f32, 2.0])?;
/// let msg = tfreq::decode(&req.to_bytes())?;
/// let codes: Vec<_> = lint(&msg).iter().map(|f| f.code).collect();
/// assert_eq!(codes, vec!["NO_FETCHES"]); // the EAS processor refuses warm-ups without fetches
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn lint(msg: &Message) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, offset) in &msg.duplicate_keys {
        out.push(
            Finding::new(
                "DUPLICATE_KEY",
                Severity::Warning,
                format!("{name:?} appears more than once (again at byte {offset}); the last entry wins, as in protobuf"),
            )
            .name(name.clone()),
        );
    }
    for u in msg.all_unknown() {
        let at = if u.path.is_empty() {
            String::from("top level")
        } else {
            u.path.clone()
        };
        out.push(Finding::new(
            "UNKNOWN_FIELD",
            Severity::Warning,
            format!(
                "field {} (wire type {}) at byte {} in {at} is not part of the {} schema; kept, not interpreted",
                u.number, u.wire_type, u.offset, msg.wire
            ),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for f in &msg.fetches {
        if !seen.insert(f.as_str()) {
            out.push(
                Finding::new("DUPLICATE_FETCH", Severity::Warning, format!("output {f:?} is fetched twice; TF Serving refuses duplicate output aliases"))
                    .name(f.clone()),
            );
        }
    }
    if msg.kind == Kind::Request && msg.wire == WireFormat::Eas && msg.fetches.is_empty() {
        out.push(Finding::new(
            "NO_FETCHES",
            Severity::Warning,
            "no output_filter: the EAS processor refuses a warm-up without fetches, and frozen models fail with 'Must specify at least one target to fetch'",
        ));
    }
    for t in &msg.tensors {
        let name = t.name.clone();
        let Some(d) = t.dtype.dtype() else {
            let what = if t.dtype.ref_of().is_some() {
                "a _REF type, which a TensorProto cannot carry"
            } else {
                "not a known DataType"
            };
            out.push(
                Finding::new(
                    "BAD_DTYPE",
                    Severity::Error,
                    format!("{name:?}: dtype {} is {what}", t.dtype),
                )
                .name(name),
            );
            continue;
        };
        if d == crate::DType::Invalid {
            out.push(
                Finding::new(
                    "BAD_DTYPE",
                    Severity::Error,
                    format!("{name:?}: dtype is DT_INVALID (unset)"),
                )
                .name(name),
            );
            continue;
        }
        if msg.wire == WireFormat::Eas && !d.eas_can_carry() {
            out.push(
                Finding::new(
                    "BAD_DTYPE",
                    Severity::Error,
                    format!("{name:?}: EAS has no values field for {d}"),
                )
                .name(name.clone()),
            );
        }
        let e = t.elements(msg.wire);
        let expected = e.expected.map_or("?".to_string(), |n| n.to_string());
        match e.fill {
            Fill::Exact => {}
            Fill::Defaults => {
                if e.expected.unwrap_or(0) > 0 {
                    out.push(Finding::new(
                        "VALUES_MISSING",
                        if msg.wire == WireFormat::Eas { Severity::Error } else { Severity::Note },
                        format!("{name:?}: shape {} holds {expected} values and none are given; TensorFlow fills zeros{}", t.shape, eas_fatal(msg)),
                    ).name(name.clone()));
                }
            }
            Fill::RepeatLast => out.push(Finding::new(
                "VALUES_REPEAT_LAST",
                if msg.wire == WireFormat::Eas { Severity::Error } else { Severity::Note },
                format!("{name:?}: {} values for shape {} ({expected}); TensorFlow repeats the last value to fill it{}", e.stored, t.shape, eas_fatal(msg)),
            ).name(name.clone())),
            Fill::Truncated => out.push(Finding::new(
                "VALUES_TRUNCATED",
                Severity::Error,
                format!("{name:?}: {} values for shape {} ({expected}); TensorFlow silently drops the extra {}{}", e.stored, t.shape, e.stored as u64 - e.expected.unwrap_or(0), eas_fatal(msg)),
            ).name(name.clone())),
            Fill::BadShape => out.push(Finding::new(
                "BAD_SHAPE",
                Severity::Error,
                format!("{name:?}: shape {} is not a valid tensor shape (negative dim, unknown rank or overflow)", t.shape),
            ).name(name.clone())),
            Fill::BadContent => out.push(Finding::new(
                "BAD_CONTENT",
                Severity::Error,
                format!(
                    "{name:?}: tensor_content is {} bytes, which is not {expected} elements of {d}; TensorFlow refuses it",
                    t.content.as_ref().map_or(0, |c| c.len())
                ),
            ).name(name.clone())),
        }
        let own = t.value_field(msg.wire);
        for (f, v) in &t.fields {
            let ignored = Some(*f) != own || e.source == Source::Content;
            if ignored && !v.is_empty() {
                out.push(
                    Finding::new(
                        "VALUES_IGNORED",
                        Severity::Warning,
                        format!(
                            "{name:?}: {} values in {} are ignored: {d} reads {}",
                            v.len(),
                            f.name(),
                            e.source
                        ),
                    )
                    .name(name.clone()),
                );
            }
        }
    }
    out
}

fn eas_fatal(msg: &Message) -> &'static str {
    if msg.wire == WireFormat::Eas {
        " (the open-source EAS processor aborts on any count other than the exact one)"
    } else {
        ""
    }
}
