//! How to read an input: what the caller says it is, how big it may be, and the dtypes
//! a format that carries none (REST JSON) is read with. One value, [`InputOptions`], for
//! every reader: [`crate::formats::read`] for bytes in memory and [`crate::scan::count`]
//! for logs.

use std::path::Path;

use crate::decode::DecodeOptions;
use crate::formats::rest_json;
use crate::io::ReadOptions;
use crate::model::WireFormat;

/// What the user says a file is (`--from`), or [`InputFormat::Auto`] to detect it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum InputFormat {
    /// Detect from the bytes, the name and the place.
    #[default]
    Auto,
    /// One bare EAS message.
    Eas,
    /// One bare TF Serving message.
    TfServing,
    /// TFRecord of `PredictionLog`.
    TfRecord,
    /// `PredictionLog` messages concatenated without TFRecord framing.
    UnframedLogs,
    /// Protobuf text format of requests.
    Text,
    /// EAS text warm-up: one string request per line.
    EasText,
    /// TF Serving REST predict JSON (one body, or JSON lines).
    Json,
}

impl InputFormat {
    /// The name `--from` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            InputFormat::Auto => "auto",
            InputFormat::Eas => "eas",
            InputFormat::TfServing => "tf-serving",
            InputFormat::TfRecord => "tfrecord",
            InputFormat::UnframedLogs => "unframed-logs",
            InputFormat::Text => "text",
            InputFormat::EasText => "eas-text",
            InputFormat::Json => "json",
        }
    }

    /// The wire format a bare-message choice forces.
    pub fn wire(self) -> Option<WireFormat> {
        match self {
            InputFormat::Eas => Some(WireFormat::Eas),
            InputFormat::TfServing => Some(WireFormat::TfServing),
            _ => None,
        }
    }
}

/// How to read an input (see the module docs). Built with [`InputOptions::new`] and its
/// setters; [`InputOptions::for_path`] adds what a file's name and place say.
///
/// ```
/// use tfreq::formats::{InputFormat, InputOptions};
/// let opts = InputOptions::new().format(InputFormat::TfRecord).max_size(1 << 20);
/// assert_eq!(opts.decode.max_size, Some(1 << 20));
/// let warmup = opts.for_path("m/1/assets.extra/tf_serving_warmup_requests".as_ref());
/// assert!(warmup.is_warmup_file());
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InputOptions {
    /// What the user says it is.
    pub format: InputFormat,
    /// The wire format and kind to force, and the size limit.
    pub decode: DecodeOptions,
    /// How a file is read: its size cap, and whether large files are mapped.
    pub read: ReadOptions,
    /// Input dtypes for REST JSON, which carries none (from `--dtype` or the model's
    /// signature).
    pub rest: Option<rest_json::Dtypes>,
    /// Concatenated `PredictionLog`s are read (split into their records) instead of
    /// refused, and a warm-up file that is no TFRecord is read as what it is: for
    /// converting them, which is the fix.
    pub accept_unframed: bool,
    pub(crate) name: NameHints,
}

/// What a file's name and place say about it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NameHints {
    /// The name ends in `.txt` (an EAS text warm-up may be meant).
    pub txt: bool,
    /// The name ends in `.json` or `.jsonl`.
    pub json: bool,
    /// The file is `assets.extra/tf_serving_warmup_requests`, which TF Serving reads as
    /// its warm-up file.
    pub warmup_file: bool,
}

impl InputOptions {
    /// Detect everything; no size limit beyond the reader's.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the input as `format` ([`InputFormat::Auto`] detects it).
    pub fn format(mut self, format: InputFormat) -> Self {
        self.format = format;
        self
    }

    /// Refuses inputs of more than `bytes` bytes (read whole, or once inflated).
    pub fn max_size(mut self, bytes: u64) -> Self {
        self.decode.max_size = Some(bytes);
        self.read = self.read.max_size(bytes);
        self
    }

    /// Reads files as `read` says (its size cap, whether large files are mapped): see
    /// [`ReadOptions::map_large_files`].
    pub fn read_options(mut self, read: ReadOptions) -> Self {
        self.decode.max_size = Some(read.limit());
        self.read = read;
        self
    }

    /// Reads REST JSON with these input dtypes.
    pub fn dtypes(mut self, rest: rest_json::Dtypes) -> Self {
        self.rest = Some(rest);
        self
    }

    /// Reads concatenated `PredictionLog`s instead of refusing them (see the field).
    pub fn accept_unframed(mut self, yes: bool) -> Self {
        self.accept_unframed = yes;
        self
    }

    /// These options for the file at `path`: a `.txt` name allows an EAS text warm-up, a
    /// `.json`/`.jsonl` name says JSON, and `assets.extra/tf_serving_warmup_requests` is
    /// held to TF Serving's rules for its warm-up file.
    pub fn for_path(&self, path: &Path) -> InputOptions {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let warmup_file = path.file_name().and_then(|n| n.to_str())
            == Some("tf_serving_warmup_requests")
            && path
                .parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                == Some("assets.extra");
        InputOptions {
            name: NameHints {
                txt: ext.as_deref() == Some("txt"),
                json: matches!(ext.as_deref(), Some("json" | "jsonl")),
                warmup_file,
            },
            ..self.clone()
        }
    }

    /// Whether these options are for TF Serving's warm-up file (see [`Self::for_path`]).
    pub fn is_warmup_file(&self) -> bool {
        self.name.warmup_file
    }
}
