//! Requests from protobuf text format: what `tfreq inspect --format text` prints (and
//! Python's `text_format.MessageToString`), so a file can be edited as text and
//! rebuilt. Parsed with prost-reflect over tfreq's own descriptors, encoded to bytes,
//! then decoded like any request.
//!
//! Feeds come out in name order (the order Python and tfreq print map keys in: a map
//! in text format has no other order to keep).
//!
//! The text of a TFRecord file (sections headed `# record N: ...`) gives one request
//! per `predict_log` section; the other records' text is only their heading, and
//! [`requests_from_text`] lists them so no caller drops them silently.
//!
//! ```
//! use tfreq::formats::from_text;
//! // faq_prod.txt is Python's text_format of the request eas_prediction wrote.
//! let text = std::fs::read_to_string("tests/data/eas/faq_prod.txt")?;
//! let msgs = from_text(&text, None)?;
//! let names: Vec<_> = msgs[0].tensors.iter().map(|t| t.name.as_str()).collect();
//! assert_eq!(names, ["input_holder", "model_id", "threshold"]); // text sorts map keys
//! assert_eq!(msgs[0].fetches, ["sorted_labels", "sorted_probs", "model_version_id"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use bytes::Bytes;
use prost::Message as _;
use prost_reflect::DynamicMessage;

use crate::decode::decode_as;
use crate::error::{Error, ErrorDetail};
use crate::model::{Kind, Message, Method, WireFormat};
use crate::wire::reader::RECURSION_LIMIT;

fn parse_one(text: &str, wire: WireFormat, first_line: usize) -> Result<Message, String> {
    let name = crate::wire::message_name(wire, Kind::Request);
    let desc = crate::wire::pool()
        .get_message_by_name(name)
        .ok_or_else(|| format!("no descriptor for {name}"))?;
    let dm = DynamicMessage::parse_text_format(desc, text).map_err(|e| {
        use miette::Diagnostic;
        let at = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
        match at {
            Some(off) => format!("{} {e}", line_column(text, off, first_line)),
            None => e.to_string(),
        }
    })?;
    let bytes = Bytes::from(dm.encode_to_vec());
    let mut m = decode_as(&bytes, wire, Kind::Request).map_err(|e| e.to_string())?;
    // prost-reflect keeps maps unordered; Python's text format sorts map keys, so the
    // name order is the order of the text written by tfreq or Python.
    m.tensors.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(m)
}

/// A TF Serving tf.Example request (`method`'s message) in text format.
fn parse_examples(text: &str, method: Method, first_line: usize) -> Result<Message, String> {
    let name = method.request_message();
    let desc = crate::wire::pool()
        .get_message_by_name(name)
        .ok_or_else(|| format!("no descriptor for {name}"))?;
    let dm = DynamicMessage::parse_text_format(desc, text).map_err(|e| {
        use miette::Diagnostic;
        let at = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
        match at {
            Some(off) => format!("{} {e}", line_column(text, off, first_line)),
            None => e.to_string(),
        }
    })?;
    crate::decode::decode_request(Bytes::from(dm.encode_to_vec()), method)
        .map_err(|e| e.to_string())
}

/// The method a section heading names (`record 1: classify_log request`).
fn heading_method(head: &str) -> Option<Method> {
    let kind = head.split(": ").nth(1)?.strip_suffix(" request")?;
    Some(match kind {
        "classify_log" => Method::Classify,
        "regress_log" => Method::Regress,
        "multi_inference_log" => Method::MultiInference,
        _ => return None,
    })
}

/// `line L column C:` of byte `off` of `text`, whose first line is line `first_line`
/// of the file (columns count characters, from 1).
fn line_column(text: &str, off: usize, first_line: usize) -> String {
    let before = text.get(..off).unwrap_or(text);
    let line = first_line + before.matches('\n').count();
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line} column {col}:")
}

/// Whether `text` reads like protobuf text format at all: its first line that is
/// neither blank nor a `#` comment starts with a field name followed by `:`, `{` or
/// `<` (`inputs {`, `signature_name: "s"`). TOML (`[package]`, `name = "x"`) and prose
/// do not, so an error about them can say what the file is rather than where a
/// protobuf parser gave up.
pub fn looks_like_text_format(text: &str) -> bool {
    let Some(line) = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(line.len());
    let first = line.chars().next();
    name_end > 0
        && first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && matches!(
            line.get(name_end..)
                .map(str::trim_start)
                .and_then(|r| r.chars().next()),
            Some(':' | '{' | '<')
        )
}

