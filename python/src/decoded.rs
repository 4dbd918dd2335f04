//! Decoded messages for the Python half: what a message says (names, dtypes, shapes) as a
//! dict at once, and its values only when asked for — never at decode, and never past a
//! byte limit the caller gives. A request of a few bytes can declare a tensor of 2^40
//! elements (TensorFlow fills it from the last stored value, or zeros:
//! <https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/framework/tensor.cc>);
//! making its values is refused with `MemoryError` instead of aborting the process.

use std::sync::Mutex;

use bytes::Bytes;
use pyo3::exceptions::{PyIndexError, PyMemoryError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyComplex, PyDict, PyList, PyTuple};

use tfreq::formats::{ContainerKind, Content, Entries};
use tfreq::{DType, Fill, Kind, Message, RawRun, Scalar, WireFormat};

use crate::{to_py, DecodeError, Error};

/// Bytes a Python object of a list is counted as, beside its 8-byte list slot (a float
/// is 24 bytes, a short `bytes` about 40): the limit on lists is an estimate.
const OBJECT_BYTES: u64 = 48;

/// One decoded message, kept for the Python half (`tfreq.Message` holds it as `_src`).
#[pyclass(module = "tfreq._tfreq", frozen)]
pub(crate) struct Decoded {
    msg: Message,
    /// The message's own bytes (its text format is printed from them).
    bytes: Bytes,
    /// The protobuf message its bytes are, for the text format (`None`: a text line).
    text_name: Option<&'static str>,
    /// Address and length of the caller's `bytes` object, which the Python `Message`
    /// keeps alive: stored runs inside it are handed back as views.
    base: (usize, usize),
}

#[pymethods]
impl Decoded {
    /// The values of tensor `i` as TensorFlow builds the tensor (the stored values, the
    /// last one repeated, or defaults): `("view", offset, count)` into the caller's bytes
    /// (no copy), `("bytes", b)` little-endian values of the numpy type, or
    /// `("list", [...])` (strings, and dtypes numpy has no type for). `MemoryError` when
    /// making them would take more than `max_bytes`; a view is never refused (it takes
    /// no memory).
    fn array<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        max_bytes: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.tensor(i)?;
        let e = t.elements(self.msg.wire);
        let Some(ty) = t.dtype.dtype().and_then(numpy_type) else {
            return self.object_list(py, t, &e, max_bytes);
        };
        if matches!(e.fill, Fill::BadShape | Fill::BadContent) {
            return Err(DecodeError::new_err(format!(
                "tensor {}: its values cannot be read as TensorFlow reads them ({:?})",
                tfreq::escape::escape(&t.name),
                e.fill
            )));
        }
        let n = e.expected.unwrap_or(0);
        let size = elem_size(ty);
        let total = n.checked_mul(size as u64);
        if let (Fill::Exact, Some((RawRun::Le, run))) = (e.fill, e.stored_run()) {
            if Some(run.len() as u64) == total {
                let start = run.as_ptr() as usize;
                let (b, len) = self.base;
                if start >= b && start + run.len() <= b + len {
                    return ("view", start - b, n).into_pyobject(py);
                }
                check_limit(t, n, total, max_bytes, "as an array")?;
                return ("bytes", PyBytes::new(py, run)).into_pyobject(py);
            }
        }
        let total = check_limit(t, n, total, max_bytes, "as an array")?;
        let total = usize::try_from(total).map_err(|_| limit_error(t, n, None, max_bytes, ""))?;
        let n = total / size;
        let direct = e.stored.min(n);
        let zero = Scalar::I64(0);
        let data = PyBytes::new_with(py, total, |buf| {
            let mut one = Vec::with_capacity(16);
            let mut put = |k: usize, buf: &mut [u8]| {
                one.clear();
                put_scalar(&mut one, ty, &e.get(k).unwrap_or_else(|| zero.clone()));
                buf[k * size..(k + 1) * size].copy_from_slice(&one);
            };
            for k in 0..direct {
                put(k, buf);
            }
            if direct < n {
                // The rest is one value (the last stored, or the default): written once,
                // then doubled.
                put(direct, buf);
                let start = direct * size;
                let mut filled = start + size;
                while filled < total {
                    let m = (filled - start).min(total - filled);
                    buf.copy_within(start..start + m, filled);
                    filled += m;
                }
            }
            Ok(())
        })?;
        ("bytes", data).into_pyobject(py)
    }

    /// The stored values of tensor `i` as Python objects, as the EAS SDK's
    /// `TFResponse.get_values` gives them (the values field, no fill): floats, ints,
    /// bools, bytes or complex numbers. `MemoryError` past `max_bytes` (estimated).
    fn values<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        max_bytes: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        let t = self.tensor(i)?;
        let e = t.elements(self.msg.wire);
        let n = e.stored as u64;
        check_limit(
            t,
            n,
            n.checked_mul(8 + OBJECT_BYTES),
            max_bytes,
            "as a list",
        )?;
        let list = PyList::empty(py);
        for k in 0..e.stored {
            list.append(stored_object(py, e.stored_get(k))?)?;
        }
        Ok(list)
    }

    /// What tfreq notices about the message, as the command's JSON has it.
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::findings_list(py, &tfreq::analysis::lint(&self.msg))
    }

    /// The message in protobuf text format, as the EAS SDK's `print` writes it
    /// (Python's `text_format`); `None` for what is no message (a text line).
    fn text(&self, py: Python<'_>) -> PyResult<Option<String>> {
        match self.text_name {
            None => Ok(None),
            Some(name) => tfreq::render::text::to_text(&self.bytes, name)
                .map(Some)
                .map_err(|e| to_py(py, e)),
        }
    }

    /// The message's own bytes.
    fn raw<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.bytes)
    }
}

