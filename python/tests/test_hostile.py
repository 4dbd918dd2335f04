"""Hostile inputs never take the host process down: each call runs in a fresh interpreter
(under a 4 GiB address-space limit), so an abort fails the test instead of killing pytest,
and the child reports the exception it saw and its peak RSS.

A request of a few bytes can declare a tensor of 2^40 elements with no values (TensorFlow
fills it with zeros, or repeats the last value): decoding must not allocate by that shape,
and making its values must raise MemoryError naming the tensor and its size."""

import gzip
import importlib.util
import json
import resource
import subprocess
import sys
import textwrap

import pytest

import tfreq

from conftest import REPO

HAS_NUMPY = importlib.util.find_spec("numpy") is not None
needs_numpy = pytest.mark.skipif(not HAS_NUMPY, reason="arrays need numpy")

# Shared by the children: builders of hostile messages (protobuf by hand, so the tests need
# no protobuf runtime) and the report they print.
PRELUDE = r'''
import json, resource, struct, sys
import tfreq

def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])

def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def vfield(num, n):
    return varint(num << 3) + varint(n)

def eas_request(dims, dtype=1, values=b""):
    """An EAS PredictRequest: signature "s", one input "x" of `dims`, no values."""
    shape = b"".join(vfield(1, d) for d in dims)
    array = vfield(1, dtype) + field(2, shape) + values
    return field(1, b"s") + field(2, field(1, b"x") + field(2, array))

def eas_response(dims, dtype=1):
    """An EAS PredictResponse: one output "y" of `dims`, no values."""
    shape = b"".join(vfield(1, d) for d in dims)
    array = vfield(1, dtype) + field(2, shape)
    return field(1, field(1, b"y") + field(2, array))

def tfs_request(dims, dtype=1):
    """A TF Serving PredictRequest: model "m", one input "x" of `dims`, no values."""
    shape = b"".join(field(2, vfield(1, d)) for d in dims)
    tensor = vfield(1, dtype) + field(2, shape)
    return field(1, field(1, b"m")) + field(2, field(1, b"x") + field(2, tensor))

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def tfrecord(data):
    """One TFRecord record."""
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(n)) + data + struct.pack("<I", masked(data))

def predict_log(request):
    """A PredictionLog whose predict_log holds `request`."""
    return field(6, field(1, request))

def attempt(f):
    """What calling f gives: ("ok", result) or (exception type, message)."""
    try:
        return ["ok", repr(f())[:200]]
    except BaseException as e:
        return [type(e).__name__, str(e)]

def peak_rss_mb():
    """This process's peak RSS. VmHWM is of this process's own memory; ru_maxrss is not
    (Linux carries the parent's peak at fork through exec)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def done(**kw):
    kw["rss_mb"] = peak_rss_mb()
    print(json.dumps(kw))
'''

ADDRESS_SPACE = 4 << 30


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def child(code, timeout=180):
    """Runs `code` after PRELUDE in a fresh interpreter and returns what it `done()`s;
    fails when the interpreter dies (an abort is SIGABRT, exit -6)."""
    prog = PRELUDE + textwrap.dedent(code)
    p = subprocess.run(
        [sys.executable, "-c", prog],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        preexec_fn=_limit,
    )
    assert p.returncode == 0, f"the interpreter died (exit {p.returncode}): {p.stderr[-3000:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_the_child_can_fail():
    # The harness sees a process that aborts (what an allocation failure in Rust does).
    with pytest.raises(AssertionError, match=r"died \(exit -6\)"):
        child("import os; os.abort()")


DIMS = {
    "2^40": [2**40],
    "2^62": [2**62],
    "2^31 x 2^31": [2**31, 2**31],
    "2^63-1": [2**63 - 1],
}
SIZES = {
    "2^40": "4398046511104 bytes",
    "2^62": "more than 2^64 bytes",
    "2^31 x 2^31": "more than 2^64 bytes",
    "2^63-1": "more than 2^64 bytes",
}


@pytest.mark.parametrize("dims", list(DIMS))
def test_decode_never_allocates_by_a_declared_shape(dims):
    r = child(
        f"""
        b = eas_request({DIMS[dims]!r})
        m = tfreq.decode(b)
        r = tfreq.TFResponse(eas_response({DIMS[dims]!r}))
        recs = list(tfreq.read(b))
        done(size=len(b), shape=m.shapes["x"], dtype=m.dtypes["x"], findings=len(m.findings),
             resp_shape=r.get_tensor_shape("y"), resp_values=r.get_values("y"), records=len(recs))
        """
    )
    assert r["size"] < 40 and r["shape"] == DIMS[dims] and r["dtype"] == "DT_FLOAT"
    assert r["resp_shape"] == DIMS[dims] and r["resp_values"] == [] and r["records"] == 1
    assert r["rss_mb"] < 200, r


@needs_numpy
@pytest.mark.parametrize("dtype", [1, 7, 14])  # float (numpy), string and bfloat16 (lists)
@pytest.mark.parametrize("dims", list(DIMS))
def test_arrays_past_the_limit_raise_memory_error(dims, dtype):
    r = child(
        f"""
        dims = {DIMS[dims]!r}
        m = tfreq.decode(eas_request(dims, {dtype}))
        resp = tfreq.TFResponse(eas_response(dims, {dtype}))
        rec = next(tfreq.read(tfrecord(predict_log(tfs_request(dims, {dtype})))))
        done(decode=attempt(lambda: m.inputs), response=attempt(lambda: resp.get_array("y")),
             read=attempt(lambda: rec.inputs), log_kind=rec.log_kind)
        """
    )
    assert r["log_kind"] == "predict_log"
    for how, name in (("decode", "x"), ("response", "y"), ("read", "x")):
        exc, msg = r[how]
        assert exc == "MemoryError", (how, r)
        assert f'tensor "{name}"' in msg and str(DIMS[dims]) in msg, msg
        assert "beyond the limit of 1073741824 bytes (tfreq.set_max_tensor_bytes)" in msg, msg
        if dtype == 1:
            assert SIZES[dims] in msg, msg
    assert r["rss_mb"] < 200, r


