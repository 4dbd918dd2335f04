//! `tfreq inspect FILE...`

use std::io::Write;
use std::path::PathBuf;

use tfreq::Kind;
use tfreq::analysis::lint;
use tfreq::analysis::{Finding, Severity};
use tfreq::formats::{Container, ContainerKind, Content};
use tfreq::render::ValuesMode;
use tfreq::render::{self, Color};

use crate::args::{InputFrom, KindArg, MessageFormat as Format, Values};
use crate::common::{Failure, Outcome, Progress, in_file, report_error, stdout, stdout_plain};
use crate::input::{InputArgs, Inputs, Log, Walk};
use tfreq::formats::Opened;

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
        if path.as_os_str() == "-" {
            // Standard input: a log is shown record by record as it is read, in
            // constant memory; anything else is read whole.
            match inputs.open(path) {
                Ok(Opened::Stream {
                    reader: r,
                    compression: c,
                }) => {
                    let outcome = stream_log(&mut out, &a, &inputs, r, c, &mut tally, json_many)?;
                    if let Some(e) = outcome {
                        tally.unreadable += 1;
                        progress.suspend(|| report_error(&e));
                    }
                    progress.suspend(|| out.flush())?;
                    continue;
                }
                Ok(Opened::Whole { bytes, .. }) => {
                    let shown = inputs.container_of(path, bytes).map(linted);
                    show_or_report(
                        &mut out, &a, &label, shown, &mut tally, &progress, json_many,
                    )?;
                    continue;
                }
                Err(e) => {
                    show_or_report(
                        &mut out,
                        &a,
                        &label,
                        Err(e),
                        &mut tally,
                        &progress,
                        json_many,
                    )?;
                    continue;
                }
            }
        }
        match inputs.walk(path, &progress) {
            Ok(Walk::Log(log)) => {
                show_log(&mut out, &a, &label, log, &mut tally, &progress, json_many)?
            }
            Ok(Walk::Whole(c, _)) => show_or_report(
                &mut out,
                &a,
                &label,
                Ok(linted(c)),
                &mut tally,
                &progress,
                json_many,
            )?,
            Err(e) => show_or_report(
                &mut out,
                &a,
                &label,
                Err(e),
                &mut tally,
                &progress,
                json_many,
            )?,
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

/// Shows one record of a streamed log with its findings: `linted` (about the request)
/// and `loader` (what the warm-up loader makes of the record, which names it).
fn show_record(
    out: &mut impl Write,
    a: &Args,
    json: &mut Option<tfreq::render::StreamedContainer>,
    e: &tfreq::formats::Entry,
    linted: &[Finding],
    loader: &[Finding],
) -> Result<(), Failure> {
    let label = "-";
    let elabel = format!("{label} {}", e.label(ContainerKind::TfRecord));
    let problems: Vec<Finding> = linted.iter().chain(loader).cloned().collect();
    match (json, a.format) {
        (Some(doc), _) => doc.entry(out, e, &problems)?,
        (None, Format::Human) => match &e.content {
            Content::Message(msg) => {
                writeln!(out)?;
                render::write_summary(out, &elabel, msg, &problems, Color::Always)?;
            }
            _ => {
                render::write_entry_line(out, &elabel, e, Color::Always)?;
                render::write_findings(out, &problems, Color::Always)?;
            }
        },
        (None, Format::Text) => write_text_entry(out, label, e, false)?,
        (None, _) => {
            for f in linted {
                tfreq::render::write_github_finding(out, label, &elabel, f)?;
            }
            for f in loader {
                tfreq::render::write_github_finding(out, label, label, f)?;
            }
        }
    }
    Ok(())
}

/// Shows one file read whole, or reports why it could not be read.
fn show_or_report(
    out: &mut impl Write,
    a: &Args,
    label: &str,
    loaded: Result<Loaded, Failure>,
    tally: &mut Tally,
    progress: &Progress,
    json_many: bool,
) -> Result<(), Failure> {
    match loaded {
        Ok((c, problems)) => {
            tally.add(&c, &problems);
            if a.format == Format::Human && tally.shown > 1 {
                writeln!(out)?;
            }
            if let Err(e) = show(out, a, label, &c, &problems, json_many) {
                if e.is_broken_pipe() {
                    return Err(e);
                }
                tally.unreadable += 1;
                write_unreadable(out, a, label, &e, progress)?;
            }
        }
        Err(e) => {
            tally.unreadable += 1;
            write_unreadable(out, a, label, &e, progress)?;
            if a.format == Format::Json && !json_many {
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

fn values_mode(v: Values) -> ValuesMode {
    match v {
        Values::None => ValuesMode::None,
        Values::Preview => ValuesMode::Preview,
        Values::All => ValuesMode::All,
    }
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
        for p in problems {
            self.count(p);
        }
        self.count(&c.findings);
        self.shown += 1;
    }

    fn count(&mut self, findings: &[Finding]) {
        for f in findings {
            self.counts[f.severity as usize] += 1;
            self.failed |= f.severity == Severity::Error;
        }
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
    let mode = values_mode(a.values);
    match a.format {
        Format::Human => write_human(out, label, c, problems, bare)?,
        Format::Text => write_text(out, label, c, bare)?,
        Format::Json => {
            match (&c.entries[..], bare) {
                ([e], true) => {
                    if let Content::Message(msg) = &e.content {
                        let p = problems.first().map(Vec::as_slice).unwrap_or(&[]);
                        tfreq::render::write_message(out, label, msg, p, mode)?;
                    }
                }
                _ => tfreq::render::write_container(out, label, c, problems, mode)?,
            }
            if !json_many {
                writeln!(out)?;
            }
        }
        Format::Github => {
            // Findings about the file as a whole (TF Serving's warm-up loader limits,
            // what detection found), then each entry's.
            for f in &c.findings {
                tfreq::render::write_github_finding(out, label, label, f)?;
            }
            for (e, p) in c.entries.iter().zip(problems) {
                let elabel = if bare {
                    label.to_string()
                } else {
                    format!("{label} {}", e.label(c.kind))
                };
                if let Content::Message(m) = &e.content {
                    tfreq::render::write_github_examples(out, label, &elabel, m)?;
                }
                for f in p {
                    tfreq::render::write_github_finding(out, label, &elabel, f)?;
                }
            }
        }
    }
    Ok(())
}

type Loaded = (Container, Vec<Vec<Finding>>);

/// Shows a TFRecord log file walked record by record, in bounded memory: the same
/// output as for the file read whole ([`show`]), its head (which counts every record)
/// written first. Each record is written as it is read to a [`tfreq::Spool`]
/// (memory, then a temporary file), which follows the head once the log has been read
/// to its end; a log with a record that cannot be read shows nothing, as when read
/// whole.
fn show_log(
    out: &mut impl Write,
    a: &Args,
    label: &str,
    mut log: Log,
    tally: &mut Tally,
    progress: &Progress,
    json_many: bool,
) -> Result<(), Failure> {
    let mode = values_mode(a.values);
    let mut spool = tfreq::Spool::new();
    let mut counts = tfreq::formats::LogTally::default();
    let mut found = tfreq::analysis::FileFindings::default();
    let mut entry_tally = Tally::default();
    let mut after_message = false;
    // The first entry that could not be written, and the error (shown after what was
    // written before it, as for a file read whole).
    let mut failed: Option<Failure> = None;
    for e in &mut log.entries {
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                let e = in_file(label, e);
                return show_or_report(out, a, label, Err(e), tally, progress, json_many);
            }
        };
        counts.add(&e);
        found.entry(&e);
        let problems = match &e.content {
            Content::Message(m) => lint(m),
            _ => Vec::new(),
        };
        entry_tally.count(&problems);
        if failed.is_some() {
            continue;
        }
        let first = counts.entries == 1;
        let written = match a.format {
            Format::Human => render::write_entry(
                &mut spool,
                label,
                ContainerKind::TfRecord,
                &e,
                &problems,
                false,
                &mut after_message,
                Color::Always,
            )
            .map_err(Failure::from),
            Format::Text => write_text_entry(&mut spool, label, &e, false),
            Format::Json => {
                tfreq::render::write_log_entry(&mut spool, label, &e, &problems, mode, first)
                    .map_err(Failure::from)
            }
            Format::Github => write_github_entry(&mut spool, label, &e, &problems),
        };
        failed = written.err();
    }
    let findings = log.findings(found);
    entry_tally.count(&findings);
    tally
        .counts
        .iter_mut()
        .zip(entry_tally.counts)
        .for_each(|(t, n)| *t += n);
    tally.failed |= entry_tally.failed;
    tally.shown += 1;
    if a.format == Format::Human && tally.shown > 1 {
        writeln!(out)?;
    }
    match a.format {
        Format::Human => render::write_log_head(
            out,
            label,
            log.compression,
            &counts,
            &findings,
            Color::Always,
        )?,
        Format::Json => {
            tfreq::render::write_log_start(out, label, log.compression, counts.entries, &findings)?
        }
        Format::Github => {
            for f in &findings {
                tfreq::render::write_github_finding(out, label, label, f)?;
            }
        }
        Format::Text => {}
    }
    spool.copy_to(out)?;
    if let Some(e) = failed {
        tally.unreadable += 1;
        return write_unreadable(out, a, label, &e, progress);
    }
    if a.format == Format::Json {
        tfreq::render::write_log_end(out)?;
        if !json_many {
            writeln!(out)?;
        }
    }
    Ok(())
}

/// One record of a log in `--format github`: its examples' annotations, then its
/// findings.
fn write_github_entry(
    out: &mut impl Write,
    label: &str,
    e: &tfreq::formats::Entry,
    problems: &[Finding],
) -> Result<(), Failure> {
    let elabel = format!("{label} {}", e.label(ContainerKind::TfRecord));
    if let Content::Message(m) = &e.content {
        tfreq::render::write_github_examples(out, label, &elabel, m)?;
    }
    for f in problems {
        tfreq::render::write_github_finding(out, label, &elabel, f)?;
    }
    Ok(())
}

/// A file read whole, with each entry's findings.
fn linted(mut c: Container) -> Loaded {
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
    (c, problems)
}

/// Shows a TFRecord log read from standard input record by record, as it comes: each
/// record with its findings (lint, and what TF Serving's warm-up loader makes of it),
/// then what the loader makes of the log as a whole. A record that cannot be read ends
/// the log: what came before it is shown, and the error is returned for the caller to
/// report (the document of `--format json` is closed first).
fn stream_log(
    out: &mut impl Write,
    a: &Args,
    inputs: &Inputs,
    r: Box<dyn std::io::Read>,
    c: Option<tfreq::formats::Compression>,
    tally: &mut Tally,
    json_many: bool,
) -> Result<Option<Failure>, Failure> {
    let label = "-";
    let mode = values_mode(a.values);
    let mut check = tfreq::analysis::RecordCheck::default();
    let mut kinds: std::collections::BTreeMap<&'static str, u64> = Default::default();
    let mut failure = None;
    tally.shown += 1;
    if a.format == Format::Human {
        if tally.shown > 1 {
            writeln!(out)?;
        }
        let how = c.map_or(String::new(), |c| format!("{c}-compressed "));
        writeln!(
            out,
            "{label}: {how}TFRecord of PredictionLog, read as a stream"
        )?;
    }
    let mut json = match a.format {
        Format::Json => Some(tfreq::render::StreamedContainer::start(out, label, mode)?),
        _ => None,
    };
    for e in inputs.records(r, c) {
        let e = match e {
            Ok(e) => e,
            Err(e) => {
                failure = Some(crate::common::in_file(label, e));
                break;
            }
        };
        *kinds
            .entry(e.log_kind.map_or("none", |k| k.name()))
            .or_default() += 1;
        let linted = match &e.content {
            Content::Message(m) => lint(m),
            _ => Vec::new(),
        };
        // What the loader makes of the record names the record itself.
        let loader = check.entry(&e);
        tally.count(&linted);
        tally.count(&loader);
        show_record(out, a, &mut json, &e, &linted, &loader)?;
    }
    let whole = check.finish();
    tally.count(&whole);
    match (json, a.format) {
        (Some(doc), _) => {
            doc.finish(out, &whole)?;
            if !json_many {
                writeln!(out)?;
            }
        }
        (None, Format::Human) => {
            let n: u64 = kinds.values().sum();
            let by: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            writeln!(
                out,
                "\n{label}: {} ({})",
                crate::common::count(n, "record"),
                by.join(", ")
            )?;
            render::write_findings(out, &whole, Color::Always)?;
        }
        (None, Format::Text) => {}
        (None, _) => {
            for f in &whole {
                tfreq::render::write_github_finding(out, label, label, f)?;
            }
        }
    }
    Ok(failure)
}

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
            tfreq::render::write_github_unreadable(out, label, &e.message_without(label))?
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
        render::write_container_head(out, label, c, Color::Always)?;
    }
    render::write_entries(
        out,
        label,
        c,
        problems,
        0..c.entries.len(),
        bare,
        Color::Always,
    )?;
    Ok(())
}

fn write_text(
    out: &mut impl Write,
    label: &str,
    c: &tfreq::formats::Container,
    bare: bool,
) -> Result<(), Failure> {
    for e in &c.entries {
        write_text_entry(out, label, e, bare)?;
    }
    Ok(())
}

/// One entry of a file in protobuf text format (a heading per record unless `bare`).
fn write_text_entry(
    out: &mut impl Write,
    label: &str,
    e: &tfreq::formats::Entry,
    bare: bool,
) -> Result<(), Failure> {
    let kind = if bare {
        ContainerKind::Bare
    } else {
        ContainerKind::TfRecord
    };
    let Content::Message(msg) = &e.content else {
        if !bare {
            let what = e.log_kind.map_or("text line", |k| k.name());
            writeln!(out, "# {}: {what} (not a PredictRequest)", e.label(kind))?;
        }
        return Ok(());
    };
    if !bare {
        let log = e.log_kind.map_or("predict_log", |k| k.name());
        writeln!(out, "# {}: {log} request", e.label(kind))?;
    }
    let name = if msg.method.takes_examples() {
        msg.method.request_message()
    } else {
        tfreq::wire::message_name(msg.wire, msg.kind)
    };
    tfreq::render::write_text(out, e.bytes.clone(), name).map_err(|e| in_file(label, e))?;
    writeln!(out)?;
    Ok(())
}
