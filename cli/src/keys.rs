//! `tfreq keys FILES...` and `tfreq warmup FILES... -o OUT`

use std::io::Write;
use std::path::{Path, PathBuf};

use tfreq::analysis::KeyCounts;
use tfreq::formats::write;
use tfreq::scrub;

use crate::args::{Fill, OutWire, PlainFormat as Format};
use crate::common::{
    Failure, Outcome, Progress, human_size, human_stdout, refuse_same_file, report_error,
    stdout_plain, write_output,
};
use crate::input::{InputArgs, Inputs};

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "With --format json the output is a summary (schema 1, see docs/keys.md) that \
`tfreq keys merge` combines: merging the summaries of any split of a set of logs gives the \
summary of one run over all of them. (A file named `merge`: write ./merge.)"
)]
pub struct KeysArgs {
    #[command(subcommand)]
    merge: Option<KeysCommand>,
    /// Request files: bare .bin requests, TFRecord PredictionLog logs (streamed).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Count only the requests of this model (TF Serving's model_spec.name) and those that
    /// name none; the requests of other models left out are counted on stderr.
    #[arg(long, value_name = "NAME")]
    model_name: Option<String>,
    #[command(flatten)]
    rest: RestArgs,
    #[command(flatten)]
    batch: crate::batch::BatchArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    cap: KeyCap,
}

/// How many distinct keys `keys` and `keys merge` hold in memory.
#[derive(clap::Args, Clone, Copy)]
pub struct KeyCap {
    /// Stop with an error (exit 2) past this many distinct shape keys (a key whose
    /// inputs come in several orders counts once per order while a log is read): the
    /// tables take about 5 KB a key, and stay near half a gigabyte at the default.
    #[arg(long, value_name = "N", default_value_t = tfreq::analysis::DEFAULT_MAX_KEYS)]
    max_keys: usize,
}

/// With `--model-name NAME`: keeps the requests of that model (and those that name
/// none) and says on stderr how many of other models were left out.
fn only_model(cov: &mut KeyCounts, name: Option<&str>) {
    let Some(name) = name else { return };
    let others: Vec<String> = cov
        .models()
        .into_iter()
        .filter(|m| *m != name)
        .map(|m| format!("{m:?}"))
        .collect();
    let left_out = cov.retain_model(name);
    if left_out > 0 && !crate::common::quiet() {
        eprintln!(
            "note: {} of other models left out ({}): --model-name {name:?}",
            crate::common::count(left_out, "request"),
            others.join(", ")
        );
    }
}

/// The model giving REST JSON inputs their dtypes.
#[derive(clap::Args)]
pub struct RestArgs {
    /// The model: a SavedModel directory, saved_model.pb, GetModelMetadata JSON
    /// (metadata.json) or `saved_model_cli show --all` output. It gives REST JSON files
    /// their input dtypes; `warmup --model` with no FILES writes a warm-up from its
    /// signatures alone (a live server's too: a grpc:// URL with --model-name, or
    /// http://HOST:8501/v1/models/NAME), and with FILES adds a request for each signature
    /// production never called.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
}

/// Counts the keys of every file that can be read; the others are reported on stderr
/// and listed in [`KeyCounts::unreadable`].
fn count(
    files: &[PathBuf],
    keep: bool,
    inputs: &Inputs,
    machine_output: bool,
    max_keys: usize,
) -> Result<KeyCounts, Failure> {
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let opts = inputs.options(paths.iter().copied())?;
    let progress = Progress::new(files, machine_output);
    let total: u64 = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    progress.step(format!(
        "counting keys in {} ({})",
        crate::common::count(files.len() as u64, "file"),
        human_size(total)
    ));
    let counted = tfreq::scan::count_capped(&paths, &opts, keep, max_keys);
    drop(progress);
    // Past the key limit the counts are partial: no table, the error alone.
    if let Some(i) = counted.errors.iter().position(tfreq::scan::TooManyKeys::is) {
        let mut errors = counted.errors;
        return Err(Failure::from(errors.swap_remove(i)));
    }
    let mut cov = counted.counts;
    // The command line's messages add the option that settles an error.
    for (u, e) in cov.unreadable.iter_mut().zip(&counted.errors) {
        u.error = format!("{}{}", e.message_without(&u.file), crate::common::hint(e));
        report_error(&crate::common::in_file(
            &u.file,
            Failure::msg(u.error.clone()),
        ));
    }
    Ok(cov)
}

