//! `tfreq send FILE... --to URL [--expect RESPONSE] [--save DIR] [--async] [--concurrency N]`

use std::io::Write;
use std::path::{Path, PathBuf};

use tfreq::analysis::Finding;
use tfreq::analysis::ms;
use tfreq::analysis::{Tolerance, compare};
use tfreq::net::Ticket;
use tfreq::net::{self, InOrder};
use tfreq::net::{Exchange, NetError, Prepared, Protocol, prepare};
use tfreq::render::{self, Color};
use tfreq::render::{FindingsJson, MessageJson, ValuesMode};
use tfreq::{DecodeOptions, Kind, Message, WireFormat};

use crate::args::{MessageFormat as Format, Values};
use crate::common::{Failure, Outcome, Progress, in_file, report_error, stdout};
use crate::input::{InputArgs, Inputs, Loaded as Req};
use crate::live::{Conn, fatal};

#[derive(clap::Args)]
pub struct Args {
    /// Request files (bare EAS or TF Serving requests, TFRecord warm-ups, text format).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    conn: Conn,
    /// Output format of each response.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Values in JSON output.
    #[arg(long, value_enum, default_value_t = Values::Preview)]
    values: Values,
    /// Keep each raw response in this directory, as STEM.response.bin (REST: .json),
    /// STEM being the request file's name without its extension (STEM.N for record N
    /// of a file of several). Two requests whose responses would get the same name
    /// (a/x.bin and b/x.bin) are refused before anything is sent; a file of that name
    /// left by an earlier run is replaced.
    #[arg(long, value_name = "DIR")]
    save: Option<PathBuf>,
    /// The expected response (a file), or a directory of them named as --save names
    /// them: a difference in output names, dtypes, shapes or values fails (exit 1).
    #[arg(long, value_name = "RESPONSE")]
    expect: Option<PathBuf>,
    /// Relative tolerance of --expect.
    #[arg(long, default_value_t = 1e-5)]
    rtol: f64,
    /// Absolute tolerance of --expect.
    #[arg(long, default_value_t = 1e-8)]
    atol: f64,
    /// EAS asynchronous service: put the request on the service's queue and wait for
    /// its result on the sink queue (--timeout bounds the wait).
    #[arg(long = "async")]
    is_async: bool,
    /// Tags of the queued request (--async), NAME=VALUE, as query parameters.
    #[arg(long = "tag", value_name = "NAME=VALUE")]
    tags: Vec<String>,
    /// How many requests are sent at once (each on its own connection); the answers
    /// are shown in the order of the files all the same. Above 1, a request that fails
    /// is reported in its place and the others still sent (exit: the worst); with
    /// --async, every request is put on the queue first, then every result waited for.
    #[arg(long, short = 'c', default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    #[command(flatten)]
    input: InputArgs,
}

/// How one call went.
struct Outcome1 {
    exchange: Exchange,
    findings: Vec<Finding>,
    expected_from: Option<String>,
}

pub fn run(a: Args) -> Outcome {
    if a.format == Format::Github {
        return Err(Failure::msg(
            "send writes --format human, text or json (github annotations are for diff and check)",
        ));
    }
    let inputs = Inputs::new(&a.input, None);
    let files = inputs.expand(&a.files)?;
    crate::common::stdin_at_most_once(files.iter().chain(&a.expect).map(PathBuf::as_path))?;
    let (target, opts) = a.conn.resolve()?;
    check_options(&a, target.protocol())?;
    let progress = Progress::new(&files, true);
    let read = inputs.requests(&files, &progress, false);
    drop(progress);
    // A file that cannot be read was reported in its place; the others are sent.
    let code = if read.unreadable.is_empty() { 0u8 } else { 2 };
    if let Some(dir) = &a.save {
        refuse_colliding_saves(dir, &read.requests, target.protocol())?;
        std::fs::create_dir_all(dir).map_err(|e| in_file(&dir.display().to_string(), e))?;
    }
    let (planned, planned_code) = plan(&a, read.requests, &target, &opts);
    let mut p = Printer {
        a: &a,
        protocol: target.protocol(),
        out: stdout(),
        code: code.max(planned_code),
        json_many: a.format == Format::Json && planned.len() > 1,
        shown: 0,
        failed: None,
        fatal: None,
        order: InOrder::default(),
    };
    if p.json_many {
        p.out.write_all(b"[")?;
    }
    if a.is_async {
        send_through_queues(&a, &opts, &planned, &mut p)?;
    } else {
        send_directly(&a, &planned, &mut p)?;
    }
    if let Some(f) = p.failed.take().or(p.fatal.take()) {
        p.out.flush()?;
        return Err(f);
    }
    if p.json_many {
        p.out.write_all(b"]\n")?;
    }
    p.out.flush()?;
    Ok(p.code)
}

