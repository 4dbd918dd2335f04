//! The browser inspector: tfreq's library compiled to WebAssembly for the static page in
//! `web/page/` (built by `web/build.sh`). Every fact the page shows comes from the
//! library's own reading and renderers, as `tfreq inspect`, `tfreq diff`, `tfreq check`
//! and `tfreq keys` give them (their human output with `--color never`): the page adds
//! tables and paging, never a second decoder.
//!
//! Files are handed over as bytes the page read from the files the user chose; a large
//! TFRecord log is read a slice at a time through [`count_keys`], from the page's worker.

use std::path::Path;

use bytes::Bytes;
use tfreq::analysis::{
    CheckOptions, DiffOptions, Finding, Hint, check_labeled, diff_labeled, lint,
};
use tfreq::analysis::{Labeled, Report, Unreadable};
use tfreq::formats::Compression;
use tfreq::formats::read_model_bytes;
use tfreq::formats::{Container, ContainerKind, Content, InputOptions};
use tfreq::render::ValuesMode;
use tfreq::render::{self, Color};
use tfreq::signature::{ModelSignatures, SERVE_TAG};
use tfreq::{Kind, Message};
use wasm_bindgen::prelude::*;

/// One file read whole, as `tfreq inspect FILE` reads it: its entries, each with its
/// findings, shown a page of entries at a time.
#[wasm_bindgen]
pub struct Inspected {
    name: String,
    read: Result<(Container, Vec<Vec<Finding>>), String>,
}

/// Reads the file `name` holding `bytes` (gzip or zlib inflated) as `tfreq inspect` does.
///
/// ```
/// let bytes = std::fs::read("../tests/data/eas/faq_warmup.bin").unwrap();
/// let i = tfreq_web::inspect("faq_warmup.bin", bytes);
/// assert_eq!((i.error(), i.entries()), (None, 1));
/// assert!(i.page_text(0, 1).contains("input_holder"));
/// ```
#[wasm_bindgen]
pub fn inspect(name: &str, bytes: Vec<u8>) -> Inspected {
    let read = container(name, Bytes::from(bytes))
        .map(|(c, _)| linted(c))
        .map_err(|e| e.to_string());
    Inspected {
        name: name.to_string(),
        read,
    }
}

#[wasm_bindgen]
impl Inspected {
    /// Why the file could not be read (the message `tfreq inspect` prints), if it could not.
    pub fn error(&self) -> Option<String> {
        self.read.as_ref().err().cloned()
    }

    /// How many entries (requests, records, lines) the file holds.
    pub fn entries(&self) -> usize {
        self.read.as_ref().map_or(0, |(c, _)| c.entries.len())
    }

