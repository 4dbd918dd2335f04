#!/usr/bin/env python3
"""Print every record of TFRecord files of PredictionLog as TensorFlow reads them, one JSON
object per line, so a test can hold tfreq's output to TensorFlow's reading.

    "$(bash .ci/venv tf)" tests/data/gen/dump_records.py FILE [FILE...]

Each record is read with tf.data.TFRecordDataset (C++ record reader, CRCs checked) and
PredictionLog.FromString. A line holds:
  file      the file's name (no directory)
  record    its index
  kind      the log_type oneof member, or "none"
  message   json_format.MessageToDict(log, preserving_proto_field_name=True): every field set,
            tf.Example features included (int64 as decimal strings, bytes as base64)
  tensors   for every TensorProto of a predict / streamed request, a session_run feed or a
            response: "path": tf.make_ndarray(t).tolist() (bytes as latin-1 strings), the
            values TensorFlow computes from the proto

Exits 1 if a file cannot be read or a record does not parse.
"""

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from tensorflow_serving.apis import prediction_log_pb2  # noqa: E402


def values(t):
    a = tf.make_ndarray(t)
    if a.dtype == object:
        return [b.decode("latin-1") for b in a.reshape(-1).tolist()]
    return a.reshape(-1).tolist()


def tensors(log, kind):
    out = {}
    if kind == "predict_log":
        for k, t in log.predict_log.request.inputs.items():
            out["request.inputs[%s]" % k] = values(t)
        for k, t in log.predict_log.response.outputs.items():
            out["response.outputs[%s]" % k] = values(t)
    elif kind == "predict_streamed_log":
        for i, r in enumerate(log.predict_streamed_log.request):
            for k, t in r.inputs.items():
                out["request[%d].inputs[%s]" % (i, k)] = values(t)
    elif kind == "session_run_log":
        for f in log.session_run_log.request.feed:
            out["request.feed[%s]" % f.name] = values(f.tensor)
        for f in log.session_run_log.response.tensor:
            out["response.tensor[%s]" % f.name] = values(f.tensor)
    return out


def main(argv):
    ok = True
    for path in argv[1:]:
        try:
            for i, raw in enumerate(tf.data.TFRecordDataset(path)):
                log = prediction_log_pb2.PredictionLog.FromString(raw.numpy())
                kind = log.WhichOneof("log_type") or "none"
                print(json.dumps({
                    "file": os.path.basename(path), "record": i, "kind": kind,
                    "message": json_format.MessageToDict(log, preserving_proto_field_name=True),
                    "tensors": tensors(log, kind)}, sort_keys=True))
        except Exception as e:  # DataLossError, DecodeError
            print("%s: %s: %s" % (path, type(e).__name__, e), file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
