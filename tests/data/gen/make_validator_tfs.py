#!/usr/bin/env python3
"""TF Serving requests for the validator tests (tfreq diff / check), written with
TensorFlow 2.21 (tf.make_tensor_proto) and tensorflow-serving-api 2.21 (predict_pb2) on the
pure-Python protobuf backend (insertion-order maps). Pins: requirements-tf.txt.

    "$(bash .ci/venv tf)" tests/data/gen/make_validator_tfs.py

Writes tests/data/validator/tfs_*.bin, tfs_*.txt (text_format.MessageToString + "\\n") and
merges its entries into tests/data/validator/manifest.json (entries of the other wire are
kept). The FAQ requests follow make_tfs.py's faq_prod with one change each. For the faq
requests, the exported faq SavedModel is loaded and the requested signature function is called
with the request's tensors (tf.make_ndarray), and each output_filter alias is looked up in its
result; "tf_result" in the manifest records "ok" or what failed. That is the model's own
answer, not a TF Serving run (TF Serving also refuses duplicate output aliases, for one).
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf import text_format  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_validator_tfs.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import types_pb2  # noqa: E402
from tensorflow_serving.apis import predict_pb2  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "validator"
MODELS = REPO / "tests" / "data" / "models"
FAQ_TEXT = "gostei muito do produto".encode("utf-8")
PROD_FETCHES = ["sorted_labels", "sorted_probs", "model_version_id"]
mtp = tf.make_tensor_proto

entries = []


def write(name, req, note, tf_result=None):
    data = req.SerializeToString()
    (OUT / (name + ".bin")).write_bytes(data)
    (OUT / (name + ".txt")).write_text(text_format.MessageToString(req) + "\n")
    back = predict_pb2.PredictRequest()
    back.ParseFromString(data)
    assert back == req and back.SerializeToString() == data, name
    e = {
        "file": name + ".bin", "text": name + ".txt", "wire": "tf-serving", "kind": "request",
        "signature_name": req.model_spec.signature_name,
        "model_spec": {"name": req.model_spec.name,
                       "version": req.model_spec.version.value if req.model_spec.HasField("version") else None,
                       "signature_name": req.model_spec.signature_name},
        "feeds": [{"name": k, "dtype": types_pb2.DataType.Name(v.dtype),
                   "shape": [d.size for d in v.tensor_shape.dim]} for k, v in req.inputs.items()],
        "fetches": list(req.output_filter), "note": note,
    }
    if tf_result is not None:
        e["tf_result"] = tf_result
    entries.append(e)


def run_faq(req, signature="serving_default"):
    """Calls the faq SavedModel's signature with the request's inputs as keyword arguments
    and looks up each output_filter alias. Returns "ok" or what failed."""
    model = tf.saved_model.load(str(MODELS / "faq"))
    if signature not in model.signatures:
        return "signature not found"
    fn = model.signatures[signature]
    try:
        kwargs = {k: tf.constant(tf.make_ndarray(v)) for k, v in req.inputs.items()}
        out = fn(**kwargs)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    for f in req.output_filter:
        if f not in out:
            return "output alias not found: " + f
    return "ok"


def faq_request(signature="serving_default", fetches=PROD_FETCHES, names=None, drop=()):
    names = names or {}
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "faq"
    r.model_spec.signature_name = signature
    for n in ("input_holder", "threshold", "model_id"):
        if n in drop:
            continue
        t = {"input_holder": mtp([FAQ_TEXT], tf.string, [1]),
             "threshold": mtp(0.5, tf.float32),
             "model_id": mtp(b"model_a", tf.string)}[n]
        r.inputs[names.get(n, n)].CopyFrom(t)
    r.output_filter.extend(fetches)
    return r


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    r = faq_request(signature="serving_v2")
    write("tfs_faq_other_signature", r, "faq_prod with model_spec.signature_name 'serving_v2'.", run_faq(r, "serving_v2"))
    r = faq_request(fetches=PROD_FETCHES + ["sorted_scores"])
    write("tfs_faq_unknown_fetch", r, "faq_prod also fetching 'sorted_scores' (not an output alias).", run_faq(r))
    r = faq_request(fetches=[])
    write("tfs_faq_fetch_all", r, "faq_prod with an empty output_filter (TF Serving fetches every output).", run_faq(r))
    r = faq_request(names={"threshold": "serving_default_threshold:0"})
    write("tfs_faq_tensor_name_feed", r,
          "faq_prod keying threshold by its tensor name serving_default_threshold:0 instead of the alias.",
          run_faq(r))
    r = faq_request(fetches=["sorted_labels", "sorted_probs", "sorted_labels"])
    write("tfs_faq_duplicate_fetch", r, "faq request fetching sorted_labels twice.", run_faq(r))

    r = predict_pb2.PredictRequest()
    r.model_spec.name = "two_sigs"
    r.inputs["x"].CopyFrom(mtp(np.zeros([2, 784], np.float32)))
    write("tfs_two_sigs_x", r, "two_sigs, no signature_name (serving_default), x [2,784] zeros "
          "(tensor_content), empty output_filter.")

    manifest = OUT / "manifest.json"
    old = json.loads(manifest.read_text()) if manifest.exists() else []
    keep = [e for e in old if e["wire"] != "tf-serving"]
    merged = sorted(keep + entries, key=lambda e: e["file"])
    manifest.write_text(json.dumps(merged, indent=1) + "\n")
    for e in entries:
        print(e["file"], (OUT / e["file"]).stat().st_size, e.get("tf_result", ""))


if __name__ == "__main__":
    main()
