//! `tfreq warmup --model DIR|metadata.json|URL`: a warm-up made from the model's
//! signatures alone (the requests are made by `tfreq::analysis::synthesize`), and, with
//! production logs, the signatures production never called added to theirs.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use tfreq::analysis::{SynthOptions, Synthesized, synthesize};
use tfreq::signature::ModelSignatures;

use crate::common::Failure;

/// The flags of a warm-up made from the model (`warmup --model`).
#[derive(clap::Args, Default)]
pub struct SynthArgs {
    /// With --model: warm only this signature (repeat for several; default: every
    /// signature that can be called).
    #[arg(long = "signature", value_name = "NAME")]
    pub signatures: Vec<String>,
    /// With --model: one request per signature and batch size (the first dim of -1; the
    /// number of examples of a classify or regress request). Default 1; or the sizes of
    /// --allowed-batch-sizes / --batching-parameters-file.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', num_args = 1)]
    pub batch_sizes: Option<Vec<u64>>,
    /// With --model: the values of string inputs the graph does not parse as tf.Examples:
    /// a JSON object of input name (alias, tensor name, or SIGNATURE/ALIAS) to a list of
    /// strings, or a captured request file whose string inputs of the same names are
    /// taken.
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// With --model: the shape of an input whose dims or rank the signature leaves unknown,
    /// as NAME=D,D,... (a -1 takes the batch size; NAME=scalar for a scalar). Default: 1 for
    /// an unknown dim after the first, [batch] for an unknown rank (each said on stderr).
    #[arg(long = "dim", value_name = "NAME=SHAPE", value_parser = parse_dim)]
    pub dims: Vec<(String, Vec<i64>)>,
    /// With --model: the meta graph's tag.
    #[arg(long, default_value = tfreq::signature::SERVE_TAG)]
    pub tag: String,
}

