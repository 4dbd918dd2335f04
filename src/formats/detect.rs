//! What a file is: the one place that decides, for every command (the rules are in
//! [`crate::formats`]' module docs, "Detection").

use bytes::Bytes;

use crate::decode::{DecodeOptions, Detection, decode_with};
use crate::error::{Error, ErrorDetail};
use crate::finding::{Code, Finding, Severity};
use crate::formats::options::InputOptions;
use crate::formats::prediction_log::LogKind;
use crate::formats::text_format::{check_text_depth, text_depth, too_deep_text};
use crate::formats::{ContainerKind, InputFormat, rest_json, text, text_format, tfrecord};
use crate::model::{Kind, Message, WireFormat};
use crate::wire::reader::{RECURSION_LIMIT, Reader, WireValue};

/// What [`detect`] found.
#[derive(Debug, Clone)]
pub(crate) struct Detected {
    /// The container.
    pub kind: ContainerKind,
    /// Findings about the file as a whole that detection itself makes (the empty
    /// request, an empty warm-up file).
    pub findings: Vec<Finding>,
    /// The parse detection made to decide, handed over so the bytes are not parsed twice.
    pub kept: Option<Kept>,
    /// The bytes the file stands for when they are not its own: a base64-encoded request
    /// decoded.
    pub decoded: Option<Bytes>,
}

/// A parse detection made and the reader uses.
#[derive(Debug, Clone)]
pub(crate) enum Kept {
    /// A bare message, decoded clean.
    Bare(Box<(Message, Detection)>),
    /// The requests of protobuf text format.
    Text(Vec<Message>),
}

impl Detected {
    fn of(kind: ContainerKind) -> Detected {
        Detected {
            kind,
            findings: Vec::new(),
            kept: None,
            decoded: None,
        }
    }

    fn keeping(kind: ContainerKind, kept: Option<Kept>) -> Detected {
        Detected {
            kept,
            ..Detected::of(kind)
        }
    }
}

/// Decides what `bytes` is (see the module docs). Errors say what the bytes look like
/// and what to do.
/// Why a file is not what it was read as, where nothing below detection says.
///
/// ```
/// use tfreq::formats::DetectError;
/// let e = tfreq::Error::from(DetectError::NotUnframed);
/// assert_eq!(e.to_string(), "not PredictionLog messages concatenated without framing");
/// assert_eq!(e.classify(), tfreq::Category::Container);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DetectError {
    /// Read as unframed PredictionLog messages, but a top-level field is not a
    /// PredictionLog field.
    #[error(
        "not PredictionLog messages concatenated: a top-level field is not a PredictionLog field (log_metadata or a log type)"
    )]
    NotUnframedLogs,
    /// Split as unframed PredictionLog messages, which it is not.
    #[error("not PredictionLog messages concatenated without framing")]
    NotUnframed,
    /// The JSON report tfreq's `inspect` writes, given as a request.
    #[error(
        "this is tfreq's inspect report in JSON (of {file}), a report for reading, not a request: it previews values and does not keep the bytes; give the request file it describes"
    )]
    InspectReport {
        /// The file the report describes.
        file: String,
    },
    /// JSON that is no TF Serving REST body.
    #[error(
        "not a request file (looks like {looks_like}); a TF Serving REST body is a JSON object with \"inputs\" or \"instances\" (:predict) or \"examples\" (:classify, :regress)"
    )]
    NotRestBody {
        /// What it looks like.
        looks_like: String,
    },
}

/// A [`DetectError`] is a container problem, as other unreadable files are.
impl From<DetectError> for Error {
    fn from(e: DetectError) -> Self {
        Error::other(crate::error::Category::Container, e)
    }
}