#[derive(clap::Subcommand)]
enum KeysCommand {
    /// Combine `keys --format json` summaries (of shards of a log, of several days...)
    /// into one: the summary of one run over all their logs.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
struct MergeArgs {
    /// Summaries written by `tfreq keys --format json` (or by this command).
    #[arg(required = true)]
    summaries: Vec<PathBuf>,
    /// Output format (JSON: the merged summary).
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Refuse a summary larger than this: bytes, or a number with K, M or G. (A summary
    /// of --max-keys keys is about 25 MB; its text is held while it is read.)
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::input::parse_size)]
    max_size: u64,
    #[command(flatten)]
    cap: KeyCap,
}

fn run_merge(a: MergeArgs) -> Outcome {
    use tfreq::analysis::Summary;
    crate::common::stdin_at_most_once(a.summaries.iter().map(PathBuf::as_path))?;
    let mut merged = Summary::empty();
    let mut bad = false;
    for p in &a.summaries {
        let opts = tfreq::ReadOptions::default().max_size(a.max_size);
        let read = tfreq::read_file(p, &opts)
            .map_err(Failure::from)
            .and_then(|b| {
                // Parsed where it was read: the text is held once.
                let t = std::str::from_utf8(&b)
                    .map_err(|e| Failure::msg(format!("not UTF-8 text: {e}")))?;
                Summary::from_json_capped(t, a.cap.max_keys).map_err(Failure::from)
            });
        match read {
            Ok(s) => {
                // Counts that would not fit, or more keys than the cap: no merged
                // summary at all rather than a wrong or partial one.
                merged
                    .try_merge(s)
                    .map_err(|e| crate::common::in_file(&p.display().to_string(), e))?;
                if merged.shape_keys > a.cap.max_keys {
                    return Err(Failure::msg(format!(
                        "the merged summary holds {} shape keys, over the limit of {} (--max-keys: a higher one holds more keys in memory)",
                        crate::common::group_digits(merged.shape_keys as u64),
                        crate::common::group_digits(a.cap.max_keys as u64)
                    )));
                }
            }
            Err(e) => {
                bad = true;
                report_error(&crate::common::in_file(&p.display().to_string(), e));
            }
        }
    }
    let (mut out, color) = if a.format == Format::Json {
        (stdout_plain(), tfreq::render::Color::Never)
    } else {
        human_stdout()
    };
    match a.format {
        Format::Json => {
            tfreq::render::write_summary_json(&mut out, &merged)?;
            writeln!(out)?;
        }
        Format::Human => {
            tfreq::render::write_coverage(&mut out, &merged.counts(), color)?;
            if let Some(b) = &merged.batching {
                tfreq::render::write_batching(&mut out, b, color)?;
            }
        }
    }
    out.flush()?;
    Ok(if bad || !merged.unreadable.is_empty() {
        2
    } else {
        0
    })
}

