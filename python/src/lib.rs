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

// The command line, compiled from the same files as the `tfreq` binary.
#[allow(dead_code)]
#[path = "../../src/bin/tfreq/main.rs"]
mod cli;
// `crate::common` and friends, as the command's files name them.
#[cfg(feature = "net")]
#[allow(unused_imports)]
use cli::live;
#[allow(unused_imports)]
use cli::{args, batch, common, input, output, report, sigbus};

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
        C::Decode | C::Unrecognised | C::Container | C::Limit => DecodeError::new_err(msg),
        C::Build => PyValueError::new_err(msg),
        _ => Error::new_err(msg),
    };
    let v = err.value(py);
    let _ = v.setattr("offset", e.offset());
    let _ = v.setattr("field_path", e.field_path());
    let _ = v.setattr("record", e.record());
    let _ = v.setattr("file", e.file());
    err
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
                |y| y.is_infinite(),
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
            "f32" => FeedValues::F32(narrow(
                &name,
                d,
                values.extract()?,
                |x| x as f32,
                |y| y.is_infinite(),
            )?),
            "f64" => FeedValues::F64(values.extract()?),
            "f16" => FeedValues::F16(narrow(
                &name,
                d,
                values.extract()?,
                half::f16::from_f64,
                |y| y.is_infinite(),
            )?),
            "bf16" => FeedValues::BF16(narrow(
                &name,
                d,
                values.extract()?,
                half::bf16::from_f64,
                |y| y.is_infinite(),
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

/// Python floats (doubles) rounded to a narrower float type, to nearest as protobuf
/// does; a finite value that would become infinity is refused (the SDK writes `inf`).
fn narrow<T>(
    name: &str,
    d: DType,
    v: Vec<f64>,
    round: impl Fn(f64) -> T,
    is_inf: impl Fn(&T) -> bool,
) -> PyResult<Vec<T>> {
    let mut out = Vec::with_capacity(v.len());
    for (i, x) in v.into_iter().enumerate() {
        let y = round(x);
        if x.is_finite() && is_inf(&y) {
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

/// numpy's name for the element type tfreq hands back for a dtype (`"<f4"`), or `None`
/// for strings and the types numpy has no type for (handed back as Python objects).
fn numpy_type(d: DType) -> Option<&'static str> {
    use DType as D;
    Some(match d {
        D::Float => "<f4",
        D::Double => "<f8",
        D::Int32 | D::QInt32 => "<i4",
        D::UInt8 | D::QUInt8 => "|u1",
        D::Int16 | D::QInt16 => "<i2",
        D::Int8 | D::QInt8 => "|i1",
        D::Complex64 => "<c8",
        D::Complex128 => "<c16",
        D::Int64 => "<i8",
        D::Bool => "|b1",
        D::UInt16 | D::QUInt16 => "<u2",
        D::Half => "<f2",
        D::UInt32 => "<u4",
        D::UInt64 => "<u8",
        // bfloat16 and the 8- and 4-bit floats: float32 values (exact), unless the
        // Python half finds ml_dtypes and casts.
        _ if d.info().size.is_some() => return None,
        _ => return None,
    })
}

/// Appends element `s` to `out` as numpy type `ty` (little-endian).
fn put_scalar(out: &mut Vec<u8>, ty: &str, s: &tfreq::Scalar) {
    use tfreq::Scalar as S;
    let as_i64 = |s: &S| match s {
        S::I64(v) => *v,
        S::U64(v) => *v as i64,
        S::Bool(b) => *b as i64,
        _ => 0,
    };
    match ty {
        "<f4" => out.extend_from_slice(&scalar_f64(s).map_or(0.0, |x| x as f32).to_le_bytes()),
        "<f8" => out.extend_from_slice(&scalar_f64(s).unwrap_or(0.0).to_le_bytes()),
        "<f2" => {
            let h = match s {
                S::F16(h) => *h,
                other => half::f16::from_f64(scalar_f64(other).unwrap_or(0.0)),
            };
            out.extend_from_slice(&h.to_le_bytes())
        }
        "<c8" => {
            let (re, im) = match s {
                S::C64(re, im) => (*re, *im),
                S::C128(re, im) => (*re as f32, *im as f32),
                _ => (0.0, 0.0),
            };
            out.extend_from_slice(&re.to_le_bytes());
            out.extend_from_slice(&im.to_le_bytes());
        }
        "<c16" => {
            let (re, im) = match s {
                S::C128(re, im) => (*re, *im),
                S::C64(re, im) => (*re as f64, *im as f64),
                _ => (0.0, 0.0),
            };
            out.extend_from_slice(&re.to_le_bytes());
            out.extend_from_slice(&im.to_le_bytes());
        }
        "|b1" => out.push(matches!(s, S::Bool(true)) as u8),
        "|i1" | "|u1" => out.push(as_i64(s) as u8),
        "<i2" | "<u2" => out.extend_from_slice(&(as_i64(s) as u16).to_le_bytes()),
        "<i4" | "<u4" => out.extend_from_slice(&(as_i64(s) as u32).to_le_bytes()),
        _ => out.extend_from_slice(&(as_i64(s) as u64).to_le_bytes()),
    }
}

fn scalar_f64(s: &tfreq::Scalar) -> Option<f64> {
    use tfreq::Scalar as S;
    Some(match s {
        S::F32(v) => *v as f64,
        S::F64(v) => *v,
        S::F16(v) => v.to_f64(),
        S::BF16(v) => v.to_f64(),
        S::I64(v) => *v as f64,
        S::U64(v) => *v as f64,
        S::Bool(b) => *b as u8 as f64,
        _ => return None,
    })
}

/// One tensor for the Python half: `(name, dtype number, dtype name, shape, numpy
/// type, data)` where data is `("view", offset, count)` into the input `bytes` (no copy:
/// the stored run is exactly the tensor, little-endian, of the numpy type),
/// `("bytes", b)` (little-endian values made here) or `("list", [...])` (strings, and
/// dtypes numpy has no type for, as Python values).
fn tensor_tuple<'py>(
    py: Python<'py>,
    t: &tfreq::Tensor,
    wire: WireFormat,
    base: &[u8],
) -> PyResult<Bound<'py, PyTuple>> {
    let e = t.elements(wire);
    let dtype = t.dtype.dtype();
    let ty = dtype.and_then(numpy_type);
    let shape: Vec<i64> = t.shape.sizes();
    let n = t.shape.num_elements().unwrap_or(0) as usize;
    let data: Bound<'py, PyAny> = match (ty, e.fill, e.stored_run()) {
        (Some(ty), tfreq::Fill::Exact, Some((tfreq::RawRun::Le, run)))
            if run.len() == n * elem_size(ty) =>
        {
            let start = run.as_ptr() as usize;
            let b = base.as_ptr() as usize;
            if start >= b && start + run.len() <= b + base.len() {
                ("view", start - b, n).into_pyobject(py)?.into_any()
            } else {
                ("bytes", PyBytes::new(py, run))
                    .into_pyobject(py)?
                    .into_any()
            }
        }
        (Some(ty), fill, _) => {
            if matches!(fill, tfreq::Fill::BadShape | tfreq::Fill::BadContent) {
                return Err(DecodeError::new_err(format!(
                    "tensor {}: its values cannot be read as TensorFlow reads them ({fill:?})",
                    tfreq::escape::escape(&t.name)
                )));
            }
            let mut out = Vec::with_capacity(n * elem_size(ty));
            for i in 0..n {
                match e.get(i) {
                    Some(s) => put_scalar(&mut out, ty, &s),
                    None => put_scalar(&mut out, ty, &tfreq::Scalar::I64(0)),
                }
            }
            ("bytes", PyBytes::new(py, &out))
                .into_pyobject(py)?
                .into_any()
        }
        (None, _, _) => {
            let list = PyList::empty(py);
            for i in 0..n {
                let v: Bound<'py, PyAny> = match e.get(i) {
                    Some(tfreq::Scalar::Bytes(b)) => PyBytes::new(py, &b).into_any(),
                    Some(s) => match scalar_f64(&s) {
                        Some(f) => f.into_pyobject(py)?.into_any(),
                        None => py.None().into_bound(py),
                    },
                    None => py.None().into_bound(py),
                };
                list.append(v)?;
            }
            ("list", list).into_pyobject(py)?.into_any()
        }
    };
    let dname = t.dtype.to_string();
    (t.name.clone(), t.dtype.0, dname, shape, ty, data).into_pyobject(py)
}