pub(crate) fn detect(bytes: &Bytes, src: &InputOptions) -> Result<Detected, Error> {
    let opts = src.decode;
    if let Some(limit) = opts.max_size
        && bytes.len() as u64 > limit
    {
        return Err(Error::from(ErrorDetail::TooLarge {
            size: bytes.len() as u64,
            limit,
        }));
    }
    let fmt = src.format;
    let opts = DecodeOptions {
        wire: opts.wire.or(fmt.wire()),
        ..opts
    };
    if bytes.is_empty() {
        return Ok(empty(fmt, src));
    }
    // Converting is the fix, so convert (which accepts unframed logs) reads the file
    // wherever it is.
    if src.name.warmup_file && !src.accept_unframed && !tfrecord::is_tfrecord(bytes) {
        return Err(Error::from(ErrorDetail::WarmupNotTfRecord {
            looks_like: looks_like(bytes),
            convertible: convertible(bytes),
        }));
    }
    match fmt {
        InputFormat::Auto => {}
        InputFormat::Eas | InputFormat::TfServing => {
            // Unframed logs read as one request whose client_id repeats: never that.
            if let Some(logs) = unframed_logs(bytes) {
                if src.accept_unframed {
                    return Ok(Detected::of(ContainerKind::UnframedLogs));
                }
                return Err(Error::from(ErrorDetail::Unframed(unframed_message(&logs))));
            }
            // That wire format: one bare message, or its protobuf text.
            let clean = clean_message(bytes, opts);
            if text::looks_like_text(bytes) && clean.is_none() {
                return text_kind(bytes, opts, src);
            }
            return Ok(Detected::keeping(ContainerKind::Bare, clean));
        }
        InputFormat::TfRecord => {
            if let Some(c) = compression(bytes) {
                return Err(CompressionError::Warmup(c).into());
            }
            return Ok(Detected::of(ContainerKind::TfRecord));
        }
        InputFormat::UnframedLogs => {
            return match split_unframed(bytes) {
                Some(_) => Ok(Detected::of(ContainerKind::UnframedLogs)),
                None => Err(Error::from(DetectError::NotUnframedLogs)),
            };
        }
        InputFormat::Text => {
            check_text_depth(bytes)?;
            return Ok(Detected::of(ContainerKind::TextFormat));
        }
        InputFormat::EasText => return Ok(Detected::of(ContainerKind::Text)),
        InputFormat::Json => return Ok(Detected::of(ContainerKind::RestJson)),
    }
    if tfrecord::is_tfrecord(bytes) {
        return Ok(Detected::of(ContainerKind::TfRecord));
    }
    if let Some(c) = compression(bytes) {
        return Err(CompressionError::Warmup(c).into());
    }
    if let Some(logs) = unframed_logs(bytes) {
        if src.accept_unframed {
            return Ok(Detected::of(ContainerKind::UnframedLogs));
        }
        return Err(Error::from(ErrorDetail::Unframed(unframed_message(&logs))));
    }
    let texty = text::looks_like_text(bytes);
    if src.name.txt && texty {
        // Named *.txt: protobuf text format when it parses as such (Python's
        // `print(request)` output), else an EAS text warm-up.
        let s = std::str::from_utf8(bytes).unwrap_or("");
        if text_depth(s) <= RECURSION_LIMIT
            && let Some(kept) = text_format_parse(s, opts.wire)
        {
            return Ok(Detected::keeping(ContainerKind::TextFormat, kept));
        }
        // Protobuf text with a mistake in it (a misspelt field) is that mistake, not a
        // string warm-up of its lines.
        if looks_like_text_format(s) {
            return Err(text_format_error(s, opts.wire));
        }
        return Ok(Detected::of(ContainerKind::Text));
    }
    let clean = clean_message(bytes, opts);
    if texty && clean.is_none() {
        return text_kind(bytes, opts, src);
    }
    Ok(Detected::keeping(ContainerKind::Bare, clean))
}

