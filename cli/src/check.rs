//! `tfreq check REQUEST... --model PATH [--tag serve] [--signature NAME] [--format human|json|github]`

use std::path::PathBuf;

use tfreq::analysis::Labeled;
use tfreq::analysis::Report;
use tfreq::analysis::{CheckOptions, check_one};
use tfreq::signature::SERVE_TAG;

use tfreq::analysis::Command;

use crate::args::ReportFormat as Format;
use crate::common::{Failure, Outcome, Progress};
use crate::input::{InputArgs, Inputs, Loaded, Sink};
use crate::report::{Streamed, load_model};

#[derive(clap::Args)]
pub struct Args {
    /// Request files.
    #[arg(required = true)]
    requests: Vec<PathBuf>,
    /// The model: a SavedModel directory (or saved_model.pb), TF Serving's metadata
    /// JSON, the text `saved_model_cli show --all` printed, or a live TF Serving
    /// (grpc://HOST:PORT with --model-name, or http://HOST:PORT/v1/models/NAME).
    #[arg(long, value_name = "PATH|URL", required = true)]
    model: PathBuf,
    /// The model name for a grpc:// --model (default: the model_spec.name of the first
    /// request that has one; the requests before it are held, at most 16 MiB).
    #[arg(long)]
    model_name: Option<String>,
    /// Trust the CA certificates of this PEM file for an https:// or grpcs:// --model
    /// (a private CA's), instead of the usual public roots.
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// Meta graph tag.
    #[arg(long, default_value = SERVE_TAG)]
    tag: String,
    /// Check against this signature instead of the one each request names.
    #[arg(long, value_name = "NAME")]
    signature: Option<String>,
    /// A shape the signature does not allow fails (SHAPE_INCOMPATIBLE is an error):
    /// for models compiled per shape (XLA, TF Serving batching, PAI-Blade).
    #[arg(long)]
    strict_shapes: bool,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    input: InputArgs,
}

pub fn run(a: Args) -> Outcome {
    let (format, model) = (a.format, a.model.clone());
    match run_check(a) {
        Err(ModelFailure(e)) => crate::report::fatal(Command::Check, format, &model, e),
        Ok(r) => r,
    }
}

/// The model could not be read (or has no meta graph with the tag): nothing is checked.
struct ModelFailure(Failure);

fn run_check(a: Args) -> Result<Outcome, ModelFailure> {
    if let Err(e) = crate::common::stdin_at_most_once(a.requests.iter().map(PathBuf::as_path)) {
        return Ok(Err(e));
    }
    let url = a.model.to_str().filter(|s| is_url(s));
    // A model file is read first: when it cannot be read, nothing else is. So is a live
    // model whose name is known before any request is read (--model-name, or a REST
    // URL's path); then, as with a file, each request is checked as it is read.
    let file_model = match url {
        None => Some(load_model(&a.model).map_err(ModelFailure)?),
        Some(u) if a.model_name.is_some() || names_model(u) => Some(
            live_model(u, a.model_name.clone(), a.cacert.as_deref(), &[]).map_err(ModelFailure)?,
        ),
        Some(_) => None,
    };
    // A live model's dtypes are not read from a file (give --dtype for REST JSON).
    let inputs = Inputs::new(&a.input, url.is_none().then_some(a.model.as_path()));
    let files = match inputs.expand(&a.requests) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e)),
    };
    let progress = Progress::new(&files, a.format != Format::Human);
    let opts = CheckOptions {
        tag: a.tag.clone(),
        signature: a.signature.clone(),
        strict_shapes: a.strict_shapes,
    };
    let no_tag = |model: &tfreq::signature::ModelSignatures| {
        ModelFailure(Failure::msg(format!(
            "--model {}: no meta graph tagged {:?} (tag sets: {})",
            a.model.display(),
            a.tag,
            model.tag_sets().join("; ")
        )))
    };
    let Some(model) = file_model else {
        // A live model named by the requests (grpc:// without --model-name): they are
        // held until the first that names its model, which the service is asked for;
        // from then on, as with a file, each is checked as it is read.
        let mut sink = AskFirst {
            ask: Ask {
                url: url.unwrap_or_default(),
                cacert: a.cacert.as_deref(),
                format: a.format,
                opts: &opts,
                no_tag: &no_tag,
            },
            state: State::Holding {
                held: Vec::new(),
                bytes: 0,
                open: None,
            },
        };
        let reqs = inputs.requests_into(&files, &progress, true, &mut sink);
        drop(progress);
        let mut report = sink.finish()?;
        reqs.report_problems(report.report_mut());
        report.report_mut().model = Some(a.model.display().to_string());
        return Ok(report.finish());
    };
    if model.meta_graph(&a.tag).is_none() {
        return Err(no_tag(&model));
    }
    // Each request is checked as it is read and dropped, so a log of any length is
    // checked in bounded memory.
    let mut report = Streamed::new(
        a.format,
        Report::new(Command::Check, Vec::new()),
        |l: &Loaded| check_one(&Labeled::new(&l.file, &l.label, &l.message), &model, &opts),
    );
    let reqs = inputs.requests_into(&files, &progress, true, &mut report);
    drop(progress);
    reqs.report_problems(report.report_mut());
    report.report_mut().model = Some(a.model.display().to_string());
    Ok(report.finish())
}

