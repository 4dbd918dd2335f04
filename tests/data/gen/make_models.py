#!/usr/bin/env python3
"""Export small SavedModels with TensorFlow into tests/data/models/ (pins: requirements-tf.txt).

    "$(bash .ci/venv tf)" tests/data/gen/make_models.py

Models (each directory is deleted and re-exported; nothing else under models/ is touched):
  faq/            tf.Module, tf.saved_model.save; serving_default:
                  threshold [] float32, model_id [] string, input_holder [None] string ->
                  model_version_id [] string, sorted_labels [None,3] string, sorted_probs [None,3] float32
  two_sigs/       tf.Module with two signatures: serving_default (x [None,784] float32 ->
                  scores [None,10] float32, classes [None] int64) and predict_images
                  (images [None,28,28,1] float32 -> probs [None,10] float32)
  half_plus_two/  TF1-style graph (tf.compat.v1, SavedModelBuilder) equivalent to TF Serving's
                  saved_model_half_plus_two test model (y = 0.5*x + 2, y2 = 0.5*x + 3,
                  y3 = 0.5*x2 + 3; signatures serving_default, classify_x_to_y, regress_x_to_y,
                  regress_x_to_y2, regress_x2_to_y3; asset foo.txt), plus
                  assets.extra/tf_serving_warmup_requests (TFRecord of PredictionLog).

For each model it also writes
  models/<name>.saved_model_cli.txt  stdout of `saved_model_cli show --dir <name> --all`
                                     (run with models/ as the current directory)
  models/<name>.metadata.json        TF Serving's REST GetModelMetadata JSON (formats.md §8.3),
                                     built like http_rest_api_util.cc ToJsonString: model_spec
                                     and a tensorflow.serving.SignatureDefMap each printed with
                                     json_format.MessageToJson(preserving_proto_field_name=True,
                                     fields with no presence always printed, indent=1), then
                                     concatenated. Signature keys, aliases sorted. Version 1.
and models/half_plus_two.warmup.json, the records of the warm-up file.

Determinism: saved_model.pb, variables/, the warm-up file and the JSON files come out
byte-identical on re-runs with the pinned versions; fingerprint.pb of the TF2 exports does not
(TensorFlow gives no guarantee for SavedModels in general). saved_model_cli's ops line prints a
Python set, so the CLI runs with PYTHONHASHSEED=0 to keep its order stable.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"  # insertion-order maps
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf import json_format  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_models.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, get_model_metadata_pb2,  # noqa: E402
                                     inference_pb2, model_pb2, predict_pb2,
                                     prediction_log_pb2, regression_pb2)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "models"
CLI = Path(sys.executable).with_name("saved_model_cli")


# ---------------------------------------------------------------------------------------------
# faq
# ---------------------------------------------------------------------------------------------

class Faq(tf.Module):
    def __init__(self):
        super().__init__()
        self.labels = tf.constant(["positive", "neutral", "negative"])
        self.temperature = tf.Variable(1.0, name="temperature")  # a tiny variable

    @tf.function(input_signature=[
        tf.TensorSpec([], tf.float32, name="threshold"),
        tf.TensorSpec([], tf.string, name="model_id"),
        tf.TensorSpec([None], tf.string, name="input_holder"),
    ])
    def serve(self, threshold, model_id, input_holder):
        h = tf.cast(tf.strings.to_hash_bucket_fast(input_holder, 1000), tf.float32)
        logits = tf.stack([tf.sin(h), tf.cos(h), tf.sin(2.0 * h)], axis=1) / self.temperature
        probs = tf.nn.softmax(logits, axis=1)
        top, idx = tf.math.top_k(probs, k=3)
        sorted_probs = tf.where(top >= threshold, top, tf.zeros_like(top))
        return {
            "model_version_id": tf.strings.join(["faq-", model_id, "-v1"]),
            "sorted_labels": tf.gather(self.labels, idx),
            "sorted_probs": tf.ensure_shape(sorted_probs, [None, 3]),
        }


def make_faq(d):
    m = Faq()
    tf.saved_model.save(m, str(d), signatures={"serving_default": m.serve.get_concrete_function()})
    loaded = tf.saved_model.load(str(d))
    out = loaded.signatures["serving_default"](
        threshold=tf.constant(0.1), model_id=tf.constant("model_a"),
        input_holder=tf.constant(["gostei muito do produto", "ok"]))
    assert out["sorted_labels"].shape == (2, 3) and out["sorted_probs"].shape == (2, 3)
    assert out["model_version_id"].numpy() == b"faq-model_a-v1"


# ---------------------------------------------------------------------------------------------
# two_sigs
# ---------------------------------------------------------------------------------------------

class TwoSigs(tf.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(0)
        self.w = tf.Variable((rng.randn(784, 10) * 0.01).astype(np.float32), name="w")
        self.b = tf.Variable(np.zeros(10, np.float32), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 784], tf.float32, name="x")])
    def serve(self, x):
        scores = tf.nn.softmax(tf.matmul(x, self.w) + self.b)
        return {"scores": scores, "classes": tf.argmax(scores, axis=1, output_type=tf.int64)}

    @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32, name="images")])
    def predict_images(self, images):
        x = tf.reshape(images, [-1, 784])
        return {"probs": tf.nn.softmax(tf.matmul(x, self.w) + self.b)}


def make_two_sigs(d):
    m = TwoSigs()
    tf.saved_model.save(m, str(d), signatures={
        "serving_default": m.serve.get_concrete_function(),
        "predict_images": m.predict_images.get_concrete_function(),
    })
    loaded = tf.saved_model.load(str(d))
    out = loaded.signatures["predict_images"](images=tf.ones([2, 28, 28, 1]))
    assert out["probs"].shape == (2, 10)
    out = loaded.signatures["serving_default"](x=tf.ones([3, 784]))
    assert out["classes"].dtype == tf.int64 and out["scores"].shape == (3, 10)


# ---------------------------------------------------------------------------------------------
# half_plus_two (TF1 graph, like TF Serving's saved_model_half_plus_two.py)
# ---------------------------------------------------------------------------------------------

ASSET_DIR = "/tmp/original/export/assets"  # where TF Serving's script puts its asset, too


def make_half_plus_two(d):
    v1 = tf.compat.v1
    sig = v1.saved_model.signature_constants
    utils = v1.saved_model.utils
    build = v1.saved_model.signature_def_utils.build_signature_def

    os.makedirs(ASSET_DIR, exist_ok=True)
    asset_path = os.path.join(ASSET_DIR, "foo.txt")
    with open(asset_path, "w") as f:
        f.write("asset-file-contents")

    def one(inp_key, inp, out_key, out, method):
        return build({inp_key: utils.build_tensor_info(inp)},
                     {out_key: utils.build_tensor_info(out)}, method)

    builder = v1.saved_model.builder.SavedModelBuilder(str(d))
    with v1.Session(graph=tf.Graph()) as sess:
        with tf.device("/cpu:0"):
            a = v1.Variable(0.5, name="a")
            b = v1.Variable(2.0, name="b")
            c = v1.Variable(3.0, name="c")
            tf_example = v1.placeholder(tf.string, name="tf_example", shape=[None])
            parsed = v1.io.parse_example(tf_example, {
                "x": v1.io.FixedLenFeature([1], dtype=tf.float32),
                "x2": v1.io.FixedLenFeature([1], dtype=tf.float32, default_value=[0.0]),
            })
            x = tf.identity(parsed["x"], name="x")
            y = tf.identity(tf.add(tf.multiply(a, x), b), name="y")
            y2 = tf.identity(tf.add(tf.multiply(a, x), c), name="y2")
            x2 = tf.identity(parsed["x2"], name="x2")
            a2 = v1.Variable(0.5, name="a2")
            c2 = v1.Variable(3.0, name="c2")
            y3 = tf.identity(tf.add(tf.multiply(a2, x2), c2), name="y3")

        asset_tensor = tf.constant(asset_path)
        v1.add_to_collection(v1.GraphKeys.ASSET_FILEPATHS, asset_tensor)
        filename_tensor = v1.Variable("foo.txt", name="filename_tensor", trainable=False,
                                      collections=[])
        assign_filename_op = filename_tensor.assign("foo.txt")

        signatures = {
            "regress_x_to_y": one(sig.REGRESS_INPUTS, tf_example, sig.REGRESS_OUTPUTS, y,
                                  sig.REGRESS_METHOD_NAME),
            "regress_x_to_y2": one(sig.REGRESS_INPUTS, tf_example, sig.REGRESS_OUTPUTS, y2,
                                   sig.REGRESS_METHOD_NAME),
            "regress_x2_to_y3": one(sig.REGRESS_INPUTS, x2, sig.REGRESS_OUTPUTS, y3,
                                    sig.REGRESS_METHOD_NAME),
            "classify_x_to_y": one(sig.CLASSIFY_INPUTS, tf_example, sig.CLASSIFY_OUTPUT_SCORES, y,
                                   sig.CLASSIFY_METHOD_NAME),
            sig.DEFAULT_SERVING_SIGNATURE_DEF_KEY: one("x", x, "y", y, sig.PREDICT_METHOD_NAME),
        }
        sess.run(v1.global_variables_initializer())
        builder.add_meta_graph_and_variables(
            sess, [v1.saved_model.tag_constants.SERVING],
            signature_def_map=signatures,
            assets_collection=v1.get_collection(v1.GraphKeys.ASSET_FILEPATHS),
            main_op=tf.group(assign_filename_op))
    builder.save()
    write_half_plus_two_warmup(d)
    check_half_plus_two(d)


def example(**feats):
    ex = tf.train.Example()
    for k, v in feats.items():
        ex.features.feature[k].float_list.value.extend(v)
    return ex


WARMUP = []  # manifest rows for half_plus_two.warmup.json


def write_half_plus_two_warmup(d):
    """assets.extra/tf_serving_warmup_requests: one record per way of calling the model.
    regress_x2_to_y3 is left out: its input is the float tensor x2, not serialized Examples, so a
    RegressionRequest on it would fail and fail the model load."""
    name = "half_plus_two"
    recs = []

    req = predict_pb2.PredictRequest()
    req.model_spec.name = name
    req.model_spec.signature_name = "serving_default"
    req.inputs["x"].CopyFrom(tf.make_tensor_proto([[1.0], [2.0], [5.0]], dtype=tf.float32))
    req.output_filter.append("y")
    recs.append(prediction_log_pb2.PredictionLog(
        predict_log=prediction_log_pb2.PredictLog(request=req)))
    WARMUP.append({"kind": "predict_log", "signature_name": "serving_default",
                   "inputs": {"x": {"dtype": "DT_FLOAT", "shape": [3, 1]}}, "fetches": ["y"]})

    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = name
    creq.model_spec.signature_name = "classify_x_to_y"
    creq.input.example_list.examples.extend([example(x=[1.0]), example(x=[2.0])])
    recs.append(prediction_log_pb2.PredictionLog(
        classify_log=prediction_log_pb2.ClassifyLog(request=creq)))
    WARMUP.append({"kind": "classify_log", "signature_name": "classify_x_to_y", "examples": 2})

    for s in ("regress_x_to_y", "regress_x_to_y2"):
        rreq = regression_pb2.RegressionRequest()
        rreq.model_spec.name = name
        rreq.model_spec.signature_name = s
        rreq.input.example_list.examples.extend([example(x=[3.0])])
        recs.append(prediction_log_pb2.PredictionLog(
            regress_log=prediction_log_pb2.RegressLog(request=rreq)))
        WARMUP.append({"kind": "regress_log", "signature_name": s, "examples": 1})

    mreq = inference_pb2.MultiInferenceRequest()
    for s, method in (("classify_x_to_y", "tensorflow/serving/classify"),
                      ("regress_x_to_y", "tensorflow/serving/regress")):
        t = mreq.tasks.add()
        t.model_spec.name = name
        t.model_spec.signature_name = s
        t.method_name = method
    mreq.input.example_list.examples.extend([example(x=[4.0], x2=[1.0])])
    recs.append(prediction_log_pb2.PredictionLog(
        multi_inference_log=prediction_log_pb2.MultiInferenceLog(request=mreq)))
    WARMUP.append({"kind": "multi_inference_log",
                   "signature_names": ["classify_x_to_y", "regress_x_to_y"], "examples": 1})

    extra = d / "assets.extra"
    extra.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(extra / "tf_serving_warmup_requests")) as w:
        for r in recs:
            w.write(r.SerializeToString())


def check_half_plus_two(d):
    loaded = tf.saved_model.load(str(d))
    y = loaded.signatures["serving_default"](x=tf.constant([[1.0], [2.0], [5.0]]))["y"]
    assert np.allclose(y.numpy().ravel(), [2.5, 3.0, 4.5]), y
    ser = tf.constant([example(x=[2.0]).SerializeToString()])
    s = loaded.signatures["classify_x_to_y"](inputs=ser)["scores"]
    assert np.allclose(s.numpy().ravel(), [3.0]), s
    o = loaded.signatures["regress_x_to_y2"](inputs=ser)["outputs"]
    assert np.allclose(o.numpy().ravel(), [4.0]), o
    # every warm-up record parses and names a signature of the model
    sigs = set(loaded.signatures.keys())
    for raw in tf.data.TFRecordDataset(str(d / "assets.extra" / "tf_serving_warmup_requests")):
        log = prediction_log_pb2.PredictionLog.FromString(raw.numpy())
        kind = log.WhichOneof("log_type")
        if kind == "multi_inference_log":
            names = [t.model_spec.signature_name for t in log.multi_inference_log.request.tasks]
        else:
            names = [getattr(log, kind).request.model_spec.signature_name]
        assert set(names) <= sigs, (names, sigs)


# ---------------------------------------------------------------------------------------------
# saved_model_cli and GetModelMetadata JSON
# ---------------------------------------------------------------------------------------------

def run_cli(name):
    env = dict(os.environ)
    env.pop("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", None)
    env["PYTHONHASHSEED"] = "0"  # the ops line prints a Python set: fix its order
    p = subprocess.run([str(CLI), "show", "--dir", name, "--all"], cwd=str(OUT), env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("saved_model_cli failed for %s:\n%s" % (name, p.stderr))
    (OUT / ("%s.saved_model_cli.txt" % name)).write_text(p.stdout, encoding="utf-8")


def _sorted_sigdef(sd):
    out = type(sd)()
    for k in sorted(sd.inputs):
        out.inputs[k].CopyFrom(sd.inputs[k])
    for k in sorted(sd.outputs):
        out.outputs[k].CopyFrom(sd.outputs[k])
    out.method_name = sd.method_name
    for k in sorted(sd.defaults):
        out.defaults[k].CopyFrom(sd.defaults[k])
    return out


def to_json(msg):
    return json_format.MessageToJson(msg, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True, indent=1)


def write_metadata(name, version=1):
    sm = saved_model_pb2.SavedModel.FromString((OUT / name / "saved_model.pb").read_bytes())
    mgs = [mg for mg in sm.meta_graphs if list(mg.meta_info_def.tags) == ["serve"]]
    assert len(mgs) == 1, name
    sdm = get_model_metadata_pb2.SignatureDefMap()
    for key in sorted(mgs[0].signature_def):
        sdm.signature_def[key].CopyFrom(_sorted_sigdef(mgs[0].signature_def[key]))
    spec = model_pb2.ModelSpec(name=name)
    spec.version.value = version
    # exactly the concatenation of http_rest_api_util.cc ToJsonString(GetModelMetadataResponse)
    out = ("{\n" + "\"model_spec\":" + to_json(spec) + ",\n" + "\"metadata\": {"
           + "\"signature_def\": " + to_json(sdm) + "}\n" + "}\n")
    js = json.loads(out)  # must be valid JSON
    assert js["metadata"]["signature_def"]["signature_def"].keys() == set(sdm.signature_def)
    (OUT / ("%s.metadata.json" % name)).write_text(out, encoding="utf-8")


def main():
    print("tensorflow %s, protobuf backend %s" % (tf.__version__, api_implementation.Type()))
    OUT.mkdir(parents=True, exist_ok=True)
    for name, fn in (("faq", make_faq), ("two_sigs", make_two_sigs),
                     ("half_plus_two", make_half_plus_two)):
        d = OUT / name
        if d.exists():
            shutil.rmtree(d)
        fn(d)
        run_cli(name)
        write_metadata(name)
    (OUT / "half_plus_two.warmup.json").write_text(
        "[\n" + ",\n".join("  " + json.dumps(r) for r in WARMUP) + "\n]\n", encoding="utf-8")
    total = 0
    for p in sorted(OUT.rglob("*")):
        if p.is_file():
            total += p.stat().st_size
            print("%8d  %s" % (p.stat().st_size, p.relative_to(OUT)))
    print("%8d  total" % total)


if __name__ == "__main__":
    main()
