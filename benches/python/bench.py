#!/usr/bin/env python3
"""Times the Python package against the references its users have today.

    "$(bash .ci/venv py-eas)" benches/python/bench.py sdk   # tfreq vs eas_prediction
    "$(bash .ci/venv py-tf)"  benches/python/bench.py tf    # tfreq vs TensorFlow's protobuf

(python/tests/run.sh installs the wheel in both environments.) Each figure is the median of
several runs of the whole operation in this process (time.perf_counter), after one warm-up run;
the outputs are checked equal before anything is timed.

sdk: TFRequest.add_feed of a 1M-element float32 numpy array + to_string(), tfreq against
     eas_prediction 0.36 (pure-Python protobuf 3.20.3, as the SDK pins it). Goal: >= 100x.
tf:  the same request for TF Serving, tfreq's to_tf_serving_bytes() against
     tf.make_tensor_proto + PredictRequest.SerializeToString() (goal: not slower), and
     decoding a 4 MB request to a numpy array: tfreq.decode(...).inputs against
     PredictRequest.FromString + tf.make_ndarray (goal: faster; tfreq's is a view).
"""

import statistics
import sys
import time

import numpy as np

import tfreq

N = 1 << 20


def median_time(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def show(label, m):
    print(f"  {label:<58} median {m[0] * 1e3:9.3f} ms  (min {m[1] * 1e3:.3f}, max {m[2] * 1e3:.3f})")


def bench_sdk():
    from eas_prediction import TFRequest as Sdk

    arr = np.random.default_rng(1).standard_normal(N).astype(np.float32)

    def sdk():
        r = Sdk("serving_default")
        r.add_feed("x", [1, N], Sdk.DT_FLOAT, arr)
        return r.to_string()

    def ours():
        r = tfreq.TFRequest("serving_default")
        r.add_feed("x", [1, N], tfreq.TFRequest.DT_FLOAT, arr)
        return r.to_string()

    assert sdk() == ours()
    print(f"add_feed of {N:,} float32 (numpy) + to_string(), EAS PredictRequest:")
    a = median_time(sdk, 3)
    b = median_time(ours, 21)
    show("eas_prediction 0.36 (protobuf 3.20.3, pure Python)", a)
    show("tfreq.TFRequest", b)
    print(f"  tfreq is {a[0] / b[0]:.0f}x faster")


def bench_tf():
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    arr = np.random.default_rng(1).standard_normal(N).astype(np.float32).reshape(1, N)

    def tf_build():
        req = predict_pb2.PredictRequest()
        req.model_spec.name = "m"
        req.model_spec.signature_name = "serving_default"
        req.inputs["x"].CopyFrom(tf.make_tensor_proto(arr))
        return req.SerializeToString()

    def ours():
        r = tfreq.TFRequest("serving_default", wire="tf-serving")
        r.add_feed("x", [1, N], tfreq.TFRequest.DT_FLOAT, arr)
        return r.to_tf_serving_bytes("m")

    a_bytes, b_bytes = tf_build(), ours()
    np.testing.assert_array_equal(
        tf.make_ndarray(predict_pb2.PredictRequest.FromString(b_bytes).inputs["x"]), arr
    )
    print(f"build a TF Serving PredictRequest of {N:,} float32 (numpy), {len(b_bytes):,} bytes:")
    a = median_time(tf_build, 21)
    b = median_time(ours, 21)
    show("tf.make_tensor_proto + SerializeToString (protobuf upb)", a)
    show("tfreq.TFRequest + to_tf_serving_bytes", b)
    print(f"  ratio tfreq / TensorFlow: {b[0] / a[0]:.2f}")

    def tf_decode():
        return tf.make_ndarray(predict_pb2.PredictRequest.FromString(a_bytes).inputs["x"])

    def ours_decode():
        return tfreq.decode(a_bytes).inputs["x"]

    np.testing.assert_array_equal(tf_decode(), ours_decode())
    print(f"decode that request ({len(a_bytes):,} bytes) to a numpy array:")
    a = median_time(tf_decode, 21)
    b = median_time(ours_decode, 21)
    show("PredictRequest.FromString + tf.make_ndarray", a)
    show("tfreq.decode(...).inputs (a view of the bytes)", b)
    print(f"  ratio tfreq / TensorFlow: {b[0] / a[0]:.2f}")


if __name__ == "__main__":
    {"sdk": bench_sdk, "tf": bench_tf}[sys.argv[1] if len(sys.argv) > 1 else "sdk"]()
