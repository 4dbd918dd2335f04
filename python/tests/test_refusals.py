"""What the eas-prediction SDK lets through, tfreq.TFRequest refuses with the builder's message:
ValueError for values, TypeError for types (as protobuf's own checks raise)."""

import pytest

import tfreq

T = tfreq.TFRequest


def feed(dtype, values, shape=None, name="x"):
    r = T("s")
    r.add_feed(name, [len(values)] if shape is None else shape, dtype, values)
    return r


@pytest.mark.parametrize(
    "dtype, values, exc, words",
    [
        (T.DT_INT8, [-129], ValueError, "outside DT_INT8's range [-128, 127]"),
        (T.DT_INT8, [128], ValueError, "outside DT_INT8's range"),
        (T.DT_UINT8, [-1], ValueError, "outside DT_UINT8's range [0, 255]"),
        (T.DT_UINT8, [256], ValueError, "outside DT_UINT8's range"),
        (T.DT_INT16, [2**15], ValueError, "outside DT_INT16's range"),
        (T.DT_UINT16, [65536], ValueError, "outside DT_UINT16's range"),
        (T.DT_INT32, [2**31], ValueError, "outside DT_INT32's range"),
        (T.DT_INT64, [2**63], ValueError, "outside DT_INT64's range"),
        (T.DT_QINT8, [200], ValueError, "outside DT_QINT8's range"),
        (T.DT_QUINT16, [-5], ValueError, "outside DT_QUINT16's range"),
        (T.DT_FLOAT, [1e39], ValueError, "would become infinity"),
        (T.DT_FLOAT, [-3.4028235677973366e38], ValueError, "would become infinity"),
        (T.DT_BOOL, [2], ValueError, "DT_BOOL takes True, False, 1 or 0"),
        (T.DT_INT32, [1.5], TypeError, "takes integers"),
        (T.DT_FLOAT, ["1.0"], TypeError, "takes numbers"),
        (T.DT_STRING, [1], TypeError, "takes bytes or str"),
    ],
)
def test_values_the_dtype_cannot_hold(dtype, values, exc, words):
    with pytest.raises(exc, match=words.replace("[", r"\[").replace("]", r"\]")):
        feed(dtype, values)


def test_the_index_of_the_bad_value_is_named():
    with pytest.raises(ValueError, match="value 2 is 300"):
        feed(T.DT_INT8, [1, 2, 300])


def test_wrong_count():
    with pytest.raises(ValueError, match=r'shape \[2, 2\] holds 4 values, got 3'):
        feed(T.DT_INT64, [1, 2, 3], shape=[2, 2])


def test_repeated_feed():
    r = T("s")
    r.add_feed("x", [1], T.DT_FLOAT, [1.0])
    with pytest.raises(ValueError, match="was added already"):
        r.add_feed("x", [1], T.DT_FLOAT, [2.0])


def test_negative_dim():
    with pytest.raises(ValueError, match="negative"):
        feed(T.DT_FLOAT, [1.0], shape=[-1])


def test_no_signature_name():
    with pytest.raises(TypeError, match="signature_name"):
        T().add_feed("x", [1], T.DT_FLOAT, [1.0])


def test_values_that_round_are_kept_as_the_sdk_rounds_them():
    # Rounding to float32 (0.1), and underflow to zero, are what protobuf does too; FLT_MAX
    # is kept (anything beyond it, protobuf writes as inf: refused, test_dropin.py).
    r = feed(T.DT_FLOAT, [0.1, 1e-46, float.fromhex("0x1.fffffep+127")])
    assert r.to_string().endswith(bytes.fromhex("cdcccc3d") + bytes(4) + bytes.fromhex("ffff7f7f"))


def test_a_refused_feed_leaves_the_request_as_it_was():
    r = T("s")
    r.add_feed("x", [1], T.DT_FLOAT, [1.0])
    before = r.to_string()
    with pytest.raises(ValueError):
        r.add_feed("y", [1], T.DT_INT8, [999])
    assert r.to_string() == before


def test_merged_counts_never_wrap():
    # Two summaries whose counts add past 2^64 - 1: an error naming the sum, not a count
    # that wrapped to 0 (as `tfreq keys merge` refuses it).
    s = tfreq.summarize(["tests/data/eas/faq_prod.bin"])
    s["requests"] = 2**63
    s["keys"][0]["count"] = 2**63
    s["keys"][0]["shapes"][0]["count"] = 2**63
    with pytest.raises((tfreq.Error, tfreq.DecodeError), match="past the largest count"):
        tfreq.merge_summaries([s, s])
