#!/usr/bin/env python3
"""Read a TF Serving warm-up file (TFRecord of PredictionLog) the way TensorFlow does.

    "$(bash .ci/venv tf)" tests/data/gen/read_tfrecord.py FILE [FILE...]

Reads each FILE with tf.data.TFRecordDataset (TensorFlow's C++ record reader: checks the
length and data CRCs) and parses every record with PredictionLog.FromString. Prints one
tab-separated line per record:

    FILE:INDEX  KIND  model=NAME  signature=SIG  inputs=[sorted input names]  output_filter=[...]

KIND is the log_type oneof (predict_log, classify_log, regress_log, multi_inference_log,
session_run_log, predict_streamed_log) or "none" when no log_type is set. For requests that have
no inputs map (classify/regress/multi_inference: Examples) inputs lists "examples:N"; for
session_run_log the feed names and fetch list are shown; for predict_streamed_log the first
request. Exits 1 if any file cannot be read or any record fails to parse, else 0.

Used to check that files written by tfreq are readable by TensorFlow.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
from tensorflow_serving.apis import prediction_log_pb2  # noqa: E402


def _examples(inp):
    which = inp.WhichOneof("kind")
    if which == "example_list":
        return ["examples:%d" % len(inp.example_list.examples)]
    if which == "example_list_with_context":
        return ["examples:%d+context" % len(inp.example_list_with_context.examples)]
    return []


def describe(log):
    kind = log.WhichOneof("log_type")
    model = sig = ""
    inputs, fetches = [], []
    if kind == "predict_log":
        r = log.predict_log.request
        model, sig = r.model_spec.name, r.model_spec.signature_name
        inputs, fetches = sorted(r.inputs.keys()), list(r.output_filter)
    elif kind == "predict_streamed_log":
        reqs = log.predict_streamed_log.request
        if reqs:
            r = reqs[0]
            model, sig = r.model_spec.name, r.model_spec.signature_name
            inputs, fetches = sorted(r.inputs.keys()), list(r.output_filter)
        inputs = inputs + ["requests:%d" % len(reqs)]
    elif kind in ("classify_log", "regress_log"):
        r = getattr(log, kind).request
        model, sig = r.model_spec.name, r.model_spec.signature_name
        inputs = _examples(r.input)
    elif kind == "multi_inference_log":
        r = log.multi_inference_log.request
        model = ",".join(t.model_spec.name for t in r.tasks)
        sig = ",".join(t.model_spec.signature_name for t in r.tasks)
        inputs = _examples(r.input)
    elif kind == "session_run_log":
        r = log.session_run_log.request
        model, sig = r.model_spec.name, r.model_spec.signature_name
        inputs, fetches = sorted(f.name for f in r.feed), list(r.fetch)
    return kind or "none", model, sig, inputs, fetches


def read(path):
    ok = True
    n = 0
    try:
        for i, raw in enumerate(tf.data.TFRecordDataset(path)):
            n += 1
            try:
                log = prediction_log_pb2.PredictionLog.FromString(raw.numpy())
            except Exception as e:  # DecodeError
                print("%s:%d\tERROR\tnot a PredictionLog: %s" % (path, i, e))
                ok = False
                continue
            kind, model, sig, inputs, fetches = describe(log)
            print("%s:%d\t%s\tmodel=%s\tsignature=%s\tinputs=[%s]\toutput_filter=[%s]"
                  % (path, i, kind, model, sig, ",".join(inputs), ",".join(fetches)))
    except Exception as e:  # tf.errors.DataLossError, NotFoundError, ...
        print("%s:%d\tERROR\t%s: %s" % (path, n, type(e).__name__, str(e).splitlines()[0]))
        ok = False
    return ok


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ok = True
    for p in argv[1:]:
        ok = read(p) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
