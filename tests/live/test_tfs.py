#!/usr/bin/env python3
"""TF Serving's clients against the live server: the tensorflow-serving-api gRPC stub and REST.

    TFREQ_LIVE_READY=/path/to/ready.json "$(bash .ci/venv live)" -m unittest tests/live/test_tfs.py

The server (tests/live/server.py) must serve faq, half_plus_two and seed from tests/data/models/.
Expected values come from TensorFlow itself (the models' own arithmetic, y = 0.5 * x + 2) and from
the committed files that make_models.py wrote with TensorFlow (models/NAME.metadata.json).
"""

import json
import os
import ssl
import unittest
import urllib.error
import urllib.request
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow_serving.apis import (get_model_metadata_pb2, predict_pb2,  # noqa: E402
                                     prediction_service_pb2_grpc)

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
READY = json.loads(Path(os.environ["TFREQ_LIVE_READY"]).read_text())
TIMEOUT = 30


def stub():
    ch = grpc.insecure_channel("127.0.0.1:%d" % READY["grpc"])
    return prediction_service_pb2_grpc.PredictionServiceStub(ch)


def hpt_request(values, **spec):
    req = predict_pb2.PredictRequest()
    req.model_spec.name = spec.get("name", "half_plus_two")
    req.model_spec.signature_name = spec.get("signature", "serving_default")
    req.inputs["x"].CopyFrom(tf.make_tensor_proto(values, dtype=tf.float32))
    return req


def faq_request(filter_=()):
    req = predict_pb2.PredictRequest.FromString((DATA / "tfs" / "faq_warmup.bin").read_bytes())
    del req.output_filter[:]
    req.output_filter.extend(filter_)
    return req


def rest(method, path, body=None):
    url = "http://127.0.0.1:%d%s" % (READY["http"], path)
    data = None if body is None else (body if isinstance(body, bytes) else body.encode())
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


