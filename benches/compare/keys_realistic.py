#!/usr/bin/env python3
"""`tfreq keys` against `cat` on logs of benches/make_realistic_log.rs, side by side in one
run: the whole log, its classify/regress/multi-inference records alone, and the whole log
on one core (`taskset -c 0`) against two.

    cargo build --release --bin tfreq --example make_realistic_log
    python3 benches/compare/keys_realistic.py [--reps 7] LOG [LOG ...]

Each LOG that does not exist is written first with `make_realistic_log LOG 1.6G` (add
`--seed N --mix SPEC` after the path as `LOG:N:SPEC`, e.g.
`/tmp/b.tfrecord:7:predict=70,classify=15,regress=10,multi=4,big=1`). The examples-only log
is written beside each (LOG.examples). `cat` writes to /dev/null as `keys` does; peak RSS is
the child's own (`os.wait4`). The logs are read once before timing (page cache warm).
Delete the logs when done: each is 1.6 GB.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import compare, load  # noqa: E402

TFREQ = "target/release/tfreq"
GEN = "target/release/examples/make_realistic_log"


def varint(b, p):
    r = s = 0
    while True:
        c = b[p]
        p += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 128:
            return r, p


def examples_only(src, dst):
    """Copies the records whose PredictionLog holds a classify (2), regress (3) or
    multi-inference (4) log, framing and all."""
    n = 0
    with open(src, "rb") as f, open(dst, "wb") as o:
        while True:
            h = f.read(12)
            if len(h) < 12:
                break
            (length,) = struct.unpack("<Q", h[:8])
            d = f.read(length + 4)
            p, kinds = 0, set()
            while p < length:
                t, p = varint(d, p)
                ln, p = varint(d, p)
                kinds.add(t >> 3)
                p += ln
            if kinds & {2, 3, 4}:
                o.write(h + d)
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    taskset = shutil.which("taskset")
    print(f"load average before: {load()}")
    for spec in a.logs:
        path, *rest = spec.split(":")
        if not os.path.exists(path):
            gen = [GEN, path, "1.6G"]
            if rest:
                gen += ["--seed", rest[0]]
            if len(rest) > 1:
                gen += ["--mix", rest[1]]
            subprocess.run(gen, check=True)
        ex = path + ".examples"
        if not os.path.exists(ex):
            print(f"{ex}: {examples_only(path, ex)} records")
        for log in (path, ex):
            subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)
            size = os.path.getsize(log) / 1e6
            r = compare([TFREQ, "keys", log], ["cat", log], a.reps)
            print(
                f"{log} ({size:.0f} MB): keys {r['a']:.3f} s, cat {r['b']:.3f} s, "
                f"ratio {r['ratio']:.2f}x; keys peak RSS {r['rss_a']:.0f} MB (exit {r['exit']})"
            )
        if taskset:
            r = compare(["taskset", "-c", "0", TFREQ, "keys", path], [TFREQ, "keys", path], a.reps)
            print(f"{path}: one core {r['a']:.3f} s, two {r['b']:.3f} s: {r['ratio']:.2f}x")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