/// The empty file: 0 records of a warm-up file, 0 lines, or the empty request.
fn empty(fmt: InputFormat, src: &InputOptions) -> Detected {
    let zero_records = || {
        Finding::new(
            Code::EmptyWarmup,
            Severity::Warning,
            "the file is empty: 0 records. TF Serving loads the model and warms nothing",
        )
    };
    match fmt {
        InputFormat::TfRecord | InputFormat::UnframedLogs => Detected {
            kind: ContainerKind::TfRecord,
            findings: vec![zero_records()],
            kept: None,
            decoded: None,
        },
        _ if src.name.warmup_file => Detected {
            kind: ContainerKind::TfRecord,
            findings: vec![zero_records()],
            kept: None,
            decoded: None,
        },
        InputFormat::EasText => Detected::of(ContainerKind::Text),
        InputFormat::Text | InputFormat::Json => Detected::of(ContainerKind::TextFormat),
        _ => Detected {
            kind: ContainerKind::Bare,
            findings: vec![Finding::new(
                Code::EmptyRequest,
                Severity::Warning,
                "the file is empty: the valid empty request (what every SDK writes for TFRequest() with nothing added), with no feeds and no fetches; a server runs nothing for it",
            )],
            kept: None,
            decoded: None,
        },
    }
}

/// A bare decode with no anomalies: a real message, not text that happens to parse.
fn clean_message(bytes: &Bytes, opts: DecodeOptions) -> Option<Kept> {
    match decode_with(bytes.clone(), opts) {
        Ok((m, det)) if m.all_unknown().next().is_none() => Some(Kept::Bare(Box::new((m, det)))),
        _ => None,
    }
}

/// Text: protobuf text format, REST JSON, or (by name or choice only) an EAS text
/// warm-up; anything else is refused.
fn text_kind(bytes: &Bytes, opts: DecodeOptions, src: &InputOptions) -> Result<Detected, Error> {
    let s = std::str::from_utf8(bytes).unwrap_or("");
    let first = s.trim_start().chars().next();
    if src.name.json || matches!(first, Some('{' | '[')) {
        if let Some(file) = inspect_json(bytes) {
            return Err(Error::from(DetectError::InspectReport { file }));
        }
        if rest_json_like(bytes) {
            return Ok(Detected::of(ContainerKind::RestJson));
        }
        if src.name.json || first == Some('{') {
            return Err(Error::from(DetectError::NotRestBody {
                looks_like: looks_like(bytes),
            }));
        }
    }
    if text_depth(s) > RECURSION_LIMIT {
        return Err(too_deep_text(s));
    }
    if let Some(kept) = text_format_parse(s, opts.wire) {
        return Ok(Detected::keeping(ContainerKind::TextFormat, kept));
    }
    if looks_like_text_format(s) {
        return Err(text_format_error(s, opts.wire));
    }
    if let Some(d) = base64_request(s, opts) {
        return Ok(d);
    }
    Err(Error::from(ErrorDetail::NotRequestText(looks_like(bytes))))
}

/// The `file` an `inspect --format json` report (one object, or an array of them)
/// describes, when `bytes` is one: its objects carry `file` and either `wire` and
/// `kind` (a bare message) or `container` (a file of records).
fn inspect_json(bytes: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let report = |o: &serde_json::Value| {
        let file = o.get("file")?.as_str()?;
        let bare = o.get("wire").is_some() && o.get("kind").is_some();
        (bare || o.get("container").is_some()).then(|| format!("{file:?}"))
    };
    match &v {
        serde_json::Value::Array(a) if !a.is_empty() => {
            let files: Option<Vec<String>> = a.iter().map(report).collect();
            files.map(|f| f.join(", "))
        }
        o => report(o),
    }
}

