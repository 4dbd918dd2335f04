//! How `diff` and `check` end: a report rendered in the format asked for, its exit
//! code, and the run that cannot go on still reported in that format.

use std::io::Write;
use std::path::Path;

use tfreq::analysis::Hint;
use tfreq::analysis::{Command, Labeled, Report, RequestReport, Unreadable};
use tfreq::render::Color;
use tfreq::render::{ReportMark, ReportWriter};
use tfreq::signature::ModelSignatures;

use crate::args::ReportFormat;
use crate::common::{Failure, Outcome, human_color, human_stdout, report_error, stdout_plain};
use crate::input::{Loaded, Sink};

/// The exit code of a report: 0 when nothing fails, 1 when a finding or the verdict
/// fails, 2 when an input could not be read (README, "Conventions of every command").
pub fn exit_code(r: &Report) -> u8 {
    if !r.unreadable.is_empty() {
        2
    } else if r.failed {
        1
    } else {
        0
    }
}

/// Standard output for a report, and the colour a human one is written in
/// ([`human_stdout`]); JSON and GitHub annotations, which hold no colour code, are
/// passed through as written, so no byte of a long report is scanned for codes.
fn stdout_for(
    format: ReportFormat,
) -> (
    std::io::BufWriter<anstream::AutoStream<std::io::Stdout>>,
    Color,
) {
    match format {
        ReportFormat::Human => human_stdout(),
        ReportFormat::Json | ReportFormat::Github => (stdout_plain(), Color::Never),
    }
}

/// Renders a report and returns its exit code.
pub fn render(report: &mut Report, format: ReportFormat) -> Outcome {
    word_hints(report);
    let report = &*report;
    let (mut out, color) = stdout_for(format);
    match format {
        ReportFormat::Human => tfreq::render::write_human(&mut out, report, color)?,
        ReportFormat::Github => tfreq::render::write_github(&mut out, report)?,
        ReportFormat::Json => tfreq::render::write_json(&mut out, report)?,
    }
    out.flush()?;
    Ok(exit_code(report))
}

/// A report written as its requests are judged: each request is judged as it is read,
/// its hints worded ([`flag_hint`]), written ([`ReportWriter`]) and dropped, so a log of
/// any length is reported in bounded memory.
pub struct Streamed<F> {
    writer: ReportWriter,
    /// The requests' text: memory, then a temporary file.
    spool: tfreq::Spool,
    /// Where the report goes: [`stdout_for`] the format.
    format: ReportFormat,
    judge: F,
    /// The first request that could not be written (the spool's temporary file).
    error: Option<std::io::Error>,
}

impl<F: FnMut(&Loaded) -> RequestReport> Streamed<F> {
    /// Writes `report` (the report without its requests) in `format`, the requests
    /// judged by `judge` added to it.
    pub fn new(format: ReportFormat, report: Report, judge: F) -> Self {
        let to = format;
        let format = match format {
            ReportFormat::Human => tfreq::render::ReportFormat::Human(human_color()),
            ReportFormat::Json => tfreq::render::ReportFormat::Json,
            ReportFormat::Github => tfreq::render::ReportFormat::Github,
        };
        Streamed {
            writer: ReportWriter::new(format, report),
            spool: tfreq::Spool::new(),
            format: to,
            judge,
            error: None,
        }
    }

    /// The report, to add what is known at the end (problems, unreadable files, the model).
    pub fn report_mut(&mut self) -> &mut Report {
        self.writer.report_mut()
    }

    /// Writes the report and returns its exit code.
    pub fn finish(mut self) -> Outcome {
        if let Some(e) = self.error {
            return Err(e.into());
        }
        word_hints(self.writer.report_mut());
        let (mut out, _) = stdout_for(self.format);
        let spool = self.spool;
        let report = self.writer.finish(&mut out, |out| spool.copy_to(out))?;
        out.flush()?;
        Ok(exit_code(&report))
    }
}

impl<F: FnMut(&Loaded) -> RequestReport> Sink for Streamed<F> {
    type Mark = (ReportMark, u64);
    fn put(&mut self, l: Loaded) {
        let mut r = (self.judge)(&l);
        drop(l);
        r.findings.iter_mut().for_each(|f| f.word_hint(flag_hint));
        if self.error.is_none() {
            self.error = self.writer.request(&mut self.spool, &r).err();
        }
    }
    fn mark(&mut self) -> (ReportMark, u64) {
        (self.writer.mark(), self.spool.len())
    }
    fn rollback(&mut self, (mark, len): (ReportMark, u64)) {
        self.writer.rollback(mark);
        if let Err(e) = self.spool.truncate(len) {
            self.error.get_or_insert(e);
        }
    }
}

/// A run that cannot go on (the warm-up or the model cannot be read): in JSON and
/// GitHub formats still one document / annotation naming the file and why, as every
/// other unreadable input is reported, besides the error line; exit 2.
pub fn fatal(command: Command, format: ReportFormat, file: &Path, e: Failure) -> Outcome {
    if format == ReportFormat::Human {
        return Err(e);
    }
    let name = file.display().to_string();
    report_error(&e);
    let mut report = Report::new(command, Vec::new());
    report.add_unreadable([Unreadable {
        error: e.message_without(&name),
        file: name,
    }]);
    render(&mut report, format)?;
    Ok(2)
}

/// Words each finding's [`Hint`] as this command line's flag: the library's messages
/// name none (a Python caller has other names for the same options).
pub fn word_hints(report: &mut Report) {
    report.findings_mut().for_each(|f| f.word_hint(flag_hint));
}

/// A finding's [`Hint`] in this command line's terms.
pub fn flag_hint(h: Hint) -> Option<&'static str> {
    Some(match h {
        Hint::StrictShapes => " (an error with --strict-shapes)",
        Hint::Model => {
            ": pass --model PATH (a SavedModel, its metadata JSON or saved_model_cli output)"
        }
        Hint::ModelGraph => ": give --model with the SavedModel (its saved_model.pb has the graph)",
        _ => return None,
    })
}

/// Labeled views of loaded requests.
pub fn labeled(v: &[Loaded]) -> Vec<Labeled<'_>> {
    v.iter()
        .map(|l| Labeled::new(&l.file, &l.label, &l.message))
        .collect()
}

/// Reads --model.
pub fn load_model(path: &Path) -> Result<ModelSignatures, Failure> {
    tfreq::formats::read_model(path)
        .map(|(m, _)| m)
        .map_err(Failure::from)
}
