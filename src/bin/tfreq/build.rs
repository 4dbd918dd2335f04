//! `tfreq build INPUT -o OUT`: a request file from TF Serving REST JSON or text format.

use std::path::PathBuf;

use tfreq::formats::rest_json::{dtypes_from_model, from_json_lines, Dtypes};
use tfreq::formats::text_format::from_text;
use tfreq::formats::{set_model_name, write, Target};
use tfreq::{TFRequest, WireFormat};

use crate::common::{in_file, write_output, OutWire, Outcome};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum From {
    /// TF Serving REST predict JSON (one request, or JSON lines).
    Json,
    /// Protobuf text format, as `tfreq inspect --format text` prints it.
    Text,
}

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
    /// Input kind, instead of detecting it.
    #[arg(long, value_enum)]
    from: Option<From>,
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
    /// Wire format of text input, when both parse.
    #[arg(long = "in-wire", value_enum)]
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
    let ext = a.input.extension().and_then(|e| e.to_str()).unwrap_or("");
    let from = a.from.unwrap_or_else(|| {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        if matches!(ext, "json" | "jsonl") || first == Some(&b'{') {
            From::Json
        } else {
            From::Text
        }
    });
    let mut msgs = match from {
        From::Json => {
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
        From::Text => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|e| in_file(&label, format!("text format must be UTF-8: {e}")))?;
            let parsed =
                from_text(text, a.in_wire.map(Into::into)).map_err(|e| in_file(&label, e))?;
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

/// The `signature_name` of the (first) request, for picking the metadata signature.
fn json_signature(bytes: &[u8]) -> String {
    let first = serde_json::Deserializer::from_slice(bytes)
        .into_iter::<serde_json::Value>()
        .next();
    match first {
        Some(Ok(v)) => v
            .get("signature_name")
            .and_then(|s| s.as_str())
            .unwrap_or("serving_default")
            .to_string(),
        _ => "serving_default".to_string(),
    }
}
