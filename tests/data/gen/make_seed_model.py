#!/usr/bin/env python3
"""Export tests/data/models/seed/: a SavedModel that serves the EAS warm-up page's request
(tests/data/eas/seed_warm_up.bin), so the live tests can send it end to end. Pins: requirements-tf.txt.

    "$(bash .ci/venv tf)" tests/data/gen/make_seed_model.py

TF1-style graph (tf.compat.v1, SavedModelBuilder; byte-identical on re-runs, unlike TF2 exports),
one signature serving_default (predict):
  inputs   images [-1,784] float32, keep_rate [] float32, sentence1 [-1,15] int32,
           sentence2 [-1,15] int32, y [-1,2] int32            (the feeds of the page's TFRequest)
  outputs  sorted_labels [-1,3] string, sorted_probs [-1,3] float32   (its fetches)
One row per row of sentence1: three scores from the sentences' and y's sums, scaled by the mean of
images and by keep_rate, soft-maxed and sorted. The arithmetic is arbitrary; the point is a real
graph whose signature matches the page's request. Also writes models/seed.metadata.json and
models/seed.saved_model_cli.txt with make_models.py's own functions, as for the other models.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"  # insertion-order maps
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_models import run_cli, write_metadata  # noqa: E402  (same forms as the other models)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "models"
NAME = "seed"


def export(d):
    v1 = tf.compat.v1
    info = v1.saved_model.utils.build_tensor_info
    with v1.Session(graph=tf.Graph()) as sess:
        images = v1.placeholder(tf.float32, [None, 784], name="images")
        keep_rate = v1.placeholder(tf.float32, [], name="keep_rate")
        s1 = v1.placeholder(tf.int32, [None, 15], name="sentence1")
        s2 = v1.placeholder(tf.int32, [None, 15], name="sentence2")
        y = v1.placeholder(tf.int32, [None, 2], name="y")
        w = v1.Variable([[0.5, -0.25, 0.125]], name="w")
        labels = tf.constant(["positive", "neutral", "negative"], name="labels")
        a = tf.cast(tf.reduce_sum(s1, axis=1, keepdims=True), tf.float32)
        b = tf.cast(tf.reduce_sum(s2, axis=1, keepdims=True), tf.float32)
        c = tf.cast(tf.reduce_sum(y, axis=1, keepdims=True), tf.float32)
        scale = tf.reduce_mean(images) * keep_rate
        logits = (a * w + b * tf.reverse(w, [1]) - c) * scale / 100.0
        top, idx = tf.math.top_k(tf.nn.softmax(logits, axis=1), k=3)
        probs = tf.identity(top, name="sorted_probs")
        sorted_labels = tf.gather(labels, idx, name="sorted_labels")
        sig = v1.saved_model.signature_def_utils.build_signature_def(
            inputs={"images": info(images), "keep_rate": info(keep_rate),
                    "sentence1": info(s1), "sentence2": info(s2), "y": info(y)},
            outputs={"sorted_labels": info(sorted_labels), "sorted_probs": info(probs)},
            method_name=v1.saved_model.signature_constants.PREDICT_METHOD_NAME)
        sess.run(v1.global_variables_initializer())
        builder = v1.saved_model.builder.SavedModelBuilder(str(d))
        builder.add_meta_graph_and_variables(
            sess, [v1.saved_model.tag_constants.SERVING],
            signature_def_map={"serving_default": sig})
        builder.save()


def check(d):
    loaded = tf.saved_model.load(str(d))
    out = loaded.signatures["serving_default"](
        images=tf.ones([1, 784]), keep_rate=tf.constant(1.0),
        sentence1=tf.ones([200, 15], tf.int32), sentence2=tf.ones([200, 15], tf.int32),
        y=tf.fill([200, 2], 2))
    assert out["sorted_labels"].shape == (200, 3), out["sorted_labels"].shape
    p = out["sorted_probs"].numpy()
    assert p.shape == (200, 3) and np.allclose(p.sum(axis=1), 1.0), p[:2]


def main():
    from google.protobuf.internal import api_implementation
    if api_implementation.Type() != "python":
        sys.exit("make_seed_model.py: protobuf backend is %r, expected 'python'"
                 % api_implementation.Type())
    d = OUT / NAME
    if d.exists():
        shutil.rmtree(d)
    export(d)
    check(d)
    run_cli(NAME)
    write_metadata(NAME)
    for p in sorted(d.rglob("*")):
        if p.is_file():
            print("%8d  %s" % (p.stat().st_size, p.relative_to(OUT)))


if __name__ == "__main__":
    main()
