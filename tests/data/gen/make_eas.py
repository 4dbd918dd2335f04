#!/usr/bin/env python3
"""Generate the EAS reference files in tests/data/eas/ with the real eas-prediction SDK.

Run with the interpreter of a venv that has exactly requirements-eas.txt installed
(eas-prediction 0.36 on protobuf 3.20.3, the pure-Python implementation):

    "$(bash .ci/venv eas)" tests/data/gen/make_eas.py

Writes, for every case, NAME.bin (the SDK's bytes), NAME.txt
(text_format.MessageToString(msg) + "\\n", i.e. what print(msg) writes) and one entry in
manifest.json (see tests/data/SCHEMA.md). Output goes to tests/data/eas/ relative to the repo
root, whatever the current directory. The output is deterministic: re-running rewrites identical
bytes. After writing, every file is re-read and checked (see verify()).
"""

import base64
import hashlib
import io
import json
import math
import sys
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.internal import api_implementation

from eas_prediction import TFRequest
from eas_prediction import tf_request_pb2
from eas_prediction.tf_request import TFResponse

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "tests" / "data" / "eas"

if api_implementation.Type() != "python":
    sys.exit("make_eas.py: protobuf implementation is %r, expected 'python' (protobuf==3.20.3)"
             % api_implementation.Type())

T = TFRequest
DTYPE_NAME = tf_request_pb2.ArrayDataType.Name
FLOAT_TYPES = (T.DT_FLOAT, T.DT_DOUBLE, 19)  # 19 = DT_HALF (only in half_no_values)

CASES = []  # list of dicts: name, msg, manifest entry


def _json_value(dtype, v):
    if dtype == T.DT_STRING:
        return base64.b64encode(v).decode("ascii")
    if dtype == T.DT_BOOL:
        return bool(v)
    if dtype in FLOAT_TYPES:
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    return int(v)


class Builder:
    """Wraps a TFRequest and records exactly what was handed to it, in call order."""

    def __init__(self, signature_name):
        self.req = TFRequest(signature_name)
        self.signature_name = signature_name
        self.feeds = []
        self.fetches = []

    def feed(self, name, shape, dtype, values):
        self.req.add_feed(name, shape, dtype, values)
        self.feeds.append({
            "name": name,
            "dtype": DTYPE_NAME(dtype),
            "shape": list(shape),
            "values": [_json_value(dtype, v) for v in values],
            "encoding": "typed",
        })
        return self

    def fetch(self, name):
        self.req.add_fetch(name)
        self.fetches.append(name)
        return self


def add_request(name, b, note, builder_equivalent=True, expect_hex=None):
    data = b.req.to_string()
    if expect_hex is not None and data.hex() != expect_hex:
        raise SystemExit("make_eas.py: %s: hex mismatch\n  got      %s\n  expected %s"
                         % (name, data.hex(), expect_hex))
    CASES.append({
        "name": name,
        "msg": b.req.request_data,
        "data": data,
        "entry": {
            "file": name + ".bin",
            "text": name + ".txt",
            "wire": "eas",
            "kind": "request",
            "signature_name": b.signature_name,
            "feeds": b.feeds,
            "fetches": b.fetches,
            "builder_equivalent": builder_equivalent,
            "note": note,
        },
    })


# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

def seed_warm_up():
    b = Builder("serving_default")
    b.feed("sentence1", [200, 15], T.DT_INT32, [1] * 200 * 15)
    b.feed("sentence2", [200, 15], T.DT_INT32, [1] * 200 * 15)
    b.feed("y", [200, 2], T.DT_INT32, [2] * 200 * 2)
    b.feed("keep_rate", [], T.DT_FLOAT, [0.2])
    b.feed("images", [1, 784], T.DT_FLOAT, [1] * 784)
    b.fetch("sorted_labels")
    b.fetch("sorted_probs")
    add_request("seed_warm_up", b,
                "The Python example of the Alibaba 'Warm up model services' page, verbatim.")


def spec_vector():
    b = Builder("serving_default").feed("x", [1, 2], T.DT_FLOAT, [1, 2]).fetch("y")
    add_request("spec_vector", b, "formats.md section 10 vector 3 (EAS PredictRequest).",
                expect_hex="0a0f73657276696e675f64656661756c7412170a01781212080112040a0201021a08"
                           "0000803f000000401a0179")