@needs_numpy
def test_the_limit_is_settable_and_fills_are_tensorflows():
    r = child(
        """
        import numpy as np
        assert tfreq.get_max_tensor_bytes() == 1 << 30
        old = tfreq.set_max_tensor_bytes(1 << 20)
        big = attempt(lambda: tfreq.decode(eas_request([(1 << 18) + 1])).inputs)
        exact = tfreq.decode(eas_request([1 << 18])).inputs["x"]
        # Fewer values than the shape: TensorFlow repeats the last one.
        two = b"".join(struct.pack("<f", v) for v in (1.5, 2.5))
        rep = tfreq.decode(eas_request([2, 3], 1, field(3, two))).inputs["x"]
        strs = tfreq.decode(eas_request([4], 7, field(6, b"a") + field(6, b"bc"))).inputs["x"]
        tfreq.set_max_tensor_bytes(old)
        done(old=old, big=big, exact=[int(exact.size), float(exact.sum()), str(exact.dtype)],
             rep=rep.tolist(), strs=[x.decode() for x in strs.tolist()],
             bad=[attempt(lambda: tfreq.set_max_tensor_bytes(-1)), attempt(lambda: tfreq.set_max_tensor_bytes(1.5))])
        """
    )
    assert r["old"] == 1 << 30
    assert r["big"][0] == "MemoryError" and "1048580 bytes as an array, beyond the limit of 1048576" in r["big"][1]
    assert r["exact"] == [1 << 18, 0.0, "float32"]
    assert r["rep"] == [[1.5, 2.5, 2.5], [2.5, 2.5, 2.5]]
    assert r["strs"] == ["a", "bc", "bc", "bc"]
    assert r["bad"][0][0] == "ValueError" and r["bad"][1][0] == "TypeError"


def _many_records(path, n):
    """A gzip TFRecord log of `n` copies of one small predict_log record."""
    prog = PRELUDE + textwrap.dedent(
        f"""
        rec = tfrecord(predict_log(tfs_request([1])))
        import gzip
        with gzip.open({str(path)!r}, "wb", compresslevel=6) as f:
            for _ in range({n} // 10000):
                f.write(rec * 10000)
        """
    )
    subprocess.run([sys.executable, "-c", prog], check=True, timeout=120)


def test_read_streams_a_log_of_many_small_records(tmp_path):
    path = tmp_path / "many.tfrecord.gz"
    _many_records(path, 1_500_000)
    assert path.stat().st_size < 400_000
    r = child(
        f"""
        import time
        t = time.monotonic()
        n = 0
        for m in tfreq.read({str(path)!r}):
            n += 1
        done(n=n, last=m.label, seconds=time.monotonic() - t)
        """,
        timeout=300,
    )
    assert r["n"] == 1_500_000 and r["last"] == "record 1499999", r
    # The inflated file is 39 MB: memory holds it and one record, not 1.5 M messages.
    assert r["rss_mb"] < 250, r


def test_read_caps_the_inflated_size(tmp_path):
    path = tmp_path / "many.tfrecord.gz"
    _many_records(path, 100_000)
    r = child(
        f"""
        done(small=attempt(lambda: tfreq.read({str(path)!r}, max_size=1 << 20)),
             file=attempt(lambda: tfreq.read({str(path)!r}, max_size=1000)))
        """
    )
    assert r["small"][0] == "DecodeError" and "1,048,576 bytes" in r["small"][1], r
    assert r["file"][0] == "DecodeError" and "beyond the limit of 1000 bytes (max_size)" in r["file"][1], r


@pytest.mark.parametrize(
    "shape, exc, words",
    [
        ("12", TypeError, "shape must be a sequence of ints"),
        (b"12", TypeError, "shape must be a sequence of ints"),
        (12, TypeError, "shape must be a sequence of ints"),
        ([1.9], TypeError, "dim 0 of the shape is float 1.9; a dim is an int"),
        ([2.0], TypeError, "dim 0 of the shape is float"),
        ([1, True], TypeError, "dim 1 of the shape is bool True"),
        (["1"], TypeError, "dim 0 of the shape is str"),
        ([None], TypeError, "dim 0 of the shape is NoneType"),
        ([-1], ValueError, r"dim 0 of the shape is negative \(-1\); a dim is 0 or more"),
        ([2**63], ValueError, "beyond int64"),
    ],
)
def test_shapes_are_sequences_of_ints(shape, exc, words):
    r = tfreq.TFRequest("s")
    with pytest.raises(exc, match=words):
        r.add_feed("x", shape, tfreq.TFRequest.DT_FLOAT, [1.0])
    assert r.to_string() == b""


def test_shapes_of_ints_are_taken():
    for shape in ([1, 2], (1, 2), range(1, 3)):
        r = tfreq.TFRequest("s")
        r.add_feed("x", shape, tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
        assert tfreq.decode(r.to_string()).shapes["x"] == [1, 2]
    if HAS_NUMPY:
        import numpy as np

        r = tfreq.TFRequest("s")
        r.add_feed("x", np.array([1, 2]), tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
        r.add_feed("y", [np.int64(2)], tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
        assert tfreq.decode(r.to_string()).shapes == {"x": [1, 2], "y": [2]}
