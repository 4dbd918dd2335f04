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
use tfreq::{DType, Elems, Fill, Kind, Message, Scalar, Source, Values, WireFormat};

use crate::{DecodeError, Error, to_py};

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
    /// last one repeated, or defaults), with numpy's storage type of the values and the
    /// `ml_dtypes` type they are the bits of (or `None`):
    ///
    /// - `("view", offset, count, type, ml_dtype)`: a run of the caller's bytes (no copy);
    /// - `("bytes", b, type, ml_dtype)`: little-endian values made in one pass (one copy);
    /// - `("objects", array)`: strings, a numpy object array (1-D) made in one pass.
    ///
    /// `ml_dtypes` says whether the caller has `ml_dtypes`: without it, bfloat16 and the
    /// 8- and 4-bit floats come as float32 (every value exact, NaN bits of bfloat16 kept),
    /// the 4- and 2-bit integers as int8 / uint8. `MemoryError` when making them would take
    /// more than `max_bytes`; a view is never refused (it takes no memory).
    #[pyo3(signature = (i, max_bytes, ml_dtypes = true))]
    fn array<'py>(
        &self,
        py: Python<'py>,
        i: usize,
        max_bytes: u64,
        ml_dtypes: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.tensor(i)?;
        let e = t.elements(self.msg.wire);
        let Some((d, lay)) = t.dtype.dtype().and_then(|d| Some((d, layout(d)?))) else {
            return self.objects(py, t, &e, max_bytes);
        };
        if matches!(e.fill, Fill::BadShape | Fill::BadContent) {
            return Err(DecodeError::new_err(format!(
                "tensor {}: its values cannot be read as TensorFlow reads them ({:?})",
                tfreq::escape(&t.name),
                e.fill
            )));
        }
        let n = e.expected.unwrap_or(0);
        let convert = lay.ext.is_some() && !ml_dtypes;
        // What the caller gets: the storage type, or the fallback's wider one.
        let (ty, size, ext) = if convert {
            let (ty, size) = fallback(d);
            (ty, size, None)
        } else {
            (lay.ty, lay.size, lay.ext)
        };
        let total = n.checked_mul(size as u64);
        if !convert
            && let Some(run) = same_layout_run(t, &e, d, lay.size)
            && let Some(want) = total.and_then(|b| usize::try_from(b).ok())
            && run.len() >= want
        {
            let run = &run[..want];
            let start = run.as_ptr() as usize;
            let (b, len) = self.base;
            if start >= b && start + run.len() <= b + len {
                return ("view", start - b, n, ty, ext).into_pyobject(py);
            }
            check_limit(t, n, total, max_bytes, "as an array")?;
            return ("bytes", PyBytes::new(py, run), ty, ext).into_pyobject(py);
        }
        let total = check_limit(t, n, total, max_bytes, "as an array")?;
        let total = usize::try_from(total).map_err(|_| limit_error(t, n, None, max_bytes, ""))?;
        let n = total / size;
        let data = if convert {
            // The bits first (n bytes or 2n: less than the output), then widened.
            let mut bits = vec![0u8; n * lay.size];
            fill_bits(t, &e, d, lay.size, &mut bits);
            PyBytes::new_with(py, total, |buf| {
                widen(d, &bits, buf);
                Ok(())
            })?
        } else {
            PyBytes::new_with(py, total, |buf| {
                fill_bits(t, &e, d, size, buf);
                Ok(())
            })?
        };
        ("bytes", data, ty, ext).into_pyobject(py)
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
            Some(name) => tfreq::render::to_text(&self.bytes, name)
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

    /// Strings and the dtypes numpy has no type for: a numpy object array (1-D) of one
    /// Python object per stored value, made in one pass, the fill value made once and
    /// repeated.
    fn objects<'py>(
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
        check_limit(t, n, est, max_bytes, "as an array")?;
        let n = usize::try_from(n).map_err(|_| limit_error(t, n, None, max_bytes, ""))?;
        let objects = objects as usize;
        let mut out: Vec<Py<PyAny>> = Vec::with_capacity(n);
        // `string_val` as decoded: each element's bytes straight into a `bytes`.
        if let (Source::Field(f), Some(DType::String)) = (e.source, t.dtype.dtype())
            && let Some(Values::Bytes(v)) = t.field(f)
        {
            for b in v.iter().take(objects) {
                out.push(PyBytes::new(py, b).into_any().unbind());
            }
        }
        if out.is_empty() {
            for k in 0..objects {
                out.push(fill_object(py, e.get(k))?.unbind());
            }
        }
        if objects < n {
            let fill = match out.last() {
                Some(last) => last.clone_ref(py),
                None => fill_object(py, e.get(0))?.unbind(),
            };
            out.resize_with(n, || fill.clone_ref(py));
        }
        ("objects", numpy::PyArray1::from_vec(py, out)).into_pyobject(py)
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
        tfreq::escape(&t.name),
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

