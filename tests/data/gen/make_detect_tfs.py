#!/usr/bin/env python3
"""Write the files format detection must recognise, with TensorFlow and tensorflow-serving-api
(pins: requirements-tf.txt), into tests/data/detect/:

    "$(bash .ci/venv tf)" tests/data/gen/make_detect_tfs.py

  unframed_logs.bin              four PredictionLog messages concatenated with no TFRecord
                                 framing: what TF Serving's test helper
                                 WriteWarmupDataAsSerializedProtos writes (file->Append of each
                                 SerializeAsString(); tensorflow_serving/servables/tensorflow/
                                 saved_model_warmup_test_util.cc). Records: log_metadata +
                                 predict_log, predict_log (batch 3), classify_log, predict_log
                                 (another output_filter).
  unframed_logs.json             the records' own bytes (hex) and kinds, in order, and what
                                 tf.data.TFRecordDataset says when it reads the file.
  unframed_model/assets.extra/tf_serving_warmup_requests
                                 the same bytes where TF Serving looks for its warm-up file.
  empty_model/assets.extra/tf_serving_warmup_requests
                                 0 bytes: TF Serving reads 0 records and loads the model.
  warmup_predict.tfrecord.gz     tf.io.TFRecordWriter(options="GZIP") of the records of
  warmup_predict.tfrecord.zz     ../tfrecord/warmup_predict.tfrecord, and with "ZLIB".
  compressed.json                what TFRecordDataset says on each compressed file read without a
                                 compression_type (as TF Serving's warm-up reader does) and how
                                 many records it reads with the right one.
  nested_variant.pbtxt             protobuf text format of a TF Serving PredictRequest whose tensor
                                 nests 1,600 `variant_val { tensors {` levels (about 70 KB): the
                                 stack-depth regression input.

Runs on protobuf's pure-Python backend so map entries keep insertion order and the output is
byte-identical on every run.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_detect_tfs.py: protobuf backend is %r, expected 'python'"
             % api_implementation.Type())

import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, predict_pb2,  # noqa: E402
                                     prediction_log_pb2)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "detect"
PL = prediction_log_pb2


def predict_request(shape, values, fetches):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "m"
    r.model_spec.signature_name = "serving_default"
    t = tensor_pb2.TensorProto()
    t.dtype = types_pb2.DT_FLOAT
    for d in shape:
        t.tensor_shape.dim.add().size = d
    t.float_val.extend(values)
    r.inputs["x"].CopyFrom(t)
    r.output_filter.extend(fetches)
    return r


def logs():
    a = PL.PredictionLog()
    a.log_metadata.model_spec.name = "m"
    a.log_metadata.model_spec.signature_name = "serving_default"
    a.predict_log.request.CopyFrom(predict_request([1, 2], [1.0, 2.0], ["y"]))
    b = PL.PredictionLog()
    b.predict_log.request.CopyFrom(predict_request([3, 2], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], ["y"]))
    c = PL.PredictionLog()
    cr = classification_pb2.ClassificationRequest()
    cr.model_spec.name = "m"
    cr.model_spec.signature_name = "classify_x_to_y"
    ex = cr.input.example_list.examples.add()
    ex.features.feature["x"].float_list.value.extend([1.0])
    c.classify_log.request.CopyFrom(cr)
    d = PL.PredictionLog()
    d.predict_log.request.CopyFrom(predict_request([1, 2], [1.0, 2.0], ["z"]))
    return [("predict_log", a), ("predict_log", b), ("classify_log", c), ("predict_log", d)]


def tf_read(path, compression=None):
    """(records read, first line of the error or None), as tf.data reads the file."""
    n = 0
    try:
        for _ in tf.data.TFRecordDataset(str(path), compression_type=compression):
            n += 1
    except Exception as e:  # DataLossError and friends
        return n, "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
    return n, None


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    recs = logs()
    blobs = [m.SerializeToString() for _, m in recs]
    unframed = b"".join(blobs)
    (OUT / "unframed_logs.bin").write_bytes(unframed)
    for model in ("unframed_model", "empty_model"):
        (OUT / model / "assets.extra").mkdir(parents=True, exist_ok=True)
    (OUT / "unframed_model/assets.extra/tf_serving_warmup_requests").write_bytes(unframed)
    (OUT / "empty_model/assets.extra/tf_serving_warmup_requests").write_bytes(b"")
    n, err = tf_read(OUT / "unframed_logs.bin")
    if err is None:
        sys.exit("unframed_logs.bin: TFRecordDataset read it (%d records); expected a refusal" % n)
    n0, err0 = tf_read(OUT / "empty_model/assets.extra/tf_serving_warmup_requests")
    if (n0, err0) != (0, None):
        sys.exit("empty warm-up: expected 0 records and no error, got %r" % ((n0, err0),))
    manifest = {
        "file": "unframed_logs.bin",
        "records": [{"kind": k, "hex": b.hex()} for (k, _), b in zip(recs, blobs)],
        "tf_record_dataset": {"records_read": n, "error": err},
        "empty_warmup_tf_record_dataset": {"records_read": n0, "error": err0},
    }
    (OUT / "unframed_logs.json").write_text(json.dumps(manifest, indent=1) + "\n")

    # The records of ../tfrecord/warmup_predict.tfrecord, compressed as TensorFlow writes them.
    src = REPO / "tests" / "data" / "tfrecord" / "warmup_predict.tfrecord"
    records = [r.numpy() for r in tf.data.TFRecordDataset(str(src))]
    comp = {}
    for ext, kind in ((".gz", "GZIP"), (".zz", "ZLIB")):
        path = OUT / ("warmup_predict.tfrecord" + ext)
        with tf.io.TFRecordWriter(str(path), options=tf.io.TFRecordOptions(compression_type=kind)) as w:
            for r in records:
                w.write(r)
        plain_n, plain_err = tf_read(path)
        right_n, right_err = tf_read(path, kind)
        if plain_err is None or right_err is not None or right_n != len(records):
            sys.exit("%s: unexpected reads %r %r" % (path.name, plain_err, right_err))
        comp[path.name] = {
            "compression_type": kind,
            "uncompressed_read": {"records_read": plain_n, "error": plain_err},
            "compressed_read": {"records_read": right_n, "error": right_err},
        }
    (OUT / "compressed.json").write_text(json.dumps(comp, indent=1) + "\n")

    depth = 1600
    text = ('model_spec {\n  name: "m"\n}\ninputs {\n  key: "x"\n  value {\n    dtype: DT_VARIANT\n'
            + "    variant_val { tensors {\n" * depth
            + "    dtype: DT_FLOAT\n"
            + "    } }\n" * depth
            + "  }\n}\n")
    (OUT / "nested_variant.pbtxt").write_text(text)
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            print("%s\t%d" % (p.relative_to(OUT), p.stat().st_size))


if __name__ == "__main__":
    main()
