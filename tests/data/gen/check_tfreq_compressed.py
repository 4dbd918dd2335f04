#!/usr/bin/env python3
"""TensorFlow reads what `tfreq convert --compress gzip|zlib` writes: the same records as the
uncompressed file, with tf.data.TFRecordDataset(compression_type=...). Exits non-zero if not.

    "$(bash .ci/venv tf)" tests/data/gen/check_tfreq_compressed.py [TFREQ]   # default target/debug/tfreq
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import tensorflow as tf

TFREQ = sys.argv[1] if len(sys.argv) > 1 else "target/debug/tfreq"
SOURCES = ["tests/data/tfrecord/warmup_predict.tfrecord", "tests/data/tfrecord/warmup_mixed.tfrecord"]


def records(path, compression=""):
    return [r.numpy() for r in tf.data.TFRecordDataset(path, compression_type=compression)]


def main():
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for src in SOURCES:
            want = records(src)
            for comp in ("gzip", "zlib"):
                out = str(Path(d) / f"{Path(src).stem}.{comp}")
                subprocess.run([TFREQ, "convert", src, "--wire", "tfrecord", "--compress", comp, "-o", out], check=True)
                got = records(out, comp.upper())
                ok = got == want
                failed += not ok
                print(f"{src} --compress {comp}: TensorFlow read {len(got)} records, {'same' if ok else 'DIFFERENT'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
