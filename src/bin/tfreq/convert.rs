//! `tfreq convert IN -o OUT --wire eas|tf-serving|tfrecord`

use std::path::PathBuf;

use tfreq::formats::detect::{detect, unframed_records, Source};
use tfreq::formats::{load_from, set_model_name, tfrecord, write, ContainerKind, Target};
use tfreq::DecodeOptions;

use crate::common::{in_file, write_output, InputFrom, OutWire, Outcome};

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
    /// What the input is, instead of detecting it (`--in-wire` is an old name for it).
    /// PredictionLog messages concatenated without framing are read either way, and
    /// written as a TFRecord with every record kept.
    #[arg(long = "from", alias = "in-wire", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
    /// TF Serving model_spec.name for requests that have none (EAS requests carry no model name).
    #[arg(long)]
    model_name: Option<String>,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let bytes = tfreq::io::read_input(&a.input).map_err(|e| in_file(&label, e))?;
    let opts = DecodeOptions::default();
    let mut src = Source::for_path(&a.input, a.from.format());
    src.accept_unframed = true;
    let target: Target = a.wire.into();
    let unframed = detect(&bytes, opts, &src)
        .map_err(|e| in_file(&label, e))?
        .kind
        == ContainerKind::UnframedLogs;
    if unframed && a.model_name.is_some() {
        return Err(in_file(
            &label,
            "PredictionLog messages without framing are framed as they are (every record kept): convert FILE --wire tfrecord -o F first, then give --model-name when converting F",
        ));
    }
    if unframed && target == Target::TfRecord {
        // Every record as it is (other log kinds and log_metadata included), framed.
        let records = unframed_records(&bytes).map_err(|e| in_file(&label, e))?;
        let data = tfrecord::frame(records.iter().map(|(_, b)| &b[..]));
        write_output(a.output.as_deref(), &data)?;
        return Ok(0);
    }
    let mut msgs: Vec<_> = load_from(bytes, opts, &src)
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
    let data = write(&msgs, target).map_err(|e| in_file(&label, e))?;
    write_output(a.output.as_deref(), &data)?;
    Ok(0)
}
