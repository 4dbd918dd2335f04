"""numpy in and out: arrays of every dtype round-trip through TFRequest and decode (both wire
formats), C-contiguous arrays of the dtype's own type are taken as they are, others are
converted or refused, and decoded values that are one little-endian run are views of the bytes."""

import numpy as np
import pytest

import tfreq

T = tfreq.TFRequest
RNG = np.random.default_rng(7)

# dtype number, numpy type, values
CASES = [
    (T.DT_FLOAT, np.float32, RNG.standard_normal(6).astype(np.float32)),
    (T.DT_DOUBLE, np.float64, RNG.standard_normal(6)),
    (T.DT_INT8, np.int8, np.array([-128, -1, 0, 1, 127, 5], np.int8)),
    (T.DT_INT16, np.int16, np.array([-32768, 0, 32767, 7, 8, 9], np.int16)),
    (T.DT_INT32, np.int32, np.array([-(2**31), 0, 2**31 - 1, 1, 2, 3], np.int32)),
    (T.DT_INT64, np.int64, np.array([-(2**63), 0, 2**63 - 1, 1, 2, 3], np.int64)),
    (T.DT_UINT8, np.uint8, np.array([0, 1, 255, 128, 2, 3], np.uint8)),
    (T.DT_UINT16, np.uint16, np.array([0, 65535, 1, 2, 3, 4], np.uint16)),
    (22, np.uint32, np.array([0, 2**32 - 1, 1, 2, 3, 4], np.uint32)),
    (23, np.uint64, np.array([0, 2**64 - 1, 1, 2, 3, 4], np.uint64)),
    (T.DT_BOOL, np.bool_, np.array([True, False, True, True, False, False])),
    (19, np.float16, np.array([0.5, -2.0, 65504.0, 0.0, 1.5, 3.0], np.float16)),
    (8, np.complex64, np.array([1 + 2j, -3j, 0, 1, 2, 3], np.complex64)),
    (18, np.complex128, np.array([1 + 2j, -3j, 0, 1, 2, 3], np.complex128)),
]
WIRES = ["eas", "tf-serving"]


def _encode(wire, req):
    return req.to_string() if wire == "eas" else req.to_tf_serving_bytes("m")



@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("dtype, np_type, values", CASES, ids=[str(c[1].__name__) for c in CASES])
def test_round_trip(wire, dtype, np_type, values):
    if wire == "eas" and dtype in (22, 23):
        with pytest.raises(ValueError, match="EAS cannot carry"):
            T("s").add_feed("x", [6], dtype, values)
        return
    req = T("s", wire=wire)
    arr = values.reshape(2, 3)
    req.add_feed("x", [2, 3], dtype, arr)
    msg = tfreq.decode(_encode(wire, req))
    out = msg.inputs["x"]
    assert out.shape == (2, 3)
    assert out.dtype == np.dtype(np_type)
    np.testing.assert_array_equal(out, arr)


@pytest.mark.parametrize("wire", WIRES)
def test_strings(wire):
    req = T("s")
    vals = np.array([b"a", b"", b"\xff\x00", "é".encode()], dtype=object)
    req.add_feed("s", [2, 2], T.DT_STRING, vals)
    out = tfreq.decode(_encode(wire, req)).inputs["s"]
    assert out.shape == (2, 2) and out.dtype == object
    assert out.reshape(-1).tolist() == list(vals)


def test_bfloat16_is_rounded_to_nearest():
    req = T("s")
    req.add_feed("b", [3], 14, np.array([1.0, 1.00390625, 3.0e38], np.float32))
    msg = tfreq.decode(req.to_tf_serving_bytes("m"))
    got = np.asarray(msg.inputs["b"], dtype=np.float64).tolist()
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1.0); 3e38 to 3.0026e38.
    assert got[0] == 1.0 and got[1] == 1.0
    assert abs(got[2] - 3.0e38) / 3.0e38 < 0.004


def test_a_float32_array_is_taken_as_it_is_and_a_float64_one_converted():
    a = RNG.standard_normal(1000).astype(np.float32)
    r1, r2 = T("s"), T("s")
    r1.add_feed("x", [1000], T.DT_FLOAT, a)
    r2.add_feed("x", [1000], T.DT_FLOAT, a.astype(np.float64))
    assert r1.to_string() == r2.to_string()
    # Non-contiguous and Fortran-ordered arrays: values in C order, as the SDK iterates.
    m = RNG.standard_normal((4, 5)).astype(np.float32)
    r3, r4 = T("s"), T("s")
    r3.add_feed("x", [5, 4], T.DT_FLOAT, m.T)
    r4.add_feed("x", [5, 4], T.DT_FLOAT, np.ascontiguousarray(m.T).reshape(-1).tolist())
    assert r3.to_string() == r4.to_string()


