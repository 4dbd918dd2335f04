#!/usr/bin/env python3
"""Peak memory and time of `inspect`, `diff` and `keys` on gigabyte inputs, in both
page-cache states (the README's "Peak memory of 1 GB inputs" table).

    cargo build --release
    python3 benches/compare/big_files.py [--tfreq target/release/tfreq] [--before OTHER]
        [--dir DIR] [--mib 1024] [--runs 5] [--states large,small]

Inputs (made once in DIR, default $TMPDIR/tfreq-big; about 3 GB per state):
- `i32.bin`: an EAS request of one int_val tensor [1, ~379M] (`examples/big_request.rs`),
- `log.tfrecord`: a TFRecord log of ~316,000 small predict requests
  (`benches/make_keys_log.py`).
Each state gets its own copies: `a.bin` and `b.bin` (equal), `d.bin` (one value
changed in the middle) and `log.tfrecord`.

How a file sits in the page cache changes both figures. Copies written in 4 MiB
writes sit in large (2 MiB) folios on Linux 6.x with ext4, as after a cold read;
copies written in 128 KiB writes sit in small folios (`grep FileHugePages
/proc/meminfo` shows the difference). Nothing here needs root.

Each command runs --runs times, alternating with --before when given, after one
untimed run. Reported: median wall seconds and the largest peak RSS (`ru_maxrss` of
the finished process: mapped pages of the input included), beside `cat` of the same
files.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd):
    """Wall seconds and peak RSS in MB of one run of `cmd` (output discarded)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{' '.join(cmd)} exited with {code}")
    return wall, usage.ru_maxrss / 1024


def copy(src, dst, chunk):
    with open(src, "rb") as i, open(dst, "wb") as o:
        while b := i.read(chunk):
            o.write(b)


def change_one_value(path):
    """Flips bit 0 of a one-byte varint's value in the middle: still valid, one value
    other."""
    with open(path, "r+b") as f:
        at = os.path.getsize(path) // 2
        f.seek(at)
        window = f.read(64)
        for i, x in enumerate(window):
            if 1 < x < 0x80:
                f.seek(at + i)
                f.write(bytes([x ^ 1]))
                return
    sys.exit(f"no varint byte to change near the middle of {path}")


def make_inputs(d, mib):
    os.makedirs(d, exist_ok=True)
    i32, log = os.path.join(d, "i32.bin"), os.path.join(d, "log.tfrecord")
    if not os.path.exists(i32):
        subprocess.run(["cargo", "run", "--quiet", "--release", "--example", "big_request",
                        "--", "eas-int32", i32, str(mib)], cwd=REPO, check=True)
    if not os.path.exists(log):
        subprocess.run([sys.executable, os.path.join(REPO, "benches", "make_keys_log.py"),
                        log, str(mib)], check=True, stdout=subprocess.DEVNULL)
    return i32, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tfreq", default=os.path.join(REPO, "target", "release", "tfreq"))
    ap.add_argument("--before", help="another tfreq binary, run alternately")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "tfreq-big"))
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--states", default="large,small")
    a = ap.parse_args()
    i32, log = make_inputs(a.dir, a.mib)
    bins = [("after", a.tfreq)] + ([("before", a.before)] if a.before else [])
    for state in a.states.split(","):
        chunk = {"large": 4 << 20, "small": 128 << 10}[state]
        sd = os.path.join(a.dir, state)
        os.makedirs(sd, exist_ok=True)
        f = {k: os.path.join(sd, k) for k in ("a.bin", "b.bin", "d.bin", "log.tfrecord")}
        for k, src in (("a.bin", i32), ("b.bin", i32), ("d.bin", i32), ("log.tfrecord", log)):
            copy(src, f[k], chunk)
        change_one_value(f["d.bin"])
        os.sync()
        jobs = [
            ("inspect int_val", ["inspect", f["a.bin"]], [f["a.bin"]]),
            ("diff, equal files", ["diff", f["a.bin"], f["b.bin"]], [f["a.bin"], f["b.bin"]]),
            ("diff, one value differs", ["diff", f["a.bin"], f["d.bin"]], [f["a.bin"], f["d.bin"]]),
            ("keys of the log", ["keys", f["log.tfrecord"]], [f["log.tfrecord"]]),
        ]
        print(f"\n{state} folios ({a.mib} MiB inputs, {a.runs} runs, medians; peak RSS: largest)")
        print(f"{'command':<26}" + "".join(f"{n + ' s':>12}{n + ' MB':>12}" for n, _ in bins)
              + f"{'cat s':>10}")
        for name, args, files in jobs:
            times = {n: [] for n, _ in bins}
            peaks = {n: 0.0 for n, _ in bins}
            cats = []
            for n, b in bins:
                run([b] + args)
            for _ in range(a.runs):
                for n, b in bins:
                    w, m = run([b] + args)
                    times[n].append(w)
                    peaks[n] = max(peaks[n], m)
                cats.append(run(["cat"] + files)[0])
            print(f"{name:<26}" + "".join(
                f"{statistics.median(times[n]):>12.3f}{peaks[n]:>12.1f}" for n, _ in bins)
                + f"{statistics.median(cats):>10.3f}")


if __name__ == "__main__":
    main()
