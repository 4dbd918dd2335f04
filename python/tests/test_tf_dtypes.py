"""tfreq's arrays against TensorFlow's reading, every dtype with a numpy or ml_dtypes type, byte
for byte (NaN payloads included): TF Serving requests whose tensors TensorFlow wrote
(tf.io.serialize_tensor: C++ Tensor::AsProtoTensorContent), or whose tensor_content / typed
value field protobuf filled, decoded by tfreq.decode(...).inputs and by
PredictRequest.FromString + tf.make_ndarray. Runs in the py-tf environment (TensorFlow 2.21,
ml_dtypes).

Also: tensor_content and packed float_val / double_val / float8_val are views of the bytes
decoded (no copy), other fields one array made in one pass; without ml_dtypes, bfloat16 and the
8- and 4-bit floats come as float32 and the 4- and 2-bit integers as int8 / uint8."""

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2
from tensorflow_serving.apis import predict_pb2

import tfreq

RNG = np.random.default_rng(36)
SHAPE = (2, 3, 4)
N = 24


def _bits(ty, words):
    return np.array(words, dtype=ty)


def values(n):
    """24 values of TensorFlow's numpy type for dtype number n: random, with the edges of
    the type and, for floats, NaNs with payloads, signed zeros and infinities."""
    d = tf.dtypes.as_dtype(n)
    nd = np.dtype(d.as_numpy_dtype)
    if nd.names:  # quantized: TensorFlow's structured type of one field
        nd = nd[0]
    if nd == np.bool_:
        return RNG.integers(0, 2, N).astype(bool)
    if nd.kind in "iu" or nd.name in ("int4", "uint4", "int2", "uint2"):
        info = ml_dtypes.iinfo(nd) if nd.name in ("int4", "uint4", "int2", "uint2") else np.iinfo(nd)
        v = RNG.integers(int(info.min), int(info.max), N, endpoint=True, dtype=np.uint64 if info.min == 0 else np.int64)
        v[:2] = [info.min, info.max]
        return v.astype(nd)
    if nd.kind == "c":
        part = np.float32 if nd == np.complex64 else np.float64
        re, im = values_of_float(np.dtype(part)), values_of_float(np.dtype(part))[::-1]
        out = np.empty(N, nd)
        out.real, out.imag = re, im
        return out
    return values_of_float(nd)


def values_of_float(nd):
    if nd.itemsize == 1:  # the 8- and 4-bit floats: every kind of bit pattern
        return RNG.integers(0, 256, N, dtype=np.uint8).view(nd)
    if nd == np.float32:
        nans = _bits(np.uint32, [0x7FC12345, 0xFFC00001, 0x7F800000, 0x80000000]).view(nd)
    elif nd == np.float64:
        nans = _bits(np.uint64, [0x7FF8000000012345, 0xFFF8000000000001, 0x7FF0000000000000, 0x8000000000000000]).view(nd)
    else:  # half and bfloat16: 16 bits
        nans = _bits(np.uint16, [0x7E01 if nd == np.float16 else 0x7FC1, 0xFE01 if nd == np.float16 else 0xFFC1, 0, 0x8000]).view(nd)
    out = RNG.standard_normal(N).astype(np.float32).astype(nd)
    out[:4] = nans
    return out


# Every dtype number with a numpy type in TensorFlow 2.21 (20 and 21 are resource and
# variant; 7, strings, is tested below).
NUMERIC = [1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 22, 23] + list(range(24, 34))
# The dtypes tf.io.serialize_tensor writes (the others have no CPU kernel): their
# tensor_content is TensorFlow's own; the others' is the array's bytes, as
# tf.make_ndarray reads it.
SERIALIZED = [1, 2, 3, 4, 5, 6, 8, 9, 10, 14, 17, 18, 19, 22, 23]
# The typed field each dtype's values are in, and how protobuf takes them.
FIELDS = {
    1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val", 6: "int_val",
    9: "int64_val", 10: "bool_val", 11: "int_val", 12: "int_val", 13: "int_val", 15: "int_val",
    16: "int_val", 17: "int_val", 19: "half_val", 14: "half_val", 22: "uint32_val",
    23: "uint64_val", 8: "scomplex_val", 18: "dcomplex_val", 24: "float8_val",
    25: "float8_val", 33: "float8_val", 29: "int_val", 30: "int_val", 31: "int_val", 32: "int_val",
}


def request(t):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "m"
    r.inputs["x"].CopyFrom(t)
    return r.SerializeToString()


def content_tensor(n, arr):
    if n in SERIALIZED:
        t = tensor_pb2.TensorProto.FromString(
            tf.io.serialize_tensor(tf.constant(arr.reshape(SHAPE), dtype=tf.dtypes.as_dtype(n))).numpy()
        )
        assert t.tensor_content
        return t
    t = tensor_pb2.TensorProto(dtype=n, tensor_content=arr.tobytes())
    for d in SHAPE:
        t.tensor_shape.dim.add(size=d)
    return t