def no_signature():
    b = Builder("").feed("x", [1, 2], T.DT_FLOAT, [1, 2]).fetch("y")
    add_request("no_signature", b,
                "TFRequest(''): signature_name empty, so field 1 is absent on the wire "
                "(formats.md section 10 vector 3, second form).",
                expect_hex="12170a01781212080112040a0201021a080000803f000000401a0179")


FLOATS = [0.1, 1.0, -0.0, 1e20, 1.4e-45, 123456789.0, 3061734.25, 3.4028234663852886e38,
          float("inf"), float("-inf"), float("nan"), 1e-5, 1e16, 0.3, 0.2, 16777217.0]
DOUBLES = [0.1, 5e-324, 1.7976931348623157e308, 1e16, 1e-5, 123456789.123,
           float("nan"), float("-inf"), float("inf"), -0.0, 1.0, 2.2250738585072014e-308]
INT8 = [-128, -1, 0, 1, 127, 42]
UINT8 = [0, 1, 127, 128, 254, 255]
INT16 = [-32768, -1, 0, 1, 32767, 1000]
UINT16 = [0, 1, 32767, 32768, 65534, 65535]
INT32 = [-2147483648, -1, 0, 1, 2147483647, 300]
INT64 = [-9223372036854775808, -1, 0, 1, 9223372036854775807, 4294967296]
STRINGS = [b"a", b"", b"hello world", "\u00e9".encode("utf-8"), b"\x00", b"x" * 200]
BOOLS = [True, False, True, False, False, True]

DTYPE_CASES = [
    ("dtype_float", T.DT_FLOAT, [2, 8], FLOATS,
     "float_val; Python doubles narrowed to float32 by protobuf (1.4e-45 -> smallest subnormal, "
     "123456789.0 -> 123456792, 16777217.0 -> 16777216); text uses the shortest float32 repr."),
    ("dtype_double", T.DT_DOUBLE, [3, 4], DOUBLES, "double_val; text is Python repr."),
    ("dtype_int8", T.DT_INT8, [2, 3], INT8, "int_val (int32 varints; negatives are 10 bytes)."),
    ("dtype_int16", T.DT_INT16, [2, 3], INT16, "int_val."),
    ("dtype_int32", T.DT_INT32, [2, 3], INT32, "int_val at int32 min/max."),
    ("dtype_int64", T.DT_INT64, [2, 3], INT64, "int64_val at int64 min/max."),
    ("dtype_uint8", T.DT_UINT8, [2, 3], UINT8, "int_val."),
    ("dtype_uint16", T.DT_UINT16, [2, 3], UINT16, "int_val."),
    ("dtype_qint8", T.DT_QINT8, [2, 3], INT8, "int_val."),
    ("dtype_quint8", T.DT_QUINT8, [2, 3], UINT8, "int_val."),
    ("dtype_qint16", T.DT_QINT16, [2, 3], INT16, "int_val."),
    ("dtype_quint16", T.DT_QUINT16, [2, 3], UINT16, "int_val."),
    ("dtype_qint32", T.DT_QINT32, [2, 3], INT32, "int_val."),
    ("dtype_string", T.DT_STRING, [2, 3], STRINGS,
     "string_val; includes an empty string, a NUL and a 200-byte value (2-byte length varint)."),
    ("dtype_bool", T.DT_BOOL, [2, 3], BOOLS, "bool_val."),
]


def dtypes():
    for name, dtype, shape, values, note in DTYPE_CASES:
        b = Builder("serving_default").feed("x", shape, dtype, values).fetch("y")
        add_request(name, b, "One feed of %s. %s" % (DTYPE_NAME(dtype), note))


def strings_binary():
    values = [b"", b"hello", "h\u00e9llo".encode("utf-8"), b"\xff\x00abc", b'quote"back\\slash',
              b"tab\tnl\nret\r'apos", bytes(range(0, 32)), bytes(range(120, 256))]
    b = Builder("serving_default").feed("s", [8], T.DT_STRING, values).fetch("y")
    add_request("strings_binary", b,
                "DT_STRING values that exercise the text printer's C escaping (quotes, backslash, "
                "\\t \\n \\r \\', octal for other bytes, UTF-8 as octal).")