/// Requests in text format, as `wire` (or whichever of EAS / TF Serving parses; both
/// parsing is ambiguous and needs `wire`). Records the text has only a heading for
/// are left out: [`requests_from_text`] lists them.
pub fn from_text(text: &str, wire: Option<WireFormat>) -> Result<Vec<Message>, Error> {
    requests_from_text(text, wire).map(|t| t.requests)
}

/// What a text gives: its requests, and the records it holds no request for.
#[derive(Debug, Clone)]
pub struct TextRequests {
    /// The requests, in the text's order.
    pub requests: Vec<Message>,
    /// Each record whose text is only its heading (`# record 1: classify_log (not a
    /// PredictRequest)`), as `record 1: classify_log`: the text cannot rebuild it.
    pub skipped: Vec<String>,
}

/// [`from_text`], also listing the records the text holds no request for.
///
/// ```
/// use tfreq::formats::requests_from_text;
/// let text = "# record 0: predict_log request\nmodel_spec { signature_name: \"s\" }\n\n# record 1: classify_log (not a PredictRequest)\n";
/// let t = requests_from_text(text, Some(tfreq::WireFormat::TfServing))?;
/// assert_eq!((t.requests.len(), t.skipped.as_slice()), (1, &["record 1: classify_log".to_string()][..]));
/// # Ok::<(), tfreq::Error>(())
/// ```
pub fn requests_from_text(text: &str, wire: Option<WireFormat>) -> Result<TextRequests, Error> {
    // prost-reflect's parser recurses once per level: bound the depth before it runs.
    check_text_depth(text.as_bytes())?;
    // (heading, body, line number of the body's first line)
    let mut sections: Vec<(String, String, usize)> = Vec::new();
    let mut cur = (String::new(), String::new(), 1);
    for (i, line) in text.lines().enumerate() {
        if let Some(h) = line.strip_prefix("# record ") {
            if !cur.1.trim().is_empty() || !cur.0.is_empty() {
                sections.push(std::mem::take(&mut cur));
            }
            cur.0 = format!("record {h}");
            cur.2 = i + 2;
            continue;
        }
        cur.1.push_str(line);
        cur.1.push('\n');
    }
    sections.push(cur);
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (head, body, first_line) in sections {
        if let Some(method) = heading_method(&head) {
            let at = head.split(':').next().unwrap_or("");
            out.push(parse_examples(&body, method, first_line).map_err(|e| {
                Error::from(TextError::NotA {
                    at: format!("{at}: "),
                    what: method.to_string(),
                    why: e.to_string(),
                })
            })?);
            continue;
        }
        if !head.is_empty() && !head.contains("predict_log") {
            skipped.push(head.trim_end_matches(" (not a PredictRequest)").to_string());
            continue;
        }
        if head.is_empty() && body.trim().is_empty() {
            continue;
        }
        let at = if head.is_empty() {
            String::new()
        } else {
            format!("{}: ", head.split(':').next().unwrap_or(""))
        };
        let m = match wire {
            Some(w) => parse_one(&body, w, first_line).map_err(|e| {
                Error::from(TextError::NotA {
                    at: at.clone(),
                    what: format!("{w} PredictRequest"),
                    why: e.to_string(),
                })
            })?,
            None => match (
                parse_one(&body, WireFormat::Eas, first_line),
                parse_one(&body, WireFormat::TfServing, first_line),
            ) {
                (Ok(m), Err(_)) | (Err(_), Ok(m)) => m,
                // Both readings say the same (a request with fetches only): EAS, as
                // for the same request's bytes.
                (Ok(eas), Ok(tfs)) if crate::decode::readings_agree(&eas, &tfs) => eas,
                (Ok(_), Ok(_)) => {
                    return Err(Error::from(ErrorDetail::Ambiguous(format!(
                        "{at}an EAS and a TF Serving PredictRequest in text format, which differ"
                    ))));
                }
                (Err(a), Err(b)) => {
                    // TF Serving's tf.Example requests (their own messages).
                    let examples = [Method::ClassifyOrRegress, Method::MultiInference]
                        .into_iter()
                        .find_map(|m| parse_examples(&body, m, first_line).ok());
                    match examples {
                        Some(m) => m,
                        None => {
                            return Err(Error::from(TextError::NeitherWire {
                                at,
                                as_eas: a.to_string(),
                                as_tf_serving: b.to_string(),
                            }));
                        }
                    }
                }
            },
        };
        out.push(m);
    }
    if out.is_empty() {
        return Err(Error::from(TextError::NoRequest { skipped }));
    }
    Ok(TextRequests {
        requests: out,
        skipped,
    })
}

