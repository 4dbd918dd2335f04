#!/usr/bin/env python3
"""`tfreq record` between TF Serving's Python client (the tensorflow-serving-api gRPC stub, and
REST over urllib) and the live server.

    TFREQ_LIVE_READY=/path/to/ready.json "$(bash .ci/venv live)" -m unittest tests/live/test_record_tfs.py

Every call is made twice, direct and through the proxy: the answers must be the same (message
bytes, status, error code and text, trailing metadata names). The file the proxy records must
then be a warm-up of the faq model (`tfreq check --model tests/data/models/faq` passes), cover
every executor key of the traffic sent (`tfreq diff` passes), and warm it: after a reload of the
model, `tfreq replay` of the recorded file then of the traffic measures no cold call.
"""

import json
import os
import sys
import unittest
import urllib.error
import urllib.request
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import grpc  # noqa: E402
from tensorflow_serving.apis import (get_model_metadata_pb2, predict_pb2,  # noqa: E402
                                     prediction_service_pb2_grpc)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import Recording, tfreq  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
READY = json.loads(Path(os.environ["TFREQ_LIVE_READY"]).read_text())
TIMEOUT = 30


def stub(port):
    ch = grpc.insecure_channel("127.0.0.1:%d" % port)
    return prediction_service_pb2_grpc.PredictionServiceStub(ch)


def faq_request(filter_=()):
    req = predict_pb2.PredictRequest.FromString((DATA / "tfs" / "faq_warmup.bin").read_bytes())
    del req.output_filter[:]
    req.output_filter.extend(filter_)
    return req


