//! `tfreq convert IN -o OUT --wire eas|tf-serving|tfrecord`

use std::path::PathBuf;

use tfreq::formats::{load, set_model_name, write};
use tfreq::DecodeOptions;

use crate::common::{in_file, write_output, OutWire, Outcome};

#[derive(clap::Args)]
pub struct Args {
    /// Input: a bare request (EAS or TF Serving) or a TFRecord warm-up file.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Output layout.
    #[arg(long, value_enum)]
    wire: OutWire,
    /// Input wire format, instead of detecting it (bare files only).
    #[arg(long = "in-wire", value_enum)]
    in_wire: Option<crate::inspect::Wire>,
    /// TF Serving model_spec.name for requests that have none (EAS requests carry no model name).
    #[arg(long)]
    model_name: Option<String>,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let bytes = tfreq::io::read_input(&a.input).map_err(|e| in_file(&label, e))?;
    let opts = DecodeOptions {
        wire: a.in_wire.map(Into::into),
        ..DecodeOptions::default()
    };
    let mut msgs: Vec<_> = load(bytes, opts)
        .map_err(|e| in_file(&label, e))?
        .into_iter()
        .map(|r| r.message)
        .collect();
    if msgs.is_empty() {
        return Err(in_file(&label, "holds no PredictRequest to convert"));
    }
    if let Some(name) = &a.model_name {
        msgs.iter_mut().for_each(|m| set_model_name(m, name));
    }
    let data = write(&msgs, a.wire.into()).map_err(|e| in_file(&label, e))?;
    write_output(a.output.as_deref(), &data)?;
    Ok(0)
}