/// A number as a Python float gives it (every value of these types is exact in f64).
fn scalar_f64(s: &Scalar) -> Option<f64> {
    use Scalar as S;
    Some(match s {
        S::F32(v) => *v as f64,
        S::F64(v) => *v,
        S::F16(v) => v.to_f64(),
        S::BF16(v) => v.to_f64(),
        S::Mini(d, b) => f64::from(tfreq::to_f32(*d, *b)?),
        S::I64(v) => *v as f64,
        S::U64(v) => *v as f64,
        S::Bool(b) => *b as u8 as f64,
        _ => return None,
    })
}

/// How the values of a fixed-width dtype are handed to Python: numpy's storage type
/// (`"<f4"`), its size, and the `ml_dtypes` type the stored bits are (bfloat16, the 8- and
/// 4-bit floats, the 4- and 2-bit integers: one byte or two per element, as TensorFlow
/// keeps them in memory and in `tensor_content`, and as `tf.make_ndarray` reads them).
#[derive(Debug, Clone, Copy)]
struct Layout {
    ty: &'static str,
    size: usize,
    ext: Option<&'static str>,
}

/// The [`Layout`] of `d`, or `None` for strings and dtypes of no fixed width (handed back
/// as Python objects).
fn layout(d: DType) -> Option<Layout> {
    use DType as D;
    let (ty, ext) = match d {
        D::Float => ("<f4", None),
        D::Double => ("<f8", None),
        D::Int32 | D::QInt32 => ("<i4", None),
        D::UInt8 | D::QUInt8 => ("|u1", None),
        D::Int16 | D::QInt16 => ("<i2", None),
        D::Int8 | D::QInt8 => ("|i1", None),
        D::Complex64 => ("<c8", None),
        D::Complex128 => ("<c16", None),
        D::Int64 => ("<i8", None),
        D::Bool => ("|b1", None),
        D::UInt16 | D::QUInt16 => ("<u2", None),
        D::Half => ("<f2", None),
        D::UInt32 => ("<u4", None),
        D::UInt64 => ("<u8", None),
        D::BFloat16 => ("<u2", Some(d.info().short)),
        D::Int4 | D::UInt4 | D::Int2 | D::UInt2 => ("|u1", Some(d.info().short)),
        _ if tfreq::is_minifloat(d) => ("|u1", Some(d.info().short)),
        _ => return None,
    };
    let size = d.info().size?;
    Some(Layout { ty, size, ext })
}

/// numpy's type (and its size) for the values of a dtype of an `ml_dtypes` type when
/// `ml_dtypes` is missing: float32 for bfloat16 and the 8- and 4-bit floats (which hold
/// each of their values exactly), int8 / uint8 for the 4- and 2-bit integers.
fn fallback(d: DType) -> (&'static str, usize) {
    match d {
        DType::Int4 | DType::Int2 => ("|i1", 1),
        DType::UInt4 | DType::UInt2 => ("|u1", 1),
        _ => ("<f4", 4),
    }
}

/// The stored values of `t` when they are one run of bytes laid out as the values
/// handed back (`size` bytes per element, little-endian): `tensor_content`, a packed
/// `float_val` / `double_val` (pairs for complex numbers) or `float8_val`.
fn same_layout_run<'a>(
    t: &'a tfreq::Tensor,
    e: &'a tfreq::Elements<'_>,
    d: DType,
    size: usize,
) -> Option<&'a [u8]> {
    use DType as D;
    match e.source {
        Source::Content => t.content.as_deref(),
        Source::Field(f) => match t.field(f)? {
            Values::F32(Elems::Le(b)) if matches!(d, D::Float | D::Complex64) => Some(b),
            Values::F64(Elems::Le(b)) if matches!(d, D::Double | D::Complex128) => Some(b),
            Values::Raw(b) if size == 1 && tfreq::is_minifloat(d) => Some(b),
            _ => None,
        },
        _ => None,
    }
}

