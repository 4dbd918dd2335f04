//! `tfreq scrub PROD -o WARMUP [--fill zeros|constant=V|random --seed N]`

use std::path::PathBuf;

use tfreq::formats::{ConvertOptions, convert_file};

use crate::args::{Fill, OutWire, parse_fill};
use crate::common::{Outcome, in_file, lossy_hint, report_left_out, write_output};

#[derive(clap::Args)]
#[command(mut_arg("lossy", |a| a.help("With --wire: write even when the output cannot carry everything (see `convert --lossy`), listing what was left out on stderr")))]
pub struct Args {
    /// Production request: a bare request (EAS or TF Serving), a TFRecord file (every
    /// record is kept and scrubbed: predict requests, session-run feeds, the tf.Example
    /// inputs of classify/regress/multi-inference) or protobuf text format.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// What replaces the values: zeros, ones, constant=V, or random (with --seed).
    #[arg(long, default_value = "zeros", value_parser = parse_fill)]
    fill: Fill,
    /// Seed for --fill random.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output layout (default: the input's).
    #[arg(long, value_enum)]
    wire: Option<OutWire>,
    #[command(flatten)]
    rewrite: crate::input::RewriteArgs,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let (bytes, src) = a.rewrite.read(&a.input, a.output.as_deref(), None)?;
    let opts = ConvertOptions {
        model_name: None,
        scrub: Some(a.fill.mode(a.seed)),
        lossy: a.rewrite.lossy,
    };
    let out = convert_file(bytes, &src, a.wire.map(Into::into), &opts)
        .map_err(|e| in_file(&label, lossy_hint(e)))?;
    write_output(a.output.as_deref(), &out.data)?;
    report_left_out(
        &label,
        "scrub left out (it may carry private data)",
        &out.scrubbed_out,
    );
    report_left_out(&label, "left out (--lossy)", &out.left_out);
    Ok(0)
}
