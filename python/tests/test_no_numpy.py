"""Without numpy (`pip install tfreq`, no extra): the module imports, requests are built from
lists, and what would return arrays raises ImportError naming the extra — never a crash."""

import pytest


def test_numpy_is_not_installed():
    with pytest.raises(ImportError):
        import numpy  # noqa: F401


def test_everything_but_arrays_works():
    import tfreq

    r = tfreq.TFRequest("s")
    r.add_feed("x", [2], tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
    r.add_fetch("y")
    msg = tfreq.decode(r.to_string())
    assert msg.shapes == {"x": [2]} and msg.dtypes == {"x": "DT_FLOAT"}
    assert tfreq.executor_key(r.to_string()) == ("s", ("x",), ("y",), False)
    with pytest.raises(ImportError, match=r"tfreq\[numpy\]"):
        msg.inputs


def test_tuples_and_ranges_are_sequences():
    import tfreq

    a, b = tfreq.TFRequest("s"), tfreq.TFRequest("s")
    a.add_feed("x", [3], tfreq.TFRequest.DT_INT32, range(3))
    b.add_feed("x", [3], tfreq.TFRequest.DT_INT32, (0, 1, 2))
    assert a.to_string() == b.to_string()
