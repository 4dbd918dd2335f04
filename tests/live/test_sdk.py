#!/usr/bin/env python3
"""The real EAS Python SDK (eas-prediction 0.36) against the live server.

    TFREQ_LIVE_READY=/path/to/ready.json "$(bash .ci/venv eas)" -m unittest tests/live/test_sdk.py

PredictClient (sync, with the SDK's signed Authorization header) and QueueClient (the input queue
and the sink of an asynchronous service) are used exactly as an EAS user would. The committed
request files were written by the same SDK (tests/data/gen/make_eas.py).
"""

import json
import os
import time
import unittest
from pathlib import Path

import urllib3
from eas_prediction import PredictClient, QueueClient, TFRequest
from eas_prediction.exception import PredictException
from eas_prediction.tf_request_pb2 import PredictResponse

REPO = Path(__file__).resolve().parents[2]
EAS_DATA = REPO / "tests" / "data" / "eas"
READY = json.loads(Path(os.environ["TFREQ_LIVE_READY"]).read_text())
ENDPOINT = "127.0.0.1:%d" % READY["http"]
TOKEN = READY["token"]


def client(service, token=TOKEN, cls=PredictClient):
    c = cls(ENDPOINT, service)
    c.set_token(token)
    c.set_retry_count(1)
    c.set_timeout(30000)
    c.init()
    return c


def faq_warmup():
    req = TFRequest("serving_default")
    req.add_feed("threshold", [], TFRequest.DT_FLOAT, [0.5])
    req.add_feed("model_id", [], TFRequest.DT_STRING, [b"model_a"])
    req.add_feed("input_holder", [1], TFRequest.DT_STRING, [b"gostei muito do produto"])
    req.add_fetch("sorted_labels")
    req.add_fetch("sorted_probs")
    return req


def raw_post(path, body, headers):
    http = urllib3.PoolManager()
    return http.request("POST", "http://%s%s" % (ENDPOINT, path), body=body, headers=headers,
                        timeout=30.0, retries=False)


class Sync(unittest.TestCase):
    def test_predict_client_signed(self):
        resp = client("faq").predict(faq_warmup())
        self.assertEqual(sorted(resp.response.outputs), ["sorted_labels", "sorted_probs"])
        self.assertEqual(resp.get_tensor_shape("sorted_labels"), [1, 3])
        self.assertEqual(sorted(resp.get_values("sorted_labels")),
                         [b"negative", b"neutral", b"positive"])
        probs = resp.get_values("sorted_probs")
        self.assertEqual(len(probs), 3)
        self.assertTrue(all(p == 0.0 or p >= 0.5 for p in probs), probs)  # the threshold applies

    def test_half_plus_two(self):
        req = TFRequest("serving_default")
        req.add_feed("x", [3, 1], TFRequest.DT_FLOAT, [1.0, 2.0, 5.0])
        resp = client("half_plus_two").predict(req)
        self.assertEqual(resp.get_values("y"), [2.5, 3.0, 4.5])

    def test_committed_file_with_raw_token(self):
        # the EAS warm-up page's check: curl the file with the token in Authorization
        body = (EAS_DATA / "faq_prod.bin").read_bytes()
        r = raw_post("/api/predict/faq", body, {"Authorization": TOKEN})
        self.assertEqual(r.status, 200, r.data)
        out = PredictResponse.FromString(r.data)
        self.assertEqual(sorted(out.outputs), ["model_version_id", "sorted_labels", "sorted_probs"])
        self.assertEqual(out.outputs["model_version_id"].string_val, [b"faq-model_a-v1"])

    def test_the_pages_warm_up_file(self):
        # the seed: the EAS warm-up page's TFRequest, sent as its curl check does
        body = (EAS_DATA / "seed_warm_up.bin").read_bytes()
        r = raw_post("/api/predict/seed", body, {"Authorization": TOKEN})
        self.assertEqual(r.status, 200, r.data)
        out = PredictResponse.FromString(r.data)
        self.assertEqual(sorted(out.outputs), ["sorted_labels", "sorted_probs"])
        self.assertEqual(list(out.outputs["sorted_probs"].array_shape.dim), [200, 3])

    def test_wrong_token_is_401(self):
        with self.assertRaises(PredictException) as cm:
            client("faq", token="wrong").predict(faq_warmup())
        self.assertEqual(cm.exception.code, 401)
        r = raw_post("/api/predict/faq", b"", {})
        self.assertEqual(r.status, 401)
        self.assertTrue(r.data.startswith(b"Unauthorized"), r.data)

    def test_bad_request_is_400_with_text(self):
        req = TFRequest("serving_default")
        req.add_feed("x", [2], TFRequest.DT_FLOAT, [1.0])  # 2 needs two values
        with self.assertRaises(PredictException) as cm:
            client("half_plus_two").predict(req)
        self.assertEqual(cm.exception.code, 400)
        self.assertIn(b"needs 2 values in float_val, got 1", cm.exception.message)