impl Decoded {
    fn tensor(&self, i: usize) -> PyResult<&tfreq::Tensor> {
        self.msg
            .tensors
            .get(i)
            .ok_or_else(|| PyIndexError::new_err(format!("no tensor {i}")))
    }

    /// Strings and the dtypes numpy has no type for: one Python object per stored value,
    /// the fill value made once and repeated.
    fn object_list<'py>(
        &self,
        py: Python<'py>,
        t: &tfreq::Tensor,
        e: &tfreq::Elements<'_>,
        max_bytes: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let n = e.expected.unwrap_or(0);
        let objects = (e.stored as u64).min(n);
        let est = n
            .checked_mul(8)
            .and_then(|s| s.checked_add(objects.saturating_mul(OBJECT_BYTES)));
        check_limit(t, n, est, max_bytes, "as a list")?;
        let n = usize::try_from(n).map_err(|_| limit_error(t, n, None, max_bytes, ""))?;
        let objects = objects as usize;
        let list = PyList::empty(py);
        for k in 0..objects {
            list.append(fill_object(py, e.get(k))?)?;
        }
        if objects < n {
            let fill = fill_object(py, e.get(objects))?;
            for _ in objects..n {
                list.append(&fill)?;
            }
        }
        ("list", list).into_pyobject(py)
    }
}

/// `bytes` (the limit) when they are at most `max`, else `MemoryError` naming the tensor,
/// its dtype, shape and size.
fn check_limit(
    t: &tfreq::Tensor,
    n: u64,
    bytes: Option<u64>,
    max: u64,
    how: &str,
) -> PyResult<u64> {
    match bytes {
        Some(b) if b <= max => Ok(b),
        _ => Err(limit_error(t, n, bytes, max, how)),
    }
}

fn limit_error(t: &tfreq::Tensor, n: u64, bytes: Option<u64>, max: u64, how: &str) -> PyErr {
    let size = bytes.map_or_else(
        || "more than 2^64 bytes".to_string(),
        |b| format!("{b} bytes"),
    );
    let how = if how.is_empty() {
        String::new()
    } else {
        format!(" {how}")
    };
    PyMemoryError::new_err(format!(
        "tensor \"{}\": {} of shape {:?} holds {n} elements, {size}{how}, beyond the limit of {max} bytes (tfreq.set_max_tensor_bytes)",
        tfreq::escape::escape(&t.name),
        t.dtype,
        t.shape.sizes(),
    ))
}

/// A value of a filled tensor as the list path has always given it: bytes, a float, or
/// `None`.
fn fill_object<'py>(py: Python<'py>, s: Option<Scalar>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match s {
        Some(Scalar::Bytes(b)) | Some(Scalar::Opaque(b)) => PyBytes::new(py, &b).into_any(),
        Some(s) => match scalar_f64(&s) {
            Some(f) => f.into_pyobject(py)?.into_any(),
            None => py.None().into_bound(py),
        },
        None => py.None().into_bound(py),
    })
}

/// A stored value as the SDK's repeated field gives it.
fn stored_object<'py>(py: Python<'py>, s: Option<Scalar>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match s {
        Some(Scalar::I64(v)) => v.into_pyobject(py)?.into_any(),
        Some(Scalar::U64(v)) => v.into_pyobject(py)?.into_any(),
        Some(Scalar::Byte(v)) => v.into_pyobject(py)?.into_any(),
        Some(Scalar::Bool(v)) => v.into_pyobject(py)?.to_owned().into_any(),
        Some(Scalar::C64(re, im)) => PyComplex::from_doubles(py, re.into(), im.into()).into_any(),
        Some(Scalar::C128(re, im)) => PyComplex::from_doubles(py, re, im).into_any(),
        other => fill_object(py, other)?,
    })
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
        _ => return None,
    })
}