class Grpc(unittest.TestCase):
    def test_half_plus_two(self):
        resp = stub().Predict(hpt_request([[1.0], [2.0], [5.0]]), timeout=TIMEOUT)
        self.assertEqual(list(resp.outputs), ["y"])
        y = tf.make_ndarray(resp.outputs["y"])
        np.testing.assert_allclose(y, [[2.5], [3.0], [4.5]])
        # Tensor::AsProtoField: values in float_val, not tensor_content
        self.assertEqual(list(resp.outputs["y"].float_val), [2.5, 3.0, 4.5])
        self.assertEqual(resp.model_spec.name, "half_plus_two")
        self.assertEqual(resp.model_spec.version.value, 1)
        self.assertEqual(resp.model_spec.signature_name, "serving_default")

    def test_faq_output_filter(self):
        s = stub()
        every = s.Predict(faq_request(), timeout=TIMEOUT)
        self.assertEqual(sorted(every.outputs), ["model_version_id", "sorted_labels", "sorted_probs"])
        self.assertEqual(every.outputs["model_version_id"].string_val, [b"faq-model_a-v1"])
        one = s.Predict(faq_request(["sorted_probs"]), timeout=TIMEOUT)
        self.assertEqual(list(one.outputs), ["sorted_probs"])
        self.assertEqual(one.outputs["sorted_probs"], every.outputs["sorted_probs"])

    def test_executor_cache_is_visible(self):
        # A fetch set nobody asked for before builds a new executor; the same set again does not.
        def built():
            stats = json.loads(rest("GET", "/_live/stats")[1])
            return [sorted(e["fetches"]) for e in stats["models"]["faq"]["executors"]]
        key = ["StatefulPartitionedCall:0", "StatefulPartitionedCall:1"]
        was_built = key in built()
        s = stub()
        _, first = s.Predict.with_call(faq_request(["sorted_labels", "model_version_id"]),
                                       timeout=TIMEOUT)
        _, again = s.Predict.with_call(faq_request(["model_version_id", "sorted_labels"]),
                                       timeout=TIMEOUT)
        new = [dict(c.trailing_metadata())["x-live-new-executor"] for c in (first, again)]
        self.assertEqual(new, ["false" if was_built else "true", "false"])
        self.assertIn(key, built())

    def test_reload_forgets_the_executors(self):
        def new_executor():
            _, call = stub().Predict.with_call(hpt_request([[1.0]]), timeout=TIMEOUT)
            return dict(call.trailing_metadata())["x-live-new-executor"]
        new_executor()
        self.assertEqual(new_executor(), "false")
        st, body, _ = rest("POST", "/_live/reload/half_plus_two")
        self.assertEqual(st, 200, body)
        self.assertEqual(new_executor(), "true")  # a new session: TensorFlow builds it again
        self.assertEqual(new_executor(), "false")

    def assert_status(self, req, code, message):
        with self.assertRaises(grpc.RpcError) as cm:
            stub().Predict(req, timeout=TIMEOUT)
        self.assertEqual(cm.exception.code(), code)
        self.assertEqual(cm.exception.details(), message)

    def test_errors_as_tf_serving_words_them(self):
        self.assert_status(hpt_request([[1.0]], name="nope"), grpc.StatusCode.NOT_FOUND,
                           "Servable not found for request: Latest(nope)")
        req = hpt_request([[1.0]])
        req.model_spec.version.value = 7
        self.assert_status(req, grpc.StatusCode.NOT_FOUND,
                           "Servable not found for request: Specific(half_plus_two, 7)")
        self.assert_status(hpt_request([[1.0]], signature="nope"),
                           grpc.StatusCode.FAILED_PRECONDITION,
                           'Serving signature key "nope" not found.')
        req = faq_request()
        del req.inputs["model_id"]
        self.assert_status(req, grpc.StatusCode.INVALID_ARGUMENT,
                           "input size does not match signature: 2!=3 len({input_holder,threshold})"
                           " != len({input_holder,model_id,threshold}). Sent extra: {}. Missing but"
                           " required: {model_id}.")
        self.assert_status(faq_request(["nope"]), grpc.StatusCode.INVALID_ARGUMENT,
                           "output tensor alias not found in signature: nope Outputs expected to be"
                           " in the set {model_version_id,sorted_labels,sorted_probs}.")
        self.assert_status(faq_request(["sorted_probs", "sorted_probs"]),
                           grpc.StatusCode.INVALID_ARGUMENT,
                           "duplicate output tensor alias: sorted_probs")

    def test_wrong_dtype_is_tensorflows_own_error(self):
        req = faq_request()
        req.inputs["threshold"].CopyFrom(tf.make_tensor_proto(0.5, dtype=tf.float64))
        with self.assertRaises(grpc.RpcError) as cm:
            stub().Predict(req, timeout=TIMEOUT)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        # DirectSession's own words (no Python-side cast hides the mismatch)
        self.assertRegex(cm.exception.details(),
                         r"^Expects arg\[\d\] to be float but double is provided$")

    def test_the_pages_warm_up_request(self):
        # the seed's request as TF Serving bytes (make_tfs.py), addressed to the seed model
        req = predict_pb2.PredictRequest.FromString((DATA / "tfs" / "seed_typed.bin").read_bytes())
        req.model_spec.name = "seed"
        resp = stub().Predict(req, timeout=TIMEOUT)
        self.assertEqual(sorted(resp.outputs), ["sorted_labels", "sorted_probs"])
        self.assertEqual(tf.make_ndarray(resp.outputs["sorted_probs"]).shape, (200, 3))

    def test_metadata(self):
        req = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
        req.model_spec.name = "faq"
        resp = stub().GetModelMetadata(req, timeout=TIMEOUT)
        self.assertEqual(resp.model_spec.version.value, 1)
        sdm = get_model_metadata_pb2.SignatureDefMap()
        self.assertTrue(resp.metadata["signature_def"].Unpack(sdm))
        want = json.loads((DATA / "models" / "faq.metadata.json").read_text())
        self.assertEqual(sorted(sdm.signature_def), sorted(want["metadata"]["signature_def"]
                                                           ["signature_def"]))
        self.assertEqual(sdm.signature_def["serving_default"].inputs["threshold"].name,
                         "serving_default_threshold:0")
        bad = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["nope"])
        bad.model_spec.name = "faq"
        with self.assertRaises(grpc.RpcError) as cm:
            stub().GetModelMetadata(bad, timeout=TIMEOUT)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(cm.exception.details(), "Metadata field nope is not supported")


