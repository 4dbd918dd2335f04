//! The rules of [`super::diff`]: one function a finding code, in the order a report
//! lists them, comparing a production request with the warm-up request it is weighed
//! against ([`Pair`]).

use super::*;

/// What a new executor costs, said by every rule that finds one.
pub(super) const COST: &str = "the first such production request builds new executors (pruning, optimising and partitioning the graph, creating kernels): the cold start the warm-up was meant to absorb";

/// A production request, the warm-up request it is compared with, and their keys.
pub(super) struct Pair<'a> {
    pub(super) w: &'a Message,
    pub(super) wkey: &'a ExecutorKey,
    pub(super) p: &'a Message,
    pub(super) pkey: &'a ExecutorKey,
    pub(super) opts: &'a DiffOptions<'a>,
}

/// The findings of one production request against one warm-up request: the rules in
/// the order a report lists them.
pub(super) fn compare(pair: &Pair, out: &mut Vec<Finding>) {
    if pair.w.method.takes_examples() || pair.p.method.takes_examples() {
        out.extend(wire_format_changed(pair));
        out.extend(model_name_changed(pair));
        out.extend(method_changed(pair));
        if methods_agree(pair.wkey.method, pair.pkey.method) {
            out.extend(signature_changed(pair));
            if pair.wkey.signature == pair.pkey.signature {
                out.extend(features_changed(pair));
            }
        }
        return;
    }
    out.extend(wire_format_changed(pair));
    out.extend(model_name_changed(pair));
    out.extend(signature_defaulted(pair));
    out.extend(signature_changed(pair));
    out.extend(feed_set_changed(pair));
    out.extend(fetch_set_changed(pair));
    out.extend(fetch_all_resolved(pair));
    out.extend(fetch_order_only(pair));
    out.extend(input_order_only(pair));
    for pt in &pair.p.tensors {
        if let Some(wt) = pair.w.tensor(&pt.name) {
            out.extend(tensor_changed(pair, wt, pt));
        }
    }
}

/// `WIRE_FORMAT_CHANGED`: one is an EAS request, the other TF Serving.
pub(super) fn wire_format_changed(Pair { w, p, .. }: &Pair) -> Option<Finding> {
    (w.wire != p.wire).then(|| {
        Finding::new(
            Code::WireFormatChanged,
            Severity::Warning,
            format!(
                "the warm-up is a {} request and production a {} request: they go to different servers, whose name rules differ",
                w.wire, p.wire
            ),
        )
        .sides(Some(w.wire.as_str().into()), Some(p.wire.as_str().into()))
    })
}

/// `SIGNATURE_DEFAULTED`: an EAS request that names no signature, compared as
/// `serving_default`, as `check` checks it ([`crate::analysis::signature_of`]).
pub(super) fn signature_defaulted(Pair { w, p, .. }: &Pair) -> Vec<Finding> {
    [("production's request", *p), ("the warm-up request", *w)]
        .into_iter()
        .filter_map(|(side, m)| {
            crate::analysis::check::signature_defaulted(m).map(|f| Finding {
                message: f.message.replacen("the request", side, 1),
                ..f
            })
        })
        .collect()
}

/// `MODEL_NAME_CHANGED`: both requests name a model, and not the same one.
pub(super) fn model_name_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    let (Some(w), Some(p)) = (&wkey.model, &pkey.model) else {
        return None;
    };
    (w != p).then(|| {
        Finding::new(
            Code::ModelNameChanged,
            Severity::Note,
            format!(
                "production's request names model {p:?}, the warm-up record {w:?}: TF Serving runs a warm-up file's records on the model whose directory holds it, whatever model_spec.name they carry, so this warm-up warms {p:?} only if it ships in {p:?}'s assets.extra"
            ),
        )
        .name("model_spec.name")
        .sides(Some(w.clone()), Some(p.clone()))
    })
}

