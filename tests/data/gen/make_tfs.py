#!/usr/bin/env python3
"""Generate the TF Serving reference files in tests/data/tfs/ with TensorFlow and
tensorflow-serving-api (pins: requirements-tf.txt).

    "$(bash .ci/venv tf)" tests/data/gen/make_tfs.py

For every case it writes NAME.bin (msg.SerializeToString()), NAME.txt
(google.protobuf.text_format.MessageToString(msg) + "\\n") and an entry in manifest.json
(tests/data/SCHEMA.md, plus the keys "map_order" and "producer"). It also writes
serialize_tensor_*.bin/.txt (raw TensorProto bytes from tf.io.serialize_tensor) listed in
serialize_tensor.json. Output goes to tests/data/tfs/ relative to the repo root, whatever the
current directory.

Map order: upb (the default protobuf backend of protobuf >= 4) serialises map entries in hash
order, which changes from process to process. To get deterministic files whose map entries are in
insertion order, the script runs on protobuf's pure-Python backend (it sets
PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python before anything imports protobuf; same protobuf
release, same generated *_pb2 code). It also checks, in child processes running on upb, what order
upb writes, and says so in the manifest notes. The output is deterministic: a re-run rewrites
identical bytes.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import base64  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf import text_format  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_tfs.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow.python.framework import dtypes as tf_dtypes  # noqa: E402
from tensorflow_serving.apis import model_pb2, predict_pb2  # noqa: E402
import google.protobuf  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "tfs"

DT = types_pb2.DataType
SPEC_VECTOR_HEX = ("0a180a016d120208031a0f73657276696e675f64656661756c74121b0a017812160801120812020801"
                   "120208022a080000803f000000401a0179")

CASES = []          # dicts: name, msg, data, entry
REFUSALS = []       # (dtype, call, error) reported at the end
UPB_NOTE = ""       # filled by check_upb_map_order()

FLOATISH = {DT.Value(n) for n in (
    "DT_FLOAT", "DT_DOUBLE", "DT_HALF", "DT_BFLOAT16", "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN",
    "DT_FLOAT8_E4M3FNUZ", "DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ", "DT_FLOAT4_E2M1FN",
    "DT_COMPLEX64", "DT_COMPLEX128")}


# ---------------------------------------------------------------------------------------------
# manifest helpers
# ---------------------------------------------------------------------------------------------

def jv(dtype, v):
    """One element as SCHEMA.md wants it in "values"."""
    if dtype == DT.Value("DT_STRING"):
        return base64.b64encode(v).decode("ascii")
    if dtype == DT.Value("DT_BOOL"):
        return bool(v)
    if dtype in FLOATISH:
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    v = int(v)
    if dtype == DT.Value("DT_UINT64") and v > 2 ** 53:
        return str(v)
    return v


def flat_values(dtype, values):
    """complex -> [re0, im0, re1, im1, ...]; everything else element by element."""
    if dtype in (DT.Value("DT_COMPLEX64"), DT.Value("DT_COMPLEX128")):
        out = []
        for c in values:
            out += [jv(dtype, complex(c).real), jv(dtype, complex(c).imag)]
        return out
    return [jv(dtype, v) for v in values]


def feed(name, tensor, values):
    return {
        "name": name,
        "dtype": DT.Name(tensor.dtype),
        "shape": [d.size for d in tensor.tensor_shape.dim],
        "values": flat_values(tensor.dtype, values),
        "encoding": "tensor_content" if tensor.tensor_content else "typed",
    }


def spec_json(ms):
    d = {"name": ms.name,
         "version": ms.version.value if ms.HasField("version") else None,
         "signature_name": ms.signature_name}
    if ms.WhichOneof("version_choice") == "version_label":
        d["version_label"] = ms.version_label
    return d


def map_order_of(data, field_tag, names):
    """Keys of the map entries (tag field_tag) on the wire, in wire order."""
    keys = []
    i = 0
    while i < len(data):
        tag, i = _varint(data, i)
        wt = tag & 7
        if wt == 0:
            _, i = _varint(data, i)
        elif wt == 2:
            ln, i = _varint(data, i)
            if tag == field_tag:
                entry = data[i:i + ln]
                assert entry[0] == 0x0a
                kl, j = _varint(entry, 1)
                keys.append(entry[j:j + kl].decode("utf-8"))
            i += ln
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
    return keys


def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if not c & 0x80:
            return v, i


def add(name, msg, feeds, note, *, fetches=None, kind="request", builder_equivalent=True,
        producer="make_tensor_proto", data=None, map_order=None, expect_hex=None):
    if data is None:
        data = msg.SerializeToString()
    if expect_hex is not None and data.hex() != expect_hex:
        sys.exit("make_tfs.py: %s: hex mismatch\n  got      %s\n  expected %s"
                 % (name, data.hex(), expect_hex))
    names = [f["name"] for f in feeds]
    wire = map_order_of(data, 0x12 if kind == "request" else 0x0a, names)
    if map_order is None:
        if wire != names:
            sys.exit("make_tfs.py: %s: map entries not in insertion order: %s" % (name, wire))
        map_order = "insertion"
    if len(names) > 1:
        note = note + " " + UPB_NOTE
    if kind == "request":
        sig = msg.model_spec.signature_name
        spec = spec_json(msg.model_spec)
        fetches = list(msg.output_filter) if fetches is None else fetches
    else:
        sig = msg.model_spec.signature_name
        spec = spec_json(msg.model_spec)
        fetches = []
    CASES.append({"name": name, "msg": msg, "data": data, "entry": {
        "file": name + ".bin",
        "text": name + ".txt",
        "wire": "tf-serving",
        "kind": kind,
        "signature_name": sig,
        "model_spec": spec,
        "feeds": feeds,
        "fetches": fetches,
        "builder_equivalent": builder_equivalent,
        "map_order": map_order,
        "producer": producer,
        "note": note,
    }})


# ---------------------------------------------------------------------------------------------
# tensor builders
# ---------------------------------------------------------------------------------------------

def typed(dtype, shape, field, values, shape_present=True):
    """A TensorProto filled by hand: dtype, tensor_shape, one typed field."""
    t = tensor_pb2.TensorProto()
    t.dtype = dtype
    if shape_present:
        t.tensor_shape.SetInParent()
        for d in shape:
            t.tensor_shape.dim.add().size = d
    if field == "float8_val":
        t.float8_val = values
    else:
        getattr(t, field).extend(values)
    return t


def mtp(values, dtype, shape=None):
    return tf.make_tensor_proto(values, dtype=dtype, shape=shape)


def request(name="m", signature="serving_default", version=None, fetches=("y",)):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = name
    if version is not None:
        r.model_spec.version.value = version
    if signature is not None:
        r.model_spec.signature_name = signature
    r.output_filter.extend(fetches)
    return r


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------

def spec_vector():
    r = request(version=3)
    x = typed(DT_FLOAT, [1, 2], "float_val", [1.0, 2.0])
    r.inputs["x"].CopyFrom(x)
    add("spec_vector", r, [feed("x", x, [1.0, 2.0])],
        "formats.md §10.1: model_spec{m, version 3, serving_default}, x DT_FLOAT [1,2] "
        "float_val [1,2] (typed, by hand), output_filter [y].",
        producer="typed fields by hand", expect_hex=SPEC_VECTOR_HEX)


SEED = [
    ("sentence1", "DT_INT32", [200, 15], [1] * 200 * 15),
    ("sentence2", "DT_INT32", [200, 15], [1] * 200 * 15),
    ("y", "DT_INT32", [200, 2], [2] * 200 * 2),
    ("keep_rate", "DT_FLOAT", [], [0.2]),
    ("images", "DT_FLOAT", [1, 784], [1.0] * 784),
]
TYPED_FIELD = {"DT_INT32": "int_val", "DT_FLOAT": "float_val", "DT_STRING": "string_val",
               "DT_DOUBLE": "double_val"}


def seed():
    def build(kind):
        r = request(name="my_model", fetches=("sorted_labels", "sorted_probs"))
        feeds = []
        for name, dt, shape, vals in SEED:
            if kind == "content":
                t = mtp(vals, tf.dtypes.as_dtype(DT.Value(dt)), shape)
            else:
                t = typed(DT.Value(dt), shape, TYPED_FIELD[dt], vals)
            r.inputs[name].CopyFrom(t)
            feeds.append(feed(name, t, vals))
        return r, feeds

    r, feeds = build("content")
    add("seed_content", r, feeds,
        "The warm-up page's seed request (seeds/002) in TF Serving form, every tensor made by "
        "tf.make_tensor_proto(values, dtype, shape): tensor_content for the multi-element int32/float "
        "inputs, float_val for the scalar keep_rate (make_tensor_proto writes the typed field for a "
        "single element).")
    r2, feeds2 = build("typed")
    add("seed_typed", r2, feeds2,
        "The seed request in TF Serving form with typed fields filled by hand (int_val/float_val "
        "list every value; the scalar keep_rate has a present, empty tensor_shape).",
        producer="typed fields by hand")
    data = r.SerializeToString(deterministic=True)
    add("seed_content_sorted", r, feeds,
        "seed_content serialised with SerializeToString(deterministic=True): the same message with "
        "its map entries sorted by key (images, keep_rate, sentence1, sentence2, y), so NOT in the "
        "order the feeds were added. Same text as seed_content.txt. For decoders: map order carries "
        "no meaning.",
        data=data, map_order="unknown", builder_equivalent=False)
    wire = map_order_of(data, 0x12, [])
    if wire != sorted(wire):
        sys.exit("deterministic serialisation not sorted: %s" % wire)


DT_FLOAT = DT.Value("DT_FLOAT")
F32_VALUES = [0.1, -0.0, 1e20, 1.4e-45, float("inf"), float("-inf"), float("nan"), 123456789.0,
              3061734.25, 1.0, 0.2, 3.4028234663852886e38]
F64_VALUES = [0.1, -0.0, 1e20, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"),
              float("nan"), 123456789.0, 3061734.25, 1.0, 2.2250738585072014e-308]

# name, tf dtype, values, typed field
DTYPES = [
    ("float", tf.float32, F32_VALUES, "float_val"),
    ("double", tf.float64, F64_VALUES, "double_val"),
    ("int32", tf.int32, [0, 1, -1, 2147483647, -2147483648, 123456789], "int_val"),
    ("uint8", tf.uint8, [0, 1, 127, 128, 255], "int_val"),
    ("int16", tf.int16, [0, 1, -1, 32767, -32768], "int_val"),
    ("int8", tf.int8, [0, 1, -1, 127, -128], "int_val"),
    ("int64", tf.int64, [0, 1, -1, 9223372036854775807, -9223372036854775808, 9007199254740993],
     "int64_val"),
    ("bool", tf.bool, [True, False, True], "bool_val"),
    ("string", tf.string, [b"", b"a", "h\u00e9llo".encode("utf-8"), b"\x00\xff"], "string_val"),
    ("complex64", tf.complex64, [1 + 2j, complex(-0.0, 0.1), complex(float("inf"), -1e20),
                                 complex(float("nan"), 0.0)], "scomplex_val"),
    ("complex128", tf.complex128, [1 + 2j, 0.1 - 0.2j, complex(5e-324, 1.7976931348623157e308),
                                   complex(-0.0, float("nan"))], "dcomplex_val"),
    ("bfloat16", tf.bfloat16, [1.0, -0.0, 0.1, 3.0, -2.5, float("inf"), float("nan"),
                               3.3895313892515355e38, 9.183549615799121e-41], "half_val"),
    ("half", tf.float16, [1.0, -0.0, 0.1, 65504.0, 5.960464477539063e-08, 1.5, float("inf"),
                          float("-inf"), float("nan")], "half_val"),
    ("uint16", tf.uint16, [0, 1, 32768, 65535], "int_val"),
    ("uint32", tf.uint32, [0, 1, 2147483648, 4294967295], "uint32_val"),
    ("uint64", tf.uint64, [0, 1, 9007199254740993, 18446744073709551615], "uint64_val"),
    ("qint8", tf.qint8, [-128, -1, 0, 127], "int_val"),
    ("quint8", tf.quint8, [0, 128, 255], "int_val"),
    ("qint16", tf.qint16, [-32768, 0, 32767], "int_val"),
    ("quint16", tf.quint16, [0, 1, 65535], "int_val"),
    ("qint32", tf.qint32, [-2147483648, 0, 2147483647], "int_val"),
    ("float8_e5m2", tf_dtypes.float8_e5m2, [1.0, -0.0, 0.5, 57344.0, float("inf"), float("nan"),
                                            -2.0, 1.52587890625e-05], "float8_val"),
    ("float8_e4m3fn", tf_dtypes.float8_e4m3fn, [1.0, -0.0, 0.5, 448.0, float("nan"), -2.0,
                                                0.001953125], "float8_val"),
    ("int4", tf_dtypes.int4, [-8, -1, 0, 7], "int_val"),
    ("uint4", tf_dtypes.uint4, [0, 1, 15], "int_val"),
    # not asked for, but cheap: the other sub-byte types of TF 2.21
    ("float8_e4m3fnuz", tf_dtypes.float8_e4m3fnuz, [1.0, -2.0, 0.5, 240.0], "float8_val"),
    ("float8_e4m3b11fnuz", tf_dtypes.float8_e4m3b11fnuz, [1.0, -2.0, 0.5, 30.0], "float8_val"),
    ("float8_e5m2fnuz", tf_dtypes.float8_e5m2fnuz, [1.0, -2.0, 0.5, 57344.0], "float8_val"),
    ("float4_e2m1fn", tf_dtypes.float4_e2m1fn, [1.0, -0.0, 0.5, 6.0, -3.0], "float8_val"),
    ("int2", tf_dtypes.int2, [-2, -1, 0, 1], "int_val"),
    ("uint2", tf_dtypes.uint2, [0, 1, 2, 3], "int_val"),
]


def np_array(dt, values):
    if dt == tf.string:
        return np.array(values, dtype=object)
    return np.array(values, dtype=dt.as_numpy_dtype)


def typed_values(dt, field, values):
    """The typed-field payload for `values`, as TF's C++ AsProtoField would write it."""
    if field == "half_val":
        return np_array(dt, values).view(np.uint16).astype(np.int32).tolist()
    if field == "float8_val":
        return np_array(dt, values).tobytes()
    if field in ("scomplex_val", "dcomplex_val"):
        out = []
        for c in values:
            out += [complex(c).real, complex(c).imag]
        return out
    if dt.is_quantized:
        return [int(v) for v in values]
    return list(values)


