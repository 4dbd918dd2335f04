#!/usr/bin/env bash
# The steps of the GitHub action (action.yml at the repository root), as one script so that
# they run the same on a laptop and in this repository's own CI (.ci/run runs them on
# tests/data):
#
#   bash action/run.sh key             # prints the cache key of the tfreq build (stdout)
#   bash action/run.sh check           # diff (and check, with a model) of the inputs below
#
# Inputs, as GitHub passes an action's inputs (environment variables):
#   INPUT_WARMUP         the warm-up file (warm_up.bin, tf_serving_warmup_requests) or a
#                        SavedModel directory holding assets.extra/tf_serving_warmup_requests
#   INPUT_PRODUCTION     production request files or directories, separated by spaces or lines
#   INPUT_MODEL          optional: the model (SavedModel dir, saved_model.pb, metadata JSON);
#                        given, `check` runs too and `diff` resolves empty output_filters
#   INPUT_STRICT_SHAPES  "true": shape and batch-size changes fail (XLA, batching, PAI-Blade)
#   INPUT_FORMAT         github (annotations, the default), human or json
#   TFREQ                the tfreq binary (default: tfreq on the PATH)
# Exit: the worst of the commands' exit codes (0 warmed, 1 findings that fail, 2 unreadable).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in
key)
  # The build's inputs: a change to any of them builds tfreq again.
  (cd "$here" && cat Cargo.lock Cargo.toml cli/Cargo.toml && find src cli/src proto -type f -print0 | sort -z | xargs -0 cat) |
    sha256sum | cut -c1-16
  ;;
check)
  tfreq="${TFREQ:-tfreq}"
  warmup="${INPUT_WARMUP:?INPUT_WARMUP: the warm-up file}"
  # A SavedModel directory stands for the warm-up TF Serving loads from it.
  if [ -d "$warmup" ] && [ -f "$warmup/assets.extra/tf_serving_warmup_requests" ]; then
    warmup="$warmup/assets.extra/tf_serving_warmup_requests"
  fi
  read -r -d '' -a production <<<"${INPUT_PRODUCTION:?INPUT_PRODUCTION: production request files}" || true
  format="${INPUT_FORMAT:-github}"
  model=()
  [ -n "${INPUT_MODEL:-}" ] && model=(--model "$INPUT_MODEL")
  strict=()
  [ "${INPUT_STRICT_SHAPES:-false}" = true ] && strict=(--strict-shapes)
  worst=0
  "$tfreq" diff "$warmup" "${production[@]}" "${model[@]}" "${strict[@]}" --format "$format"
  code=$?
  [ "$code" -gt "$worst" ] && worst=$code
  if [ ${#model[@]} -gt 0 ]; then
    "$tfreq" check "$warmup" "${production[@]}" "${model[@]}" --format "$format"
    code=$?
    [ "$code" -gt "$worst" ] && worst=$code
  fi
  exit "$worst"
  ;;
*)
  echo "usage: action/run.sh key|check" >&2
  exit 2
  ;;
esac
