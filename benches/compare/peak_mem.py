#!/usr/bin/env python3
"""Runs a command and reports its peak RssAnon / RssFile / VmHWM, sampled from
/proc/PID/status every millisecond (anonymous memory is what the process allocates;
file-backed pages of a memory-mapped input are page cache, shared and reclaimable).

    python3 benches/compare/peak_mem.py target/release/tfreq inspect /tmp/big.bin
"""
import subprocess, sys, time

def read(pid):
    vals = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("RssAnon", "RssFile", "VmHWM"):
                    vals[k] = int(v.split()[0])
    except OSError:
        pass
    return vals

p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
peak = {}
t0 = time.perf_counter()
while p.poll() is None:
    for k, v in read(p.pid).items():
        peak[k] = max(peak.get(k, 0), v)
    time.sleep(0.001)
dt = time.perf_counter() - t0
print(" ".join(f"peak {k} {v} kB" for k, v in sorted(peak.items())), f"(sampled; {dt:.2f} s, exit {p.returncode})")
