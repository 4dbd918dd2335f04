#!/usr/bin/env python3
"""tf.Example requests (classify, regress, multi-inference, predict over serialized Examples),
the models they are for, logs of them, REST bodies, batch-size logs, and TensorFlow's answer to
each, in tests/data/examples/ (tests/data/gen/README.md). Pins: requirements-tf.txt.

    "$(bash .ci/venv tf)" tests/data/gen/make_examples.py            # everything but the Keras export
    "$(bash .ci/venv tf)" tests/data/gen/make_examples.py --models   # also re-export keras_examples/

Models (models/):
  tf1_examples/   tf.compat.v1 graph, SavedModelBuilder (byte-identical on re-runs, regenerated
                  every run). One string placeholder `input_example_tensor` [-1] feeds
                  tf.io.parse_example, which is a ParseExampleV2 node, with the feature spec
                    x     FixedLenFeature([2], float32), no default: required
                    age   FixedLenFeature([1], int64, default_value=[0])
                    tags  VarLenFeature(string): a sparse key
                  Signatures: serving_default (tensorflow/serving/classify: inputs -> classes
                  [-1,3] string, scores [-1,3] float), regress (tensorflow/serving/regress:
                  inputs -> outputs [-1,1] float), predict (tensorflow/serving/predict:
                  examples -> scores, value). Arithmetic uses only exact float32 operations
                  (sums of small values times powers of two), so the outputs are the same on
                  every CPU: scores = [x0, x1, age/2 + n_tags], value = x0/2 + x1/4 + age/8 + n_tags.
  tf1_examples_v1/ the same model, but its graph parses with the V1 op ParseExample
                  (tf.raw_ops.ParseExample, parse_example_v1()); the script asserts the graph
                  has a ParseExample node and no ParseExampleV2.
  keras_examples/ a Keras 3 model (one Dense layer, fixed weights) in a tf.Module exported with
                  tf.saved_model.save. TF2 has no classify/regress signature builder: every
                  tf.function signature gets method_name tensorflow/serving/predict. But TF Serving's
                  classifier only needs the input key `inputs` and an output `classes` or `scores`
                  unless --enable_signature_method_name_check is on (classifier.cc,
                  GetClassificationSignatureDef / PreProcessClassification), so the export has
                  serving_default (examples -> scores, value), classify (inputs -> classes, scores)
                  and regress (inputs -> outputs), all three with method_name predict.
                  tf.saved_model.save is not byte-deterministic (fingerprint.pb holds fresh
                  hashes/ids), so this directory is exported only when missing or with --models;
                  its answers are recomputed from the committed export on every run.
  batch_x2/       TF1 graph, serving_default: x [-1,2] float -> y = 2x, for the batch-size log.
  NAME.saved_model_cli.txt, NAME.metadata.json: as make_models.py writes them.

Requests (requests/NAME.pb = bare serialized request, requests/NAME.txt = str(request), i.e.
Python's text_format): ClassificationRequest, RegressionRequest, MultiInferenceRequest and
PredictRequest (a string tensor of serialized Examples), with Input as example_list and
example_list_with_context; valid cases and the bad ones (a required feature missing, wrong kind,
wrong length, unknown extra feature, empty Input, wrong signature name, wrong method).

Logs (logs/*.tfrecord): TFRecords of PredictionLog (classify_log, regress_log,
multi_inference_log, and a mix with predict_log) written with tf.io.TFRecordWriter; every message
is serialized with SerializeToString(deterministic=True) (map entries sorted by key).

REST (rest/*.json): bodies of TF Serving's :classify / :regress (tensorflow_serving/g3doc/api_rest.md),
rest/NAME.pb the request TF Serving makes of each body, following
tensorflow_serving/util/json_tensor.cc FillClassifyRegressRequestFromJson / AddValueToFeature
(ported below: a JSON number with a fraction or exponent is a float_list value, a whole number an
int64_list value, a string or {"b64": ...} a bytes_list value; "context" makes
example_list_with_context). Each request the port makes must equal, byte for byte, the same
request built with tf.train.Example and tensorflow-serving-api's messages, every feature's kind
spelled out (write_rest's same_as); bodies TF Serving refuses while reading the JSON get its
error in answers.json (case BAD_JSON, EMPTY_INPUT) and no .pb.

Batch sizes (batch/): predict_log.tfrecord (PredictRequests whose x has known 0th dims),
warmup.tfrecord (a warm-up that sends fewer sizes), batching_parameters.txt (TF Serving's
--batching_parameters_file, text BatchingParameters) and expected.json (the padded size each
request runs at, the refused ones; the rule is in batch_rule() below).

answers.json: per request file (and per record of each log), what TF Serving + TensorFlow
answered. The requests are run the way TF Serving runs them: the SavedModel is loaded with
tf.compat.v1.saved_model.loader.load into a Session (what TF Serving's SavedModelBundle holds),
TF Serving's own checks come first (ported from its source and cited; these answers say
"source": "tf_serving_source"), then the serialized Examples are fed as one DT_STRING tensor
[n] into the signature's input tensor and the output tensors are fetched through the session's
C API (answers "source": "tensorflow_run", with TensorFlow's own error message).

answers_v1.json: the same for every requests/*.pb to tf1_examples, run unchanged against
tf1_examples_v1 (rows in answers.json's form, "model": "tf1_examples_v1").

Deterministic: a re-run rewrites identical bytes (everything but keras_examples/ without
--models); .ci/run checks it with git diff.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import base64  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

from google.protobuf import descriptor_pb2, descriptor_pool, text_format  # noqa: E402
from google.protobuf import message_factory  # noqa: E402
from google.protobuf.internal import api_implementation  # noqa: E402

if api_implementation.Type() != "python":
    sys.exit("make_examples.py: protobuf backend is %r, expected 'python'" % api_implementation.Type())

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.client import pywrap_tf_session as c_api  # noqa: E402
from tensorflow.python.framework import errors as tf_errors  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, inference_pb2, input_pb2,  # noqa: E402
                                     predict_pb2, prediction_log_pb2, regression_pb2)

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_models  # noqa: E402  (saved_model_cli / metadata JSON in the same forms)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "examples"
MODELS = OUT / "models"
tf1 = tf.compat.v1
sig_utils = tf1.saved_model.signature_def_utils

CLASSIFY = "tensorflow/serving/classify"
REGRESS = "tensorflow/serving/regress"
PREDICT = "tensorflow/serving/predict"

ANSWERS = []
WRITTEN = set()  # every file written under OUT, relative path


def ser(msg):
    return msg.SerializeToString(deterministic=True)


def put(rel, data):
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    p.write_bytes(data)
    WRITTEN.add(rel)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------

def feature_spec():
    return {
        "x": tf.io.FixedLenFeature([2], tf.float32),
        "age": tf.io.FixedLenFeature([1], tf.int64, default_value=[0]),
        "tags": tf.io.VarLenFeature(tf.string),
    }


def feature_spec_json():
    """feature_spec() as the models parse it, for tfreq's reading of their graphs
    (src/formats/example_spec.rs): every feature with its kind, dtype, shape and default
    (null: required)."""
    out = {"dense": [], "sparse": [], "ragged": []}
    for key, f in sorted(feature_spec().items()):
        if isinstance(f, tf.io.FixedLenFeature):
            out["dense"].append({
                "key": key,
                "dtype": "DT_" + f.dtype.name.upper().replace("FLOAT32", "FLOAT"),
                "shape": list(f.shape),
                "default": None if f.default_value is None else list(f.default_value),
            })
        elif isinstance(f, tf.io.VarLenFeature):
            out["sparse"].append({"key": key, "dtype": "DT_" + f.dtype.name.upper()})
    return out


def head(parsed):
    """scores [B,3] and value [B,1] from the parsed features, with exact float32 arithmetic."""
    x = parsed["x"]
    age = tf.cast(parsed["age"], tf.float32)
    tags = parsed["tags"]
    n_tags = tf.sparse.reduce_sum(
        tf.SparseTensor(tags.indices, tf.ones_like(tags.values, tf.float32), tags.dense_shape),
        axis=1, keepdims=True)
    n_tags = tf.reshape(n_tags, [-1, 1])  # static shape [-1, 1] for the signatures
    scores = tf.concat([x[:, 0:1], x[:, 1:2], age * 0.5 + n_tags], axis=1)
    value = x[:, 0:1] * 0.5 + x[:, 1:2] * 0.25 + age * 0.125 + n_tags
    return scores, value


def parse_example_v1(serialized):
    """feature_spec() parsed with the V1 op ParseExample (tf.io.parse_example emits
    ParseExampleV2): its inputs are serialized, names, one scalar string constant per sparse
    key, one per dense key, then one default tensor per dense key (empty: required); attrs
    sparse_types, Tdense (from the defaults) and dense_shapes
    (tensorflow/core/ops/parsing_ops.cc REGISTER_OP("ParseExample"))."""
    spec = feature_spec()
    sparse = sorted(k for k, f in spec.items() if isinstance(f, tf.io.VarLenFeature))
    dense = sorted(k for k, f in spec.items() if isinstance(f, tf.io.FixedLenFeature))
    defaults = [tf.constant(spec[k].default_value if spec[k].default_value is not None else [],
                            dtype=spec[k].dtype) for k in dense]
    out = tf.raw_ops.ParseExample(
        serialized=serialized, names=tf.constant([], tf.string),
        sparse_keys=[tf.constant(k) for k in sparse], dense_keys=[tf.constant(k) for k in dense],
        dense_defaults=defaults, sparse_types=[spec[k].dtype for k in sparse],
        dense_shapes=[spec[k].shape for k in dense])
    parsed = {k: tf.SparseTensor(out.sparse_indices[i], out.sparse_values[i], out.sparse_shapes[i])
              for i, k in enumerate(sparse)}
    parsed.update({k: out.dense_values[i] for i, k in enumerate(dense)})
    return parsed


def export_tf1(d, v1=False):
    """tf1_examples/, or with v1 tf1_examples_v1/: the same model whose graph parses with the V1
    op ParseExample."""
    if d.exists():
        shutil.rmtree(d)
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        serialized = tf1.placeholder(tf.string, [None], name="input_example_tensor")
        parsed = parse_example_v1(serialized) if v1 else tf.io.parse_example(serialized, feature_spec())
        scores, value = head(parsed)
        scores = tf.identity(scores, name="scores")
        value = tf.identity(value, name="value")
        classes = tf.tile(tf.constant([["a", "b", "c"]]), [tf.shape(serialized)[0], 1], name="classes")
        sigs = {
            "serving_default": sig_utils.classification_signature_def(serialized, classes, scores),
            "regress": sig_utils.regression_signature_def(serialized, value),
            "predict": sig_utils.predict_signature_def({"examples": serialized},
                                                       {"scores": scores, "value": value}),
        }
        b = tf1.saved_model.builder.SavedModelBuilder(str(d))
        b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=sigs)
        b.save()
    ops = [op.type for op in g.get_operations()]
    if v1:
        assert "ParseExample" in ops and "ParseExampleV2" not in ops, ops
    else:
        assert "ParseExampleV2" in ops and "ParseExample" not in ops, ops


def export_keras(d):
    import keras
    if d.exists():
        shutil.rmtree(d)
    keras.utils.set_random_seed(0)
    dense = keras.layers.Dense(1, use_bias=False)
    model = keras.Sequential([keras.Input(shape=(4,)), dense])
    # value = x0/2 + x1/4 + age/8 + n_tags, as in tf1_examples (exact in float32)
    dense.set_weights([np.array([[0.5], [0.25], [0.125], [1.0]], np.float32)])

    labels = tf.constant([["a", "b", "c"]])

    def run(serialized):
        parsed = tf.io.parse_example(serialized, feature_spec())
        scores, _ = head(parsed)
        age = tf.cast(parsed["age"], tf.float32)
        feats = tf.concat([parsed["x"], age, scores[:, 2:3] - age * 0.5], axis=1)
        return scores, model(feats)

    def serve(examples):
        scores, value = run(examples)
        return {"scores": scores, "value": value}

    def classify(inputs):
        scores, _ = run(inputs)
        return {"classes": tf.tile(labels, [tf.shape(inputs)[0], 1]), "scores": scores}

    def regress(inputs):
        _, value = run(inputs)
        return {"outputs": value}

    # Keras 3's ExportArchive (what model.export uses) calls tf.saved_model.save with one
    # signature per endpoint. A bare tf.Module holding the model, saved with
    # tf.saved_model.save, does not work here: its TF1 restore op (saver_def, which
    # TF Serving's session loader runs) leaves the Dense kernel out, and every signature that
    # reads it fails with "Could not find variable sequential/dense/kernel".
    archive = keras.export.ExportArchive()
    archive.track(model)
    spec_ = [tf.TensorSpec([None], tf.string, name="examples")]
    archive.add_endpoint("serving_default", tf.function(serve), input_signature=spec_)
    archive.add_endpoint("classify", tf.function(classify),
                         input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    archive.add_endpoint("regress", tf.function(regress),
                         input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    archive.write_out(str(d), verbose=False)


def export_batch(d):
    if d.exists():
        shutil.rmtree(d)
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        x = tf1.placeholder(tf.float32, [None, 2], name="x")
        y = tf.multiply(x, 2.0, name="y")
        sig = sig_utils.predict_signature_def({"x": x}, {"y": y})
        b = tf1.saved_model.builder.SavedModelBuilder(str(d))
        b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig})
        b.save()


def describe_model(name):
    """saved_model_cli.txt and metadata.json, with make_models.py's functions, in models/."""
    saved = make_models.OUT
    make_models.OUT = MODELS
    try:
        make_models.run_cli(name)
        make_models.write_metadata(name)
    finally:
        make_models.OUT = saved
    WRITTEN.add("models/%s.saved_model_cli.txt" % name)
    WRITTEN.add("models/%s.metadata.json" % name)


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

