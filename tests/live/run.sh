#!/usr/bin/env bash
# Live tests: start the TensorFlow-backed stand-in server (tests/live/server.py) for the faq and
# half_plus_two models (and seed, the EAS warm-up page's model, and xla, compiled per input shape) on free loopback ports, run TF Serving's Python client (gRPC stub, REST),
# the EAS Python SDK (PredictClient, QueueClient) and the Rust live tests against it, render a
# `tfreq load --html` page in headless Chromium (.ci/browser), and stop it.
#
#   bash tests/live/run.sh
#
# The Python environments come from `.ci/venv live` and `.ci/venv eas` (created once in the
# user's cache directory). Every wait is bounded; the server also stops by itself after
# TFREQ_LIVE_LIFETIME seconds (default 900) and is stopped on exit, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."

LIVE_PY="$(bash .ci/venv live)"
EAS_PY="$(bash .ci/venv eas)"
# Headless Chromium for test_load_html.py (Debian's package, installed once when missing).
TFREQ_BROWSER="$(bash .ci/browser)"
export TFREQ_BROWSER

# Build the Rust live tests before the server starts, so its lifetime is not spent compiling.
rust=no
if [ -f cli/tests/net/live.rs ]; then
  rust=yes
  echo "== live: building the Rust live tests (cargo test -p tfreq-cli --test net --no-run)"
  timeout 1800 cargo test --quiet -p tfreq-cli --test net --no-run
fi

# The command the record tests start (test_record_tfs.py, test_record_sdk.py).
echo "== live: building tfreq (cargo build -p tfreq-cli --bin tfreq)"
timeout 1800 cargo build --quiet -p tfreq-cli --bin tfreq

work="$(mktemp -d)"
ready="$work/ready.json"
log="$work/server.log"
pid=""
stop_server() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  pid=""
}
on_exit() {
  rc=$?
  stop_server
  if [ "$rc" != 0 ] && [ -f "$log" ]; then
    echo "== live: failed (exit $rc); the last lines of the server's log:"
    tail -n 40 "$log"
  fi
  rm -rf "$work"
}
trap on_exit EXIT

echo "== live: starting tests/live/server.py (faq, half_plus_two, seed, xla) on 127.0.0.1"
started=$(date +%s)
"$LIVE_PY" tests/live/server.py \
  --model faq=tests/data/models/faq \
  --model half_plus_two=tests/data/models/half_plus_two \
  --model seed=tests/data/models/seed \
  --model xla=tests/data/models/xla \
  --tls --ready "$ready" --max-lifetime "${TFREQ_LIVE_LIFETIME:-900}" 2>"$log" &
pid=$!
for _ in $(seq 480); do  # 120 s at most
  [ -f "$ready" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "== live: the server exited before it was ready"; exit 1; }
  sleep 0.25
done
[ -f "$ready" ] || { echo "== live: the server was not ready after 120 s"; exit 1; }
echo "== live: ready after $(( $(date +%s) - started )) s: $(tr -d ' \n' <"$ready" | head -c 200)"
export TFREQ_LIVE_READY="$ready"

# The Rust tests first, on models no other test has called yet (cold-start measurements).
if [ "$rust" = yes ]; then
  echo "== live: Rust live tests (cargo test -p tfreq-cli --test net -- --include-ignored live::)"
  timeout 900 cargo test --quiet -p tfreq-cli --test net -- --include-ignored live::
else
  echo "== live: cli/tests/net/live.rs is not in this tree yet: no Rust live tests to run"
fi

echo "== live: TF Serving's Python client (gRPC stub, REST) against the server"
timeout 300 "$LIVE_PY" -m unittest tests/live/test_tfs.py
echo "== live: the EAS Python SDK (PredictClient, QueueClient) against the server"
timeout 300 "$EAS_PY" -m unittest tests/live/test_sdk.py
echo "== live: tfreq record between the Python clients (gRPC stub, REST, EAS SDK) and the server"
timeout 300 "$LIVE_PY" -m unittest tests/live/test_record_tfs.py
timeout 300 "$EAS_PY" -m unittest tests/live/test_record_sdk.py
echo "== live: tfreq load --html rendered by headless Chromium ($TFREQ_BROWSER)"
timeout 300 "$LIVE_PY" -m unittest tests/live/test_load_html.py
stop_server
echo "== live: done in $(( $(date +%s) - started )) s"
