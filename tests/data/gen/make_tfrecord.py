#!/usr/bin/env python3
"""Write TF Serving warm-up files (TFRecord of PredictionLog) into tests/data/tfrecord/ with
tf.io.TFRecordWriter (pins: requirements-tf.txt).

    "$(bash .ci/venv tf)" tests/data/gen/make_tfrecord.py

Files:
  warmup_predict.tfrecord      3 predict_log records: the formats.md §10.1 request, the same with
                               another output_filter, the same with batch size 3
  warmup_mixed.tfrecord        predict_log (with log_metadata), classify_log, regress_log,
                               multi_inference_log, a record with no log_type (empty PredictionLog,
                               0 bytes), a record with only log_metadata (no log_type)
  warmup_unsupported.tfrecord  predict_streamed_log (one request) and session_run_log: types the
                               classic (SavedModelBundle) warm-up rejects with UNIMPLEMENTED
  warmup_every_kind.tfrecord   7 records, one of every log_type and none, with what a scrub must
                               replace or leave out: predict_log (log_metadata, client_id, a
                               response), classify_log (example_list_with_context: bytes, int64
                               and float features, a response), regress_log, multi_inference_log,
                               session_run_log (a feed and a response), predict_streamed_log (2
                               requests), no log_type
  manifest.json                per file, the records in order: kind, length, and for requests
                               the model, signature, input names (in insertion order), fetches

Runs on protobuf's pure-Python backend so map entries keep insertion order and the files are
byte-identical on every run. After writing, checks the first record of warmup_predict.tfrecord
against the §10.2 vector and reads every file back with read_tfrecord.py (tf.data).
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_tfrecord.py: protobuf backend is %r, expected 'python'"
             % api_implementation.Type())

import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import tensor_pb2, types_pb2  # noqa: E402
from tensorflow.core.protobuf import named_tensor_pb2  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, inference_pb2,  # noqa: E402
                                     predict_pb2, prediction_log_pb2, regression_pb2,
                                     session_service_pb2)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "tfrecord"
HERE = Path(__file__).resolve().parent

SPEC_VECTOR_HEX = ("0a180a016d120208031a0f73657276696e675f64656661756c74121b0a017812160801120812020801"
                   "120208022a080000803f000000401a0179")
RECORD_HEX = "3e00000000000000d9d240e7" + "323c0a3a" + SPEC_VECTOR_HEX + "8cdf4969"

PL = prediction_log_pb2


def float_tensor(shape, values):
    t = tensor_pb2.TensorProto()
    t.dtype = types_pb2.DT_FLOAT
    t.tensor_shape.SetInParent()
    for d in shape:
        t.tensor_shape.dim.add().size = d
    t.float_val.extend(values)
    return t


def predict_request(fetches=("y",), shape=(1, 2), values=(1.0, 2.0)):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "m"
    r.model_spec.version.value = 3
    r.model_spec.signature_name = "serving_default"
    r.inputs["x"].CopyFrom(float_tensor(shape, values))
    r.output_filter.extend(fetches)
    return r


def example(**feats):
    ex = tf.train.Example()
    for k, v in feats.items():
        ex.features.feature[k].float_list.value.extend(v)
    return ex


def row(log, note):
    """Manifest row for one record."""
    kind = log.WhichOneof("log_type")
    d = {"kind": kind or "none", "length": log.ByteSize()}
    if kind == "predict_log":
        r = log.predict_log.request
        d.update(model_name=r.model_spec.name, signature_name=r.model_spec.signature_name,
                 inputs=[{"name": k, "dtype": types_pb2.DataType.Name(v.dtype),
                          "shape": [x.size for x in v.tensor_shape.dim]}
                         for k, v in r.inputs.items()],
                 fetches=list(r.output_filter))
    elif kind == "predict_streamed_log":
        reqs = log.predict_streamed_log.request
        d.update(requests=len(reqs), model_name=reqs[0].model_spec.name,
                 signature_name=reqs[0].model_spec.signature_name,
                 inputs=[{"name": k} for k in reqs[0].inputs],
                 fetches=list(reqs[0].output_filter))
    elif kind in ("classify_log", "regress_log"):
        r = getattr(log, kind).request
        d.update(model_name=r.model_spec.name, signature_name=r.model_spec.signature_name,
                 examples=len(r.input.example_list.examples))
    elif kind == "multi_inference_log":
        r = log.multi_inference_log.request
        d.update(tasks=[{"model_name": t.model_spec.name,
                         "signature_name": t.model_spec.signature_name,
                         "method_name": t.method_name} for t in r.tasks],
                 examples=len(r.input.example_list.examples))
    elif kind == "session_run_log":
        r = log.session_run_log.request
        d.update(model_name=r.model_spec.name, signature_name=r.model_spec.signature_name,
                 inputs=[{"name": f.name} for f in r.feed], fetches=list(r.fetch),
                 tensor_name_is_alias=r.tensor_name_is_alias)
    if log.HasField("log_metadata"):
        d["log_metadata"] = True
    d["note"] = note
    return d


def write(name, records, note):
    path = OUT / name
    with tf.io.TFRecordWriter(str(path)) as w:
        for log, _ in records:
            w.write(log.SerializeToString())
    return {"file": name, "records": [row(log, n) for log, n in records], "note": note}


def warmup_predict():
    return write("warmup_predict.tfrecord", [
        (PL.PredictionLog(predict_log=PL.PredictLog(request=predict_request())),
         "formats.md §10.2: predict_log{request = §10.1 vector}; record bytes = "
         "3e00000000000000 d9d240e7 <62 bytes> 8cdf4969"),
        (PL.PredictionLog(predict_log=PL.PredictLog(request=predict_request(fetches=("z", "y")))),
         "same request, output_filter [z, y]"),
        (PL.PredictionLog(predict_log=PL.PredictLog(request=predict_request(
            shape=(3, 2), values=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)))),
         "same request, batch size 3: x [3,2]"),
    ], "Three predict_log records (TF Serving warm-up file).")


def warmup_mixed():
    meta_log = PL.PredictionLog(predict_log=PL.PredictLog(request=predict_request()))
    md = meta_log.log_metadata
    md.model_spec.name = "m"
    md.model_spec.version.value = 3
    md.model_spec.signature_name = "serving_default"
    md.saved_model_tags.append("serve")
    md.timestamp_secs = 1700000000

    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "m"
    creq.model_spec.signature_name = "classify_x_to_y"
    creq.input.example_list.examples.extend([example(x=[1.0]), example(x=[2.0])])

    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "m"
    rreq.model_spec.signature_name = "regress_x_to_y"
    rreq.input.example_list.examples.extend([example(x=[3.0])])

    mreq = inference_pb2.MultiInferenceRequest()
    for s, method in (("classify_x_to_y", "tensorflow/serving/classify"),
                      ("regress_x_to_y", "tensorflow/serving/regress")):
        t = mreq.tasks.add()
        t.model_spec.name = "m"
        t.model_spec.signature_name = s
        t.method_name = method
    mreq.input.example_list.examples.extend([example(x=[4.0])])

    only_meta = PL.PredictionLog()
    only_meta.log_metadata.model_spec.name = "m"

    return write("warmup_mixed.tfrecord", [
        (meta_log, "predict_log with log_metadata{model_spec, saved_model_tags [serve], "
                   "timestamp_secs 1700000000}"),
        (PL.PredictionLog(classify_log=PL.ClassifyLog(request=creq)),
         "classify_log: ClassificationRequest with 2 tf.Examples"),
        (PL.PredictionLog(regress_log=PL.RegressLog(request=rreq)),
         "regress_log: RegressionRequest with 1 tf.Example"),
        (PL.PredictionLog(multi_inference_log=PL.MultiInferenceLog(request=mreq)),
         "multi_inference_log: classify + regress tasks on 1 tf.Example"),
        (PL.PredictionLog(), "no log_type: an empty PredictionLog, a record of length 0 "
                             "(the classic warm-up accepts it and does nothing)"),
        (only_meta, "no log_type, only log_metadata{model_spec{name m}}"),
    ], "Every log type the classic warm-up runs, plus records with no log_type.")


def session_run_request():
    """SessionRunRequest: feed x [1, 2] floats, fetch y, tensor_name_is_alias."""
    sreq = session_service_pb2.SessionRunRequest()
    sreq.model_spec.name = "m"
    sreq.model_spec.signature_name = "serving_default"
    f = sreq.feed.add()
    f.name = "x"
    f.tensor.CopyFrom(float_tensor((1, 2), (1.0, 2.0)))
    sreq.fetch.append("y")
    sreq.tensor_name_is_alias = True
    return sreq


def warmup_unsupported():
    streamed = PL.PredictionLog()
    streamed.predict_streamed_log.request.add().CopyFrom(predict_request())

    sreq = session_run_request()
    assert isinstance(sreq.feed[0], named_tensor_pb2.NamedTensorProto)

    return write("warmup_unsupported.tfrecord", [
        (streamed, "predict_streamed_log with one request (the §10.1 request): TFRT warm-up "
                   "accepts it, the classic one returns UNIMPLEMENTED"),
        (PL.PredictionLog(session_run_log=PL.SessionRunLog(request=sreq)),
         "session_run_log: SessionRunRequest feed x, fetch y, tensor_name_is_alias: rejected "
         "(UNIMPLEMENTED) by both warm-up paths"),
    ], "Log types that TF Serving's warm-up does not run.")


def warmup_every_kind():
    pl = PL.PredictionLog()
    r = predict_request()
    r.inputs["q"].CopyFrom(tf.make_tensor_proto([b"secret query", b"more"], dtype=tf.string))
    r.inputs["n"].CopyFrom(tf.make_tensor_proto([[7, 8, 9]], dtype=tf.int64))
    r.client_id = b"client-42"
    pl.predict_log.request.CopyFrom(r)
    pl.predict_log.response.outputs["y"].CopyFrom(tf.make_tensor_proto([0.25], dtype=tf.float32))
    pl.log_metadata.model_spec.name = "m"
    pl.log_metadata.saved_model_tags.append("serve")

    ex = tf.train.Example()
    ex.features.feature["x"].float_list.value.extend([1.5, 2.5])
    ex.features.feature["ids"].int64_list.value.extend([11, -12, 13])
    ex.features.feature["text"].bytes_list.value.extend([b"private words", b"pii"])
    ctx = tf.train.Example()
    ctx.features.feature["user"].bytes_list.value.append(b"alice@example.com")
    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "m"
    creq.model_spec.signature_name = "classify_x_to_y"
    creq.input.example_list_with_context.examples.append(ex)
    creq.input.example_list_with_context.context.CopyFrom(ctx)
    cres = classification_pb2.ClassificationResponse()
    c = cres.result.classifications.add().classes.add()
    c.label, c.score = "spam", 0.75

    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "m"
    rreq.model_spec.signature_name = "regress_x_to_y"
    rreq.input.example_list.examples.extend([example(x=[3.0]), example(x=[4.0, 5.0])])

    mreq = inference_pb2.MultiInferenceRequest()
    t = mreq.tasks.add()
    t.model_spec.name = "m"
    t.model_spec.signature_name = "classify_x_to_y"
    t.method_name = "tensorflow/serving/classify"
    mreq.input.example_list.examples.append(example(x=[6.0]))

    sreq = session_run_request()
    sres = session_service_pb2.SessionRunResponse()
    o = sres.tensor.add()
    o.name = "y"
    o.tensor.CopyFrom(float_tensor((1,), (3.0,)))

    streamed = PL.PredictionLog()
    streamed.predict_streamed_log.request.add().CopyFrom(predict_request())
    streamed.predict_streamed_log.request.add().CopyFrom(predict_request(values=(5.0, 6.0)))

    return write("warmup_every_kind.tfrecord", [
        (pl, "predict_log with log_metadata, client_id, inputs x (float), q (string), "
             "n (int64) and a response"),
        (PL.PredictionLog(classify_log=PL.ClassifyLog(request=creq, response=cres)),
         "classify_log: example_list_with_context (float, int64, bytes features; a "
         "context) and a response"),
        (PL.PredictionLog(regress_log=PL.RegressLog(request=rreq)),
         "regress_log: 2 tf.Examples"),
        (PL.PredictionLog(multi_inference_log=PL.MultiInferenceLog(request=mreq)),
         "multi_inference_log: one classify task on 1 tf.Example"),
        (PL.PredictionLog(session_run_log=PL.SessionRunLog(request=sreq, response=sres)),
         "session_run_log: feed x, fetch y, and a response"),
        (streamed, "predict_streamed_log with 2 requests"),
        (PL.PredictionLog(), "no log_type: an empty record"),
    ], "One record of every log type, with values and fields a scrub replaces or leaves out.")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = [warmup_predict(), warmup_mixed(), warmup_unsupported(), warmup_every_kind()]
    js = "[\n" + ",\n".join(
        "  {\n    \"file\": %s,\n    \"note\": %s,\n    \"records\": [\n%s\n    ]\n  }" % (
            json.dumps(m["file"]), json.dumps(m["note"], ensure_ascii=False),
            ",\n".join("      " + json.dumps(r, ensure_ascii=False) for r in m["records"]))
        for m in manifest) + "\n]\n"
    assert json.loads(js) == [{"file": m["file"], "note": m["note"], "records": m["records"]}
                              for m in manifest]
    (OUT / "manifest.json").write_text(js, encoding="utf-8")

    data = (OUT / "warmup_predict.tfrecord").read_bytes()
    first = data[:len(RECORD_HEX) // 2]
    if first.hex() != RECORD_HEX:
        sys.exit("first record differs from §10.2:\n  got      %s\n  expected %s"
                 % (first.hex(), RECORD_HEX))

    files = [str(OUT / m["file"]) for m in manifest]
    hp2 = REPO / "tests/data/models/half_plus_two/assets.extra/tf_serving_warmup_requests"
    if hp2.exists():
        files.append(str(hp2))
    env = dict(os.environ)
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    p = subprocess.run([sys.executable, str(HERE / "read_tfrecord.py")] + files, env=env,
                       capture_output=True, text=True)
    sys.stdout.write(p.stdout.replace(str(REPO) + "/", ""))
    if p.returncode != 0:
        sys.exit("read_tfrecord.py failed:\n" + p.stderr)
    for m in manifest:
        print("%7d  %s" % ((OUT / m["file"]).stat().st_size, m["file"]))


if __name__ == "__main__":
    main()
