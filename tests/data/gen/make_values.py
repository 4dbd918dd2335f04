#!/usr/bin/env python3
"""Requests whose values and shapes TensorFlow reads in a way worth pinning, with what
TensorFlow 2.21 answered for each, and ml_dtypes' tables for the 8- and 4-bit floats.
Pins: requirements-tf.txt (tensorflow 2.21, tensorflow-serving-api 2.21, ml_dtypes).

    "$(bash .ci/venv tf)" tests/data/gen/make_values.py

Writes tests/data/values/:
- int_out_of_range_tfs.bin: a TF Serving PredictRequest whose int_val / half_val hold values
  outside their dtype (typed fields by hand: tf.make_tensor_proto refuses them). For each input
  the manifest records what tf.raw_ops.ParseTensor (C++ Tensor::FromProto, as TF Serving reads
  a request) and tf.make_ndarray give.
- shape_*.bin: one DT_FLOAT input each, with a shape at TensorFlow's limits; the manifest records
  whether ParseTensor takes it ("ok") or the first words of its error.
- splat_warmup.bin / full_prod.bin / full_prod_other.bin: the same [2, 3] float tensor as one
  float_val (TensorFlow repeats the last value) and as tensor_content from
  tf.make_tensor_proto(numpy array), and one with another element; plus the int32 pair
  splat_int_warmup.bin / full_int_prod.bin. The manifest records whether ParseTensor gives equal
  tensors.
- warmup_1000.tfrecord / warmup_1001.tfrecord: TF Serving warm-up files (tf.io.TFRecordWriter of
  PredictionLog{predict_log}) with 1000 and 1001 records (WarmupConsts::kMaxNumRecords is 1000).
- ml_dtypes.json: for each float8 / float4 type, the value of every bit pattern (repr of the
  Python float) and the bit pattern ml_dtypes rounds a list of float32 and float64 inputs to
  (bit patterns of the inputs in hex), from numpy's astype.
- manifest.json: the files and TensorFlow's answers.

Deterministic: a re-run rewrites identical bytes.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import struct  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_values.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "values"
manifest = []


def tensor(dtype, dims, **fields):
    t = tensor_pb2.TensorProto(dtype=dtype)
    for d in dims:
        t.tensor_shape.dim.add(size=d)
    for k, v in fields.items():
        if k == "tensor_content":
            t.tensor_content = v
        else:
            getattr(t, k).extend(v)
    return t


def request(inputs, model="m", fetches=("y",)):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = model
    r.model_spec.signature_name = "serving_default"
    for k, v in inputs:
        r.inputs[k].CopyFrom(v)
    r.output_filter.extend(fetches)
    return r


def parse(t):
    """What C++ Tensor::FromProto gives: a list of values, or the error's first words."""
    try:
        v = tf.raw_ops.ParseTensor(serialized=t.SerializeToString(),
                                   out_type=tf.dtypes.as_dtype(t.dtype))
    except tf.errors.InvalidArgumentError as e:
        m = e.message
        i = m.find("Cannot parse tensor from proto")
        return "error: " + (m[i:i + 30] if i >= 0 else m.splitlines()[0][:120])
    if v.shape.rank > 8 or max(v.shape.as_list(), default=0) > 64 or v.shape.num_elements() > 64:
        return "ok"
    return v.numpy().tolist()


def make_ndarray(t):
    try:
        return tf.make_ndarray(t).tolist()
    except Exception as e:  # noqa: BLE001
        return "error: %s: %s" % (type(e).__name__, e)


def write(name, req, note, **extra):
    data = req.SerializeToString()
    (OUT / name).write_bytes(data)
    back = predict_pb2.PredictRequest()
    back.ParseFromString(data)
    assert back.SerializeToString() == data, name
    e = {"file": name, "note": note}
    e.update(extra)
    manifest.append(e)


def out_of_range():
    D = types_pb2
    cases = [
        ("i8", tensor(D.DT_INT8, [2], int_val=[300, -200])),
        ("u8", tensor(D.DT_UINT8, [2], int_val=[300, -1])),
        ("i16", tensor(D.DT_INT16, [1], int_val=[70000])),
        ("u16", tensor(D.DT_UINT16, [2], int_val=[70000, -1])),
        ("qi8", tensor(D.DT_QINT8, [1], int_val=[300])),
        ("qu8", tensor(D.DT_QUINT8, [1], int_val=[300])),
        ("qi16", tensor(D.DT_QINT16, [1], int_val=[40000])),
        ("qu16", tensor(D.DT_QUINT16, [1], int_val=[-1])),
        ("i4", tensor(D.DT_INT4, [3], int_val=[15, 9, -9])),
        ("u4", tensor(D.DT_UINT4, [3], int_val=[16, 17, -1])),
        ("half", tensor(D.DT_HALF, [1], half_val=[0x13C00])),
        ("ok_i8", tensor(D.DT_INT8, [2], int_val=[-128, 127])),
    ]
    tf_parse = {k: parse(v) for k, v in cases}
    tf_make_ndarray = {k: make_ndarray(v) for k, v in cases}
    write("int_out_of_range_tfs.bin", request(cases),
          "int_val / half_val values outside their dtype, by hand; ok_i8 is in range.",
          tf_parse=tf_parse, tf_make_ndarray=tf_make_ndarray)


def shapes():
    cases = {
        "shape_count_overflow": [2**63 - 1, 2],
        "shape_product_2_63": [2**62, 2],
        "shape_overflow_before_zero": [2] * 63 + [0],
        "shape_rank_255": [1] * 255,
        "shape_rank_254": [1] * 254,
        "shape_zero_first": [0, 2**62, 4],
        "shape_2_62_then_zero": [2] * 62 + [0],
    }
    for name, dims in cases.items():
        t = tensor(types_pb2.DT_FLOAT, dims)
        write(name + ".bin", request([("x", t)]),
              "one DT_FLOAT input x with no values, rank %d" % len(dims),
              dims=len(dims) if len(dims) > 8 else dims, tf_parse={"x": parse(t)})