fn parse_dim(s: &str) -> Result<(String, Vec<i64>), String> {
    let (name, shape) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected NAME=D,D,... (e.g. tokens=-1,128)"))?;
    let shape = shape.trim().trim_start_matches('[').trim_end_matches(']');
    if shape.is_empty() || shape == "scalar" {
        return Ok((name.to_string(), Vec::new()));
    }
    let dims = shape
        .split(',')
        .map(|d| {
            d.trim()
                .parse::<i64>()
                .ok()
                .filter(|&d| d >= -1)
                .ok_or_else(|| format!("{s:?}: {d:?} is not a dim (a size, or -1 for the batch)"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((name.to_string(), dims))
}

/// Reads the model: a SavedModel directory, saved_model.pb, metadata JSON or
/// saved_model_cli text, or a live server's metadata.
pub fn read_model(model: &Path, model_name: Option<&str>) -> Result<ModelSignatures, Failure> {
    match model.to_str().filter(|s| crate::check::is_url(s)) {
        Some(url) => crate::check::live_model(url, model_name.map(str::to_string), None, &[]),
        None => crate::report::load_model(model)
            .map_err(|e| crate::common::in_file(&model.display().to_string(), e)),
    }
}

/// `--values FILE`: string values by input name.
fn read_values(path: &Path) -> Result<BTreeMap<String, Vec<Bytes>>, Failure> {
    let file = path.display().to_string();
    let bytes = tfreq::read_input(path).map_err(Failure::from)?;
    let mut out = BTreeMap::new();
    if bytes.trim_ascii_start().starts_with(b"{") {
        let v: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| crate::common::in_file(&file, Failure::msg(format!("not JSON: {e}"))))?;
        let obj = v.as_object().ok_or_else(|| {
            crate::common::in_file(
                &file,
                Failure::msg("expected a JSON object of input name to a list of strings"),
            )
        })?;
        for (k, v) in obj {
            let list = match v {
                serde_json::Value::String(s) => vec![Bytes::from(s.clone())],
                serde_json::Value::Array(a) => a
                    .iter()
                    .map(|x| x.as_str().map(|s| Bytes::from(s.to_string())))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        crate::common::in_file(
                            &file,
                            Failure::msg(format!("{k:?}: expected a list of strings")),
                        )
                    })?,
                _ => {
                    return Err(crate::common::in_file(
                        &file,
                        Failure::msg(format!("{k:?}: expected a string or a list of strings")),
                    ));
                }
            };
            out.insert(k.clone(), list);
        }
        return Ok(out);
    }
    let opts = tfreq::formats::InputOptions::new().for_path(path);
    let records = tfreq::formats::read(bytes, &opts)
        .and_then(|e| e.into_records())
        .map_err(|e| crate::common::in_file(&file, Failure::from(e)))?;
    for r in records {
        let m = &r.message;
        for t in &m.tensors {
            if t.dtype.dtype() != Some(tfreq::DType::String) || out.contains_key(&t.name) {
                continue;
            }
            let e = t.elements(m.wire);
            let vals: Vec<Bytes> = (0..e.stored)
                .filter_map(|i| match e.stored_get(i) {
                    Some(tfreq::Scalar::Bytes(b)) => Some(b),
                    _ => None,
                })
                .collect();
            if !vals.is_empty() {
                out.insert(t.name.clone(), vals);
            }
        }
    }
    Ok(out)
}

/// The requests `opts` asks for (its dims and values taken from the flags), and its
/// notes on stderr.
pub fn requests(
    a: &SynthArgs,
    model: &ModelSignatures,
    model_label: &str,
    mut opts: SynthOptions,
) -> Result<Synthesized, Failure> {
    let mg = model.meta_graph(&a.tag).ok_or_else(|| {
        Failure::msg(format!(
            "--model {model_label}: no meta graph tagged {:?} (tag sets: {})",
            a.tag,
            model.tag_sets().join("; ")
        ))
    })?;
    if let Some(p) = &a.values {
        opts.values = read_values(p)?;
    }
    opts.dims = a.dims.iter().cloned().collect();
    if opts.signatures.is_empty() {
        opts.signatures = a.signatures.clone();
    }
    let s = synthesize(mg, &opts);
    if !crate::common::quiet() {
        let mut err = anstream::stderr();
        for n in &s.notes {
            let text = note_text(n);
            let msg = tfreq::sanitize(&text);
            let _ = match (n.left_out, n.signature.is_empty()) {
                (_, true) => writeln!(err, "tfreq: note: {msg}"),
                (true, false) => writeln!(
                    err,
                    "tfreq: left out {}: {msg}",
                    tfreq::sanitize(&n.signature)
                ),
                (false, false) => {
                    writeln!(err, "tfreq: note: {}: {msg}", tfreq::sanitize(&n.signature))
                }
            };
        }
    }
    Ok(s)
}

/// The batch sizes asked for: --batch-sizes, else the batching rule's, else 1.
pub fn batch_sizes(a: &SynthArgs, rule: Option<&tfreq::analysis::BatchRule>) -> Vec<u64> {
    match (&a.batch_sizes, rule) {
        (Some(s), _) => s.clone(),
        (None, Some(r)) => r.warmup_sizes(),
        (None, None) => vec![1],
    }
}

/// The line said after writing.
pub fn wrote_line(s: &Synthesized, path: Option<&Path>) -> String {
    let sigs = s.signatures();
    format!(
        "tfreq: wrote {} for {} ({}){}",
        crate::common::count(s.messages.len() as u64, "request"),
        crate::common::count(sigs.len() as u64, "signature"),
        sigs.join(", "),
        path.map(|p| format!(" to {}", p.display()))
            .unwrap_or_default()
    )
}

/// A note's message with its [`SynthHint`] worded as this command line's flag.
fn note_text(n: &tfreq::analysis::SynthNote) -> String {
    use tfreq::analysis::SynthHint;
    let input = n.input.as_deref().unwrap_or("NAME");
    match n.hint {
        Some(SynthHint::Dims) => format!("{} (--dim {input}=SHAPE to choose)", n.message),
        Some(SynthHint::Values) => format!("{}: give its values with --values", n.message),
        Some(SynthHint::Smaller) => format!("{}: give a smaller --dim or batch size", n.message),
        _ => n.message.clone(),
    }
}
