#!/usr/bin/env python3
"""`tfreq record` between the real EAS Python SDK (eas-prediction's PredictClient) and the live
server.

    TFREQ_LIVE_READY=/path/to/ready.json "$(bash .ci/venv eas)" -m unittest tests/live/test_record_sdk.py

The SDK signs every request (Authorization: EAS ..., Date, Content-MD5); the proxy passes it on
unchanged, so the server's signature check passes, and the answers are the same as direct ones.
The recorded file holds no token, is a warm-up of the faq model (`tfreq check` passes) and
covers every executor key sent (`tfreq diff` passes).
"""

import json
import os
import sys
import unittest
from pathlib import Path

import urllib3
from eas_prediction import PredictClient, TFRequest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import Recording, tfreq  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
READY = json.loads(Path(os.environ["TFREQ_LIVE_READY"]).read_text())
TOKEN = READY["token"]


def client(port, service="faq"):
    c = PredictClient("127.0.0.1:%d" % port, service)
    c.set_token(TOKEN)
    c.set_retry_count(1)
    c.set_timeout(30000)
    c.init()
    return c


def faq(fetches, rows=1, threshold=0.5):
    req = TFRequest("serving_default")
    req.add_feed("threshold", [], TFRequest.DT_FLOAT, [threshold])
    req.add_feed("model_id", [], TFRequest.DT_STRING, [b"model_a"])
    req.add_feed("input_holder", [rows], TFRequest.DT_STRING, [b"gostei muito do produto"] * rows)
    for f in fetches:
        req.add_fetch(f)
    return req


class Record(unittest.TestCase):
    def test_predict_client_through_the_proxy(self):
        rec = Recording("http://127.0.0.1:%d" % READY["http"], "warm_up.tfrecord",
                        "--wire", "tfrecord", "--model-name", "faq")
        try:
            direct, proxied = client(READY["http"]), client(rec.port)
            traffic = rec.traffic_dir()
            reqs = [faq(["sorted_labels", "sorted_probs"]), faq(["sorted_labels"]),
                    faq(["sorted_labels", "sorted_probs"], rows=3), faq(["sorted_probs"], threshold=0.9)]
            for i, r in enumerate(reqs * 2):
                a = direct.predict(r).response.SerializeToString()
                b = proxied.predict(r).response.SerializeToString()
                self.assertEqual(a, b)
                (traffic / ("%02d.bin" % i)).write_bytes(r.to_string())
            # A wrong token: the server's 401 comes back through the proxy as it is.
            http = urllib3.PoolManager()
            body = reqs[0].to_string()
            answers = [http.request("POST", "http://127.0.0.1:%d/api/predict/faq" % p, body=body,
                                    headers={"Authorization": "wrong"}, retries=False,
                                    timeout=30.0) for p in (READY["http"], rec.port)]
            self.assertEqual([(x.status, x.data) for x in answers][0],
                             [(x.status, x.data) for x in answers][1])
            self.assertEqual(answers[1].status, 401)
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            # 8 SDK calls and the refused one; 3 fetch sets.
            self.assertTrue(summary.startswith("9 requests in 1 file: 3 executor keys"), summary)
            self.assertIn("recorded 3 requests", summary)
            data = rec.out.read_bytes()
            self.assertNotIn(TOKEN.encode(), data)
            code, out, err = tfreq("check", "--model", "tests/data/models/faq", str(rec.out))
            self.assertEqual(code, 0, out + err)
            prod = sorted(str(p) for p in traffic.iterdir())
            code, out, err = tfreq("diff", str(rec.out), *prod)
            self.assertEqual(code, 0, out + err)
        finally:
            rec.close()

    def test_bare_eas_warm_up_by_default(self):
        # EAS traffic alone: the file is the one bare request the EAS processor reads as its
        # warm-up (warm_up.bin), the most frequent key's.
        rec = Recording("http://127.0.0.1:%d" % READY["http"], "warm_up.bin")
        try:
            proxied = client(rec.port)
            traffic = rec.traffic_dir()
            reqs = [faq(["sorted_labels", "sorted_probs"]), faq(["sorted_labels", "sorted_probs"], rows=3)]
            for i, r in enumerate(reqs * 2):
                proxied.predict(r)
                (traffic / ("%02d.bin" % i)).write_bytes(r.to_string())
            code, summary = rec.stop()
            self.assertEqual(code, 0, "".join(rec.stderr))
            self.assertIn("a bare EAS request", summary)
            # The first request, as the SDK wrote it.
            self.assertEqual(rec.out.read_bytes(), reqs[0].to_string())
            code, out, err = tfreq("check", "--model", "tests/data/models/faq", str(rec.out))
            self.assertEqual(code, 0, out + err)
            prod = sorted(str(p) for p in traffic.iterdir())
            code, out, err = tfreq("diff", str(rec.out), *prod)
            self.assertEqual(code, 0, out + err)
        finally:
            rec.close()


if __name__ == "__main__":
    unittest.main()