/// Why protobuf text format is not a request.
///
/// ```
/// use tfreq::formats::{from_text, TextError};
///
/// let e = from_text("", None).unwrap_err();
/// let why = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<TextError>());
/// assert!(matches!(why, Some(TextError::NoRequest { .. })));
/// assert_eq!(e.to_string(), "no request in the text");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TextError {
    /// A section that does not parse as the message it must be.
    #[error("{at}not a {what} in text format: {why}")]
    NotA {
        /// The section's heading and `: `, or nothing for text without headings.
        at: String,
        /// The message (`EAS PredictRequest`, `classify_or_regress`, ...).
        what: String,
        /// What the parser said.
        why: String,
    },
    /// Text that is neither wire format's PredictRequest (nor a tf.Example request).
    #[error(
        "{at}not a PredictRequest in text format:\n  as EAS: {as_eas}\n  as TF Serving: {as_tf_serving}"
    )]
    NeitherWire {
        /// The section's heading and `: `, or nothing.
        at: String,
        /// The parser's error as an EAS request.
        as_eas: String,
        /// The parser's error as a TF Serving request.
        as_tf_serving: String,
    },
    /// Text without a request: empty, or only records of other kinds.
    #[error("no request in the text{}", no_request_tail(skipped))]
    NoRequest {
        /// The headings of the records that are not PredictRequests.
        skipped: Vec<String>,
    },
    /// Bytes that are not UTF-8.
    #[error("text format must be UTF-8: {why}")]
    NotUtf8 {
        /// Where the UTF-8 breaks.
        why: String,
    },
    /// Text that parses as protobuf text format, but not as requests.
    #[error("protobuf text format that parses, but not as requests")]
    NotRequests,
    /// Nesting deeper than [`RECURSION_LIMIT`], refused before parsing.
    #[error(
        "protobuf text nests deeper than {RECURSION_LIMIT} levels (line {line}); refused before parsing, as protobuf's own parsers refuse it"
    )]
    TooDeep {
        /// The line where the nesting passes the limit, from 1.
        line: usize,
    },
}

fn no_request_tail(skipped: &[String]) -> String {
    if skipped.is_empty() {
        String::new()
    } else {
        format!(
            ", only the headings of records that are not PredictRequests ({})",
            skipped.join(", ")
        )
    }
}

/// A [`TextError`] is a container problem, as other unreadable files are.
impl From<TextError> for Error {
    fn from(e: TextError) -> Self {
        Error::other(crate::error::Category::Container, e)
    }
}

/// Checks protobuf text for nesting deeper than [`RECURSION_LIMIT`] before a parser
/// that recurses per level sees it.
pub(crate) fn check_text_depth(bytes: &[u8]) -> Result<(), Error> {
    let s = std::str::from_utf8(bytes)
        .map_err(|e| Error::from(TextError::NotUtf8 { why: e.to_string() }))?;
    if text_depth(s) > RECURSION_LIMIT {
        return Err(too_deep_text(s));
    }
    Ok(())
}

pub(crate) fn too_deep_text(s: &str) -> Error {
    let (line, _) = deepest(s);
    Error::from(TextError::TooDeep { line })
}

/// The deepest nesting of `{`/`<`/`[` in protobuf text, outside strings and comments.
pub fn text_depth(s: &str) -> usize {
    deepest(s).1
}

/// (line of the first point that exceeds the limit, or of the deepest point; depth).
fn deepest(s: &str) -> (usize, usize) {
    let (mut depth, mut max, mut line, mut at) = (0usize, 0usize, 1usize, 1usize);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '"' | '\'' => {
                let q = c;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '\n' => {
                            line += 1;
                            break;
                        }
                        c if c == q => break,
                        _ => {}
                    }
                }
            }
            '{' | '<' | '[' => {
                depth += 1;
                if depth > max {
                    max = depth;
                    if max <= RECURSION_LIMIT + 1 {
                        at = line;
                    }
                }
            }
            '}' | '>' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (at, max)
}
