"""Build, decode, compare and check the protobuf requests TensorFlow model services receive.

tfreq reads and writes the requests of Alibaba PAI-EAS TensorFlow processors and TensorFlow
Serving without any protobuf runtime, so it installs beside ``eas-prediction`` (protobuf
3.20) and TensorFlow (protobuf 6 and later) alike.

``TFRequest`` is a drop-in for ``eas_prediction.TFRequest``: the same names, the same bytes
for everything the SDK does right, and an exception for what the SDK lets through:

>>> import tfreq
>>> req = tfreq.TFRequest('serving_default')
>>> req.add_feed('x', [1, 2], tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
>>> req.add_fetch('y')
>>> req.to_string() == open('tests/data/eas/spec_vector.bin', 'rb').read()  # the SDK's file
True
>>> req.add_feed('ids', [2, 2], tfreq.TFRequest.DT_INT64, [1, 2, 3])
Traceback (most recent call last):
    ...
ValueError: feed "ids": shape [2, 2] holds 4 values, got 3

``decode`` reads either wire format back; with numpy installed (``pip install
'tfreq[numpy]'``) each input is a numpy array with TensorFlow's dtype and shape:

>>> msg = tfreq.decode(req.to_string())
>>> msg.wire, msg.signature_name, msg.fetches
('eas', 'serving_default', ['y'])
>>> msg.inputs['x']  # doctest: +SKIP
array([[1., 2.]], dtype=float32)
"""

from __future__ import annotations

import importlib as _importlib
import json as _json
import os as _os
import sys as _sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _tfreq, results
from ._tfreq import DecodeError, Error, __version__
from .results import ExampleInput, ExecutorKey, Finding, Kind, Method, ModelSpec, Report, Summary, Task, Value, Wire

if TYPE_CHECKING:
    from ._tfreq import _Message

__all__ = [
    "TFRequest",
    "TFResponse",
    "Message",
    "decode",
    "read",
    "diff",
    "check",
    "executor_key",
    "summarize",
    "merge_summaries",
    "set_max_tensor_bytes",
    "get_max_tensor_bytes",
    "DecodeError",
    "Error",
    "ExecutorKey",
    "ModelSpec",
    "Task",
    "Report",
    "Summary",
    "Finding",
    "results",
    "__version__",
]

# TensorFlow's DataType numbers (tensorflow/core/framework/types.proto).
_DTYPES = {
    "DT_FLOAT": 1,
    "DT_DOUBLE": 2,
    "DT_INT32": 3,
    "DT_UINT8": 4,
    "DT_INT16": 5,
    "DT_INT8": 6,
    "DT_STRING": 7,
    "DT_COMPLEX64": 8,
    "DT_INT64": 9,
    "DT_BOOL": 10,
    "DT_QINT8": 11,
    "DT_QUINT8": 12,
    "DT_QINT32": 13,
    "DT_BFLOAT16": 14,
    "DT_QINT16": 15,
    "DT_QUINT16": 16,
    "DT_UINT16": 17,
    "DT_COMPLEX128": 18,
    "DT_HALF": 19,
    "DT_UINT32": 22,
    "DT_UINT64": 23,
}

# How the values of each dtype are handed to the builder: the kind for lists, the numpy
# type for arrays, and for integer dtypes the range the dtype holds.
_INT_RANGE = {
    3: (-(2**31), 2**31 - 1),
    4: (0, 255),
    5: (-(2**15), 2**15 - 1),
    6: (-128, 127),
    9: (-(2**63), 2**63 - 1),
    11: (-128, 127),
    12: (0, 255),
    13: (-(2**31), 2**31 - 1),
    15: (-(2**15), 2**15 - 1),
    16: (0, 2**16 - 1),
    17: (0, 2**16 - 1),
    22: (0, 2**32 - 1),
    23: (0, 2**64 - 1),
}
_ARRAY_TYPE = {
    1: "float32",
    2: "float64",
    3: "int32",
    4: "uint8",
    5: "int16",
    6: "int8",
    8: "complex64",
    9: "int64",
    10: "bool",
    11: "int8",
    12: "uint8",
    13: "int32",
    14: "float32",  # rounded to bfloat16 by the builder
    15: "int16",
    16: "uint16",
    17: "uint16",
    18: "complex128",
    19: "float16",
    22: "uint32",
    23: "uint64",
}
_FLOAT_KIND = {1: "f32", 2: "f64", 14: "bf16", 19: "f16"}
# The largest float32. Protobuf's float check writes anything beyond it as inf, even what
# rounds to it (google/protobuf/internal/type_checkers.py, FloatValueChecker).
_FLT_MAX = float.fromhex("0x1.fffffep+127")

