//! Reading a model's signatures from the three places a user has them:
//!
//! - a **SavedModel** directory (or its `saved_model.pb`): only each meta graph's tags
//!   and `signature_def` are decoded; the graph, saver, collections and object graph are
//!   skipped unread (the `.proto` subset in `proto/` leaves them out, <https://github.com/tensorflow/tensorflow/tree/master/tensorflow/core/protobuf>);
//! - TF Serving's **GetModelMetadata** JSON (`GET /v1/models/NAME/metadata`,
//!   <https://www.tensorflow.org/tfx/serving/api_rest>). It does not say which tag set the server loaded; tfreq records
//!   [`SERVE_TAG`], what TF Serving loads unless `--saved_model_tags` says otherwise;
//! - the text **`saved_model_cli show --all`** prints (<https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/tools/saved_model_cli.py>). It carries no
//!   signature defaults.
//!
//! [`read_model`] sniffs which one a path is ([`model_source`]).
//!
//! ```
//! use tfreq::formats::{read_model, ModelSource};
//! let (m, src) = read_model("tests/data/models/faq".as_ref())?;
//! assert_eq!(src, ModelSource::SavedModel);
//! let sig = &m.meta_graph("serve").unwrap().signatures["serving_default"];
//! assert_eq!(sig.inputs["threshold"].name, "serving_default_threshold:0");
//! let (j, _) = read_model("tests/data/models/faq.metadata.json".as_ref())?;
//! let (t, _) = read_model("tests/data/models/faq.saved_model_cli.txt".as_ref())?;
//! assert_eq!(m, j);
//! assert_eq!(m, t);
//! # Ok::<(), tfreq::formats::ModelError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use prost::Message as _;
use serde::Serialize;
use serde_json::Value;

use crate::dtype::{DType, DTypeCode};
use crate::signature::{
    DenseFeature, ExampleSpec, MetaGraph, ModelSignatures, SERVE_TAG, Signature, TensorSpec,
    VarLenFeature,
};
use crate::wire::tf;

/// Which kind of file a model's signatures came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelSource {
    /// A binary `saved_model.pb` (or the directory holding it).
    SavedModel,
    /// TF Serving's GetModelMetadata REST JSON.
    Metadata,
    /// The text of `saved_model_cli show --all`.
    SavedModelCli,
}

impl ModelSource {
    /// `saved-model`, `metadata` or `saved-model-cli`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSource::SavedModel => "saved-model",
            ModelSource::Metadata => "metadata",
            ModelSource::SavedModelCli => "saved-model-cli",
        }
    }
}

impl fmt::Display for ModelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelSource::SavedModel => "SavedModel",
            ModelSource::Metadata => "TF Serving model metadata JSON",
            ModelSource::SavedModelCli => "saved_model_cli show --all text",
        })
    }
}

/// Why a model could not be read. Each says where: the file, and a field path (JSON),
/// a line (text) or protobuf's own path (binary).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// Reading the file.
    #[error("{}: {source}", crate::escape::sanitize(path))]
    Io {
        /// The file.
        path: String,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// A directory without `saved_model.pb`.
    #[error("{0}: no saved_model.pb in this directory{1}")]
    NoSavedModel(String, &'static str),
    /// `saved_model.pb` is not a valid `SavedModel` message.
    #[error(
        "{}: not a valid SavedModel protobuf: {source}",
        crate::escape::sanitize(path)
    )]
    Protobuf {
        /// The file.
        path: String,
        /// prost's error (with the message path).
        #[source]
        source: prost::DecodeError,
    },
    /// Malformed JSON.
    #[error(
        "{}: invalid JSON at line {line}, column {column}: {message}",
        crate::escape::sanitize(path)
    )]
    Json {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// JSON that is not GetModelMetadata's shape.
    #[error("{}: {at}: {message}", crate::escape::sanitize(path))]
    Schema {
        /// The file.
        path: String,
        /// JSON field path (`metadata.signature_def.signature_def["s"].inputs["x"].dtype`).
        at: String,
        /// What was wrong.
        message: String,
    },
    /// A `saved_model_cli` line that does not fit the layout.
    #[error("{}: line {line}: {message}", crate::escape::sanitize(path))]
    Text {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// None of the three formats.
    #[error(
        "{0}: not a SavedModel directory, saved_model.pb, TF Serving model-metadata JSON or `saved_model_cli show --all` output"
    )]
    Unrecognised(String),
}

