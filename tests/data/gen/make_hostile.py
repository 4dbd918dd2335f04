#!/usr/bin/env python3
"""Requests whose names carry terminal escapes, a forged CI annotation and bidirectional
overrides, written by the real eas-prediction SDK (which takes any str as a name), into
tests/data/hostile/:

    "$(bash .ci/venv eas)" tests/data/gen/make_hostile.py

- names.bin: feed 'x\\x1b[2J\\x1b[31mPWNED\\x1b]0;title\\x07\\r\\n::error::fake' (DT_FLOAT [1]),
  fetches '\\xc2\\x9bred\\nline2' (U+009B, the one-character CSI) and 'rtl\\u202eok';
  signature 'sig\\x1b[0m'.
- names.txt: what print(req.request_data) writes for it (protobuf's own escaping).
"""
from pathlib import Path

from google.protobuf import text_format
from eas_prediction import TFRequest

OUT = Path(__file__).resolve().parents[3] / "tests" / "data" / "hostile"

FEED = "x\x1b[2J\x1b[31mPWNED\x1b]0;title\x07\r\n::error::fake"
FETCHES = ["\u009bred\nline2", "rtl\u202eok"]
SIGNATURE = "sig\x1b[0m"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    req = TFRequest(SIGNATURE)
    req.add_feed(FEED, [1], TFRequest.DT_FLOAT, [1.0])
    for f in FETCHES:
        req.add_fetch(f)
    (OUT / "names.bin").write_bytes(req.to_string())
    (OUT / "names.txt").write_text(text_format.MessageToString(req.request_data) + "\n")


if __name__ == "__main__":
    main()