def feature(kind, values):
    f = tf.train.Feature()
    if kind == "float":
        f.float_list.value.extend(values)
    elif kind == "int64":
        f.int64_list.value.extend(values)
    elif kind == "bytes":
        f.bytes_list.value.extend(values)
    elif kind == "none":  # a Feature with no kind set
        assert not values
    else:
        raise ValueError(kind)
    return f


def example(*feats):
    """Example from (name, kind, values) triples."""
    ex = tf.train.Example()
    for name, kind, values in feats:
        ex.features.feature[name].CopyFrom(feature(kind, values))
    return ex


def X(a, b):
    return ("x", "float", [a, b])


def AGE(n):
    return ("age", "int64", [n])


def TAGS(*t):
    return ("tags", "bytes", list(t))


def input_of(examples, context=None, kind=None):
    """Input as example_list, or example_list_with_context when context is given. kind="list" or
    "context" with no examples makes an empty list of that kind; kind="none" leaves Input unset."""
    inp = input_pb2.Input()
    if kind == "none":
        return inp
    if context is not None or kind == "context":
        inp.example_list_with_context.SetInParent()
        if context is not None:
            inp.example_list_with_context.context.CopyFrom(context)
        inp.example_list_with_context.examples.extend(examples)
    else:
        inp.example_list.SetInParent()
        inp.example_list.examples.extend(examples)
    return inp


def spec(msg_spec, model, sig):
    msg_spec.name = model
    if sig is not None:
        msg_spec.signature_name = sig


def classify_req(model, sig, inp):
    r = classification_pb2.ClassificationRequest()
    spec(r.model_spec, model, sig)
    if inp is not None:
        r.input.CopyFrom(inp)
    return r


def regress_req(model, sig, inp):
    r = regression_pb2.RegressionRequest()
    spec(r.model_spec, model, sig)
    if inp is not None:
        r.input.CopyFrom(inp)
    return r


def multi_req(model, tasks, inp):
    r = inference_pb2.MultiInferenceRequest()
    for sig, method in tasks:
        t = r.tasks.add()
        spec(t.model_spec, model, sig)
        t.method_name = method
    if inp is not None:
        r.input.CopyFrom(inp)
    return r


def predict_examples_req(model, sig, examples, alias="examples"):
    r = predict_pb2.PredictRequest()
    spec(r.model_spec, model, sig)
    r.inputs[alias].CopyFrom(tf.make_tensor_proto(
        np.array([ser(e) for e in examples], dtype=object)))
    return r


# ---------------------------------------------------------------------------------------------
# TF Serving's steps, ported from its source, and the TensorFlow run
# ---------------------------------------------------------------------------------------------

class TfsError(Exception):
    """An error TF Serving returns before TensorFlow runs: code, message, where in its source."""

    def __init__(self, code, message, cited, **extra):
        super().__init__(message)
        self.code, self.message, self.cited, self.extra = code, message, cited, extra


