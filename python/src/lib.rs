//! `tfreq._tfreq`: the Rust half of the Python package (`python/tfreq/` is the other).
//!
//! It holds what must be fast or exact — the builder's checks and encoding, decoding,
//! diff, check, executor keys — and the command line itself (`run_cli`, the `tfreq`
//! command of the package). The Python half turns numpy arrays and lists into the
//! element types asked for here and builds arrays from the views returned here, so that
//! numpy stays an optional dependency (`tfreq[numpy]`).

use std::ffi::OsString;

use bytes::Bytes;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use tfreq::{DType, FeedValues, TFRequest, WireFormat};

mod decoded;

create_exception!(
    tfreq,
    Error,
    PyException,
    "Any error of tfreq that is not a refusal of an argument."
);
create_exception!(
    tfreq,
    DecodeError,
    PyValueError,
    "Bytes that are not a valid request or response: the message says what, where (byte offset, field path) and what was expected."
);

/// A library error as a Python exception: decode and format errors as `DecodeError`
/// (a `ValueError`), builder refusals as `ValueError`, the rest as `tfreq.Error`; the
/// offset, field path, record and file as attributes where the error has them.
fn to_py(py: Python<'_>, e: tfreq::Error) -> PyErr {
    use tfreq::Category as C;
    let msg = e.to_string();
    let err = match e.classify() {
        C::Decode | C::Unrecognised | C::Container | C::Limit => DecodeError::new_err(msg.clone()),
        C::Build => PyValueError::new_err(msg.clone()),
        _ => Error::new_err(msg.clone()),
    };
    let v = err.value(py);
    // Bytes no wire format reads carry one error per reading, in the message only: the
    // furthest any reading got is where the bytes stopped being a message.
    let (offset, path) = match e.offset() {
        Some(o) => (Some(o), e.field_path()),
        None => furthest_at(&msg).map_or((None, None), |(o, p)| (Some(o), p)),
    };
    let _ = v.setattr("offset", offset);
    let _ = v.setattr("field_path", path);
    let _ = v.setattr("record", e.record());
    let _ = v.setattr("file", e.file());
    err
}

