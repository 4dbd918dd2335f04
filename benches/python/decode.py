#!/usr/bin/env python3
"""Decoding TF Serving requests to numpy arrays, every fixed-width dtype and strings: tfreq
against TensorFlow, side by side in one run.

    "$(bash .ci/venv py-tf)" benches/python/decode.py [--runs N]

(python/tests/run.sh installs the wheel in that environment.) Each request is written by
TensorFlow itself (tf.make_tensor_proto, or a TensorProto's typed field filled by protobuf), and
each row times the whole reading of its bytes to an array:

    TensorFlow  predict_pb2.PredictRequest.FromString(b) + tf.make_ndarray(req.inputs["x"])
    tfreq       tfreq.decode(b).inputs["x"]

Before anything is timed, the two arrays are checked equal byte for byte, with the same dtype
and shape (quantized types: TensorFlow's structured dtype against its one field). Each figure is
the median of --runs runs after one warm-up run (time.perf_counter); the ratio is tfreq's median
over TensorFlow's (below 1: tfreq is faster). The goal of every row is a ratio of at most 1.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import tensor_pb2  # noqa: E402
from tensorflow_serving.apis import predict_pb2  # noqa: E402

import tfreq  # noqa: E402

SHAPE = (58, 128, 64)  # 475,136 elements
RNG = np.random.default_rng(36)


def request(t):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "m"
    r.model_spec.signature_name = "serving_default"
    r.inputs["x"].CopyFrom(t)
    return r.SerializeToString()


def content(arr):
    """The request as TensorFlow's C++ writes a tensor (tf.io.serialize_tensor:
    Tensor::AsProtoTensorContent), or, for the dtypes with no CPU kernel for it (the 8- and
    4-bit types), the same TensorProto by hand: the array's bytes as tensor_content."""
    try:
        t = tensor_pb2.TensorProto.FromString(tf.io.serialize_tensor(tf.constant(arr)).numpy())
    except Exception:
        t = tensor_pb2.TensorProto(dtype=tf.dtypes.as_dtype(arr.dtype).as_datatype_enum, tensor_content=arr.tobytes())
        for d in arr.shape:
            t.tensor_shape.dim.add(size=d)
    assert t.tensor_content, arr.dtype
    return request(t)


def field(dtype, shape, name, values):
    """A TensorProto whose values are in the typed field `name` (what clients that fill
    float_val / int_val / half_val ... write)."""
    t = tensor_pb2.TensorProto(dtype=dtype)
    for d in shape:
        t.tensor_shape.dim.add(size=d)
    if name == "float8_val":  # one bytes field
        t.float8_val = values
    else:
        getattr(t, name).extend(values)
    return request(t)


def cases():
    n = int(np.prod(SHAPE))
    f32 = RNG.standard_normal(n).astype(np.float32).reshape(SHAPE)
    ints = RNG.integers(-100, 100, n)
    words = [b"tok%d" % k for k in RNG.integers(0, 30000, 992)]
    small = (1, 4096)
    s = RNG.standard_normal(4096).astype(np.float32)
    yield "bfloat16 [58,128,64] tensor_content", content(f32.astype(ml_dtypes.bfloat16))
    strings = request(tf.make_tensor_proto(np.array(words, dtype=object).reshape(8, 124)))
    yield "DT_STRING 992 tokens (string_val)", strings
    yield "half [58,128,64] tensor_content", content(f32.astype(np.float16))
    yield "float8_e4m3fn [58,128,64] tensor_content", content(f32.astype(ml_dtypes.float8_e4m3fn))
    yield "int4 [58,128,64] tensor_content", content((ints % 8).astype(ml_dtypes.int4).reshape(SHAPE))
    yield "complex64 [58,128,64] tensor_content", content((f32 + 1j * f32).astype(np.complex64))
    yield "bool [58,128,64] tensor_content", content((ints > 0).reshape(SHAPE))
    yield "int8 [58,128,64] tensor_content", content(ints.astype(np.int8).reshape(SHAPE))
    yield "float32 [1,4096] float_val", field(1, small, "float_val", s.tolist())
    yield "int32 [1,4096] int_val", field(3, small, "int_val", ints[:4096].tolist())
    yield "int64 [1,4096] int64_val", field(9, small, "int64_val", ints[:4096].tolist())
    yield "bool [1,4096] bool_val", field(10, small, "bool_val", (ints[:4096] > 0).tolist())
    bf = s.astype(ml_dtypes.bfloat16).view(np.uint16)
    yield "bfloat16 [1,4096] half_val", field(14, small, "half_val", bf.tolist())
    yield "half [1,4096] half_val", field(19, small, "half_val", s.astype(np.float16).view(np.uint16).tolist())
    yield "float8_e5m2 [1,4096] float8_val", field(
        24, small, "float8_val", s.astype(ml_dtypes.float8_e5m2).tobytes()
    )


def tfreq_decode_told(b):
    return tfreq.decode(b, wire="tf-serving", kind="request").inputs["x"]


def tf_decode(b):
    return tf.make_ndarray(predict_pb2.PredictRequest.FromString(b).inputs["x"])


def tfreq_decode(b):
    return tfreq.decode(b).inputs["x"]


def same(ours, theirs):
    want = theirs.dtype
    if want.names:  # TensorFlow's quantized types: one field
        want = want[0]
    assert ours.dtype == want, (ours.dtype, want)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if ours.dtype == object:
        assert ours.tolist() == theirs.tolist()
    else:
        assert ours.tobytes() == theirs.tobytes()


def median(f, b, runs):
    f(b)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f(b)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=31)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{'request (TF Serving, written by TensorFlow)':<42} {'bytes':>10} {'TensorFlow':>11} {'tfreq':>11} {'ratio':>7}")
    worst = 0.0
    for label, b in cases():
        same(tfreq_decode(b), tf_decode(b))
        a = median(tf_decode, b, args.runs)
        c = median(tfreq_decode, b, args.runs)
        worst = max(worst, c / a)
        print(f"{label:<42} {len(b):>10,} {a * 1e3:>8.3f} ms {c * 1e3:>8.3f} ms {c / a:>7.3f}")
        if label.startswith("DT_STRING"):
            # The same with the wire format and kind given: no detection over the readings.
            c = median(tfreq_decode_told, b, args.runs)
            print(f"{'  the same, decode(b, wire=, kind=) given':<42} {'':>10} {a * 1e3:>8.3f} ms {c * 1e3:>8.3f} ms {c / a:>7.3f}")
    print(f"largest ratio tfreq / TensorFlow: {worst:.3f} (goal: at most 1)")


if __name__ == "__main__":
    main()
