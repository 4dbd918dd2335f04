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
    human_size, in_file, report_error, rest_dtypes, stdout, stdout_plain, Failure, InputFrom,
    Outcome, Progress,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A summary for people.
    Human,
    /// Protobuf text format, as Python's text_format.MessageToString.
    Text,
    /// One JSON document per file (schema in the README).
    Json,
    /// GitHub Actions workflow annotations, one per problem and unreadable file.
    Github,
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
    /// The model giving REST JSON inputs their dtypes: a SavedModel directory,
    /// saved_model.pb, GetModelMetadata JSON or `saved_model_cli show --all` output.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// A REST JSON input's dtype: NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    dtypes: Vec<String>,
    #[command(flatten)]
    input_args: crate::common::InputArgs,
}

pub fn run(a: Args) -> Outcome {
    crate::common::stdin_at_most_once(a.files.iter().map(PathBuf::as_path))?;
    let mut out = match a.format {
        Format::Human => stdout(),
        Format::Text | Format::Json | Format::Github => stdout_plain(),
    };
    let opts = DecodeOptions {
        wire: None,
        kind: a.kind.map(|k| match k {
            KindArg::Request => Kind::Request,
            KindArg::Response => Kind::Response,
        }),
        max_size: Some(a.input_args.max_size),
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
    let progress = Progress::new(&a.files, matches!(a.format, Format::Json | Format::Github));
    let mut unreadable = 0u64;
    let mut counts = [0u64; 3];
    let mut shown = 0usize;
    let mut failed = false;
    for (i, path) in a.files.iter().enumerate() {
        let label = path.display().to_string();
        if a.format == Format::Json && i > 0 {
            out.write_all(b",")?;
        }
        let loaded = load_one(path, &label, &a, opts, &progress);
        let (c, problems) = match loaded {
            Ok(v) => v,
            Err(e) => {
                unreadable += 1;
                write_unreadable(&mut out, &a, &label, &e, &progress)?;
                if a.format == Format::Json && !json_many {
                    writeln!(out)?;
                }
                continue;
            }
        };
        for f in problems.iter().flatten().chain(&c.findings) {
            counts[f.severity as usize] += 1;
        }
        failed |= problems
            .iter()
            .flatten()
            .chain(&c.findings)
            .any(|f| f.severity == Severity::Error);
        let bare = c.kind == ContainerKind::Bare
            || (c.kind == ContainerKind::TextFormat && c.entries.len() == 1);
        if a.format == Format::Human && shown > 0 {
            writeln!(out)?;
        }
        shown += 1;
        match a.format {
            Format::Human => write_human(&mut out, &label, &c, &problems, bare)?,
            Format::Text => {
                if let Err(e) = write_text(&mut out, &label, &c, bare) {
                    if e.is_broken_pipe() {
                        return Err(e);
                    }
                    unreadable += 1;
                    write_unreadable(&mut out, &a, &label, &e, &progress)?;
                }
            }
            Format::Json => {
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
            Format::Github => {
                // Findings about the file as a whole (TF Serving's warm-up loader limits,
                // what detection found), then each entry's.
                for f in &c.findings {
                    tfreq::render::report::write_github_finding(&mut out, &label, &label, f)?;
                }
                for (e, p) in c.entries.iter().zip(&problems) {
                    let elabel = if bare {
                        label.clone()
                    } else {
                        format!("{label} {}", e.label(c.kind))
                    };
                    for f in p {
                        tfreq::render::report::write_github_finding(&mut out, &label, &elabel, f)?;
                    }
                }
            }
        }
        progress.suspend(|| out.flush())?;
    }
    if json_many {
        out.write_all(b"]\n")?;
    }
    if a.format == Format::Github {
        let files = a.files.len() as u64;
        let bad = match unreadable {
            0 => String::new(),
            n => format!(" ({n} unreadable)"),
        };
        writeln!(
            out,
            "tfreq inspect: {}{bad}; {}, {}, {}",
            crate::common::count(files, "file"),
            crate::common::count(counts[Severity::Error as usize], "error"),
            crate::common::count(counts[Severity::Warning as usize], "warning"),
            crate::common::count(counts[Severity::Note as usize], "note"),
        )?;
    }
    drop(progress);
    out.flush()?;
    // Exit 2 when an input could not be read, else 1 when an error finding is listed,
    // so a CI step can fail on it.
    Ok(if unreadable > 0 { 2 } else { u8::from(failed) })
}

type Loaded = (
    tfreq::formats::Container,
    Vec<Vec<tfreq::analysis::Finding>>,
);

/// Reads, detects and lints one file; the error names it.
fn load_one(
    path: &std::path::Path,
    label: &str,
    a: &Args,
    opts: DecodeOptions,
    progress: &Progress,
) -> Result<Loaded, Failure> {
    progress.step(format!("reading {label}"));
    let bytes = a.input_args.read(path)?;
    progress.step(format!(
        "decoding {label} ({})",
        human_size(bytes.len() as u64)
    ));
    let mut src = Source::for_path(path, a.from.format());
    src.rest = rest_dtypes(a.model.as_deref(), &a.dtypes)?;
    let mut c = load_detailed_from(bytes, opts, &src).map_err(|e| in_file(label, e))?;
    let limits = tfreq::analysis::warmup::file_findings(&c);
    c.findings.extend(limits);
    let mut problems: Vec<Vec<_>> = c
        .entries
        .iter()
        .map(|e| match &e.content {
            Content::Message(m) => lint(m),
            _ => Vec::new(),
        })
        .collect();
    let bare = c.kind == ContainerKind::Bare
        || (c.kind == ContainerKind::TextFormat && c.entries.len() == 1);
    if bare && c.entries.len() == 1 {
        // No file head is printed for one message: its file findings go with it.
        let mut p = std::mem::take(&mut c.findings);
        p.append(&mut problems[0]);
        problems[0] = p;
    }
    Ok((c, problems))
}

/// An input that could not be read: an error on stderr, in its place among the others,
/// and in JSON an entry `{"file", "error"}`, in `github` an `::error` annotation.
fn write_unreadable(
    out: &mut impl Write,
    a: &Args,
    label: &str,
    e: &Failure,
    progress: &Progress,
) -> Result<(), Failure> {
    match a.format {
        Format::Json => {
            let doc = serde_json::json!({"file": label, "error": e.message_without(label)});
            write!(out, "{doc}")?;
        }
        Format::Github => {
            tfreq::render::report::write_github_unreadable(out, label, &e.message_without(label))?
        }
        Format::Human | Format::Text => {}
    }
    progress.suspend(|| -> Result<(), Failure> {
        out.flush()?;
        report_error(e);
        Ok(())
    })
}

fn write_human(
    out: &mut impl Write,
    label: &str,
    c: &tfreq::formats::Container,
    problems: &[Vec<tfreq::analysis::Finding>],
    bare: bool,
) -> Result<(), Failure> {
    if !bare {
        human::write_container_head(out, label, c)?;
    }
    let mut after_message = false;
    for (e, p) in c.entries.iter().zip(problems) {
        let elabel = if bare {
            label.to_string()
        } else {
            format!("{label} {}", e.label(c.kind))
        };
        match &e.content {
            Content::Message(msg) => {
                if !bare {
                    writeln!(out)?;
                }
                human::write_summary(out, &elabel, msg, p)?;
                after_message = true;
            }
            _ => {
                if after_message {
                    writeln!(out)?;
                }
                human::write_entry_line(out, &elabel, e)?;
                after_message = false;
            }
        }
    }
    Ok(())
}

fn write_text(
    out: &mut impl Write,
    label: &str,
    c: &tfreq::formats::Container,
    bare: bool,
) -> Result<(), Failure> {
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
            out,
            e.bytes.clone(),
            tfreq::wire::message_name(msg.wire, msg.kind),
        )
        .map_err(|e| in_file(label, e))?;
        writeln!(out)?;
    }
    Ok(())
}
