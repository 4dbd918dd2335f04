#!/usr/bin/env python3
"""Export tests/data/models/xla/: a SavedModel whose serving signature runs a
tf.function(jit_compile=True), which XLA compiles anew for every input shape (docs/warmup.md), and the
requests the live test replays against it. Pins: requirements-tf.txt.

    "$(bash .ci/venv tf)" tests/data/gen/make_xla_model.py

The model (TF2 export, tf.saved_model.save): signature serving_default (predict),
  input   x [-1,16] float32
  output  y [-1,16] float32 = LAYERS times h = tanh(h @ W_i), the 16x16 weights fixed by a seed,
all inside one tf.function(jit_compile=True): the graph holds a StatefulPartitionedCall whose
function carries _XlaMustCompile, so the session compiles the cluster with XLA on the first run of
each new input shape and keeps the compiled program in the XLA compilation cache of the session's
device, per shape. A new batch size therefore pays a compile (hundreds of ms for LAYERS matmuls)
however warm the executor is; a size already run does not.

Also writes, with tensorflow-serving-api's prediction_log_pb2 and TensorFlow's TFRecordWriter:
  tests/data/xla/prod.tfrecord      production log: PredictionLogs of PredictRequests (model "xla")
                                    at batch sizes 1, 4 and 8, i.e. already at the sizes a batching
                                    server with allowed_batch_sizes 1,4,8 runs (this model is served
                                    unbatched, so the request as sent is the batch that runs)
  tests/data/xla/warmup_1.tfrecord  a warm-up (assets.extra/tf_serving_warmup_requests form) with
                                    only the size-1 request
  tests/data/xla/compile_times.json what TensorFlow measured: the SavedModel loaded as the live
                                    server loads it (tf.compat.v1.saved_model.loader.load into a
                                    tf.compat.v1.Session), first and second session.run per batch
                                    size, in a first session and again in a second one (a reload),
                                    and the same graph exported without jit_compile as a control
and models/xla.metadata.json, models/xla.saved_model_cli.txt as make_models.py writes them for the
other models. Timings vary by machine; the model bytes are not byte-identical across re-runs (TF2
export), the requests are.
"""

import os
import sys

os.environ["PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"] = "python"  # insertion-order maps
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_models import run_cli, write_metadata  # noqa: E402  (same forms as the other models)

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "models"
REQ = REPO / "tests" / "data" / "xla"
NAME = "xla"
K = 16
LAYERS = 64
PROD_SIZES = [1, 4, 8]
# Sizes timed in the first session, in this order (3 is a size no allowed list here contains).
TIMED_SIZES = [1, 4, 8, 3, 4]


def export(d, jit):
    rng = np.random.RandomState(25)
    m = tf.Module()
    m.w = [tf.Variable(rng.randn(K, K).astype(np.float32) / 4.0, name="w%d" % i)
           for i in range(LAYERS)]

    @tf.function(jit_compile=jit)
    def layers(x):
        h = x
        for w in m.w:
            h = tf.tanh(tf.matmul(h, w))
        return h

    @tf.function(input_signature=[tf.TensorSpec([None, K], tf.float32, name="x")])
    def serve(x):
        return {"y": layers(x)}

    m.serve = serve
    tf.saved_model.save(m, str(d), signatures={"serving_default": serve})
    return m


def v1_load(d):
    """As tests/live/server.py loads a model: a new graph and session, the serve tag."""
    v1 = tf.compat.v1
    g = tf.Graph()
    sess = v1.Session(graph=g)
    with g.as_default():
        mg = v1.saved_model.loader.load(sess, [v1.saved_model.tag_constants.SERVING], str(d))
    sig = mg.signature_def["serving_default"]
    return sess, sig.inputs["x"].name, sig.outputs["y"].name


def timed(sess, x, y, n):
    feed = {x: np.ones((n, K), np.float32)}
    t = time.perf_counter()
    out = sess.run(y, feed)
    ms = (time.perf_counter() - t) * 1e3
    assert out.shape == (n, K), out.shape
    return round(ms, 2)