fn elem_size(ty: &str) -> usize {
    match ty {
        "|b1" | "|i1" | "|u1" => 1,
        "<i2" | "<u2" | "<f2" => 2,
        "<i4" | "<u4" | "<f4" => 4,
        "<c16" => 16,
        _ => 8,
    }
}

fn findings_list<'py>(
    py: Python<'py>,
    findings: &[tfreq::analysis::Finding],
) -> PyResult<Bound<'py, PyList>> {
    let json = serde_json::to_string(findings).map_err(|e| Error::new_err(e.to_string()))?;
    let v = py.import("json")?.call_method1("loads", (json,))?;
    Ok(v.cast_into::<PyList>()?)
}

/// The decoded message as a dict for the Python half (`tfreq.Message` wraps it).
fn message_dict<'py>(
    py: Python<'py>,
    msg: &tfreq::Message,
    base: &[u8],
    label: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("label", label)?;
    d.set_item(
        "wire",
        match msg.wire {
            WireFormat::Eas => "eas",
            _ => "tf-serving",
        },
    )?;
    d.set_item(
        "kind",
        match msg.kind {
            tfreq::Kind::Request => "request",
            _ => "response",
        },
    )?;
    d.set_item("signature_name", &msg.signature_name)?;
    d.set_item("fetches", msg.fetches.clone())?;
    d.set_item(
        "model_spec",
        msg.model_spec.as_ref().map(|m| {
            (
                m.name.clone(),
                m.version,
                m.version_label.clone(),
                m.signature_name.clone(),
            )
        }),
    )?;
    let tensors = PyList::empty(py);
    for t in &msg.tensors {
        tensors.append(tensor_tuple(py, t, msg.wire, base)?)?;
    }
    d.set_item("tensors", tensors)?;
    // TF Serving's tf.Example requests: their method, tasks and examples (each example
    // a dict of feature name to (kind, values)).
    d.set_item("method", msg.method.as_str())?;
    let example = |e: &tfreq::Example| -> PyResult<Bound<'py, PyDict>> {
        let fd = PyDict::new(py);
        for f in &e.features {
            let values = PyList::empty(py);
            match &f.values {
                tfreq::FeatureValues::None => {}
                tfreq::FeatureValues::Bytes(v) => {
                    for b in v {
                        values.append(PyBytes::new(py, b))?;
                    }
                }
                tfreq::FeatureValues::Float(v) => {
                    for x in v {
                        values.append(f64::from(*x))?;
                    }
                }
                tfreq::FeatureValues::Int64(v) => {
                    for x in v {
                        values.append(*x)?;
                    }
                }
            }
            fd.set_item(&f.name, (f.values.kind(), values))?;
        }
        Ok(fd)
    };
    match &msg.input {
        Some(i) => {
            let input = PyDict::new(py);
            input.set_item(
                "list",
                if i.with_context {
                    "example_list_with_context"
                } else {
                    "example_list"
                },
            )?;
            let examples = PyList::empty(py);
            for e in &i.examples {
                examples.append(example(e)?)?;
            }
            input.set_item("examples", examples)?;
            input.set_item("context", i.context.as_ref().map(&example).transpose()?)?;
            d.set_item("input", input)?;
        }
        None => d.set_item("input", py.None())?,
    }
    let tasks = PyList::empty(py);
    for t in &msg.tasks {
        tasks.append((
            t.method_name.clone(),
            t.model_spec.as_ref().map(|s| s.signature_name.clone()),
        ))?;
    }
    d.set_item("tasks", tasks)?;
    let findings = tfreq::analysis::lint(msg);
    d.set_item("findings", findings_list(py, &findings)?)?;
    Ok(d)
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
    let base = data.as_bytes();
    let opts = tfreq::DecodeOptions {
        wire: wire.map(wire_of).transpose()?,
        kind: match kind {
            None => None,
            Some("request") => Some(tfreq::Kind::Request),
            Some("response") => Some(tfreq::Kind::Response),
            Some(k) => {
                return Err(PyValueError::new_err(format!(
                    "unknown kind {k:?} (request, response)"
                )))
            }
        },
        ..Default::default()
    };
    let msg = py
        .detach(|| tfreq::decode_with(b, opts).map(|(m, _)| m))
        .map_err(|e| to_py(py, e))?;
    message_dict(py, &msg, base, "")
}

