"""Whole-process timing of two commands side by side, shared by the scripts beside it:
alternating runs (A B A B ...) after a warm-up of each, medians of wall time and each
pair's ratio, and the peak resident set of every run from `os.wait4` (the kernel's
ru_maxrss of the child alone). Python standard library only."""
import os
import subprocess
import time


def run(argv, stdin_path=None, stdout_path=os.devnull):
    """Runs argv once: (wall seconds, peak RSS in MB, exit status)."""
    with open(stdin_path or os.devnull, "rb") as i, open(stdout_path, "wb") as o:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdin=i, stdout=o, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return dt, usage.ru_maxrss / 1024, p.returncode


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def compare(a, b, reps=7, a_stdin=None, b_stdin=None):
    """Times command a against command b, alternating: a dict of medians (wall a, wall b,
    ratio a/b over pairs, peak RSS of a and b in MB, a's exit status)."""
    run(a, a_stdin)
    run(b, b_stdin)
    ta, tb, ra, rb, codes = [], [], [], [], set()
    for _ in range(reps):
        t, r, c = run(a, a_stdin)
        ta.append(t)
        ra.append(r)
        codes.add(c)
        t, r, _ = run(b, b_stdin)
        tb.append(t)
        rb.append(r)
    return {
        "a": median(ta),
        "b": median(tb),
        "ratio": median([x / y for x, y in zip(ta, tb)]),
        "rss_a": max(ra),
        "rss_b": max(rb),
        "exit": sorted(codes),
    }


def load():
    """The load average, for the figures' context."""
    return " ".join(open("/proc/loadavg").read().split()[:3])
