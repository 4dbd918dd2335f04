"""python -m tfreq.beam on Beam's DirectRunner in multi-processing mode with two workers: over 8
shards of a log (gzip and plain mixed, made here with tfreq's own writer of the TF Serving
requests in tests/data/tfs) its summary equals `tfreq keys --format json` over the same files and
`tfreq keys merge` of the per-shard summaries; over a log of predict, classify, regress and
multi-inference records split into 16 shards (every third gzip), its counts equal those of one
`tfreq keys` run over the whole log."""

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


def _beam(d, out):
    """The pipeline's summary of the shards in `d`, on the DirectRunner with two worker
    processes."""
    tfbeam.main([
        "--input", str(d / "prediction_logs-*"),
        "--output", str(out),
        "--runner", "DirectRunner",
        "--direct_running_mode", "multi_processing",
        "--direct_num_workers", "2",
    ])
    return json.loads(out.read_text())


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
    beam_summary = _beam(d, out)

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


def _records(data):
    """The TFRecord records of `data`, each with its framing (length, CRCs) as written."""
    out, pos = [], 0
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 8], "little")
        end = pos + 12 + n + 4
        out.append(data[pos:end])
        pos = end
    assert pos == len(data)
    return out


def _counts(summary):
    """A summary without where things were found (files, first records): what a split of
    the same records into other files must not change."""
    s = json.loads(json.dumps(summary))
    s.pop("files", None)
    for k in s["keys"]:
        for shape in k["shapes"]:
            shape.pop("first", None)
    return s


def test_beam_over_16_shards_counts_what_keys_counts_over_the_whole_log(tmp_path):
    # A log of predict, classify, regress and multi-inference records (the tf.Example
    # records TensorFlow wrote in tests/data/examples/logs, the predict requests of
    # tests/data/tfs), requests repeated unevenly as production repeats them...
    recs = []
    for name in ["mixed.tfrecord", "classify_log.tfrecord", "regress_log.tfrecord", "multi_inference_log.tfrecord"]:
        recs += _records(Path("tests/data/examples/logs", name).read_bytes())
    recs += [_record(_predict_log(Path("tests/data/tfs", s).read_bytes())) for s in SOURCES]
    log = [recs[(i * i) % len(recs)] for i in range(600)] + recs
    whole = tmp_path / "whole.tfrecord"
    whole.write_bytes(b"".join(log))
    # ... split on record boundaries into 16 shards of unequal sizes, every third gzip.
    d = tmp_path / "shards"
    d.mkdir()
    cuts = sorted({0, len(log)} | {(k * k * len(log)) // 225 for k in range(1, 15)} | {len(log) - 1})
    assert len(cuts) == 17
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        data = b"".join(log[a:b])
        name = f"prediction_logs-{k:05d}-of-00016"
        if k % 3 == 0:
            (d / (name + ".gz")).write_bytes(gzip.compress(data, mtime=0))
        else:
            (d / name).write_bytes(data)
    out = tmp_path / "summary.json"
    beam_summary = _beam(d, out)
    assert len(beam_summary["files"]) == 16 and beam_summary["unreadable"] == []
    keys = subprocess.run([EXE, "keys", "--format", "json", str(whole)], capture_output=True, check=True)
    whole_summary = json.loads(keys.stdout)
    assert whole_summary["requests"] == len(log) and whole_summary["skipped"] == 0, whole_summary
    methods = {k.get("method", "predict") for k in whole_summary["keys"]}
    assert methods == {"predict", "classify", "regress", "multi_inference"}, methods
    assert _counts(beam_summary) == _counts(whole_summary)