# The most bytes one tensor's values may take when made into an array or a list.
_max_tensor_bytes = 1 << 30
# The command's default --max-size: the most bytes `read` takes, inflated or not.
_DEFAULT_MAX_SIZE = 2 << 30


def set_max_tensor_bytes(n: int) -> int:
    """Sets the most bytes one tensor's values may take when tfreq makes them into a numpy
    array or a list (``msg.inputs``, ``TFResponse.get_values``...), and returns the limit
    it replaces. The default is 1 GiB. Past it, :class:`MemoryError` names the tensor and
    its size: a request of a few bytes can declare a shape of 2^40 elements, which
    TensorFlow fills from its last value. Values that are a view of the bytes decoded take
    no memory and are never refused.

    >>> old = set_max_tensor_bytes(1 << 20)
    >>> set_max_tensor_bytes(old) == 1 << 20
    True
    """
    global _max_tensor_bytes
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"the limit must be an int (bytes), not {type(n).__name__}")
    if n < 0:
        raise ValueError(f"the limit must be 0 or more bytes, not {n}")
    old, _max_tensor_bytes = _max_tensor_bytes, n
    return old


def get_max_tensor_bytes() -> int:
    """The limit :func:`set_max_tensor_bytes` sets (1 GiB unless set)."""
    return _max_tensor_bytes


def _shape_of(name: str, shape: Any) -> List[int]:
    """A shape as a list of ints: a sequence of integers (ints or numpy integers), none
    negative. A string, a float or a bool is not a dim."""
    if isinstance(shape, (str, bytes, bytearray, memoryview)) or not hasattr(shape, "__iter__"):
        raise TypeError(
            f"feed {_q(name)}: shape must be a sequence of ints such as [1, 784], not {type(shape).__name__} {shape!r}"
        )
    dims = []
    for i, d in enumerate(shape):
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"feed {_q(name)}: dim {i} of the shape is {type(d).__name__} {d!r}; a dim is an int")
        n = d.__index__()
        if n < 0:
            raise ValueError(f"feed {_q(name)}: dim {i} of the shape is negative ({n}); a dim is 0 or more")
        if n > 2**63 - 1:
            raise ValueError(f"feed {_q(name)}: dim {i} of the shape is {n}, beyond int64")
        dims.append(n)
    return dims


def _numpy() -> Any:
    """numpy, or an ImportError that names the extra to install (numpy is optional: it is
    imported by name, and typed as Any)."""
    try:
        numpy = _importlib.import_module("numpy")
    except ImportError as e:  # pragma: no cover - exercised in the no-numpy environment
        raise ImportError(
            "this needs numpy: pip install 'tfreq[numpy]' (or pip install numpy)"
        ) from e
    return numpy