def debug_string(sd):
    # C++ SignatureDef::DebugString(); Python's text_format prints the same form (map entries
    # sorted by key, two-space indent).
    return text_format.MessageToString(sd)


def serialized_examples(inp):
    """tensorflow_serving/servables/tensorflow/util.cc InputToSerializedExampleTensor: one string
    per example; with a context, each is the context's bytes followed by the example's bytes
    (memcpy of both), which protobuf parses as a merge: the example's features replace the
    context's of the same name (map entries: the last one wins)."""
    kind = inp.WhichOneof("kind")
    if kind == "example_list":
        out = [ser(e) for e in inp.example_list.examples]
    elif kind == "example_list_with_context":
        c = ser(inp.example_list_with_context.context)
        out = [c + ser(e) for e in inp.example_list_with_context.examples]
    else:
        out = []
    if not out:
        raise TfsError("INVALID_ARGUMENT", "Input is empty.",
                       "tensorflow_serving/servables/tensorflow/util.cc InputToSerializedExampleTensor")
    return out


def find_signature(mg, model_spec, cited, missing_fmt="No signature was found with the name: %s"):
    name = model_spec.signature_name or "serving_default"
    if name not in mg.signature_def:
        raise TfsError("INVALID_ARGUMENT", missing_fmt % name, cited)
    return name, mg.signature_def[name]


def preprocess_classification(sd):
    """classifier.cc PreProcessClassification with the method-name check off (TF Serving's
    default: --enable_signature_method_name_check=false, model_servers/server.h). Returns the
    input tensor name and the output tensor names (classes first, then scores)."""
    cited = "tensorflow_serving/servables/tensorflow/classifier.cc PreProcessClassification"
    if len(sd.inputs) != 1:
        raise TfsError("INVALID_ARGUMENT", "Expected one input Tensor.", cited)
    if len(sd.outputs) not in (1, 2):
        raise TfsError("INVALID_ARGUMENT",
                       "Expected one or two output Tensors, found %d" % len(sd.outputs), cited)
    if "inputs" not in sd.inputs:
        raise TfsError("INVALID_ARGUMENT",
                       "No classification inputs found in SignatureDef: " + debug_string(sd), cited)
    if "classes" not in sd.outputs and "scores" not in sd.outputs:
        raise TfsError("INVALID_ARGUMENT",
                       'Expected classification signature outputs to contain at least one of '
                       '"classes" or "scores". Signature was: ' + debug_string(sd), cited)
    outs = [sd.outputs[k].name for k in ("classes", "scores") if k in sd.outputs]
    return sd.inputs["inputs"].name, outs


def preprocess_regression(sd):
    """regressor.cc PreProcessRegression, method-name check off."""
    cited = "tensorflow_serving/servables/tensorflow/regressor.cc PreProcessRegression"
    if len(sd.inputs) != 1:
        raise TfsError("INVALID_ARGUMENT", "Expected one input Tensor.", cited)
    if len(sd.outputs) != 1:
        raise TfsError("INVALID_ARGUMENT", "Expected one output Tensor.", cited)
    if "inputs" not in sd.inputs:
        raise TfsError("INVALID_ARGUMENT",
                       "No regression inputs found in SignatureDef: " + debug_string(sd), cited)
    if "outputs" not in sd.outputs:
        raise TfsError("INVALID_ARGUMENT",
                       "No regression outputs found in SignatureDef: " + debug_string(sd), cited)
    return sd.inputs["inputs"].name, [sd.outputs["outputs"].name]


def method_check_message(kind, sd):
    """What the same request gets with --enable_signature_method_name_check (classifier.cc /
    regressor.cc Get*SignatureDef), or None when the method name matches."""
    want = CLASSIFY if kind == "classification" else REGRESS
    if sd.method_name == want:
        return None
    return "Expected %s signature method_name to be %s. Was: %s" % (kind, want, sd.method_name)


class Served:
    """One SavedModel loaded in a Session, as TF Serving's SavedModelBundle holds it."""

    def __init__(self, name):
        self.name = name
        self.graph = tf.Graph()
        self.sess = tf1.Session(graph=self.graph)
        with self.graph.as_default():
            self.mg = tf1.saved_model.loader.load(self.sess, ["serve"], str(MODELS / name))
            # The Python loader restores no variables for a TF2 export (it has no variables
            # collection); C++ LoadSavedModel, which TF Serving uses, always does
            # (tensorflow/cc/saved_model/loader.cc RunRestore, then RunInitOp): do the same.
            sd = self.mg.saver_def
            if sd.restore_op_name and (MODELS / name / "variables" / "variables.index").exists():
                self.sess.run(sd.restore_op_name, {
                    sd.filename_tensor_name: str(MODELS / name / "variables" / "variables")})
                init = self.mg.signature_def.get("__saved_model_init_op")
                if init is not None:
                    self.sess.run(init.outputs["__saved_model_init_op"].name.split(":")[0])

    def run(self, feeds, fetch_names):
        """Session::Run through the C API (no shape check against the placeholders, as in
        TF Serving). feeds: {tensor name: numpy array}. Returns the outputs or raises."""
        def out(name):
            op, _, idx = name.partition(":")
            o = c_api.TF_Output()
            o.oper = self.graph.get_operation_by_name(op)._c_op
            o.index = int(idx or 0)
            return o
        f = {out(k): v for k, v in feeds.items()}
        return self.sess._call_tf_sessionrun(None, f, [out(n) for n in fetch_names], [], None)

    def tf_run(self, feeds, fetch_names):
        try:
            return self.run(feeds, fetch_names), None
        except tf_errors.OpError as e:
            msg, _, rest = e.message.partition("\n\t [[")
            node = None
            if rest.startswith("{{node "):
                node = rest[len("{{node "):].split("}}", 1)[0]
            err = {"source": "tensorflow_run", "result": "error",
                   "error_class": type(e).__name__,
                   "error_code": code_name(tf_errors.error_code_from_exception_type(type(e))),
                   "message": msg}
            if node:
                err["node"] = node
            return None, err


def code_name(c):
    from tensorflow.core.protobuf import error_codes_pb2
    return error_codes_pb2.Code.Name(c)


def error_answer(e):
    a = {"source": "tf_serving_source", "result": "error", "error_code": e.code,
         "message": e.message, "cited": e.cited}
    a.update(e.extra)
    return a


def shaped(arr):
    a = np.asarray(arr)
    vals = a.tolist()
    if a.dtype == object:
        vals = [[v.decode() for v in row] for row in vals] if a.ndim == 2 else [v.decode() for v in vals]
    return {"shape": list(a.shape), "values": vals}


def answer_classify(served, req):
    """classifier.cc RunClassify: GetClassificationSignatureDef, PreProcessClassification,
    PerformOneShotTensorComputation (util.cc), PostProcessClassificationResult."""
    try:
        name, sd = find_signature(served.mg, req.model_spec,
                                  "tensorflow_serving/servables/tensorflow/classifier.cc "
                                  "GetClassificationSignatureDef")
        try:
            in_name, out_names = preprocess_classification(sd)
        except TfsError as e:
            e.extra["message_with_method_check"] = method_check_message("classification", sd) or e.message
            raise
        examples = serialized_examples(req.input)
    except TfsError as e:
        return error_answer(e), None
    outs, err = served.tf_run({in_name: np.array(examples, dtype=object)}, out_names)
    if err:
        return err, None
    keys = [k for k in ("classes", "scores") if k in sd.outputs]
    got = dict(zip(keys, outs))
    for k, t in got.items():  # PostProcessClassificationResult's checks
        assert t.ndim == 2 and t.shape[0] == len(examples), (k, t.shape)
    resp = classification_pb2.ClassificationResponse()
    resp.model_spec.name = req.model_spec.name
    resp.model_spec.signature_name = name
    n_classes = next(iter(got.values())).shape[1]
    for i in range(len(examples)):
        cl = resp.result.classifications.add()
        for c in range(n_classes):
            k = cl.classes.add()
            if "classes" in got:
                k.label = got["classes"][i, c].decode()
            if "scores" in got:
                k.score = float(got["scores"][i, c])
    a = {"source": "tensorflow_run", "result": "ok", "batch_size": len(examples),
         "outputs": {k: shaped(v) for k, v in got.items()}}
    m = method_check_message("classification", sd)
    if m:
        a["message_with_method_check"] = m
    return a, resp


