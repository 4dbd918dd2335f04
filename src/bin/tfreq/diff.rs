//! `tfreq diff WARMUP PROD... [--strict-shapes] [--model PATH] [--format human|json|github]`

use std::io::Write;
use std::path::{Path, PathBuf};

use tfreq::analysis::diff::{diff_labeled, DiffOptions};
use tfreq::analysis::report::{Command, Labeled, Report, Unreadable};
use tfreq::analysis::Finding;
use tfreq::formats::savedmodel::read_model;
use tfreq::formats::{ContainerKind, Content, Record};
use tfreq::signature::{ModelSignatures, SERVE_TAG};
use tfreq::{DecodeOptions, Kind, Message};

use crate::common::{
    human_size, in_file, report_error, rest_dtypes, stdout, Failure, InputArgs, InputFrom, Outcome,
    Progress,
};
use tfreq::formats::detect::Source;

/// Output format of `diff` and `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One screen for people.
    Human,
    /// One JSON document (schema in the README).
    Json,
    /// GitHub Actions workflow annotations.
    Github,
}

#[derive(clap::Args)]
pub struct Args {
    /// The warm-up file (one or more requests).
    warmup: PathBuf,
    /// Production request files.
    #[arg(required = true)]
    prod: Vec<PathBuf>,
    /// Shape and batch-size changes fail (XLA, TF Serving batching, PAI-Blade).
    #[arg(long)]
    strict_shapes: bool,
    /// The model (SavedModel directory, metadata JSON or saved_model_cli text), to
    /// resolve TF Serving's empty output_filter and signature defaults.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Meta graph tag of --model.
    #[arg(long, default_value = SERVE_TAG)]
    tag: String,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// What the input files are, instead of detecting it.
    #[arg(long = "from", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
    #[command(flatten)]
    input_args: InputArgs,
    /// A REST JSON input's dtype (JSON carries none): NAME=DT_FLOAT. Repeatable.
    #[arg(long = "dtype", value_name = "NAME=DTYPE")]
    dtypes: Vec<String>,
}

/// A request read from a file, with its label.
pub struct Loaded {
    pub file: String,
    pub label: String,
    pub message: Message,
}

/// How to read request files: what they are, and dtypes for REST JSON.
pub struct Reading<'a> {
    /// `--from`.
    pub from: InputFrom,
    /// The model whose signature gives REST JSON inputs their dtypes.
    pub model: Option<&'a Path>,
    /// `--dtype NAME=DTYPE` for REST JSON inputs.
    pub dtypes: &'a [String],
    /// `--max-size`.
    pub input: InputArgs,
}

/// The requests read from files, the findings about the files themselves (TF
/// Serving's warm-up loader limits, what detection found), by file, and the files that
/// could not be read.
#[derive(Default)]
pub struct Inputs {
    pub requests: Vec<Loaded>,
    pub problems: Vec<(String, Vec<Finding>)>,
    pub unreadable: Vec<Unreadable>,
}

impl Inputs {
    /// Adds the file findings and the unreadable files to a report.
    pub fn report_problems(&self, report: &mut Report) {
        for (file, found) in &self.problems {
            report.add_problems(file, file, found.clone());
        }
        report.add_unreadable(self.unreadable.iter().cloned());
    }
}

/// Reads every request in each file (a file may hold several, e.g. a TFRecord warm-up).
/// A file that cannot be read is reported on stderr and set aside; the others are read.
/// `warmup`: the files are warm-ups (what TF Serving's loader reads), so a compressed
/// one is a finding.
pub fn load_all(paths: &[PathBuf], how: &Reading, progress: &Progress, warmup: bool) -> Inputs {
    let mut inputs = Inputs::default();
    for p in paths {
        let file = p.display().to_string();
        if let Err(e) = load_into(&mut inputs, p, how, progress, warmup) {
            progress.suspend(|| report_error(&e));
            inputs.unreadable.push(Unreadable {
                error: e.message_without(&file),
                file,
            });
        }
    }
    inputs
}