def _is_array(x: Any) -> bool:
    np = _sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def _q(name: str) -> str:
    """A name between double quotes, as the builder's messages show names."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _where(name: str, i: int) -> str:
    return f"feed {_q(name)}: value {i}"


def _list_values(name: str, dtype: int, content: Iterable[Any]) -> Tuple[str, List[Any]]:
    """Checks and converts a sequence of Python values for ``dtype``, as protobuf's type
    checks do, and refuses what the dtype cannot hold (which the SDK lets through)."""
    if isinstance(content, (str, bytes)):
        raise TypeError(f"feed {_q(name)}: content must be a sequence of values, not one {type(content).__name__}")
    values = list(content)
    out: List[Any] = []
    if dtype in _FLOAT_KIND:
        for i, v in enumerate(values):
            if isinstance(v, (str, bytes, complex)) or not hasattr(v, "__float__"):
                raise TypeError(f"{_where(name, i)} is {type(v).__name__} {v!r}; {_dtype_name(dtype)} takes numbers")
            out.append(float(v))
        # Rounded to the dtype by the builder, which refuses a finite value that would
        # become infinity.
        return _FLOAT_KIND[dtype], out
    if dtype in _INT_RANGE:
        lo, hi = _INT_RANGE[dtype]
        for i, v in enumerate(values):
            if isinstance(v, float) or not hasattr(v, "__index__"):
                raise TypeError(f"{_where(name, i)} is {type(v).__name__} {v!r}; {_dtype_name(dtype)} takes integers")
            n = v.__index__()
            if not lo <= n <= hi:
                raise ValueError(
                    f"{_where(name, i)} is {n}, outside {_dtype_name(dtype)}'s range [{lo}, {hi}]"
                )
            out.append(n)
        return ("u64" if dtype == 23 else "i64"), out
    if dtype == 10:
        for i, v in enumerate(values):
            if isinstance(v, bool) or (hasattr(v, "__index__") and v.__index__() in (0, 1)):
                out.append(bool(v))
            else:
                raise ValueError(f"{_where(name, i)} is {v!r}; DT_BOOL takes True, False, 1 or 0")
        return "bool", out
    if dtype == 7:
        for i, v in enumerate(values):
            if isinstance(v, str):
                out.append(v.encode("utf-8"))
            elif isinstance(v, (bytes, bytearray, memoryview)):
                out.append(bytes(v))
            else:
                raise TypeError(f"{_where(name, i)} is {type(v).__name__} {v!r}; DT_STRING takes bytes or str")
        return "bytes", out
    if dtype in (8, 18):
        for i, v in enumerate(values):
            if not isinstance(v, (int, float, complex)):
                raise TypeError(f"{_where(name, i)} is {type(v).__name__} {v!r}; {_dtype_name(dtype)} takes numbers")
            c = complex(v)
            out.append((c.real, c.imag))
        return ("c64" if dtype == 8 else "c128"), out
    raise ValueError(f"feed {_q(name)}: {_dtype_name(dtype)} tensors cannot be built from values")


def _array_values(name: str, dtype: int, arr: Any) -> Any:
    """A C-contiguous array of the builder's element type for ``dtype``: the array itself
    when it already is one (read without conversion), else converted, refusing integers
    out of the dtype's range and floats for integer dtypes (protobuf refuses those too)."""
    np = _numpy()
    if dtype == 7 or arr.dtype.kind == "O":
        return None
    want = _ARRAY_TYPE.get(dtype)
    if want is None:
        raise ValueError(f"feed {_q(name)}: {_dtype_name(dtype)} tensors cannot be built from values")
    target = np.dtype(want)
    if arr.dtype == target and arr.flags.c_contiguous and arr.dtype.isnative:
        return arr
    if dtype in _INT_RANGE:
        if arr.dtype.kind not in "iub":
            raise TypeError(f"feed {_q(name)}: an array of {arr.dtype} cannot feed {_dtype_name(dtype)}, which takes integers")
        lo, hi = _INT_RANGE[dtype]
        flat = arr.reshape(-1)
        if flat.size and arr.dtype.kind != "b":
            bad = (flat < lo) | (flat > hi)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{_where(name, i)} is {int(flat[i])}, outside {_dtype_name(dtype)}'s range [{lo}, {hi}]"
                )
    elif dtype == 10:
        if arr.dtype.kind not in "biu":
            raise TypeError(f"feed {_q(name)}: an array of {arr.dtype} cannot feed DT_BOOL")
        flat = arr.reshape(-1)
        bad = (flat != 0) & (flat != 1)
        if flat.size and bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{_where(name, i)} is {flat[i]!r}; DT_BOOL takes True, False, 1 or 0")
    elif dtype in _FLOAT_KIND:
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"feed {_q(name)}: an array of {arr.dtype} cannot feed {_dtype_name(dtype)}, which takes real numbers")
        if dtype == 14 and arr.dtype != target:
            # bfloat16 is rounded from float32 by the builder: a float64 array is checked
            # there, value by value, as a list of doubles.
            return None
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.ascontiguousarray(arr, dtype=target)
        if arr.dtype.kind == "f" and out.size:
            bad = np.isinf(out) & np.isfinite(arr)
            if dtype == 1:
                # What the SDK writes as inf: beyond FLT_MAX, even what rounds to it.
                with np.errstate(invalid="ignore"):
                    bad = bad | (np.isfinite(arr) & (np.abs(arr) > _FLT_MAX))
            if bad.any():
                i = int(np.argmax(bad.reshape(-1)))
                raise ValueError(
                    f"feed {_q(name)}: value {i} is {float(arr.reshape(-1)[i]):e}, beyond the largest {_dtype_name(dtype)}; it would become infinity"
                )
        return out
    return np.ascontiguousarray(arr, dtype=target)