def answer_regress(served, req):
    """regressor.cc RunRegress: GetRegressionSignatureDef, PreProcessRegression,
    PerformOneShotTensorComputation, PostProcessRegressionResult."""
    try:
        name, sd = find_signature(served.mg, req.model_spec,
                                  "tensorflow_serving/servables/tensorflow/regressor.cc "
                                  "GetRegressionSignatureDef")
        try:
            in_name, out_names = preprocess_regression(sd)
        except TfsError as e:
            e.extra["message_with_method_check"] = method_check_message("regression", sd) or e.message
            raise
        examples = serialized_examples(req.input)
    except TfsError as e:
        return error_answer(e), None
    outs, err = served.tf_run({in_name: np.array(examples, dtype=object)}, out_names)
    if err:
        return err, None
    t = outs[0]
    assert t.shape[0] == len(examples) and t.size == len(examples), t.shape
    resp = regression_pb2.RegressionResponse()
    resp.model_spec.name = req.model_spec.name
    resp.model_spec.signature_name = name
    for v in t.reshape(-1):
        resp.result.regressions.add().value = float(v)
    a = {"source": "tensorflow_run", "result": "ok", "batch_size": len(examples),
         "outputs": {"outputs": shaped(t)}}
    m = method_check_message("regression", sd)
    if m:
        a["message_with_method_check"] = m
    return a, resp


def answer_multi(served, req):
    """multi_inference.cc TensorFlowMultiInferenceRunner::Infer."""
    cited = "tensorflow_serving/servables/tensorflow/multi_inference.cc TensorFlowMultiInferenceRunner::Infer"
    try:
        model, seen, in_names, out_names, plan = "", set(), set(), set(), []
        for t in req.tasks:
            if not t.model_spec.name:
                raise TfsError("INVALID_ARGUMENT", "Found ModelSpec with an empty model name.", cited)
            if not model:
                model = t.model_spec.name
            elif model != t.model_spec.name:
                raise TfsError("INVALID_ARGUMENT", "All ModelSpecs in a MultiInferenceRequest must "
                               "access the same model name.", cited)
            sig = t.model_spec.signature_name or "serving_default"
            if sig in seen:
                raise TfsError("INVALID_ARGUMENT", "Duplicate evaluation of signature: " + sig, cited)
            seen.add(sig)
            if sig not in served.mg.signature_def:
                raise TfsError("INVALID_ARGUMENT",
                               "Requested signature not found in model graph: " + sig, cited)
            sd = served.mg.signature_def[sig]
            if t.method_name == CLASSIFY:
                i, o = preprocess_classification(sd)
            elif t.method_name == REGRESS:
                i, o = preprocess_regression(sd)
            else:
                raise TfsError("UNIMPLEMENTED",
                               "Unsupported signature method_name: " + t.method_name, cited)
            in_names.add(i)
            out_names.update(o)
            plan.append((t, sig, sd))
        examples = serialized_examples(req.input)
    except TfsError as e:
        return error_answer(e), None
    outs_sorted = sorted(out_names)  # std::set order
    arr = np.array(examples, dtype=object)
    outs, err = served.tf_run({n: arr for n in sorted(in_names)}, outs_sorted)
    if err:
        return err, None
    by_name = dict(zip(outs_sorted, outs))
    resp = inference_pb2.MultiInferenceResponse()
    results = []
    for t, sig, sd in plan:
        r = resp.results.add()
        r.model_spec.name = t.model_spec.name
        r.model_spec.signature_name = sig
        if t.method_name == CLASSIFY:
            got = {k: by_name[sd.outputs[k].name] for k in ("classes", "scores") if k in sd.outputs}
            n_classes = next(iter(got.values())).shape[1]
            for i in range(len(examples)):
                cl = r.classification_result.classifications.add()
                for c in range(n_classes):
                    k = cl.classes.add()
                    if "classes" in got:
                        k.label = got["classes"][i, c].decode()
                    if "scores" in got:
                        k.score = float(got["scores"][i, c])
        else:
            got = {"outputs": by_name[sd.outputs["outputs"].name]}
            for v in got["outputs"].reshape(-1):
                r.regression_result.regressions.add().value = float(v)
        results.append({"signature": sig, "method_name": t.method_name,
                        "outputs": {k: shaped(v) for k, v in got.items()}})
    return {"source": "tensorflow_run", "result": "ok", "batch_size": len(examples),
            "results": results}, resp


def answer_predict(served, req):
    """predict_util.cc RunPredict: signature lookup, input aliases must match the signature's
    (the check that matters here), Tensor::FromProto, Session::Run."""
    cited = "tensorflow_serving/servables/tensorflow/predict_util.cc"
    sig = req.model_spec.signature_name or "serving_default"
    if sig not in served.mg.signature_def:
        return error_answer(TfsError("FAILED_PRECONDITION",
                                     'Serving signature key "%s" not found.' % sig, cited)), None
    sd = served.mg.signature_def[sig]
    assert set(req.inputs) == set(sd.inputs), (set(req.inputs), set(sd.inputs))
    feeds = {sd.inputs[k].name: tf.make_ndarray(v) for k, v in req.inputs.items()}
    keys = list(req.output_filter) or sorted(sd.outputs)
    outs, err = served.tf_run(feeds, [sd.outputs[k].name for k in keys])
    if err:
        return err, None
    resp = predict_pb2.PredictResponse()
    resp.model_spec.name = req.model_spec.name
    resp.model_spec.signature_name = sig
    for k, v in zip(keys, outs):
        resp.outputs[k].CopyFrom(tf.make_tensor_proto(v))
    batch = next(iter(feeds.values())).shape[0]
    return {"source": "tensorflow_run", "result": "ok", "batch_size": int(batch),
            "outputs": {k: shaped(v) for k, v in zip(keys, outs)}}, resp


ANSWER = {
    classification_pb2.ClassificationRequest: answer_classify,
    regression_pb2.RegressionRequest: answer_regress,
    inference_pb2.MultiInferenceRequest: answer_multi,
    predict_pb2.PredictRequest: answer_predict,
}


def answer(served, req):
    return ANSWER[type(req)](served[req_model(req)], req)


def req_model(req):
    if isinstance(req, inference_pb2.MultiInferenceRequest):
        return req.tasks[0].model_spec.name if req.tasks else ""
    return req.model_spec.name


def write_request(served, name, req, note, case=None):
    """requests/NAME.pb and requests/NAME.txt, and the answer."""
    data = ser(req)
    back = type(req).FromString(data)
    assert ser(back) == data, name
    put("requests/%s.pb" % name, data)
    put("requests/%s.txt" % name, str(req))
    a, resp = answer(served, req)
    row = {"file": "requests/%s.pb" % name, "text": "requests/%s.txt" % name,
           "type": req.DESCRIPTOR.full_name, "model": req_model(req), "note": note}
    row.update(a)
    if case:
        row["case"] = case
    ANSWERS.append(row)
    return req, resp


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------

TF1 = "tf1_examples"
TF1_V1 = "tf1_examples_v1"
KERAS = "keras_examples"
SNOWMAN = "\u2603".encode()


