#!/usr/bin/env python3
"""Write the EAS SDK's degenerate requests that format detection must accept, into
tests/data/detect/ (pins: requirements-eas.txt).

    "$(bash .ci/venv eas)" tests/data/gen/make_detect_eas.py

Files (NAME.bin is TFRequest.to_string(); NAME.txt is what print(request_data) writes):
  empty_request.bin        TFRequest() with nothing added: 0 bytes. The SDK sends it as it is.
  output_filter_only.bin   TFRequest() with add_fetch("y") only: field 3 alone, which reads the
                           same as an EAS and a TF Serving PredictRequest (output_filter is
                           field 3 in both).

Each file is re-read with PredictRequest.ParseFromString and re-serialised byte-identically;
the script is deterministic.
"""

import sys
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.internal import api_implementation

from eas_prediction import TFRequest
from eas_prediction import tf_request_pb2

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "detect"

if api_implementation.Type() != "python":
    sys.exit("make_detect_eas.py: protobuf implementation is %r, expected 'python'"
             % api_implementation.Type())


def write(name, req):
    data = req.to_string()
    (OUT / (name + ".bin")).write_bytes(data)
    text = text_format.MessageToString(req.request_data) + "\n"
    (OUT / (name + ".txt")).write_text(text)
    back = tf_request_pb2.PredictRequest()
    back.ParseFromString(data)
    if back.SerializeToString() != data:
        sys.exit("%s: does not re-serialise identically" % name)
    print("%s.bin\t%d bytes\t%s" % (name, len(data), data.hex()))
    return data


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    empty = write("empty_request", TFRequest())
    if empty != b"":
        sys.exit("empty_request: expected 0 bytes, got %r" % empty)
    r = TFRequest()
    r.add_fetch("y")
    only = write("output_filter_only", r)
    if only != bytes.fromhex("1a0179"):
        sys.exit("output_filter_only: expected 1a0179, got %s" % only.hex())


if __name__ == "__main__":
    main()