def _dtype_name(dtype: int) -> str:
    for k, v in _DTYPES.items():
        if v == dtype:
            return k
    return str(dtype)


class TFRequest:
    """A request for an EAS TensorFlow processor, as ``eas_prediction.TFRequest`` builds it.

    The same names and constants as the SDK (``TFRequest.DT_FLOAT`` and so on), the same
    bytes from ``to_string()`` for everything the SDK does right. What the SDK lets through
    raises instead: a value count that does not match the shape, a feed added twice,
    integers out of their dtype's range, floats beyond float32, values of the wrong type.

    ``content`` may be a list, any sequence, or a numpy array (a C-contiguous array of the
    dtype's own type is read as one block, without per-element conversion).

    >>> r = TFRequest('serving_default')
    >>> r.add_feed('x', [1, 2], TFRequest.DT_INT8, [1, 300])
    Traceback (most recent call last):
        ...
    ValueError: feed "x": value 1 is 300, outside DT_INT8's range [-128, 127]
    """

    # TensorFlow's DataType numbers, as the SDK names them (the values of _DTYPES).
    DT_FLOAT = 1
    DT_DOUBLE = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_INT8 = 6
    DT_STRING = 7
    DT_COMPLEX64 = 8
    DT_INT64 = 9
    DT_BOOL = 10
    DT_QINT8 = 11
    DT_QUINT8 = 12
    DT_QINT32 = 13
    DT_BFLOAT16 = 14
    DT_QINT16 = 15
    DT_QUINT16 = 16
    DT_UINT16 = 17
    DT_COMPLEX128 = 18
    DT_HALF = 19
    DT_UINT32 = 22
    DT_UINT64 = 23

    def __init__(self, signature_name: Optional[str] = None, wire: str = "eas") -> None:
        self.signature_name = signature_name
        # EAS (the default, as the SDK) carries dtypes 1 to 19; wire='tf-serving' builds
        # for TF Serving, which carries every dtype (uint32, uint64, the 8-bit floats).
        self._wire = wire
        self._builder = _tfreq.Builder("", wire)
        # The SDK writes the signature name as it was at the last add_feed (and none
        # before the first): tfreq writes the same bytes.
        self._written_signature: Optional[str] = None

    def set_signature_name(self, singature_name: str) -> None:
        """Sets the signature name (the SDK's spelling of the argument is kept)."""
        self.signature_name = singature_name

    def add_feed(self, input_name: str, shape: Sequence[int], content_type: int, content: Any) -> None:
        """Adds an input tensor: its name, shape (a list such as ``[1, 784]``), dtype
        (``TFRequest.DT_FLOAT``...) and values, flattened (a list, a sequence or a numpy
        array of any shape whose size is the shape's)."""
        if self.signature_name is None or not isinstance(self.signature_name, str):
            raise TypeError(
                f"Cannot set PredictRequest.signature_name to {self.signature_name!r}: "
                "give the signature name to TFRequest() or set_signature_name()"
            )
        if isinstance(content_type, bool) or not isinstance(content_type, int):
            raise TypeError(f"content_type must be a dtype number such as TFRequest.DT_FLOAT, not {content_type!r}")
        dims = _shape_of(input_name, shape)
        arr = _array_values(input_name, content_type, content) if _is_array(content) else None
        if arr is not None:
            self._builder.add_array(input_name, dims, content_type, arr)
        else:
            if _is_array(content):
                content = content.reshape(-1).tolist()
            kind, values = _list_values(input_name, content_type, content)
            self._builder.add_list(input_name, dims, content_type, kind, values)
        self._written_signature = self.signature_name

    def add_fetch(self, output_name: str) -> None:
        """Adds an output name to fetch (``output_filter``)."""
        self._builder.add_fetch(output_name)

    def _sync(self) -> None:
        self._builder.set_signature_name(self._written_signature or "")

    def to_string(self) -> bytes:
        """The request's bytes, as the SDK's ``to_string()`` writes them (for
        ``wire='tf-serving'``, a TF Serving ``PredictRequest`` with no model name)."""
        self._sync()
        return self._builder.to_bytes()

    def to_tf_serving_bytes(self, model_name: str) -> bytes:
        """The same request as a TF Serving ``PredictRequest`` for ``model_name`` (values
        laid out as ``tf.make_tensor_proto`` does, with ``signature_name`` in
        ``model_spec``)."""
        self._builder.set_signature_name(self.signature_name or "")
        return self._builder.to_tf_serving_bytes(model_name)

    @property
    def request_data(self) -> "Message":
        """The request as the SDK's ``request_data`` shows it: ``print(req.request_data)``
        writes its protobuf text format, as the SDK's does, and
        ``req.request_data.SerializeToString()`` its bytes. A new :class:`Message` of the
        request as it is now (changing it changes nothing in the request)."""
        return decode(self.to_string(), wire=self._wire, kind="request")

    def parse_response(self, response_data: bytes) -> "TFResponse":
        """The SDK's ``parse_response``: a :class:`TFResponse` of the answer's bytes."""
        return TFResponse(response_data)

    def __repr__(self) -> str:
        return (
            f"TFRequest(signature_name={self.signature_name!r}, feeds={self._builder.feed_names()!r}, "
            f"fetches={self._builder.fetches()!r})"
        )