/// Reads every request of one file into `inputs`; the error names the file, and
/// nothing of a file that fails is added.
fn load_into(
    inputs: &mut Inputs,
    p: &Path,
    how: &Reading,
    progress: &Progress,
    as_warmup: bool,
) -> Result<(), Failure> {
    let mut out = Vec::new();
    {
        let file = p.display().to_string();
        progress.step(format!("reading {file}"));
        let (bytes, compressed) = how.input.read_detailed(p)?;
        progress.step(format!(
            "decoding {file} ({})",
            human_size(bytes.len() as u64)
        ));
        let mut src = Source::for_path(p, how.from.format());
        // REST JSON carries no dtypes: the model's signature (the one the body names)
        // gives them. Other inputs name their own signature, which the model need not
        // have as serving_default (TF Serving runs the request's).
        if looks_like_json(&bytes) {
            src.rest = rest_dtypes(how.model, how.dtypes)?;
        }
        let mut c = tfreq::formats::load_detailed_from(bytes, DecodeOptions::default(), &src)
            .map_err(|e| in_file(&file, e))?;
        let limits = tfreq::analysis::warmup::file_findings(&c);
        c.findings.extend(limits);
        if let (Some(comp), true) = (compressed, as_warmup) {
            // TF Serving opens the warm-up with a RecordReader of default options (no
            // compression): tests/data/detect/compressed.json holds TensorFlow's own
            // error for such a file read that way ("corrupted record at 0").
            c.findings.push(Finding::new(
                tfreq::analysis::Code::WarmupCompressed,
                tfreq::analysis::Severity::Error,
                format!("{comp}-compressed: TF Serving's warm-up loader (tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc) reads uncompressed TFRecord only, so loading the model fails on it ('corrupted record at 0'); write it uncompressed (tfreq convert FILE --wire tfrecord -o tf_serving_warmup_requests)"),
            ));
        }
        c.findings
            .extend(tfreq::analysis::warmup::not_compared(&c.entries));
        let findings = c.findings;
        // A warm-up file may hold no predict request (0 bytes, or only classify/regress
        // records) and still be what TF Serving loads: its findings say so. Any other
        // file without a request is not a request file.
        let warmup = matches!(
            c.kind,
            ContainerKind::TfRecord | ContainerKind::UnframedLogs
        );
        let records: Vec<Record> = c
            .entries
            .into_iter()
            .filter_map(|e| {
                let label = e.label(c.kind);
                match e.content {
                    Content::Message(message) => Some(Record { label, message }),
                    _ => None,
                }
            })
            .collect();
        if records.is_empty() && !warmup {
            return Err(in_file(&file, Failure::msg("holds no request")));
        }
        let many = records.len() > 1;
        for (i, r) in records.into_iter().enumerate() {
            if r.message.kind != Kind::Request {
                let at = if r.label.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", r.label)
                };
                return Err(in_file(
                    &file,
                    Failure::msg(
                        format!("{at} holds a {}, not a request", r.message.kind).trim_start(),
                    ),
                ));
            }
            let label = match (r.label.is_empty(), many) {
                (true, false) => file.clone(),
                (true, true) => format!("{file} (record {})", i + 1),
                (false, _) => format!("{file} ({})", r.label),
            };
            out.push(Loaded {
                file: file.clone(),
                label,
                message: r.message,
            });
        }
        if !findings.is_empty() {
            inputs.problems.push((file, findings));
        }
    }
    inputs.requests.extend(out);
    Ok(())
}