impl From<ModelError> for crate::Error {
    /// A model that cannot be read: [`Category::Io`](crate::Category::Io) for a file that
    /// cannot be opened, else [`Category::Model`](crate::Category::Model).
    fn from(e: ModelError) -> Self {
        let category = match e {
            ModelError::Io { .. } => crate::Category::Io,
            _ => crate::Category::Model,
        };
        crate::Error::other(category, e)
    }
}

/// Says which of the three formats `path` is, from its kind (directory) and first bytes.
pub fn model_source(path: &Path) -> Result<ModelSource, ModelError> {
    if path.is_dir() {
        return Ok(ModelSource::SavedModel);
    }
    let bytes = read(path)?;
    sniff_bytes(&bytes).ok_or_else(|| ModelError::Unrecognised(path.display().to_string()))
}

fn sniff_bytes(b: &[u8]) -> Option<ModelSource> {
    let text = std::str::from_utf8(b).ok();
    if let Some(t) = text {
        let t = t.trim_start();
        if t.starts_with('{') {
            return Some(ModelSource::Metadata);
        }
        if t.starts_with("MetaGraphDef with tag-set:") {
            return Some(ModelSource::SavedModelCli);
        }
    }
    // A binary SavedModel starts with saved_model_schema_version (08 01) or meta_graphs (12).
    match b.first() {
        Some(0x08) | Some(0x12) => Some(ModelSource::SavedModel),
        _ => None,
    }
}

