#!/usr/bin/env python3
"""Write a large TFRecord request log for measuring `tfreq keys` (not committed: too big).

    python3 tests/data/gen/make_big_log.py SOURCE.tfrecord OUT.tfrecord SIZE_MB

SOURCE holds one record per key (e.g. written by `tfreq warmup`). Its framed records are
copied (framing is position-independent, so no CRC is recomputed) in a fixed pseudo-random
pattern with per-record weights 1, 2, 3, ... until OUT reaches SIZE_MB. Prints a JSON object
{"records": N, "bytes": B, "counts": [times record 0 was written, record 1, ...]} so the
counts `tfreq keys` reports can be checked. Pure Python standard library.
"""
import json
import struct
import sys


def records(buf):
    pos = 0
    while pos < len(buf):
        (n,) = struct.unpack_from("<Q", buf, pos)
        end = pos + 12 + n + 4
        yield buf[pos:end]
        pos = end


def main(src, out, size_mb):
    recs = list(records(open(src, "rb").read()))
    n, written, counts = write_log(recs, list(range(1, len(recs) + 1)), out, size_mb)
    print(json.dumps({"records": n, "bytes": written, "counts": counts}))


def write_log(recs, weights, out, size_mb):
    """Writes the framed records `recs`, record i with weight weights[i], in the fixed
    pseudo-random order, until `out` holds `size_mb` MiB; returns (records, bytes,
    times each record was written)."""
    pattern = [i for i, w in enumerate(weights) for _ in range(w)]
    limit = int(size_mb) * 1024 * 1024
    counts = [0] * len(recs)
    written = 0
    n = 0
    state = 12345
    with open(out, "wb", buffering=1 << 22) as f:
        while written < limit:
            state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            i = pattern[(state >> 33) % len(pattern)]
            f.write(recs[i])
            written += len(recs[i])
            counts[i] += 1
            n += 1
    return n, written, counts


if __name__ == "__main__":
    main(*sys.argv[1:4])