class Message:
    """A decoded request or response.

    Attributes: ``wire`` (``'eas'`` or ``'tf-serving'``), ``kind`` (``'request'`` or
    ``'response'``; from :func:`read`, also ``'log'`` for a log record that holds no
    request and ``'line'`` for a line of a text warm-up, in ``line``), ``log_kind`` (the
    record's ``PredictionLog`` kind, ``'predict_log'``..., or None), ``signature_name``,
    ``model_spec`` (a :class:`~tfreq.results.ModelSpec`: ``(name, version, version_label,
    signature_name)``, or None),
    ``fetches`` (``output_filter``), ``findings`` (what tfreq notices, as the CLI's JSON
    has them), ``dtypes`` (name → ``'DT_FLOAT'``...), ``shapes`` (name → list) and
    ``label`` (where in its file it was). ``inputs`` (requests) or ``outputs``
    (responses) maps each name to a numpy array with TensorFlow's dtype and shape, made
    on first use: values stored as one little-endian run of the array's type are a
    read-only view of the bytes decoded, not a copy; values TensorFlow fills (fewer
    stored than the shape holds) are made then, and an array of more than
    :func:`get_max_tensor_bytes` raises :class:`MemoryError`.

    ``str(msg)`` is the protobuf text format (what ``print`` of the protobuf message
    writes) and ``msg.SerializeToString()`` the message's bytes.

    TF Serving's tf.Example requests: ``method`` (``'predict'``, ``'classify'``,
    ``'regress'``, ``'classify_or_regress'`` for a bare request whose bytes cannot tell, or
    ``'multi_inference'``), ``input`` (None, or ``{'list', 'examples', 'context'}`` where
    each example maps a feature name to a :class:`~tfreq.results.Feature` ``(kind,
    values)``) and ``tasks`` (a :class:`~tfreq.results.Task` ``(method_name,
    signature_name)`` for each multi-inference task). The types are in
    :mod:`tfreq.results`.
    """

    def __init__(self, d: "_Message", data: bytes) -> None:
        self._d = d
        self._data = data
        self._arrays: Optional[Dict[str, Any]] = None
        self.label: str = d["label"]
        self.wire: Wire = d["wire"]
        self.kind: Kind = d["kind"]
        self.signature_name: str = d["signature_name"]
        self.fetches: List[str] = d["fetches"]
        self.model_spec: Optional[ModelSpec] = d["model_spec"]
        self.log_kind: Optional[str] = d["log_kind"]
        self.line: Optional[bytes] = d.get("line")
        self._src = d["source"]
        self._findings: Optional[List[Finding]] = None
        tensors = d["tensors"]
        self.dtypes: Dict[str, str] = {t[0]: t[2] for t in tensors}
        self.shapes: Dict[str, List[int]] = {t[0]: list(t[3]) for t in tensors}
        self.names: List[str] = [t[0] for t in tensors]
        self.method: Method = d["method"]
        self.input: Optional[ExampleInput] = d["input"]
        self.tasks: List[Task] = d["tasks"]

    @property
    def findings(self) -> List[Finding]:
        """What tfreq notices about the message, as the CLI's JSON has it."""
        if self._findings is None:
            self._findings = self._src.findings()
        return self._findings

    def _tensors(self) -> Dict[str, Any]:
        if self._arrays is None:
            np = _numpy()
            ml = _ml_dtypes()
            out = {}
            for i, t in enumerate(self._d["tensors"]):
                data = self._src.array(i, _max_tensor_bytes, ml is not None)
                out[t[0]] = _to_array(np, ml, t[3], data, self._data)
            self._arrays = out
        return self._arrays

    def _values(self, name: str) -> List[Value]:
        """The stored values of tensor ``name`` as Python objects (no fill)."""
        for i, t in enumerate(self._d["tensors"]):
            if t[0] == name:
                return self._src.values(i, _max_tensor_bytes)
        raise KeyError(name)

    def SerializeToString(self) -> bytes:  # noqa: N802 - protobuf's name
        """The message's bytes (protobuf's name, as the SDK's ``request_data`` has it)."""
        return self._src.raw()

    def __str__(self) -> str:
        text = self._src.text()
        return repr(self) if text is None else text

    @property
    def inputs(self) -> Dict[str, Any]:
        """Input name → numpy array (requests)."""
        return self._tensors() if self.kind == "request" else {}

    @property
    def outputs(self) -> Dict[str, Any]:
        """Output name → numpy array (responses)."""
        return self._tensors() if self.kind == "response" else {}

    def __repr__(self) -> str:
        return f"Message(wire={self.wire!r}, kind={self.kind!r}, signature_name={self.signature_name!r}, tensors={self.names!r}, fetches={self.fetches!r})"


