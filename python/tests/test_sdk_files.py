"""tfreq.TFRequest replays every call the eas-prediction SDK made for tests/data/eas (its
manifest.json, written by tests/data/gen/make_eas.py with eas-prediction 0.36) and must write the
SDK's bytes, or refuse where the SDK wrote something wrong. No SDK needed: the files are what it
wrote."""

import base64
import json
import math

import pytest

import tfreq
from conftest import data

MANIFEST = json.loads(data("eas", "manifest.json").read_text())
DT = {k: v for k, v in vars(tfreq.TFRequest).items() if k.startswith("DT_")}
DT["DT_HALF"] = 19


def _value(dtype, v):
    if dtype == "DT_STRING":
        return base64.b64decode(v)
    if dtype in ("DT_FLOAT", "DT_DOUBLE", "DT_HALF") and isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return v


def _replay(case):
    req = tfreq.TFRequest(case["signature_name"])
    for f in case["feeds"]:
        values = [_value(f["dtype"], v) for v in f["values"]]
        req.add_feed(f["name"], f["shape"], DT[f["dtype"]], values)
    for name in case["fetches"]:
        req.add_fetch(name)
    return req.to_string()


REQUESTS = [c for c in MANIFEST if c["kind"] == "request"]
# The SDK's quirks that tfreq refuses, and why.
REFUSED = {
    "dup_feed.bin": "holds 2 values, got 1|was added already",
    "int_out_of_range.bin": "outside DT_INT8's range",
    "float_overflow.bin": "would become infinity",
}


@pytest.mark.parametrize("case", REQUESTS, ids=[c["file"] for c in REQUESTS])
def test_same_bytes_as_the_sdk_or_a_refusal(case):
    sdk = data("eas", case["file"]).read_bytes()
    if case["file"] in REFUSED:
        with pytest.raises(ValueError, match=REFUSED[case["file"]]):
            _replay(case)
    elif case["file"] == "half_no_values.bin":
        # The SDK drops DT_HALF values silently; tfreq writes them (as float_val, the EAS
        # processor's field for halves), so the request carries what was given.
        ours = tfreq.decode(_replay(case))
        assert ours.shapes["h"] == [2]
        assert sdk != _replay(case)
    else:
        assert _replay(case) == sdk


def test_the_seed_warm_up_is_the_sdks_file():
    case = next(c for c in MANIFEST if c["file"] == "seed_warm_up.bin")
    assert _replay(case) == data("eas", "seed_warm_up.bin").read_bytes()


def test_fetch_only_writes_no_signature_as_the_sdk():
    r = tfreq.TFRequest("serving_default")
    r.add_fetch("y")
    assert r.to_string() == bytes.fromhex("1a0179")


def test_the_signature_is_the_one_of_the_last_add_feed():
    r = tfreq.TFRequest("a")
    r.add_feed("x", [1], r.DT_FLOAT, [1.0])
    r.set_signature_name("b")
    assert tfreq.decode(r.to_string()).signature_name == "a"
    r.add_feed("z", [1], r.DT_FLOAT, [1.0])
    assert tfreq.decode(r.to_string()).signature_name == "b"