/// Reads every request or response of a file's bytes (bare message, TFRecord warm-up
/// or log, text format): a list of dicts as [`decode`] gives, each with its label.
#[pyfunction]
fn read<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyList>> {
    let b = bytes_of(data);
    let base = data.as_bytes();
    let records = py
        .detach(|| {
            // A gzip or zlib log is read inflated (its values are then copies, not views
            // of `data`).
            let b = match tfreq::formats::compression::detect(&b, tfreq::io::DEFAULT_MAX_SIZE)? {
                Some((_, v)) => Bytes::from(v),
                None => b,
            };
            tfreq::formats::read(b, &Default::default()).and_then(|e| e.into_records())
        })
        .map_err(|e| to_py(py, e))?;
    let out = PyList::empty(py);
    for r in &records {
        out.append(message_dict(py, &r.message, base, &r.label)?)?;
    }
    Ok(out)
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
        let mut reports: Vec<tfreq::analysis::report::Report> = p
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
        Ok(tfreq::render::report::to_json(&first))
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
    let (sigs, _) = tfreq::formats::savedmodel::read_model(model.as_ref())
        .map_err(|e| to_py(py, tfreq::Error::from(e)))?;
    let opts = tfreq::analysis::CheckOptions {
        signature,
        ..Default::default()
    };
    let labels: Vec<String> = (0..msgs.len()).map(|i| format!("request {i}")).collect();
    let labeled: Vec<tfreq::analysis::report::Labeled> = msgs
        .iter()
        .zip(&labels)
        .map(|(m, l)| tfreq::analysis::report::Labeled::new(l, l, m))
        .collect();
    let report = tfreq::analysis::check_labeled(&labeled, &sigs, &opts);
    Ok(tfreq::render::report::to_json(&report))
}