class Tls(unittest.TestCase):
    """run.sh starts the server with --tls: gRPC and HTTP also over TLS, with a test CA."""

    def test_grpcs_and_https(self):
        self.assertIn("grpcs", READY, "the server was started without --tls")
        creds = grpc.ssl_channel_credentials(Path(READY["ca_cert"]).read_bytes())
        ch = grpc.secure_channel("127.0.0.1:%d" % READY["grpcs"], creds)
        resp = prediction_service_pb2_grpc.PredictionServiceStub(ch).Predict(
            hpt_request([[4.0]]), timeout=TIMEOUT)
        self.assertEqual(list(resp.outputs["y"].float_val), [4.0])
        ctx = ssl.create_default_context(cafile=READY["ca_cert"])
        req = urllib.request.Request("https://127.0.0.1:%d/v1/models/half_plus_two:predict"
                                     % READY["https"], data=b'{"instances": [[6.0]]}')
        with urllib.request.urlopen(req, timeout=TIMEOUT, context=ctx) as r:
            self.assertEqual(json.loads(r.read()), {"predictions": [[5.0]]})
        # without the test CA the certificate is refused
        with self.assertRaises(urllib.error.URLError):
            urllib.request.urlopen(req, timeout=TIMEOUT, context=ssl.create_default_context())


class Rest(unittest.TestCase):
    def test_row_and_columnar(self):
        st, body, _ = rest("POST", "/v1/models/half_plus_two:predict",
                           '{"instances": [[1.0], [2.0], [5.0]]}')
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body), {"predictions": [[2.5], [3.0], [4.5]]})
        st, body, _ = rest("POST", "/v1/models/half_plus_two/versions/1:predict",
                           '{"inputs": {"x": [[1.0], [NaN], [-Infinity]]}}')
        self.assertEqual(st, 200, body)
        self.assertIn('"outputs": [[2.5], [NaN], [-Infinity]]', body)

    def test_faq_named_and_b64(self):
        st, body, _ = rest("POST", "/v1/models/faq:predict", json.dumps({"instances": [
            {"threshold": 0.1, "model_id": "model_a", "input_holder": {"b64": "b2s="}}]}))
        self.assertEqual(st, 200, body)
        pred = json.loads(body)["predictions"]
        self.assertEqual(len(pred), 1)
        self.assertEqual(sorted(pred[0]), ["model_version_id", "sorted_labels", "sorted_probs"])
        # the same request over gRPC gives the same numbers
        req = faq_request(["sorted_probs"])
        req.inputs["threshold"].CopyFrom(tf.make_tensor_proto(0.1, dtype=tf.float32))
        req.inputs["input_holder"].CopyFrom(tf.make_tensor_proto([b"ok"], dtype=tf.string))
        probs = tf.make_ndarray(stub().Predict(req, timeout=TIMEOUT).outputs["sorted_probs"])
        np.testing.assert_allclose(pred[0]["sorted_probs"], probs[0], rtol=1e-6)

    def test_metadata_is_tf_servings_json(self):
        for name in ("faq", "half_plus_two", "seed"):
            st, body, hdr = rest("GET", "/v1/models/%s/metadata" % name)
            self.assertEqual(st, 200, body)
            self.assertEqual(hdr["Content-Type"], "application/json")
            self.assertEqual(body, (DATA / "models" / ("%s.metadata.json" % name)).read_text())

    def test_errors(self):
        st, body, _ = rest("POST", "/v1/models/nope:predict", '{"instances": [1.0]}')
        self.assertEqual((st, body), (404, '{ "error": "Servable not found for request: '
                                           'Latest(nope)" }'))
        st, body, _ = rest("POST", "/v1/models/half_plus_two:predict", '{"instances": [["a"]]}')
        # absl::CEscape escapes ' as \' -- so TF Serving's error body is not always valid JSON
        self.assertEqual((st, body), (400, r"""{ "error": "Failed to process element: 0 of \'instan"""
                                           r"""ces\' list. Error: INVALID_ARGUMENT: JSON Value: \"a\" """
                                           r"""Type: String is not of expected type: float" }"""))
        st, body, _ = rest("POST", "/v1/models/half_plus_two:predict", "")
        self.assertEqual((st, json.loads(body)["error"]),
                         (400, "JSON Parse error: The document is empty"))
        st, body, _ = rest("POST", "/v1/models/faq:predict", '{"inputs": {"threshold": 0.5}}')
        self.assertEqual((st, body), (400, r"""{ "error": "Missing named input: input_holder in """
                                           r"""\'inputs\' object." }"""))


if __name__ == "__main__":
    unittest.main()
