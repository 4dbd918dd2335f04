#!/usr/bin/env bash
# `tfreq record`'s overhead: `tfreq load -c 1` of a small request (half_plus_two, x = [[1.0]])
# direct and through the proxy, alternately, ROUNDS times each, over EAS and gRPC; prints each
# round's p50/p99 and the proxy's CPU time per request (utime + stime of /proc/PID/stat over
# the proxied run). Figures: docs/live.md, "record" > "Overhead".
#
#   bash benches/live/record_overhead.sh READY.json     # the ready file of tests/live/server.py
#
# TFREQ_BIN (default target/release/tfreq), N (requests a run, default 2000), ROUNDS (5).
# COMPARE_BIN: another build's tfreq; its `record` runs beside the first and each round
# measures it too, after the first (same client, same server, same minute).
set -euo pipefail
cd "$(dirname "$0")/../.."
ready="$1"
B="${TFREQ_BIN:-target/release/tfreq}"
N="${N:-2000}"
ROUNDS="${ROUNDS:-5}"
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$ready" "$1"; }
H=$(field http); G=$(field grpc); TFREQ_TOKEN=$(field token); export TFREQ_TOKEN
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
echo '{"inputs": {"x": [[1.0]]}}' > "$work/hpt.json"
"$B" build "$work/hpt.json" --dtype x=DT_FLOAT --wire eas -o "$work/eas.bin"
"$B" build "$work/hpt.json" --dtype x=DT_FLOAT --wire tf-serving -o "$work/grpc.bin"
pct() { python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['latency_ms']; print('%.3f %.3f' % (l['p50_ms'], l['p99_ms']))" "$1"; }
for proto in eas grpc; do
  if [ "$proto" = eas ]; then up="http://127.0.0.1:$H"; mn=(); else up="grpc://127.0.0.1:$G"; mn=(--model-name half_plus_two); fi
  "$B" record --listen 127.0.0.1:0 --to "$up" -o "$work/rec_$proto" --wire tfrecord --model-name half_plus_two \
    >"$work/summary_$proto" 2>"$work/err_$proto" &
  pid=$!
  for _ in $(seq 50); do grep -q listening "$work/err_$proto" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$work/err_$proto")
  if [ -n "${COMPARE_BIN:-}" ]; then
    "$COMPARE_BIN" record --listen 127.0.0.1:0 --to "$up" -o "$work/cmp_$proto" --wire tfrecord --model-name half_plus_two \
      >/dev/null 2>"$work/cerr_$proto" &
    cpid=$!
    for _ in $(seq 50); do grep -q listening "$work/cerr_$proto" && break; sleep 0.1; done
    cport=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\),.*/\1/p' "$work/cerr_$proto")
  fi
  if [ "$proto" = eas ]; then
    direct="http://127.0.0.1:$H/api/predict/half_plus_two"; via="http://127.0.0.1:$port/api/predict/half_plus_two"
  else
    direct="grpc://127.0.0.1:$G"; via="grpc://127.0.0.1:$port"
  fi
  for i in $(seq "$ROUNDS"); do
    "$B" load "$work/$proto.bin" --to "$direct" "${mn[@]}" -n "$N" -c 1 --format json > "$work/d.json"
    c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    "$B" load "$work/$proto.bin" --to "$via" "${mn[@]}" -n "$N" -c 1 --format json > "$work/p.json"
    c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    cpu=$(python3 -c "print('%.0f' % (($c1 - $c0) * 1e6 / $(getconf CLK_TCK) / $N))")
    echo "$proto round $i: direct p50/p99 $(pct "$work/d.json") ms; through record $(pct "$work/p.json") ms; record CPU $cpu us/request"
    if [ -n "${COMPARE_BIN:-}" ]; then
      via_c="${via/:$port/:$cport}"
      c0=$(awk '{print $14+$15}' "/proc/$cpid/stat")
      "$B" load "$work/$proto.bin" --to "$via_c" "${mn[@]}" -n "$N" -c 1 --format json > "$work/c.json"
      c1=$(awk '{print $14+$15}' "/proc/$cpid/stat")
      cpu=$(python3 -c "print('%.0f' % (($c1 - $c0) * 1e6 / $(getconf CLK_TCK) / $N))")
      echo "$proto round $i: through COMPARE_BIN's record $(pct "$work/c.json") ms; its CPU $cpu us/request"
    fi
  done
  [ -n "${COMPARE_BIN:-}" ] && { kill -INT "$cpid"; wait "$cpid" || true; }
  kill -INT "$pid"; wait "$pid" || true
  head -1 "$work/summary_$proto"
done