def _to_array(np: Any, ml: Any, shape: List[int], data: Tuple[Any, ...], base: bytes) -> Any:
    """The numpy array of one tensor's values as ``Decoded.array`` hands them over: a
    view of ``base``, an array over the bytes made for it, or an object array (strings);
    the bits of bfloat16 and the 8- and 4-bit types viewed as ml_dtypes' type."""
    how = data[0]
    dims = [max(int(d), 0) for d in shape]
    if how == "objects":
        return data[1].reshape(dims)
    if how == "view":
        _, offset, count, ty, ext = data
        arr = np.frombuffer(base, dtype=ty, count=count, offset=offset)
    else:
        _, b, ty, ext = data
        arr = np.frombuffer(b, dtype=ty)
    if ext is not None:
        arr = arr.view(getattr(ml, ext))
    return arr.reshape(dims)


# ml_dtypes (bfloat16, the 8- and 4-bit floats, int4...), looked for once: False until then.
_ml: Any = False


def _ml_dtypes() -> Any:
    """The ml_dtypes module, or None when it is not installed (TensorFlow and JAX ship
    it; ``pip install ml_dtypes`` otherwise). Without it, bfloat16 and the 8- and 4-bit
    floats decode to float32 arrays (each value exact) and the 4- and 2-bit integers to
    int8 / uint8."""
    global _ml
    if _ml is False:
        try:
            _ml = _importlib.import_module("ml_dtypes")
        except ImportError:
            _ml = None
    return _ml


def _bytes_of(data: Union[bytes, bytearray, memoryview, str, "_os.PathLike[str]"]) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    with open(_os.fspath(data), "rb") as f:
        return f.read()