/// Every expected response read, and every request prepared, before anything is sent;
/// a request that cannot be is reported and left out (exit code 2, returned beside).
fn plan(
    a: &Args,
    reqs: Vec<Req>,
    target: &tfreq::net::Target,
    opts: &tfreq::net::Options,
) -> (Vec<Planned>, u8) {
    let mut code = 0;
    let n = reqs.len();
    let mut planned = Vec::with_capacity(n);
    for r in reqs {
        let plan = expected_for(a.expect.as_deref(), &r, target.protocol(), n).and_then(|want| {
            let p =
                prepare(&r.message, &r.bytes, target, opts).map_err(|e| in_file(&r.label, e))?;
            Ok((p, want))
        });
        match plan {
            Ok((p, want)) => planned.push((r, p, want)),
            Err(e) => {
                report_error(&e);
                code = 2;
            }
        }
    }
    (planned, code)
}

/// How many requests are in flight at once: `--concurrency`, at most one per request.
fn workers(a: &Args, planned: &[Planned]) -> usize {
    usize::try_from(a.concurrency)
        .unwrap_or(1)
        .max(1)
        .min(planned.len())
        .max(1)
}

/// With one at a time, a service that cannot be reached ends the run at once (as it
/// always has); with more, every request gets its answer or its error.
fn stops(a: &Args) -> impl Fn(&Result<Exchange, NetError>) -> bool + use<> {
    let one_at_a_time = a.concurrency <= 1;
    move |got| one_at_a_time && matches!(got, Err(e) if !e.is_refusal())
}