def post(port, path, body, headers=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=body,
                                 method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Record(unittest.TestCase):
    def test_grpc_stub_through_the_proxy(self):
        rec = Recording("grpc://127.0.0.1:%d" % READY["grpc"], "warmup.tfrecord")
        try:
            direct, proxied = stub(READY["grpc"]), stub(rec.port)
            traffic = rec.traffic_dir()
            filters = [(), ("sorted_labels",), ("sorted_probs", "sorted_labels"),
                       ("model_version_id",)]
            n = 0
            for rnd in range(2):
                for f in filters:
                    req = faq_request(f)
                    a, call_a = direct.Predict.with_call(req, timeout=TIMEOUT)
                    b, call_b = proxied.Predict.with_call(req, timeout=TIMEOUT)
                    self.assertEqual(a.SerializeToString(), b.SerializeToString(), f)
                    # The server's trailing metadata comes through (its values say whether
                    # this call built an executor, which differs between the two calls).
                    names = lambda c: sorted(k for k, _ in c.trailing_metadata())  # noqa: E731
                    self.assertEqual(names(call_a), names(call_b))
                    self.assertIn("x-live-new-executor", names(call_b))
                    (traffic / ("%02d.bin" % n)).write_bytes(req.SerializeToString())
                    n += 1
            # A refusal: the same code and message.
            bad = faq_request()
            bad.model_spec.name = "nope"
            errs = []
            for s in (direct, proxied):
                with self.assertRaises(grpc.RpcError) as e:
                    s.Predict(bad, timeout=TIMEOUT)
                errs.append((e.exception.code(), e.exception.details()))
            self.assertEqual(errs[0], errs[1])
            self.assertEqual(errs[1][0], grpc.StatusCode.NOT_FOUND)
            # GetModelMetadata passes through.
            meta = get_model_metadata_pb2.GetModelMetadataRequest(metadata_field=["signature_def"])
            meta.model_spec.name = "faq"
            self.assertEqual(direct.GetModelMetadata(meta, timeout=TIMEOUT).SerializeToString(),
                             proxied.GetModelMetadata(meta, timeout=TIMEOUT).SerializeToString())
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            # 8 predicts and the refused one; 4 fetch sets of model faq, and the refused
            # request's key (it names model "nope": one session per model), so 5 executor
            # keys; faq's 4 recorded, the other model's named as not recorded (a warm-up
            # file belongs to one model).
            self.assertTrue(summary.startswith("9 requests in 1 file: 5 executor keys"), summary)
            self.assertIn("recorded 4 requests (one per executor key)", summary)
            self.assertIn("not recorded: 1 request, a model other than the first recorded", summary)
            code, out, err = tfreq("check", "--model", "tests/data/models/faq", str(rec.out))
            self.assertEqual(code, 0, out + err)
            prod = sorted(str(p) for p in traffic.iterdir())
            code, out, err = tfreq("diff", str(rec.out), *prod)
            self.assertEqual(code, 0, out + err)
            # The empirical proof: after a reload (no executor built), the recorded warm-up
            # then the traffic: every production call is warm.
            status, body = post(READY["http"], "/_live/reload/faq", b"")
            self.assertEqual(status, 200, body)
            code, out, err = tfreq("replay", str(rec.out), *prod,
                                   "--to", "grpc://127.0.0.1:%d" % READY["grpc"])
            self.assertEqual(code, 0, out + err)
        finally:
            rec.close()

    def test_rest_through_the_proxy(self):
        rec = Recording("http://127.0.0.1:%d" % READY["http"], "warmup.tfrecord")
        try:
            traffic = rec.traffic_dir()
            prod = json.loads((DATA / "rest" / "faq_prod.json").read_text())
            bodies = [prod, dict(prod, inputs=dict(prod["inputs"], threshold=0.25)),
                      {"signature_name": "serving_default",
                       "instances": [{"input_holder": "bom", "threshold": 0.5,
                                      "model_id": {"b64": "bW9kZWxfYQ=="}}]}]
            for i, b in enumerate(bodies):
                raw = json.dumps(b).encode()
                a = post(READY["http"], "/v1/models/faq:predict", raw)
                p = post(rec.port, "/v1/models/faq:predict", raw)
                self.assertEqual(a, p)
                self.assertEqual(p[0], 200, p)
                (traffic / ("%02d.json" % i)).write_bytes(raw)
            # An error answer passes through as it is (status and body).
            bad = b'{"inputs": {"nope": [1]}}'
            self.assertEqual(post(READY["http"], "/v1/models/faq:predict", bad),
                             post(rec.port, "/v1/models/faq:predict", bad))
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            # The 3 good requests share one key; the refused one (an unknown input) is not
            # read, and named.
            self.assertTrue(summary.startswith("3 requests in 1 file: 1 executor key"), summary)
            self.assertIn("recorded 1 request ", summary)
            self.assertIn("not recorded: 1 request, undecodable request", summary)
            code, out, err = tfreq("check", "--model", "tests/data/models/faq", str(rec.out))
            self.assertEqual(code, 0, out + err)
            prod = sorted(str(p) for p in traffic.iterdir())
            code, out, err = tfreq("diff", str(rec.out), *prod, "--model", "tests/data/models/faq")
            self.assertEqual(code, 0, out + err)
        finally:
            rec.close()

    @unittest.skipUnless("grpcs" in READY, "the server runs without --tls")
    def test_grpcs_and_https_services(self):
        # A TLS service (the server's test CA): clients speak cleartext to the proxy, the
        # proxy TLS to the service; the answers are the cleartext ports' own.
        ca = READY["ca_cert"]
        rec = Recording("grpcs://127.0.0.1:%d" % READY["grpcs"], "warmup.tfrecord", "--cacert", ca)
        try:
            req = faq_request(("sorted_labels",))
            a = stub(READY["grpc"]).Predict(req, timeout=TIMEOUT)
            b = stub(rec.port).Predict(req, timeout=TIMEOUT)
            self.assertEqual(a.SerializeToString(), b.SerializeToString())
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            self.assertIn("recorded 1 request ", summary)
        finally:
            rec.close()
        rec = Recording("https://127.0.0.1:%d" % READY["https"], "warmup.tfrecord", "--cacert", ca)
        try:
            raw = (DATA / "rest" / "faq_prod.json").read_bytes()
            self.assertEqual(post(READY["http"], "/v1/models/faq:predict", raw),
                             post(rec.port, "/v1/models/faq:predict", raw))
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            self.assertIn("recorded 1 request ", summary)
        finally:
            rec.close()
        # Without the CA, the service's certificate is not trusted: the proxy answers
        # UNAVAILABLE, naming the failure.
        rec = Recording("grpcs://127.0.0.1:%d" % READY["grpcs"], "warmup.tfrecord")
        try:
            with self.assertRaises(grpc.RpcError) as e:
                stub(rec.port).Predict(faq_request(), timeout=TIMEOUT)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
            self.assertIn("upstream failed", e.exception.details())
        finally:
            rec.close()


if __name__ == "__main__":
    unittest.main()