def make_content(name, dt, values):
    """(tensor, producer) with tensor_content if some TF API writes it for this dtype, else None."""
    shape = [len(values)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            t = mtp(values, dt, shape)
    except Exception as e:
        # quantized types refuse Python lists (TypeError); a uint64 list with values >= 2^63 goes
        # through float64 and is silently mangled (RuntimeWarning): use a numpy array instead.
        err = "%s: %s" % (type(e).__name__, e)
        if isinstance(e, RuntimeWarning):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                bad = mtp(values, dt, shape)
            err += " -> tensor_content holds %s instead of %s" % (
                np.frombuffer(bad.tensor_content, dt.as_numpy_dtype).tolist(), values)
        REFUSALS.append((name, "tf.make_tensor_proto(list, dtype=tf.%s)" % name, err))
        t = mtp(np_array(dt, values), None, None)
        producer = "make_tensor_proto(numpy array)"
    else:
        producer = "make_tensor_proto"
    if t.tensor_content:
        return t, producer
    # make_tensor_proto wrote a typed field (bool, string, complex, uint16, int4/uint4/int2/uint2):
    # try TF's C++ Tensor::AsProtoTensorContent through tf.io.serialize_tensor.
    try:
        raw = tf.io.serialize_tensor(tf.constant(np_array(dt, values), dtype=dt)).numpy()
    except Exception as e:
        REFUSALS.append((name, "tf.io.serialize_tensor", "%s: %s" % (type(e).__name__,
                                                                    str(e).splitlines()[0])))
        return None, None
    t = tensor_pb2.TensorProto.FromString(raw)
    if not t.tensor_content:
        REFUSALS.append((name, "tf.io.serialize_tensor", "writes %s, not tensor_content"
                         % ", ".join(f.name for f, _ in t.ListFields() if f.name.endswith("_val"))))
        return None, None
    return t, "tf.io.serialize_tensor"


def dtypes_cases():
    for name, dt, values, field in DTYPES:
        enum = dt.as_datatype_enum
        fv = flat_values(enum, values)
        # typed, by hand
        t = typed(enum, [len(values)], field, typed_values(dt, field, values))
        r = request()
        r.inputs["x"].CopyFrom(t)
        same_as_mtp = False
        try:
            m = mtp(values, dt, [len(values)]) if not dt.is_quantized else None
            same_as_mtp = m is not None and not m.tensor_content and m.SerializeToString() == \
                t.SerializeToString()
        except Exception:
            pass
        f = feed("x", t, values)
        f["values"] = fv
        n_refused = len(REFUSALS)
        # single-element make_tensor_proto: does the typed path accept the dtype?
        try:
            mtp(np_array(dt, values[:1]), None, None)
        except Exception as e:
            REFUSALS.append((name, "tf.make_tensor_proto(1-element array)",
                             "%s: %s" % (type(e).__name__, e)))
        # tensor_content
        t_c, producer = make_content(name, dt, values)
        refused = "".join(" TensorFlow: %s -> %s." % (call, err.rstrip("."))
                          for _, call, err in REFUSALS[n_refused:])
        add("dtype_%s_typed" % name, r, [f],
            "DT_%s [%d] in its typed field %s, filled by hand%s.%s" % (
                DT.Name(enum)[3:], len(values), field,
                " (byte-identical to what tf.make_tensor_proto writes for this dtype)"
                if same_as_mtp else "", refused),
            producer="typed fields by hand")
        t = t_c
        if t is None:
            continue
        r = request()
        r.inputs["x"].CopyFrom(t)
        f = feed("x", t, values)
        f["values"] = fv
        add("dtype_%s_content" % name, r, [f],
            "DT_%s [%d] as tensor_content (little-endian), written by %s.%s" % (
                DT.Name(enum)[3:], len(values), producer, refused),
            producer=producer)


def strings_binary():
    vals = [b"\xff\x00abc", "h\u00e9llo".encode("utf-8"), b'quote"back\\slash',
            b"tab\tnl\nret\r'apos", bytes(range(0, 32))]
    t = mtp(vals, tf.string, [len(vals)])
    r = request()
    r.inputs["x"].CopyFrom(t)
    add("strings_binary", r, [feed("x", t, vals)],
        "DT_STRING [5] string_val with non-UTF-8 bytes, quotes, backslash, control bytes and every "
        "byte 0..31: exercises the text printer's C escapes and octal.")


def scalar():
    r = request()
    f = mtp(0.2, tf.float32)
    s = mtp(b"hello", tf.string)
    r.inputs["f"].CopyFrom(f)
    r.inputs["s"].CopyFrom(s)
    add("scalar", r, [feed("f", f, [0.2]), feed("s", s, [b"hello"])],
        "Scalars from make_tensor_proto: float 0.2 and string 'hello'; tensor_shape is present and "
        "empty (12 00 on the wire).")
    r = request()
    f = typed(DT_FLOAT, [], "float_val", [0.2], shape_present=False)
    s = typed(DT.Value("DT_STRING"), [], "string_val", [b"hello"], shape_present=False)
    r.inputs["f"].CopyFrom(f)
    r.inputs["s"].CopyFrom(s)
    add("scalar_no_shape", r, [feed("f", f, [0.2]), feed("s", s, [b"hello"])],
        "The same scalars with tensor_shape absent (hand-made): also a scalar.",
        producer="typed fields by hand", builder_equivalent=False)


def zero_dim():
    t = mtp(np.zeros((0, 3), np.float32), None, None)
    r = request()
    r.inputs["x"].CopyFrom(t)
    add("zero_dim", r, [feed("x", t, [])],
        "DT_FLOAT [0,3] from make_tensor_proto: dtype and shape only, no values.")


def short_values():
    t = mtp([1.0, 2.0], tf.float32, [2, 3])
    h = typed(DT_FLOAT, [2, 3], "float_val", [1.0, 2.0])
    if t.SerializeToString() != h.SerializeToString():
        sys.exit("short_values: make_tensor_proto differs from the typed form")
    r = request()
    r.inputs["x"].CopyFrom(t)
    add("short_values", r, [feed("x", t, [1.0, 2.0])],
        "DT_FLOAT [2,3] with float_val [1,2] only: TF's repeat-last-value form (decodes to "
        "[[1,2,2],[2,2,2]]). Exactly what make_tensor_proto([1.0,2.0], shape=[2,3]) writes.",
        builder_equivalent=False)


def splat():
    # tf.make_tensor_proto(7.0, shape=[2, 3]) stores the one value once; TensorFlow fills
    # the shape with it (tf.make_ndarray gives six 7.0s).
    t = mtp(7.0, tf.float32, [2, 3])
    if list(t.float_val) != [7.0] or t.tensor_content:
        sys.exit("splat: make_tensor_proto did not write one float_val")
    if tf.make_ndarray(t).ravel().tolist() != [7.0] * 6:
        sys.exit("splat: make_ndarray does not fill the shape")
    r = request()
    r.inputs["x"].CopyFrom(t)
    add("splat", r, [feed("x", t, [7.0])],
        "DT_FLOAT [2,3] with float_val [7] only: make_tensor_proto(7.0, shape=[2,3]), "
        "TensorFlow's one-value splat (tf.make_ndarray gives six 7.0s).",
        builder_equivalent=False)


def versions():
    x = typed(DT_FLOAT, [1, 2], "float_val", [1.0, 2.0])
    r = request()
    r.model_spec.version.SetInParent()
    r.inputs["x"].CopyFrom(x)
    if b"\x12\x00" not in r.model_spec.SerializeToString():
        sys.exit("version_zero: version wrapper not present")
    add("version_zero", r, [feed("x", x, [1.0, 2.0])],
        "model_spec.version present with value 0 (wire 12 00, an empty Int64Value): not the same "
        "as no version.", producer="typed fields by hand")
    r = request()
    r.model_spec.version_label = "stable"
    r.inputs["x"].CopyFrom(x)
    add("version_label", r, [feed("x", x, [1.0, 2.0])],
        "model_spec.version_label 'stable' (field 4, oneof version_choice).",
        producer="typed fields by hand")
    r = request(signature=None)
    r.inputs["x"].CopyFrom(x)
    add("no_signature", r, [feed("x", x, [1.0, 2.0])],
        "model_spec without signature_name (the server resolves it to serving_default).",
        producer="typed fields by hand")


def newer_fields():
    d = predict_pb2.PredictRequest.DESCRIPTOR.fields_by_name
    have = [n for n in ("predict_streamed_options", "client_id", "request_options") if n in d]
    if not have:
        print("newer_fields: skipped, predict_pb2 has none of the 2024 fields")
        return
    x = typed(DT_FLOAT, [1, 2], "float_val", [1.0, 2.0])
    r = request()
    r.inputs["x"].CopyFrom(x)
    parts = []
    if "predict_streamed_options" in d:
        o = r.predict_streamed_options
        o.request_state = predict_pb2.PredictStreamedOptions.SPLIT
        o.split_dimensions["x"] = 0
        o.return_single_response = True
        parts.append("predict_streamed_options{request_state SPLIT, split_dimensions{x: 0}, "
                     "return_single_response true}")
    if "client_id" in d:
        r.client_id = b"client-\x00\xff"
        parts.append("client_id bytes 'client-\\000\\377'")
    if "request_options" in d:
        ro = r.request_options
        rf = ro.DESCRIPTOR.fields_by_name
        ro.client_id = b"opts"
        ro.deterministic_mode = predict_pb2.PredictRequest.RequestOptions.FIXED_DECODER_SLOT
        ro.return_additional_arrays_from_prefill = True
        ro.return_stoptokens.extend([1, 2, 50256])
        ro.max_cache_length = 2048
        ro.return_all_stoptokens = False
        desc = ("request_options{client_id 'opts', deterministic_mode FIXED_DECODER_SLOT, "
                "return_additional_arrays_from_prefill true, return_stoptokens [1,2,50256], "
                "max_cache_length 2048, return_all_stoptokens false (present: proto3 optional)")
        if "handshake" in rf:
            ro.handshake.estimated_payload_bytes = 4096
            desc += ", handshake{estimated_payload_bytes 4096}"
        parts.append(desc + "}")
    add("newer_fields", r, [feed("x", x, [1.0, 2.0])],
        "Fields added to PredictRequest in 2024 (tensorflow-serving-api %s): %s."
        % (_version("tensorflow-serving-api"), "; ".join(parts)),
        producer="typed fields by hand", builder_equivalent=False)


def response():
    resp = predict_pb2.PredictResponse()
    resp.model_spec.name = "faq"
    resp.model_spec.version.value = 1
    resp.model_spec.signature_name = "serving_default"
    outs = [
        ("sorted_labels", mtp([[b"positive", b"neutral", b"negative"]], tf.string, [1, 3]),
         [b"positive", b"neutral", b"negative"]),
        ("sorted_probs", mtp([[0.7, 0.2, 0.1]], tf.float32, [1, 3]), [0.7, 0.2, 0.1]),
        ("model_version_id", mtp(b"v3", tf.string), [b"v3"]),
    ]
    feeds = []
    for name, t, vals in outs:
        resp.outputs[name].CopyFrom(t)
        feeds.append(feed(name, t, vals))
    add("response", resp, feeds,
        "TF Serving PredictResponse for the FAQ model: model_spec{faq, version 1, serving_default}; "
        "outputs made by make_tensor_proto (sorted_probs as tensor_content, the strings as "
        "string_val). feeds = the outputs in insertion order; fetches does not apply.",
        kind="response", builder_equivalent=False)


FAQ_TEXT = "gostei muito do produto".encode("utf-8")
FAQ_FETCH_WARMUP = ["sorted_labels", "sorted_probs"]
FAQ_FETCH_PROD = ["sorted_labels", "sorted_probs", "model_version_id"]


def faq():
    def mk(name, note, fetches=FAQ_FETCH_PROD, order=("input_holder", "threshold", "model_id"),
           threshold_dtype=tf.float32, batch=1, drop=()):
        r = request(name="faq", fetches=fetches)
        feeds = []
        for n in order:
            if n in drop:
                continue
            if n == "input_holder":
                vals = [FAQ_TEXT] if batch == 1 else [
                    FAQ_TEXT, b"nao gostei", "servi\u00e7o r\u00e1pido".encode("utf-8"), b"ok"][:batch]
                t = mtp(vals, tf.string, [batch])
            elif n == "threshold":
                vals = [0.5]
                t = mtp(0.5, threshold_dtype)
            else:
                vals = [b"model_a"]
                t = mtp(b"model_a", tf.string)
            r.inputs[n].CopyFrom(t)
            feeds.append(feed(n, t, vals))
        add(name, r, feeds, "FAQ of the warm-up page (seeds/002) in TF Serving form: " + note)

    mk("faq_warmup", "the warm-up request, fetching only sorted_labels and sorted_probs.",
       fetches=FAQ_FETCH_WARMUP)
    mk("faq_prod", "the production request: same feeds, also fetches model_version_id "
                   "(differs from faq_warmup by one output_filter entry).")
    mk("faq_prod_reordered", "faq_prod with inputs and output_filter in another order (same sets).",
       fetches=["model_version_id", "sorted_probs", "sorted_labels"],
       order=("model_id", "input_holder", "threshold"))
    mk("faq_prod_missing_feed", "faq_prod without the model_id input.", drop=("model_id",))
    mk("faq_prod_dtype_changed", "faq_prod with threshold sent as DT_DOUBLE instead of DT_FLOAT.",
       threshold_dtype=tf.float64)
    mk("faq_prod_batch4", "faq_prod with input_holder of shape [4] (batch 4).", batch=4)


# §10.4 vectors: name, tf value, dtype, shape, values, expected hex
SERIALIZE_TENSOR = [
    ("float", [1.0, 2.0], tf.float32, [2], "080112041202080222080000803f00000040"),
    ("bool", [True, False], tf.bool, [2], "080a12041202080222020100"),
    ("int8", [1, -2], tf.int8, [2], "0806120412020802220201fe"),
    ("half", [1.5], tf.float16, [1], "08131204120208012202003e"),
    ("int64_scalar", 7, tf.int64, [], "0809120022080700000000000000"),
    ("string", [b"ab", b"", b"xyz"], tf.string, [3], "0807120412020803420261624200420378797a"),
]


def serialize_tensor_files():
    entries = []
    for name, value, dt, shape, hx in SERIALIZE_TENSOR:
        raw = tf.io.serialize_tensor(tf.constant(value, dtype=dt)).numpy()
        if raw.hex() != hx:
            sys.exit("serialize_tensor %s: got %s expected %s" % (name, raw.hex(), hx))
        (OUT / ("serialize_tensor_%s.bin" % name)).write_bytes(raw)
        t = tensor_pb2.TensorProto.FromString(raw)
        (OUT / ("serialize_tensor_%s.txt" % name)).write_bytes(
            (text_format.MessageToString(t) + "\n").encode("utf-8"))
        vals = value if isinstance(value, list) else [value]
        entries.append({"file": "serialize_tensor_%s.bin" % name,
                        "text": "serialize_tensor_%s.txt" % name,
                        "dtype": DT.Name(dt.as_datatype_enum), "shape": shape,
                        "values": flat_values(dt.as_datatype_enum, vals), "hex": hx})
    js = "[\n" + ",\n".join("  " + json.dumps(e, ensure_ascii=False, allow_nan=False)
                             for e in entries) + "\n]\n"
    if json.loads(js) != entries:
        sys.exit("serialize_tensor.json does not round-trip")
    (OUT / "serialize_tensor.json").write_bytes(js.encode("utf-8"))
    return [e["file"] for e in entries] + [e["text"] for e in entries] + ["serialize_tensor.json"]


# ---------------------------------------------------------------------------------------------
# upb's map order (child processes on the default backend)
# ---------------------------------------------------------------------------------------------

UPB_CHILD = r"""
import os, json
os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "upb"
from google.protobuf.internal import api_implementation
from tensorflow_serving.apis import predict_pb2
r = predict_pb2.PredictRequest()
names = json.loads(os.environ["NAMES"])
for n in names:
    r.inputs[n].dtype = 1
print(json.dumps([api_implementation.Type(), r.SerializeToString().hex()]))
"""


def check_upb_map_order():
    global UPB_NOTE
    names = [s[0] for s in SEED]
    env = dict(os.environ, NAMES=json.dumps(names), PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="upb")
    orders = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", UPB_CHILD], env=env, capture_output=True,
                             text=True, check=True).stdout.strip().splitlines()[-1]
        impl, hx = json.loads(out)
        if impl != "upb":
            sys.exit("upb child ran on %r" % impl)
        orders.append(map_order_of(bytes.fromhex(hx), 0x12, names))
    insertion = sum(o == names for o in orders)
    print("upb map order check (seed input names, 3 processes):")
    for o in orders:
        print("   ", o)
    if insertion == len(orders):
        UPB_NOTE = ("Map order: this file was written on protobuf's pure-Python backend (insertion "
                    "order); upb (protobuf %s) also wrote insertion order in 3 processes checked."
                    % google.protobuf.__version__)
    else:
        UPB_NOTE = ("Map order: this file was written on protobuf's pure-Python backend, which keeps "
                    "insertion order; upb (protobuf %s, the default backend) writes map entries in "
                    "hash order, which was not insertion order and changes from process to process "
                    "(checked at generation), so a plain SerializeToString() on upb is not "
                    "reproducible." % google.protobuf.__version__)