fn read(path: &Path) -> Result<Bytes, ModelError> {
    crate::io::read_input(path).map_err(|e| match e.into_detail() {
        crate::ErrorDetail::Io { path, source } => ModelError::Io { path, source },
        other => ModelError::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}

/// Reads a model's signatures from a SavedModel directory, a `saved_model.pb`, a
/// GetModelMetadata JSON file or `saved_model_cli show --all` text.
pub fn read_model(path: &Path) -> Result<(ModelSignatures, ModelSource), ModelError> {
    let label = path.display().to_string();
    let (file, bytes): (PathBuf, Bytes) = if path.is_dir() {
        let pb = path.join("saved_model.pb");
        if !pb.is_file() {
            let hint = if path.join("saved_model.pbtxt").is_file() {
                " (saved_model.pbtxt, the text form, is not supported)"
            } else {
                ""
            };
            return Err(ModelError::NoSavedModel(label, hint));
        }
        let b = read(&pb)?;
        return from_saved_model_pb(&b, &pb.display().to_string())
            .map(|m| (m, ModelSource::SavedModel));
    } else {
        (path.to_path_buf(), read(path)?)
    };
    read_model_bytes(&bytes, &file.display().to_string())
}

/// Reads a model's signatures from the bytes of one model file (`saved_model.pb`,
/// GetModelMetadata JSON or `saved_model_cli show --all` text, told apart by their first
/// bytes as [`read_model`] does), named `name` in errors: a file that was not read from
/// a file system (the browser page in web/ reads a file the user chose).
///
/// ```
/// use tfreq::formats::{read_model_bytes, ModelSource};
/// let bytes = std::fs::read("tests/data/models/seed.metadata.json")?;
/// let (model, source) = read_model_bytes(&bytes, "seed.metadata.json")?;
/// assert_eq!(source, ModelSource::Metadata);
/// assert!(model.meta_graph("serve").is_some());
/// assert!(read_model_bytes(b"hello", "x").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_model_bytes(
    bytes: &[u8],
    name: &str,
) -> Result<(ModelSignatures, ModelSource), ModelError> {
    let name = name.to_string();
    match sniff_bytes(bytes) {
        Some(ModelSource::SavedModel) => {
            from_saved_model_pb(bytes, &name).map(|m| (m, ModelSource::SavedModel))
        }
        Some(ModelSource::Metadata) => {
            from_metadata_json(bytes, &name).map(|m| (m, ModelSource::Metadata))
        }
        Some(ModelSource::SavedModelCli) => {
            let text =
                std::str::from_utf8(bytes).map_err(|_| ModelError::Unrecognised(name.clone()))?;
            from_saved_model_cli(text, &name).map(|m| (m, ModelSource::SavedModelCli))
        }
        None => Err(ModelError::Unrecognised(name)),
    }
}

// ---------------------------------------------------------------------------------------
// saved_model.pb
// ---------------------------------------------------------------------------------------

/// Decodes the signatures of a binary `saved_model.pb` (`file` names it in errors).
pub fn from_saved_model_pb(bytes: &[u8], file: &str) -> Result<ModelSignatures, ModelError> {
    let sm = tf::SavedModel::decode(bytes).map_err(|source| ModelError::Protobuf {
        path: file.to_string(),
        source,
    })?;
    let mut meta_graphs: Vec<MetaGraph> = sm
        .meta_graphs
        .into_iter()
        .map(|mg| MetaGraph {
            tags: mg.meta_info_def.map(|m| m.tags).unwrap_or_default(),
            signatures: signatures(mg.signature_def),
        })
        .collect();
    // The tf.Example features each signature parses, read from the graph; a graph that
    // cannot be read leaves them unknown (the signatures stand without them).
    crate::formats::example_spec::attach(bytes, &mut meta_graphs);
    Ok(ModelSignatures { meta_graphs })
}

/// The neutral signatures of a `signature_def` map (a meta graph's, or the
/// `SignatureDefMap` a gRPC GetModelMetadata answer carries).
pub fn signatures(defs: BTreeMap<String, tf::SignatureDef>) -> BTreeMap<String, Signature> {
    defs.into_iter()
        .map(|(key, sd)| {
            let sig = Signature {
                key: key.clone(),
                method_name: sd.method_name,
                inputs: specs(sd.inputs),
                outputs: specs(sd.outputs),
                defaults: sd.defaults.into_keys().collect(),
                examples: None,
            };
            (key, sig)
        })
        .collect()
}

fn specs(m: BTreeMap<String, tf::TensorInfo>) -> BTreeMap<String, TensorSpec> {
    m.into_iter()
        .map(|(alias, ti)| {
            let name = match ti.encoding {
                Some(tf::tensor_info::Encoding::Name(n)) => n,
                _ => String::new(),
            };
            let shape = match ti.tensor_shape {
                None => Some(Vec::new()),
                Some(s) if s.unknown_rank => None,
                Some(s) => Some(s.dim.iter().map(|d| d.size).collect()),
            };
            (
                alias,
                TensorSpec {
                    name,
                    dtype: DTypeCode(ti.dtype),
                    shape,
                },
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// GetModelMetadata JSON
// ---------------------------------------------------------------------------------------

/// The line `tfreq signature` puts before the features a signature parses
/// (`render::signature`), read back here.
pub(crate) const EXAMPLES_HEADER: &str =
    "Parses tf.Example features (from the graph's ParseExample):";

/// One feature line under [`EXAMPLES_HEADER`]: `KEY: DT_X [DIMS], required`,
/// `KEY: DT_X [DIMS], default V`, `KEY: DT_X, variable length (sparse)` or
/// `KEY: DT_X, ragged`.
fn example_line(line: &str, spec: &mut ExampleSpec) -> Option<()> {
    let at = line.rfind(": DT_")?;
    let (key, rest) = (&line[..at], &line[at + 2..]);
    let (dtype, rest) = rest.split_once([' ', ','])?;
    let dtype = DTypeCode::from(DType::from_name(dtype)?);
    let rest = rest.trim_start_matches([',', ' ']);
    if rest == "variable length (sparse)" {
        spec.sparse.push(VarLenFeature {
            key: key.to_string(),
            dtype,
        });
    } else if rest == "ragged" {
        spec.ragged.push(VarLenFeature {
            key: key.to_string(),
            dtype,
        });
    } else {
        let (dims, how) = rest.strip_prefix('[')?.split_once("], ")?;
        let shape = dims
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect::<Option<Vec<i64>>>()?;
        let default = match how {
            "required" => None,
            d => Some(d.strip_prefix("default ")?.to_string()),
        };
        spec.dense.push(DenseFeature {
            key: key.to_string(),
            dtype,
            shape,
            default,
        });
    }
    Some(())
}

/// Reads TF Serving's GetModelMetadata REST JSON (`file` names it in errors).
///
/// The meta graph gets the tag [`SERVE_TAG`]: the JSON does not say which tag set the
/// server loaded.
pub fn from_metadata_json(bytes: &[u8], file: &str) -> Result<ModelSignatures, ModelError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| ModelError::Json {
        path: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let j = Json { file };
    let map = j.get(&v, "", "metadata")?;
    let map = j.get(map, "metadata", "signature_def")?;
    let at = "metadata.signature_def.signature_def";
    let map = j.object(j.get(map, "metadata.signature_def", "signature_def")?, at)?;
    let mut signatures = BTreeMap::new();
    for (key, sd) in map {
        let at = format!("{at}[{key:?}]");
        let sd = j.object(sd, &at)?;
        let io = |which: &str| -> Result<BTreeMap<String, TensorSpec>, ModelError> {
            let mut out = BTreeMap::new();
            let Some(m) = sd.get(which) else {
                return Ok(out);
            };
            let at = format!("{at}.{which}");
            for (alias, ti) in j.object(m, &at)? {
                let at = format!("{at}[{alias:?}]");
                out.insert(alias.clone(), j.tensor_info(ti, &at)?);
            }
            Ok(out)
        };
        let method_name = match sd.get("method_name") {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(j.err(&format!("{at}.method_name"), "expected a string")),
        };
        let defaults = match sd.get("defaults") {
            None => Vec::new(),
            Some(d) => j
                .object(d, &format!("{at}.defaults"))?
                .keys()
                .cloned()
                .collect(),
        };
        signatures.insert(
            key.clone(),
            Signature {
                key: key.clone(),
                method_name,
                inputs: io("inputs")?,
                outputs: io("outputs")?,
                defaults,
                examples: None,
            },
        );
    }
    Ok(ModelSignatures {
        meta_graphs: vec![MetaGraph {
            tags: vec![SERVE_TAG.to_string()],
            signatures,
        }],
    })
}

struct Json<'a> {
    file: &'a str,
}

impl Json<'_> {
    fn err(&self, at: &str, message: &str) -> ModelError {
        ModelError::Schema {
            path: self.file.to_string(),
            at: if at.is_empty() {
                "top level".into()
            } else {
                at.to_string()
            },
            message: message.to_string(),
        }
    }

    fn get<'v>(&self, v: &'v Value, at: &str, key: &str) -> Result<&'v Value, ModelError> {
        self.object(v, at)?.get(key).ok_or_else(|| {
            self.err(
                at,
                &format!("no {key:?} key (not a GetModelMetadata response?)"),
            )
        })
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        at: &str,
    ) -> Result<&'v serde_json::Map<String, Value>, ModelError> {
        v.as_object()
            .ok_or_else(|| self.err(at, "expected an object"))
    }

    fn tensor_info(&self, v: &Value, at: &str) -> Result<TensorSpec, ModelError> {
        let o = self.object(v, at)?;
        let name = match o.get("name") {
            Some(Value::String(s)) => s.clone(),
            None => String::new(),
            Some(_) => return Err(self.err(&format!("{at}.name"), "expected a string")),
        };
        let dtype = match o.get("dtype") {
            None => DTypeCode(0),
            Some(Value::String(s)) => DType::from_name(s)
                .map(DTypeCode::from)
                .or_else(|| ref_name(s))
                .ok_or_else(|| {
                    self.err(&format!("{at}.dtype"), &format!("unknown DataType {s:?}"))
                })?,
            Some(Value::Number(n)) => n
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .map(DTypeCode)
                .ok_or_else(|| self.err(&format!("{at}.dtype"), "not an enum number"))?,
            Some(_) => return Err(self.err(&format!("{at}.dtype"), "expected a DataType name")),
        };
        let shape = match o.get("tensor_shape") {
            None => Some(Vec::new()),
            Some(s) => {
                let at = format!("{at}.tensor_shape");
                let s = self.object(s, &at)?;
                let unknown = match s.get("unknown_rank") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(
                            self.err(&format!("{at}.unknown_rank"), "expected true or false")
                        );
                    }
                };
                let mut dims = Vec::new();
                if let Some(d) = s.get("dim") {
                    let arr = d
                        .as_array()
                        .ok_or_else(|| self.err(&format!("{at}.dim"), "expected a list"))?;
                    for (i, dim) in arr.iter().enumerate() {
                        let at = format!("{at}.dim[{i}]");
                        let size = match self.object(dim, &at)?.get("size") {
                            None => Some(0),
                            Some(Value::String(s)) => s.parse::<i64>().ok(),
                            Some(Value::Number(n)) => n.as_i64(),
                            Some(_) => None,
                        };
                        dims.push(size.ok_or_else(|| {
                            self.err(
                                &format!("{at}.size"),
                                "expected an int64 (a decimal string)",
                            )
                        })?);
                    }
                }
                if unknown { None } else { Some(dims) }
            }
        };
        Ok(TensorSpec { name, dtype, shape })
    }
}

