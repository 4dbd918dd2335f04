#!/usr/bin/env python3
"""Requests for `tfreq check`, each run through real TensorFlow the way TF Serving runs a
Predict request, with TensorFlow's answer recorded. Pins: requirements-tf.txt.

    "$(bash .ci/venv tf)" tests/data/gen/make_check_tf.py

TF Serving's Predict (tensorflow_serving/servables/tensorflow/predict_util.cc) looks the
signature up, converts each input with Tensor::FromProto and calls Session::Run with the
signature's tensor names; it checks neither dtypes nor shapes against the signature. This
script does the same on the SavedModels in tests/data/models/: it loads the meta graph with
tf.compat.v1.saved_model.loader.load and calls the session through the C API
(Session._call_tf_sessionrun), which, unlike Session.run, does not compare the fed shape with
the placeholder's. "tf_result" is "ok" with the output shapes, or the error class and the first
line of TensorFlow's message.

Writes tests/data/check/*.bin (TF Serving PredictRequest, pure-Python protobuf so maps keep
insertion order), models/no_default/ (a TF1 SavedModel whose only signature is "times_two", with
no serving_default, as TF Serving's saved_model_half_plus_two_counter has none; written with
SavedModelBuilder, byte-identical on re-runs), warmup_classify_empty.tfrecord (a TF Serving warm-up whose classify_log
request has an Input with no examples) and manifest.json. Deterministic.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_check_tf.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.client import pywrap_tf_session as c_api  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, input_pb2, predict_pb2,  # noqa: E402
                                     prediction_log_pb2)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "check"
MODELS = REPO / "tests" / "data" / "models"
tf1 = tf.compat.v1
manifest = []


def model_dir(model):
    """tests/data/models/<model>, or the models made here under tests/data/check/models/."""
    own = OUT / "models" / model
    return own if own.is_dir() else MODELS / model


def make_no_default():
    """A model without serving_default: y = 2 * x under the signature "times_two"."""
    d = OUT / "models" / "no_default"
    if d.exists():
        import shutil
        shutil.rmtree(d)
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        x = tf1.placeholder(tf.float32, shape=[None, 1], name="x")
        y = tf.multiply(x, 2.0, name="y")
        sig = tf1.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        b = tf1.saved_model.builder.SavedModelBuilder(str(d))
        b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"times_two": sig})
        b.save()


def session_run(model, req):
    """TF Serving's Predict on a loaded SavedModel: "ok [shapes]" or the error."""
    sig_name = req.model_spec.signature_name or "serving_default"
    g = tf.Graph()
    with tf1.Session(graph=g) as sess:
        mg = tf1.saved_model.loader.load(sess, ["serve"], str(model_dir(model)))
        if sig_name not in mg.signature_def:
            return 'FailedPrecondition: Serving signature key "%s" not found.' % sig_name
        sd = mg.signature_def[sig_name]
        if len(req.inputs) != len(sd.inputs):
            return "InvalidArgument: input size does not match signature"
        try:
            feeds = {}
            for alias, tp in req.inputs.items():
                t = g.get_tensor_by_name(sd.inputs[alias].name)
                feeds[t._as_tf_output()] = tf.make_ndarray(tp)
            aliases = list(req.output_filter) or list(sd.outputs)
            fetches = []
            for a in aliases:
                name = sd.outputs[a].name
                op_name, _, idx = name.partition(":")
                # Session::Run takes "name" as "name:0" (ParseTensorName); build that
                # output even where the op has none, and let TensorFlow answer.
                out = c_api.TF_Output()
                out.oper = g.get_operation_by_name(op_name)._c_op
                out.index = int(idx or 0)
                fetches.append(out)
            out = sess._call_tf_sessionrun(None, feeds, fetches, [], None)
            return "ok " + json.dumps([list(np.shape(o)) for o in out])
        except Exception as e:  # noqa: BLE001
            return "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:160])


