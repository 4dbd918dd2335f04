//! `tfreq inspect FILE...`

use std::io::Write;
use std::path::PathBuf;

use tfreq::analysis::lint::lint;
use tfreq::analysis::Severity;
use tfreq::formats::detect::Source;
use tfreq::formats::{load_detailed_from, ContainerKind, Content};
use tfreq::render::human;
use tfreq::render::json::ValuesMode;
use tfreq::{DecodeOptions, Kind, WireFormat};

use crate::common::{
    in_file, json_signature, rest_dtypes, stdout, stdout_plain, InputFrom, Outcome,
};

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
    /// What the input is, instead of detecting it (`--wire` is an old name for it).
    #[arg(long = "from", alias = "wire", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
    /// Message kind, instead of detecting it.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Refuse inputs larger than this many bytes.
    #[arg(long, value_name = "BYTES")]
    max_size: Option<u64>,
    /// The model giving REST JSON inputs their dtypes: a SavedModel directory,
    /// saved_model.pb, GetModelMetadata JSON or `saved_model_cli show --all` output.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// A REST JSON input's dtype: NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    dtypes: Vec<String>,
}

pub fn run(a: Args) -> Outcome {
    let mut out = match a.format {
        Format::Human => stdout(),
        Format::Text | Format::Json => stdout_plain(),
    };
    let opts = DecodeOptions {
        wire: None,
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
    let mode = match a.values {
        Values::None => ValuesMode::None,
        Values::Preview => ValuesMode::Preview,
        Values::All => ValuesMode::All,
    };
    let mut failed = false;
    for (i, path) in a.files.iter().enumerate() {
        let label = path.display().to_string();
        let bytes = tfreq::io::read_input(path).map_err(|e| in_file(&label, e))?;
        let mut src = Source::for_path(path, a.from.format());
        src.rest = rest_dtypes(a.model.as_deref(), &json_signature(&bytes), &a.dtypes)?;
        src.dtype_options = true;
        let mut c = load_detailed_from(bytes, opts, &src).map_err(|e| in_file(&label, e))?;
        let mut problems: Vec<Vec<_>> = c
            .entries
            .iter()
            .map(|e| match &e.content {
                Content::Message(m) => lint(m),
                _ => Vec::new(),
            })
            .collect();
        failed |= problems
            .iter()
            .flatten()
            .chain(&c.findings)
            .any(|f| f.severity == Severity::Error);
        let bare = c.kind == ContainerKind::Bare
            || (c.kind == ContainerKind::TextFormat && c.entries.len() == 1);
        if bare && c.entries.len() == 1 {
            // No file head is printed for one message: its file findings go with it.
            let mut p = std::mem::take(&mut c.findings);
            p.append(&mut problems[0]);
            problems[0] = p;
        }
        match a.format {
            Format::Human => {
                if i > 0 {
                    writeln!(out)?;
                }
                if !bare {
                    human::write_container_head(&mut out, &label, &c)?;
                }
                let mut after_message = false;
                for (e, p) in c.entries.iter().zip(&problems) {
                    let elabel = if bare {
                        label.clone()
                    } else {
                        format!("{label} {}", e.label(c.kind))
                    };
                    match &e.content {
                        Content::Message(msg) => {
                            if !bare {
                                writeln!(out)?;
                            }
                            human::write_summary(&mut out, &elabel, msg, p)?;
                            after_message = true;
                        }
                        _ => {
                            if after_message {
                                writeln!(out)?;
                            }
                            human::write_entry_line(&mut out, &elabel, e)?;
                            after_message = false;
                        }
                    }
                }
            }
            Format::Text => {
                for e in &c.entries {
                    let Content::Message(msg) = &e.content else {
                        if !bare {
                            let what = e.log_kind.map_or("text line", |k| k.name());
                            writeln!(out, "# {}: {what} (not a PredictRequest)", e.label(c.kind))?;
                        }
                        continue;
                    };
                    if !bare {
                        writeln!(out, "# {}: predict_log request", e.label(c.kind))?;
                    }
                    tfreq::render::text::write_text(
                        &mut out,
                        e.bytes.clone(),
                        tfreq::wire::message_name(msg.wire, msg.kind),
                    )
                    .map_err(|e| in_file(&label, e))?;
                    writeln!(out)?;
                }
            }
            Format::Json => {
                if i > 0 {
                    out.write_all(b",")?;
                }
                match (&c.entries[..], bare) {
                    ([e], true) => {
                        if let Content::Message(msg) = &e.content {
                            let p = problems.first().map(Vec::as_slice).unwrap_or(&[]);
                            tfreq::render::json::write_message(&mut out, &label, msg, p, mode)?;
                        }
                    }
                    _ => {
                        tfreq::render::json::write_container(&mut out, &label, &c, &problems, mode)?
                    }
                }
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
    // Exit 1 when an error finding is listed, so a CI step can fail on it.
    Ok(u8::from(failed))
}