    /// The head `tfreq inspect` prints before the entries of a file of several (its
    /// kind, records, file findings); empty for a file of one message.
    pub fn head(&self) -> String {
        let Ok((c, _)) = &self.read else {
            return String::new();
        };
        let mut out = Vec::new();
        if !bare(c) {
            // Writing to a Vec does not fail.
            let _ = render::write_container_head(&mut out, &self.name, c, Color::Never);
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The human text of `count` entries from `start`, as `tfreq inspect` prints them
    /// after the head.
    pub fn page_text(&self, start: usize, count: usize) -> String {
        let Ok((c, problems)) = &self.read else {
            return String::new();
        };
        let mut out = Vec::new();
        let range = page(c.entries.len(), start, count);
        let _ = render::write_entries(
            &mut out,
            &self.name,
            c,
            problems,
            range,
            bare(c),
            Color::Never,
        );
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The JSON of `count` entries from `start`, as `tfreq inspect --format json` gives
    /// a file (one message: its document; several: the container with those entries).
    pub fn page_json(&mut self, start: usize, count: usize) -> String {
        let Ok((c, problems)) = &mut self.read else {
            return "null".into();
        };
        let mut out = Vec::new();
        if bare(c)
            && c.entries.len() == 1
            && let Content::Message(m) = &c.entries[0].content
        {
            let p = problems.first().map(Vec::as_slice).unwrap_or(&[]);
            let _ = tfreq::render::write_message(&mut out, &self.name, m, p, ValuesMode::Preview);
            return String::from_utf8_lossy(&out).into_owned();
        }
        let range = page(c.entries.len(), start, count);
        // `Container` is not built outside the library: a clone of it without its
        // entries, given the page's.
        let all = std::mem::take(&mut c.entries);
        let mut shell = c.clone();
        shell.entries = all[range.clone()].to_vec();
        c.entries = all;
        let _ = tfreq::render::write_container(
            &mut out,
            &self.name,
            &shell,
            &problems[range],
            ValuesMode::Preview,
        );
        String::from_utf8_lossy(&out).into_owned()
    }
}

fn page(len: usize, start: usize, count: usize) -> std::ops::Range<usize> {
    let start = start.min(len);
    start..start.saturating_add(count).min(len)
}

/// `tfreq inspect`'s bare files: one message, no head.
fn bare(c: &Container) -> bool {
    c.kind == ContainerKind::Bare || (c.kind == ContainerKind::TextFormat && c.entries.len() == 1)
}

/// Each entry's findings; for one bare message, the file's findings go with it (no head
/// is printed), as `tfreq inspect` does.
fn linted(mut c: Container) -> (Container, Vec<Vec<Finding>>) {
    let mut problems: Vec<Vec<Finding>> = c
        .entries
        .iter()
        .map(|e| match &e.content {
            Content::Message(m) => lint(m),
            _ => Vec::new(),
        })
        .collect();
    if bare(&c) && c.entries.len() == 1 {
        let mut p = std::mem::take(&mut c.findings);
        p.append(&mut problems[0]);
        problems[0] = p;
    }
    (c, problems)
}

/// Whether `name` is where TF Serving reads a model's warm-up from.
fn is_warmup_path(name: &str) -> bool {
    name == "tf_serving_warmup_requests"
}

/// The most a file read whole may hold once inflated: a wasm32 module has 4 GiB of memory
/// at most and aborts when it runs out, so a small gzip that inflates to gigabytes is
/// refused here, as a file over this size is counted from slices rather than read whole
/// (`WHOLE_MAX` in web/page/app.js).
const WHOLE_MAX: u64 = 256 << 20;

/// A file read whole as the command line reads one: inflated when compressed, its
/// container with TF Serving's warm-up limits, and the compression it came through.
fn container(name: &str, bytes: Bytes) -> Result<(Container, Option<Compression>), tfreq::Error> {
    let opts = InputOptions::new();
    let limit = WHOLE_MAX;
    let (bytes, compressed) =
        tfreq::formats::inflated(bytes, limit).map_err(|e| e.in_file(name))?;
    let opts = opts.max_size(limit).for_path(Path::new(name));
    let mut c = tfreq::formats::read(bytes, &opts)
        .and_then(|e| e.into_container())
        .map_err(|e| e.in_file(name))?;
    let limits = tfreq::analysis::file_findings(&c);
    c.findings.extend(limits);
    c.compression = compressed;
    if let Some(comp) = compressed.filter(|_| is_warmup_path(name)) {
        c.findings.push(tfreq::analysis::compressed(comp));
    }
    Ok((c, compressed))
}

/// A request read from a file, with where it came from (the command line's `Loaded`).
struct Loaded {
    file: String,
    label: String,
    message: Message,
}

/// The requests of files, the findings about the files, the files that could not be read.
#[derive(Default)]
struct Requests {
    requests: Vec<Loaded>,
    problems: Vec<(String, Vec<Finding>)>,
    unreadable: Vec<Unreadable>,
}

impl Requests {
    /// Reads every request of one file (`warmup`: it is a warm-up, so a compressed one is
    /// a finding); nothing of a file that fails is added.
    fn add(&mut self, file: &str, bytes: &Bytes, warmup: bool) -> Result<(), String> {
        let (mut c, compressed) =
            container(file, bytes.clone()).map_err(|e| e.message_without(file))?;
        if let (Some(comp), true) = (compressed, warmup && !is_warmup_path(file)) {
            c.findings.push(tfreq::analysis::compressed(comp));
        }
        c.findings.extend(tfreq::analysis::not_compared(&c.entries));
        let records_file = matches!(
            c.kind,
            ContainerKind::TfRecord | ContainerKind::UnframedLogs
        );
        let mut found = Vec::new();
        for e in c.entries {
            let label = e.label(c.kind);
            if let Content::Message(message) = e.content {
                if message.kind != Kind::Request {
                    let at = if label.is_empty() {
                        String::new()
                    } else {
                        format!(" ({label})")
                    };
                    return Err(format!("{at} holds a {}, not a request", message.kind)
                        .trim_start()
                        .to_string());
                }
                let label = if label.is_empty() {
                    file.to_string()
                } else {
                    format!("{file} ({label})")
                };
                found.push(Loaded {
                    file: file.to_string(),
                    label,
                    message,
                });
            }
        }
        if found.is_empty() && !records_file {
            return Err("holds no request".into());
        }
        self.requests.extend(found);
        if !c.findings.is_empty() {
            self.problems.push((file.to_string(), c.findings));
        }
        Ok(())
    }

    /// Reads each file; one that cannot be read is set aside with its error.
    fn read(files: &[(String, Bytes)], warmup: bool) -> Requests {
        let mut out = Requests::default();
        for (file, bytes) in files {
            if let Err(error) = out.add(file, bytes, warmup) {
                out.unreadable.push(Unreadable {
                    file: file.clone(),
                    error,
                });
            }
        }
        out
    }

    fn labeled(&self) -> Vec<Labeled<'_>> {
        self.requests
            .iter()
            .map(|l| Labeled::new(&l.file, &l.label, &l.message))
            .collect()
    }

    fn report_problems(&self, report: &mut Report) {
        for (file, found) in &self.problems {
            report.add_problems(file, file, found.clone());
        }
        report.add_unreadable(self.unreadable.iter().cloned());
    }
}

/// The files of a comparison: a warm-up and production files (`tfreq diff`), or
/// requests and a model (`tfreq check`).
#[wasm_bindgen]
#[derive(Default)]
pub struct Compare {
    warmup: Option<(String, Bytes)>,
    production: Vec<(String, Bytes)>,
    model: Option<(String, Bytes)>,
}

#[wasm_bindgen]
impl Compare {
    /// No files yet.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Compare {
        Compare::default()
    }

    /// The warm-up file.
    pub fn set_warmup(&mut self, name: &str, bytes: Vec<u8>) {
        self.warmup = Some((name.to_string(), Bytes::from(bytes)));
    }

    /// One more production (or, for `check`, request) file.
    pub fn add_production(&mut self, name: &str, bytes: Vec<u8>) {
        self.production.push((name.to_string(), Bytes::from(bytes)));
    }

    /// The model: `saved_model.pb`, GetModelMetadata JSON or `saved_model_cli` text.
    pub fn set_model(&mut self, name: &str, bytes: Vec<u8>) {
        self.model = Some((name.to_string(), Bytes::from(bytes)));
    }

    /// `tfreq diff WARMUP PRODUCTION... [--model MODEL]`: a JSON object with `text` (the
    /// human report), `report` (the report's JSON, as `--format json`), `code` (the
    /// exit code), or `error` when the warm-up or the model cannot be read.
    pub fn diff(&self) -> String {
        let Some((wname, wbytes)) = &self.warmup else {
            return error_json("choose a warm-up file");
        };
        let model = match self.signatures() {
            Ok(m) => m,
            Err(e) => return error_json(&e),
        };
        let mg = match &model {
            Some(m) => match m.meta_graph(SERVE_TAG) {
                Some(mg) => Some(mg),
                None => return error_json(&no_serve(self, m)),
            },
            None => None,
        };
        let mut warm = Requests::default();
        if let Err(e) = warm.add(wname, wbytes, true) {
            return error_json(&format!("{wname}: {e}"));
        }
        let prod = Requests::read(&self.production, false);
        let opts = DiffOptions {
            strict_shapes: false,
            model: mg,
        };
        let mut report = diff_labeled(&warm.labeled(), &prod.labeled(), &opts);
        warm.report_problems(&mut report);
        prod.report_problems(&mut report);
        report.model = self.model.as_ref().map(|(n, _)| n.clone());
        report_json(&mut report)
    }

    /// `tfreq check REQUESTS... --model MODEL`, the production files as the requests:
    /// the same JSON object as [`Compare::diff`].
    pub fn check(&self) -> String {
        let model = match self.signatures() {
            Ok(Some(m)) => m,
            Ok(None) => return error_json("choose a model file"),
            Err(e) => return error_json(&e),
        };
        if model.meta_graph(SERVE_TAG).is_none() {
            return error_json(&no_serve(self, &model));
        }
        let reqs = Requests::read(&self.production, true);
        let opts = CheckOptions {
            tag: SERVE_TAG.to_string(),
            signature: None,
            strict_shapes: false,
        };
        let mut report = check_labeled(&reqs.labeled(), &model, &opts);
        reqs.report_problems(&mut report);
        report.model = self.model.as_ref().map(|(n, _)| n.clone());
        report_json(&mut report)
    }

    fn signatures(&self) -> Result<Option<ModelSignatures>, String> {
        let Some((name, bytes)) = &self.model else {
            return Ok(None);
        };
        read_model_bytes(bytes, name)
            .map(|(m, _)| Some(m))
            .map_err(|e| e.to_string())
    }
}

fn no_serve(c: &Compare, m: &ModelSignatures) -> String {
    format!(
        "--model {}: no meta graph tagged {SERVE_TAG:?} (tag sets: {})",
        c.model.as_ref().map_or("", |(n, _)| n.as_str()),
        m.tag_sets().join("; ")
    )
}

fn error_json(e: &str) -> String {
    serde_json::json!({ "error": e }).to_string()
}

/// The exit code of a report, as the command line's (0 ok, 1 failed, 2 unreadable).
fn exit_code(r: &Report) -> u8 {
    if !r.unreadable.is_empty() {
        2
    } else {
        u8::from(r.failed)
    }
}

/// A finding's hint worded as the command line words it, whose output the page
/// mirrors (cli/src/report.rs, `flag_hint`).
fn flag_hint(h: Hint) -> Option<&'static str> {
    Some(match h {
        Hint::StrictShapes => " (an error with --strict-shapes)",
        Hint::Model => {
            ": pass --model PATH (a SavedModel, its metadata JSON or saved_model_cli output)"
        }
        Hint::ModelGraph => ": give --model with the SavedModel (its saved_model.pb has the graph)",
        _ => return None,
    })
}