/// Whether the bytes start (after white space) like a JSON object or array.
fn looks_like_json(b: &[u8]) -> bool {
    matches!(
        b.iter().find(|c| !c.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

/// Labeled views of loaded requests.
pub fn labeled(v: &[Loaded]) -> Vec<Labeled<'_>> {
    v.iter()
        .map(|l| Labeled::new(&l.file, &l.label, &l.message))
        .collect()
}

/// Reads --model.
pub fn load_model(path: &Path) -> Result<ModelSignatures, Failure> {
    read_model(path).map(|(m, _)| m).map_err(Failure::from)
}

/// Renders a report and returns its exit code.
pub fn render(report: &Report, format: Format) -> Outcome {
    let mut out = stdout();
    match format {
        Format::Human => tfreq::render::report::write_human(&mut out, report)?,
        Format::Github => tfreq::render::report::write_github(&mut out, report)?,
        Format::Json => writeln!(out, "{}", report.to_json())?,
    }
    out.flush()?;
    Ok(report.exit_code())
}

/// A run that cannot go on (the warm-up or the model cannot be read): in JSON and
/// GitHub formats still one document / annotation naming the file and why, as every
/// other unreadable input is reported, besides the error line; exit 2.
pub fn fatal(command: Command, format: Format, file: &Path, e: Failure) -> Outcome {
    if format == Format::Human {
        return Err(e);
    }
    let name = file.display().to_string();
    report_error(&e);
    let mut report = Report::new(command, Vec::new());
    report.add_unreadable([Unreadable {
        error: e.message_without(&name),
        file: name,
    }]);
    render(&report, format)?;
    Ok(2)
}

pub fn run(a: Args) -> Outcome {
    let format = a.format;
    let (warmup, model) = (a.warmup.clone(), a.model.clone());
    match run_diff(a) {
        Err(Fatal::Warmup(e)) => fatal(Command::Diff, format, &warmup, e),
        Err(Fatal::Model(e)) => fatal(
            Command::Diff,
            format,
            model.as_deref().unwrap_or(Path::new("--model")),
            e,
        ),
        Err(Fatal::Other(e)) => Err(e),
        Ok(code) => Ok(code),
    }
}

/// What stopped a `diff` before it compared anything.
enum Fatal {
    Warmup(Failure),
    Model(Failure),
    Other(Failure),
}

impl<E: Into<Failure>> From<E> for Fatal {
    fn from(e: E) -> Self {
        Fatal::Other(e.into())
    }
}

fn run_diff(a: Args) -> Result<u8, Fatal> {
    crate::common::stdin_at_most_once(
        std::iter::once(a.warmup.as_path()).chain(a.prod.iter().map(PathBuf::as_path)),
    )?;
    let model = a
        .model
        .as_deref()
        .map(load_model)
        .transpose()
        .map_err(Fatal::Model)?;
    let mg = match &model {
        Some(m) => Some(m.meta_graph(&a.tag).ok_or_else(|| {
            Fatal::Model(Failure::msg(format!(
                "--model {}: no meta graph tagged {:?} (tag sets: {})",
                a.model
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                a.tag,
                m.tag_sets().join("; ")
            )))
        })?),
        None => None,
    };
    let how = Reading {
        from: a.from,
        model: a.model.as_deref(),
        dtypes: &a.dtypes,
        input: a.input_args,
    };
    let mut inputs = vec![a.warmup.clone()];
    inputs.extend(a.prod.iter().cloned());
    let progress = Progress::new(&inputs, a.format != Format::Human);
    // Without the warm-up there is nothing to compare with: that one is fatal.
    let mut warm = Inputs::default();
    load_into(&mut warm, &a.warmup, &how, &progress, true).map_err(Fatal::Warmup)?;
    let prod = load_all(&a.prod, &how, &progress, false);
    progress.step("comparing");
    let opts = DiffOptions {
        strict_shapes: a.strict_shapes,
        model: mg,
    };
    let mut report = diff_labeled(&labeled(&warm.requests), &labeled(&prod.requests), &opts);
    warm.report_problems(&mut report);
    prod.report_problems(&mut report);
    report.model = a.model.as_ref().map(|p| p.display().to_string());
    drop(progress);
    Ok(render(&report, a.format)?)
}
