#!/usr/bin/env bash
# The Python package's tests: build the wheel once as `pip install .` builds it (PEP 517,
# maturin fetched by pip), then install it in three environments and run the tests each
# needs there:
#   py-tf   TensorFlow 2.21 + tensorflow-serving-api (protobuf 7) + numpy: the library, numpy,
#           TensorFlow interop, the command, the doctests;
#   py-eas  the real eas-prediction SDK (protobuf 3.20.3): byte-identical requests;
#   py-bare no numpy: the module imports, arrays raise ImportError naming the extra;
#   py-mypy mypy: the package's types (mypy --strict, stubtest of the compiled module).
# Environments come from `.ci/venv NAME` (tests/data/gen/requirements-NAME.txt), made once in
# the user's cache directory; a failure to make one fails the run.
#
#   bash python/tests/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

BARE_PY="$(bash .ci/venv py-bare)"
EAS_PY="$(bash .ci/venv py-eas)"
TF_PY="$(bash .ci/venv py-tf)"
MYPY_PY="$(bash .ci/venv py-mypy)"

wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
echo "== python: pip wheel . (maturin, release)"
start=$(date +%s)
"$BARE_PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$wheels" .
wheel="$(ls "$wheels"/tfreq-*.whl)"
echo "   $(basename "$wheel"), $(du -h "$wheel" | cut -f1), $(($(date +%s) - start)) s"

install() {
  "$1" -m pip install --quiet --disable-pip-version-check --no-input --force-reinstall --no-deps "$wheel"
}
pytest_in() {
  local py=$1
  shift
  "$py" -m pytest -q -p no:cacheprovider "$@"
}

echo "== python: with TensorFlow, tensorflow-serving-api and numpy (py-tf)"
install "$TF_PY"
pytest_in "$TF_PY" python/tests/test_sdk_files.py python/tests/test_refusals.py \
  python/tests/test_numpy.py python/tests/test_tf.py python/tests/test_cli.py \
  python/tests/test_hostile.py python/tests/test_dropin.py python/tests/test_process.py \
  python/tests/test_tf_dtypes.py
# The docstrings' examples (tfreq.beam's need apache-beam: see py-beam below).
"$TF_PY" - <<'PY'
import doctest, sys, tfreq, tfreq.results
runs = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in (tfreq, tfreq.results)]
failed, attempted = sum(r.failed for r in runs), sum(r.attempted for r in runs)
print(f"doctests: {attempted - failed} passed, {failed} failed")
sys.exit(1 if failed or any(not r.attempted for r in runs) else 0)
PY

echo "== python: beside eas-prediction 0.36 (py-eas)"
install "$EAS_PY"
pytest_in "$EAS_PY" -W ignore::DeprecationWarning python/tests/test_sdk_live.py python/tests/test_sdk_files.py

echo "== python: without numpy (py-bare)"
install "$BARE_PY"
pytest_in "$BARE_PY" python/tests/test_no_numpy.py python/tests/test_sdk_files.py \
  python/tests/test_refusals.py python/tests/test_hostile.py python/tests/test_dropin.py

echo "== python: types, mypy --strict and stubtest (py-mypy)"
install "$MYPY_PY"
pytest_in "$MYPY_PY" python/tests/test_typing.py

echo "== python: Apache Beam, DirectRunner with two worker processes (py-beam)"
BEAM_PY="$(bash .ci/venv py-beam)"
install "$BEAM_PY"
pytest_in "$BEAM_PY" -W ignore::DeprecationWarning python/tests/test_beam.py
