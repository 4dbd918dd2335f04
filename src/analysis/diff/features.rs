//! The features of two requests' tf.Examples, compared for [`super::diff`]
//! (`FEATURES_DIFFER`, `FEATURE_NOT_IN_WARMUP`, `FEATURE_NOT_IN_PRODUCTION`).

use super::*;

/// The features of a request's examples, as TF Serving sends each example (the context's
/// features, then the example's own: [`crate::analysis::check_examples`]): how many examples
/// carry each name.
#[derive(Debug)]
pub(super) struct FeatureSets {
    /// Examples in the request.
    pub(super) examples: usize,
    /// Each feature name some example carries, with the number of examples that do.
    pub(super) carried: BTreeMap<String, usize>,
}

impl FeatureSets {
    /// `None` for a request without examples (`EMPTY_INPUT` says that one).
    pub(super) fn of(msg: &Message) -> Option<FeatureSets> {
        let input = msg.input.as_ref().filter(|i| !i.examples.is_empty())?;
        let mut carried: BTreeMap<String, usize> = BTreeMap::new();
        for ex in &input.examples {
            let names: BTreeSet<&str> = ex
                .features
                .iter()
                .chain(input.context.iter().flat_map(|c| c.features.iter()))
                .map(|f| f.name.as_str())
                .collect();
            for n in names {
                *carried.entry(n.to_string()).or_default() += 1;
            }
        }
        Some(FeatureSets {
            examples: input.examples.len(),
            carried,
        })
    }

    /// How many examples carry `name`.
    fn count(&self, name: &str) -> usize {
        self.carried.get(name).copied().unwrap_or(0)
    }

    /// The features every example carries.
    fn in_every_example(&self) -> BTreeSet<&str> {
        self.carried
            .iter()
            .filter(|&(_, &n)| n == self.examples)
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// Which of its examples lack `name`, in words.
    fn lacking(&self, name: &str) -> String {
        match self.count(name) {
            0 if self.examples == 1 => "its example lacks it".to_string(),
            0 => format!("none of its {} examples carries it", self.examples),
            n if self.examples - n == 1 => format!("1 of its {} examples lacks it", self.examples),
            n => format!(
                "{} of its {} examples lack it",
                self.examples - n,
                self.examples
            ),
        }
    }
}

/// What the model's `ParseExample` makes of a feature a request's examples lack.
pub(super) enum Need {
    /// A dense feature without a default, of this parser type (`float`): the parser
    /// refuses the request.
    Required(&'static str),
    /// Not required: parsed with a default, as a sparse or ragged value, or not at all.
    Optional(String),
}

/// The feature specs of the signatures a request runs (a multi-inference request: each
/// task's), or `None` when the model does not give every one (no `--model`, or a model
/// file without the graph: metadata JSON, `saved_model_cli` text).
pub(super) fn example_specs<'a>(
    opts: &DiffOptions<'a>,
    msg: &Message,
) -> Option<Vec<&'a crate::signature::ExampleSpec>> {
    let mg = opts.model?;
    let sigs: Vec<&str> = if msg.method == crate::model::Method::MultiInference {
        msg.tasks.iter().map(|t| t.signature()).collect()
    } else {
        vec![msg.effective_signature()]
    };
    sigs.iter()
        .map(|s| mg.signatures.get(*s).and_then(|sig| sig.examples.as_ref()))
        .collect()
}

pub(super) fn need(specs: &[&crate::signature::ExampleSpec], name: &str) -> Need {
    use crate::analysis::features::kind_of;
    let dense = specs
        .iter()
        .flat_map(|s| s.dense.iter())
        .filter(|d| d.key == name);
    let mut how = None;
    for d in dense {
        if d.default.is_none() {
            return Need::Required(kind_of(d.dtype));
        }
        how = Some(format!(
            "a dense {} feature with a default ({}), which the parser gives an example that lacks it",
            kind_of(d.dtype),
            d.default.as_deref().unwrap_or_default()
        ));
    }
    if let Some(h) = how {
        return Need::Optional(h);
    }
    if specs.iter().any(|s| s.sparse.iter().any(|v| v.key == name)) {
        return Need::Optional(
            "a variable-length (sparse) feature, empty in an example that lacks it".into(),
        );
    }
    if specs.iter().any(|s| s.ragged.iter().any(|v| v.key == name)) {
        return Need::Optional("a ragged feature, empty in an example that lacks it".into());
    }
    Need::Optional("a feature the signature's ParseExample does not read: it is ignored".into())
}

