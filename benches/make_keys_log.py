#!/usr/bin/env python3
"""Write a TFRecord PredictionLog log of small predict requests for timing `tfreq keys`
(not committed: it is a gigabyte).

    python3 benches/make_keys_log.py OUT.tfrecord [SIZE_MB]   # default 1024

The records are the TF Serving requests tests/data/tfs/faq_prod.bin (174 bytes),
faq_prod_batch4.bin (208), seed_typed.bin (9.7 KB) and seed_content.bin (29 KB), each
wrapped in a PredictionLog's predict_log.request and framed as tf.io.TFRecordWriter
frames it, written in a fixed pseudo-random order with weights 6, 6, 2 and 1 (3.4 KB per
record on average: about 316,000 records in 1 GiB) until OUT reaches SIZE_MB. Prints
{"records": N, "bytes": B, "counts": {file: times written}} so the counts `tfreq keys`
reports can be checked. Pure Python standard library.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "gen"))
from make_big_log import write_log  # noqa: E402  (the same order and counting)

SOURCES = [
    ("faq_prod.bin", 6),
    ("faq_prod_batch4.bin", 6),
    ("seed_typed.bin", 2),
    ("seed_content.bin", 1),
]


def _table():
    poly = 0x82F63B78  # CRC-32C (Castagnoli), reflected
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = _table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def predict_log(request):
    inner = b"\x0a" + varint(len(request)) + request  # PredictLog.request = 1
    return b"\x32" + varint(len(inner)) + inner  # PredictionLog.predict_log = 6


def frame(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(n)) + data + struct.pack("<I", masked(data))


def main(out, size_mb="1024"):
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "tfs")
    recs = [frame(predict_log(open(os.path.join(here, f), "rb").read())) for f, _ in SOURCES]
    n, written, counts = write_log(recs, [w for _, w in SOURCES], out, size_mb)
    names = {f: c for (f, _), c in zip(SOURCES, counts)}
    print(json.dumps({"records": n, "bytes": written, "counts": names}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