/// At most this many bytes of requests are held while none names its model
/// ([`AskFirst`]); past it, `check` asks for `--model-name`.
const HOLD_UNNAMED: usize = 16 << 20;

/// The check of each request, once the model is known.
type Judge<'a> = Box<dyn FnMut(&Loaded) -> tfreq::analysis::RequestReport + 'a>;

/// Where [`AskFirst`] is.
enum State<'a> {
    /// No request named its model yet: they are held (`bytes` of them), and `open` is
    /// the mark of the file being read, if one was taken.
    Holding {
        held: Vec<Loaded>,
        bytes: usize,
        open: Option<usize>,
    },
    /// The model is known: each request is checked as it comes. `moved` is the open
    /// file's mark taken while holding, and where it is in the report now.
    Checking {
        report: Box<Streamed<Judge<'a>>>,
        moved: Option<(usize, <Streamed<Judge<'a>> as Sink>::Mark)>,
    },
    /// The model could not be had: nothing more is checked.
    Failed(ModelFailure),
}

/// `check --model grpc://` without `--model-name`: the first request that names its
/// model decides which model the service is asked for (as it did when every request was
/// held first); the requests before it are held, then each is checked as it is read.
struct AskFirst<'a> {
    ask: Ask<'a>,
    state: State<'a>,
}

/// What asking the service and checking against its answer need.
struct Ask<'a> {
    url: &'a str,
    cacert: Option<&'a std::path::Path>,
    format: Format,
    opts: &'a CheckOptions,
    no_tag: &'a dyn Fn(&tfreq::signature::ModelSignatures) -> ModelFailure,
}

/// Where [`AskFirst`] was: among the held requests or in the report.
enum AskMark<M> {
    Held(usize),
    Checked(M),
}

impl<'a> AskFirst<'a> {
    /// The report, once every request was read. When none named its model, the service
    /// is asked without a name, and says what is missing.
    fn finish(self) -> Result<Streamed<Judge<'a>>, ModelFailure> {
        let state = match self.state {
            State::Holding { held, .. } => self.ask.model(None, held, None),
            state => state,
        };
        match state {
            State::Checking { report, .. } => Ok(*report),
            State::Failed(e) => Err(e),
            State::Holding { .. } => unreachable!("Ask::model holds nothing"),
        }
    }
}

impl<'a> Ask<'a> {
    /// Asks the service for the signatures of the model `name` and checks the requests
    /// `held` (the open file's mark at `open`): the state that follows.
    fn model(&self, name: Option<String>, held: Vec<Loaded>, open: Option<usize>) -> State<'a> {
        let model = match live_model(self.url, name, self.cacert, &held) {
            Ok(m) if m.meta_graph(&self.opts.tag).is_some() => m,
            Ok(m) => return State::Failed((self.no_tag)(&m)),
            Err(e) => return State::Failed(ModelFailure(e)),
        };
        let opts = self.opts;
        let judge: Judge<'a> = Box::new(move |l: &Loaded| {
            check_one(&Labeled::new(&l.file, &l.label, &l.message), &model, opts)
        });
        let mut report = Streamed::new(self.format, Report::new(Command::Check, Vec::new()), judge);
        let mut moved = None;
        for (i, l) in held.into_iter().enumerate() {
            if open == Some(i) {
                moved = Some((i, report.mark()));
            }
            report.put(l);
        }
        State::Checking {
            report: Box::new(report),
            moved,
        }
    }
}

