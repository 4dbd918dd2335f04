//! [`super::diff`] with batching parameters: the padded batch sizes production and
//! the warm-up run ([`crate::analysis::batch`]).

use super::*;

/// [`diff_batches`] with what the model tells, as [`diff_labeled`] resolves executor keys
/// with it: a TF Serving predict request's empty `output_filter` is every output of its
/// signature (so a warm-up that fetches all and production that lists every output share
/// a batch group), and a warm-up request that names no model belongs to the one model
/// production's requests name (TF Serving ignores the name in warm-up records).
/// Without a model it is [`diff_batches`].
pub fn diff_batches_with_model(
    report: &mut Report,
    rule: &BatchRule,
    source: &str,
    warmup: &[Labeled],
    prod: &[Labeled],
    strict: bool,
    model: Option<&MetaGraph>,
) {
    let Some(mg) = model else {
        return diff_batches(report, rule, source, warmup, prod, strict);
    };
    let named: BTreeSet<&str> = prod
        .iter()
        .filter_map(|l| l.message.model_spec.as_ref())
        .map(|s| s.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let one_model = match named.len() {
        1 => named.into_iter().next(),
        _ => None,
    };
    let fit = |m: &Message, name: Option<&str>| -> Option<Message> {
        let mut out: Option<Message> = None;
        if m.wire != WireFormat::TfServing || m.method != Method::Predict {
            return None;
        }
        if m.fetches.is_empty()
            && let Some(sig) = mg.signatures.get(m.effective_signature())
        {
            out.get_or_insert_with(|| m.clone()).fetches = sig.outputs.keys().cloned().collect();
        }
        let unnamed = m.model_spec.as_ref().is_none_or(|s| s.name.is_empty());
        if let (Some(name), true) = (name, unnamed) {
            crate::formats::set_model_name(out.get_or_insert_with(|| m.clone()), name);
        }
        out
    };
    let wf: Vec<Option<Message>> = warmup.iter().map(|l| fit(l.message, one_model)).collect();
    let pf: Vec<Option<Message>> = prod.iter().map(|l| fit(l.message, None)).collect();
    let w2: Vec<Labeled> = warmup
        .iter()
        .zip(&wf)
        .map(|(l, f)| Labeled::new(l.file, l.label, f.as_ref().unwrap_or(l.message)))
        .collect();
    let p2: Vec<Labeled> = prod
        .iter()
        .zip(&pf)
        .map(|(l, f)| Labeled::new(l.file, l.label, f.as_ref().unwrap_or(l.message)))
        .collect();
    diff_batches(report, rule, source, &w2, &p2, strict);
}

/// With batching parameters ([`crate::analysis::BatchRule`]): adds the batch-size comparison
/// of the same warm-up and production requests to their [`diff_labeled`] report: each
/// production request gets its batch
/// findings, and its `BATCH_SIZE_CHANGED` is judged again by padded size (a note when
/// the padded sizes are warmed; dropped when `BATCH_SIZE_NOT_WARMED`, `BATCH_TOO_LARGE`
/// or `NOT_BATCHABLE` says more); the warm-up requests' refusals are input problems;
/// the section is the report's `batching`.
pub fn diff_batches(
    report: &mut Report,
    rule: &BatchRule,
    source: &str,
    warmup: &[Labeled],
    prod: &[Labeled],
    strict: bool,
) {
    let w: Vec<(&str, &Message)> = warmup.iter().map(|l| (l.label, l.message)).collect();
    let p: Vec<(&str, &Message)> = prod.iter().map(|l| (l.label, l.message)).collect();
    let d = crate::analysis::batch::diff_sizes(rule, source, &w, &p, strict);
    for (req, (findings, warmed)) in report.requests.iter_mut().zip(d.production) {
        let keep_as_note = warmed && findings.is_empty();
        req.findings.retain_mut(|f| {
            if f.code != Code::BatchSizeChanged {
                return true;
            }
            if keep_as_note {
                f.severity = Severity::Note;
                f.message = format!(
                    "{:?}: shape {} in the warm-up, {} in production; with the batching parameters given, production's batch runs padded to a size the warm-up reaches: no new compiled shape",
                    f.name.as_deref().unwrap_or_default(),
                    f.left.as_deref().unwrap_or_default(),
                    f.right.as_deref().unwrap_or_default()
                );
            }
            keep_as_note
        });
        req.findings.extend(findings);
    }
    for (w, f) in warmup.iter().zip(d.warmup) {
        if !f.is_empty() {
            report.add_problems(w.file, w.label, f);
        }
    }
    report.batching = Some(d.sizes);
    report.summarise();
}