def decode(
    data: Union[bytes, str, "_os.PathLike[str]"], wire: Optional[str] = None, kind: Optional[str] = None
) -> Message:
    """Decodes one request or response — EAS or TF Serving, request or response, detected
    from the bytes unless ``wire`` (``'eas'`` / ``'tf-serving'``) and ``kind``
    (``'request'`` / ``'response'``) say — from bytes or a file's path.

    >>> msg = decode(open('tests/data/eas/spec_vector.bin', 'rb').read())
    >>> msg.wire, msg.names, msg.shapes['x'], msg.fetches
    ('eas', ['x'], [1, 2], ['y'])

    Raises :class:`DecodeError` (a ``ValueError``) with the byte offset and field path:

    >>> decode(b'\\x12\\x05\\x0a', wire='eas', kind='request')
    Traceback (most recent call last):
        ...
    tfreq.DecodeError: not a valid EAS PredictRequest: truncated: length-delimited field needs 5 bytes, only 1 left at byte 2 (in inputs)
    """
    b = _bytes_of(data)
    return Message(_tfreq.decode(b, wire, kind), b)


def read(data: Union[bytes, str, "_os.PathLike[str]"], max_size: int = _DEFAULT_MAX_SIZE) -> Iterator[Message]:
    """Every entry of a file, as the CLI reads it, one at a time: a bare message, each
    record of a TFRecord warm-up or ``PredictionLog`` file (gzip or zlib too), each request
    of a text-format file, each line of a text warm-up.

    An iterator: a TFRecord file is decoded record by record, so memory holds the file and
    one record's message whatever the number of records (``list(read(...))`` for a list).
    No entry is skipped: a log record that holds no request (a ``session_run_log``, a
    record with no log type) comes as a :class:`Message` of kind ``'log'`` with its
    ``log_kind``, a text warm-up line as kind ``'line'``. The first record that cannot be
    read raises :class:`DecodeError` (with its ``record``).

    ``max_size`` (default 2 GiB, the command's ``--max-size``) caps the input, once
    inflated, and each message: past it, :class:`DecodeError`.

    >>> [m.label for m in read('tests/data/tfrecord/warmup_predict.tfrecord')]
    ['record 0', 'record 1', 'record 2']
    >>> [(m.kind, m.log_kind) for m in read('tests/data/tfrecord/warmup_mixed.tfrecord')][-2:]
    [('log', 'none'), ('log', 'none')]
    """
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 0:
        raise TypeError(f"max_size must be an int of 0 or more (bytes), not {max_size!r}")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        size = _os.stat(_os.fspath(data)).st_size
        if size > max_size:
            e = DecodeError(f"{_os.fspath(data)}: {size} bytes, beyond the limit of {max_size} bytes (max_size)")
            e.offset = e.field_path = e.record = None
            e.file = _os.fspath(data)
            raise e
    path = None if isinstance(data, (bytes, bytearray, memoryview)) else _os.fspath(data)
    b = _bytes_of(data)
    return (Message(d, b) for d in _tfreq.read(b, max_size, path))


def diff(warmup: Any, production: Any, strict_shapes: bool = False) -> Report:
    """Will the warm-up warm the executors production uses? The report ``tfreq diff
    --format json`` prints, as Python objects (a dict; its keys in
    :class:`~tfreq.results.Report`). ``warmup`` and ``production`` are each
    bytes, a path, or a list of them (each may hold several requests: a TFRecord file)."""
    w = [_bytes_of(x) for x in _as_list(warmup)]
    p = [_bytes_of(x) for x in _as_list(production)]
    report: Report = _json.loads(_tfreq.diff_json(w, p, strict_shapes))
    return report


def check(requests: Any, model: Union[str, "_os.PathLike[str]"], signature: Optional[str] = None) -> Report:
    """Checks requests against a model's signatures (a SavedModel directory, GetModelMetadata
    JSON or ``saved_model_cli show --all`` text): the report ``tfreq check --format json``
    prints, as Python objects (a dict; its keys in :class:`~tfreq.results.Report`)."""
    r = [_bytes_of(x) for x in _as_list(requests)]
    report: Report = _json.loads(_tfreq.check_json(r, _os.fspath(model), signature))
    return report


