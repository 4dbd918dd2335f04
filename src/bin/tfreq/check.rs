//! `tfreq check REQUEST... --model PATH [--tag serve] [--signature NAME] [--format human|json|github]`

use std::path::PathBuf;

use tfreq::analysis::check::{check_labeled, CheckOptions};
use tfreq::signature::SERVE_TAG;

use crate::common::{Failure, InputArgs, InputFrom, Outcome, Progress};
use crate::diff::{labeled, load_all, load_model, render, Format, Reading};

#[derive(clap::Args)]
pub struct Args {
    /// Request files.
    #[arg(required = true)]
    requests: Vec<PathBuf>,
    /// The model: a SavedModel directory (or saved_model.pb), TF Serving's metadata
    /// JSON, or the text `saved_model_cli show --all` printed.
    #[arg(long, value_name = "PATH", required = true)]
    model: PathBuf,
    /// Meta graph tag.
    #[arg(long, default_value = SERVE_TAG)]
    tag: String,
    /// Check against this signature instead of the one each request names.
    #[arg(long, value_name = "NAME")]
    signature: Option<String>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// What the request files are, instead of detecting it.
    #[arg(long = "from", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
    /// A REST JSON input's dtype (JSON carries none; --model gives the rest): NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    dtypes: Vec<String>,
    #[command(flatten)]
    input_args: InputArgs,
}

pub fn run(a: Args) -> Outcome {
    let model = load_model(&a.model)?;
    if model.meta_graph(&a.tag).is_none() {
        return Err(Failure::msg(format!(
            "--model {}: no meta graph tagged {:?} (tag sets: {})",
            a.model.display(),
            a.tag,
            model.tag_sets().join("; ")
        )));
    }
    let how = Reading {
        from: a.from,
        model: Some(&a.model),
        dtypes: &a.dtypes,
        input: a.input_args,
    };
    let progress = Progress::new(&a.requests, a.format != Format::Human);
    let reqs = load_all(&a.requests, &how, &progress);
    drop(progress);
    let opts = CheckOptions {
        tag: a.tag,
        signature: a.signature,
    };
    let mut report = check_labeled(&labeled(&reqs.requests), &model, &opts);
    reqs.report_problems(&mut report);
    report.model = Some(a.model.display().to_string());
    render(&report, a.format)
}