/// The largest `at byte N` of a message, with the `(in PATH)` that follows it, if any.
fn furthest_at(msg: &str) -> Option<(usize, Option<String>)> {
    const AT: &str = "at byte ";
    let mut best: Option<(usize, Option<String>)> = None;
    let mut rest = msg;
    while let Some(i) = rest.find(AT) {
        rest = &rest[i + AT.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(n) = rest[..digits].parse::<usize>() else {
            continue;
        };
        let path = rest[digits..]
            .strip_prefix(" (in ")
            .and_then(|p| p.split_once(')'))
            .map(|(p, _)| p.to_string());
        if best.as_ref().is_none_or(|(b, _)| n > *b) {
            best = Some((n, path));
        }
    }
    best
}

fn build_err(e: tfreq::BuildError) -> PyErr {
    match e {
        tfreq::BuildError::WrongType { .. } => PyTypeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

fn dtype_of(n: i32) -> PyResult<DType> {
    DType::from_number(n)
        .filter(|d| *d != DType::Invalid)
        .ok_or_else(|| PyValueError::new_err(format!("{n} is not a TensorFlow dtype number")))
}

/// `bytes` of Python kept alive as the owner of a `Bytes` view, so decoding reads the
/// caller's buffer in place and values can be handed back as views of it.
struct PyOwned {
    _obj: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: a Python `bytes` object is immutable and its buffer lives as long as the object,
// which `_obj` keeps alive; the pointer is only read.
unsafe impl Send for PyOwned {}

impl AsRef<[u8]> for PyOwned {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the `Send` impl: `ptr`/`len` describe the live, immutable buffer.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

fn bytes_of(b: &Bound<'_, PyBytes>) -> Bytes {
    let s = b.as_bytes();
    Bytes::from_owner(PyOwned {
        _obj: b.clone().unbind(),
        ptr: s.as_ptr(),
        len: s.len(),
    })
}

/// The builder behind `tfreq.TFRequest`.
#[pyclass(module = "tfreq._tfreq")]
struct Builder {
    req: TFRequest,
}

macro_rules! array_values {
    ($arr:expr, $($t:ty),*) => {{
        let arr = $arr;
        $(
            if let Ok(a) = arr.extract::<numpy::PyReadonlyArrayDyn<'_, $t>>() {
                let v: Vec<$t> = match a.as_slice() {
                    Ok(s) => s.to_vec(),
                    Err(_) => a.as_array().iter().copied().collect(),
                };
                return Ok(FeedValues::from(v));
            }
        )*
    }};
}

/// The values of a numpy array of one of the builder's element types (the Python half
/// has already converted it: `tfreq._convert`). A C-contiguous array is copied once, as
/// one block, into the request (the request keeps its own values, as the SDK's does).
fn values_of_array(arr: &Bound<'_, PyAny>) -> PyResult<FeedValues> {
    array_values!(
        arr,
        f32,
        f64,
        i8,
        u8,
        i16,
        u16,
        i32,
        i64,
        u32,
        u64,
        bool,
        half::f16
    );
    if let Ok(a) = arr.extract::<numpy::PyReadonlyArrayDyn<'_, numpy::Complex32>>() {
        let v: Vec<_> = a
            .as_array()
            .iter()
            .map(|c| tfreq::Complex::new(c.re, c.im))
            .collect();
        return Ok(FeedValues::C64(v));
    }
    if let Ok(a) = arr.extract::<numpy::PyReadonlyArrayDyn<'_, numpy::Complex64>>() {
        let v: Vec<_> = a
            .as_array()
            .iter()
            .map(|c| tfreq::Complex::new(c.re, c.im))
            .collect();
        return Ok(FeedValues::C128(v));
    }
    Err(PyTypeError::new_err(format!(
        "an array of {} cannot be a feed",
        arr.getattr("dtype")?.str()?
    )))
}

#[pymethods]
impl Builder {
    #[new]
    #[pyo3(signature = (signature_name, wire = "eas"))]
    fn new(signature_name: String, wire: &str) -> PyResult<Self> {
        let wire = wire_of(wire)?;
        Ok(Builder {
            req: TFRequest::for_wire(signature_name, wire),
        })
    }

    /// Adds a feed from a numpy array already of the builder's element type.
    fn add_array(
        &mut self,
        name: String,
        shape: Vec<i64>,
        dtype: i32,
        array: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let d = dtype_of(dtype)?;
        let v = match (d, values_of_array(array)?) {
            // bfloat16 from float32, rounded to nearest as TensorFlow's and ml_dtypes'
            // conversions do.
            (DType::BFloat16, FeedValues::F32(v)) => FeedValues::BF16(narrow(
                &name,
                d,
                v.into_iter().map(f64::from).collect(),
                half::bf16::from_f64,
                |_, y| y.is_infinite(),
            )?),
            (_, v) => v,
        };
        self.add(name, &shape, d, v)
    }

    /// Adds a feed of floats (`kind` "f32", "f64", "f16", "bf16"), ints ("i64", "u64"),
    /// bools, strings or complex numbers ("c64", "c128"), already checked and converted
    /// by the Python half (`tfreq._convert`).
    fn add_list(
        &mut self,
        name: String,
        shape: Vec<i64>,
        dtype: i32,
        kind: &str,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let d = dtype_of(dtype)?;
        let v = match kind {
            // Protobuf's float check (python/google/protobuf/internal/type_checkers.py,
            // FloatValueChecker) writes inf for anything beyond FLT_MAX, even what
            // rounds to it: refused.
            "f32" => FeedValues::F32(narrow(
                &name,
                d,
                values.extract()?,
                |x| x as f32,
                |x, _| x.abs() > f64::from(f32::MAX),
            )?),
            "f64" => FeedValues::F64(values.extract()?),
            "f16" => FeedValues::F16(narrow(
                &name,
                d,
                values.extract()?,
                half::f16::from_f64,
                |_, y| y.is_infinite(),
            )?),
            "bf16" => FeedValues::BF16(narrow(
                &name,
                d,
                values.extract()?,
                half::bf16::from_f64,
                |_, y| y.is_infinite(),
            )?),
            "i64" => FeedValues::I64(values.extract()?),
            "u64" => FeedValues::U64(values.extract()?),
            "bool" => FeedValues::Bool(values.extract()?),
            "bytes" => FeedValues::Str(
                values
                    .extract::<Vec<Vec<u8>>>()?
                    .into_iter()
                    .map(Bytes::from)
                    .collect(),
            ),
            "c64" => FeedValues::C64(
                values
                    .extract::<Vec<(f32, f32)>>()?
                    .into_iter()
                    .map(|(re, im)| tfreq::Complex::new(re, im))
                    .collect(),
            ),
            "c128" => FeedValues::C128(
                values
                    .extract::<Vec<(f64, f64)>>()?
                    .into_iter()
                    .map(|(re, im)| tfreq::Complex::new(re, im))
                    .collect(),
            ),
            k => return Err(PyValueError::new_err(format!("unknown value kind {k:?}"))),
        };
        self.add(name, &shape, d, v)
    }

    fn add_fetch(&mut self, name: String) {
        self.req.add_fetch(name);
    }

    fn set_signature_name(&mut self, name: String) {
        self.req.set_signature_name(name);
    }

    fn feed_names(&self) -> Vec<String> {
        self.req
            .message()
            .tensors
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    fn fetches(&self) -> Vec<String> {
        self.req.message().fetches.clone()
    }

    /// The request in the builder's wire format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let req = &self.req;
        let b = py.detach(|| req.to_bytes()).map_err(build_err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// A TF Serving `PredictRequest` for `model_name`.
    fn to_tf_serving_bytes<'py>(
        &self,
        py: Python<'py>,
        model_name: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let req = &self.req;
        let b = py
            .detach(|| req.to_tf_serving_bytes(model_name))
            .map_err(build_err)?;
        Ok(PyBytes::new(py, &b))
    }
}

/// Python floats (doubles) rounded to a narrower float type, to nearest; a finite value
/// `beyond` the type (for float32, past FLT_MAX, which the SDK writes as `inf`; for the
/// 16-bit types, one that would round to infinity) is refused.
fn narrow<T>(
    name: &str,
    d: DType,
    v: Vec<f64>,
    round: impl Fn(f64) -> T,
    beyond: impl Fn(f64, &T) -> bool,
) -> PyResult<Vec<T>> {
    let mut out = Vec::with_capacity(v.len());
    for (i, x) in v.into_iter().enumerate() {
        let y = round(x);
        if x.is_finite() && beyond(x, &y) {
            return Err(PyValueError::new_err(format!(
                "feed {name:?}: value {i} is {x:e}, beyond the largest {d}; it would become infinity"
            )));
        }
        out.push(y);
    }
    Ok(out)
}

impl Builder {
    fn add(&mut self, name: String, shape: &[i64], d: DType, v: FeedValues) -> PyResult<()> {
        self.req.add_feed(name, shape, d, v).map_err(build_err)?;
        Ok(())
    }
}

/// What tfreq notices, as the command's JSON has it, as Python objects.
pub(crate) fn findings_list<'py>(
    py: Python<'py>,
    findings: &[tfreq::analysis::Finding],
) -> PyResult<Bound<'py, PyList>> {
    let json = serde_json::to_string(findings).map_err(|e| Error::new_err(e.to_string()))?;
    let v = py.import("json")?.call_method1("loads", (json,))?;
    Ok(v.cast_into::<PyList>()?)
}

fn wire_of(w: &str) -> PyResult<WireFormat> {
    match w {
        "eas" => Ok(WireFormat::Eas),
        "tf-serving" => Ok(WireFormat::TfServing),
        _ => Err(PyValueError::new_err(format!(
            "unknown wire format {w:?} (eas, tf-serving)"
        ))),
    }
}

/// Decodes one request or response, the wire format and kind detected as the CLI does,
/// unless given.
#[pyfunction]
#[pyo3(signature = (data, wire = None, kind = None))]
fn decode<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyBytes>,
    wire: Option<&str>,
    kind: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let b = bytes_of(data);
    let opts = tfreq::DecodeOptions {
        wire: wire.map(wire_of).transpose()?,
        kind: match kind {
            None => None,
            Some("request") => Some(tfreq::Kind::Request),
            Some("response") => Some(tfreq::Kind::Response),
            Some(k) => {
                return Err(PyValueError::new_err(format!(
                    "unknown kind {k:?} (request, response)"
                )));
            }
        },
        ..Default::default()
    };
    let msg = if b.is_empty() && opts.kind.is_some() {
        // The empty message: every field absent (what a builder with nothing added
        // writes).
        let mut m = tfreq::Message::new(opts.wire.unwrap_or(WireFormat::Eas), tfreq::Kind::Request);
        m.kind = opts.kind.unwrap_or(tfreq::Kind::Request);
        m
    } else {
        // Detection's result without its account of every reading (src/decode/mod.rs).
        py.detach(|| tfreq::decode_message(b.clone(), opts))
            .map_err(|e| to_py(py, e))?
    };
    let name = decoded::text_name(&msg);
    decoded::message_dict(py, msg, b, Some(name), decoded::base_of(data), "")
}

