#!/usr/bin/env bash
# Seeds every fuzz target's corpus from the files the real software made (tests/data).
# Usage: fuzz/seed.sh [CORPUS_ROOT]   (default fuzz/corpus; one directory per target)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-fuzz/corpus}"
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^tfreq-fuzz$')
for t in $targets; do
    mkdir -p "$root/$t"
    while IFS= read -r -d '' f; do
        rel="${f#tests/data/}"
        cp "$f" "$root/$t/seed-${rel//\//-}"
    done < <(find tests/data -name '*.bin' -print0)
done
echo "seeded $(echo $targets | wc -w) targets under $root from $(find tests/data -name '*.bin' | wc -l) files"