def make_requests(served):
    reqs = {}

    def c(name, req, note, case=None):
        reqs[name] = write_request(served, name, req, note, case)

    two = [example(X(1.0, 2.0), AGE(30), TAGS(b"red", b"big")),
           example(X(-0.5, 4.0), AGE(7), TAGS(SNOWMAN, b"\x00\xff"))]
    ctx = example(AGE(40), TAGS(b"ctx"))
    three = [example(X(1.0, 2.0)), example(X(3.0, 4.0)), example(X(5.0, 6.0), TAGS(b"own"))]

    # ClassificationRequest, tf1_examples
    c("classify_valid", classify_req(TF1, "serving_default", input_of(two)),
      "example_list of 2 examples with every feature; tags hold UTF-8 and non-UTF-8 bytes", "OK")
    c("classify_valid_context", classify_req(TF1, "serving_default", input_of(three, ctx)),
      "example_list_with_context: the context holds age and tags, each example x (the third "
      "also its own tags, which replace the context's)", "OK")
    c("classify_no_signature_name", classify_req(TF1, None, input_of(two[:1])),
      "no signature_name: TF Serving uses serving_default", "OK")
    c("classify_defaults", classify_req(TF1, "serving_default", input_of([example(X(1.0, 1.0))])),
      "only x: age takes its default, tags (sparse) is empty", "OK")
    c("classify_extra_feature", classify_req(TF1, "serving_default", input_of(
        [example(X(1.0, 2.0), AGE(3), ("color", "bytes", [b"blue"]), ("score", "float", [0.25]))])),
      "two features the model does not parse (color, score): ParseExample ignores them", "OK")
    c("classify_missing_x", classify_req(TF1, "serving_default", input_of(
        [example(AGE(30), TAGS(b"red"))])),
      "the required dense feature x is missing", "MISSING_FEATURE")
    c("classify_missing_x_second", classify_req(TF1, "serving_default", input_of(
        [example(X(1.0, 2.0)), example(AGE(5))])),
      "x is missing from the second example only (TensorFlow's message names no index)",
      "MISSING_FEATURE")
    c("classify_wrong_kind_x", classify_req(TF1, "serving_default", input_of(
        [example(("x", "int64", [1, 2]), AGE(30))])),
      "x as an int64_list where the model parses float", "FEATURE_KIND")
    c("classify_wrong_kind_tags", classify_req(TF1, "serving_default", input_of(
        [example(X(1.0, 2.0), ("tags", "float", [1.0]))])),
      "tags (a VarLen string feature) as a float_list", "FEATURE_KIND")
    c("classify_wrong_length_x", classify_req(TF1, "serving_default", input_of(
        [example(X(1.0, 2.0)), example(("x", "float", [1.0, 2.0, 3.0]))])),
      "x of length 3 (the model wants 2) in the second example", "FEATURE_LENGTH")
    c("classify_wrong_length_age", classify_req(TF1, "serving_default", input_of(
        [example(X(1.0, 2.0), ("age", "int64", [1, 2]))])),
      "age of length 2 (the model wants 1; it has a default, but a present value must fit)",
      "FEATURE_LENGTH")
    c("classify_context_override", classify_req(TF1, "serving_default", input_of(
        [example(("x", "float", [1.0, 2.0, 3.0]))], example(X(1.0, 2.0)))),
      "context x of length 2, the example's x of length 3: the example's replaces the context's",
      "FEATURE_LENGTH")
    c("classify_context_only_x", classify_req(TF1, "serving_default", input_of(
        [example(AGE(1)), example(TAGS(b"t"))], example(X(9.0, 8.0)))),
      "x only in the context: every example gets it", "OK")
    c("classify_empty_input", classify_req(TF1, "serving_default", input_of([], kind="list")),
      "Input with an empty example_list", "EMPTY_INPUT")
    c("classify_empty_context_input", classify_req(TF1, "serving_default",
                                                   input_of([], kind="context")),
      "Input with an example_list_with_context that has no examples (no context either)",
      "EMPTY_INPUT")
    c("classify_no_input", classify_req(TF1, "serving_default", None),
      "no Input at all", "EMPTY_INPUT")
    c("classify_wrong_signature", classify_req(TF1, "nope", input_of(two)),
      "a signature the model does not have", "UNKNOWN_SIGNATURE")
    c("classify_wrong_method", classify_req(TF1, "regress", input_of(two)),
      "a ClassificationRequest to the regress signature", "WRONG_METHOD")
    c("classify_to_predict_signature", classify_req(TF1, "predict", input_of(two)),
      "a ClassificationRequest to the predict signature (its input is 'examples', not 'inputs')",
      "WRONG_METHOD")

    # RegressionRequest, tf1_examples
    c("regress_valid", regress_req(TF1, "regress", input_of(two)), "example_list of 2", "OK")
    c("regress_valid_context", regress_req(TF1, "regress", input_of(three, ctx)),
      "example_list_with_context of 3", "OK")
    c("regress_missing_x", regress_req(TF1, "regress", input_of([example(AGE(1))])),
      "x missing", "MISSING_FEATURE")
    c("regress_wrong_kind_x", regress_req(TF1, "regress", input_of(
        [example(("x", "int64", [1, 2]))])), "x as int64_list", "FEATURE_KIND")
    c("regress_wrong_length_x", regress_req(TF1, "regress", input_of(
        [example(("x", "float", [1.0, 2.0, 3.0]))])), "x of length 3", "FEATURE_LENGTH")
    c("regress_extra_feature", regress_req(TF1, "regress", input_of(
        [example(X(1.0, 2.0), ("unknown", "int64", [5]))])), "an unknown feature", "OK")
    c("regress_empty_input", regress_req(TF1, "regress", input_of([], kind="list")),
      "empty example_list", "EMPTY_INPUT")
    c("regress_wrong_signature", regress_req(TF1, "nope", input_of(two)),
      "unknown signature", "UNKNOWN_SIGNATURE")
    c("regress_wrong_method", regress_req(TF1, "serving_default", input_of(two)),
      "a RegressionRequest to the classify signature (serving_default)", "WRONG_METHOD")

    # MultiInferenceRequest, tf1_examples
    both = [("serving_default", CLASSIFY), ("regress", REGRESS)]
    c("multi_valid", multi_req(TF1, both, input_of(three, ctx)),
      "classify (serving_default) and regress on one example_list_with_context", "OK")
    c("multi_valid_list", multi_req(TF1, both, input_of(two)),
      "classify and regress on an example_list", "OK")
    c("multi_missing_x", multi_req(TF1, both, input_of([example(AGE(2))])),
      "x missing", "MISSING_FEATURE")
    c("multi_empty_input", multi_req(TF1, both, input_of([], kind="list")),
      "empty example_list", "EMPTY_INPUT")
    c("multi_wrong_signature", multi_req(TF1, [("serving_default", CLASSIFY), ("nope", REGRESS)],
                                         input_of(two)),
      "the second task names a signature the model lacks", "UNKNOWN_SIGNATURE")
    c("multi_wrong_method", multi_req(TF1, [("regress", CLASSIFY)], input_of(two)),
      "a classify task on the regress signature", "WRONG_METHOD")
    c("multi_predict_method", multi_req(TF1, [("predict", PREDICT)], input_of(two)),
      "a task with method_name tensorflow/serving/predict", "WRONG_METHOD")
    c("multi_duplicate_signature", multi_req(TF1, [("serving_default", CLASSIFY),
                                                   ("", CLASSIFY)], input_of(two)),
      "two tasks on serving_default (the second by the empty name)", "DUPLICATE_TASK")

    # PredictRequest whose input is a string tensor of serialized Examples
    c("predict_examples_valid", predict_examples_req(TF1, "predict", two),
      "the predict signature over serialized Examples: a DT_STRING tensor [2]", "OK")
    c("predict_examples_missing_x", predict_examples_req(TF1, "predict", [example(AGE(1))]),
      "the same with x missing: ParseExampleV2 refuses it inside Predict too", "MISSING_FEATURE")

    # keras_examples (TF2 export, every signature's method_name is predict)
    c("keras_classify_valid", classify_req(KERAS, "classify", input_of(two)),
      "ClassificationRequest to the TF2 signature classify (method_name predict)", "OK")
    c("keras_classify_valid_context", classify_req(KERAS, "classify", input_of(three, ctx)),
      "the same with a context", "OK")
    c("keras_classify_missing_x", classify_req(KERAS, "classify", input_of([example(AGE(3))])),
      "x missing", "MISSING_FEATURE")
    c("keras_classify_wrong_kind_x", classify_req(KERAS, "classify", input_of(
        [example(("x", "int64", [1, 2]))])), "x as int64_list", "FEATURE_KIND")
    c("keras_regress_valid", regress_req(KERAS, "regress", input_of(two)),
      "RegressionRequest to the TF2 signature regress", "OK")
    c("keras_classify_default_signature", classify_req(KERAS, None, input_of(two)),
      "ClassificationRequest to serving_default, whose input is 'examples'", "WRONG_METHOD")
    c("keras_predict_valid", predict_examples_req(KERAS, "serving_default", two),
      "PredictRequest with the serialized Examples", "OK")
    c("keras_multi_valid", multi_req(KERAS, [("classify", CLASSIFY), ("regress", REGRESS)],
                                     input_of(two)),
      "MultiInferenceRequest over the two TF2 signatures (two input placeholders fed the same "
      "tensor)", "OK")
    return reqs