# ---------------------------------------------------------------------------------------------

def _version(dist):
    from importlib.metadata import version
    return version(dist)


def dump_manifest(entries):
    out = ["["]
    for i, e in enumerate(entries):
        out.append("  {")
        keys = list(e)
        for k in keys:
            comma = "," if k != keys[-1] else ""
            if k == "feeds" and e[k]:
                out.append('    "feeds": [')
                for j, f in enumerate(e[k]):
                    out.append("      " + json.dumps(f, ensure_ascii=False, allow_nan=False)
                               + ("," if j + 1 < len(e[k]) else ""))
                out.append("    ]" + comma)
            else:
                out.append("    %s: %s%s" % (json.dumps(k), json.dumps(e[k], ensure_ascii=False,
                                                                       allow_nan=False), comma))
        out.append("  }" + ("," if i + 1 < len(entries) else ""))
    out.append("]")
    js = "\n".join(out) + "\n"
    if json.loads(js) != entries:
        sys.exit("manifest JSON does not round-trip")
    return js


def write_all(extra_files):
    names = set()
    for c in CASES:
        if c["name"] in names:
            sys.exit("duplicate case " + c["name"])
        names.add(c["name"])
        (OUT / (c["name"] + ".bin")).write_bytes(c["data"])
        text = text_format.MessageToString(c["msg"]) + "\n"
        (OUT / (c["name"] + ".txt")).write_bytes(text.encode("utf-8"))
    (OUT / "manifest.json").write_bytes(dump_manifest([c["entry"] for c in CASES]).encode("utf-8"))
    expected = {n + ext for n in names for ext in (".bin", ".txt")} | {"manifest.json"} | set(
        extra_files)
    for p in sorted(OUT.iterdir()):
        if p.name not in expected:
            print("warning: file not written by make_tfs.py: %s" % p, file=sys.stderr)


