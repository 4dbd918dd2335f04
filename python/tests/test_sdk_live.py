"""In one environment with the real eas-prediction 0.36 (protobuf 3.20.3): tfreq installs and
imports beside it, and tfreq.TFRequest writes the SDK's bytes for the same calls, for every dtype
the SDK has a constant for, from lists and from numpy arrays, with random values."""

import random

import numpy as np
import pytest
from eas_prediction import TFRequest as SdkRequest

import tfreq

T = tfreq.TFRequest
RANGES = {
    "DT_INT8": (-128, 127),
    "DT_INT16": (-(2**15), 2**15 - 1),
    "DT_INT32": (-(2**31), 2**31 - 1),
    "DT_INT64": (-(2**63), 2**63 - 1),
    "DT_UINT8": (0, 255),
    "DT_UINT16": (0, 2**16 - 1),
    "DT_QINT8": (-128, 127),
    "DT_QUINT8": (0, 255),
    "DT_QINT16": (-(2**15), 2**15 - 1),
    "DT_QUINT16": (0, 2**16 - 1),
    "DT_QINT32": (-(2**31), 2**31 - 1),
}
NP = {
    "DT_FLOAT": np.float32,
    "DT_DOUBLE": np.float64,
    "DT_INT8": np.int8,
    "DT_INT16": np.int16,
    "DT_INT32": np.int32,
    "DT_INT64": np.int64,
    "DT_UINT8": np.uint8,
    "DT_UINT16": np.uint16,
    "DT_BOOL": np.bool_,
}
SDK_DTYPES = sorted(k for k in vars(SdkRequest) if k.startswith("DT_"))


def values(name, rng, n):
    if name in RANGES:
        lo, hi = RANGES[name]
        return [rng.choice([lo, hi, 0, -1 if lo < 0 else 1, rng.randint(lo, hi)]) for _ in range(n)]
    if name == "DT_FLOAT":
        return [float(np.float32(rng.gauss(0, 1e3))) for _ in range(n)]
    if name == "DT_DOUBLE":
        return [rng.gauss(0, 1e6) for _ in range(n)]
    if name == "DT_BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    if name == "DT_STRING":
        return [bytes(rng.randrange(256) for _ in range(rng.randrange(20))) for _ in range(n)]
    raise AssertionError(name)


def both(calls):
    out = []
    for cls in (SdkRequest, T):
        r = cls("serving_default")
        for c in calls:
            getattr(r, c[0])(*c[1:])
        out.append(r.to_string())
    return out


def test_the_sdk_constants_are_tfreqs():
    for name in SDK_DTYPES:
        assert getattr(T, name) == getattr(SdkRequest, name), name


@pytest.mark.parametrize("name", SDK_DTYPES)
@pytest.mark.parametrize("seed", range(5))
def test_same_bytes_from_lists(name, seed):
    rng = random.Random(seed * 100 + hash(name) % 97)
    shape = [rng.randrange(0, 4), rng.randrange(1, 5)]
    n = shape[0] * shape[1]
    dtype = getattr(SdkRequest, name)
    calls = [("add_feed", "x", shape, dtype, values(name, rng, n)), ("add_fetch", "y"), ("add_fetch", "z")]
    calls.insert(1, ("add_feed", "keep_rate", [], SdkRequest.DT_FLOAT, [0.5]))
    sdk, ours = both(calls)
    assert ours == sdk


@pytest.mark.parametrize("name", sorted(NP))
def test_same_bytes_from_numpy(name):
    rng = random.Random(5)
    arr = np.array(values(name, rng, 24), dtype=NP[name]).reshape(2, 3, 4)
    dtype = getattr(SdkRequest, name)
    sdk = SdkRequest("serving_default")
    if name == "DT_BOOL":
        # protobuf 3.20 refuses numpy.bool_ values: the SDK needs a list for these.
        with pytest.raises(TypeError):
            SdkRequest("serving_default").add_feed("x", [24], dtype, arr.reshape(-1))
        sdk.add_feed("x", [2, 3, 4], dtype, arr.reshape(-1).tolist())
    else:
        sdk.add_feed("x", [2, 3, 4], dtype, arr.reshape(-1))
    ours = T("serving_default")
    ours.add_feed("x", [2, 3, 4], dtype, arr)
    assert ours.to_string() == sdk.to_string()


def test_float64_arrays_for_float_round_as_the_sdk():
    arr = np.random.default_rng(3).standard_normal(1000)
    sdk = SdkRequest("s")
    sdk.add_feed("x", [1000], SdkRequest.DT_FLOAT, arr)
    ours = T("s")
    ours.add_feed("x", [1000], T.DT_FLOAT, arr)
    assert ours.to_string() == sdk.to_string()


