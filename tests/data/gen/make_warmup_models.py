#!/usr/bin/env python3
"""Warm-ups `tfreq warmup --model` writes from a model alone, each run through TensorFlow the way
TF Serving's loader runs a warm-up, with TensorFlow's answers. Pins: requirements-tf.txt.

    cargo build && "$(bash .ci/venv tf)" tests/data/gen/make_warmup_models.py [TFREQ] [--models]

TFREQ defaults to target/debug/tfreq. Everything is written under tests/data/warmup/:

Models (models/; each small, a few KB):
  estimator/    TF1 graph (SavedModelBuilder), an estimator-style export: one string placeholder
                `input_example_tensor` [-1] parsed with tf.io.parse_example (ParseExampleV2):
                  x     FixedLenFeature([3], float32), required
                  kind  FixedLenFeature([1], string), required
                  age   FixedLenFeature([1], int64, default_value=[0])
                  tags  VarLenFeature(int64): sparse
                  w     RaggedFeature(float32): ragged
                Signatures serving_default (tensorflow/serving/classify: classes, scores),
                regress (tensorflow/serving/regress: outputs) and predict (tensorflow/serving/
                predict: examples -> scores, value).
  defaults/     TF1 graph, serving_default: x float32 [-1,2], k float32 [] fed by
                placeholder_with_default(2.0) -> y = k*x; SignatureDef.defaults holds k = 2.0
                (TF Serving fills a missing input from it: predict_util.cc GetInputValues, and
                its VerifyRequestInputsSize accepts fewer inputs when the signature has
                defaults). SavedModelBuilder writes no defaults: they are added to
                saved_model.pb after the build.
  fixed_multi/  TF1 graph, several signatures: fixed (a float32 [2,3] -> row sums),
                any_rank (r float32, unknown rank -> its sum), dtypes (h float16 [-1,4],
                b bfloat16 [-1,4], u8 uint8 [-1,4], u16 uint16 [-1], u32 uint32 [-1], u64 uint64
                [-1], i8 int8 [-1], flag bool [-1], d float64 [-1], c complex64 [-1] -> one float32
                sum per row) and ragged_dim (t int32 [-1,-1] -> row sums).
  text_input/   TF1 graph, serving_default: q string [-1] (not tf.Examples: tf.strings.length)
                and n float32 [-1] -> y = len(q) + n. Without --values, tfreq leaves it out.
  keras_multi/  a Keras 3 model exported with keras.export.ExportArchive (several endpoints:
                serving_default x float32 [-1,4] -> y, score x float32 [-1,4] + ids int64 [-1,2]
                -> s, embed tokens int32 [-1,-1] -> e). Not byte-deterministic (fingerprint.pb):
                exported only when missing or with --models.
  NAME.saved_model_cli.txt, NAME.metadata.json: as make_models.py writes them.

Warm-ups (NAME.tfrecord, or NAME.bin for an EAS one): `tfreq warmup --model MODEL ARGS -o FILE`
for every SavedModel under tests/data/models/, tests/data/examples/models/,
tests/data/check/models/ and models/ here (the list RUNS below).

answers.json: per warm-up, the tfreq arguments, what tfreq said on stderr, and per record what
TensorFlow answered, run as TF Serving's warm-up does
(tensorflow_serving/servables/tensorflow/saved_model_warmup_util.cc RunSavedModelWarmup: every
record must succeed or the model fails to load): the SavedModel is loaded into a Session with
its variables restored (make_examples.py Served), a predict_log request runs as predict_util.cc
RunPredict does (signature defaults filled for inputs the request leaves out, the signature's
tensor names fed, every output fetched for an empty output_filter), classify_log / regress_log
as classifier.cc / regressor.cc do (make_examples.py answer_classify / answer_regress). An EAS
warm-up is converted with `tfreq convert --wire tf-serving` and run the same way (the EAS
processor runs Session::Run with the request's feeds and fetches). "ok" rows carry the output
shapes; failures carry TensorFlow's error.

Deterministic: a re-run rewrites identical bytes (all but keras_multi/ without --models);
.ci/run checks it with git diff.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_examples  # noqa: E402  (Served, answer_classify, answer_regress, TF Serving's checks)
import make_models  # noqa: E402  (saved_model_cli / metadata JSON in the same forms)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "warmup"
MODELS = OUT / "models"
tf1 = tf.compat.v1
sig_utils = tf1.saved_model.signature_def_utils

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
TFREQ = ARGS[0] if ARGS else str(REPO / "target" / "debug" / "tfreq")


def builder_save(d, sess, sigs):
    b = tf1.saved_model.builder.SavedModelBuilder(str(d))
    b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map=sigs)
    b.save()


def export_estimator(d):
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        ser = tf1.placeholder(tf.string, [None], name="input_example_tensor")
        p = tf.io.parse_example(ser, {
            "x": tf.io.FixedLenFeature([3], tf.float32),
            "kind": tf.io.FixedLenFeature([1], tf.string),
            "age": tf.io.FixedLenFeature([1], tf.int64, default_value=[0]),
            "tags": tf.io.VarLenFeature(tf.int64),
            "w": tf.io.RaggedFeature(tf.float32),
        })
        n_tags = tf.cast(tf.sparse.reduce_sum(p["tags"], axis=1, keepdims=True), tf.float32)
        w = tf.reshape(tf.reduce_sum(p["w"], axis=1), [-1, 1])
        kind = tf.cast(tf.strings.to_hash_bucket_fast(p["kind"], 4), tf.float32)
        age = tf.cast(p["age"], tf.float32)
        scores = tf.identity(tf.concat([p["x"][:, :2], age + n_tags + w + kind], axis=1), "scores")
        value = tf.identity(tf.reduce_sum(scores, axis=1, keepdims=True), "value")
        classes = tf.tile(tf.constant([["a", "b", "c"]]), [tf.shape(ser)[0], 1], name="classes")
        builder_save(d, sess, {
            "serving_default": sig_utils.classification_signature_def(ser, classes, scores),
            "regress": sig_utils.regression_signature_def(ser, value),
            "predict": sig_utils.predict_signature_def({"examples": ser},
                                                       {"scores": scores, "value": value}),
        })


def export_defaults(d):
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        x = tf1.placeholder(tf.float32, [None, 2], name="x")
        k = tf1.placeholder_with_default(tf.constant(2.0), [], name="k")
        y = tf.multiply(x, k, name="y")
        builder_save(d, sess, {
            "serving_default": sig_utils.predict_signature_def({"x": x, "k": k}, {"y": y})})
    pb = d / "saved_model.pb"
    sm = saved_model_pb2.SavedModel.FromString(pb.read_bytes())
    sm.meta_graphs[0].signature_def["serving_default"].defaults["k"].CopyFrom(
        tf.make_tensor_proto(np.float32(2.0)))
    pb.write_bytes(sm.SerializeToString(deterministic=True))


def export_fixed_multi(d):
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        a = tf1.placeholder(tf.float32, [2, 3], name="a")
        fixed = tf.reduce_sum(a, axis=1, name="row_sums")
        r = tf1.placeholder(tf.float32, None, name="r")
        total = tf.reduce_sum(r, name="total")
        ins = {
            "h": tf1.placeholder(tf.float16, [None, 4], name="h"),
            "b": tf1.placeholder(tf.bfloat16, [None, 4], name="b"),
            "u8": tf1.placeholder(tf.uint8, [None, 4], name="u8"),
            "u16": tf1.placeholder(tf.uint16, [None], name="u16"),
            "u32": tf1.placeholder(tf.uint32, [None], name="u32"),
            "u64": tf1.placeholder(tf.uint64, [None], name="u64"),
            "i8": tf1.placeholder(tf.int8, [None], name="i8"),
            "flag": tf1.placeholder(tf.bool, [None], name="flag"),
            "d": tf1.placeholder(tf.float64, [None], name="d"),
            "c": tf1.placeholder(tf.complex64, [None], name="c"),
        }
        f = {k: tf.cast(tf.math.real(v) if k == "c" else v, tf.float32) for k, v in ins.items()}
        rows = sum(tf.reduce_sum(f[k], axis=1) for k in ("h", "b", "u8"))
        rows = rows + sum(f[k] for k in ("u16", "u32", "u64", "i8", "flag", "d", "c"))
        rows = tf.identity(rows, name="rows")
        t = tf1.placeholder(tf.int32, [None, None], name="t")
        t_sums = tf.reduce_sum(t, axis=1, name="t_sums")
        builder_save(d, sess, {
            "fixed": sig_utils.predict_signature_def({"a": a}, {"sums": fixed}),
            "any_rank": sig_utils.predict_signature_def({"r": r}, {"total": total}),
            "dtypes": sig_utils.predict_signature_def(ins, {"rows": rows}),
            "ragged_dim": sig_utils.predict_signature_def({"t": t}, {"sums": t_sums}),
        })


def export_text_input(d):
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as sess:
        q = tf1.placeholder(tf.string, [None], name="q")
        n = tf1.placeholder(tf.float32, [None], name="n")
        y = tf.add(tf.cast(tf.strings.length(q), tf.float32), n, name="y")
        builder_save(d, sess, {
            "serving_default": sig_utils.predict_signature_def({"q": q, "n": n}, {"y": y})})


def export_keras_multi(d):
    import keras
    keras.utils.set_random_seed(0)
    dense = keras.layers.Dense(2, use_bias=False)
    model = keras.Sequential([keras.Input(shape=(4,)), dense])
    dense.set_weights([np.array([[0.5, 1], [0.25, 0], [0.125, 0], [1, 2]], np.float32)])

    def serve(x):
        return {"y": model(x)}

    def score(x, ids):
        return {"s": model(x)[:, :1] + tf.cast(tf.reduce_sum(ids, axis=1, keepdims=True), tf.float32)}

    def embed(tokens):
        return {"e": tf.reduce_mean(tf.cast(tokens, tf.float32), axis=1)}

    archive = keras.export.ExportArchive()
    archive.track(model)
    x = tf.TensorSpec([None, 4], tf.float32, name="x")
    archive.add_endpoint("serving_default", tf.function(serve), input_signature=[x])
    archive.add_endpoint("score", tf.function(score),
                         input_signature=[x, tf.TensorSpec([None, 2], tf.int64, name="ids")])
    archive.add_endpoint("embed", tf.function(embed),
                         input_signature=[tf.TensorSpec([None, None], tf.int32, name="tokens")])
    archive.write_out(str(d), verbose=False)


EXPORTS = [("estimator", export_estimator, True), ("defaults", export_defaults, True),
           ("fixed_multi", export_fixed_multi, True), ("text_input", export_text_input, True),
           ("keras_multi", export_keras_multi, False)]

# (warm-up name, model directory, tfreq arguments after `warmup --model DIR`). Paths relative
# to the repository.
M, E, C, W = "tests/data/models/", "tests/data/examples/models/", "tests/data/check/models/", \
    "tests/data/warmup/models/"
RUNS = [
    ("half_plus_two", M + "half_plus_two", ["--batch-sizes", "1,3", "--model-name", "half_plus_two"]),
    ("two_sigs", M + "two_sigs", ["--batch-sizes", "1,4"]),
    ("two_sigs_eas", M + "two_sigs", ["--signature", "predict_images", "--wire", "eas"]),
    ("xla", M + "xla", ["--allowed-batch-sizes", "1,4,8", "--model-name", "xla"]),
    ("seed", M + "seed", ["--fill", "random", "--seed", "7"]),
    ("faq", M + "faq", ["--values", "tests/data/warmup/faq_values.json", "--batch-sizes", "1,2"]),
    ("tf1_examples", E + "tf1_examples", ["--batch-sizes", "1,3", "--model-name", "tf1_examples"]),
    ("tf1_examples_v1", E + "tf1_examples_v1", []),
    ("keras_examples", E + "keras_examples", ["--fill", "ones"]),
    ("batch_x2", E + "batch_x2", ["--batching-parameters-file",
                                  "tests/data/examples/batch/batching_parameters.txt",
                                  "--model-name", "batch_x2"]),
    ("no_default", C + "no_default", []),
    ("estimator", W + "estimator", ["--batch-sizes", "1,4", "--fill", "ones"]),
    ("defaults", W + "defaults", ["--batch-sizes", "1,2"]),
    ("fixed_multi", W + "fixed_multi", ["--batch-sizes", "1,2", "--fill", "random", "--seed", "3"]),
    ("fixed_multi_dims", W + "fixed_multi", ["--signature", "any_rank", "--signature", "ragged_dim",
                                              "--dim", "r=2,2", "--dim", "t=-1,5"]),
    ("text_input", W + "text_input", ["--values", "tests/data/warmup/text_values.json"]),
    ("keras_multi", W + "keras_multi", ["--batch-sizes", "1,2"]),
]


def tfreq(args):
    p = subprocess.run([TFREQ] + args, cwd=str(REPO), capture_output=True, text=True)
    return p.returncode, p.stderr


def served(model_dir):
    """make_examples.Served on any directory (it reads models from its MODELS)."""
    saved = make_examples.MODELS
    make_examples.MODELS = (REPO / model_dir).parent
    try:
        return make_examples.Served(Path(model_dir).name)
    finally:
        make_examples.MODELS = saved


def answer_predict(s, req):
    """predict_util.cc RunPredict: signature lookup, VerifyRequestInputsSize, GetInputValues
    (a missing input takes the signature's default), Session::Run of the signature's tensors,
    every output for an empty output_filter (in signature-map order)."""
    sig = req.model_spec.signature_name or "serving_default"
    if sig not in s.mg.signature_def:
        return {"result": "error", "message": 'Serving signature key "%s" not found.' % sig}
    sd = s.mg.signature_def[sig]
    feeds = {}
    for alias, info in sd.inputs.items():
        if alias in req.inputs:
            feeds[info.name] = tf.make_ndarray(req.inputs[alias])
        elif alias in sd.defaults:
            feeds[info.name] = tf.make_ndarray(sd.defaults[alias])
        else:
            return {"result": "error", "message": "Signature input alias: %s not found in request "
                    "and no default value provided." % alias}
    extra = set(req.inputs) - set(sd.inputs)
    if extra:
        return {"result": "error", "message": "Inputs contains invalid name: %s" % sorted(extra)}
    keys = list(req.output_filter) or list(sd.outputs)
    outs, err = s.tf_run(feeds, [sd.outputs[k].name for k in keys])
    if err:
        return err
    return {"result": "ok", "outputs": {k: list(np.shape(v)) for k, v in zip(keys, outs)}}


def shapes_only(a):
    """make_examples' answer, with the output shapes only."""
    if a.get("result") != "ok":
        return {k: a[k] for k in ("result", "error_code", "message") if k in a}
    return {"result": "ok", "outputs": {k: v["shape"] for k, v in sorted(a["outputs"].items())}}


def run_records(s, path):
    rows = []
    for raw in tf.data.TFRecordDataset(str(path)):
        log = prediction_log_pb2.PredictionLog.FromString(raw.numpy())
        kind = log.WhichOneof("log_type")
        req = getattr(log, kind).request
        row = {"log_type": kind, "signature": req.model_spec.signature_name}
        if kind == "predict_log":
            row["inputs"] = {k: [d.size for d in v.tensor_shape.dim]
                             for k, v in sorted(req.inputs.items())}
            row.update(answer_predict(s, req))
        elif kind == "classify_log":
            row["examples"] = len(req.input.example_list.examples)
            row.update(shapes_only(make_examples.answer_classify(s, req)[0]))
        elif kind == "regress_log":
            row["examples"] = len(req.input.example_list.examples)
            row.update(shapes_only(make_examples.answer_regress(s, req)[0]))
        else:
            row["result"] = "error"
            row["message"] = "warm-up of %s is not supported" % kind
        rows.append(row)
    return rows


def run_eas(s, path):
    """An EAS warm-up: converted to a TF Serving PredictRequest by tfreq, then run with the
    request's feeds and fetches."""
    tmp = OUT / "eas_as_tfs.tmp"
    code, err = tfreq(["convert", str(path.relative_to(REPO)), "--wire", "tf-serving", "-o",
                       str(tmp)])
    assert code == 0, err
    req = predict_pb2.PredictRequest.FromString(tmp.read_bytes())
    tmp.unlink()
    row = {"log_type": "eas_request", "signature": req.model_spec.signature_name,
           "fetches": list(req.output_filter),
           "inputs": {k: [d.size for d in v.tensor_shape.dim] for k, v in sorted(req.inputs.items())}}
    row.update(answer_predict(s, req))
    return [row]


def main():
    MODELS.mkdir(parents=True, exist_ok=True)
    for name, fn, deterministic in EXPORTS:
        d = MODELS / name
        if not deterministic and d.exists() and "--models" not in sys.argv:
            continue
        if d.exists():
            shutil.rmtree(d)
        fn(d)
    saved = make_models.OUT
    make_models.OUT = MODELS
    try:
        for name, _, _ in EXPORTS:
            make_models.run_cli(name)
            make_models.write_metadata(name)
    finally:
        make_models.OUT = saved
    (OUT / "faq_values.json").write_text(json.dumps(
        {"model_id": ["model_a"], "input_holder": ["gostei muito do produto", "ok"]}, indent=1) + "\n")
    (OUT / "text_values.json").write_text(json.dumps({"q": ["hello", "warm-up"]}, indent=1) + "\n")

    answers = []
    # Without --values, text_input's only signature is left out and nothing can be written.
    code, err = tfreq(["warmup", "--model", W + "text_input", "-o", "/dev/null"])
    answers.append({"name": "text_input_no_values", "model": W + "text_input",
                    "args": [], "exit": code, "stderr": err.splitlines()})
    for name, model, args in RUNS:
        eas = "eas" in args
        out = OUT / (name + (".bin" if eas else ".tfrecord"))
        code, err = tfreq(["warmup", "--model", model] + args + ["-o", str(out.relative_to(REPO))])
        row = {"name": name, "model": model, "args": args, "file": out.name, "exit": code,
               "stderr": err.splitlines()}
        if code == 0:
            s = served(model)
            row["records"] = run_eas(s, out) if eas else run_records(s, out)
            row["all_ok"] = all(r["result"] == "ok" for r in row["records"])
        answers.append(row)
        print(name, code, row.get("all_ok"))
    (OUT / "answers.json").write_text(json.dumps(answers, indent=1) + "\n")


if __name__ == "__main__":
    main()