def measure(d):
    """First and second call per size; a size's first call is the compile."""
    sess, x, y = v1_load(d)
    rows = []
    for n in TIMED_SIZES:
        rows.append({"batch": n, "first_ms": timed(sess, x, y, n), "second_ms": timed(sess, x, y, n)})
    sess.close()
    return rows


def has_must_compile(d):
    """Whether the exported graph's functions carry _XlaMustCompile = true (jit_compile)."""
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel.FromString((Path(d) / "saved_model.pb").read_bytes())
    lib = sm.meta_graphs[0].graph_def.library
    return any(f.attr["_XlaMustCompile"].b for f in lib.function)


def request(n):
    req = predict_pb2.PredictRequest()
    req.model_spec.name = NAME
    req.model_spec.signature_name = "serving_default"
    x = (np.arange(n * K, dtype=np.float32).reshape(n, K) % 7) / 7.0
    req.inputs["x"].CopyFrom(tf.make_tensor_proto(x, dtype=tf.float32))
    return req


def write_log(path, sizes):
    with tf.io.TFRecordWriter(str(path)) as w:
        for n in sizes:
            log = prediction_log_pb2.PredictionLog()
            log.predict_log.request.CopyFrom(request(n))
            w.write(log.SerializeToString())


def main():
    d = OUT / NAME
    shutil.rmtree(d, ignore_errors=True)
    export(d, jit=True)
    assert has_must_compile(d), "no function with _XlaMustCompile in the export"
    write_metadata(NAME)
    run_cli(NAME)
    size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    assert size < 1 << 20, size

    REQ.mkdir(parents=True, exist_ok=True)
    write_log(REQ / "prod.tfrecord", PROD_SIZES)
    write_log(REQ / "warmup_1.tfrecord", [1])
    # Read back: every record a PredictionLog whose request runs on the model.
    sess, x, y = v1_load(d)
    for path, sizes in (("prod.tfrecord", PROD_SIZES), ("warmup_1.tfrecord", [1])):
        got = []
        for rec in tf.data.TFRecordDataset(str(REQ / path)).as_numpy_iterator():
            log = prediction_log_pb2.PredictionLog.FromString(rec)
            a = tf.make_ndarray(log.predict_log.request.inputs["x"])
            assert sess.run(y, {x: a}).shape == a.shape
            got.append(a.shape[0])
        assert got == sizes, (path, got)
    sess.close()

    first = measure(d)
    reload = measure(d)  # a second session: its device has a new, empty compilation cache
    with tempfile.TemporaryDirectory() as tmp:
        export(Path(tmp) / "nojit", jit=False)
        assert not has_must_compile(Path(tmp) / "nojit")
        control = measure(Path(tmp) / "nojit")
    facts = {
        "what": "session.run times (ms) of tests/data/models/xla loaded as tests/live/server.py "
                "loads it (tf.compat.v1.saved_model.loader.load into a tf.compat.v1.Session); "
                "first_ms is a batch size's first call, second_ms the next call at that size",
        "tensorflow": tf.__version__,
        "machine": "%s, %d CPUs" % (platform.machine(), os.cpu_count() or 0),
        "layers": LAYERS,
        "jit_compile": {"first_session": first, "second_session": reload},
        "without_jit_compile": control,
    }
    (REQ / "compile_times.json").write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")

    # The facts the live test relies on: with XLA every new size's first call is far slower
    # than its second (a compile), in every session; without XLA a new size costs nothing much.
    for rows in (first, reload):
        for r in rows[1:4]:  # 4, 8, 3: new sizes after the first call
            assert r["first_ms"] > 20 * r["second_ms"] and r["first_ms"] > 50, rows
        assert rows[4]["first_ms"] < 20, rows  # 4 again: compiled already
    print(json.dumps(facts, indent=1))


if __name__ == "__main__":
    main()
