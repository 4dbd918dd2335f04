//! `tfreq inspect FILE...`

use std::io::Write;
use std::path::PathBuf;

use tfreq::analysis::lint::lint;
use tfreq::render::json::ValuesMode;
use tfreq::{DecodeOptions, Kind, WireFormat};

use crate::common::{in_file, stdout, Outcome};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary for people.
    Human,
    /// Protobuf text format, as Python's text_format.MessageToString.
    Text,
    /// One JSON document per file (schema in the README).
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Wire {
    Eas,
    TfServing,
}

impl From<Wire> for WireFormat {
    fn from(w: Wire) -> Self {
        match w {
            Wire::Eas => WireFormat::Eas,
            Wire::TfServing => WireFormat::TfServing,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    Request,
    Response,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Values {
    None,
    Preview,
    All,
}

#[derive(clap::Args)]
pub struct Args {
    /// Request or response files (`-` for standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Values in JSON output.
    #[arg(long, value_enum, default_value_t = Values::Preview)]
    values: Values,
    /// Wire format, instead of detecting it from the bytes.
    #[arg(long, value_enum)]
    wire: Option<Wire>,
    /// Message kind, instead of detecting it.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Refuse inputs larger than this many bytes.
    #[arg(long, value_name = "BYTES")]
    max_size: Option<u64>,
}

pub fn run(a: Args) -> Outcome {
    let mut out = stdout();
    let opts = DecodeOptions {
        wire: a.wire.map(Into::into),
        kind: a.kind.map(|k| match k {
            KindArg::Request => Kind::Request,
            KindArg::Response => Kind::Response,
        }),
        max_size: a.max_size,
    };
    let json_many = a.format == Format::Json && a.files.len() > 1;
    if json_many {
        out.write_all(b"[")?;
    }
    for (i, path) in a.files.iter().enumerate() {
        let label = path.display().to_string();
        let bytes = tfreq::io::read_input(path).map_err(|e| in_file(&label, e))?;
        let (msg, _) = tfreq::decode_with(bytes.clone(), opts).map_err(|e| in_file(&label, e))?;
        let problems = lint(&msg);
        match a.format {
            Format::Human => {
                if i > 0 {
                    writeln!(out)?;
                }
                tfreq::render::human::write_summary(&mut out, &label, &msg, &problems)?;
            }
            Format::Text => {
                tfreq::render::text::write_text(
                    &mut out,
                    &bytes,
                    tfreq::wire::message_name(msg.wire, msg.kind),
                )
                .map_err(|e| in_file(&label, e))?;
                writeln!(out)?;
            }
            Format::Json => {
                if i > 0 {
                    out.write_all(b",")?;
                }
                let mode = match a.values {
                    Values::None => ValuesMode::None,
                    Values::Preview => ValuesMode::Preview,
                    Values::All => ValuesMode::All,
                };
                tfreq::render::json::write_message(&mut out, &label, &msg, &problems, mode)?;
                if !json_many {
                    writeln!(out)?;
                }
            }
        }
    }
    if json_many {
        out.write_all(b"]\n")?;
    }
    out.flush()?;
    Ok(0)
}