def _close(a, b, dtype):
    if isinstance(b, str):
        if b == "nan":
            return isinstance(a, str) and a == "nan"
        if b in ("inf", "-inf"):
            return a == b
        return str(a) == b  # uint64 as a string
    if isinstance(a, str):
        return False
    if dtype in FLOATISH:
        if a == b == 0:
            return math.copysign(1, a) == math.copysign(1, b)
        return abs(a - b) <= 1e-2 * abs(b)  # values are the given ones, before rounding to the dtype
    return a == b


def verify():
    """Re-read every file: parse, re-serialise identically, text, values via tf.make_ndarray and
    TF's C++ decoder (tf.io.parse_tensor, Tensor::FromProto) where a kernel exists."""
    manifest = json.loads((OUT / "manifest.json").read_text("utf-8"))
    print("%-32s %-8s %7s  %s" % ("file", "kind", "bytes", "sha256[:16]"))
    for e in manifest:
        data = (OUT / e["file"]).read_bytes()
        cls = predict_pb2.PredictResponse if e["kind"] == "response" else predict_pb2.PredictRequest
        msg = cls.FromString(data)
        if e["map_order"] == "insertion" and msg.SerializeToString() != data:
            sys.exit("round-trip mismatch: " + e["file"])
        text = (OUT / e["text"]).read_bytes().decode("utf-8")
        if text_format.MessageToString(msg) + "\n" != text:
            sys.exit("text mismatch: " + e["text"])
        tensors = msg.outputs if e["kind"] == "response" else msg.inputs
        if [f["name"] for f in e["feeds"]] != [k for k in tensors] and e["map_order"] == "insertion":
            sys.exit("feed order mismatch: " + e["file"])
        for f in e["feeds"]:
            t = tensors[f["name"]]
            enum = t.dtype
            if DT.Name(enum) != f["dtype"] or [d.size for d in t.tensor_shape.dim] != f["shape"]:
                sys.exit("dtype/shape mismatch: %s %s" % (e["file"], f["name"]))
            if "short_values" in e["file"] or "splat" in e["file"]:
                continue
            try:
                arr = tf.make_ndarray(t)
            except Exception as ex:
                print("  note: tf.make_ndarray(%s:%s) failed: %s" % (e["file"], f["name"], ex))
                continue
            if arr.dtype.names:  # quantized types come back as structured arrays
                got = flat_values(enum, [int(v[0]) for v in arr.ravel()])
            elif arr.dtype == object:
                got = flat_values(enum, list(arr.ravel()))
            else:
                got = flat_values(enum, arr.ravel().tolist())
            if len(got) != len(f["values"]) or not all(
                    _close(a, b, enum) for a, b in zip(got, f["values"])):
                sys.exit("values mismatch: %s %s\n  got %s\n  want %s"
                         % (e["file"], f["name"], got, f["values"]))
            try:
                tf.io.parse_tensor(t.SerializeToString(), out_type=tf.dtypes.as_dtype(enum))
            except Exception as ex:
                first = str(ex).splitlines()[0]
                if "Could not find device" not in first and "kernel" not in first.lower():
                    sys.exit("tf.io.parse_tensor(%s:%s) failed: %s" % (e["file"], f["name"], first))
        print("%-32s %-8s %7d  %s" % (e["file"], e["kind"], len(data),
                                       hashlib.sha256(data).hexdigest()[:16]))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    print("tensorflow %s, tensorflow-serving-api %s, protobuf %s (%s backend), numpy %s" % (
        tf.__version__, _version("tensorflow-serving-api"), google.protobuf.__version__,
        api_implementation.Type(), np.__version__))
    check_upb_map_order()
    spec_vector()
    seed()
    dtypes_cases()
    strings_binary()
    scalar()
    zero_dim()
    short_values()
    splat()
    versions()
    newer_fields()
    response()
    faq()
    extra = serialize_tensor_files()
    write_all(extra)
    verify()
    print("\nrefused by TensorFlow (recorded; the typed form was made by hand where needed):")
    for name, call, err in REFUSALS:
        print("  %-20s %-40s %s" % (name, call, err))


if __name__ == "__main__":
    main()