/// Writes the tensor's elements into `buf` (`size` bytes each, the [`Layout`] of `d`):
/// the stored ones, then the last one repeated (written once, then doubled); with none
/// stored, `buf` is left as it is: zeros, which is TensorFlow's default for every
/// fixed-width dtype.
fn fill_bits(t: &tfreq::Tensor, e: &tfreq::Elements<'_>, d: DType, size: usize, buf: &mut [u8]) {
    let total = buf.len();
    let n = total / size;
    let m = e.stored.min(n);
    if m == 0 {
        return;
    }
    if !put_stored(t, e, d, size, &mut buf[..m * size]) {
        for (k, c) in buf[..m * size].chunks_exact_mut(size).enumerate() {
            if let Some(s) = e.stored_get(k) {
                scalar_bits(&s, c);
            }
        }
    }
    let start = (m - 1) * size;
    let mut filled = m * size;
    while filled < total {
        let k = (filled - start).min(total - filled);
        buf.copy_within(start..start + k, filled);
        filled += k;
    }
}

/// Fixed-width elements into `dst`, little-endian: one copy from a view, else one pass.
macro_rules! put_elems {
    ($v:expr, $dst:expr, $size:literal) => {{
        let dst: &mut [u8] = $dst;
        match $v {
            Elems::Le(b) => {
                let k = dst.len().min(b.len());
                dst[..k].copy_from_slice(&b[..k]);
            }
            Elems::Vec(v) => {
                for (c, x) in dst.chunks_exact_mut($size).zip(v) {
                    c.copy_from_slice(&x.to_le_bytes());
                }
            }
        }
    }};
}

/// The first `dst.len() / size` stored elements of `t` written into `dst` in one pass
/// over the field as decoded; `false` for a field and dtype this does not know (the
/// caller then goes element by element).
fn put_stored(
    t: &tfreq::Tensor,
    e: &tfreq::Elements<'_>,
    d: DType,
    size: usize,
    dst: &mut [u8],
) -> bool {
    use DType as D;
    let f = match e.source {
        Source::Content => {
            return match &t.content {
                Some(c) if c.len() >= dst.len() => {
                    dst.copy_from_slice(&c[..dst.len()]);
                    true
                }
                _ => false,
            };
        }
        Source::Field(f) => f,
        _ => return false,
    };
    // The integer fields: the low `size` bytes of each value, as TensorFlow casts
    // `int_val` to the dtype (and `half_val` to the 16 bits of a half or bfloat16); the
    // 4- and 2-bit types keep their low bits, as ml_dtypes' constructors do.
    let mask = match d {
        D::Int4 | D::UInt4 => 0xf,
        D::Int2 | D::UInt2 => 0x3,
        _ => u64::MAX,
    };
    let ints = |dst: &mut [u8], it: &mut dyn Iterator<Item = u64>| {
        for (c, x) in dst.chunks_exact_mut(size).zip(it) {
            c.copy_from_slice(&(x & mask).to_le_bytes()[..size]);
        }
    };
    match t.field(f) {
        Some(Values::F32(v)) => match d {
            D::Float | D::Complex64 => put_elems!(v, dst, 4),
            // EAS carries halves and bfloat16 as floats: converted as field_scalar does
            // (src/model/reading.rs): halves rounded, bfloat16 truncated to its upper 16 bits.
            D::Half => {
                for (c, x) in dst.chunks_exact_mut(2).zip(v.iter()) {
                    c.copy_from_slice(&half::f16::from_f32(x).to_le_bytes());
                }
            }
            D::BFloat16 => {
                for (c, x) in dst.chunks_exact_mut(2).zip(v.iter()) {
                    c.copy_from_slice(&((x.to_bits() >> 16) as u16).to_le_bytes());
                }
            }
            _ => return false,
        },
        Some(Values::F64(v)) if matches!(d, D::Double | D::Complex128) => put_elems!(v, dst, 8),
        Some(Values::I32(v)) => ints(dst, &mut v.iter().map(|x| x as i64 as u64)),
        Some(Values::I64(v)) => ints(dst, &mut v.iter().map(|x| x as u64)),
        Some(Values::U32(v)) => ints(dst, &mut v.iter().map(u64::from)),
        Some(Values::U64(v)) => ints(dst, &mut v.iter()),
        Some(Values::Bool(v)) if size == 1 => {
            for (c, b) in dst.iter_mut().zip(v) {
                *c = *b as u8;
            }
        }
        Some(Values::Raw(b)) if size == 1 && b.len() >= dst.len() => {
            dst.copy_from_slice(&b[..dst.len()])
        }
        _ => return false,
    }
    true
}

