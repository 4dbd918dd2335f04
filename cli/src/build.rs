//! `tfreq build INPUT -o OUT`: a request file from TF Serving REST JSON or text format.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use tfreq::formats::{self, requests_from_text};
use tfreq::formats::{
    ContainerKind, InputFormat, InputOptions, Layout, set_model_name, write_with,
};
use tfreq::formats::{RestCall, examples_from_json_lines, from_json_lines};
use tfreq::{Method, WireFormat};

use crate::args::{InputFrom, OutWire, Wire};
use crate::common::{Failure, Outcome, in_file, lossy_hint, report_left_out, write_output};

#[derive(clap::Args)]
#[command(mut_arg("lossy", |a| a.help("Write even when the output cannot carry everything the input says (e.g. a TF Serving model_spec going to eas), listing what was left out on stderr")))]
pub struct Args {
    /// Input: REST JSON (`.json`, `.jsonl`, or anything starting with `{`) or text format.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Output layout. Default: for text, the text's own wire format (a TFRecord for the
    /// text of several records); for REST JSON, eas (tf-serving with --url; for a
    /// :classify / :regress body, tf-serving, a TFRecord for several).
    #[arg(long, value_enum)]
    wire: Option<OutWire>,
    /// The model giving the signature's input dtypes: a SavedModel directory,
    /// saved_model.pb, GetModelMetadata JSON or `saved_model_cli show --all` output.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,
    /// Output to fetch (output_filter; REST JSON cannot say). Repeatable, in order.
    #[arg(long = "fetch", value_name = "NAME")]
    fetches: Vec<String>,
    /// TF Serving model_spec.name for requests that have none.
    #[arg(long)]
    model_name: Option<String>,
    /// What REST JSON is for: predict (`{"inputs"}`/`{"instances"}`, the default), or
    /// classify / regress for a `:classify` / `:regress` body (`{"examples": [...]}`),
    /// which cannot say which of the two it is.
    #[arg(long, value_enum, value_name = "METHOD")]
    method: Option<RestMethod>,
    /// The TF Serving REST URL the JSON is sent to
    /// (`.../v1/models/NAME[/versions/N|/labels/L]:classify|regress|predict`): it gives
    /// the method and the model_spec's name, version or label, as TF Serving takes them.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Wire format of text input, when both parse (also `--from eas|tf-serving`).
    #[arg(long = "in-wire", value_enum, hide = true)]
    in_wire: Option<Wire>,
    #[command(flatten)]
    rewrite: crate::input::RewriteArgs,
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let (bytes, _) = a
        .rewrite
        .read(&a.input, a.output.as_deref(), a.model.as_deref())?;
    let from = a.rewrite.input.from;
    let in_wire: Option<WireFormat> = a.in_wire.map(Into::into).or(match from {
        InputFrom::Eas => Some(WireFormat::Eas),
        InputFrom::TfServing => Some(WireFormat::TfServing),
        _ => None,
    });
    let from = input_kind(&a.input, &bytes, from, in_wire)?;
    // Records of a TFRecord's text that hold only their heading (not PredictRequests).
    let mut skipped = Vec::new();
    let call = rest_call(a.method, a.url.as_deref())?;
    let (mut msgs, target) = match from {
        Kind::Json if call.as_ref().is_some_and(|c| c.method.takes_examples()) => {
            let call = call.as_ref().expect("checked above");
            let msgs = examples_from_json_lines(&bytes, call).map_err(|e| in_file(&label, e))?;
            let target: Layout = match (a.wire, msgs.len()) {
                (Some(w), _) => w.into(),
                (None, 1) => Layout::TfServing,
                (None, _) => Layout::TfRecord,
            };
            (msgs, target)
        }
        Kind::Json => {
            // A TF Serving URL says the request is TF Serving's.
            let target: Layout = a.wire.map_or(
                if a.url.is_some() {
                    Layout::TfServing
                } else {
                    Layout::Eas
                },
                Into::into,
            );
            let wire = match target {
                Layout::Eas => WireFormat::Eas,
                _ => WireFormat::TfServing,
            };
            // Each body is read against the signature it names (dtypes_for_model).
            let d = crate::common::rest_dtypes(a.model.as_deref(), &a.rewrite.input.dtypes)?
                .unwrap_or_default();
            let mut msgs = from_json_lines(&bytes, &d, &a.fetches, wire)
                .map_err(|e| in_file(&label, examples_hint(&bytes, e)))?;
            if let Some(c) = call.as_ref().filter(|c| !c.model.is_empty()) {
                for m in &mut msgs {
                    set_url_spec(m, c);
                }
            }
            (msgs, target)
        }
        Kind::Text if call.is_some() => {
            return Err(in_file(
                &label,
                Failure::msg(
                    "--method and --url say what REST JSON is for; this input is protobuf text, which names its own request",
                ),
            ));
        }
        Kind::Text => {
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                in_file(
                    &label,
                    Failure::msg(format!("text format must be UTF-8: {e}")),
                )
            })?;
            // The requests as the text says them, in their own wire format: nothing is
            // re-derived (a TensorFlow splat stays one value), so the bytes are the
            // source's wherever its encoding is canonical.
            let t = requests_from_text(text, in_wire).map_err(|e| in_file(&label, e))?;
            let mut msgs = t.requests;
            skipped = t.skipped;
            for m in &mut msgs {
                m.fetches.extend(a.fetches.iter().cloned());
            }
            let target = match (a.wire, msgs.as_slice()) {
                (Some(w), _) => w.into(),
                (None, [m]) if skipped.is_empty() && m.wire == WireFormat::Eas => Layout::Eas,
                (None, [_]) if skipped.is_empty() => Layout::TfServing,
                _ => Layout::TfRecord,
            };
            (msgs, target)
        }
    };
    if let Some(name) = &a.model_name {
        msgs.iter_mut().for_each(|m| set_model_name(m, name));
    }
    let skipped: Vec<String> = skipped
        .into_iter()
        .map(|r| {
            format!("{r} (its text is only the heading; tfreq convert of the TFRecord keeps it)")
        })
        .collect();
    if !skipped.is_empty() && !a.rewrite.lossy {
        let e = tfreq::ErrorDetail::WouldLose {
            target: target.as_str(),
            left_out: skipped,
        };
        return Err(in_file(&label, lossy_hint(e.into())));
    }
    let (data, left_out) =
        write_with(&msgs, target, a.rewrite.lossy).map_err(|e| in_file(&label, lossy_hint(e)))?;
    write_output(a.output.as_deref(), &data)?;
    let left_out: Vec<String> = skipped.into_iter().chain(left_out).collect();
    report_left_out(&label, "left out (--lossy)", &left_out);
    Ok(0)
}

