//! `tfreq convert IN -o OUT --wire eas|tf-serving|tfrecord`

use std::path::PathBuf;

use tfreq::formats::convert::{convert_file, ConvertOptions};
use tfreq::formats::ContainerKind;

use crate::args::OutWire;
use crate::common::{
    human_size, in_file, lossy_hint, refuse_same_file, report_left_out, write_output, Failure,
    Outcome, Progress,
};

#[derive(clap::Args)]
#[command(mut_arg("lossy", |a| a.help("Write even when the output cannot carry everything (a dtype EAS lacks, a TF Serving model_spec or client_id going to EAS, several records into a bare request), and list what was left out on stderr. Without it, that is an error")))]
pub struct Args {
    /// Input: a bare request (EAS or TF Serving), a TFRecord warm-up file (every record
    /// is kept) or protobuf text format.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Output layout.
    #[arg(long, value_enum)]
    wire: OutWire,
    /// `--in-wire`, an old name for `--from`. (PredictionLog messages concatenated
    /// without framing are read either way, and written as a TFRecord with every record
    /// kept.)
    #[arg(long = "in-wire", value_enum, hide = true)]
    in_wire: Option<crate::args::InputFrom>,
    /// TF Serving model_spec.name for requests that have none (EAS requests carry no model name).
    #[arg(long)]
    model_name: Option<String>,
    /// Compress the output as tf.io.TFRecordWriter does with this compression_type
    /// (for logs and Beam/TFX pipelines; TF Serving's warm-up loader reads only
    /// uncompressed TFRecord, so a warm-up file must be written without it).
    #[arg(long, value_enum)]
    compress: Option<Compress>,
    #[command(flatten)]
    rewrite: crate::input::RewriteArgs,
}

/// `--compress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compress {
    /// gzip (TFRecordOptions compression_type="GZIP"; TFX's prediction_logs-*.gz).
    Gzip,
    /// zlib (compression_type="ZLIB").
    Zlib,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    refuse_same_file(
        a.output.as_deref(),
        &[a.input.as_path()],
        a.rewrite.overwrite_input,
    )?;
    let progress = Progress::new(std::slice::from_ref(&a.input), false);
    progress.step(format!("reading {label}"));
    let mut rewrite = a.rewrite.clone();
    if let Some(w) = a.in_wire {
        rewrite.input.from = w;
    }
    let inputs = crate::input::Inputs::new(&rewrite.input, None);
    let (bytes, _) = inputs.bytes(&a.input)?;
    progress.step(format!(
        "converting {label} ({})",
        human_size(bytes.len() as u64)
    ));
    let src = inputs.options_for(&a.input, &bytes)?.accept_unframed(true);
    let unframed = tfreq::formats::detect(&bytes, &src).map_err(|e| in_file(&label, e))?
        == ContainerKind::UnframedLogs;
    if unframed && a.model_name.is_some() {
        return Err(in_file(
            &label,
            Failure::msg("PredictionLog messages without framing are framed as they are (every record kept): convert FILE --wire tfrecord -o F first, then give --model-name when converting F"),
        ));
    }
    let opts = ConvertOptions {
        model_name: a.model_name.clone(),
        scrub: None,
        lossy: a.rewrite.lossy,
    };
    let out = convert_file(bytes, &src, Some(a.wire.into()), &opts)
        .map_err(|e| in_file(&label, lossy_hint(e)))?;
    let data = match a.compress {
        None => out.data,
        Some(c) => tfreq::formats::compression::compress(
            &out.data,
            match c {
                Compress::Gzip => tfreq::formats::compression::Compression::Gzip,
                Compress::Zlib => tfreq::formats::compression::Compression::Zlib,
            },
        )?,
    };
    progress.step(format!("writing {}", human_size(data.len() as u64)));
    write_output(a.output.as_deref(), &data)?;
    drop(progress);
    report_left_out(&label, "left out (--lossy)", &out.left_out);
    Ok(0)
}