/// A request written as base64 text (PaiRec's `WarmUpData` writes `warm_up.bin` both raw
/// and base64-encoded: <https://github.com/alibaba/pairec/blob/master/algorithm/eas/easyrec_request.go>):
/// the request it decodes to, named by a `WARMUP_BASE64` error, since the EAS processor
/// parses `warm_up.bin` as raw protobuf and fails on base64 text.
fn base64_request(s: &str, opts: DecodeOptions) -> Option<Detected> {
    use base64::Engine;
    // Line breaks as `base64` (76 columns) or PEM (64) put them.
    let t: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    if t.len() < 4 || !t.iter().all(alphabet) {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD.decode(&t).ok()?;
    let raw = Bytes::from(raw);
    let kept = clean_message(&raw, opts)?;
    Some(Detected {
        kind: ContainerKind::Bare,
        findings: vec![Finding::new(
            Code::WarmupBase64,
            Severity::Error,
            format!(
                "the file is base64 text of a {}-byte request, read here decoded; the EAS processor reads warm_up.bin as raw protobuf and fails on it: write the decoded bytes (base64 -d FILE > warm_up.bin)",
                raw.len()
            ),
        )],
        kept: Some(kept),
        decoded: Some(raw),
    })
}

/// Why text that looks like protobuf text format does not parse as requests: the
/// parser's error, with its line and column for each wire format tried.
fn text_format_error(s: &str, wire: Option<WireFormat>) -> Error {
    match text_format::from_text(s, wire) {
        Err(e) => e,
        Ok(_) => Error::from(text_format::TextError::NotRequests),
    }
}

/// Whether text has the shape of protobuf text format, whatever its field names: a
/// run of fields (`name: value`, `name { ... }`, `name < ... >`, `[ext] { ... }`, with
/// `#` comments) that goes to the end, with at least one block or quoted string; or, for
/// text with a syntax mistake, a field and an opened block before it. Lines such as
/// `query: shoes` (an EAS string warm-up) have neither a block nor a quoted string.
pub fn looks_like_text_format(s: &str) -> bool {
    let mut p = TextShape::new(s);
    let complete = p.fields(0) && p.at_end();
    if complete {
        p.count > 0 && (p.blocks > 0 || p.quoted > 0)
    } else {
        p.count >= 1 && p.opened > 0
    }
}

/// A syntax-only walk over protobuf text format (no schema): counts what it met.
struct TextShape<'a> {
    s: &'a [u8],
    pos: usize,
    count: usize,
    blocks: usize,
    opened: usize,
    quoted: usize,
}

impl<'a> TextShape<'a> {
    fn new(s: &'a str) -> Self {
        TextShape {
            s: s.as_bytes(),
            pos: 0,
            count: 0,
            blocks: 0,
            opened: 0,
            quoted: 0,
        }
    }