/// The entries of a file's bytes (bare message, TFRecord warm-up or log, text format,
/// gzip or zlib of one), read one at a time: an iterator of dicts as [`decode`] gives,
/// each with its label. `max_size` caps the input, inflated or not, and each message, as
/// the command's `--max-size` does. `path` is the file's, when it was read from one.
#[pyfunction]
#[pyo3(signature = (data, max_size = tfreq::DEFAULT_MAX_SIZE, path = None))]
fn read(
    py: Python<'_>,
    data: &Bound<'_, PyBytes>,
    max_size: u64,
    path: Option<&str>,
) -> PyResult<decoded::Records> {
    let b = bytes_of(data);
    if b.len() as u64 > max_size {
        return Err(DecodeError::new_err(format!(
            "the input is {} bytes, beyond the limit of {max_size} bytes (max_size)",
            b.len()
        )));
    }
    // A file's name and place say what it may be (`*.txt`: an EAS text warm-up).
    let mut opts = tfreq::formats::InputOptions::new().max_size(max_size);
    if let Some(p) = path {
        opts = opts.for_path(std::path::Path::new(p));
    }
    let entries = py
        .detach(|| {
            // A gzip or zlib log is read inflated, up to `max_size` (its values are then
            // copies, not views of `data`).
            let (b, _) = tfreq::formats::inflated(b, max_size)?;
            tfreq::formats::read(b, &opts)
        })
        .map_err(|e| to_py(py, e))?;
    Ok(decoded::Records::new(entries, decoded::base_of(data)))
}