/// `SIGNATURE_CHANGED` for another method: a classify, regress or multi-inference
/// request runs its signature's fixed feeds and fetches (the serialized examples and
/// every output), a predict request its own, so no two of different methods share an
/// executor key. The features of two classify requests are not in the key (TF Serving
/// feeds them all as one serialized string tensor).
pub(super) fn method_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    (!methods_agree(wkey.method, pkey.method)).then(|| {
        Finding::new(
            Code::SignatureChanged,
            Severity::Error,
            format!(
                "production sends a {} request to signature {:?}, the warm-up a {} request to {:?}: another method runs another feed and fetch set, so {COST}",
                pkey.method.as_str(), pkey.signature, wkey.method.as_str(), wkey.signature
            ),
        )
        .name(pkey.to_string())
        .sides(Some(wkey.to_string()), Some(pkey.to_string()))
    })
}

/// `SIGNATURE_CHANGED`: another signature is another feed and fetch set.
pub(super) fn signature_changed(Pair { wkey, pkey, .. }: &Pair) -> Option<Finding> {
    (wkey.signature != pkey.signature).then(|| {
        Finding::new(
            Code::SignatureChanged,
            Severity::Error,
            format!(
                "production runs signature {:?}, the warm-up {:?}: another signature is another feed and fetch set, so {COST}",
                pkey.signature, wkey.signature
            ),
        )
        .name(pkey.signature.clone())
        .sides(Some(wkey.signature.clone()), Some(pkey.signature.clone()))
    })
}

/// `FEED_ADDED`, `FEED_MISSING`: another feed set.
pub(super) fn feed_set_changed(pair: &Pair) -> Vec<Finding> {
    let unsettled = pair.p.wire == WireFormat::TfServing && pair.opts.model.is_none();
    let tfs_note = if unsettled {
        " On TF Serving the feed set is the signature's input set: one of the two requests is refused unless the signature has a default for it."
    } else {
        ""
    };
    let feeds = NameSet {
        verb: "feed",
        verbs: "feeds",
        added: Code::FeedAdded,
        missing: Code::FeedMissing,
        input: true,
    };
    let found = feeds.changes(
        pair,
        &pair.wkey.feeds.iter().cloned().collect::<Vec<_>>(),
        &pair.pkey.feeds.iter().cloned().collect::<Vec<_>>(),
        &format!("{COST}.{tfs_note}"),
    );
    if unsettled {
        found.into_iter().map(|f| f.hint(Hint::Model)).collect()
    } else {
        found
    }
}

/// `FETCH_ALL_UNRESOLVED` when one side fetches every output (TF Serving's empty
/// `output_filter`) and the model does not say what that is; else `FETCH_ADDED`,
/// `FETCH_MISSING`: another fetch set.
pub(super) fn fetch_set_changed(pair: &Pair) -> Vec<Finding> {
    let Pair {
        wkey, pkey, opts, ..
    } = pair;
    if wkey.fetch_all == pkey.fetch_all {
        if wkey.fetch_all {
            return Vec::new();
        }
        let fetches = NameSet {
            verb: "fetch",
            verbs: "fetches",
            added: Code::FetchAdded,
            missing: Code::FetchMissing,
            input: false,
        };
        return fetches.changes(pair, &wkey.fetches, &pkey.fetches, &format!("{COST}."));
    }
    let (all, explicit) = if wkey.fetch_all {
        ("the warm-up", &pkey.fetches)
    } else {
        ("production", &wkey.fetches)
    };
    let why = if opts.model.is_some() {
        format!("signature {:?} is not in the model, so", pkey.signature)
    } else {
        "without the model".to_string()
    };
    vec![Finding::new(
        Code::FetchAllUnresolved,
        Severity::Error,
        format!(
            "{all} has an empty output_filter (TF Serving fetches every output of the signature), the other fetches {{{}}}; {why} tfreq cannot tell whether that is the same set",
            list(explicit)
        ),
    )
    .sides(Some(fetch_text(wkey)), Some(fetch_text(pkey)))
    .hint(Hint::Model)]
}