/// `FEATURES_DIFFER`, `FEATURE_NOT_IN_WARMUP`, `FEATURE_NOT_IN_PRODUCTION`: the features
/// every example of the warm-up request carries and those every production example
/// carries differ (a feature only some examples carry on both sides is no change: `check`
/// judges each request's examples). The executor is the same whatever the features (the
/// signature's serialized-examples input is fed either way), but `ParseExample` refuses
/// an example that lacks a dense feature without a default: in a warm-up record that
/// fails the model load (TF Serving stops at the first failing record:
/// tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc,
/// `TF_RETURN_IF_ERROR(warmup_request_executor(prediction_log))`), in production the
/// request. Whether a feature is required comes from the signature's `ParseExample`
/// spec (`--model` with the graph); without it, that cannot be told.
pub(super) fn features_changed(pair: &Pair) -> Vec<Finding> {
    let (Some(w), Some(p)) = (FeatureSets::of(pair.w), FeatureSets::of(pair.p)) else {
        return Vec::new();
    };
    let (w_all, p_all) = (w.in_every_example(), p.in_every_example());
    if w_all == p_all {
        return Vec::new();
    }
    let specs = example_specs(pair.opts, pair.p);
    let join = |s: &BTreeSet<&str>| s.iter().copied().collect::<Vec<_>>().join(", ");
    let (wn, pn) = (join(&w_all), join(&p_all));
    let p_only: BTreeSet<&str> = p_all.difference(&w_all).copied().collect();
    let w_only: BTreeSet<&str> = w_all.difference(&p_all).copied().collect();
    let mut parts = Vec::new();
    if !p_only.is_empty() {
        parts.push(format!(
            "every production example carries {}, not every warm-up example",
            join(&p_only)
        ));
    }
    if !w_only.is_empty() {
        parts.push(format!(
            "every warm-up example carries {}, not every production example",
            join(&w_only)
        ));
    }
    let tell = if specs.is_some() {
        "the findings below say whether the model requires them"
    } else {
        "whether ParseExample needs them cannot be told without the model's feature spec"
    };
    let mut out = vec![Finding::new(
        Code::FeaturesDiffer,
        Severity::Note,
        format!(
            "{}. The executor is the same whatever the features (the signature's serialized-examples input is fed either way); what differs is what ParseExample reads: {tell}",
            parts.join("; ")
        ),
    )
    .sides(Some(wn.clone()), Some(pn.clone()))
    .with_hint(specs.is_none().then_some(Hint::ModelGraph))];
    let judge = |name: &str, code: Code, lacking: String, sender: &str, side: &str, fails: &str| {
        let (severity, why, hint) = match specs.as_deref().map(|s| need(s, name)) {
            Some(Need::Required(kind)) => (
                Severity::Error,
                format!(
                    "the model requires it (a dense feature without a default), so ParseExample refuses {fails}: \"Feature: {name} (data type: {kind}) is required but could not be found.\""
                ),
                None,
            ),
            Some(Need::Optional(how)) => (
                Severity::Note,
                format!(
                    "the model does not require it ({how}), so ParseExample runs {side} without it"
                ),
                None,
            ),
            None => (
                Severity::Warning,
                "whether the model requires it cannot be told without its ParseExample spec"
                    .to_string(),
                Some(Hint::ModelGraph),
            ),
        };
        Finding::new(
            code,
            severity,
            format!(
                "{sender} sends feature {name:?} in every example, but in {side} {lacking}: {why}"
            ),
        )
        .name(name.to_string())
        .sides(Some(wn.clone()), Some(pn.clone()))
        .with_hint(hint)
    };
    for name in &p_only {
        out.push(judge(
            name,
            Code::FeatureNotInWarmup,
            w.lacking(name),
            "production",
            "the warm-up request",
            "the warm-up request, which fails the model load",
        ));
    }
    for name in &w_only {
        out.push(judge(
            name,
            Code::FeatureNotInProduction,
            p.lacking(name),
            "the warm-up",
            "the production request",
            "the production request",
        ));
    }
    out
}
