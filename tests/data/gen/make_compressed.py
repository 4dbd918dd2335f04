#!/usr/bin/env python3
"""Write compressed TFRecord logs with TensorFlow's own writer into tests/data/compressed/.

    "$(bash .ci/venv tf)" tests/data/gen/make_compressed.py

- warmup_gzip.tfrecord.gz / warmup_zlib.tfrecord: the PredictionLog warm-up records of
  tests/data/tfrecord/warmup_predict.tfrecord, rewritten with
  TFRecordOptions(compression_type='GZIP' / 'ZLIB');
- prediction_logs-0000{0,1}-of-00002.gz: BulkInferrer-style logs (TFX writes
  prediction_logs-*.gz: gzip TFRecord of PredictionLog with predict_log request and
  response), 40 records in two shards, of the TF Serving requests tests/data/tfs/faq_prod.bin,
  faq_prod_batch4.bin and seed_content.bin in a fixed order;
- manifest.json: for each file, what TensorFlow reads back from it
  (tf.data.TFRecordDataset with the compression): the record count and, per request, its
  signature, sorted feed names with dtypes and shapes, and sorted fetches, counted, so the
  tests hold `tfreq keys` to TensorFlow's reading.

Deterministic: re-running rewrites identical bytes (zlib's gzip header carries no time).
"""
import collections
import json
from pathlib import Path

import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "compressed"
TFS = REPO / "tests" / "data" / "tfs"


def write(path, records, compression):
    with tf.io.TFRecordWriter(str(path), tf.io.TFRecordOptions(compression_type=compression)) as w:
        for r in records:
            w.write(r)


def key_of(req):
    sig = req.model_spec.signature_name or "serving_default"
    feeds = sorted(
        (name, tf.dtypes.as_dtype(t.dtype).name, [d.size for d in t.tensor_shape.dim])
        for name, t in req.inputs.items()
    )
    return json.dumps([sig, feeds, sorted(req.output_filter)])


def read_back(path, compression):
    counts = collections.Counter()
    n = 0
    for raw in tf.data.TFRecordDataset(str(path), compression_type=compression):
        n += 1
        log = prediction_log_pb2.PredictionLog.FromString(raw.numpy())
        if log.WhichOneof("log_type") == "predict_log":
            counts[key_of(log.predict_log.request)] += 1
    return {"records": n, "shape_keys": [[json.loads(k), c] for k, c in sorted(counts.items())]}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {}
    warm = [r.numpy() for r in tf.data.TFRecordDataset(str(REPO / "tests/data/tfrecord/warmup_predict.tfrecord"))]
    for name, comp in [("warmup_gzip.tfrecord.gz", "GZIP"), ("warmup_zlib.tfrecord", "ZLIB")]:
        write(OUT / name, warm, comp)
        manifest[name] = dict(compression=comp.lower(), **read_back(OUT / name, comp))

    sources = ["faq_prod.bin", "faq_prod_batch4.bin", "seed_content.bin"]
    reqs = [predict_pb2.PredictRequest.FromString((TFS / s).read_bytes()) for s in sources]
    order = [(i * 7 + i // 3) % 3 for i in range(40)]
    logs = []
    for j in order:
        log = prediction_log_pb2.PredictionLog()
        log.predict_log.request.CopyFrom(reqs[j])
        log.predict_log.response.model_spec.name = reqs[j].model_spec.name or "m"
        logs.append(log.SerializeToString(deterministic=True))
    for shard in range(2):
        name = f"prediction_logs-{shard:05d}-of-00002.gz"
        write(OUT / name, logs[shard * 20:(shard + 1) * 20], "GZIP")
        manifest[name] = dict(compression="gzip", **read_back(OUT / name, "GZIP"))
    (OUT / "manifest.json").write_text(json.dumps(manifest, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
