"""python -m tfreq.beam on Beam's DirectRunner in multi-processing mode with two workers, over 8
shards of a log (gzip and plain mixed, made here with tfreq's own writer of the TF Serving
requests in tests/data/tfs): its summary equals `tfreq keys --format json` over the same files and
`tfreq keys merge` of the per-shard summaries."""

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tfreq
from tfreq import beam as tfbeam

EXE = shutil.which("tfreq", path=str(Path(sys.executable).parent))
SOURCES = ["faq_prod.bin", "faq_prod_batch4.bin", "seed_typed.bin", "seed_content.bin"]


def _masked_crc(data):
    # CRC-32C, masked as TFRecord masks it (tensorflow/core/lib/hash/crc32c.h).
    poly, c = 0x82F63B78, 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record(data):
    n = len(data).to_bytes(8, "little")
    return n + _masked_crc(n).to_bytes(4, "little") + data + _masked_crc(data).to_bytes(4, "little")


def _predict_log(request):
    # PredictionLog { predict_log (6) { request (1) } }, lengths as varints.
    def field(num, payload):
        out, n = bytearray([num << 3 | 2]), len(payload)
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)
        return bytes(out) + payload

    return field(6, field(1, request))


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    reqs = [Path("tests/data/tfs", s).read_bytes() for s in SOURCES]
    paths = []
    for k in range(8):
        recs = b"".join(_record(_predict_log(reqs[(k * 3 + i) % 4])) for i in range(5 + k))
        if k % 2:
            p = d / f"prediction_logs-{k:05d}-of-00008.gz"
            p.write_bytes(gzip.compress(recs, mtime=0))
        else:
            p = d / f"prediction_logs-{k:05d}-of-00008"
            p.write_bytes(recs)
        paths.append(str(p))
    return d, paths


def test_beam_equals_keys_and_keys_merge(shards, tmp_path):
    d, paths = shards
    out = tmp_path / "summary.json"
    tfbeam.main([
        "--input", str(d / "prediction_logs-*"),
        "--output", str(out),
        "--runner", "DirectRunner",
        "--direct_running_mode", "multi_processing",
        "--direct_num_workers", "2",
    ])
    beam_summary = json.loads(out.read_text())

    keys = subprocess.run([EXE, "keys", "--format", "json", *paths], capture_output=True, check=True)
    assert beam_summary == json.loads(keys.stdout)
    assert beam_summary["requests"] == sum(5 + k for k in range(8))

    parts = []
    for i, p in enumerate(paths):
        s = tmp_path / f"{i}.json"
        s.write_bytes(subprocess.run([EXE, "keys", "--format", "json", p], capture_output=True, check=True).stdout)
        parts.append(str(s))
    merged = subprocess.run([EXE, "keys", "merge", *reversed(parts)], capture_output=True, check=True)
    assert beam_summary == json.loads(merged.stdout)
    # And the Python functions agree.
    assert tfreq.merge_summaries(tfreq.summarize(p) for p in paths) == beam_summary