def field_tensor(n, arr, count=N):
    """A tensor of SHAPE whose first `count` values are in the dtype's typed field."""
    t = tensor_pb2.TensorProto(dtype=n)
    for d in SHAPE:
        t.tensor_shape.dim.add(size=d)
    name = FIELDS[n]
    a = arr[:count]
    if name == "half_val":
        t.half_val.extend(a.view(np.uint16).tolist())
    elif name == "float8_val":
        t.float8_val = a.tobytes()
    elif name in ("scomplex_val", "dcomplex_val"):
        getattr(t, name).extend(np.stack([a.real, a.imag], axis=1).reshape(-1).tolist())
    elif a.dtype.itemsize == 1 and a.dtype.name in ("int4", "uint4", "int2", "uint2"):
        t.int_val.extend(a.astype(np.int64).tolist())
    else:
        getattr(t, name).extend(a.tolist())
    return t


def same_as_tensorflow(b, t):
    ours = tfreq.decode(b).inputs["x"]
    theirs = tf.make_ndarray(predict_pb2.PredictRequest.FromString(b).inputs["x"])
    want = theirs.dtype[0] if theirs.dtype.names else theirs.dtype
    assert ours.dtype == want, (ours.dtype, want)
    assert ours.shape == theirs.shape == SHAPE
    assert ours.tobytes() == theirs.tobytes(), (ours.tobytes().hex(), theirs.tobytes().hex())
    return ours


def _base(arr):
    b = arr
    while b is not None and not isinstance(b, bytes):
        b = b.base
    return b


@pytest.mark.parametrize("n", NUMERIC, ids=lambda n: tf.dtypes.as_dtype(n).name)
def test_tensor_content_is_tensorflows_array_and_a_view(n):
    arr = values(n)
    t = content_tensor(n, arr)
    b = request(t)
    ours = same_as_tensorflow(b, t)
    # A read-only view of the bytes decoded.
    assert not ours.flags.owndata and not ours.flags.writeable
    assert _base(ours) is b


# The typed fields tf.make_ndarray reads (it has no reading of float8_val for the fnuz
# types, nor of int_val for quantized types beyond what numpy's int types hold).
FIELD_DTYPES = sorted(n for n in FIELDS)


@pytest.mark.parametrize("n", FIELD_DTYPES, ids=lambda n: tf.dtypes.as_dtype(n).name)
@pytest.mark.parametrize("count", [N, 5, 0], ids=["full", "repeat-last", "defaults"])
def test_value_fields_are_tensorflows_array(n, count):
    arr = values(n)
    ours = same_as_tensorflow(request(field_tensor(n, arr, count)), None)
    # Packed float_val / double_val / float8_val holding every value: a view; others one
    # array of the bytes made (none is a list).
    if count == N and FIELDS[n] in ("float_val", "double_val", "float8_val", "scomplex_val", "dcomplex_val"):
        assert not ours.flags.owndata and _base(ours) is not None


def test_strings_are_tensorflows_object_array():
    words = [b"tok%d" % k for k in RNG.integers(0, 30000, N - 2)] + [b"", b"\xff\x00"]
    b = request(tf.make_tensor_proto(np.array(words, dtype=object).reshape(SHAPE)))
    ours = tfreq.decode(b).inputs["x"]
    theirs = tf.make_ndarray(predict_pb2.PredictRequest.FromString(b).inputs["x"])
    assert ours.dtype == theirs.dtype == object and ours.shape == theirs.shape == SHAPE
    assert ours.tolist() == theirs.tolist()
    assert all(type(x) is bytes for x in ours.reshape(-1))
    # Fewer strings than the shape: the last repeated, as TensorFlow does.
    t = tensor_pb2.TensorProto(dtype=7, string_val=[b"a", b"bc"])
    t.tensor_shape.dim.add(size=4)
    b = request(t)
    ours = tfreq.decode(b).inputs["x"]
    assert ours.tolist() == tf.make_ndarray(predict_pb2.PredictRequest.FromString(b).inputs["x"]).tolist()
    assert ours.tolist() == [b"a", b"bc", b"bc", b"bc"]


@pytest.mark.parametrize("n", [14, 24, 25, 26, 27, 28, 33, 29, 30, 31, 32], ids=lambda n: tf.dtypes.as_dtype(n).name)
def test_without_ml_dtypes_values_are_exact_in_a_wider_type(n, monkeypatch):
    arr = values(n)
    b = request(content_tensor(n, arr))
    theirs = tf.make_ndarray(predict_pb2.PredictRequest.FromString(b).inputs["x"])
    monkeypatch.setattr(tfreq, "_ml", None)
    ours = tfreq.decode(b).inputs["x"]
    if n in (29, 31):
        want = theirs.astype(np.int8)
    elif n in (30, 32):
        want = theirs.astype(np.uint8)
    else:
        want = theirs.astype(np.float32)
    assert ours.dtype == want.dtype and ours.shape == SHAPE
    if n == 14:
        # bfloat16 is the upper half of a float32: NaN payloads kept bit for bit.
        assert ours.view(np.uint32).reshape(-1).tolist() == [int(x) << 16 for x in theirs.view(np.uint16).reshape(-1)]
    ok = (ours == want) | (np.isnan(ours) & np.isnan(want)) if ours.dtype.kind == "f" else ours == want
    assert ok.all(), (ours, want)
