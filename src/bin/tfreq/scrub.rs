//! `tfreq scrub PROD -o WARMUP [--fill zeros|constant=V|random --seed N]`

use std::path::PathBuf;

use tfreq::formats::detect::Source;
use tfreq::formats::{entries_from, write, ContainerKind, Content, Target};
use tfreq::scrub::{scrub, FillMode};
use tfreq::{DecodeOptions, WireFormat};

use crate::common::{in_file, write_output, Failure, InputFrom, OutWire, Outcome};

#[derive(clap::Args)]
pub struct Args {
    /// Production request: a bare request (EAS or TF Serving) or a TFRecord file.
    input: PathBuf,
    /// Output file (`-` for standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// What replaces the values: zeros, constant=V, or random (with --seed).
    #[arg(long, default_value = "zeros", value_parser = parse_fill)]
    fill: Fill,
    /// Seed for --fill random.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output layout (default: the input's).
    #[arg(long, value_enum)]
    wire: Option<OutWire>,
    /// What the input is, instead of detecting it.
    #[arg(long = "from", value_enum, default_value_t = InputFrom::Auto)]
    from: InputFrom,
}

#[derive(Clone, Copy, Debug)]
pub enum Fill {
    Zeros,
    Constant(f64),
    Random,
}

pub fn parse_fill(s: &str) -> Result<Fill, String> {
    match s {
        "zeros" => Ok(Fill::Zeros),
        "random" => Ok(Fill::Random),
        _ => match s.strip_prefix("constant=") {
            Some(v) => v
                .parse()
                .map(Fill::Constant)
                .map_err(|_| format!("constant={v}: not a number")),
            None => Err(format!("{s:?}: expected zeros, constant=V or random")),
        },
    }
}

impl Fill {
    pub fn mode(self, seed: u64) -> FillMode {
        match self {
            Fill::Zeros => FillMode::Zeros,
            Fill::Constant(v) => FillMode::Constant(v),
            Fill::Random => FillMode::Random { seed },
        }
    }
}

pub fn run(a: Args) -> Outcome {
    let label = a.input.display().to_string();
    let bytes = tfreq::io::read_input(&a.input).map_err(|e| in_file(&label, e))?;
    let src = Source::for_path(&a.input, a.from.format());
    let it = entries_from(bytes, DecodeOptions::default(), &src).map_err(|e| in_file(&label, e))?;
    let kind = it.kind();
    let mut source_wire = WireFormat::Eas;
    let mut out = Vec::new();
    let mode = a.fill.mode(a.seed);
    for e in it {
        let e = e.map_err(|e| in_file(&label, e))?;
        let where_ = e.label(kind);
        if let Content::Message(m) = &e.content {
            source_wire = m.wire;
            let s = scrub(m, mode).map_err(|err| {
                in_file(&label, format!("{where_} {err}").trim_start().to_string())
            })?;
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(Failure(format!(
            "{label}: holds no PredictRequest to scrub"
        )));
    }
    let target = match (a.wire, kind) {
        (Some(w), _) => w.into(),
        (None, ContainerKind::TfRecord | ContainerKind::UnframedLogs) => Target::TfRecord,
        (None, _) if source_wire == WireFormat::Eas => Target::Eas,
        (None, _) => Target::TfServing,
    };
    let data = write(&out, target).map_err(|e| in_file(&label, e))?;
    write_output(a.output.as_deref(), &data)?;
    Ok(0)
}