def scalar():
    b = Builder("serving_default")
    b.feed("f", [], T.DT_FLOAT, [3.5])
    b.feed("s", [], T.DT_STRING, [b"abc"])
    b.feed("i", [], T.DT_INT64, [7])
    b.fetch("out")
    add_request("scalar", b, "Shape [] feeds: array_shape is present but empty (12 00 on the "
                             "wire, 'array_shape {\\n}' in text).")


def zero_dim():
    b = Builder("serving_default")
    b.feed("a", [0, 3], T.DT_FLOAT, [])
    b.feed("b", [2, 0], T.DT_INT32, [])
    b.feed("c", [0], T.DT_STRING, [])
    b.fetch("y")
    add_request("zero_dim", b, "Zero-element tensors: dims with a 0, no values (no value field "
                               "on the wire at all).")


def unicode_names():
    b = Builder("sig_\u00e9")
    b.feed("zeta", [1], T.DT_FLOAT, [1.0])
    b.feed("alpha", [1], T.DT_FLOAT, [2.0])
    b.feed("input:0", [1], T.DT_FLOAT, [3.0])
    b.feed("scope/x", [1], T.DT_FLOAT, [4.0])
    b.feed("\u00e9ntr\u00e9e", [1], T.DT_FLOAT, [5.0])
    b.feed("mid", [1], T.DT_FLOAT, [6.0])
    b.feed("Zeta", [1], T.DT_FLOAT, [7.0])
    b.feed("\uff46\uff55\uff4c\uff4c", [1], T.DT_FLOAT, [8.0])   # U+FF46.. (BMP, above surrogates)
    b.feed("\U0001F600", [1], T.DT_FLOAT, [9.0])                 # U+1F600 (needs a surrogate pair in UTF-16)
    b.feed("\u65e5\u672c\u8a9e", [1], T.DT_FLOAT, [10.0])
    b.fetch("output:0")
    b.fetch("scope/y")
    b.fetch("sortie_\u00e9")
    b.fetch("\u540d\u524d")
    add_request("unicode_names", b,
                "Non-ASCII and ':' '/' names, feeds added in non-sorted order. Binary map entries "
                "are in insertion order; text sorts keys by code point (= UTF-8 byte order, not "
                "UTF-16 order: U+FF46 sorts before U+1F600). Non-ASCII in strings prints as octal.")


def many_fetches():
    b = Builder("serving_default").feed("x", [1], T.DT_FLOAT, [1.0])
    for f in ["z_last", "a_first", "m", "a_first", "out:0", "b"]:
        b.fetch(f)
    add_request("many_fetches", b, "output_filter in a deliberate non-sorted order with a "
                                   "duplicate ('a_first' twice); repeated fields keep order.")


FAQ_TEXT = "gostei muito do produto".encode("utf-8")


def faq_feeds(b, order=("input_holder", "threshold", "model_id"), threshold_dtype=T.DT_FLOAT,
              batch=1, drop=()):
    for name in order:
        if name in drop:
            continue
        if name == "input_holder":
            texts = [FAQ_TEXT] if batch == 1 else [
                FAQ_TEXT, b"nao gostei", "servi\u00e7o r\u00e1pido".encode("utf-8"), b"ok"][:batch]
            b.feed("input_holder", [batch], T.DT_STRING, texts)
        elif name == "threshold":
            b.feed("threshold", [], threshold_dtype, [0.5])
        elif name == "model_id":
            b.feed("model_id", [], T.DT_STRING, [b"model_a"])
    return b


FAQ_FETCH_WARMUP = ["sorted_labels", "sorted_probs"]
FAQ_FETCH_PROD = ["sorted_labels", "sorted_probs", "model_version_id"]


def faq():
    def mk(name, note, fetches=FAQ_FETCH_PROD, **kw):
        b = faq_feeds(Builder("serving_default"), **kw)
        for f in fetches:
            b.fetch(f)
        add_request(name, b, "FAQ of the warm-up page (seeds/002): " + note)

    mk("faq_warmup", "the warm-up request, fetching only sorted_labels and sorted_probs.",
       fetches=FAQ_FETCH_WARMUP)
    mk("faq_prod", "the production request: same feeds, also fetches model_version_id "
                   "(differs from faq_warmup by one fetch).")
    mk("faq_prod_reordered", "faq_prod with feeds and fetches in another order (same set).",
       fetches=["model_version_id", "sorted_probs", "sorted_labels"],
       order=("model_id", "input_holder", "threshold"))
    mk("faq_prod_missing_feed", "faq_prod without the model_id feed.", drop=("model_id",))
    mk("faq_prod_dtype_changed", "faq_prod with threshold sent as DT_DOUBLE instead of DT_FLOAT.",
       threshold_dtype=T.DT_DOUBLE)
    mk("faq_prod_batch4", "faq_prod with input_holder of shape [4] (batch 4).", batch=4)