def splat():
    full = np.full((2, 3), 0.5, np.float32)
    pairs = [
        ("splat_warmup.bin", tensor(types_pb2.DT_FLOAT, [2, 3], float_val=[0.5]),
         "x [2, 3] as one float_val 0.5 (TensorFlow repeats the last value)"),
        ("full_prod.bin", tf.make_tensor_proto(full),
         "x [2, 3] all 0.5 as tensor_content, by tf.make_tensor_proto(numpy array)"),
        ("full_prod_other.bin", tf.make_tensor_proto(np.array([[0.5] * 3, [0.5, 0.5, 0.25]], np.float32)),
         "x [2, 3] all 0.5 but the last (0.25), by tf.make_tensor_proto(numpy array)"),
        ("splat_int_warmup.bin", tensor(types_pb2.DT_INT32, [4], int_val=[1, 2]),
         "ids [4] as int_val [1, 2] (TensorFlow repeats the last value: 1, 2, 2, 2)"),
        ("full_int_prod.bin", tf.make_tensor_proto(np.array([1, 2, 2, 2], np.int32)),
         "ids [4] = 1, 2, 2, 2 as tensor_content, by tf.make_tensor_proto(numpy array)"),
    ]
    parsed = {}
    for name, t, note in pairs:
        key = "ids" if "int" in name else "x"
        parsed[name] = parse(t)
        write(name, request([(key, t)]), note, tf_parse={key: parsed[name]})
    manifest.append({"file": "splat_equal", "note": "ParseTensor equality of the pairs",
                     "tf_equal": {
                         "splat_warmup.bin=full_prod.bin": parsed["splat_warmup.bin"] == parsed["full_prod.bin"],
                         "splat_warmup.bin=full_prod_other.bin":
                             parsed["splat_warmup.bin"] == parsed["full_prod_other.bin"],
                         "splat_int_warmup.bin=full_int_prod.bin":
                             parsed["splat_int_warmup.bin"] == parsed["full_int_prod.bin"]}})


def warmups():
    for n in (1000, 1001):
        name = "warmup_%d.tfrecord" % n
        with tf.io.TFRecordWriter(str(OUT / name)) as w:
            for i in range(n):
                r = predict_pb2.PredictRequest()
                r.model_spec.name = "half_plus_two"
                r.inputs["x"].CopyFrom(tf.make_tensor_proto([[float(i)]], tf.float32))
                log = prediction_log_pb2.PredictionLog(
                    predict_log=prediction_log_pb2.PredictLog(request=r))
                w.write(log.SerializeToString())
        count = sum(1 for _ in tf.data.TFRecordDataset(str(OUT / name)))
        manifest.append({"file": name, "records": count,
                         "note": "%d predict_log records for half_plus_two, x = [[i]]" % n})


FLOATS = ["float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
          "float8_e5m2fnuz", "float4_e2m1fn"]


def f32_hex(x):
    return "%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def f64_hex(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]


def tables():
    out = {}
    for name in FLOATS:
        t = getattr(ml_dtypes, name)
        bits = 4 if name.startswith("float4") else 8
        codes = np.arange(1 << bits, dtype=np.uint8)
        vals = codes.view(t) if bits == 8 else codes.astype(np.uint8)
        if bits == 4:
            vals = np.array([np.uint8(c) for c in codes]).view(np.uint8)
            vals = np.frombuffer(bytes(codes), dtype=t)
        as64 = vals.astype(np.float64)
        values = [repr(float(v)) for v in as64]
        finite = sorted({float(v) for v in as64 if np.isfinite(v)})
        xs = set()
        for v in finite:
            xs.add(v)
        for a, b in zip(finite, finite[1:]):
            m = (a + b) / 2
            xs.update([m, float(np.nextafter(np.float32(m), np.float32(np.inf))),
                       float(np.nextafter(np.float32(m), np.float32(-np.inf)))])
        top = finite[-1]
        xs.update([top * 1.0625, top * 1.125, top * 1.25, top * 2, 1e30, -1e30, 1e-30, -1e-30,
                   float("inf"), float("-inf"), float("nan"), 0.0, -0.0])
        f32 = sorted(xs, key=lambda v: (np.isnan(v), v if not np.isnan(v) else 0))
        a32 = np.array(f32, np.float32)
        r32 = np.frombuffer(a32.astype(t).tobytes(), np.uint8)
        # float64 inputs just off each midpoint, closer than float32 can say: rounding
        # directly from float64 differs from rounding through float32 there.
        x64 = []
        for a, b in zip(finite, finite[1:]):
            m = (a + b) / 2
            x64 += [float(np.nextafter(m, np.inf)), float(np.nextafter(m, -np.inf))]
        a64 = np.array(x64, np.float64)
        r64 = np.frombuffer(a64.astype(t).tobytes(), np.uint8)
        out[name] = {
            "bits": bits,
            "values": values,
            "round_f32": [[f32_hex(float(x)), int(c)] for x, c in zip(a32, r32)],
            "round_f64": [[f64_hex(float(x)), int(c)] for x, c in zip(a64, r64)],
        }
    (OUT / "ml_dtypes.json").write_text(json.dumps(
        {"ml_dtypes": ml_dtypes.__version__, "tables": out}, indent=0) + "\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    out_of_range()
    shapes()
    splat()
    warmups()
    tables()
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for e in manifest:
        print(e["file"], json.dumps({k: v for k, v in e.items() if k.startswith("tf_") or k == "records"})[:200])


if __name__ == "__main__":
    main()
