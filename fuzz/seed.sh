#!/usr/bin/env bash
# Seeds every fuzz target's corpus from the files the real software made (tests/data):
# request/response targets get every *.bin; the container, model and build targets get
# the files of their formats as well (net_response: the answers' bytes, and JSON for
# REST answers; the first byte of each input chooses limits and status, see
# tfreq::fuzzing::net_response).
# Usage: fuzz/seed.sh [CORPUS_ROOT]   (default fuzz/corpus; one directory per target)
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-fuzz/corpus}"
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^tfreq-fuzz$')
seeds_for() {
    case "$1" in
        containers) find tests/data -type f \( -name '*.bin' -o -name '*.tfrecord' -o -name '*.txt' \) ;;
        saved_model) find tests/data -type f -name '*.pb' ;;
        model_metadata) find tests/data/models tests/data/rest -type f \( -name '*.json' -o -name '*.txt' \) ;;
        rest_json_build) find tests/data -type f \( -name '*.json' -o -name '*.jsonl' \) ;;
        text_format_build) find tests/data -type f -name '*.txt' ;;
        net_response) find tests/data -type f \( -name '*.bin' -o -name '*.json' \) ;;
        text_detect) find tests/data -type f \( -name '*.txt' -o -name '*.pbtxt' -o -name '*.json' -o -name '*.md' \) ;;
        *) find tests/data -type f -name '*.bin' ;;
    esac
}
n=0
for t in $targets; do
    mkdir -p "$root/$t"
    while IFS= read -r f; do
        rel="${f#tests/data/}"
        cp "$f" "$root/$t/seed-${rel//\//-}"
        n=$((n + 1))
    done < <(seeds_for "$t")
done
echo "seeded $(echo $targets | wc -w) targets under $root ($n files from tests/data)"