def write(name, model, req, note, expect):
    data = req.SerializeToString()
    (OUT / (name + ".bin")).write_bytes(data)
    back = predict_pb2.PredictRequest()
    back.ParseFromString(data)
    assert back.SerializeToString() == data, name
    manifest.append({"file": name + ".bin", "model": model, "note": note,
                     "tf_result": session_run(model, req), "expect": expect})


def request(model, inputs, signature="serving_default", fetches=()):
    r = predict_pb2.PredictRequest()
    r.model_spec.name = model
    r.model_spec.signature_name = signature
    for k, v in inputs:
        r.inputs[k].CopyFrom(tf.make_tensor_proto(v))
    r.output_filter.extend(fetches)
    return r


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    f32 = np.float32
    write("hp2_rank1", "half_plus_two",
          request("half_plus_two", [("x", np.array([1, 2, 3], f32))]),
          "x [3] where the signature declares (-1, 1): rank 1 for rank 2", "SHAPE_INCOMPATIBLE")
    write("hp2_dim", "half_plus_two",
          request("half_plus_two", [("x", np.ones([2, 2], f32))]),
          "x [2, 2] where the signature fixes dim 1 to 1", "SHAPE_INCOMPATIBLE")
    write("two_sigs_images_rank3", "two_sigs",
          request("two_sigs", [("images", np.zeros([1, 28, 28], f32))], "predict_images"),
          "images [1, 28, 28] where the signature declares (-1, 28, 28, 1): the graph reshapes it",
          "SHAPE_INCOMPATIBLE")
    write("two_sigs_bad_dim", "two_sigs",
          request("two_sigs", [("x", np.zeros([1, 10], f32))]),
          "x [1, 10] where the signature fixes dim 1 to 784: MatMul refuses it", "SHAPE_INCOMPATIBLE")
    write("faq_init_op", "faq",
          request("faq", [], "__saved_model_init_op"),
          "a request to Keras' __saved_model_init_op signature (no inputs; its one output is the op NoOp)",
          "SIGNATURE_NOT_CALLABLE")
    make_no_default()
    write("no_default_named", "no_default",
          request("no_default", [("x", np.array([[1], [2]], f32))], "times_two"),
          "a request naming times_two, the only signature of a model without serving_default",
          "OK")
    write("no_default_unnamed", "no_default",
          request("no_default", [("x", np.array([[1]], f32))], ""),
          "a request naming no signature: TF Serving looks up serving_default, which this model lacks",
          "UNKNOWN_SIGNATURE")

    # A TF Serving warm-up whose classify_log request holds no examples. TF Serving's
    # classifier reads Input through InputToSerializedExampleTensor, which refuses it with
    # "Input is empty." (tensorflow_serving/servables/tensorflow/util.cc), failing the load.
    name = "warmup_classify_empty.tfrecord"
    with tf.io.TFRecordWriter(str(OUT / name)) as w:
        creq = classification_pb2.ClassificationRequest()
        creq.model_spec.name = "half_plus_two"
        creq.model_spec.signature_name = "classify_x_to_y"
        creq.input.CopyFrom(input_pb2.Input(example_list=input_pb2.ExampleList()))
        w.write(prediction_log_pb2.PredictionLog(
            classify_log=prediction_log_pb2.ClassifyLog(request=creq)).SerializeToString())
        creq2 = classification_pb2.ClassificationRequest()
        creq2.model_spec.name = "half_plus_two"
        creq2.model_spec.signature_name = "classify_x_to_y"
        w.write(prediction_log_pb2.PredictionLog(
            classify_log=prediction_log_pb2.ClassifyLog(request=creq2)).SerializeToString())
    manifest.append({"file": name, "model": "half_plus_two",
                     "note": "record 0: classify_log whose Input is an empty example_list; record 1: "
                             "classify_log with no Input at all. TF Serving: 'Input is empty.'",
                     "expect": "EMPTY_INPUT"})

    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for e in manifest:
        print(e["file"], e.get("tf_result", ""))


if __name__ == "__main__":
    main()
