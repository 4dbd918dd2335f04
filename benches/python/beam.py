#!/usr/bin/env python3
"""`python -m tfreq.beam` on Beam's two-worker DirectRunner against one `tfreq keys` run, over
the same log, side by side in one run.

    cargo run --release --example make_realistic_log -- /tmp/real.tfrecord 1.6G
    "$(bash .ci/venv py-beam)" benches/python/beam.py /tmp/real.tfrecord [--tfreq PATH] [--workdir DIR]

The log is split on record boundaries into 16 shards of about equal size in --workdir (default:
beside the log), every other one gzip (level 1), and deleted afterwards. Then, each timed
(wall clock, time.perf_counter):

    keys   tfreq keys --format json LOG          (the whole log, one process)
    beam   python -m tfreq.beam --input 'DIR/prediction_logs-*' --output OUT \\
               --runner DirectRunner --direct_running_mode multi_processing --direct_num_workers 2

and the two summaries' counts (requests, skipped, keys, shape keys and each one's count) are
checked equal. --tfreq is the command timed for keys (default: the `tfreq` beside this Python).
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def split(log, d, shards=16):
    """Writes `shards` files of whole records, about equal in size; every other one gzip."""
    size = os.path.getsize(log)
    target = size // shards
    paths = []
    with open(log, "rb") as f:
        for k in range(shards):
            name = d / f"prediction_logs-{k:05d}-of-{shards:05d}"
            out = gzip.open(str(name) + ".gz", "wb", compresslevel=1) if k % 2 else open(name, "wb")
            written = 0
            with out:
                while written < target or k == shards - 1:
                    head = f.read(12)
                    if not head:
                        break
                    n = int.from_bytes(head[:8], "little")
                    body = f.read(n + 4)
                    out.write(head)
                    out.write(body)
                    written += 16 + n
            paths.append(name)
    return paths


def counts(summary):
    s = dict(summary)
    s.pop("files", None)
    for k in s["keys"]:
        for shape in k["shapes"]:
            shape.pop("first", None)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--tfreq", default=shutil.which("tfreq", path=str(Path(sys.executable).parent)))
    ap.add_argument("--workdir")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    work = Path(tempfile.mkdtemp(prefix="tfreq-beam-", dir=args.workdir or os.path.dirname(os.path.abspath(args.log))))
    try:
        t = time.perf_counter()
        split(args.log, work)
        size = sum(p.stat().st_size for p in work.iterdir())
        print(f"split {os.path.getsize(args.log):,} bytes into 16 shards ({size:,} bytes, 8 gzip) in {time.perf_counter() - t:.1f} s")

        t = time.perf_counter()
        keys = subprocess.run([args.tfreq, "keys", "--format", "json", args.log], capture_output=True, check=True)
        keys_s = time.perf_counter() - t

        out = work / "summary.json"
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tfreq.beam", "--input", str(work / "prediction_logs-*"), "--output", str(out),
             "--runner", "DirectRunner", "--direct_running_mode", "multi_processing", "--direct_num_workers", "2"],
            check=True, capture_output=True,
        )
        beam_s = time.perf_counter() - t
        whole, beam = json.loads(keys.stdout), json.loads(out.read_text())
        assert counts(whole) == counts(beam), "the summaries' counts differ"
        print(f"requests {whole['requests']:,}, executor keys {whole['executor_keys']:,}, shape keys {whole['shape_keys']:,}: equal")
        print(f"tfreq keys (whole log, one process)          {keys_s:8.2f} s")
        print(f"tfreq.beam (16 shards, DirectRunner, 2 workers) {beam_s:8.2f} s   ({beam_s / keys_s:.1f}x keys)")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