class Queue(unittest.TestCase):
    def setUp(self):
        names = READY["async"]["faq"]
        self.input = client(names["input"], cls=QueueClient)
        self.sink = client(names["sink"], cls=QueueClient)

    def test_put_get_through_the_model(self):
        body = (EAS_DATA / "faq_warmup.bin").read_bytes()
        index, request_id = self.input.put(body, tags={"user": "test"})
        self.assertGreater(int(index), 0)
        self.assertTrue(request_id)
        found = self.sink.get(request_id=request_id, timeout="20s", auto_delete=False)
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].tags["requestId"], request_id)
        self.assertEqual(found[0].tags["lastCode"], "200")
        out = PredictResponse.FromString(found[0].data)
        self.assertEqual(sorted(out.outputs), ["sorted_labels", "sorted_probs"])
        # the same bytes over the sync endpoint give the same answer
        sync = raw_post("/api/predict/faq", body, {"Authorization": TOKEN})
        self.assertEqual(PredictResponse.FromString(sync.data), out)
        self.sink.commit(found[0].index)
        self.assertEqual(self.sink.get(request_id=request_id, timeout="0s"), [])

    def test_bad_request_lands_on_the_sink_with_its_code(self):
        index, request_id = self.input.put(b"\xff\xff not a request")
        found = self.sink.get(request_id=request_id, timeout="20s")  # auto_delete
        self.assertEqual(len(found), 1)
        self.assertEqual(found[0].tags["lastCode"], "400")
        self.assertEqual(self.sink.get(request_id=request_id, timeout="0s"), [])

    def test_sdk_queue_protocol_on_the_sink(self):
        # the SDK's own test_queue_client.py steps: put/get by request id and index, truncate
        index, request_id = self.sink.put("abc")
        got = self.sink.get(request_id=request_id)
        self.assertEqual([d.data for d in got], [b"abc"])
        index, _ = self.sink.put("def")
        got = self.sink.get(index=index)
        self.assertEqual([d.data for d in got], [b"def"])
        last = None
        for i in range(5):
            last, _ = self.sink.put(str(i))
        attrs = self.sink.attributes()
        self.assertGreaterEqual(int(attrs["stream.length"]), 5)
        self.assertEqual(attrs["stream.lastEntry"], last)
        self.sink.truncate(int(last) + 1)
        self.assertEqual(int(self.sink.attributes()["stream.length"]), 0)
        index, _ = self.sink.put("gone")
        self.assertEqual(self.sink.delete(int(index)), "OK")
        self.assertEqual(self.sink.get(index=index, timeout="0s"), [])

    def test_watch(self):
        # the SDK's test_watch_with_auto_commit / _manual_commit, on items of this test's own tag
        for auto in (True, False):
            tag = {"watch": "auto" if auto else "manual"}
            for i in range(6):
                self.sink.put(str(i), tags=tag)
            watcher = self.sink.watch(0, 3, auto_commit=auto, tags=tag)
            seen = []
            for df in watcher.run():
                seen.append(df.data.decode())
                if not auto:
                    self.sink.commit(df.index)
                if len(seen) == 6:
                    break
            watcher.close()
            self.assertEqual(seen, [str(i) for i in range(6)])
            # Every item is committed, but the SDK's auto-commit of the last one may still
            # be on its way when the watcher is closed: look (without deleting) until the
            # queue holds none of this tag, for at most 5 s.
            deadline = time.monotonic() + 5
            left = self.sink.get(timeout="0s", tags=tag, auto_delete=False)
            while left and time.monotonic() < deadline:
                time.sleep(0.05)
                left = self.sink.get(timeout="0s", tags=tag, auto_delete=False)
            self.assertEqual(left, [])

    def test_wrong_token(self):
        q = client(READY["async"]["faq"]["input"], token="wrong", cls=QueueClient)
        with self.assertRaises(PredictException) as cm:
            q.put(b"x")
        self.assertEqual(cm.exception.code, 401)


if __name__ == "__main__":
    unittest.main()