/// One element's bits into `c` (its [`Layout`] size), for fields [`put_stored`] does not
/// know.
fn scalar_bits(s: &Scalar, c: &mut [u8]) {
    use Scalar as S;
    let mut b = [0u8; 16];
    match s {
        S::F32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
        S::F64(v) => b[..8].copy_from_slice(&v.to_le_bytes()),
        S::F16(v) => b[..2].copy_from_slice(&v.to_le_bytes()),
        S::BF16(v) => b[..2].copy_from_slice(&v.to_le_bytes()),
        S::I64(v) => b[..8].copy_from_slice(&v.to_le_bytes()),
        S::U64(v) => b[..8].copy_from_slice(&v.to_le_bytes()),
        S::Bool(v) => b[0] = *v as u8,
        S::C64(re, im) => {
            b[..4].copy_from_slice(&re.to_le_bytes());
            b[4..8].copy_from_slice(&im.to_le_bytes());
        }
        S::C128(re, im) => {
            b[..8].copy_from_slice(&re.to_le_bytes());
            b[8..].copy_from_slice(&im.to_le_bytes());
        }
        S::Mini(_, v) | S::Byte(v) => b[0] = *v,
        _ => {}
    }
    let k = c.len().min(16);
    c[..k].copy_from_slice(&b[..k]);
}

/// The bits of an `ml_dtypes` type (`bits`, one element per byte or two) as the
/// [`fallback`] type, into `out`: bfloat16 shifted into the upper half of a float32 (the
/// same number, NaN bits kept), the 8- and 4-bit floats through a table of their 256
/// values, the 4- and 2-bit integers sign- or zero-extended from their low bits.
fn widen(d: DType, bits: &[u8], out: &mut [u8]) {
    use DType as D;
    match d {
        D::BFloat16 => {
            for (o, c) in out.chunks_exact_mut(4).zip(bits.chunks_exact(2)) {
                let x = u32::from(u16::from_le_bytes([c[0], c[1]])) << 16;
                o.copy_from_slice(&x.to_le_bytes());
            }
        }
        D::Int4 => out
            .iter_mut()
            .zip(bits)
            .for_each(|(o, b)| *o = (((b << 4) as i8) >> 4) as u8),
        D::Int2 => out
            .iter_mut()
            .zip(bits)
            .for_each(|(o, b)| *o = (((b << 6) as i8) >> 6) as u8),
        D::UInt4 => out.iter_mut().zip(bits).for_each(|(o, b)| *o = b & 0xf),
        D::UInt2 => out.iter_mut().zip(bits).for_each(|(o, b)| *o = b & 0x3),
        _ => {
            let mut table = [[0u8; 4]; 256];
            for (b, v) in table.iter_mut().enumerate() {
                // ml_dtypes reads a float4_e2m1fn byte with any of bits 3 to 7 set as
                // negative, of the magnitude of bits 0 to 2 (ml_dtypes 0.7, as
                // `np.arange(256, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)` shows).
                let b = match d {
                    DType::Float4E2m1fn if b > 0xf => (b & 0x7) | 0x8,
                    _ => b,
                };
                let x = tfreq::to_f32(d, b as u8).unwrap_or(0.0);
                *v = x.to_le_bytes();
            }
            for (o, b) in out.chunks_exact_mut(4).zip(bits) {
                o.copy_from_slice(&table[*b as usize]);
            }
        }
    }
}

/// Where the caller's `bytes` object lies (see [`Decoded::base`]).
pub(crate) fn base_of(b: &Bound<'_, PyBytes>) -> (usize, usize) {
    let s = b.as_bytes();
    (s.as_ptr() as usize, s.len())
}

/// The decoded message as a dict for the Python half (`tfreq.Message` wraps it): what it
/// says, with its tensors as `(name, dtype number, dtype name, shape, numpy type)`, its
/// model spec, tasks and features as the named tuples of `tfreq.results`, and `source`,
/// the [`Decoded`] that makes values on demand (python/tfreq/_tfreq.pyi types it).
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
        msg.model_spec
            .as_ref()
            .map(|m| crate::results::model_spec(py, m))
            .transpose()?,
    )?;
    let tensors = PyList::empty(py);
    for t in &msg.tensors {
        let ty = t.dtype.dtype().and_then(layout).map(|l| l.ty);
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
            fd.set_item(
                &f.name,
                crate::results::feature(py, f.values.kind(), values)?,
            )?;
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
        tasks.append(crate::results::task(py, t)?)?;
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
