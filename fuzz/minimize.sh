#!/usr/bin/env bash
# Usage: fuzz/minimize.sh TARGET...   (CAP files per target, default 25; WORK=fuzz/corpus)
# Committed corpus: per target, libFuzzer's merge (keeps the inputs that add coverage
# features) of the work corpus's small files (<= 2 KiB), minus files identical to
# tests/data seeds, then CAP files spread evenly over the size range.
set -euo pipefail
cd "$(dirname "$0")/.."
# Built by: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build); FUZZ_BIN=DIR for another build
B=${FUZZ_BIN:-fuzz/target/x86_64-unknown-linux-gnu/release}
# The corpus the fuzzing ran on (fuzz/seed.sh seeds it; cargo fuzz run grows it).
WORK=${WORK:-fuzz/corpus}
CAP=${CAP:-25}
mkdir -p fuzz/logs
seeds=$(find tests/data -type f -exec sha1sum {} + | cut -d' ' -f1 | sort -u)
for t in "$@"; do
  small=$(mktemp -d); merged=$(mktemp -d)
  find "$WORK/$t" -type f -size -2049c -exec cp {} "$small/" \;
  $B/$t -merge=1 -max_len=2048 "$merged" "$small" > fuzz/logs/merge-$t.log 2>&1
  for f in "$merged"/*; do
    h=$(sha1sum "$f" | cut -d' ' -f1)
    if grep -qx "$h" <<<"$seeds"; then rm "$f"; fi
  done
  rm -rf tests/corpus/fuzz/$t; mkdir -p tests/corpus/fuzz/$t
  mapfile -t all < <(ls -Sr "$merged")
  n=${#all[@]}
  if [ "$n" -gt 0 ]; then
    for i in $(seq 0 $((CAP - 1))); do
      j=$(( i * n / CAP ))
      [ "$j" -lt "$n" ] && cp "$merged/${all[$j]}" tests/corpus/fuzz/$t/
    done
  fi
  echo "$t: merged $n, kept $(ls tests/corpus/fuzz/$t | wc -l) files, $(cat tests/corpus/fuzz/$t/* 2>/dev/null | wc -c) bytes"
  rm -rf "$small" "$merged"
done
