//! `tfreq convert IN -o OUT --wire eas|tf-serving|tfrecord`

use std::path::PathBuf;

use tfreq::formats::ContainerKind;
use tfreq::formats::{Compression, Compressor};
use tfreq::formats::{ConvertOptions, convert_file, convert_stream};

use crate::args::OutWire;
use crate::common::{
    Failure, Outcome, Progress, human_size, in_file, lossy_hint, refuse_same_file, report_left_out,
    write_output, write_output_with,
};
use crate::input::Inputs;
use tfreq::formats::Opened;

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
    let inputs = Inputs::new(&rewrite.input, None);
    let opts = ConvertOptions {
        model_name: a.model_name.clone(),
        scrub: None,
        lossy: a.rewrite.lossy,
    };
    let compress = a.compress.map(|c| match c {
        Compress::Gzip => Compression::Gzip,
        Compress::Zlib => Compression::Zlib,
    });
    let bytes = match inputs.open(&a.input)? {
        // A log written as a log: record by record, in constant memory whatever its
        // length (a file or standard input).
        Opened::Stream {
            reader: r,
            compression: c,
        } if a.wire == OutWire::Tfrecord => {
            drop(progress);
            // Inflated and capped here (a --max-size given bounds the whole stream).
            let r = inputs.stream(r, c);
            return stream(&a, r, rewrite.input.limit(), &opts, compress);
        }
        Opened::Stream {
            reader: r,
            compression: c,
        } => {
            let read = tfreq::ReadOptions::default().max_size(rewrite.input.limit());
            let b = tfreq::read_from(r, &a.input, &read)?;
            match c {
                Some(c) => {
                    bytes::Bytes::from(tfreq::formats::inflate(&b, c, rewrite.input.limit())?)
                }
                None => b,
            }
        }
        Opened::Whole { bytes, .. } => bytes,
    };
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
            Failure::msg(
                "PredictionLog messages without framing are framed as they are (every record kept): convert FILE --wire tfrecord -o F first, then give --model-name when converting F",
            ),
        ));
    }
    let out = convert_file(bytes, &src, Some(a.wire.into()), &opts)
        .map_err(|e| in_file(&label, lossy_hint(e)))?;
    let data = match compress {
        None => out.data,
        Some(c) => tfreq::formats::compress(&out.data, c)?,
    };
    progress.step(format!("writing {}", human_size(data.len() as u64)));
    write_output(a.output.as_deref(), &data)?;
    drop(progress);
    report_left_out(&label, "left out (--lossy)", &out.left_out);
    Ok(0)
}

/// Converts a log read from standard input as it comes, writing each record as it is
/// converted (to a temporary file renamed into place when all went well).
fn stream(
    a: &Args,
    mut r: Box<dyn std::io::Read>,
    max_record: u64,
    opts: &ConvertOptions,
    compress: Option<Compression>,
) -> Outcome {
    let mut left_out = Vec::new();
    let label = a.input.display().to_string();
    let fail = |e: tfreq::Error| -> tfreq::Error {
        tfreq::ErrorDetail::Format(in_file(&label, lossy_hint(e)).to_string()).into()
    };
    write_output_with(a.output.as_deref(), &mut |w| {
        let converted = match compress {
            None => convert_stream(&mut r, None, max_record, opts, w).map_err(fail)?,
            Some(z) => {
                let mut zw = Compressor::new(w, z);
                let converted =
                    convert_stream(&mut r, None, max_record, opts, &mut zw).map_err(fail)?;
                zw.finish().map_err(|e| {
                    tfreq::Error::from(tfreq::ErrorDetail::Format(format!(
                        "writing the output: {e}"
                    )))
                })?;
                converted
            }
        };
        left_out = converted.left_out;
        Ok(())
    })?;
    report_left_out(&label, "left out (--lossy)", &left_out);
    Ok(0)
}
