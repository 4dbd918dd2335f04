"""What the EAS SDK's users and the docs are promised, without the SDK (python/tests/test_sdk_live.py
holds the same against the SDK itself): every record read, errors that say where, the
text format, values as Python lists, floats beyond float32 refused."""

import json

import pytest

import tfreq

T = tfreq.TFRequest


def test_read_yields_every_record():
    msgs = list(tfreq.read("tests/data/tfrecord/warmup_mixed.tfrecord"))
    assert [m.label for m in msgs] == [f"record {i}" for i in range(6)]
    assert [m.log_kind for m in msgs] == [
        "predict_log",
        "classify_log",
        "regress_log",
        "multi_inference_log",
        "none",
        "none",
    ]
    assert [m.kind for m in msgs] == ["request"] * 4 + ["log"] * 2
    assert msgs[0].names == ["x"] and msgs[1].method == "classify"
    # A log record prints as the PredictionLog it is.
    assert 'log_metadata {\n  model_spec {\n    name: "m"' in str(msgs[5])


def test_read_yields_text_warmup_lines(tmp_path):
    p = tmp_path / "warmup.txt"
    p.write_bytes(b"hello\nworld\n")
    msgs = list(tfreq.read(p))
    assert [(m.kind, m.line, m.label) for m in msgs] == [("line", b"hello", "line 1"), ("line", b"world", "line 2")]


def test_decode_errors_say_where_when_no_reading_takes_the_bytes():
    with pytest.raises(tfreq.DecodeError) as e:
        tfreq.decode(b"\xff\xff\xff")
    assert "at byte 0" in str(e.value)
    assert e.value.offset == 0 and e.value.field_path is None
    # The furthest any reading got, with its field path.
    with pytest.raises(tfreq.DecodeError) as e:
        tfreq.decode(b"\x0a\x01s\x12\x05\x0a")
    assert e.value.offset == 5 and "at byte 5" in str(e.value), str(e.value)
    assert e.value.field_path and e.value.field_path in str(e.value)


def test_request_data_is_the_text_format():
    r = T("serving_default")
    assert str(r.request_data) == ""
    r.add_feed("x", [1, 2], T.DT_FLOAT, [1.0, 0.1])
    r.add_fetch("y")
    assert str(r.request_data) == (
        'signature_name: "serving_default"\ninputs {\n  key: "x"\n  value {\n    dtype: DT_FLOAT\n'
        "    array_shape {\n      dim: 1\n      dim: 2\n    }\n    float_val: 1.0\n    float_val: 0.1\n"
        '  }\n}\noutput_filter: "y"\n'
    )
    assert r.request_data.SerializeToString() == r.to_string()


def test_response_values_are_python_lists():
    resp = tfreq.TFResponse(open("tests/data/eas/response.bin", "rb").read())
    probs = resp.get_values("sorted_probs")
    assert type(probs) is list and all(type(v) is float for v in probs)
    assert probs == [0.699999988079071, 0.20000000298023224, 0.10000000149011612]
    assert json.loads(json.dumps(probs)) == probs
    assert resp.get_values("sorted_labels") == [b"positive", b"neutral", b"negative"]
    assert str(resp).startswith('outputs {\n  key: "model_version_id"\n')
    assert resp.to_string() == str(resp)


@pytest.mark.parametrize("v", [3.4028235e38, -3.4028235e38, 3.4028235677973366e38, 1e39])
def test_floats_beyond_float32_are_refused(v):
    with pytest.raises(ValueError, match="beyond the largest DT_FLOAT; it would become infinity"):
        T("s").add_feed("x", [1], T.DT_FLOAT, [v])


def test_float32_max_is_taken():
    fmax = float.fromhex("0x1.fffffep+127")
    r = T("s")
    r.add_feed("x", [2], T.DT_FLOAT, [fmax, -fmax])
    assert r.to_string().endswith(b"\xff\xff\x7f\x7f\xff\xff\x7f\xff")