def make_v1_answers(served):
    """answers_v1.json: every request to tf1_examples (requests/*.pb) run again, unchanged,
    against tf1_examples_v1, whose graph parses the same features with the V1 op ParseExample;
    rows as in answers.json, with "model" the model that answered."""
    rows = []
    for row in ANSWERS:
        if row.get("model") != TF1 or not row["file"].startswith("requests/"):
            continue
        req = ANSWER_TYPES[row["type"]].FromString((OUT / row["file"]).read_bytes())
        a, _ = ANSWER[type(req)](served[TF1_V1], req)
        out = {k: row[k] for k in ("file", "text", "type", "note")}
        out["model"] = TF1_V1
        out.update(a)
        out["case"] = row["case"]
        rows.append(out)
    put("answers_v1.json", json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return rows


ANSWER_TYPES = {t.DESCRIPTOR.full_name: t for t in ANSWER}


# ---------------------------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------------------------

PL = prediction_log_pb2


def log_of(req, resp):
    if isinstance(req, classification_pb2.ClassificationRequest):
        lg = PL.PredictionLog(classify_log=PL.ClassifyLog(request=req))
        if resp is not None:
            lg.classify_log.response.CopyFrom(resp)
    elif isinstance(req, regression_pb2.RegressionRequest):
        lg = PL.PredictionLog(regress_log=PL.RegressLog(request=req))
        if resp is not None:
            lg.regress_log.response.CopyFrom(resp)
    elif isinstance(req, inference_pb2.MultiInferenceRequest):
        lg = PL.PredictionLog(multi_inference_log=PL.MultiInferenceLog(request=req))
        if resp is not None:
            lg.multi_inference_log.response.CopyFrom(resp)
    else:
        lg = PL.PredictionLog(predict_log=PL.PredictLog(request=req))
        if resp is not None:
            lg.predict_log.response.CopyFrom(resp)
    return lg


def write_log(served, rel, reqs, note):
    """A TFRecord of PredictionLogs (request + TF's response where it answered ok)."""
    rows = []
    p = OUT / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(p)) as w:
        for i, req in enumerate(reqs):
            a, resp = answer(served, req)
            lg = log_of(req, resp)
            w.write(ser(lg))
            row = {"record": i, "log_type": lg.WhichOneof("log_type"), "model": req_model(req)}
            row.update(a)
            rows.append(row)
    WRITTEN.add(rel)
    # read back with TensorFlow
    back = [bytes(r.numpy()) for r in tf.data.TFRecordDataset(str(p))]
    assert len(back) == len(reqs), rel
    for b in back:
        assert ser(PL.PredictionLog.FromString(b)) == b, rel
    ANSWERS.append({"file": rel, "type": "TFRecord of tensorflow.serving.PredictionLog",
                    "note": note, "records": rows})


def make_logs(served, reqs):
    r = {k: v[0] for k, v in reqs.items()}
    write_log(served, "logs/classify_log.tfrecord",
              [r["classify_valid"], r["classify_valid_context"], r["classify_defaults"],
               r["classify_extra_feature"], r["classify_no_signature_name"]],
              "classify_log records with TensorFlow's responses; batch sizes 2, 3, 1, 1, 1")
    write_log(served, "logs/regress_log.tfrecord",
              [r["regress_valid"], r["regress_valid_context"], r["regress_extra_feature"]],
              "regress_log records with responses; batch sizes 2, 3, 1")
    write_log(served, "logs/multi_inference_log.tfrecord",
              [r["multi_valid"], r["multi_valid_list"]],
              "multi_inference_log records with responses; batch sizes 3, 2")
    write_log(served, "logs/mixed.tfrecord",
              [r["predict_examples_valid"], r["classify_valid"], r["regress_valid_context"],
               r["multi_valid"], r["classify_missing_x"], r["keras_classify_valid"]],
              "predict_log (serialized Examples), classify_log, regress_log, "
              "multi_inference_log, a classify_log TensorFlow refuses (x missing: no response), "
              "and a classify_log for keras_examples")


# ---------------------------------------------------------------------------------------------
# REST bodies
# ---------------------------------------------------------------------------------------------

JSON_TYPE = {type(None): "Null", list: "Array", dict: "Object"}


def json_value_to_feature(name, val, f):
    """json_tensor.cc AddValueToFeature (one JSON value into a Feature)."""
    cited = "tensorflow_serving/util/json_tensor.cc AddValueToFeature"

    def need(kind):
        cur = f.WhichOneof("kind")
        if cur is not None and cur != kind:
            raise TfsError("INVALID_ARGUMENT", "Unexpected element type in feature: %s expecting "
                           "type: %s" % (name, cur.split("_")[0]), cited)

    def unexpected():
        return TfsError("INVALID_ARGUMENT", "Feature: %s has element with unexpected JSON type: %s"
                        % (name, JSON_TYPE[type(val)]), cited)
    if isinstance(val, bool):
        need("int64_list")
        f.int64_list.value.append(1 if val else 0)
    elif isinstance(val, dict):
        # IsValBase64Object: exactly one key, "b64", holding a string.
        if list(val) != ["b64"] or not isinstance(val["b64"], str):
            raise unexpected()
        need("bytes_list")
        f.bytes_list.value.append(base64.b64decode(val["b64"]))
    elif isinstance(val, str):
        need("bytes_list")
        f.bytes_list.value.append(val.encode())
    elif isinstance(val, int) and -2**63 <= val <= 2**64 - 1:
        # rapidjson reads a whole number that fits 64 bits as an integer (IsDouble false).
        need("int64_list")
        if val > 2**63 - 1:
            raise TfsError("INVALID_ARGUMENT", "Feature: %s has uint64_t element. Only int64_t is "
                           "supported." % name, cited)
        f.int64_list.value.append(val)
    elif isinstance(val, (int, float)):
        # rapidjson IsDouble: the number had a fraction or exponent, was NaN/Infinity, or is a
        # whole number beyond 64 bits (rapidjson's ParseNumber then makes it a double).
        # GetFloat is static_cast<float>(GetDouble()): the double, rounded to float.
        need("float_list")
        f.float_list.value.append(float(val))
    else:
        raise unexpected()


def json_example(obj):
    """json_tensor.cc MakeExampleFromJsonObject."""
    if not isinstance(obj, dict):
        raise TfsError("INVALID_ARGUMENT", "Example must be JSON object but got JSON %s"
                       % JSON_TYPE.get(type(obj), "Number"),
                       "tensorflow_serving/util/json_tensor.cc MakeExampleFromJsonObject")
    ex = tf.train.Example()
    for name, content in obj.items():
        f = tf.train.Feature()
        for v in (content if isinstance(content, list) else [content]):
            json_value_to_feature(name, v, f)
        ex.features.feature[name].CopyFrom(f)
    return ex


def request_from_json(cls, body, model):
    """json_tensor.cc FillClassifyRegressRequestFromJson (the body parsed by Python's json, which
    keeps 1.0 a float and 1 an int as rapidjson's IsDouble does)."""
    cited = "tensorflow_serving/util/json_tensor.cc FillClassifyRegressRequestFromJson"
    doc = json.loads(body)
    r = cls()
    r.model_spec.name = model
    if "signature_name" in doc:
        r.model_spec.signature_name = doc["signature_name"]
    has_context = "context" in doc
    if has_context:
        r.input.example_list_with_context.context.CopyFrom(json_example(doc["context"]))
    if "examples" not in doc:
        raise TfsError("INVALID_ARGUMENT", "When method is classify, key 'examples' is expected "
                       "and was not found", cited)
    if not doc["examples"]:
        raise TfsError("INVALID_ARGUMENT", "'examples' value is an empty array", cited,
                       message_prefix="json_tensor.cc FormatError puts 'JSON Value: ', the body as "
                                      "JsonValueToDebugString prints it, and a space before this")
    for e in doc["examples"]:
        (r.input.example_list_with_context.examples if has_context
         else r.input.example_list.examples).append(json_example(e))
    return r


def write_rest(served, name, method, model, body, note, case=None, same_as=None):
    """rest/NAME.json (the body: a dict, written with json.dumps, or the text itself), and
    rest/NAME.pb/.txt, the request TF Serving makes of it. same_as: the same request built
    from tf.train.Example with every feature's kind spelled out (classify_req/regress_req and
    feature()), which the port's bytes must equal: the pairing cli/tests/interop/rest_examples.rs relies
    on, held here."""
    text = body if isinstance(body, str) else json.dumps(body, indent=1, ensure_ascii=False) + "\n"
    rel = "rest/%s.json" % name
    put(rel, text)
    cls = classification_pb2.ClassificationRequest if method == "classify" else \
        regression_pb2.RegressionRequest
    row = {"file": rel, "type": "REST :%s body" % method, "model": model,
           "url": "/v1/models/%s:%s" % (model, method), "note": note}
    try:
        req = request_from_json(cls, text, model)
    except TfsError as e:
        assert same_as is None, name
        row.update(error_answer(e))
    else:
        assert same_as is not None, name
        assert type(same_as) is cls and ser(same_as) == ser(req), \
            "%s: the port made\n%s\nTensorFlow's protos\n%s" % (name, req, same_as)
        put("rest/%s.pb" % name, ser(req))
        put("rest/%s.txt" % name, str(req))
        row["request"] = "rest/%s.pb" % name
        row["request_text"] = "rest/%s.txt" % name
        row.update(answer(served, req)[0])
    if case:
        row["case"] = case
    ANSWERS.append(row)


