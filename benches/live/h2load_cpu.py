"""CPU a call of `tfreq load` (one or more builds) against `h2load` (nghttp2-client), both
sending the same gRPC Predict body to one running server, alternated round by round.

usage: h2load_cpu.py READY_JSON REQUEST_BIN ROUNDS COUNT CONCURRENCY TFREQ...

READY_JSON is the ready file of tests/live/server.py; REQUEST_BIN a TF Serving PredictRequest
(python_clients.py --client grpc --save FILE writes half_plus_two's). CPU is the child's user +
system time (os.times), divided by the calls; the medians and every round are printed.
"""
import json
import os
import subprocess
import sys
import time


def cpu_of(cmd):
    t0, r0 = time.perf_counter(), os.times()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r1, wall = os.times(), time.perf_counter() - t0
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return p, cpu, wall


def main():
    ready = json.load(open(sys.argv[1]))
    req = sys.argv[2]
    rounds, count, conc = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    bins = sys.argv[6:]
    port = ready["grpc"]
    raw = open(req, "rb").read()
    body = req + ".grpc"
    open(body, "wb").write(b"\0" + len(raw).to_bytes(4, "big") + raw)
    h2load = [("h2load -c %d -m 1" % conc, ["-c", str(conc), "-m", "1"])]
    if conc > 1:
        h2load.append(("h2load -c 1 -m %d" % conc, ["-c", "1", "-m", str(conc)]))
    res = {}
    for _ in range(rounds):
        for b in bins:
            cmd = [b, "load", req, "--to", "grpc://127.0.0.1:%d" % port, "-n", str(count),
                   "-c", str(conc), "-f", "json"]
            p, cpu, wall = cpu_of(cmd)
            res.setdefault(b, []).append((cpu / count * 1e6, count / wall, p.returncode == 0))
        for name, extra in h2load:
            cmd = ["h2load", "-n", str(count), *extra, "-d", body,
                   "-H", "content-type: application/grpc", "-H", "te: trailers",
                   "http://127.0.0.1:%d/tensorflow.serving.PredictionService/Predict" % port]
            p, cpu, wall = cpu_of(cmd)
            ok = b" 0 failed" in p.stdout
            res.setdefault(name, []).append((cpu / count * 1e6, count / wall, ok))
    for k, v in res.items():
        cpus = sorted(x[0] for x in v)
        rates = sorted(x[1] for x in v)
        print("%-40s CPU us/call median %.1f (%s)  req/s median %.0f  all ok: %s"
              % (k, cpus[len(cpus) // 2], ", ".join("%.1f" % c for c in cpus),
                 rates[len(rates) // 2], all(x[2] for x in v)))


if __name__ == "__main__":
    main()