fn ref_name(s: &str) -> Option<DTypeCode> {
    let base = s.strip_suffix("_REF")?;
    DType::from_name(base).map(|d| DTypeCode(d.number() + 100))
}

// ---------------------------------------------------------------------------------------
// saved_model_cli show --all
// ---------------------------------------------------------------------------------------

/// Parses the text `saved_model_cli show --dir DIR --all` prints (`file` names it in
/// errors). The ops line and the "Concrete Functions" section are skipped.
pub fn from_saved_model_cli(text: &str, file: &str) -> Result<ModelSignatures, ModelError> {
    let err = |line: usize, message: String| ModelError::Text {
        path: file.to_string(),
        line,
        message,
    };
    #[derive(PartialEq)]
    enum Section {
        None,
        Inputs,
        Outputs,
        Examples,
        Skip,
    }
    let mut out = ModelSignatures::default();
    let mut section = Section::Skip;
    // (is_input, alias) of the tensor being read.
    let mut current: Option<(bool, String)> = None;
    let mut sig: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("MetaGraphDef with tag-set: '") {
            let tags = rest
                .strip_suffix("' contains the following SignatureDefs:")
                .ok_or_else(|| err(n, "unexpected tag-set line".into()))?;
            out.meta_graphs.push(MetaGraph {
                tags: tags.split(", ").map(String::from).collect(),
                signatures: BTreeMap::new(),
            });
            section = Section::None;
            sig = None;
            current = None;
            continue;
        }
        if section == Section::Skip {
            continue;
        }
        if line.starts_with("The MetaGraph with tag set ") || line == "Concrete Functions:" {
            section = Section::Skip;
            continue;
        }
        let mg = out
            .meta_graphs
            .last_mut()
            .ok_or_else(|| err(n, "text before the first MetaGraphDef line".into()))?;
        if let Some(rest) = line.strip_prefix("signature_def['") {
            let key = rest
                .strip_suffix("']:")
                .ok_or_else(|| err(n, "expected signature_def['KEY']:".into()))?;
            mg.signatures.insert(key.to_string(), Signature::new(key));
            sig = Some(key.to_string());
            section = Section::None;
            current = None;
            continue;
        }
        let Some(key) = sig.clone() else {
            return Err(err(
                n,
                format!("unexpected line outside a signature: {line:?}"),
            ));
        };
        let Some(s) = mg.signatures.get_mut(&key) else {
            return Err(err(n, "internal: signature lost".into()));
        };
        if line == "The given SavedModel SignatureDef contains the following input(s):" {
            section = Section::Inputs;
            current = None;
        } else if line == "The given SavedModel SignatureDef contains the following output(s):" {
            section = Section::Outputs;
            current = None;
        } else if let Some(m) = line.strip_prefix("Method name is:") {
            s.method_name = m.trim().to_string();
            section = Section::None;
            current = None;
        } else if line == EXAMPLES_HEADER {
            // tfreq's own addition to the text (`tfreq signature` of a SavedModel).
            section = Section::Examples;
            s.examples = Some(ExampleSpec::default());
            current = None;
        } else if section == Section::Examples {
            let spec = s.examples.get_or_insert_with(ExampleSpec::default);
            example_line(line, spec)
                .ok_or_else(|| err(n, format!("not a tf.Example feature line: {line:?}")))?;
        } else if let Some((is_input, alias)) = tensor_header(line) {
            if section != Section::Inputs && section != Section::Outputs
                || is_input != (section == Section::Inputs)
            {
                return Err(err(
                    n,
                    format!("{line:?} outside its input(s)/output(s) list"),
                ));
            }
            let map = if is_input {
                &mut s.inputs
            } else {
                &mut s.outputs
            };
            map.insert(
                alias.clone(),
                TensorSpec::new("", DType::Invalid, Some(Vec::new())),
            );
            current = Some((is_input, alias));
        } else {
            let Some((is_input, alias)) = &current else {
                return Err(err(n, format!("unexpected line: {line:?}")));
            };
            let map = if *is_input {
                &mut s.inputs
            } else {
                &mut s.outputs
            };
            let Some(t) = map.get_mut(alias) else {
                return Err(err(n, "internal: tensor lost".into()));
            };
            if let Some(d) = line.strip_prefix("dtype:") {
                let d = d.trim();
                t.dtype = DType::from_name(d)
                    .map(DTypeCode::from)
                    .or_else(|| ref_name(d))
                    .or_else(|| d.parse().ok().map(DTypeCode))
                    .ok_or_else(|| err(n, format!("unknown dtype {d:?}")))?;
            } else if let Some(sh) = line.strip_prefix("shape:") {
                t.shape = parse_shape(sh.trim())
                    .ok_or_else(|| err(n, format!("bad shape {:?}", sh.trim())))?;
            } else if let Some(name) = raw.trim_start().strip_prefix("name:") {
                t.name = name.strip_prefix(' ').unwrap_or(name).to_string();
            } else {
                return Err(err(n, format!("unexpected line: {line:?}")));
            }
        }
    }
    if out.meta_graphs.is_empty() {
        return Err(ModelError::Unrecognised(file.to_string()));
    }
    Ok(out)
}

