#!/usr/bin/env python3
"""tfreq against the Python tools on the same 1M-float request, in one run.

Times, on the machine it runs on:
  * the eas_prediction SDK: TFRequest.add_feed of n floats + add_fetch + to_string()
    (pure-Python protobuf 3.20, as the SDK pins it), and parsing those bytes back;
  * TF Serving's protobuf (tensorflow-serving-api, upb backend): parsing the TF
    Serving form of the same request, and building it with tf.make_tensor_proto;
  * tfreq doing the same in-process (examples/codec_timing.rs, median of its runs),
and prints each pair's ratio. The SDK's bytes are checked to equal tfreq's.

Run from the repository root (after `cargo build --release --example codec_timing`):

    "$(bash .ci/venv eas)" benches/compare/compare.py [--n 1000000] [--reps 3]

The TF Serving part runs in "$(bash .ci/venv tf)" (override with --tf-python;
skipped when that interpreter is missing).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

TUNABLES = "glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=4294967296"

TF_SCRIPT = r"""
import json, sys, time
import numpy as np
from tensorflow_serving.apis import predict_pb2
import tensorflow as tf
data = open(sys.argv[1], "rb").read()
n, reps = int(sys.argv[2]), int(sys.argv[3])
def best(f):
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]
parse = best(lambda: predict_pb2.PredictRequest.FromString(data))
values = (np.arange(n, dtype=np.float32) * np.float32(0.5))
def build():
    r = predict_pb2.PredictRequest()
    r.model_spec.name = "m"
    r.model_spec.signature_name = "serving_default"
    r.inputs["x"].CopyFrom(tf.make_tensor_proto(values, shape=[1, n]))
    r.output_filter.append("y")
    return r.SerializeToString()
same = build() == data
print(json.dumps({"tfs_parse": parse, "tfs_build_encode": best(build), "same_bytes": same}))
"""


def median_time(f, reps):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3, help="runs of each Python operation")
    ap.add_argument("--rust-reps", type=int, default=20)
    ap.add_argument("--example", default="target/release/examples/codec_timing")
    ap.add_argument(
        "--tf-python",
        default=None,
        help="TensorFlow interpreter (default: what `bash .ci/venv tf` prints)",
    )
    a = ap.parse_args()
    if a.tf_python is None:
        import subprocess

        a.tf_python = subprocess.run(
            ["bash", ".ci/venv", "tf"], check=True, capture_output=True, text=True
        ).stdout.strip()

    from eas_prediction import TFRequest
    from eas_prediction import tf_request_pb2 as tf_pb
    from google.protobuf.internal import api_implementation

    tmp = tempfile.mkdtemp(prefix="tfreq-compare-")
    # Steady state: glibc keeps freed memory instead of unmapping/trimming it, so a
    # 4 MB buffer is not faulted in afresh on some runs and not on others (a cost of
    # the OS that memcpy into fresh memory pays too; see the README).
    env = {**os.environ, "GLIBC_TUNABLES": TUNABLES}
    out = subprocess.run(
        [a.example, str(a.n), str(a.rust_reps), tmp], check=True, capture_output=True,
        text=True, env=env,
    ).stdout
    rust = json.loads(out)["seconds"]
    eas = open(os.path.join(tmp, "eas.bin"), "rb").read()
    tfs_path = os.path.join(tmp, "tfs.bin")

    values = [i * 0.5 for i in range(a.n)]

    def sdk_build():
        req = TFRequest("serving_default")
        req.add_feed("x", [1, a.n], TFRequest.DT_FLOAT, values)
        req.add_fetch("y")
        return req.to_string()

    sdk_bytes = sdk_build()
    rows = []
    py = {
        "eas_build_encode": median_time(sdk_build, a.reps),
        "eas_parse": median_time(lambda: tf_pb.PredictRequest.FromString(eas), a.reps),
    }
    rows.append(("EAS build+encode: SDK add_feed+to_string / tfreq builder+to_bytes",
                 py["eas_build_encode"], rust["eas_build_encode"]))
    rows.append(("EAS parse: SDK protobuf FromString / tfreq decode(&[u8])",
                 py["eas_parse"], rust["eas_decode_slice"]))
    rows.append(("EAS parse: SDK protobuf FromString / tfreq decode_with(Bytes)",
                 py["eas_parse"], rust["eas_decode_bytes"]))

    tf_note = ""
    if os.path.exists(a.tf_python):
        r = subprocess.run([a.tf_python, "-c", TF_SCRIPT, tfs_path, str(a.n), str(a.reps)],
                           capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        if r.returncode == 0:
            tf = json.loads(r.stdout.strip().splitlines()[-1])
            rows.append(("TF Serving build+encode: make_tensor_proto+Serialize / tfreq to_tf_serving_bytes",
                         tf["tfs_build_encode"], rust["tfs_build_encode"]))
            rows.append(("TF Serving parse: protobuf (upb) FromString / tfreq decode(&[u8])",
                         tf["tfs_parse"], rust["tfs_decode_slice"]))
            rows.append(("TF Serving parse: protobuf (upb) FromString / tfreq decode_with(Bytes)",
                         tf["tfs_parse"], rust["tfs_decode_bytes"]))
            tf_note = f"TF Serving bytes identical to tfreq's: {tf['same_bytes']}"
        else:
            tf_note = "TF Serving part failed: " + r.stderr.strip().splitlines()[-1]
    else:
        tf_note = f"TF Serving part skipped ({a.tf_python} missing)"

    print(f"n = {a.n} float32 ({a.n * 4} bytes of values); Python: median of {a.reps}, "
          f"tfreq: median of {a.rust_reps}; EAS SDK protobuf backend: {api_implementation.Type()}")
    print(f"SDK bytes identical to tfreq's: {sdk_bytes == eas}; {tf_note}")
    print(f"memcpy of the payload (Vec::extend_from_slice): {rust['memcpy'] * 1e3:.3f} ms")
    w = max(len(r[0]) for r in rows)
    print(f"{'operation (python / tfreq)':<{w}}  {'python':>10}  {'tfreq':>10}  {'ratio':>9}")
    for name, p, t in rows:
        print(f"{name:<{w}}  {p * 1e3:>8.2f}ms  {t * 1e3:>8.4f}ms  {p / t:>8.0f}x")
    print("tfreq vs memcpy: " + ", ".join(
        f"{k} {v / rust['memcpy']:.2f}x" for k, v in rust.items() if k != "memcpy"))


if __name__ == "__main__":
    sys.exit(main())