def quirks():
    b = Builder("serving_default")
    b.feed("x", [2], T.DT_FLOAT, [1])
    b.feed("x", [2], T.DT_FLOAT, [2])
    b.fetch("y")
    add_request("dup_feed", b,
                "SDK quirk: add_feed twice with the same name appends to the one map entry: "
                "the file holds x with dims [2,2] and float_val [1,2]. The manifest lists both "
                "calls.", builder_equivalent=False)

    b = Builder("serving_default")
    b.feed("h", [2], 19, [1.5, 2.5])
    b.fetch("y")
    add_request("half_no_values", b,
                "SDK quirk: add_feed with dtype number 19 (DT_HALF, no SDK constant) stores "
                "dtype and shape but silently drops the values (no value field written).",
                builder_equivalent=False)

    b = Builder("serving_default")
    b.feed("i8", [2], T.DT_INT8, [-129, 128])
    b.feed("u8", [2], T.DT_UINT8, [-1, 256])
    b.feed("u16", [2], T.DT_UINT16, [-1, 65536])
    b.fetch("y")
    add_request("int_out_of_range", b,
                "SDK quirk: int_val is int32, so out-of-range values for int8/uint8/uint16 are "
                "accepted unchecked (-1 as uint8 is a 10-byte varint). Only values outside int32 "
                "raise ValueError.", builder_equivalent=False)

    b = Builder("serving_default")
    b.feed("f", [4], T.DT_FLOAT, [1e39, -1e39, 1e-46, 3.4028235677973366e38])
    b.fetch("y")
    add_request("float_overflow", b,
                "SDK quirk: float_val narrowing saturates silently: 1e39 -> inf, -1e39 -> -inf, "
                "1e-46 -> 0.0, 3.4028235677973366e38 (just above FLT_MAX's rounding boundary) "
                "-> inf.", builder_equivalent=False)

    b = Builder("serving_default")
    b.fetch("y")
    add_request("fetch_only", b,
                "SDK quirk: TFRequest('serving_default') with add_fetch only. signature_name is "
                "copied into the message only by add_feed, so the file has no signature at all "
                "(bytes 1a 01 79).", builder_equivalent=False, expect_hex="1a0179")


# ---------------------------------------------------------------------------------------------
# Response
# ---------------------------------------------------------------------------------------------

def response():
    resp = tf_request_pb2.PredictResponse()
    outputs = [
        ("sorted_labels", T.DT_STRING, [1, 3], [b"positive", b"neutral", b"negative"]),
        ("sorted_probs", T.DT_FLOAT, [1, 3], [0.7, 0.2, 0.1]),
        ("model_version_id", T.DT_STRING, [], [b"v3"]),
    ]
    feeds = []
    for name, dtype, shape, values in outputs:
        arr = resp.outputs[name]
        arr.dtype = dtype
        arr.array_shape.dim.extend(shape)
        if dtype == T.DT_STRING:
            arr.string_val.extend(values)
        else:
            arr.float_val.extend(values)
        feeds.append({"name": name, "dtype": DTYPE_NAME(dtype), "shape": shape,
                      "values": [_json_value(dtype, v) for v in values], "encoding": "typed"})
    CASES.append({
        "name": "response",
        "msg": resp,
        "data": resp.SerializeToString(),
        "entry": {
            "file": "response.bin",
            "text": "response.txt",
            "wire": "eas",
            "kind": "response",
            "signature_name": "",
            "feeds": feeds,
            "fetches": [],
            "builder_equivalent": False,
            "note": "EAS PredictResponse for the FAQ model, built with tf_request_pb2 "
                    "(outputs added in this order; binary keeps it, text sorts keys). "
                    "signature_name/fetches do not apply to a response.",
        },
    })


# ---------------------------------------------------------------------------------------------

def _j(v):
    return json.dumps(v, ensure_ascii=False, allow_nan=False)