pub fn run_keys(mut a: KeysArgs) -> Outcome {
    if let Some(KeysCommand::Merge(m)) = a.merge.take() {
        return run_merge(m);
    }
    let batching = a.batch.rule()?;
    let inputs = Inputs::new(&a.input, a.rest.model.as_deref());
    a.files = inputs.expand(&a.files)?;
    if a.format == Format::Json {
        // A summary's first requests are the earliest in path order (so that summaries
        // merge exactly): count the files in that order.
        a.files.sort();
    }
    let mut cov = count(
        &a.files,
        false,
        &inputs,
        a.format == Format::Json,
        a.cap.max_keys,
    )?;
    only_model(&mut cov, a.model_name.as_deref());
    let (mut out, color) = if a.format == Format::Json {
        (stdout_plain(), tfreq::render::Color::Never)
    } else {
        human_stdout()
    };
    let sizes = batching.map(|(rule, source)| {
        tfreq::analysis::count_sizes(&rule, &source, cov.keys.iter().map(|(k, s)| (k, s.count)))
    });
    match a.format {
        Format::Human => {
            tfreq::render::write_coverage(&mut out, &cov, color)?;
            if let Some(b) = &sizes {
                tfreq::render::write_batching(&mut out, b, color)?;
            }
        }
        Format::Json => {
            let mut summary = tfreq::analysis::Summary::of(&cov);
            summary.batching = sizes;
            tfreq::render::write_summary_json(&mut out, &summary)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(if cov.unreadable.is_empty() { 0 } else { 2 })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One request per shape key (signature, feed and fetch sets, and every feed's dtype and shape).
    Shape,
    /// One request per executor key (signature, feed and fetch sets), from its most frequent shape.
    Executor,
}

#[derive(clap::Args)]
pub struct WarmupArgs {
    /// Production request files: bare .bin requests, TFRecord PredictionLog logs (plain
    /// or gzip), or `keys --format json` summaries, which stand for the logs they name.
    /// None with --model: a warm-up from the model's signatures alone.
    #[arg(required_unless_present = "model")]
    files: Vec<PathBuf>,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Cover only the N most frequent keys (default: all).
    #[arg(long)]
    top: Option<usize>,
    /// What counts as one key.
    #[arg(long, value_enum, default_value_t = By::Shape)]
    by: By,
    /// Output layout (a bare eas or tf-serving file holds one request). Default: for
    /// EAS requests, the bare EAS request the EAS processor reads as its warm-up (with
    /// several keys to cover: --top 1, or --wire tfrecord); otherwise a TFRecord of
    /// PredictionLogs, TF Serving's warm-up file.
    #[arg(long, value_enum)]
    wire: Option<OutWire>,
    /// What replaces the values (with --model: fills them): zeros, ones, constant=V, or
    /// random (with --seed).
    #[arg(long, default_value = "zeros", value_parser = crate::args::parse_fill)]
    fill: Fill,
    /// Seed for --fill random.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The model to warm: only its requests (TF Serving's model_spec.name) and those that
    /// name no model are used, and it becomes the model_spec.name of requests that have
    /// none (EAS requests carry no model name). Required when production's requests name
    /// several models: a warm-up file belongs to one model.
    #[arg(long, value_name = "NAME")]
    model_name: Option<String>,
    #[command(flatten)]
    rest: RestArgs,
    #[command(flatten)]
    synth: crate::synth::SynthArgs,
    /// With --allowed-batch-sizes or --batching-parameters-file: for each key (executor
    /// key and the feeds' dims after the 0th; --top the most frequent), one request per
    /// allowed batch size, its 0th dimension resized (rows repeated or cut), so that
    /// every padded size a batching server runs is warmed. --by is then not used.
    #[command(flatten)]
    batch: crate::batch::BatchArgs,
    /// Allow -o to name an input file and replace it (refused otherwise).
    #[arg(long)]
    overwrite_input: bool,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    cap: KeyCap,
}

/// The files to count: each `keys --format json` summary among `files` stands for the
/// logs it names (read again, for their requests; a summary holds none), the other
/// files for themselves. Each log once, in the order met.
fn expand_summaries(files: &[PathBuf], inputs: &Inputs) -> Result<Vec<PathBuf>, Failure> {
    let mut out: Vec<PathBuf> = Vec::new();
    for f in files {
        let is_summary = f.extension().is_some_and(|e| e == "json")
            && std::fs::read(f)
                .map(|b| b.trim_ascii_start().starts_with(b"{\"schema\""))
                .unwrap_or(false);
        if !is_summary {
            out.push(f.clone());
            continue;
        }
        let text = String::from_utf8(inputs.bytes(f)?.0.to_vec()).map_err(|e| {
            crate::common::in_file(&f.display().to_string(), Failure::msg(e.to_string()))
        })?;
        let s = tfreq::analysis::Summary::from_json(&text)
            .map_err(|e| crate::common::in_file(&f.display().to_string(), e))?;
        for r in s.files {
            let p = PathBuf::from(&r.path);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

pub fn run_warmup(mut a: WarmupArgs) -> Outcome {
    if a.files.is_empty() {
        return warmup_from_model(&a);
    }
    let inputs = Inputs::new(&a.input, a.rest.model.as_deref());
    a.files = expand_summaries(&inputs.expand(&a.files)?, &inputs)?;
    let paths: Vec<&Path> = a.files.iter().map(PathBuf::as_path).collect();
    crate::common::stdin_at_most_once(paths.iter().copied())?;
    refuse_same_file(a.output.as_deref(), &paths, a.overwrite_input)?;
    let batching = a.batch.rule()?;
    let mut cov = count(&a.files, true, &inputs, false, a.cap.max_keys)?;
    only_model(&mut cov, a.model_name.as_deref());
    let models = cov.models();
    if models.len() > 1 {
        return Err(Failure::msg(format!(
            "production's requests name {} models ({}), and a warm-up file belongs to one (TF Serving reads it from that model's assets.extra): pick one with --model-name NAME",
            models.len(),
            models
                .iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if let Some((rule, _)) = batching {
        return warmup_batches(&a, &cov, &rule);
    }
    let plan = tfreq::analysis::plan(
        &cov,
        match a.by {
            By::Shape => tfreq::analysis::By::Shape,
            By::Executor => tfreq::analysis::By::Executor,
        },
    );
    let reps: Vec<&tfreq::Message> = plan.iter().filter_map(|p| p.request).collect();
    if reps.is_empty() {
        return Err(Failure::msg("no PredictRequest in the input files"));
    }
    let n = a.top.unwrap_or(reps.len()).min(reps.len());
    let eas = reps.iter().all(|m| m.wire == tfreq::WireFormat::Eas);
    let wire = a
        .wire
        .unwrap_or(if eas { OutWire::Eas } else { OutWire::Tfrecord });
    if n > 1 && wire != OutWire::Tfrecord {
        return Err(Failure::msg(format!(
            "production has {n} keys to cover and a bare {} file holds one request{}: write --wire tfrecord, or --top 1 for the most frequent",
            tfreq::formats::Layout::from(wire).as_str(),
            if a.wire.is_none() {
                " (the EAS processor's warm-up, the default for EAS requests)"
            } else {
                ""
            }
        )));
    }
    let mode = a.fill.mode(a.seed);
    let mut msgs = Vec::with_capacity(n);
    for m in &reps[..n] {
        let mut s = scrub(m, mode)?;
        if let Some(name) = &a.model_name {
            tfreq::formats::set_model_name(&mut s, name);
        }
        msgs.push(s);
    }
    add_uncalled(&a, &cov, &mut msgs, wire, None)?;
    let data = write(&msgs, wire.into())?;
    write_output(a.output.as_deref(), &data)?;
    if !crate::common::quiet() {
        let covered: u64 = plan[..n].iter().map(|p| p.count).sum();
        let mut err = anstream::stderr();
        let _ = writeln!(
            err,
            "tfreq: wrote {} covering {} of {}",
            crate::common::count(msgs.len() as u64, "request"),
            crate::common::group_digits(covered),
            crate::common::count(cov.requests, "request"),
        );
    }
    Ok(if cov.unreadable.is_empty() { 0 } else { 2 })
}

/// `warmup --allowed-batch-sizes`: per batch group (most requests first), the most
/// frequent batchable shape's first request, scrubbed, at every allowed size.
fn warmup_batches(
    a: &WarmupArgs,
    cov: &tfreq::analysis::KeyCounts,
    rule: &tfreq::analysis::BatchRule,
) -> Outcome {
    use tfreq::analysis::MAX_RECORDS;
    let plan = tfreq::analysis::batch_plan(cov, rule);
    let (groups, skipped) = (plan.groups, plan.unbatchable);
    if groups.is_empty() {
        return Err(Failure::msg(
            "no batchable PredictRequest in the input files (every input needs one common 0th dimension)",
        ));
    }
    let n = a.top.unwrap_or(groups.len()).min(groups.len());
    let sizes = rule.warmup_sizes();
    let records = n * sizes.len();
    if records > MAX_RECORDS {
        return Err(Failure::msg(format!(
            "{n} keys x {} batch sizes = {records} requests: TF Serving's warm-up runs at most {MAX_RECORDS} records (the model fails to load past that); cover fewer keys with --top {}",
            sizes.len(),
            (MAX_RECORDS / sizes.len().max(1)).max(1)
        )));
    }
    let wire = a.wire.unwrap_or(OutWire::Tfrecord);
    if records > 1 && wire != OutWire::Tfrecord {
        return Err(Failure::msg(format!(
            "{records} requests to write (batch sizes {}) and a bare {} file holds one request: write --wire tfrecord",
            sizes
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            tfreq::formats::Layout::from(wire).as_str(),
        )));
    }
    let mode = a.fill.mode(a.seed);
    let mut msgs = Vec::with_capacity(records);
    for g in &groups[..n] {
        for &size in &sizes {
            let mut s = tfreq::scrub_batch(g.request, mode, size)?;
            if let Some(name) = &a.model_name {
                tfreq::formats::set_model_name(&mut s, name);
            }
            msgs.push(s);
        }
    }
    add_uncalled(a, cov, &mut msgs, wire, Some(rule))?;
    let data = write(&msgs, wire.into())?;
    write_output(a.output.as_deref(), &data)?;
    if !crate::common::quiet() {
        let covered: u64 = groups[..n].iter().map(|g| g.count).sum();
        let mut err = anstream::stderr();
        for s in &skipped {
            let _ = writeln!(err, "tfreq: skipped {}", tfreq::sanitize(&s.to_string()));
        }
        let _ = writeln!(
            err,
            "tfreq: wrote {} (batch sizes {} for {}) covering {} of {}",
            crate::common::count(records as u64, "request"),
            sizes
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            crate::common::count(n as u64, "key"),
            crate::common::group_digits(covered),
            crate::common::count(cov.requests, "request"),
        );
    }
    Ok(if cov.unreadable.is_empty() { 0 } else { 2 })
}

/// `warmup --model M` with no production files: one request per signature and batch
/// size, made from the model alone.
fn warmup_from_model(a: &WarmupArgs) -> Outcome {
    let Some(model) = a.rest.model.as_deref() else {
        return Err(Failure::msg("give production request files, or --model"));
    };
    let rule = a.batch.rule()?;
    let wire = a.wire.unwrap_or(OutWire::Tfrecord);
    let m = crate::synth::read_model(model, a.model_name.as_deref())?;
    let sizes = crate::synth::batch_sizes(&a.synth, rule.as_ref().map(|r| &r.0));
    let s = crate::synth::requests(
        &a.synth,
        &m,
        &model.display().to_string(),
        synth_options(a, sizes, wire, Vec::new()),
    )?;
    if s.messages.is_empty() {
        return Err(Failure::msg(format!(
            "--model {}: no request could be made for any signature (the reasons are above)",
            model.display()
        )));
    }
    if s.messages.len() > 1 && wire != OutWire::Tfrecord {
        return Err(Failure::msg(format!(
            "{} requests to write and a bare {} file holds one: name one --signature and one batch size, or write --wire tfrecord",
            s.messages.len(),
            tfreq::formats::Layout::from(wire).as_str()
        )));
    }
    let data = write(&s.messages, wire.into())?;
    write_output(a.output.as_deref(), &data)?;
    if !crate::common::quiet() {
        let _ = writeln!(
            anstream::stderr(),
            "{}",
            crate::synth::wrote_line(&s, a.output.as_deref())
        );
    }
    Ok(0)
}

/// What `warmup --model` makes: these signatures (all when empty) at these batch sizes.
fn synth_options(
    a: &WarmupArgs,
    batch_sizes: Vec<u64>,
    wire: OutWire,
    signatures: Vec<String>,
) -> tfreq::analysis::SynthOptions {
    tfreq::analysis::SynthOptions {
        signatures,
        batch_sizes,
        fill: a.fill.mode(a.seed),
        wire: match wire {
            OutWire::Eas => tfreq::WireFormat::Eas,
            _ => tfreq::WireFormat::TfServing,
        },
        model_name: a.model_name.clone(),
        ..Default::default()
    }
}

/// `warmup FILES --model M`: a request made from the model for each of its signatures
/// production never called, after production's.
fn add_uncalled(
    a: &WarmupArgs,
    cov: &tfreq::analysis::KeyCounts,
    msgs: &mut Vec<tfreq::Message>,
    wire: OutWire,
    rule: Option<&tfreq::analysis::BatchRule>,
) -> Result<(), Failure> {
    let Some(model) = a.rest.model.as_deref() else {
        return Ok(());
    };
    let m = crate::synth::read_model(model, a.model_name.as_deref())?;
    let Some(mg) = m.meta_graph(&a.synth.tag) else {
        return Ok(());
    };
    let called: std::collections::BTreeSet<String> = cov
        .keys
        .values()
        .filter_map(|s| s.representative.as_ref())
        .flat_map(|m| {
            let mut v = vec![m.effective_signature().to_string()];
            v.extend(m.tasks.iter().map(|t| t.signature().to_string()));
            v
        })
        .collect();
    let only: Vec<String> = mg
        .signatures
        .keys()
        .filter(|k| !called.contains(*k) && *k != "__saved_model_init_op")
        .filter(|k| a.synth.signatures.is_empty() || a.synth.signatures.contains(k))
        .cloned()
        .collect();
    if only.is_empty() {
        return Ok(());
    }
    let s = crate::synth::requests(
        &a.synth,
        &m,
        &model.display().to_string(),
        synth_options(a, crate::synth::batch_sizes(&a.synth, rule), wire, only),
    )?;
    let total = msgs.len() + s.messages.len();
    if !s.messages.is_empty() && wire != OutWire::Tfrecord {
        return Err(Failure::msg(format!(
            "production never called {} of the model, and a bare {} file holds one request: write --wire tfrecord to add a request for each, or leave out --model",
            s.signatures().join(", "),
            tfreq::formats::Layout::from(wire).as_str(),
        )));
    }
    if total > tfreq::analysis::MAX_RECORDS {
        return Err(Failure::msg(format!(
            "{} from production and {} for the signatures it never called make {total}: TF Serving's warm-up runs at most {} records (the model fails to load past that); cover fewer keys with --top or give fewer --batch-sizes",
            msgs.len(),
            s.messages.len(),
            tfreq::analysis::MAX_RECORDS,
        )));
    }
    if !crate::common::quiet() && !s.messages.is_empty() {
        let _ = writeln!(
            anstream::stderr(),
            "tfreq: added {} for the signatures production never called: {}",
            crate::common::count(s.messages.len() as u64, "request"),
            s.signatures().join(", ")
        );
    }
    msgs.extend(s.messages);
    Ok(())
}