def make_rest(served):
    snowman = SNOWMAN + b"\x00\xff"
    snowman_b64 = base64.b64encode(snowman).decode()
    sd = "serving_default"
    write_rest(served, "classify_valid", "classify", TF1, {
        "signature_name": sd,
        "examples": [{"x": [1.0, 2.0], "age": 30, "tags": ["red", "big"]},
                     {"x": [-0.5, 4.0], "age": 7, "tags": {"b64": snowman_b64}}]},
        "two examples; the second's tags is one bytes value given as {\"b64\": ...}", "OK",
        same_as=classify_req(TF1, sd, input_of([
            example(X(1.0, 2.0), AGE(30), TAGS(b"red", b"big")),
            example(X(-0.5, 4.0), AGE(7), TAGS(snowman))])))
    write_rest(served, "classify_context", "classify", TF1, {
        "signature_name": sd,
        "context": {"age": 40, "tags": [{"b64": base64.b64encode(b"ctx").decode()}]},
        "examples": [{"x": [1.0, 2.0]}, {"x": [3.0, 4.0]}, {"x": [5.0, 6.0], "tags": "own"}]},
        "context (example_list_with_context)", "OK",
        same_as=classify_req(TF1, sd, input_of(
            [example(X(1.0, 2.0)), example(X(3.0, 4.0)), example(X(5.0, 6.0), TAGS(b"own"))],
            context=example(AGE(40), TAGS(b"ctx")))))
    write_rest(served, "classify_int_for_float", "classify", TF1, {
        "signature_name": sd,
        "examples": [{"x": [1, 2], "age": 30}]},
        "x written as whole numbers: TF Serving makes an int64_list, which ParseExample refuses",
        "FEATURE_KIND",
        same_as=classify_req(TF1, sd, input_of([example(("x", "int64", [1, 2]), AGE(30))])))
    write_rest(served, "classify_json_kinds", "classify", TF1,
               '{"signature_name": "serving_default", "examples": [\n'
               ' {"x": [1e0, 2.5E-1], "age": true, "tags": []},\n'
               ' {"x": [-2.0e1, 0.1], "age": false, "tags": "plain"}\n'
               ']}\n',
               "numbers with an exponent are floats; true/false int64 1/0; an empty list a "
               "feature with no kind; 0.1 rounded from the double to float", "OK",
               same_as=classify_req(TF1, sd, input_of([
                   example(X(1.0, 0.25), AGE(1), ("tags", "none", [])),
                   example(X(-20.0, 0.1), AGE(0), TAGS(b"plain"))])))
    write_rest(served, "classify_int_beyond_64_bits", "classify", TF1,
               '{"examples": [{"x": [1.0, 2.0], "age": 18446744073709551616}]}\n',
               "age one past 2^64-1: rapidjson makes it a double, so a float_list, which "
               "ParseExample refuses for the int64 age", "FEATURE_KIND",
               same_as=classify_req(TF1, None, input_of([
                   example(X(1.0, 2.0), ("age", "float", [2.0**64]))])))
    write_rest(served, "classify_uint64", "classify", TF1,
               '{"examples": [{"x": [1.0, 2.0], "age": 9223372036854775808}]}\n',
               "age 2^63: a uint64 to rapidjson, refused while the JSON is read", "BAD_JSON")
    write_rest(served, "classify_mixed_kinds", "classify", TF1, {
        "examples": [{"x": [1.0, 2]}]},
        "a float then a whole number in one feature: refused while the JSON is read", "BAD_JSON")
    write_rest(served, "classify_nested_list", "classify", TF1, {
        "examples": [{"x": [[1.0, 2.0]]}]},
        "a list of lists: refused while the JSON is read", "BAD_JSON")
    write_rest(served, "classify_not_b64", "classify", TF1, {
        "examples": [{"x": [1.0, 2.0], "tags": {"b64": "YQ==", "more": 1}}]},
        "an object that is not {\"b64\": ...}: refused while the JSON is read", "BAD_JSON")
    write_rest(served, "classify_missing_x", "classify", TF1, {
        "examples": [{"age": 30}]}, "no signature_name (serving_default); x missing",
        "MISSING_FEATURE",
        same_as=classify_req(TF1, None, input_of([example(AGE(30))])))
    write_rest(served, "classify_empty_examples", "classify", TF1, {
        "signature_name": sd, "examples": []},
        "an empty examples list: refused while the JSON is read", "EMPTY_INPUT")
    write_rest(served, "regress_valid", "regress", TF1, {
        "signature_name": "regress",
        "examples": [{"x": [1.0, 2.0], "age": 30, "tags": ["a"]}, {"x": [0.5, 0.25]}]},
        "regress, two examples", "OK",
        same_as=regress_req(TF1, "regress", input_of([
            example(X(1.0, 2.0), AGE(30), TAGS(b"a")), example(X(0.5, 0.25))])))
    write_rest(served, "regress_context", "regress", TF1, {
        "signature_name": "regress", "context": {"x": [2.0, 2.0]},
        "examples": [{"age": 1}, {"age": 2, "tags": ["p", "q"]}]},
        "x in the context only", "OK",
        same_as=regress_req(TF1, "regress", input_of(
            [example(AGE(1)), example(AGE(2), TAGS(b"p", b"q"))], context=example(X(2.0, 2.0)))))
    write_rest(served, "regress_wrong_length", "regress", TF1, {
        "signature_name": "regress", "examples": [{"x": [1.0, 2.0, 3.0]}]},
        "x of length 3", "FEATURE_LENGTH",
        same_as=regress_req(TF1, "regress", input_of([example(("x", "float", [1.0, 2.0, 3.0]))])))


# ---------------------------------------------------------------------------------------------
# Batch sizes
# ---------------------------------------------------------------------------------------------

BATCHING = {"max_batch_size": 32, "batch_timeout_micros": 0, "num_batch_threads": 2,
            "allowed_batch_sizes": [1, 8, 32], "pad_variable_length_inputs": False}


