"""In one environment with tensorflow-cpu 2.21 and tensorflow-serving-api 2.21 (protobuf 7):
tfreq imports beside TensorFlow, and what tfreq.TFRequest writes for TF Serving is parsed by
predict_pb2 and tf.make_ndarray to the same tensors; and what TensorFlow writes, tfreq decodes
to the same arrays."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2

import tfreq

T = tfreq.TFRequest
RNG = np.random.default_rng(11)
CASES = [
    (T.DT_FLOAT, RNG.standard_normal(6).astype(np.float32)),
    (T.DT_DOUBLE, RNG.standard_normal(6)),
    (T.DT_INT8, np.array([-128, 127, 0, 1, 2, 3], np.int8)),
    (T.DT_INT16, np.array([-5, 5, 0, 1, 2, 3], np.int16)),
    (T.DT_INT32, np.array([-(2**31), 2**31 - 1, 0, 1, 2, 3], np.int32)),
    (T.DT_INT64, np.array([-(2**63), 2**63 - 1, 0, 1, 2, 3], np.int64)),
    (T.DT_UINT8, np.array([0, 255, 1, 2, 3, 4], np.uint8)),
    (T.DT_UINT16, np.array([0, 65535, 1, 2, 3, 4], np.uint16)),
    (22, np.array([0, 2**32 - 1, 1, 2, 3, 4], np.uint32)),
    (23, np.array([0, 2**64 - 1, 1, 2, 3, 4], np.uint64)),
    (T.DT_BOOL, np.array([True, False, True, False, True, True])),
    (19, np.array([0.5, -2.0, 65504.0, 0.0, 1.5, 3.0], np.float16)),
    (8, np.array([1 + 2j, -3j, 0, 1, 2, 3], np.complex64)),
    (18, np.array([1 + 2j, -3j, 0, 1, 2, 3], np.complex128)),
    (T.DT_STRING, np.array([b"a", b"", b"\xff", b"xyz", b"\x00", b"q"], dtype=object)),
]


@pytest.mark.parametrize("dtype, values", CASES, ids=[str(c[1].dtype) + str(c[0]) for c in CASES])
def test_tensorflow_reads_what_tfreq_writes(dtype, values):
    req = T("serving_default", wire="tf-serving")
    req.add_feed("x", [2, 3], dtype, values.reshape(2, 3))
    req.add_fetch("y")
    parsed = predict_pb2.PredictRequest.FromString(req.to_tf_serving_bytes("m"))
    assert parsed.model_spec.name == "m"
    assert parsed.model_spec.signature_name == "serving_default"
    assert list(parsed.output_filter) == ["y"]
    got = tf.make_ndarray(parsed.inputs["x"])
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got, values.reshape(2, 3))


@pytest.mark.parametrize("dtype, values", CASES, ids=[str(c[1].dtype) + str(c[0]) for c in CASES])
def test_tfreq_reads_what_tensorflow_writes(dtype, values):
    arr = values.reshape(2, 3)
    tf_dtype = tf.dtypes.as_dtype(dtype)
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "m"
    req.inputs["x"].CopyFrom(tf.make_tensor_proto(arr, dtype=tf_dtype))
    msg = tfreq.decode(req.SerializeToString())
    assert msg.wire == "tf-serving"
    got = msg.inputs["x"]
    assert got.shape == (2, 3)
    np.testing.assert_array_equal(got, tf.make_ndarray(req.inputs["x"]))


def test_bfloat16_matches_tensorflow():
    vals = np.array([1.0, 1.00390625, -2.5, 3.0e38, 1e-3, 7.0], np.float32)
    req = T("s")
    req.add_feed("b", [6], 14, vals)
    parsed = predict_pb2.PredictRequest.FromString(req.to_tf_serving_bytes("m"))
    ours = tf.make_ndarray(parsed.inputs["b"]).astype(np.float32)
    theirs = tf.cast(tf.constant(vals), tf.bfloat16).numpy().astype(np.float32)
    np.testing.assert_array_equal(ours, theirs)