/// Appends element `s` to `out` as numpy type `ty` (little-endian): exactly
/// [`elem_size`]`(ty)` bytes.
fn put_scalar(out: &mut Vec<u8>, ty: &str, s: &Scalar) {
    use Scalar as S;
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

fn scalar_f64(s: &Scalar) -> Option<f64> {
    use Scalar as S;
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

fn elem_size(ty: &str) -> usize {
    match ty {
        "|b1" | "|i1" | "|u1" => 1,
        "<i2" | "<u2" | "<f2" => 2,
        "<i4" | "<u4" | "<f4" => 4,
        "<c16" => 16,
        _ => 8,
    }
}

/// Where the caller's `bytes` object lies (see [`Decoded::base`]).
pub(crate) fn base_of(b: &Bound<'_, PyBytes>) -> (usize, usize) {
    let s = b.as_bytes();
    (s.as_ptr() as usize, s.len())
}

/// The decoded message as a dict for the Python half (`tfreq.Message` wraps it): what it
/// says, with its tensors as `(name, dtype number, dtype name, shape, numpy type)` and
/// `source`, the [`Decoded`] that makes values on demand.
pub(crate) fn message_dict<'py>(
    py: Python<'py>,
    msg: Message,
    bytes: Bytes,
    text_name: Option<&'static str>,
    base: (usize, usize),
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
            Kind::Request => "request",
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
        let ty = t.dtype.dtype().and_then(numpy_type);
        tensors.append((
            t.name.clone(),
            t.dtype.0,
            t.dtype.to_string(),
            t.shape.sizes(),
            ty,
        ))?;
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
    d.set_item("log_kind", py.None())?;
    let src = Decoded {
        msg,
        bytes,
        text_name,
        base,
    };
    d.set_item("source", Py::new(py, src)?)?;
    Ok(d)
}

/// The protobuf message a decoded message's bytes are.
pub(crate) fn text_name(msg: &Message) -> &'static str {
    if msg.method.takes_examples() {
        msg.method.request_message()
    } else {
        tfreq::wire::message_name(msg.wire, msg.kind)
    }
}

/// The entries of an input, one dict (as [`message_dict`] makes) at a time: a TFRecord
/// file is read record by record, so memory holds one record's message whatever the
/// number of records. Every entry is yielded: a log record that holds no request as
/// kind `log` (with its `log_kind`), a text warm-up line as kind `line`.
#[pyclass(module = "tfreq._tfreq")]
pub(crate) struct Records {
    entries: Mutex<Option<Entries>>,
    kind: ContainerKind,
    base: (usize, usize),
}

impl Records {
    pub(crate) fn new(entries: Entries, base: (usize, usize)) -> Self {
        Records {
            kind: entries.kind(),
            entries: Mutex::new(Some(entries)),
            base,
        }
    }
}

#[pymethods]
impl Records {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut guard = self
            .entries
            .lock()
            .map_err(|_| Error::new_err("the record reader was poisoned by an earlier panic"))?;
        let Some(entries) = guard.as_mut() else {
            return Ok(None);
        };
        let entry = match entries.next() {
            None => {
                *guard = None;
                return Ok(None);
            }
            Some(Err(e)) => {
                // The first record that cannot be read ends the reading.
                *guard = None;
                return Err(to_py(py, e));
            }
            Some(Ok(entry)) => entry,
        };
        drop(guard);
        let label = entry.label(self.kind);
        let log_kind = entry.log_kind.map(|k| k.name());
        let d = match entry.content {
            Content::Message(m) => {
                let name = text_name(&m);
                message_dict(py, m, entry.bytes, Some(name), self.base, &label)?
            }
            Content::Log(_) => {
                let empty = Message::new(WireFormat::TfServing, Kind::Request);
                let d = message_dict(
                    py,
                    empty,
                    entry.bytes,
                    Some("tensorflow.serving.PredictionLog"),
                    self.base,
                    &label,
                )?;
                d.set_item("kind", "log")?;
                d
            }
            Content::Line(line) => {
                let empty = Message::new(WireFormat::Eas, Kind::Request);
                let d = message_dict(py, empty, line.clone(), None, self.base, &label)?;
                d.set_item("kind", "line")?;
                d.set_item("line", PyBytes::new(py, &line))?;
                d
            }
            // Entries of kinds a later version adds: said, not skipped.
            #[allow(unreachable_patterns)]
            _ => {
                let empty = Message::new(WireFormat::TfServing, Kind::Request);
                let d = message_dict(py, empty, entry.bytes, None, self.base, &label)?;
                d.set_item("kind", "other")?;
                d
            }
        };
        d.set_item("log_kind", log_kind)?;
        Ok(Some(d))
    }
}