fn report_json(r: &mut Report) -> String {
    r.findings_mut().for_each(|f| f.word_hint(flag_hint));
    let mut text = Vec::new();
    let _ = tfreq::render::write_human(&mut text, r, Color::Never);
    let report: serde_json::Value =
        serde_json::from_str(&tfreq::render::to_json(r)).unwrap_or_default();
    serde_json::json!({
        "text": String::from_utf8_lossy(&text),
        "report": report,
        "code": exit_code(r),
    })
    .to_string()
}

#[wasm_bindgen]
extern "C" {
    /// Reads up to `len` bytes of the file being counted from offset `at`: the page's
    /// worker defines it (`FileReaderSync` over `File.slice`), so the file is never whole
    /// in memory.
    #[wasm_bindgen(js_name = tfreqReadSlice)]
    fn read_slice(at: f64, len: u32) -> Vec<u8>;
}

/// The file being counted, read through [`read_slice`] a few MiB at a time.
struct Slices {
    at: u64,
    size: u64,
    buf: Vec<u8>,
    pos: usize,
}

/// Bytes asked of the page at a time.
const SLICE: u64 = 4 << 20;

impl std::io::Read for Slices {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.buf.len() {
            if self.at >= self.size {
                return Ok(0);
            }
            let want = (self.size - self.at).min(SLICE) as u32;
            self.buf = read_slice(self.at as f64, want);
            self.pos = 0;
            if self.buf.is_empty() {
                return Err(std::io::Error::other(format!(
                    "the file ended at {} bytes, before the {} it was said to hold",
                    self.at, self.size
                )));
            }
            self.at += self.buf.len() as u64;
        }
        let k = (self.buf.len() - self.pos).min(out.len());
        out[..k].copy_from_slice(&self.buf[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

/// `tfreq keys FILE` over the file `name` of `size` bytes, read a slice at a time from
/// the page (a TFRecord log, plain or gzip, streamed record by record; anything else read
/// whole): a JSON object with `text` (the human table) and `requests`, or `error`.
#[wasm_bindgen]
pub fn count_keys(name: &str, size: f64) -> String {
    let r = Slices {
        at: 0,
        size: size as u64,
        buf: Vec::new(),
        pos: 0,
    };
    match tfreq::scan::count_reader(r, name, &InputOptions::new()) {
        Ok(c) => {
            let mut text = Vec::new();
            let _ = render::write_coverage(&mut text, &c, Color::Never);
            serde_json::json!({
                "text": String::from_utf8_lossy(&text),
                "requests": c.requests,
            })
            .to_string()
        }
        Err(e) => error_json(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(p: &str) -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/data")
                .join(p),
        )
        .unwrap()
    }

    #[test]
    fn the_faq_pair_needs_new_executors() {
        let mut c = Compare::new();
        c.set_warmup("faq_warmup.bin", data("eas/faq_warmup.bin"));
        c.add_production("faq_prod.bin", data("eas/faq_prod.bin"));
        let v: serde_json::Value = serde_json::from_str(&c.diff()).unwrap();
        assert_eq!(v["code"], 1, "{v}");
        assert!(v["text"].as_str().unwrap().contains("FETCH_ADDED"), "{v}");
    }

    #[test]
    fn an_unreadable_warmup_is_an_error() {
        let mut c = Compare::new();
        c.set_warmup("w.bin", b"\xff\xff\xff".to_vec());
        let v: serde_json::Value = serde_json::from_str(&c.diff()).unwrap();
        assert!(v["error"].as_str().unwrap().starts_with("w.bin: "), "{v}");
    }

    #[test]
    fn pages_cut_a_log_of_several_records() {
        let i = inspect("log", data("tfrecord/warmup_predict.tfrecord"));
        assert_eq!(i.entries(), 3);
        let two = i.page_text(0, 2);
        let third = i.page_text(2, 5);
        assert!(
            !two.contains("record 2") && third.contains("record 2"),
            "{two}\n--\n{third}"
        );
    }
}