    fn skip_space(&mut self) {
        while let Some(&c) = self.s.get(self.pos) {
            if c == b'#' {
                while self.s.get(self.pos).is_some_and(|&c| c != b'\n') {
                    self.pos += 1;
                }
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn ident(&mut self) -> bool {
        self.skip_space();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.pos += 1;
        }
        self.pos > start && !self.s[start].is_ascii_digit()
    }

    /// Fields until a closing bracket or the end; `false` on a syntax mistake. Nesting
    /// is bounded by the caller's depth check (and here by `depth`).
    fn fields(&mut self, depth: usize) -> bool {
        if depth > RECURSION_LIMIT {
            return false;
        }
        loop {
            match self.peek() {
                None | Some(b'}' | b'>') => return true,
                _ => {}
            }
            if !self.field(depth) {
                return false;
            }
            // Fields may be separated by `,` or `;`.
            if !self.eat(b',') {
                self.eat(b';');
            }
        }
    }

    fn field(&mut self, depth: usize) -> bool {
        if self.eat(b'[') {
            // [extension.name] or [type.googleapis.com/Type]
            while self
                .s
                .get(self.pos)
                .is_some_and(|c| c.is_ascii_alphanumeric() || b"_./".contains(c))
            {
                self.pos += 1;
            }
            if !self.eat(b']') {
                return false;
            }
        } else if !self.ident() {
            return false;
        }
        let colon = self.eat(b':');
        match self.peek() {
            Some(open @ (b'{' | b'<')) => {
                self.pos += 1;
                self.opened += 1;
                let close = if open == b'{' { b'}' } else { b'>' };
                if !self.fields(depth + 1) || !self.eat(close) {
                    return false;
                }
                self.blocks += 1;
            }
            Some(b'[') if colon => {
                self.pos += 1;
                if !self.eat(b']') {
                    loop {
                        if !self.value(depth) {
                            return false;
                        }
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return false;
                        }
                    }
                }
            }
            _ if colon => {
                if !self.value(depth) {
                    return false;
                }
            }
            _ => return false,
        }
        self.count += 1;
        true
    }

    /// A scalar: quoted strings (adjacent ones concatenate), a number, an identifier,
    /// or a message in a list.
    fn value(&mut self, depth: usize) -> bool {
        match self.peek() {
            Some(q @ (b'"' | b'\'')) => {
                while self.peek() == Some(q) || matches!(self.peek(), Some(b'"' | b'\'')) {
                    let q = self.s[self.pos];
                    self.pos += 1;
                    loop {
                        match self.s.get(self.pos) {
                            None | Some(b'\n') => return false,
                            Some(b'\\') => self.pos += 2,
                            Some(&c) if c == q => {
                                self.pos += 1;
                                break;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                self.quoted += 1;
                true
            }
            Some(open @ (b'{' | b'<')) => {
                self.pos += 1;
                self.opened += 1;
                let close = if open == b'{' { b'}' } else { b'>' };
                self.blocks += 1;
                self.fields(depth + 1) && self.eat(close)
            }
            Some(b'-' | b'+') => {
                self.pos += 1;
                self.number_or_ident()
            }
            Some(_) => self.number_or_ident(),
            None => false,
        }
    }

    fn number_or_ident(&mut self) -> bool {
        self.skip_space();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"_.+-".contains(c))
        {
            self.pos += 1;
        }
        self.pos > start
    }
}

/// Protobuf text format of requests: `Some(Some(parse))`, or `Some(None)` for text in
/// both wire formats (that ambiguity is reported when the file is read, with the option
/// that settles it); `None` when it is not protobuf text of requests.
fn text_format_parse(s: &str, wire: Option<WireFormat>) -> Option<Option<Kept>> {
    match text_format::from_text(s, wire) {
        Ok(msgs) => Some(Some(Kept::Text(msgs))),
        Err(e) if matches!(e.detail(), ErrorDetail::Ambiguous(_)) => Some(None),
        Err(_) => None,
    }
}

/// Whether the bytes are JSON objects (one, or JSON lines) of which the first has
/// `inputs` or `instances` (a `:predict` body) or `examples` (`:classify`, `:regress`).
fn rest_json_like(bytes: &[u8]) -> bool {
    // NaN / Infinity read as TF Serving's REST layer reads them.
    let bytes = rest_json::nan_tokens(bytes);
    let first = serde_json::Deserializer::from_slice(&bytes)
        .into_iter::<serde_json::Value>()
        .next();
    matches!(first, Some(Ok(serde_json::Value::Object(o))) if ["inputs", "instances", "examples"].iter().any(|k| o.contains_key(*k)))
}

pub use crate::formats::compression::Compression;
use crate::formats::compression::CompressionError;

/// gzip or zlib data, by magic bytes. zlib's two bytes are also a protobuf tag
/// (field 15, varint), so they count only when the header checksum holds and the
/// bytes are not a clean protobuf message.
pub fn compression(bytes: &Bytes) -> Option<Compression> {
    // The magic bytes: one rule, crate::formats::compression's.
    match crate::formats::compression::sniff(bytes.get(..3)?)? {
        Compression::Gzip => Some(Compression::Gzip),
        Compression::Zlib => {
            let clean = matches!(decode_with(bytes.clone(), DecodeOptions::default()), Ok((m, _)) if m.all_unknown().next().is_none());
            (!clean).then_some(Compression::Zlib)
        }
    }
}

/// One record of an unframed `PredictionLog` file: where it starts and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSpan {
    /// Byte offset of the record's first field.
    pub offset: usize,
    /// Its length in bytes.
    pub len: usize,
    /// Its log type.
    pub kind: LogKind,
}

/// Splits `PredictionLog` messages concatenated without framing into their records: a
/// new record starts at a log-type field when the current one has one already, and at
/// `log_metadata` after a log-type field (metadata belongs to the record it precedes,
/// as protobuf serialises field 1 first). `None` when a top-level field is not a
/// `PredictionLog` field (numbers 1-7, length-delimited) or the bytes do not parse.
pub fn split_unframed(bytes: &Bytes) -> Option<Vec<LogSpan>> {
    let mut r = Reader::new(bytes.clone());
    let mut out: Vec<LogSpan> = Vec::new();
    let mut start = 0usize;
    let mut kind: Option<LogKind> = None;
    loop {
        let at = r.offset();
        let Ok(f) = r.next_field() else { return None };
        let Some(f) = f else { break };
        if !matches!(f.value, WireValue::Len(_)) || !(1..=7).contains(&f.number) {
            return None;
        }
        let this = LogKind::from_field(f.number);
        if let Some(k) = kind {
            // A log-type field or metadata after a log type starts a new record.
            out.push(LogSpan {
                offset: start,
                len: at - start,
                kind: k,
            });
            start = at;
            kind = None;
        }
        if this.is_some() {
            kind = this;
        }
    }
    out.push(LogSpan {
        offset: start,
        len: bytes.len() - start,
        kind: kind.unwrap_or(LogKind::None),
    });
    Some(out)
}

/// Unframed `PredictionLog`s: the bytes split into records, and the split is real —
/// a `predict_log` holds a clean TF Serving `PredictRequest` (as a request's bytes
/// field it would be an anomaly: a `client_id` does not hold a `PredictLog`), or a
/// log type occurs more than once (a singular field repeated) where the bytes are no
/// clean message.
fn unframed_logs(bytes: &Bytes) -> Option<Vec<LogSpan>> {
    let spans = split_unframed(bytes)?;
    let typed = spans.iter().filter(|s| s.kind != LogKind::None).count();
    let valid_predict = spans.iter().any(|s| {
        s.kind == LogKind::Predict
            && predict_body_is_request(&bytes.slice(s.offset..s.offset + s.len))
    });
    // A TF Serving request's `inputs` entries (field 2) read as classify_log bodies:
    // repeated log types count only when another kind is among them.
    let other_kinds = spans
        .iter()
        .any(|s| !matches!(s.kind, LogKind::None | LogKind::Classify));
    let repeated = typed >= 2 && other_kinds;
    if !valid_predict && !repeated {
        return None;
    }
    let bodies_parse = spans
        .iter()
        .all(|s| log_bodies_parse(&bytes.slice(s.offset..s.offset + s.len)));
    if bodies_parse && (valid_predict || clean_message(bytes, DecodeOptions::default()).is_none()) {
        return Some(spans);
    }
    None
}

/// Every top-level field's payload of one record parses as a message.
fn log_bodies_parse(rec: &Bytes) -> bool {
    let mut r = Reader::new(rec.clone());
    while let Ok(Some(f)) = r.next_field() {
        let WireValue::Len(b) = f.value else {
            return false;
        };
        let mut s = Reader::new(b);
        loop {
            match s.next_field() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => return false,
            }
        }
    }
    true
}

/// The record's `predict_log` holds only `request`/`response`, and the request decodes
/// as a TF Serving `PredictRequest` with no anomaly.
fn predict_body_is_request(rec: &Bytes) -> bool {
    let mut r = Reader::new(rec.clone());
    let mut ok = false;
    while let Ok(Some(f)) = r.next_field() {
        if f.number != 6 {
            continue;
        }
        let WireValue::Len(body) = f.value else {
            return false;
        };
        let mut s = Reader::new(body);
        while let Ok(Some(g)) = s.next_field() {
            match (g.number, g.value) {
                (1, WireValue::Len(req)) => {
                    let opts = DecodeOptions {
                        wire: Some(WireFormat::TfServing),
                        kind: Some(Kind::Request),
                        max_size: None,
                    };
                    ok = !req.is_empty()
                        && matches!(decode_with(req, opts), Ok((m, d)) if m.all_unknown().next().is_none() && d.candidates.iter().all(|c| matches!(c.2, Ok(0))));
                }
                (2, WireValue::Len(_)) => {}
                _ => return false,
            }
        }
    }
    ok
}

fn unframed_message(spans: &[LogSpan]) -> String {
    let mut counts: Vec<(LogKind, usize)> = Vec::new();
    for s in spans {
        match counts.iter_mut().find(|(k, _)| *k == s.kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((s.kind, 1)),
        }
    }
    let by: Vec<String> = counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.name()))
        .collect();
    format!(
        "{} PredictionLog message{} concatenated without TFRecord framing ({}), as TF Serving's WriteWarmupDataAsSerializedProtos test helper writes: TF Serving refuses it as a warm-up file ('corrupted record at 0 (Is this even a TFRecord file?)')",
        spans.len(),
        if spans.len() == 1 { "" } else { "s" },
        by.join(", ")
    )
}

