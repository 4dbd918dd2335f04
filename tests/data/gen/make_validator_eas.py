#!/usr/bin/env python3
"""EAS requests for the validator tests (tfreq diff / check), written with the real
eas-prediction 0.36 SDK on protobuf 3.20.3 (pure Python). Pins: requirements-eas.txt.

    "$(bash .ci/venv eas)" tests/data/gen/make_validator_eas.py

Writes tests/data/validator/eas_*.bin (SerializeToString), eas_*.txt (print(msg)) and merges
its entries into tests/data/validator/manifest.json (entries of the other wire are kept).
The FAQ requests follow make_eas.py's faq_prod (same feeds and values) with one change each.
"""

import json
import sys
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.internal import api_implementation
from eas_prediction import TFRequest

if api_implementation.Type() != "python":
    sys.exit("make_validator_eas.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "validator"
T = TFRequest
FAQ_TEXT = "gostei muito do produto".encode("utf-8")
PROD_FETCHES = ["sorted_labels", "sorted_probs", "model_version_id"]
DTYPES = {T.DT_FLOAT: "DT_FLOAT", T.DT_STRING: "DT_STRING", T.DT_INT64: "DT_INT64"}

entries = []


def write(name, req, feeds, fetches, note):
    msg = req.request_data
    data = req.to_string()
    (OUT / (name + ".bin")).write_bytes(data)
    (OUT / (name + ".txt")).write_text(text_format.MessageToString(msg) + "\n")
    entries.append({
        "file": name + ".bin", "text": name + ".txt", "wire": "eas", "kind": "request",
        "signature_name": msg.signature_name,
        "feeds": [{"name": n, "dtype": DTYPES[d], "shape": s} for n, s, d in feeds],
        "fetches": fetches, "note": note,
    })
    # Read back the way the warm-up page says EAS does.
    back = TFRequest()
    back.request_data.ParseFromString(data)
    assert back.request_data == msg, name


def faq(name, note, signature="serving_default", fetches=PROD_FETCHES, extra=(), names=None):
    names = names or {}
    req = TFRequest(signature)
    feeds = [
        (names.get("input_holder", "input_holder"), [1], T.DT_STRING, [FAQ_TEXT]),
        (names.get("threshold", "threshold"), [], T.DT_FLOAT, [0.5]),
        (names.get("model_id", "model_id"), [], T.DT_STRING, [b"model_a"]),
    ] + list(extra)
    for n, s, d, v in feeds:
        req.add_feed(n, s, d, v)
    for f in fetches:
        req.add_fetch(f)
    write(name, req, [(n, s, d) for n, s, d, _ in feeds], list(fetches), note)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    faq("eas_faq_other_signature", "faq_prod with signature_name 'serving_v2' (not in the faq model).",
        signature="serving_v2")
    faq("eas_faq_unknown_fetch", "faq_prod also fetching 'sorted_scores', which the faq model does not have.",
        fetches=PROD_FETCHES + ["sorted_scores"])
    faq("eas_faq_extra_feed", "faq_prod with an extra feed 'user_id' (int64 scalar 42).",
        extra=[("user_id", [], T.DT_INT64, [42])])
    faq("eas_faq_tensor_names",
        "faq_prod naming feeds and fetches by graph tensor name (serving_default_<alias>:0, "
        "StatefulPartitionedCall:<i>), as the open-source EAS processor passes them to Session::Run.",
        names={a: "serving_default_%s:0" % a for a in ("input_holder", "threshold", "model_id")},
        fetches=["StatefulPartitionedCall:1", "StatefulPartitionedCall:2", "StatefulPartitionedCall:0"])

    req = TFRequest("predict_images")
    req.add_feed("images", [1, 28, 28, 1], T.DT_FLOAT, [0.0] * 784)
    req.add_fetch("probs")
    write("eas_two_sigs_predict_images", req, [("images", [1, 28, 28, 1], T.DT_FLOAT)], ["probs"],
          "two_sigs model, signature predict_images: images [1,28,28,1] zeros, fetch probs.")

    req = TFRequest("serving_default")
    req.add_feed("x", [1, 28, 28], T.DT_FLOAT, [0.0] * 784)
    req.add_fetch("scores")
    write("eas_two_sigs_bad_rank", req, [("x", [1, 28, 28], T.DT_FLOAT)], ["scores"],
          "two_sigs serving_default with x of shape [1,28,28] (the signature has [-1,784]: rank 3 vs 2).")

    req = TFRequest("serving_default")
    req.add_feed("x", [2, 100], T.DT_FLOAT, [0.0] * 200)
    req.add_fetch("scores")
    req.add_fetch("classes")
    write("eas_two_sigs_bad_dim", req, [("x", [2, 100], T.DT_FLOAT)], ["scores", "classes"],
          "two_sigs serving_default with x of shape [2,100] (the signature fixes dim 1 at 784).")

    manifest = OUT / "manifest.json"
    old = json.loads(manifest.read_text()) if manifest.exists() else []
    keep = [e for e in old if e["wire"] != "eas"]
    merged = sorted(keep + entries, key=lambda e: e["file"])
    manifest.write_text(json.dumps(merged, indent=1) + "\n")
    for e in entries:
        print(e["file"], (OUT / e["file"]).stat().st_size)


if __name__ == "__main__":
    main()