/// build's `--method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RestMethod {
    /// A `:predict` body.
    Predict,
    /// A `:classify` body.
    Classify,
    /// A `:regress` body.
    Regress,
}

/// The REST call `--method` and `--url` say (they must agree when both are given).
fn rest_call(method: Option<RestMethod>, url: Option<&str>) -> Result<Option<RestCall>, Failure> {
    let m = method.map(|m| match m {
        RestMethod::Predict => Method::Predict,
        RestMethod::Classify => Method::Classify,
        RestMethod::Regress => Method::Regress,
    });
    let Some(url) = url else {
        return Ok(m.map(RestCall::method));
    };
    let call = RestCall::parse(url).map_err(|e| Failure::msg(format!("--url {e}")))?;
    match m {
        Some(m) if m != call.method => Err(Failure::msg(format!(
            "--method {} and --url {url} (:{}) disagree",
            m.as_str(),
            call.method.as_str()
        ))),
        _ => Ok(Some(call)),
    }
}

/// A `:predict` body's model_spec from the URL, as TF Serving fills it.
fn set_url_spec(m: &mut tfreq::Message, c: &RestCall) {
    if m.wire != WireFormat::TfServing {
        return;
    }
    let sig = m.signature_name.clone();
    let spec = m.model_spec.get_or_insert_with(|| tfreq::ModelSpec {
        signature_name: sig,
        ..Default::default()
    });
    spec.name = c.model.clone();
    spec.version = c.version;
    spec.version_label = c.label.clone();
}

/// A predict read's error, with a hint when the body is a `:classify`/`:regress` one.
fn examples_hint(bytes: &[u8], e: tfreq::Error) -> Failure {
    let is_examples = tfreq::formats::parse_json(bytes).is_ok_and(|v| {
        v.get("examples").is_some() && v.get("inputs").is_none() && v.get("instances").is_none()
    });
    if is_examples {
        Failure::msg(format!(
            "{e}; it has \"examples\": a :classify or :regress body, which cannot say which: give --method classify|regress or --url .../v1/models/NAME:classify"
        ))
    } else {
        e.into()
    }
}

/// What build reads.
enum Kind {
    Json,
    Text,
}

/// What `build` reads `bytes` as: what `--from` says, or what detection finds. Text
/// that detection refuses is read as the one build would take, so its parse error says
/// line and column, if it looks like that at all (TOML or prose gets detection's "not a
/// request file (looks like ...)").
fn input_kind(
    path: &Path,
    bytes: &Bytes,
    from: InputFrom,
    in_wire: Option<WireFormat>,
) -> Result<Kind, Failure> {
    let label = path.display().to_string();
    match from {
        InputFrom::Json => return Ok(Kind::Json),
        InputFrom::Text => return Ok(Kind::Text),
        InputFrom::Auto | InputFrom::Eas | InputFrom::TfServing => {}
        other => {
            return Err(in_file(
                &label,
                Failure::msg(format!(
                    "build reads REST JSON (--from json) or protobuf text (--from text), not --from {}: tfreq convert reads that",
                    other.format().as_str()
                )),
            ));
        }
    }
    let mut opts = InputOptions::new().format(InputFormat::Auto).for_path(path);
    opts.decode.wire = in_wire;
    let texty = tfreq::formats::looks_like_text(bytes);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let pbtext = texty && std::str::from_utf8(bytes).is_ok_and(formats::looks_like_text_format);
    Ok(match tfreq::formats::detect(bytes, &opts) {
        Ok(ContainerKind::RestJson) => Kind::Json,
        Ok(ContainerKind::TextFormat) => Kind::Text,
        Ok(ContainerKind::Text) | Err(_) if texty && first == Some(&b'{') => Kind::Json,
        Ok(ContainerKind::Text) if texty => Kind::Text,
        Err(_) if pbtext => Kind::Text,
        Err(e) => return Err(in_file(&label, e)),
        Ok(k) => {
            return Err(in_file(
                &label,
                Failure::msg(format!(
                    "is a {} file, not REST JSON or protobuf text: build reads those (tfreq convert reads request files)",
                    k.as_str()
                )),
            ));
        }
    })
}