fn messages(py: Python<'_>, list: &Bound<'_, PyList>) -> PyResult<Vec<tfreq::Message>> {
    let mut out = Vec::new();
    for item in list.iter() {
        let b = item.cast::<PyBytes>()?;
        let records = tfreq::formats::read(bytes_of(b), &Default::default())
            .and_then(|e| e.into_records())
            .map_err(|e| to_py(py, e))?;
        out.extend(records.into_iter().map(|r| r.message));
    }
    Ok(out)
}

/// `diff` of production requests against warm-up requests: the report as JSON text.
#[pyfunction]
#[pyo3(signature = (warmup, production, strict_shapes = false))]
fn diff_json(
    py: Python<'_>,
    warmup: &Bound<'_, PyList>,
    production: &Bound<'_, PyList>,
    strict_shapes: bool,
) -> PyResult<String> {
    let w = messages(py, warmup)?;
    let p = messages(py, production)?;
    if w.is_empty() {
        return Err(PyValueError::new_err("no warm-up request"));
    }
    py.detach(|| {
        let opts = tfreq::analysis::DiffOptions {
            strict_shapes,
            model: None,
        };
        let mut reports: Vec<tfreq::analysis::Report> = p
            .iter()
            .map(|m| tfreq::analysis::diff(&w, m, &opts))
            .collect();
        let mut first = reports
            .drain(..1.min(reports.len()))
            .next()
            .unwrap_or_else(|| tfreq::analysis::diff(&w, &w[0], &opts));
        for r in reports {
            first.requests.extend(r.requests);
        }
        first.summarise();
        Ok(tfreq::render::to_json(&first))
    })
}