/// `FETCH_ALL_RESOLVED`: what an empty `output_filter` fetches, from the model, for
/// each side that has one.
pub(super) fn fetch_all_resolved(pair: &Pair) -> Vec<Finding> {
    let sides = [
        ("the warm-up", pair.w, pair.wkey),
        ("production", pair.p, pair.pkey),
    ];
    sides
        .into_iter()
        .filter(|(_, m, key)| {
            m.wire == WireFormat::TfServing && m.fetches.is_empty() && !key.fetch_all
        })
        .filter_map(|(side, _, key)| {
            let sig = model_sig(pair.opts, key)?;
            Some(Finding::new(
                Code::FetchAllResolved,
                Severity::Note,
                format!(
                    "{side} has an empty output_filter: TF Serving fetches every output of {:?}: {}",
                    sig.key,
                    sig.outputs.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ))
        })
        .collect()
}

/// `ORDER_ONLY` on `output_filter`: the same fetch set in another sequence.
pub(super) fn fetch_order_only(
    Pair {
        w, wkey, p, pkey, ..
    }: &Pair,
) -> Option<Finding> {
    let wf: Vec<&str> = w.fetches.iter().map(String::as_str).collect();
    let pf: Vec<&str> = p.fetches.iter().map(String::as_str).collect();
    (wkey.fetches == pkey.fetches && !wf.is_empty() && !pf.is_empty() && wf != pf).then(|| {
        Finding::new(
            Code::OrderOnly,
            Severity::Note,
            "output_filter lists the same names in another order: TensorFlow sorts feed and fetch names before looking up its executor, so order does not matter",
        )
        .name("output_filter")
        .sides(Some(wf.join(", ")), Some(pf.join(", ")))
    })
}

/// `ORDER_ONLY` on the inputs: the same feed set in another sequence.
pub(super) fn input_order_only(
    Pair {
        w, wkey, p, pkey, ..
    }: &Pair,
) -> Option<Finding> {
    let wi: Vec<&str> = w.tensors.iter().map(|t| t.name.as_str()).collect();
    let pi: Vec<&str> = p.tensors.iter().map(|t| t.name.as_str()).collect();
    (wkey.feeds == pkey.feeds && wi != pi && same_set(&wi, &pi)).then(|| {
        Finding::new(
            Code::OrderOnly,
            Severity::Note,
            "the inputs come in another order: a protobuf map has no order, and TensorFlow sorts feed names anyway, so order does not matter",
        )
        .name("inputs")
        .sides(Some(wi.join(", ")), Some(pi.join(", ")))
    })
}

/// The first that applies to a feed both sides send: another dtype, rank, shape or
/// values.
pub(super) fn tensor_changed(pair: &Pair, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    dtype_changed(wt, pt)
        .or_else(|| rank_changed(pair.opts, wt, pt))
        .or_else(|| shape_changed(pair.opts, wt, pt))
        .or_else(|| values_differ(pair, wt, pt))
}

/// `DTYPE_CHANGED`: the model takes one dtype, so one of the two is refused.
pub(super) fn dtype_changed(wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    (wt.dtype != pt.dtype).then(|| {
        Finding::new(
            Code::DtypeChanged,
            Severity::Error,
            format!(
                "{name:?} is {} in the warm-up and {} in production: the model takes one dtype, so one of the two requests is refused by the session",
                wt.dtype, pt.dtype
            ),
        )
        .name(name.clone())
        .sides(Some(wt.dtype.to_string()), Some(pt.dtype.to_string()))
    })
}

/// `RANK_CHANGED`: the same feed with another rank. TensorFlow runs both when the graph
/// takes either: TF Serving does not hold a request to its signature's shapes, and
/// half_plus_two, whose signature declares (-1, 1), answered a rank-1 `x`
/// (tests/data/check/manifest.json, `hp2_rank1.bin`). So, as `check`'s
/// `SHAPE_INCOMPATIBLE`, a warning, and an error with `--strict-shapes` (a model compiled
/// per shape, or whose ops refuse the other rank).
pub(super) fn rank_changed(opts: &DiffOptions, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    let (ws, ps) = (wt.shape.sizes(), pt.shape.sizes());
    let (severity, hint) = if opts.strict_shapes {
        (Severity::Error, None)
    } else {
        (Severity::Warning, Some(Hint::StrictShapes))
    };
    (ws.len() != ps.len()).then(|| {
        Finding::new(
            Code::RankChanged,
            severity,
            format!(
                "{name:?} has shape {} (rank {}) in the warm-up and {} (rank {}) in production: TensorFlow runs both where the graph accepts either rank (half_plus_two answered a rank-1 x for its (-1, 1) signature), but an op that needs one rank refuses the other, and shape-specialising compilers (XLA, TF Serving batching, PAI-Blade) compile again",
                wt.shape, ws.len(), pt.shape, ps.len()
            ),
        )
        .name(name.clone())
        .sides(Some(wt.shape.to_string()), Some(pt.shape.to_string()))
        .with_hint(hint)
    })
}

/// `BATCH_SIZE_CHANGED` (dim 0 only) or `SHAPE_CHANGED`: the same executor, but
/// shape-specialising compilers compile again; errors with `strict_shapes`.
pub(super) fn shape_changed(opts: &DiffOptions, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    let (ws, ps) = (wt.shape.sizes(), pt.shape.sizes());
    if ws == ps {
        return None;
    }
    let batch_only = ws.first() != ps.first() && ws.get(1..) == ps.get(1..);
    let (code, what) = if batch_only {
        (
            Code::BatchSizeChanged,
            format!(
                "batch size {} in the warm-up, {} in production",
                ws.first().copied().unwrap_or(0),
                ps.first().copied().unwrap_or(0)
            ),
        )
    } else {
        (
            Code::ShapeChanged,
            format!(
                "shape {} in the warm-up, {} in production",
                wt.shape, pt.shape
            ),
        )
    };
    let (severity, hint) = if opts.strict_shapes {
        (Severity::Error, None)
    } else {
        (Severity::Warning, Some(Hint::StrictShapes))
    };
    Some(
        Finding::new(
            code,
            severity,
            format!(
                "{name:?}: {what}. The same executor for TensorFlow's session, but XLA / jit_compile, TF Serving batching and PAI-Blade compile per shape: this shape is not warmed"
            ),
        )
        .name(name.clone())
        .sides(Some(wt.shape.to_string()), Some(pt.shape.to_string()))
        .with_hint(hint),
    )
}

/// `VALUES_DIFFER`: other elements after TensorFlow's reading rules (no effect on
/// executors).
pub(super) fn values_differ(pair: &Pair, wt: &Tensor, pt: &Tensor) -> Option<Finding> {
    let name = &pt.name;
    (!values_equal(wt, pair.w.wire, pt, pair.p.wire)).then(|| {
        Finding::new(
            Code::ValuesDiffer,
            Severity::Note,
            format!("{name:?} has other values in production: values are not in the executor key, so this does not matter for warm-up"),
        )
        .name(name.clone())
    })
}

/// One name set of the executor key (feeds or fetches) and its finding codes.
pub(super) struct NameSet {
    verb: &'static str,
    verbs: &'static str,
    added: Code,
    missing: Code,
    input: bool,
}

impl NameSet {
    /// A finding for every name production has and the warm-up lacks, and back; for a
    /// name both have, when one lists it more times than the other (TensorFlow's
    /// executor key keeps a repeated fetch). `warm` and `prod` are sorted.
    fn changes(&self, pair: &Pair, warm: &[String], prod: &[String], cost: &str) -> Vec<Finding> {
        let (verb, verbs, opts) = (self.verb, self.verbs, pair.opts);
        let times = |n: usize| match n {
            1 => "once".to_string(),
            2 => "twice".to_string(),
            n => format!("{n} times"),
        };
        let mut added = Vec::new();
        let mut missing = Vec::new();
        for (f, (w, p)) in counted(warm, prod) {
            let name = f.to_string();
            if p > w && w == 0 {
                added.push(
                    Finding::new(
                        self.added,
                        Severity::Error,
                        format!("production also {verbs} {f:?}, the warm-up does not: a new {verb} set, so {cost}{}", same_tensor(opts, pair.pkey, f, warm, self.input)),
                    )
                    .name(name.clone())
                    .sides(None, Some(name)),
                );
            } else if w > p && p == 0 {
                missing.push(
                    Finding::new(
                        self.missing,
                        Severity::Error,
                        format!("production does not {verb} {f:?}, the warm-up does: a new {verb} set, so {cost}{}", same_tensor(opts, pair.wkey, f, prod, self.input)),
                    )
                    .name(name.clone())
                    .sides(Some(name), None),
                );
            } else if w != p {
                let finding = Finding::new(
                    if p > w { self.added } else { self.missing },
                    Severity::Error,
                    format!("production {verbs} {f:?} {}, the warm-up {}: TensorFlow keeps a repeated name in its executor key (DirectSession::GetOrCreateExecutors sorts the names without removing repeats), so {cost}", times(p), times(w)),
                )
                .name(name.clone())
                .sides(Some(vec![name.as_str(); w].join(", ")), Some(vec![name.as_str(); p].join(", ")));
                if p > w {
                    added.push(finding);
                } else {
                    missing.push(finding);
                }
            }
        }
        added.into_iter().chain(missing).collect()
    }
}

/// With the model: " (\"x:0\" is the tensor name of alias \"x\", which the other side
/// uses: ...)" when `name` and a name of `other` are two names of one tensor.
pub(super) fn same_tensor(
    opts: &DiffOptions,
    key: &ExecutorKey,
    name: &str,
    other: &[String],
    input: bool,
) -> String {
    let Some(sig) = model_sig(opts, key) else {
        return String::new();
    };
    let found = if input {
        sig.find_input(name)
    } else {
        sig.find_output(name)
    };
    let Some((alias, spec, _)) = found else {
        return String::new();
    };
    let twin = [alias, spec.name.as_str()]
        .into_iter()
        .find(|n| *n != name && !n.is_empty() && other.iter().any(|o| o == n));
    match twin {
        Some(t) => format!(
            " {name:?} and {t:?} name the same tensor (alias {alias:?}, tensor {:?}): a processor that passes names to Session::Run as given (the open-source EAS processor does) builds another executor; one that maps aliases to tensor names would not.",
            spec.name
        ),
        None => String::new(),
    }
}

pub(super) fn fetch_text(k: &ExecutorKey) -> String {
    if k.fetch_all {
        "(all outputs)".into()
    } else {
        list(&k.fetches)
    }
}

pub(super) fn same_set(a: &[&str], b: &[&str]) -> bool {
    a.iter().collect::<BTreeSet<_>>() == b.iter().collect::<BTreeSet<_>>()
}

/// Whether two tensors (dtype and shape already equal) hold the same elements after
/// TensorFlow's reading rules: `tensor_content` or the typed field, a short list's last
/// value repeated, no values read as zeros. So a one-value warm-up tensor and a full
/// production tensor of that value are equal (checked against TensorFlow's
/// `ParseTensor` in `tests/data/values/`). Floats compare by bit pattern: `-0.0` is not
/// `0.0`, a NaN equals the same NaN.
pub(super) fn values_equal(a: &Tensor, wa: WireFormat, b: &Tensor, wb: WireFormat) -> bool {
    let (ea, eb) = (a.elements(wa), b.elements(wb));
    let readable =
        |e: &crate::model::Elements| !matches!(e.fill, Fill::BadShape | Fill::BadContent);
    let read = readable(&ea) && readable(&eb);
    if ea.fill == eb.fill && ea.stored == eb.stored {
        // The same stored count, used the same way (the last one repeated, the ones past
        // the shape dropped): equal exactly when the stored elements TensorFlow uses are.
        // Runs of wire bytes compare as bytes first (a memcmp, not a gigabyte of
        // element-by-element reads), then element by element from the first byte that
        // differs.
        let span = match (ea.expected, eb.expected) {
            (Some(n), Some(m)) if n == m && read => n.min(ea.stored as u64) as usize,
            _ => ea.stored,
        };
        return ea.first_stored_difference(&eb, span).is_none();
    }
    match (ea.expected, eb.expected) {
        (Some(n), Some(m)) if n == m && read => {
            // Element i is stored[min(i, stored - 1)]: past the longer list both sides
            // repeat their last value, so comparing that far settles it.
            let span = (ea.stored.max(eb.stored).max(1) as u64).min(n);
            (0..span as usize).all(|i| same_scalar(ea.get(i), eb.get(i)))
        }
        // Tensors TensorFlow refuses, storing other counts (or used otherwise): other
        // values.
        _ => false,
    }
}
