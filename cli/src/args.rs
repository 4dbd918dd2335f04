//! The value types of the command line's arguments that more than one command takes:
//! what an input is (`--from`), output layouts and formats, `--fill`.

use tfreq::FillMode;
use tfreq::WireFormat;

/// What an input file is (`--from`), for every command that reads requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFrom {
    /// Detect from the bytes, the file name and its place.
    #[default]
    Auto,
    /// One bare EAS request or response.
    Eas,
    /// One bare TF Serving request or response.
    TfServing,
    /// TFRecord of PredictionLog (a TF Serving warm-up file or request log).
    Tfrecord,
    /// PredictionLog messages concatenated without TFRecord framing.
    UnframedLogs,
    /// Protobuf text format (what `inspect --format text` prints).
    Text,
    /// EAS text warm-up: one string request per line.
    EasText,
    /// TF Serving REST predict JSON (one body, or JSON lines).
    Json,
}

impl InputFrom {
    /// The library's input format.
    pub fn format(self) -> tfreq::formats::InputFormat {
        use tfreq::formats::InputFormat as F;
        match self {
            InputFrom::Auto => F::Auto,
            InputFrom::Eas => F::Eas,
            InputFrom::TfServing => F::TfServing,
            InputFrom::Tfrecord => F::TfRecord,
            InputFrom::UnframedLogs => F::UnframedLogs,
            InputFrom::Text => F::Text,
            InputFrom::EasText => F::EasText,
            InputFrom::Json => F::Json,
        }
    }
}

/// The output layout `--wire` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutWire {
    /// One bare EAS PredictRequest.
    Eas,
    /// One bare TF Serving PredictRequest.
    TfServing,
    /// A TF Serving warm-up file: TFRecord of PredictionLog{predict_log}.
    Tfrecord,
}

impl From<OutWire> for tfreq::formats::Layout {
    fn from(w: OutWire) -> Self {
        match w {
            OutWire::Eas => tfreq::formats::Layout::Eas,
            OutWire::TfServing => tfreq::formats::Layout::TfServing,
            OutWire::Tfrecord => tfreq::formats::Layout::TfRecord,
        }
    }
}

/// Output format of `diff` and `check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// One screen for people.
    Human,
    /// One JSON document (schema in the README).
    Json,
    /// GitHub Actions workflow annotations.
    Github,
}

/// Output format of the commands that print a table or one document (`keys`, `replay`,
/// `signature`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PlainFormat {
    /// For people.
    Human,
    /// One JSON document.
    Json,
}

/// Output format of the commands that show messages (`inspect`, `send`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// A summary for people.
    Human,
    /// Protobuf text format, as Python's text_format.MessageToString.
    Text,
    /// One JSON document per file (schema in the README).
    Json,
    /// GitHub Actions workflow annotations, one per problem and unreadable file.
    Github,
}

/// A wire format (`--in-wire`, `--wire` of inspect).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Wire {
    Eas,
    TfServing,
}

impl From<Wire> for WireFormat {
    fn from(w: Wire) -> Self {
        match w {
            Wire::Eas => WireFormat::Eas,
            Wire::TfServing => WireFormat::TfServing,
        }
    }
}

/// Request or response (`--kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    Request,
    Response,
}

/// How many tensor values to show (`--values`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Values {
    None,
    Preview,
    All,
}

/// What replaces a request's values (`--fill`).
#[derive(Clone, Copy, Debug)]
pub enum Fill {
    Zeros,
    Constant(f64),
    Random,
}

/// Parses `--fill`: `zeros`, `constant=V` or `random`.
pub fn parse_fill(s: &str) -> Result<Fill, String> {
    match s {
        "zeros" => Ok(Fill::Zeros),
        "ones" => Ok(Fill::Constant(1.0)),
        "random" => Ok(Fill::Random),
        _ => match s.strip_prefix("constant=") {
            Some(v) => v
                .parse()
                .map(Fill::Constant)
                .map_err(|_| format!("constant={v}: not a number")),
            None => Err(format!("{s:?}: expected zeros, ones, constant=V or random")),
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
