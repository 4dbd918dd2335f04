#!/bin/sh
# Writes TFRecord warm-up files with tfreq and reads them back with TensorFlow.
#
#   sh tests/data/gen/check_tfreq_tfrecord.sh          (from the repository root)
#
# Uses target/debug/tfreq (run `cargo build` first) and the TensorFlow environment `bash .ci/venv tf` makes (TensorFlow 2.21,
# tensorflow-serving-api 2.21; override with PYTHON=...). Writes into
# tests/data/tfrecord/tfreq_written/:
#   *.tfrecord             files written by tfreq (committed, so the claim can be checked)
#   read_tfrecord.out      what tests/data/gen/read_tfrecord.py (tf.data.TFRecordDataset +
#                          PredictionLog.FromString) printed for them; cli/tests/interop/tfrecord.rs
#                          compares it with what tfreq reads from the same files
#   every_kind.jsonl       what tests/data/gen/dump_records.py (TensorFlow) reads from the
#                          convert and scrub outputs of the mixed warm-ups: every record,
#                          every field, every tensor's values (cli/tests/interop/convert_records.rs)
#   damaged/flipped.tfrecord    from_eas_faq_prod.tfrecord with bit 0 of byte 20 flipped,
#   damaged/truncated.tfrecord  and without its last 5 bytes (committed for the CLI tests
#                               in tests/golden/)
#   corrupt.out            what TensorFlow, then tfreq, say about those two files
# Exits non-zero if TensorFlow fails to read any tfreq-written file.
set -eu
TFREQ=${TFREQ:-target/debug/tfreq}
PYTHON=${PYTHON:-$(bash "$(dirname "$0")/../../../.ci/venv" tf)}
OUT=tests/data/tfrecord/tfreq_written
mkdir -p "$OUT"

"$TFREQ" convert tests/data/eas/faq_prod.bin --wire tfrecord --model-name faq -o "$OUT/from_eas_faq_prod.tfrecord"
"$TFREQ" convert tests/data/tfs/seed_content.bin --wire tfrecord -o "$OUT/from_tfs_seed_content.tfrecord"
rm -f "$OUT/from_mixed_predict_only.tfrecord"   # the name of what convert wrote when it dropped records
"$TFREQ" convert tests/data/tfrecord/warmup_mixed.tfrecord --wire tfrecord -o "$OUT/from_mixed.tfrecord"
"$TFREQ" scrub tests/data/tfrecord/warmup_mixed.tfrecord -o "$OUT/scrubbed_mixed.tfrecord"
"$TFREQ" convert tests/data/tfrecord/warmup_every_kind.tfrecord --wire tfrecord -o "$OUT/from_every_kind.tfrecord"
"$TFREQ" scrub tests/data/tfrecord/warmup_every_kind.tfrecord -o "$OUT/scrubbed_every_kind.tfrecord" 2>/dev/null
if [ "${WITH_WARMUP:-1}" = 1 ]; then
  "$TFREQ" warmup tests/data/eas/faq_prod.bin tests/data/eas/faq_prod_batch4.bin tests/data/eas/strings_binary.bin \
    --wire tfrecord -o "$OUT/warmup_scrubbed.tfrecord"
fi

"$PYTHON" tests/data/gen/read_tfrecord.py "$OUT"/*.tfrecord > "$OUT/read_tfrecord.out"
cat "$OUT/read_tfrecord.out"
"$PYTHON" tests/data/gen/dump_records.py tests/data/tfrecord/warmup_mixed.tfrecord \
  tests/data/tfrecord/warmup_every_kind.tfrecord "$OUT"/from_mixed.tfrecord \
  "$OUT"/scrubbed_mixed.tfrecord "$OUT"/from_every_kind.tfrecord \
  "$OUT"/scrubbed_every_kind.tfrecord > "$OUT/every_kind.jsonl"

# Damaged copies: TensorFlow's own reader must reject them too (tfreq's messages are
# tested in cli/tests/interop/tfrecord.rs and tests/golden/).
mkdir -p "$OUT/damaged"
"$PYTHON" - "$OUT/from_eas_faq_prod.tfrecord" "$OUT/damaged" <<'PY'
import sys
src, tmp = sys.argv[1], sys.argv[2]
b = bytearray(open(src, "rb").read())
b[20] ^= 1
open(tmp + "/flipped.tfrecord", "wb").write(bytes(b))
open(tmp + "/truncated.tfrecord", "wb").write(bytes(open(src, "rb").read()[:-5]))
PY
{
  "$PYTHON" tests/data/gen/read_tfrecord.py "$OUT/damaged/flipped.tfrecord" || true
  "$PYTHON" tests/data/gen/read_tfrecord.py "$OUT/damaged/truncated.tfrecord" || true
  "$TFREQ" inspect "$OUT/damaged/flipped.tfrecord" 2>&1 || true
  "$TFREQ" inspect "$OUT/damaged/truncated.tfrecord" 2>&1 || true
} | sed "s|$OUT/damaged/||" > "$OUT/corrupt.out"
cat "$OUT/corrupt.out"