/// The executor key of one request: `(signature, feeds, fetches, fetch_all)` with the
/// names sorted, a plain tuple (hashable, picklable).
#[pyfunction]
fn executor_key<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyTuple>> {
    let msg = tfreq::decode_with(bytes_of(data), Default::default())
        .map(|(m, _)| m)
        .map_err(|e| to_py(py, e))?;
    let k = tfreq::analysis::key::ExecutorKey::of(&msg);
    let feeds = PyTuple::new(py, k.feeds.iter())?;
    let fetches = PyTuple::new(py, k.fetches.iter())?;
    (k.signature, feeds, fetches, k.fetch_all).into_pyobject(py)
}

/// Runs the `tfreq` command with `argv` (the program name first) and returns its exit
/// status. `SIGINT` is given back to its default for the run (CPython's own handler
/// would only raise `KeyboardInterrupt` after the command returned), so Ctrl-C stops it
/// and the command's own handler removes temporary outputs; CPython already ignores
/// `SIGPIPE`, as Rust programs do, and a closed pipe ends the command quietly.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default is async-signal-safe and
    // affects only how SIGINT is delivered from now on.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_DFL) };
    let args: Vec<OsString> = argv.into_iter().map(OsString::from).collect();
    let code = py.detach(|| cli::run(args));
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
    Ok(tfreq::analysis::summary::Summary::of(&cov).to_json())
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
            let mut c = tfreq::analysis::coverage::KeyCounts::default();
            c.unreadable.push(tfreq::analysis::report::Unreadable {
                file: name.clone(),
                error: e.message_without(&name),
            });
            c
        }
    };
    Ok(tfreq::analysis::summary::Summary::of(&cov).to_json())
}

/// Merges `keys` summaries (JSON texts) into one, as `tfreq keys merge` does.
#[pyfunction]
fn merge_summaries(py: Python<'_>, summaries: Vec<String>) -> PyResult<String> {
    let mut merged = tfreq::analysis::summary::Summary::empty();
    for s in &summaries {
        let one = tfreq::analysis::summary::Summary::from_json(s).map_err(|e| to_py(py, e))?;
        merged.merge(one);
    }
    Ok(merged.to_json())
}

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