/// Whether converting the bytes to TFRecord keeps all they hold: PredictionLog messages
/// without framing, or one bare request.
fn convertible(bytes: &Bytes) -> bool {
    unframed_logs(bytes).is_some()
        || (!text::looks_like_text(bytes)
            && matches!(decode_with(bytes.clone(), DecodeOptions::default()), Ok((m, _)) if m.kind == Kind::Request))
}

/// A short description of what bytes look like, for "not a request file" errors.
pub fn looks_like(bytes: &Bytes) -> String {
    if bytes.is_empty() {
        return "empty".into();
    }
    if let Some(c) = compression(bytes) {
        return match c {
            Compression::Gzip => "gzip-compressed data".into(),
            Compression::Zlib => "zlib-compressed data".into(),
        };
    }
    if let Some(spans) = unframed_logs(bytes) {
        return format!(
            "{} PredictionLog message{} concatenated without TFRecord framing",
            spans.len(),
            if spans.len() == 1 { "" } else { "s" }
        );
    }
    if !text::looks_like_text(bytes) {
        return match decode_with(bytes.clone(), DecodeOptions::default()) {
            Ok((m, _)) if m.kind == Kind::Request => format!("one bare {} request", m.wire),
            Ok((m, _)) => format!("one bare {} {}", m.wire, m.kind.as_str()),
            Err(e) => match e.detail() {
                ErrorDetail::NotTensorFlow(Some(what)) => what.clone(),
                _ => format!("binary data, {} bytes, no known format", bytes.len()),
            },
        };
    }
    let s = std::str::from_utf8(bytes).unwrap_or("");
    let t = s.trim_start();
    let lines = s.lines().count();
    let what = if t.starts_with('{') || t.starts_with('[') {
        if serde_json::from_str::<serde_json::Value>(s).is_ok()
            || serde_json::Deserializer::from_str(s)
                .into_iter::<serde_json::Value>()
                .next()
                .is_some_and(|r| r.is_ok())
        {
            "JSON".to_string()
        } else if t.starts_with('[') && s.lines().any(|l| l.contains(" = ")) {
            "TOML".to_string()
        } else {
            "text".to_string()
        }
    } else if s
        .lines()
        .any(|l| l.starts_with("# ") || l.starts_with("## "))
        && s.lines().any(|l| l.trim().is_empty())
    {
        "Markdown".to_string()
    } else if s
        .lines()
        .any(|l| l.starts_with('[') && l.trim_end().ends_with(']'))
        && s.lines().any(|l| l.contains(" = "))
    {
        "TOML".to_string()
    } else {
        "text".to_string()
    };
    let first = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first: String = first.chars().take(40).collect();
    format!(
        "{what}: {lines} line{}, starting {first:?}",
        if lines == 1 { "" } else { "s" }
    )
}

/// Splits an unframed file into its records' bytes (views of `bytes`).
pub fn unframed_records(bytes: &Bytes) -> Result<Vec<(LogSpan, Bytes)>, Error> {
    let spans = split_unframed(bytes).ok_or_else(|| Error::from(DetectError::NotUnframed))?;
    Ok(spans
        .into_iter()
        .map(|s| (s, bytes.slice(s.offset..s.offset + s.len)))
        .collect())
}