/// The synchronous calls: one connection per worker.
fn send_directly(a: &Args, planned: &[Planned], p: &mut Printer) -> Result<(), Failure> {
    let n = workers(a, planned);
    let (target, mut opts) = a.conn.resolve()?;
    if n > 1 {
        opts.max_response = Some(answer_limit(opts.max_response, &target, n));
    }
    let mut clients = (0..n)
        .map(|_| {
            tfreq::net::Client::connect(target.clone(), opts.clone()).map_err(|e| {
                Failure::msg(format!("{}: {}", a.conn.to, crate::common::net_text(&e)))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    net::each(
        &mut clients,
        planned,
        |c, _, (_, req, _)| c.send(req),
        stops(a),
        |i, got| p.take(planned, i, got),
    );
    Ok(())
}

/// What all the answers of `send --concurrency` may hold at once, when no
/// `--max-response-size` is given: 256 MiB.
const ANSWERS_BUDGET: u64 = 256 << 20;

/// The limit of each answer with `workers` at once: the one given, or else the
/// protocol's default cut so that every answer in flight or waiting to be shown in
/// order ([`net::AHEAD_PER_WORKER`] × `workers` of them) fits in [`ANSWERS_BUDGET`]
/// (at least 1 MiB each).
fn answer_limit(given: Option<u64>, target: &tfreq::net::Target, workers: usize) -> u64 {
    if let Some(g) = given {
        return g;
    }
    let default = match target.protocol() {
        Protocol::Grpc => tfreq::net::MAX_MESSAGE as u64,
        _ => tfreq::net::DEFAULT_MAX_RESPONSE,
    };
    let held = (net::AHEAD_PER_WORKER * workers.max(1)) as u64;
    default.min((ANSWERS_BUDGET / held).max(1 << 20))
}

/// `--async`: through the service's queue, one queue client per worker.
fn send_through_queues(
    a: &Args,
    opts: &tfreq::net::Options,
    planned: &[Planned],
    p: &mut Printer,
) -> Result<(), Failure> {
    let first =
        tfreq::net::Queue::new(&a.conn.to, opts, &a.tags).map_err(|e| fatal(&a.conn.to, e))?;
    let mut queues = vec![first];
    for _ in 1..workers(a, planned) {
        queues.push(queues[0].worker().map_err(|e| fatal(&a.conn.to, e))?);
    }
    if a.concurrency <= 1 {
        net::each(
            &mut queues,
            planned,
            |q, _, (_, req, _)| q.send(req),
            stops(a),
            |i, got| p.take(planned, i, got),
        );
        return Ok(());
    }
    // As a pool of queue clients does: every request put first, then every result
    // waited for, each at most `concurrency` at once.
    let mut tickets: Vec<Option<Result<Ticket, NetError>>> = vec![None; planned.len()];
    net::each(
        &mut queues,
        planned,
        |q, _, (_, req, _)| q.put(req),
        |_| false,
        |i, t| tickets[i] = Some(t),
    );
    net::each(
        &mut queues,
        &tickets,
        |q, i, t| match t {
            Some(Ok(t)) => q.wait(t, &planned[i].1),
            Some(Err(e)) => Err(e.clone()),
            None => Err(NetError::BadRequest("not put on the queue".into())),
        },
        |_| false,
        |i, got| p.take(planned, i, got),
    );
    Ok(())
}

/// A request as it is sent: the file, its prepared body, and the expected answer.
type Planned = (Req, Prepared, Option<(String, Message)>);

/// Shows the answers in the order of the files, whatever order they come in.
struct Printer<'a> {
    a: &'a Args,
    protocol: Protocol,
    out: std::io::BufWriter<anstream::AutoStream<std::io::Stdout>>,
    code: u8,
    json_many: bool,
    /// How many answers are shown so far.
    shown: usize,
    /// Writing failed (standard output closed): nothing more is written.
    failed: Option<Failure>,
    /// The service could not be reached, one request at a time: the run ends.
    fatal: Option<Failure>,
    order: InOrder<Result<Exchange, NetError>>,
}

impl Printer<'_> {
    /// Takes the answer (or error) of request `i`, and shows every answer now due.
    fn take(&mut self, planned: &[Planned], i: usize, got: Result<Exchange, NetError>) {
        let mut order = std::mem::take(&mut self.order);
        order.push(i, got, |i, got| {
            if self.failed.is_none()
                && self.fatal.is_none()
                && let Err(e) = self.one(&planned[i], got)
            {
                self.failed = Some(e);
            }
            true
        });
        self.order = order;
    }

    /// Shows one answer, or reports its error in its place.
    fn one(
        &mut self,
        (r, _, want): &Planned,
        got: Result<Exchange, NetError>,
    ) -> Result<(), Failure> {
        let a = self.a;
        let ex = match got {
            Ok(ex) => ex,
            Err(e) if e.is_refusal() || a.concurrency > 1 => {
                self.out.flush()?;
                let mut err = anstream::stderr();
                let text = crate::common::net_text(&e);
                writeln!(err, "tfreq: {}: {text}", tfreq::sanitize(&r.label))?;
                self.code = self.code.max(if e.is_refusal() { 1 } else { 2 });
                return Ok(());
            }
            Err(e) => {
                self.fatal = Some(fatal(&a.conn.to, e));
                return Ok(());
            }
        };
        if let Some(dir) = &a.save {
            let path = save_path(dir, r, self.protocol);
            crate::output::write_atomic(&path, &ex.raw)
                .map_err(|e| in_file(&path.display().to_string(), e))?;
        }
        let tol = Tolerance {
            rtol: a.rtol,
            atol: a.atol,
        };
        let (findings, expected_from) = match want {
            Some((from, m)) => (compare(m, &ex.response, tol), Some(from.clone())),
            None => (Vec::new(), None),
        };
        if findings
            .iter()
            .any(|f| f.severity == tfreq::analysis::Severity::Error)
        {
            self.code = self.code.max(1);
        }
        let o = Outcome1 {
            exchange: ex,
            findings,
            expected_from,
        };
        show(
            &mut self.out,
            a,
            self.shown,
            r,
            self.protocol,
            &o,
            self.json_many,
        )?;
        self.shown += 1;
        Ok(())
    }
}

/// Usage errors among the options, given the protocol `--to` speaks.
fn check_options(a: &Args, protocol: Protocol) -> Result<(), Failure> {
    if a.is_async && protocol != Protocol::Eas {
        return Err(Failure::msg(
            "--async is for EAS queue services (http(s)://HOST/api/predict/SERVICE)",
        ));
    }
    if !a.is_async && !a.tags.is_empty() {
        return Err(Failure::msg("--tag is for --async"));
    }
    if !(a.rtol >= 0.0 && a.atol >= 0.0) {
        return Err(Failure::msg("--rtol and --atol must be >= 0"));
    }
    Ok(())
}

/// Shows the answer to request number `i` in the format asked for.
fn show(
    out: &mut impl Write,
    a: &Args,
    i: usize,
    r: &Req,
    protocol: Protocol,
    o: &Outcome1,
    json_many: bool,
) -> Result<(), Failure> {
    let mode = match a.values {
        Values::None => ValuesMode::None,
        Values::Preview => ValuesMode::Preview,
        Values::All => ValuesMode::All,
    };
    match a.format {
        Format::Human => {
            if i > 0 {
                writeln!(out)?;
            }
            write_human(out, r, &a.conn.to, protocol, o)?
        }
        Format::Text => write_text(out, r, o)?,
        Format::Github => unreachable!("refused at the start of run"),
        Format::Json => {
            if i > 0 {
                out.write_all(b",")?;
            }
            write_json(out, r, &a.conn.to, protocol, o, mode)?;
            if !json_many {
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// Where `--save DIR` keeps the response of `r`.
fn save_path(dir: &Path, r: &Req, protocol: Protocol) -> PathBuf {
    let ext = if protocol == Protocol::Rest {
        "json"
    } else {
        "bin"
    };
    dir.join(format!("{}.response.{ext}", r.stem))
}

/// Refuses, before anything is sent, two requests whose responses `--save` would write
/// to the same file: the second would replace the first.
fn refuse_colliding_saves(dir: &Path, reqs: &[Req], protocol: Protocol) -> Result<(), Failure> {
    let mut seen: std::collections::HashMap<PathBuf, &str> = std::collections::HashMap::new();
    for r in reqs {
        let path = save_path(dir, r, protocol);
        if let Some(first) = seen.get(&path) {
            return Err(Failure::msg(format!(
                "--save: the responses to {} and {} would both be written to {}, the second replacing the first; nothing was sent. Send them in separate runs, with different --save directories, or rename one of the files",
                tfreq::escape(first),
                tfreq::escape(&r.label),
                tfreq::escape(&path.display().to_string())
            )));
        }
        seen.insert(path, &r.label);
    }
    Ok(())
}

/// The expected response of request `r`: `--expect FILE` (one request), or the file
/// `--save` would have written for it in `--expect DIR`.
fn expected_for(
    expect: Option<&Path>,
    r: &Req,
    protocol: Protocol,
    n: usize,
) -> Result<Option<(String, Message)>, Failure> {
    let Some(p) = expect else {
        return Ok(None);
    };
    let path = if p.is_dir() {
        let bin = p.join(format!("{}.response.bin", r.stem));
        let json = p.join(format!("{}.response.json", r.stem));
        match (bin.exists(), json.exists(), protocol) {
            (_, true, Protocol::Rest) | (false, true, _) => json,
            _ => bin,
        }
    } else if n > 1 {
        return Err(Failure::msg(format!(
            "--expect {} is one file for {n} requests; give a directory of STEM.response.bin files",
            p.display()
        )));
    } else {
        p.to_path_buf()
    };
    let label = path.display().to_string();
    let bytes = tfreq::read_input(&path).map_err(|e| in_file(&label, e))?;
    let msg = if path.extension().is_some_and(|e| e == "json") {
        tfreq::net::Outputs::default()
            .response(&bytes, r.message.effective_signature(), &r.message.fetches)
            .map_err(|e| in_file(&label, e))?
    } else {
        let opts = DecodeOptions {
            kind: Some(Kind::Response),
            ..DecodeOptions::default()
        };
        tfreq::decode_with(bytes, opts)
            .map_err(|e| in_file(&label, e))?
            .0
    };
    Ok(Some((label, msg)))
}

fn head(r: &Req, to: &str, protocol: Protocol, o: &Outcome1) -> String {
    format!(
        "{} -> {to} ({protocol}): answered in {:.3} ms",
        r.label,
        ms(o.exchange.latency)
    )
}

fn write_human(
    out: &mut dyn Write,
    r: &Req,
    to: &str,
    protocol: Protocol,
    o: &Outcome1,
) -> std::io::Result<()> {
    writeln!(out, "{}", head(r, to, protocol, o))?;
    for n in &o.exchange.notes {
        writeln!(out, "note: {n}")?;
    }
    render::write_summary(out, "response", &o.exchange.response, &[], Color::Always)?;
    if let Some(from) = &o.expected_from {
        if o.findings.is_empty() {
            writeln!(out, "expect {from}: the answer matches")?;
        } else {
            writeln!(out, "expect {from}:")?;
            render::write_findings(out, &o.findings, Color::Always)?;
        }
    }
    Ok(())
}

fn write_text(out: &mut dyn Write, r: &Req, o: &Outcome1) -> Result<(), Failure> {
    let m = &o.exchange.response;
    writeln!(
        out,
        "# {}: response, {:.3} ms",
        r.label,
        ms(o.exchange.latency)
    )?;
    // A REST answer is JSON: print the TF Serving response it stands for.
    let bytes = if m.size == o.exchange.raw.len() && !o.exchange.raw.starts_with(b"{") {
        o.exchange.raw.clone()
    } else {
        tfreq::encode(m, WireFormat::TfServing, tfreq::TfsEncoding::Python)
            .map_err(|e| in_file(&r.label, e))?
            .into()
    };
    tfreq::render::write_text(
        out,
        bytes,
        tfreq::wire::message_name(m.wire, Kind::Response),
    )
    .map_err(|e| in_file(&r.label, e))?;
    writeln!(out)?;
    for f in &o.findings {
        writeln!(out, "# {}: {}", f.code, f.message)?;
    }
    Ok(())
}

fn write_json(
    out: &mut dyn Write,
    r: &Req,
    to: &str,
    protocol: Protocol,
    o: &Outcome1,
    mode: ValuesMode,
) -> std::io::Result<()> {
    /// One exchange's document: fields in the order it has always had
    /// (alphabetical, then the response).
    #[derive(serde::Serialize)]
    struct SendJson<'a> {
        expect: &'a Option<String>,
        findings: FindingsJson<'a>,
        latency_ms: f64,
        notes: &'a [String],
        protocol: Protocol,
        request: &'a str,
        to: &'a str,
        response: MessageJson<'a>,
    }
    let doc = SendJson {
        expect: &o.expected_from,
        findings: FindingsJson(&o.findings),
        latency_ms: ms(o.exchange.latency),
        notes: &o.exchange.notes,
        protocol,
        request: &r.label,
        to,
        response: MessageJson::new(&r.label, &o.exchange.response, &[], mode),
    };
    tfreq::json_write(out, &doc, false)?;
    Ok(())
}