def executor_key(data: Union[bytes, str, "_os.PathLike[str]"]) -> ExecutorKey:
    """The key TensorFlow compiles an executor for: an :class:`~tfreq.results.ExecutorKey`
    ``(signature, feeds, fetches, fetch_all)``, names sorted. A named tuple: equal to the
    plain tuple, hashable and picklable, for Spark or Beam.

    >>> a = TFRequest('s'); a.add_feed('x', [1], TFRequest.DT_FLOAT, [1.0]); a.add_fetch('p')
    >>> b = TFRequest('s'); b.add_feed('x', [2], TFRequest.DT_FLOAT, [1.0, 2.0]); b.add_fetch('p')
    >>> executor_key(a.to_string()) == executor_key(b.to_string())
    True
    >>> executor_key(a.to_string())
    ExecutorKey(signature='s', feeds=('x',), fetches=('p',), fetch_all=False)
    """
    return ExecutorKey._make(_tfreq.executor_key(_bytes_of(data)))


def summarize(paths: Any) -> Summary:
    """The ``tfreq keys --format json`` summary of files (a path or a list of paths; gzip
    and plain TFRecord logs, bare requests), as Python objects (a dict; its keys in
    :class:`~tfreq.results.Summary`). Summaries of parts merge exactly
    (:func:`merge_summaries`).

    >>> s = summarize('tests/data/tfrecord/warmup_predict.tfrecord')
    >>> s['schema'], s['requests'], s['executor_keys']
    (1, 3, 2)
    """
    files = [_os.fspath(p) for p in _as_list(paths)]
    summary: Summary = _json.loads(_tfreq.summarize_paths(files))
    return summary


def merge_summaries(summaries: Iterable[Summary]) -> Summary:
    """Merges summaries as ``tfreq keys merge`` does: the summary of one run over every
    file they name.

    >>> a = summarize('tests/data/eas/faq_prod.bin')
    >>> b = summarize('tests/data/tfrecord/warmup_predict.tfrecord')
    >>> merge_summaries([a, b]) == summarize(['tests/data/tfrecord/warmup_predict.tfrecord', 'tests/data/eas/faq_prod.bin'])
    True
    """
    summary: Summary = _json.loads(_tfreq.merge_summaries([_json.dumps(s) for s in summaries]))
    return summary


def _as_list(x: Any) -> List[Any]:
    if isinstance(x, (bytes, bytearray, memoryview, str)) or hasattr(x, "__fspath__"):
        return [x]
    return list(x)


class TFResponse:
    """A response, read as ``eas_prediction.TFResponse`` reads it (EAS or TF Serving bytes).

    >>> resp = TFResponse(open('tests/data/eas/response.bin', 'rb').read())
    >>> resp.get_tensor_shape('sorted_probs')
    [1, 3]
    """

    def __init__(self, response_data: bytes) -> None:
        self.response = decode(response_data)
        if self.response.kind != "response":
            raise DecodeError("these bytes are a request, not a response")

    def get_tensor_shape(self, output_name: str) -> List[int]:
        """The shape of an output, as a list."""
        return list(self.response.shapes[output_name])

    def get_values(self, output_name: str) -> List[Value]:
        """The values of an output as the SDK returns them: the stored values, a list of
        Python floats, ints, bools or bytes (``json.dumps`` takes it). For dtypes the SDK
        returns None for (``DT_UINT8``, ``DT_HALF``...), the values too.

        >>> resp = TFResponse(open('tests/data/eas/response.bin', 'rb').read())
        >>> resp.get_values('sorted_labels')
        [b'positive', b'neutral', b'negative']
        """
        return self.response._values(output_name)

    def get_array(self, output_name: str) -> Any:
        """An output as a numpy array with TensorFlow's dtype and shape (values TensorFlow
        fills included; needs ``tfreq[numpy]``); :class:`MemoryError` past
        :func:`get_max_tensor_bytes`."""
        return self.response.outputs[output_name]

    def to_string(self) -> str:
        """The SDK's ``to_string()``: the response in protobuf text format."""
        return str(self.response)

    def __str__(self) -> str:
        """The response in protobuf text format, as the SDK prints it."""
        return str(self.response)