def batching_parameters_class():
    """tensorflow_serving.BatchingParameters, built from its fields in
    tensorflow_serving/servables/tensorflow/session_bundle_config.proto (not in the pip package),
    to check that the file parses."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="tfreq_batching_parameters.proto", package="tensorflow.serving", syntax="proto3",
        dependency=["google/protobuf/wrappers.proto"])
    m = fdp.message_type.add(name="BatchingParameters")
    F = descriptor_pb2.FieldDescriptorProto
    for name, num, typ in (("max_batch_size", 1, ".google.protobuf.Int64Value"),
                           ("batch_timeout_micros", 2, ".google.protobuf.Int64Value"),
                           ("max_enqueued_batches", 3, ".google.protobuf.Int64Value"),
                           ("num_batch_threads", 4, ".google.protobuf.Int64Value"),
                           ("thread_pool_name", 5, ".google.protobuf.StringValue"),
                           ("enable_large_batch_splitting", 8, ".google.protobuf.BoolValue"),
                           ("max_execution_batch_size", 9, ".google.protobuf.Int64Value")):
        m.field.add(name=name, number=num, type=F.TYPE_MESSAGE, type_name=typ,
                    label=F.LABEL_OPTIONAL)
    m.field.add(name="allowed_batch_sizes", number=6, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    m.field.add(name="pad_variable_length_inputs", number=7, type=F.TYPE_BOOL,
                label=F.LABEL_OPTIONAL)
    from google.protobuf import wrappers_pb2  # noqa: F401  (registers wrappers.proto)
    pool = descriptor_pool.Default()
    try:
        desc = pool.FindMessageTypeByName("tensorflow.serving.BatchingParameters")
    except KeyError:
        pool.Add(fdp)
        desc = pool.FindMessageTypeByName("tensorflow.serving.BatchingParameters")
    return message_factory.GetMessageClass(desc)


def batch_rule(size, p=BATCHING):
    """The batch a request of `size` (0th dimension; number of examples for classify/regress/
    multi-inference) runs at when TF Serving batches it alone (a warm-up, or any request that
    finds no other in the open batch):

    - tensorflow/core/kernels/batching_util/shared_batch_scheduler.h,
      Queue::ValidateBatchTaskQueueCapacity: a task larger than input_batch_size_limit
      (= BatchingParameters.max_batch_size, bundle_factory_util.h GetQueueOptions) is refused
      with InvalidArgument "Task size %d is larger than maximum input batch size %d" -- also when
      enable_large_batch_splitting is on (then input_batch_size_limit is still max_batch_size, and
      tasks up to it are split into batches of at most max_execution_batch_size).
    - tensorflow_serving/batching/batching_session.cc MergeInputTensors pads the merged batch
      to RoundToLowestAllowedBatchSize(allowed_batch_sizes, batch.size())
      (tensorflow_serving/batching/batching_util.cc): the smallest allowed size >= the batch's
      size (the sum of its tasks' 0th dims), or the size itself when allowed_batch_sizes is
      empty. Padding repeats the last task's first row; pad_variable_length_inputs only pads
      dimensions other than the 0th.
    - tensorflow_serving/servables/tensorflow/bundle_factory_util.cc WrapSessionForBatching:
      the last allowed_batch_sizes entry must equal max_batch_size (1000 when unset), else the
      model fails to load with "Last entry in allowed_batch_sizes must match max_batch_size";
      that path does not check that the entries increase.

    Under load several tasks share a batch: their sizes add up before the rounding, so the sizes
    reached alone are the ones a warm-up must send; mixed batches can reach any allowed size."""
    if size > p["max_batch_size"]:
        return None, ("Task size %d is larger than maximum input batch size %d"
                      % (size, p["max_batch_size"]))
    allowed = p["allowed_batch_sizes"]
    if not allowed:
        return size, None
    return next(a for a in allowed if a >= size), None


def make_batch(served):
    cls = batching_parameters_class()
    # Written by hand in the form of TF Serving's documented example (serving_config.md,
    # "Batching Configuration"), then parsed back as BatchingParameters to check it.
    text = ("max_batch_size { value: %d }\n" % BATCHING["max_batch_size"]
            + "batch_timeout_micros { value: %d }\n" % BATCHING["batch_timeout_micros"]
            + "num_batch_threads { value: %d }\n" % BATCHING["num_batch_threads"]
            + "".join("allowed_batch_sizes: %d\n" % n for n in BATCHING["allowed_batch_sizes"])
            + "pad_variable_length_inputs: %s\n"
            % str(BATCHING["pad_variable_length_inputs"]).lower())
    back = text_format.Parse(text, cls())
    assert back.max_batch_size.value == BATCHING["max_batch_size"], text
    assert back.HasField("batch_timeout_micros"), text
    assert back.num_batch_threads.value == BATCHING["num_batch_threads"], text
    assert list(back.allowed_batch_sizes) == BATCHING["allowed_batch_sizes"], text
    assert back.pad_variable_length_inputs == BATCHING["pad_variable_length_inputs"], text
    put("batch/batching_parameters.txt", text)

    def pred(n, i):
        r = predict_pb2.PredictRequest()
        r.model_spec.name = "batch_x2"
        r.model_spec.signature_name = "serving_default"
        vals = np.arange(n * 2, dtype=np.float32).reshape(n, 2) + i
        r.inputs["x"].CopyFrom(tf.make_tensor_proto(vals))
        r.output_filter.append("y")
        return r

    sizes = [1, 3, 5, 8, 9, 33, 3, 1]
    write_log(served, "batch/predict_log.tfrecord", [pred(n, i) for i, n in enumerate(sizes)],
              "predict_log records for batch_x2, x of 0th dims %s" % sizes)
    warm = [1, 3]
    write_log(served, "batch/warmup.tfrecord", [pred(n, 100 + i) for i, n in enumerate(warm)],
              "a warm-up for batch_x2 that sends x of 0th dims %s" % warm)

    def table(ss):
        rows, reached = [], []
        for i, n in enumerate(ss):
            padded, refused = batch_rule(n)
            row = {"record": i, "batch_size": n, "padded_batch_size": padded}
            if refused:
                row["refused"] = refused
            elif padded not in reached:
                reached.append(padded)
            rows.append(row)
        return rows, sorted(reached)

    prod_rows, prod_reached = table(sizes)
    warm_rows, warm_reached = table(warm)
    logs = {}
    for a in ANSWERS:
        if a["file"].startswith("logs/"):
            recs, reached = [], set()
            for r in a["records"]:
                n = r.get("batch_size")
                if n is None:
                    recs.append({"record": r["record"], "batch_size": None,
                                 "note": "refused before batching: " + r["message"]})
                    continue
                padded, refused = batch_rule(n)
                recs.append({"record": r["record"], "batch_size": n, "padded_batch_size": padded})
                reached.add(padded)
            logs[a["file"]] = {"records": recs, "padded_sizes_reached": sorted(reached)}
    expected = {
        "batching_parameters": "batch/batching_parameters.txt",
        "rule": inspect.cleandoc(batch_rule.__doc__),
        "cited": ["tensorflow/core/kernels/batching_util/shared_batch_scheduler.h "
                  "Queue::ValidateBatchTaskQueueCapacity",
                  "tensorflow_serving/servables/tensorflow/bundle_factory_util.h GetQueueOptions",
                  "tensorflow_serving/servables/tensorflow/bundle_factory_util.cc "
                  "WrapSessionForBatching",
                  "tensorflow_serving/batching/batching_session.cc MergeInputTensors",
                  "tensorflow_serving/batching/batching_util.cc RoundToLowestAllowedBatchSize"],
        "max_batch_size": BATCHING["max_batch_size"],
        "allowed_batch_sizes": BATCHING["allowed_batch_sizes"],
        "files": {
            "batch/predict_log.tfrecord": {"records": prod_rows,
                                           "padded_sizes_reached": prod_reached},
            "batch/warmup.tfrecord": {"records": warm_rows, "padded_sizes_reached": warm_reached},
        },
        "warmup_misses": sorted(set(prod_reached) - set(warm_reached)),
        "classify_regress_logs": logs,
    }
    put("batch/expected.json", json.dumps(expected, indent=1, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------

def main():
    regen_keras = "--models" in sys.argv[1:]
    print("tensorflow %s, protobuf backend %s" % (tf.__version__, api_implementation.Type()))
    OUT.mkdir(parents=True, exist_ok=True)
    for d in ("requests", "rest", "logs", "batch"):
        if (OUT / d).exists():
            shutil.rmtree(OUT / d)
    export_tf1(MODELS / TF1)
    export_tf1(MODELS / TF1_V1, v1=True)
    export_batch(MODELS / "batch_x2")
    if regen_keras or not (MODELS / KERAS / "saved_model.pb").exists():
        export_keras(MODELS / KERAS)
    for name in (TF1, TF1_V1, KERAS, "batch_x2"):
        describe_model(name)
        for p in (MODELS / name).rglob("*"):
            if p.is_file():
                WRITTEN.add(str(p.relative_to(OUT)))
    put("models/feature_spec.json", json.dumps(feature_spec_json(), indent=1) + "\n")
    served = {n: Served(n) for n in (TF1, TF1_V1, KERAS, "batch_x2")}

    reqs = make_requests(served)
    make_logs(served, reqs)
    make_rest(served)
    make_batch(served)
    v1_rows = make_v1_answers(served)

    put("answers.json", json.dumps(ANSWERS, indent=1, ensure_ascii=False) + "\n")
    for p in sorted(OUT.rglob("*")):
        if p.is_file() and str(p.relative_to(OUT)) not in WRITTEN:
            print("warning: %s was not written by this script" % p.relative_to(OUT))
    for a in ANSWERS:
        if "records" in a:
            print("%-40s %s" % (a["file"], [r["result"] for r in a["records"]]))
        else:
            print("%-40s %-5s %s" % (a["file"], a["result"], a.get("message", "")[:110]))
    for a in v1_rows:
        print("v1 %-37s %-5s %s" % (a["file"], a["result"], a.get("message", "")[:110]))
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print("tests/data/examples: %d files, %d bytes" % (len(WRITTEN), total))


if __name__ == "__main__":
    main()