def dump_manifest(entries):
    """JSON array, one key per line, but each feed object on a single line (keeps it readable)."""
    out = ["["]
    for i, e in enumerate(entries):
        out.append("  {")
        keys = list(e)
        for k in keys:
            comma = "," if k != keys[-1] else ""
            if k == "feeds":
                if not e[k]:
                    out.append('    "feeds": []' + comma)
                    continue
                out.append('    "feeds": [')
                for j, f in enumerate(e[k]):
                    out.append("      " + _j(f) + ("," if j + 1 < len(e[k]) else ""))
                out.append("    ]" + comma)
            else:
                out.append("    %s: %s%s" % (_j(k), _j(e[k]), comma))
        out.append("  }" + ("," if i + 1 < len(entries) else ""))
    out.append("]")
    js = "\n".join(out) + "\n"
    if json.loads(js) != entries:
        raise SystemExit("manifest JSON does not round-trip")
    return js


def write_all():
    OUT.mkdir(parents=True, exist_ok=True)
    names = set()
    for c in CASES:
        if c["name"] in names:
            raise SystemExit("duplicate case " + c["name"])
        names.add(c["name"])
        (OUT / (c["name"] + ".bin")).write_bytes(c["data"])
        text = text_format.MessageToString(c["msg"]) + "\n"
        (OUT / (c["name"] + ".txt")).write_bytes(text.encode("utf-8"))
    js = dump_manifest([c["entry"] for c in CASES])
    (OUT / "manifest.json").write_bytes(js.encode("utf-8"))
    expected = ({n + ".bin" for n in names} | {n + ".txt" for n in names}
                | {"manifest.json"})
    for p in sorted(OUT.iterdir()):
        if p.name not in expected:
            print("warning: stale file not written by make_eas.py: %s" % p, file=sys.stderr)


def verify():
    manifest = json.loads((OUT / "manifest.json").read_text("utf-8"))
    print("%-26s %-8s %7s  %s" % ("file", "kind", "bytes", "sha256[:16]"))
    for e in manifest:
        data = (OUT / e["file"]).read_bytes()
        cls = tf_request_pb2.PredictResponse if e["kind"] == "response" else tf_request_pb2.PredictRequest
        msg = cls()
        msg.ParseFromString(data)
        if msg.SerializeToString() != data:
            raise SystemExit("round-trip mismatch: " + e["file"])
        # the .txt is exactly what print(msg) writes
        buf = io.StringIO()
        print(msg, file=buf)
        text = (OUT / e["text"]).read_bytes().decode("utf-8")
        if buf.getvalue() != text:
            raise SystemExit("print(msg) differs from .txt: " + e["text"])
        if e["kind"] == "request":
            # the way the warm-up page says to check a file
            req = TFRequest()
            req.request_data.ParseFromString(data)
            if req.to_string() != data:
                raise SystemExit("TFRequest parse-back mismatch: " + e["file"])
            if list(req.request_data.output_filter) != e["fetches"]:
                raise SystemExit("fetch mismatch: " + e["file"])
        else:
            r = TFResponse(data)
            for o in e["feeds"]:
                if r.get_tensor_shape(o["name"]) != o["shape"]:
                    raise SystemExit("TFResponse shape mismatch: %s %s" % (e["file"], o["name"]))
                got = [_json_value(tf_request_pb2.ArrayDataType.Value(o["dtype"]), v)
                       for v in r.get_values(o["name"])]
                if o["dtype"] == "DT_FLOAT":
                    ok = all(abs(a - b) < 1e-6 for a, b in zip(got, o["values"]))
                else:
                    ok = got == o["values"]
                if not ok or len(got) != len(o["values"]):
                    raise SystemExit("TFResponse values mismatch: %s %s" % (e["file"], o["name"]))
        print("%-26s %-8s %7d  %s" % (e["file"], e["kind"], len(data),
                                       hashlib.sha256(data).hexdigest()[:16]))
    seed = (OUT / "seed_warm_up.bin").stat().st_size
    if not 9000 < seed < 10500:
        raise SystemExit("seed_warm_up.bin is %d bytes, expected about 9.7 KB" % seed)
    print("%d files verified in %s" % (len(manifest), OUT))


def main():
    seed_warm_up()
    spec_vector()
    no_signature()
    dtypes()
    strings_binary()
    scalar()
    zero_dim()
    unicode_names()
    many_fetches()
    faq()
    response()
    quirks()
    write_all()
    verify()


if __name__ == "__main__":
    main()
