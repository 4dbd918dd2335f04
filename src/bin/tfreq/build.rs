//! `tfreq build INPUT -o OUT`: a request file from TF Serving REST JSON or text format.

use std::path::PathBuf;

use tfreq::formats::rest_json::{dtypes_from_model, from_json_lines, Dtypes};
use tfreq::formats::text_format::from_text;
use tfreq::formats::{set_model_name, write, Target};
use tfreq::{TFRequest, WireFormat};

use crate::common::{in_file, json_signature, write_output, InputFrom, OutWire, Outcome};
use tfreq::formats::detect::{detect, InputFormat, Source};
use tfreq::formats::ContainerKind;
use tfreq::DecodeOptions;

#[derive(clap::Args)]
pub struct Args {
    /// Input: REST JSON (`.json`, `.jsonl`, or anything starting with `{`) or text format.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Output layout.
    #[arg(long, value_enum, default_value_t = OutWire::Eas)]
    wire: OutWire,
    /// What the input is, instead of detecting it: json or text (build reads those;
    /// eas or tf-serving reads text format as that wire format).
    #[arg(long = "from", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
    /// An input's dtype (JSON carries none): NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    dtypes: Vec<String>,
    /// The model giving the signature's input dtypes: a SavedModel directory,
    /// saved_model.pb, GetModelMetadata JSON or `saved_model_cli show --all` output.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Output to fetch (output_filter; REST JSON cannot say). Repeatable, in order.
    #[arg(long = "fetch", value_name = "NAME")]
    fetches: Vec<String>,
    /// TF Serving model_spec.name for requests that have none.
    #[arg(long)]
    model_name: Option<String>,
    /// Wire format of text input, when both parse (also `--from eas|tf-serving`).
    #[arg(long = "in-wire", value_enum, hide = true)]
    in_wire: Option<crate::inspect::Wire>,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let bytes = tfreq::io::read_input(&a.input).map_err(|e| in_file(&label, e))?;
    let target: Target = a.wire.into();
    let wire = match target {
        Target::Eas => WireFormat::Eas,
        _ => WireFormat::TfServing,
    };
    let in_wire: Option<WireFormat> = a.in_wire.map(Into::into).or(match a.from {
        InputFrom::Eas => Some(WireFormat::Eas),
        InputFrom::TfServing => Some(WireFormat::TfServing),
        _ => None,
    });
    let from = match a.from {
        InputFrom::Json => Kind::Json,
        InputFrom::Text => Kind::Text,
        InputFrom::Auto | InputFrom::Eas | InputFrom::TfServing => {
            let src = Source::for_path(&a.input, InputFormat::Auto);
            let opts = DecodeOptions {
                wire: in_wire,
                ..DecodeOptions::default()
            };
            match detect(&bytes, opts, &src).map_err(|e| in_file(&label, e))?.kind {
                ContainerKind::RestJson => Kind::Json,
                ContainerKind::TextFormat => Kind::Text,
                k => return Err(in_file(&label, format!(
                    "is a {} file, not REST JSON or protobuf text: build reads those (tfreq convert reads request files)",
                    k.as_str()
                ))),
            }
        }
        other => {
            return Err(in_file(
                &label,
                format!(
                    "build reads REST JSON (--from json) or protobuf text (--from text), not --from {}: tfreq convert reads that",
                    other.format().as_str()
                ),
            ))
        }
    };
    let mut msgs = match from {
        Kind::Json => {
            let sig = json_signature(&bytes);
            let mut d = match &a.model {
                Some(p) => {
                    let (model, _) = tfreq::formats::savedmodel::read_model(p)?;
                    dtypes_from_model(&model, &sig)
                        .map_err(|e| in_file(&p.display().to_string(), e))?
                }
                None => Dtypes::default(),
            };
            for s in &a.dtypes {
                d.annotate(s)?;
            }
            from_json_lines(&bytes, &d, &a.fetches, wire).map_err(|e| in_file(&label, e))?
        }
        Kind::Text => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|e| in_file(&label, format!("text format must be UTF-8: {e}")))?;
            let parsed = from_text(text, in_wire).map_err(|e| in_file(&label, e))?;
            let mut out = Vec::new();
            for m in &parsed {
                let mut r = TFRequest::from_message(m, wire)
                    .map_err(|e| in_file(&label, e))?
                    .into_message();
                for f in &a.fetches {
                    r.fetches.push(f.clone());
                }
                out.push(r);
            }
            out
        }
    };
    if let Some(name) = &a.model_name {
        msgs.iter_mut().for_each(|m| set_model_name(m, name));
    }
    let data = write(&msgs, target).map_err(|e| in_file(&label, e))?;
    write_output(a.output.as_deref(), &data)?;
    Ok(0)
}

/// What build reads.
enum Kind {
    Json,
    Text,
}