/// `inputs['a'] tensor_info:` → (true, "a"); `outputs['b'] tensor_info:` → (false, "b").
fn tensor_header(line: &str) -> Option<(bool, String)> {
    let (is_input, rest) = match line.strip_prefix("inputs['") {
        Some(r) => (true, r),
        None => (false, line.strip_prefix("outputs['")?),
    };
    rest.strip_suffix("'] tensor_info:")
        .map(|a| (is_input, a.to_string()))
}

/// `unknown_rank` → `Some(None)`; `()` / `(-1)` / `(-1, 784)` → the dims.
fn parse_shape(s: &str) -> Option<Option<Vec<i64>>> {
    if s == "unknown_rank" {
        return Some(None);
    }
    let inner = s.strip_prefix('(')?.strip_suffix(')')?.trim();
    if inner.is_empty() {
        return Some(Some(Vec::new()));
    }
    inner
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim().parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_as_saved_model_cli_prints_them() {
        assert_eq!(parse_shape("()"), Some(Some(vec![])));
        assert_eq!(parse_shape("(-1)"), Some(Some(vec![-1])));
        assert_eq!(
            parse_shape("(-1, 28, 28, 1)"),
            Some(Some(vec![-1, 28, 28, 1]))
        );
        assert_eq!(parse_shape("unknown_rank"), Some(None));
        assert_eq!(parse_shape("(a)"), None);
        assert_eq!(parse_shape("-1"), None);
    }

    #[test]
    fn cli_text_single_and_multi_tag_sets() {
        let text = "\nMetaGraphDef with tag-set: 'serve, gpu' contains the following SignatureDefs:\n\n\
            signature_def['a b']:\n  The given SavedModel SignatureDef contains the following input(s):\n\
            \x20   inputs['x'] tensor_info:\n        dtype: DT_FLOAT_REF\n        shape: (2)\n        name: \n\
            \x20 The given SavedModel SignatureDef contains the following output(s):\n  Method name is: \n";
        let m = from_saved_model_cli(text, "t").unwrap();
        assert_eq!(m.meta_graphs[0].tags, ["serve", "gpu"]);
        let s = &m.meta_graphs[0].signatures["a b"];
        assert_eq!(s.inputs["x"].dtype, DTypeCode(101));
        assert_eq!(s.inputs["x"].name, "");
        assert_eq!(s.method_name, "");
        // An output header inside the input list is refused, with its line.
        let bad = text.replace("inputs['x']", "outputs['x']");
        let e = from_saved_model_cli(&bad, "t").unwrap_err().to_string();
        assert!(e.contains("line 6"), "{e}");
    }

    /// The graph (MetaGraphDef field 2) is skipped by length, never parsed: garbage there
    /// does not matter.
    #[test]
    fn graph_def_is_skipped_unread() {
        let garbage = [0xff_u8, 0xff, 0xff, 0x07, 0x00, 0x1f];
        let mut mg = vec![0x0a, 0x07, 0x22, 0x05];
        mg.extend_from_slice(b"serve");
        mg.extend_from_slice(&[0x12, garbage.len() as u8]);
        mg.extend_from_slice(&garbage);
        let mut pb = vec![0x08, 0x01, 0x12, mg.len() as u8];
        pb.extend_from_slice(&mg);
        let m = from_saved_model_pb(&pb, "x").unwrap();
        assert_eq!(m.meta_graphs[0].tags, ["serve"]);
        assert!(m.meta_graphs[0].signatures.is_empty());
    }

    #[test]
    fn sniffing_bytes() {
        assert_eq!(sniff_bytes(b"  {\"a\": 1}"), Some(ModelSource::Metadata));
        assert_eq!(
            sniff_bytes(b"\nMetaGraphDef with tag-set: 'serve'"),
            Some(ModelSource::SavedModelCli)
        );
        assert_eq!(
            sniff_bytes(&[0x08, 0x01, 0x12, 0x00]),
            Some(ModelSource::SavedModel)
        );
        assert_eq!(sniff_bytes(b"hello"), None);
        assert_eq!(sniff_bytes(b""), None);
    }

    #[test]
    fn metadata_json_errors_name_the_field() {
        let e = from_metadata_json(br#"{"metadata": {"signature_def": {"signature_def": {"s": {"inputs": {"x": {"tensor_shape": {"dim": [{"size": "x"}]}}}}}}}}"#, "m.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(r#"signature_def["s"].inputs["x"].tensor_shape.dim[0].size"#),
            "{e}"
        );
        let e = from_metadata_json(b"[]", "m.json").unwrap_err().to_string();
        assert!(e.contains("top level: expected an object"), "{e}");
        let e = from_metadata_json(br#"{"model_spec": {}}"#, "m.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no \"metadata\" key"), "{e}");
    }
}
