//! `tfreq inspect FILE...`

use std::io::Write;
use std::path::PathBuf;

use tfreq::analysis::lint;
use tfreq::analysis::{Finding, Severity};
use tfreq::formats::{Container, ContainerKind, Content};
use tfreq::render::json::ValuesMode;
use tfreq::render::{human, Color};
use tfreq::Kind;

use crate::args::{InputFrom, KindArg, MessageFormat as Format, Values};
use crate::common::{in_file, report_error, stdout, stdout_plain, Failure, Outcome, Progress};
use crate::input::{InputArgs, Inputs};

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
    /// Message kind, instead of detecting it.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// The model giving REST JSON inputs their dtypes: a SavedModel directory,
    /// saved_model.pb, GetModelMetadata JSON or `saved_model_cli show --all` output.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// `--wire`, an old name for `--from`.
    #[arg(long = "wire", value_enum, hide = true)]
    wire: Option<InputFrom>,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(mut a: Args) -> Outcome {
    if let Some(w) = a.wire {
        a.input.from = w;
    }
    let inputs = Inputs::new(&a.input, a.model.as_deref()).kind(a.kind.map(|k| match k {
        KindArg::Request => Kind::Request,
        KindArg::Response => Kind::Response,
    }));
    let files = inputs.expand(&a.files)?;
    let mut out = match a.format {
        Format::Human => stdout(),
        Format::Text | Format::Json | Format::Github => stdout_plain(),
    };
    let json_many = a.format == Format::Json && files.len() > 1;
    if json_many {
        out.write_all(b"[")?;
    }
    let progress = Progress::new(&files, matches!(a.format, Format::Json | Format::Github));
    let mut tally = Tally::default();
    for (i, path) in files.iter().enumerate() {
        let label = path.display().to_string();
        if a.format == Format::Json && i > 0 {
            out.write_all(b",")?;
        }
        match load_one(&inputs, path, &progress) {
            Ok((c, problems)) => {
                tally.add(&c, &problems);
                if a.format == Format::Human && tally.shown > 1 {
                    writeln!(out)?;
                }
                if let Err(e) = show(&mut out, &a, &label, &c, &problems, json_many) {
                    if e.is_broken_pipe() {
                        return Err(e);
                    }
                    tally.unreadable += 1;
                    write_unreadable(&mut out, &a, &label, &e, &progress)?;
                }
            }
            Err(e) => {
                tally.unreadable += 1;
                write_unreadable(&mut out, &a, &label, &e, &progress)?;
                if a.format == Format::Json && !json_many {
                    writeln!(out)?;
                }
            }
        }
        progress.suspend(|| out.flush())?;
    }
    if json_many {
        out.write_all(b"]\n")?;
    }
    if a.format == Format::Github {
        tally.write_github(&mut out, files.len() as u64)?;
    }
    drop(progress);
    out.flush()?;
    // Exit 2 when an input could not be read, else 1 when an error finding is listed,
    // so a CI step can fail on it.
    Ok(if tally.unreadable > 0 {
        2
    } else {
        u8::from(tally.failed)
    })
}

/// What the files shown so far hold: findings by severity, files unreadable.
#[derive(Default)]
struct Tally {
    unreadable: u64,
    counts: [u64; 3],
    shown: usize,
    failed: bool,
}

impl Tally {
    fn add(&mut self, c: &Container, problems: &[Vec<Finding>]) {
        for f in problems.iter().flatten().chain(&c.findings) {
            self.counts[f.severity as usize] += 1;
            self.failed |= f.severity == Severity::Error;
        }
        self.shown += 1;
    }

    /// The closing line of `--format github`.
    fn write_github(&self, out: &mut impl Write, files: u64) -> std::io::Result<()> {
        let bad = match self.unreadable {
            0 => String::new(),
            n => format!(" ({n} unreadable)"),
        };
        writeln!(
            out,
            "tfreq inspect: {}{bad}; {}, {}, {}",
            crate::common::count(files, "file"),
            crate::common::count(self.counts[Severity::Error as usize], "error"),
            crate::common::count(self.counts[Severity::Warning as usize], "warning"),
            crate::common::count(self.counts[Severity::Note as usize], "note"),
        )
    }
}

/// Shows one file read in the format asked for.
fn show(
    out: &mut impl Write,
    a: &Args,
    label: &str,
    c: &Container,
    problems: &[Vec<Finding>],
    json_many: bool,
) -> Result<(), Failure> {
    let bare = c.kind == ContainerKind::Bare
        || (c.kind == ContainerKind::TextFormat && c.entries.len() == 1);
    let mode = match a.values {
        Values::None => ValuesMode::None,
        Values::Preview => ValuesMode::Preview,
        Values::All => ValuesMode::All,
    };
    match a.format {
        Format::Human => write_human(out, label, c, problems, bare)?,
        Format::Text => write_text(out, label, c, bare)?,
        Format::Json => {
            match (&c.entries[..], bare) {
                ([e], true) => {
                    if let Content::Message(msg) = &e.content {
                        let p = problems.first().map(Vec::as_slice).unwrap_or(&[]);
                        tfreq::render::json::write_message(out, label, msg, p, mode)?;
                    }
                }
                _ => tfreq::render::json::write_container(out, label, c, problems, mode)?,
            }
            if !json_many {
                writeln!(out)?;
            }
        }
        Format::Github => {
            // Findings about the file as a whole (TF Serving's warm-up loader limits,
            // what detection found), then each entry's.
            for f in &c.findings {
                tfreq::render::report::write_github_finding(out, label, label, f)?;
            }
            for (e, p) in c.entries.iter().zip(problems) {
                let elabel = if bare {
                    label.to_string()
                } else {
                    format!("{label} {}", e.label(c.kind))
                };
                if let Content::Message(m) = &e.content {
                    tfreq::render::report::write_github_examples(out, label, &elabel, m)?;
                }
                for f in p {
                    tfreq::render::report::write_github_finding(out, label, &elabel, f)?;
                }
            }
        }
    }
    Ok(())
}

type Loaded = (Container, Vec<Vec<Finding>>);

/// Reads, detects and lints one file; the error names it.
fn load_one(
    inputs: &Inputs,
    path: &std::path::Path,
    progress: &Progress,
) -> Result<Loaded, Failure> {
    let (mut c, _) = inputs.container(path, progress)?;
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
        human::write_container_head(out, label, c, Color::Always)?;
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
                human::write_summary(out, &elabel, msg, p, Color::Always)?;
                after_message = true;
            }
            _ => {
                if after_message {
                    writeln!(out)?;
                }
                human::write_entry_line(out, &elabel, e, Color::Always)?;
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
            let log = e.log_kind.map_or("predict_log", |k| k.name());
            writeln!(out, "# {}: {log} request", e.label(c.kind))?;
        }
        let name = if msg.method.takes_examples() {
            msg.method.request_message()
        } else {
            tfreq::wire::message_name(msg.wire, msg.kind)
        };
        tfreq::render::text::write_text(out, e.bytes.clone(), name)
            .map_err(|e| in_file(label, e))?;
        writeln!(out)?;
    }
    Ok(())
}
