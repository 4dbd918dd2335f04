#!/usr/bin/env python3
"""Write a PredictionLog log like a production one, with TensorFlow's own writer, for timing
`tfreq keys` on logs of many distinct requests (not committed: it is a gigabyte).

    "$(bash .ci/venv py-tf)" benches/make_real_log.py OUT.tfrecord [SIZE_MB] [--gzip|--zlib]

3,000 distinct TF Serving PredictRequests (float32 tensor_content of 0.3 to 8 KB; two
signature names; model_spec with name and version; four feed sets and four fetch sets; about
2,600 distinct shape keys), each wrapped in a PredictionLog's predict_log.request, written by
tf.io.TFRecordWriter in a fixed pseudo-random order (Zipf-like weights: a few requests are
frequent, most are rare) until OUT reaches SIZE_MB (default 1024: about 300,000 records).
Prints {"records", "bytes", "distinct", "executor_keys", "shape_keys"} computed here, from the
requests themselves, so what `tfreq keys` reports can be checked against it.
"""
import json
import random
import sys

import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

FEED_SETS = [
    ("input_ids", "attention_mask"),
    ("input_ids", "attention_mask", "token_type_ids"),
    ("image",),
    ("image", "scale"),
]
FETCH_SETS = [
    ("logits",),
    ("logits", "probabilities"),
    ("embedding",),
    ("probabilities", "model_version_id"),
]
SIGNATURES = ["serving_default", "predict_v2"]


def request(rng, i):
    sig = SIGNATURES[i % 2]
    feeds = FEED_SETS[(i // 2) % 4]
    fetches = FETCH_SETS[(i // 8) % 4]
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "ranker"
    req.model_spec.version.value = 3
    req.model_spec.signature_name = sig
    batch = rng.randrange(1, 33)
    width = rng.randrange(2, 65)  # 0.3 to 8 KB of floats per feed
    for f in feeds:
        shape = [batch, width] if f != "scale" else [batch, 1]
        arr = np.frombuffer(rng.randbytes(4 * shape[0] * shape[1]), dtype=np.uint8).view(np.float32)
        arr = np.nan_to_num(arr).reshape(shape)
        req.inputs[f].CopyFrom(tf.make_tensor_proto(arr, dtype=tf.float32))
    req.output_filter.extend(fetches)
    key = (sig, tuple(sorted(feeds)), tuple(sorted(fetches)))
    shape_key = key + (tuple(sorted((f, tuple(req.inputs[f].tensor_shape.dim[j].size for j in range(2))) for f in feeds)),)
    log = prediction_log_pb2.PredictionLog()
    log.predict_log.request.CopyFrom(req)
    return log.SerializeToString(), key, shape_key


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = args[0]
    size = int(args[1]) * (1 << 20) if len(args) > 1 else 1 << 30
    compression = "GZIP" if "--gzip" in sys.argv else "ZLIB" if "--zlib" in sys.argv else ""
    rng = random.Random(2026)
    distinct = [request(rng, i) for i in range(3000)]
    weights = [1.0 / (k + 1) ** 0.8 for k in range(len(distinct))]
    order = random.Random(7)
    records = written = 0
    keys, shapes = {}, {}
    opts = tf.io.TFRecordOptions(compression_type=compression)
    with tf.io.TFRecordWriter(out, opts) as w:
        while written < size:
            batch = order.choices(range(len(distinct)), weights=weights, k=4096)
            for j in batch:
                data, key, shape_key = distinct[j]
                w.write(data)
                records += 1
                written += len(data) + 16
                keys[key] = keys.get(key, 0) + 1
                shapes[shape_key] = shapes.get(shape_key, 0) + 1
                if written >= size:
                    break
    print(json.dumps({
        "records": records,
        "bytes": written,
        "distinct": len(distinct),
        "executor_keys": len(keys),
        "shape_keys": len(shapes),
    }))


if __name__ == "__main__":
    main()