impl Sink for AskFirst<'_> {
    type Mark = AskMark<<Streamed<Judge<'static>> as Sink>::Mark>;
    fn put(&mut self, l: Loaded) {
        match &mut self.state {
            State::Checking { report, .. } => report.put(l),
            State::Failed(_) => {}
            State::Holding { held, bytes, open } => {
                let name = l
                    .message
                    .model_spec
                    .as_ref()
                    .map(|s| s.name.clone())
                    .filter(|n| !n.is_empty());
                *bytes += l.bytes.len();
                held.push(l);
                if let Some(name) = name {
                    let (held, open) = (std::mem::take(held), *open);
                    self.state = self.ask.model(Some(name), held, open);
                } else if *bytes > HOLD_UNNAMED {
                    self.state = State::Failed(ModelFailure(Failure::msg(format!(
                        "--model {}: the first {} of requests name no model (model_spec.name): give --model-name",
                        self.ask.url,
                        crate::common::human_size(HOLD_UNNAMED as u64)
                    ))));
                }
            }
        }
    }
    fn mark(&mut self) -> Self::Mark {
        match &mut self.state {
            State::Holding { held, open, .. } => {
                *open = Some(held.len());
                AskMark::Held(held.len())
            }
            State::Checking { report, .. } => AskMark::Checked(report.mark()),
            State::Failed(_) => AskMark::Held(0),
        }
    }
    fn rollback(&mut self, mark: Self::Mark) {
        match (&mut self.state, mark) {
            (State::Holding { held, bytes, .. }, AskMark::Held(n)) => {
                held.truncate(n);
                *bytes = held.iter().map(|l| l.bytes.len()).sum();
            }
            (State::Checking { report, .. }, AskMark::Checked(m)) => report.rollback(m),
            (State::Checking { report, moved }, AskMark::Held(n)) => {
                // The file began while the requests were held: back to where its
                // first request went in the report (nothing of it went in, when none).
                if let Some((_, m)) = moved.take().filter(|(at, _)| *at == n) {
                    report.rollback(m);
                }
            }
            _ => {}
        }
    }
}

pub(crate) fn is_url(s: &str) -> bool {
    ["grpc://", "grpcs://", "http://", "https://"]
        .iter()
        .any(|p| s.starts_with(p))
}

/// The signatures a live server reports (gRPC GetModelMetadata, REST `/metadata`).
#[cfg(feature = "net")]
pub(crate) fn live_model(
    url: &str,
    name: Option<String>,
    cacert: Option<&std::path::Path>,
    reqs: &[Loaded],
) -> Result<tfreq::signature::ModelSignatures, Failure> {
    use tfreq::net::{Client, Options, Target};
    let target = Target::parse(url, None)
        .map_err(|e| Failure::msg(format!("--model {}", crate::common::net_text(&e))))?;
    let model_name = name.or_else(|| {
        reqs.iter()
            .filter_map(|r| r.message.model_spec.as_ref())
            .map(|s| s.name.clone())
            .find(|n| !n.is_empty())
    });
    let opts = Options {
        model_name,
        ca_cert: crate::live::read_cacert(cacert)?,
        ..Options::default()
    };
    Client::connect(target, opts)
        .and_then(|mut c| c.metadata())
        .map_err(|e| Failure::msg(format!("--model {url}: {}", crate::common::net_text(&e))))
}

/// Whether a live `--model` URL names its model itself (a TF Serving REST URL's
/// `/v1/models/NAME`).
#[cfg(feature = "net")]
fn names_model(url: &str) -> bool {
    matches!(
        tfreq::net::Target::parse(url, None),
        Ok(tfreq::net::Target::Rest { .. })
    )
}

#[cfg(not(feature = "net"))]
fn names_model(_: &str) -> bool {
    false
}

#[cfg(not(feature = "net"))]
pub(crate) fn live_model(
    url: &str,
    _: Option<String>,
    _: Option<&std::path::Path>,
    _: &[Loaded],
) -> Result<tfreq::signature::ModelSignatures, Failure> {
    Err(Failure::msg(format!(
        "--model {url}: this tfreq was built without the network feature \"net\""
    )))
}