def test_the_request_keeps_its_own_values():
    a = np.zeros(4, np.float32)
    r = T("s")
    r.add_feed("x", [4], T.DT_FLOAT, a)
    before = r.to_string()
    a[:] = 7
    assert r.to_string() == before


@pytest.mark.parametrize(
    "dtype, arr, exc, words",
    [
        (T.DT_INT8, np.array([1, 300], np.int64), ValueError, "value 1 is 300"),
        (T.DT_UINT8, np.array([-1], np.int16), ValueError, "value 0 is -1"),
        (T.DT_INT32, np.array([1.5]), TypeError, "takes integers"),
        (T.DT_FLOAT, np.array([1e39]), ValueError, "would become infinity"),
        (19, np.array([1e6], np.float32), ValueError, "would become infinity"),
        (T.DT_BOOL, np.array([2]), ValueError, "DT_BOOL takes"),
    ],
)
def test_array_refusals(dtype, arr, exc, words):
    with pytest.raises(exc, match=words):
        T("s").add_feed("x", [arr.size], dtype, arr)


def test_decoded_runs_are_views_of_the_bytes():
    a = RNG.standard_normal(1 << 16).astype(np.float32)
    r = T("s")
    r.add_feed("x", [1 << 16], T.DT_FLOAT, a)
    for data in (r.to_string(), r.to_tf_serving_bytes("m")):
        x = tfreq.decode(data).inputs["x"]
        assert not x.flags.owndata and not x.flags.writeable
        base = x.base
        while base is not None and not isinstance(base, bytes):
            base = base.base
        assert base is data
        np.testing.assert_array_equal(x, a)


def test_response_values():
    resp = tfreq.TFResponse(open("tests/data/eas/response.bin", "rb").read())
    assert resp.get_tensor_shape("sorted_probs") == [1, 3]
    np.testing.assert_allclose(resp.get_array("sorted_probs"), [[0.7, 0.2, 0.1]], rtol=1e-6)
    assert resp.get_array("sorted_probs").dtype == np.float32
    assert resp.get_array("sorted_labels").tolist() == [[b"positive", b"neutral", b"negative"]]


def test_read_diff_check_and_keys():
    msgs = list(tfreq.read("tests/data/tfrecord/warmup_mixed.tfrecord"))
    assert len(msgs) == 6 and all(m.label.startswith("record ") for m in msgs)
    rep = tfreq.diff("tests/data/eas/faq_warmup.bin", "tests/data/eas/faq_prod.bin")
    codes = [f["code"] for r in rep["requests"] for f in r["findings"]]
    assert "FETCH_ADDED" in codes, rep
    same = tfreq.diff("tests/data/eas/faq_prod.bin", "tests/data/eas/faq_prod_reordered.bin")
    assert not any(f["severity"] == "error" for r in same["requests"] for f in r["findings"])
    k1 = tfreq.executor_key("tests/data/eas/faq_prod.bin")
    k2 = tfreq.executor_key("tests/data/eas/faq_prod_reordered.bin")
    assert k1 == k2 and hash(k1) == hash(k2)
    import pickle

    assert pickle.loads(pickle.dumps(k1)) == k1
    chk = tfreq.check("tests/data/check/hp2_ok.bin", "tests/data/models/half_plus_two") if _exists(
        "tests/data/check/hp2_ok.bin"
    ) else tfreq.check("tests/data/eas/seed_warm_up.bin", "tests/data/models/seed")
    assert "requests" in chk


def _exists(p):
    import os

    return os.path.exists(p)


def test_decode_errors_carry_offset_and_path():
    with pytest.raises(tfreq.DecodeError) as e:
        tfreq.decode(b"\x12\x05\x0a", wire="eas", kind="request")
    assert isinstance(e.value, ValueError)
    assert e.value.offset == 2
    assert e.value.field_path == "inputs"
    assert "only" in str(e.value) and "left at byte 2" in str(e.value)
