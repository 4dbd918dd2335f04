//! `tfreq check REQUEST... --model PATH [--tag serve] [--signature NAME] [--format human|json|github]`

use std::path::PathBuf;

use tfreq::analysis::Labeled;
use tfreq::analysis::Report;
use tfreq::analysis::{CheckOptions, check_labeled, check_one};
use tfreq::signature::SERVE_TAG;

use tfreq::analysis::Command;

use crate::args::ReportFormat as Format;
use crate::common::{Failure, Outcome, Progress};
use crate::input::{InputArgs, Inputs, Loaded};
use crate::report::{Streamed, labeled, load_model, render};

#[derive(clap::Args)]
pub struct Args {
    /// Request files.
    #[arg(required = true)]
    requests: Vec<PathBuf>,
    /// The model: a SavedModel directory (or saved_model.pb), TF Serving's metadata
    /// JSON, the text `saved_model_cli show --all` printed, or a live TF Serving
    /// (grpc://HOST:PORT with --model-name, or http://HOST:PORT/v1/models/NAME).
    #[arg(long, value_name = "PATH|URL", required = true)]
    model: PathBuf,
    /// The model name for a grpc:// --model (default: the first request's model_spec.name;
    /// given, or with a REST URL, each request is checked as it is read, in bounded memory).
    #[arg(long)]
    model_name: Option<String>,
    /// Trust the CA certificates of this PEM file for an https:// or grpcs:// --model
    /// (a private CA's), instead of the usual public roots.
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// Meta graph tag.
    #[arg(long, default_value = SERVE_TAG)]
    tag: String,
    /// Check against this signature instead of the one each request names.
    #[arg(long, value_name = "NAME")]
    signature: Option<String>,
    /// A shape the signature does not allow fails (SHAPE_INCOMPATIBLE is an error):
    /// for models compiled per shape (XLA, TF Serving batching, PAI-Blade).
    #[arg(long)]
    strict_shapes: bool,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> Outcome {
    let (format, model) = (a.format, a.model.clone());
    match run_check(a) {
        Err(ModelFailure(e)) => crate::report::fatal(Command::Check, format, &model, e),
        Ok(r) => r,
    }
}

/// The model could not be read (or has no meta graph with the tag): nothing is checked.
struct ModelFailure(Failure);

fn run_check(a: Args) -> Result<Outcome, ModelFailure> {
    if let Err(e) = crate::common::stdin_at_most_once(a.requests.iter().map(PathBuf::as_path)) {
        return Ok(Err(e));
    }
    let url = a.model.to_str().filter(|s| is_url(s));
    // A model file is read first: when it cannot be read, nothing else is. So is a live
    // model whose name is known before any request is read (--model-name, or a REST
    // URL's path); then, as with a file, each request is checked as it is read.
    let file_model = match url {
        None => Some(load_model(&a.model).map_err(ModelFailure)?),
        Some(u) if a.model_name.is_some() || names_model(u) => Some(
            live_model(u, a.model_name.clone(), a.cacert.as_deref(), &[]).map_err(ModelFailure)?,
        ),
        Some(_) => None,
    };
    // A live model's dtypes are not read from a file (give --dtype for REST JSON).
    let inputs = Inputs::new(&a.input, url.is_none().then_some(a.model.as_path()));
    let files = match inputs.expand(&a.requests) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let progress = Progress::new(&files, a.format != Format::Human);
    let opts = CheckOptions {
        tag: a.tag.clone(),
        signature: a.signature.clone(),
        strict_shapes: a.strict_shapes,
    };
    let no_tag = |model: &tfreq::signature::ModelSignatures| {
        ModelFailure(Failure::msg(format!(
            "--model {}: no meta graph tagged {:?} (tag sets: {})",
            a.model.display(),
            a.tag,
            model.tag_sets().join("; ")
        )))
    };
    let (reqs, mut report) = match file_model {
        // A model read from a file: each request is checked as it is read and dropped,
        // so a log of any length is checked in bounded memory.
        Some(model) if model.meta_graph(&a.tag).is_some() => {
            let mut report = Streamed::new(
                a.format,
                Report::new(Command::Check, Vec::new()),
                |l: &Loaded| check_one(&Labeled::new(&l.file, &l.label, &l.message), &model, &opts),
            );
            let reqs = inputs.requests_into(&files, &progress, true, &mut report);
            drop(progress);
            reqs.report_problems(report.report_mut());
            report.report_mut().model = Some(a.model.display().to_string());
            return Ok(report.finish());
        }
        file_model => {
            // A live gRPC model without --model-name is asked for the first request's
            // model name: the requests are held.
            let reqs = inputs.requests(&files, &progress, true);
            drop(progress);
            let model = match (file_model, url) {
                (Some(m), _) => m,
                (None, url) => live_model(
                    url.unwrap_or_default(),
                    a.model_name.clone(),
                    a.cacert.as_deref(),
                    &reqs.requests,
                )
                .map_err(ModelFailure)?,
            };
            if model.meta_graph(&a.tag).is_none() {
                return Err(no_tag(&model));
            }
            let report = check_labeled(&labeled(&reqs.requests), &model, &opts);
            (reqs, report)
        }
    };
    reqs.report_problems(&mut report);
    report.model = Some(a.model.display().to_string());
    Ok(render(&mut report, a.format))
}

pub(crate) fn is_url(s: &str) -> bool {
    ["grpc://", "grpcs://", "http://", "https://"]
        .iter()
        .any(|p| s.starts_with(p))
}

/// The signatures a live server reports (gRPC GetModelMetadata, REST `/metadata`).
#[cfg(feature = "net")]
pub(crate) fn live_model(
    url: &str,
    name: Option<String>,
    cacert: Option<&std::path::Path>,
    reqs: &[Loaded],
) -> Result<tfreq::signature::ModelSignatures, Failure> {
    use tfreq::net::{Client, Options, Target};
    let target = Target::parse(url, None)
        .map_err(|e| Failure::msg(format!("--model {}", crate::common::net_text(&e))))?;
    let model_name = name.or_else(|| {
        reqs.iter()
            .filter_map(|r| r.message.model_spec.as_ref())
            .map(|s| s.name.clone())
            .find(|n| !n.is_empty())
    });
    let opts = Options {
        model_name,
        ca_cert: crate::live::read_cacert(cacert)?,
        ..Options::default()
    };
    Client::connect(target, opts)
        .and_then(|mut c| c.metadata())
        .map_err(|e| Failure::msg(format!("--model {url}: {}", crate::common::net_text(&e))))
}

/// Whether a live `--model` URL names its model itself (a TF Serving REST URL's
/// `/v1/models/NAME`).
#[cfg(feature = "net")]
fn names_model(url: &str) -> bool {
    matches!(
        tfreq::net::Target::parse(url, None),
        Ok(tfreq::net::Target::Rest { .. })
    )
}

#[cfg(not(feature = "net"))]
fn names_model(_: &str) -> bool {
    false
}

#[cfg(not(feature = "net"))]
pub(crate) fn live_model(
    url: &str,
    _: Option<String>,
    _: Option<&std::path::Path>,
    _: &[Loaded],
) -> Result<tfreq::signature::ModelSignatures, Failure> {
    Err(Failure::msg(format!(
        "--model {url}: this tfreq was built without the network feature \"net\""
    )))
}