/// `check` of requests against a model (a SavedModel directory, GetModelMetadata JSON
/// or `saved_model_cli show --all` text): the report as JSON text.
#[pyfunction]
#[pyo3(signature = (requests, model, signature = None))]
fn check_json(
    py: Python<'_>,
    requests: &Bound<'_, PyList>,
    model: &str,
    signature: Option<String>,
) -> PyResult<String> {
    let msgs = messages(py, requests)?;
    let (sigs, _) =
        tfreq::formats::read_model(model.as_ref()).map_err(|e| to_py(py, tfreq::Error::from(e)))?;
    let opts = tfreq::analysis::CheckOptions {
        signature,
        ..Default::default()
    };
    let labels: Vec<String> = (0..msgs.len()).map(|i| format!("request {i}")).collect();
    let labeled: Vec<tfreq::analysis::Labeled> = msgs
        .iter()
        .zip(&labels)
        .map(|(m, l)| tfreq::analysis::Labeled::new(l, l, m))
        .collect();
    let report = tfreq::analysis::check_labeled(&labeled, &sigs, &opts);
    Ok(tfreq::render::to_json(&report))
}

/// The executor key of one request: `(signature, feeds, fetches, fetch_all)` with the
/// names sorted, a plain tuple (hashable, picklable).
#[pyfunction]
fn executor_key<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyTuple>> {
    let msg =
        tfreq::decode_message(bytes_of(data), Default::default()).map_err(|e| to_py(py, e))?;
    let k = tfreq::analysis::ExecutorKey::of(&msg);
    let feeds = PyTuple::new(py, k.feeds.iter())?;
    let fetches = PyTuple::new(py, k.fetches.iter())?;
    (k.signature, feeds, fetches, k.fetch_all).into_pyobject(py)
}

/// Runs the `tfreq` command with `argv` (the program name first) and returns its exit
/// status. `SIGINT` is given back to its default for the run (CPython's own handler
/// would only raise `KeyboardInterrupt` after the command returned), so Ctrl-C stops it,
/// and put back after; CPython already ignores `SIGPIPE`, as Rust programs do, and a
/// closed pipe ends the command quietly.
///
/// The command installs no signal handler of its own and maps no input (a SIGBUS
/// handler would outlive the call) unless `own_process` is true: the `tfreq` command of
/// the package (`tfreq/_cli.py`), whose process ends with the command, passes it, so
/// Ctrl-C removes temporary outputs and stops `load` and `record` cleanly, as the Rust
/// binary does.
#[pyfunction]
#[pyo3(signature = (argv, own_process = false))]
fn run_cli(py: Python<'_>, argv: Vec<String>, own_process: bool) -> i32 {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default is async-signal-safe and
    // affects only how SIGINT is delivered from now on.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    let args: Vec<OsString> = argv.into_iter().map(OsString::from).collect();
    let process = if own_process {
        tfreq_cli::Process::owned()
    } else {
        tfreq_cli::Process::embedded()
    };
    let code = py.detach(|| tfreq_cli::run(args, process));
    #[cfg(unix)]
    // SAFETY: puts back the handler that was there before the run.
    unsafe {
        libc::signal(libc::SIGINT, previous);
    }
    exit_status(code)
}