def test_the_seed_programs_requests():
    # ../shared/seeds' warm-up program: the same calls on both.
    calls = [
        ("add_feed", "sentence1", [200, 15], SdkRequest.DT_INT32, [1] * 200 * 15),
        ("add_feed", "sentence2", [200, 15], SdkRequest.DT_INT32, [1] * 200 * 15),
        ("add_feed", "y", [200, 2], SdkRequest.DT_INT32, [2] * 200 * 2),
        ("add_feed", "keep_rate", [], SdkRequest.DT_FLOAT, [0.2]),
        ("add_feed", "images", [1, 784], SdkRequest.DT_FLOAT, [1] * 784),
        ("add_fetch", "sorted_labels"),
        ("add_fetch", "sorted_probs"),
    ]
    sdk, ours = both(calls)
    assert ours == sdk
    assert ours == open("tests/data/eas/seed_warm_up.bin", "rb").read()


def test_sdk_response_reading():
    data = open("tests/data/eas/response.bin", "rb").read()
    from eas_prediction.tf_request import TFResponse as SdkResponse

    sdk = SdkResponse(data)
    ours = tfreq.TFResponse(data)
    for name in ("sorted_labels", "sorted_probs", "model_version_id"):
        assert ours.get_tensor_shape(name) == sdk.get_tensor_shape(name)
        assert list(ours.get_values(name)) == pytest.approx(list(sdk.get_values(name))) if name == "sorted_probs" else list(ours.get_values(name)) == list(sdk.get_values(name))


def _requests():
    """Requests built the same way on both: (sdk, ours) pairs."""
    out = []
    for calls in (
        [("add_feed", "x", [1, 2], SdkRequest.DT_FLOAT, [1.0, 0.1]), ("add_fetch", "y")],
        [
            ("add_feed", "ids", [2], SdkRequest.DT_INT64, [1, -(2**40)]),
            ("add_feed", "s", [2], SdkRequest.DT_STRING, [b"a\n\"\xff", b""]),
            ("add_feed", "b", [1], SdkRequest.DT_BOOL, [True]),
            ("add_feed", "d", [3], SdkRequest.DT_DOUBLE, [1e20, 123456789.0, -0.0]),
        ],
        [],
    ):
        sdk, ours = SdkRequest("serving_default"), T("serving_default")
        for r in (sdk, ours):
            for c in calls:
                getattr(r, c[0])(*c[1:])
        out.append((sdk, ours))
    return out


def test_request_data_prints_as_the_sdks():
    for sdk, ours in _requests():
        assert str(ours.request_data) == str(sdk.request_data)
        assert ours.request_data.SerializeToString() == sdk.request_data.SerializeToString()


def test_response_values_are_the_sdks_lists():
    import json

    data = open("tests/data/eas/response.bin", "rb").read()
    from eas_prediction.tf_request import TFResponse as SdkResponse

    sdk = SdkResponse(data)
    ours = tfreq.TFResponse(data)
    for name in ("sorted_labels", "sorted_probs", "model_version_id"):
        got, want = ours.get_values(name), list(sdk.get_values(name))
        assert got == want and [type(v) for v in got] == [type(v) for v in want]
    json.dumps(ours.get_values("sorted_probs"))
    assert str(ours) == str(sdk) and ours.to_string() == sdk.to_string()
    # Every dtype the SDK reads back, from a response the SDK's own protobuf writes.
    from eas_prediction import tf_request_pb2 as pb

    resp = pb.PredictResponse()
    for name, dtype, field, values in (
        ("f", pb.DT_FLOAT, "float_val", [0.1, -2.5, 3e38]),
        ("d", pb.DT_DOUBLE, "double_val", [0.1, 1e300]),
        ("i", pb.DT_INT32, "int_val", [1, -(2**31)]),
        ("q", pb.DT_INT64, "int64_val", [2**62, -1]),
        ("s", pb.DT_STRING, "string_val", [b"x", b"\x00\xff"]),
        ("b", pb.DT_BOOL, "bool_val", [True, False]),
    ):
        resp.outputs[name].dtype = dtype
        resp.outputs[name].array_shape.dim.extend([len(values)])
        getattr(resp.outputs[name], field).extend(values)
    data = resp.SerializeToString()
    sdk, ours = SdkResponse(data), tfreq.TFResponse(data)
    for name in "fdiqsb":
        got, want = ours.get_values(name), list(sdk.get_values(name))
        assert got == want and [type(v) for v in got] == [type(v) for v in want], name
    assert str(ours) == str(sdk)


def test_floats_the_sdk_writes_as_inf_are_refused():
    # 3.4028235e38 rounds to FLT_MAX, but protobuf's float check writes inf for anything
    # beyond FLT_MAX: the SDK's request would carry inf. tfreq raises instead.
    sdk = SdkRequest("s")
    sdk.add_feed("x", [1], SdkRequest.DT_FLOAT, [3.4028235e38])
    assert "float_val: inf" in str(sdk.request_data)
    for values in ([3.4028235e38], np.array([3.4028235e38]), [-3.4028235e38]):
        with pytest.raises(ValueError, match="it would become infinity"):
            T("s").add_feed("x", [1], T.DT_FLOAT, values)
    # FLT_MAX itself is written as the SDK writes it.
    fmax = float.fromhex("0x1.fffffep+127")
    sdk_bytes, ours_bytes = both([("add_feed", "x", [2], SdkRequest.DT_FLOAT, [fmax, -fmax])])
    assert ours_bytes == sdk_bytes
