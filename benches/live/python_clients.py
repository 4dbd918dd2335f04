#!/usr/bin/env python3
"""The Python clients' loop, for comparison with `tfreq replay` and `tfreq load`: N small requests
to the live server (tests/live/server.py) over TF Serving gRPC (the tensorflow-serving-api stub)
and over EAS HTTP (eas_prediction's PredictClient), as requests per second and client CPU per
request.

    python3 benches/live/python_clients.py [--count 1000] [--ready READY.json] [--concurrency N]
                                           [--tfreq target/release/tfreq]

With --rounds R each client runs R times, the Python client and tfreq alternated (a slow
spell of the server then weighs on both), and the table shows each figure's median.

With --concurrency N, N threads share the count, each with its own client (as a thread pool of
clients does). With --tfreq, the same requests (the bytes the Python clients send, written by
them) are also sent by `tfreq load --concurrency N --requests COUNT` (no --rate: as fast as the
answers come), its CPU the child process's user+system time (os.wait4).

Without --ready it starts the server itself (environment from `.ci/venv live`) for half_plus_two
and stops it afterwards. Each client runs in its own interpreter (`.ci/venv live` for gRPC,
`.ci/venv eas` for EAS), one request at a time on one connection, after 20 unmeasured warm-up
calls. CPU is the client process's user+system time (time.process_time, all its threads) over the
measured loop. The request: half_plus_two's serving_default with x = [[1.0]] (a few dozen bytes).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WARMUP = 20


def venv(name):
    return subprocess.run(["bash", str(REPO / ".ci" / "venv"), name], check=True,
                          capture_output=True, text=True, timeout=1800).stdout.strip()


def measure(make_call, count, concurrency=1):
    import threading
    calls = [make_call() for _ in range(concurrency)]
    for _ in range(WARMUP):
        for call in calls:
            call()
    shares = [count // concurrency + (1 if i < count % concurrency else 0) for i in range(concurrency)]

    spent = [0.0] * concurrency  # each thread's time in calls, for the mean latency

    def loop(k, call, n):
        for _ in range(n):
            t0 = time.perf_counter()
            call()
            spent[k] += time.perf_counter() - t0
    threads = [threading.Thread(target=loop, args=(k, c, n))
               for k, (c, n) in enumerate(zip(calls, shares))]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {"count": count, "wall_s": round(wall, 3), "req_per_s": round(count / wall, 1),
            "cpu_us_per_req": round(cpu / count * 1e6, 1),
            "latency_us_mean": round(sum(spent) / count * 1e6, 1)}


def grpc_client(ready, count, concurrency=1, save=None):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import grpc
    from tensorflow.core.framework import tensor_pb2, types_pb2
    from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc
    req = predict_pb2.PredictRequest()
    req.model_spec.name = "half_plus_two"
    req.model_spec.signature_name = "serving_default"
    t = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[1.0])
    t.tensor_shape.dim.add().size = 1
    t.tensor_shape.dim.add().size = 1
    req.inputs["x"].CopyFrom(t)
    if save:
        Path(save).write_bytes(req.SerializeToString())

    def make_call():
        stub = prediction_service_pb2_grpc.PredictionServiceStub(
            grpc.insecure_channel("127.0.0.1:%d" % ready["grpc"]))

        def call():
            resp = stub.Predict(req, timeout=30)
            assert resp.outputs["y"].float_val[0] == 2.5, resp
        return call
    return measure(make_call, count, concurrency)


def eas_client(ready, count, concurrency=1, save=None):
    from eas_prediction import PredictClient, TFRequest
    req = TFRequest("serving_default")
    req.add_feed("x", [1, 1], TFRequest.DT_FLOAT, [1.0])
    if save:
        Path(save).write_bytes(req.to_string())

    def make_call():
        client = PredictClient("127.0.0.1:%d" % ready["http"], "half_plus_two")
        client.set_token(ready["token"])
        client.set_timeout(30000)
        client.init()

        def call():
            resp = client.predict(req)
            assert resp.get_values("y") == [2.5], resp
        return call
    return measure(make_call, count, concurrency)


def run_client(kind, ready_path, count, concurrency, save):
    ready = json.loads(Path(ready_path).read_text())
    result = (grpc_client if kind == "grpc" else eas_client)(ready, count, concurrency, save)
    print(json.dumps(result))


def run_tfreq(tfreq, kind, ready_path, request, count, concurrency):
    """`tfreq load` of the request file, its CPU from os.wait4."""
    ready = json.loads(Path(ready_path).read_text())
    url = ("grpc://127.0.0.1:%d" % ready["grpc"] if kind == "grpc"
           else "http://127.0.0.1:%d/api/predict/half_plus_two" % ready["http"])
    env = dict(os.environ, TFREQ_TOKEN=ready["token"])
    proc = subprocess.Popen([tfreq, "load", request, "--to", url, "--requests", str(count),
                             "--concurrency", str(concurrency), "--format", "json"],
                            stdout=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit("python_clients.py: tfreq load failed (%d)" % status)
    r = json.loads(out)
    cpu = usage.ru_utime + usage.ru_stime
    return {"count": r["requests"], "wall_s": round(r["elapsed_s"], 3),
            "req_per_s": round(r["throughput_per_s"], 1),
            "cpu_us_per_req": round(cpu / r["requests"] * 1e6, 1),
            "latency_us_mean": round(r["latency_ms"]["mean_ms"] * 1000, 1),
            "errors": r["errors_total"]}


def median_run(runs):
    """The median of each figure over the runs (and how many there were)."""
    out = {}
    for k in runs[0]:
        vals = sorted(r[k] for r in runs)
        out[k] = vals[len(vals) // 2]
    out["rounds"] = len(runs)
    return out


def start_server(work):
    ready = work / "ready.json"
    log = open(work / "server.log", "w")
    proc = subprocess.Popen([venv("live"), str(REPO / "tests" / "live" / "server.py"),
                             "--model", "half_plus_two=%s" % (REPO / "tests/data/models/half_plus_two"),
                             "--ready", str(ready), "--max-lifetime", "900"],
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            sys.exit("python_clients.py: the server did not start (log: %s)" % log.name)
        time.sleep(0.25)
    return proc, ready


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--ready", help="ready file of a running server (else one is started)")
    p.add_argument("--concurrency", type=int, default=1, help="client threads (default 1)")
    p.add_argument("--tfreq", help="a tfreq binary: also measure `tfreq load` of the same requests")
    p.add_argument("--rounds", type=int, default=1,
                   help="runs of each client, alternated; the table shows their medians")
    p.add_argument("--client", choices=["grpc", "eas"], help=argparse.SUPPRESS)
    p.add_argument("--save", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.client:
        return run_client(args.client, args.ready, args.count, args.concurrency, args.save)
    with tempfile.TemporaryDirectory() as tmp:
        proc = None
        ready = args.ready
        if not ready:
            proc, ready = start_server(Path(tmp))
        try:
            rows = []
            for kind, env in (("grpc", "live"), ("eas", "eas")):
                request = str(Path(tmp) / ("%s.bin" % kind))
                runs = {kind: [], "tfreq-" + kind: []}
                # Alternated, so that a slow spell of the server weighs on both.
                for _ in range(args.rounds):
                    out = subprocess.run([venv(env), __file__, "--client", kind, "--ready",
                                          str(ready), "--count", str(args.count), "--concurrency",
                                          str(args.concurrency), "--save", request], check=True,
                                         capture_output=True, text=True, timeout=900).stdout
                    runs[kind].append(json.loads(out.strip().splitlines()[-1]))
                    if args.tfreq:
                        runs["tfreq-" + kind].append(run_tfreq(args.tfreq, kind, ready, request,
                                                               args.count, args.concurrency))
                for name, rs in runs.items():
                    if rs:
                        rows.append((name, median_run(rs)))
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    print("concurrency %d, medians of %d rounds" % (args.concurrency, args.rounds))
    print("%-28s %8s %10s %14s %16s" % ("client", "requests", "req/s", "CPU us/req", "mean latency us"))
    names = {"grpc": "tensorflow-serving-api gRPC", "eas": "eas_prediction PredictClient",
             "tfreq-grpc": "tfreq load, gRPC", "tfreq-eas": "tfreq load, EAS"}
    for kind, r in rows:
        print("%-28s %8d %10.1f %14.1f %16.1f" % (names[kind], r["count"], r["req_per_s"],
                                                 r["cpu_us_per_req"], r["latency_us_mean"]))


if __name__ == "__main__":
    main()
