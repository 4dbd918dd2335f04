//! `tfreq diff WARMUP PROD... [--strict-shapes] [--model PATH] [--allowed-batch-sizes N,N,... |
//! --batching-parameters-file FILE] [--format human|json|github]`

use std::path::{Path, PathBuf};

use tfreq::analysis::Command;
use tfreq::analysis::Labeled;
use tfreq::analysis::{DiffOptions, diff_labeled};
use tfreq::signature::SERVE_TAG;

use crate::args::ReportFormat;
use crate::common::{Failure, Outcome, Progress};
use crate::input::{InputArgs, Inputs, Loaded};
use crate::report::{Streamed, fatal, labeled, load_model, render};

#[derive(clap::Args)]
pub struct Args {
    /// The warm-up file (one or more requests).
    warmup: PathBuf,
    /// Production request files.
    #[arg(required = true)]
    prod: Vec<PathBuf>,
    /// Shape and batch-size changes fail (XLA, TF Serving batching, PAI-Blade).
    #[arg(long)]
    strict_shapes: bool,
    /// The model (SavedModel directory, metadata JSON or saved_model_cli text), to
    /// resolve TF Serving's empty output_filter and signature defaults.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Meta graph tag of --model.
    #[arg(long, default_value = SERVE_TAG)]
    tag: String,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = ReportFormat::Human)]
    format: ReportFormat,
    #[command(flatten)]
    batch: crate::batch::BatchArgs,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> Outcome {
    let format = a.format;
    let (warmup, model) = (a.warmup.clone(), a.model.clone());
    match run_diff(a) {
        Err(Fatal::Warmup(e)) => fatal(Command::Diff, format, &warmup, e),
        Err(Fatal::Model(e)) => fatal(
            Command::Diff,
            format,
            model.as_deref().unwrap_or(Path::new("--model")),
            e,
        ),
        Err(Fatal::Other(e)) => Err(e),
        Ok(code) => Ok(code),
    }
}

/// What stopped a `diff` before it compared anything.
enum Fatal {
    Warmup(Failure),
    Model(Failure),
    Other(Failure),
}

impl<E: Into<Failure>> From<E> for Fatal {
    fn from(e: E) -> Self {
        Fatal::Other(e.into())
    }
}

/// The warm-up file `p` names: the file itself, or for a SavedModel directory (a model
/// version's), the warm-up TF Serving loads from it,
/// `assets.extra/tf_serving_warmup_requests`. Any other directory is refused: the
/// warm-up is one file.
fn warmup_file(p: &Path) -> Result<PathBuf, Failure> {
    if !p.is_dir() {
        return Ok(p.to_path_buf());
    }
    let inside = p.join("assets.extra").join("tf_serving_warmup_requests");
    if inside.is_file() {
        return Ok(inside);
    }
    Err(Failure::msg(format!(
        "{}: is a directory without assets.extra/tf_serving_warmup_requests: the warm-up is one file (a SavedModel directory stands for the warm-up TF Serving loads from it); production files may be directories",
        p.display()
    )))
}

fn run_diff(mut a: Args) -> Result<u8, Fatal> {
    a.warmup = warmup_file(&a.warmup).map_err(Fatal::Warmup)?;
    crate::common::stdin_at_most_once(
        std::iter::once(a.warmup.as_path()).chain(a.prod.iter().map(PathBuf::as_path)),
    )?;
    let batching = a.batch.rule()?;
    let model = a
        .model
        .as_deref()
        .map(load_model)
        .transpose()
        .map_err(Fatal::Model)?;
    let mg = match &model {
        Some(m) => Some(m.meta_graph(&a.tag).ok_or_else(|| {
            Fatal::Model(Failure::msg(format!(
                "--model {}: no meta graph tagged {:?} (tag sets: {})",
                a.model
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                a.tag,
                m.tag_sets().join("; ")
            )))
        })?),
        None => None,
    };
    let inputs = Inputs::new(&a.input, a.model.as_deref());
    let prod_files = inputs.expand(&a.prod)?;
    let mut all = vec![a.warmup.clone()];
    all.extend(prod_files.iter().cloned());
    let progress = Progress::new(&all, a.format != ReportFormat::Human);
    // Without the warm-up there is nothing to compare with: that one is fatal.
    let warm = inputs.warmup(&a.warmup, &progress).map_err(Fatal::Warmup)?;
    let opts = DiffOptions {
        strict_shapes: a.strict_shapes,
        model: mg,
    };
    let wl = labeled(&warm.requests);
    let Some((rule, source)) = &batching else {
        // Each production request is judged as it is read and dropped: a log of any
        // length is compared in bounded memory.
        let differ = tfreq::analysis::Differ::new(&wl, &opts);
        let mut report = Streamed::new(a.format, differ.finish(Vec::new()), |l: &Loaded| {
            differ.report(&Labeled::new(&l.file, &l.label, &l.message))
        });
        let prod = inputs.requests_into(&prod_files, &progress, false, &mut report);
        progress.step("comparing");
        warm.report_problems(report.report_mut());
        prod.report_problems(report.report_mut());
        report.report_mut().model = a.model.as_ref().map(|p| p.display().to_string());
        drop(progress);
        return Ok(report.finish()?);
    };
    // The batch sizes are judged over all production requests at once: they are held.
    let prod = inputs.requests(&prod_files, &progress, false);
    progress.step("comparing");
    let pl = labeled(&prod.requests);
    let mut report = diff_labeled(&wl, &pl, &opts);
    {
        tfreq::analysis::diff_batches_with_model(
            &mut report,
            rule,
            source,
            &wl,
            &pl,
            a.strict_shapes,
            opts.model,
        );
    }
    warm.report_problems(&mut report);
    prod.report_problems(&mut report);
    report.model = a.model.as_ref().map(|p| p.display().to_string());
    drop(progress);
    Ok(render(&mut report, a.format)?)
}