/// The number behind an `ExitCode` (its `Debug` is `ExitCode(unix_exit_status(N))`).
fn exit_status(code: std::process::ExitCode) -> i32 {
    if code == std::process::ExitCode::SUCCESS {
        return 0;
    }
    for n in 1..=255u8 {
        if code == std::process::ExitCode::from(n) {
            return n as i32;
        }
    }
    1
}

/// The `keys` summary (JSON text, schema 1) of local files, counted as `tfreq keys
/// --format json` counts them (in path order, on every core).
#[pyfunction]
fn summarize_paths(py: Python<'_>, paths: Vec<String>) -> PyResult<String> {
    let mut paths = paths;
    paths.sort();
    let cov = py.detach(|| {
        let p: Vec<&std::path::Path> = paths.iter().map(std::path::Path::new).collect();
        tfreq::scan::count(&p, &Default::default(), false).counts
    });
    Ok(tfreq::analysis::Summary::of(&cov).to_json())
}

/// A Python file object (anything with `read(n)`) as a reader, for the stream counter.
struct PyReader(Py<PyAny>);

impl std::io::Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Python::attach(|py| {
            let chunk = self
                .0
                .bind(py)
                .call_method1("read", (buf.len(),))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let b = chunk
                .cast::<PyBytes>()
                .map_err(|e| std::io::Error::other(e.to_string()))?
                .as_bytes();
            let n = b.len().min(buf.len());
            buf[..n].copy_from_slice(&b[..n]);
            Ok(n)
        })
    }
}

/// The `keys` summary (JSON text) of one input read from a Python file object
/// (`read(n)` returning bytes), named `name`: a gzip or plain TFRecord log is streamed
/// in constant memory. For files Beam opens from object stores.
#[pyfunction]
fn summarize_reader(py: Python<'_>, name: String, reader: Py<PyAny>) -> PyResult<String> {
    let r = PyReader(reader);
    let opts = tfreq::formats::InputOptions::new();
    let cov = py.detach(|| tfreq::scan::count_reader(r, &name, &opts));
    let cov = match cov {
        Ok(c) => c,
        Err(e) => {
            // An unreadable file is named in the summary, as `tfreq keys` names it.
            let mut c = tfreq::analysis::KeyCounts::default();
            c.unreadable.push(tfreq::analysis::Unreadable {
                file: name.clone(),
                error: e.message_without(&name),
            });
            c
        }
    };
    Ok(tfreq::analysis::Summary::of(&cov).to_json())
}

/// Merges `keys` summaries (JSON texts) into one, as `tfreq keys merge` does.
#[pyfunction]
fn merge_summaries(py: Python<'_>, summaries: Vec<String>) -> PyResult<String> {
    let mut merged = tfreq::analysis::Summary::empty();
    for s in &summaries {
        let one = tfreq::analysis::Summary::from_json(s).map_err(|e| to_py(py, e))?;
        merged.try_merge(one).map_err(|e| to_py(py, e))?;
    }
    Ok(merged.to_json())
}

// The named tuples of `tfreq.results` the decoded messages hold.
mod results;

#[pymodule]
fn _tfreq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", m.py().get_type::<Error>())?;
    m.add("DecodeError", m.py().get_type::<DecodeError>())?;
    m.add_class::<Builder>()?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(diff_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(executor_key, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_paths, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_reader, m)?)?;
    m.add_function(wrap_pyfunction!(merge_summaries, m)?)?;
    Ok(())
}
