"""The public API of tfreq used with the types it declares (python/tfreq/results.py,
python/tfreq/_tfreq.pyi): python/tests/test_typing.py runs `mypy --strict` on this file
against the installed package, so a declared type that changes under it fails there. It is
also run, to show the calls do what the annotations say."""

from typing import Dict, Iterator, List, Optional, Tuple

import tfreq
from tfreq.results import (
    ExampleInput,
    ExecutorKey,
    Feature,
    Finding,
    Key,
    ModelSpec,
    Report,
    RequestReport,
    Summary,
    Task,
    Value,
)

SPEC = "tests/data/eas/spec_vector.bin"
WARMUP = "tests/data/eas/faq_warmup.bin"
PROD = "tests/data/eas/faq_prod.bin"
TFRECORD = "tests/data/tfrecord/warmup_predict.tfrecord"
RESPONSE = "tests/data/eas/response.bin"
CLASSIFY = "tests/data/examples/requests/classify_valid_context.pb"


def build() -> bytes:
    req = tfreq.TFRequest("serving_default")
    req.add_feed("x", [1, 2], tfreq.TFRequest.DT_FLOAT, [1.0, 2.0])
    req.add_fetch("y")
    data: bytes = req.to_string()
    return data


def message(data: bytes) -> Tuple[str, List[str], Dict[str, List[int]]]:
    msg: tfreq.Message = tfreq.decode(data)
    spec: Optional[ModelSpec] = msg.model_spec
    if spec is not None:
        version: Optional[int] = spec.version
        assert version is None or version >= 0
    tasks: List[Task] = msg.tasks
    for t in tasks:
        method_name: str = t.method_name
        assert method_name
    findings: List[Finding] = msg.findings
    codes: List[str] = [f["code"] for f in findings]
    assert all(codes)
    return msg.signature_name, msg.fetches, msg.shapes


def examples(path: str) -> int:
    msg = tfreq.decode(path)
    given: Optional[ExampleInput] = msg.input
    if given is None:
        return 0
    context: Optional[Dict[str, Feature]] = given["context"]
    features: List[Dict[str, Feature]] = given["examples"]
    for example in features:
        for name, feature in example.items():
            kind, values = feature
            assert kind == feature.kind and values == feature.values, name
    return len(features) + (0 if context is None else 1)


def records(path: str) -> List[str]:
    entries: Iterator[tfreq.Message] = tfreq.read(path)
    return [m.label for m in entries]


def response(path: str) -> List[Value]:
    resp = tfreq.TFResponse(open(path, "rb").read())
    shape: List[int] = resp.get_tensor_shape("sorted_probs")
    assert shape
    return resp.get_values("sorted_labels")


def report() -> Tuple[str, int]:
    rep: Report = tfreq.diff(WARMUP, [PROD])
    requests: List[RequestReport] = rep["requests"]
    key: Key = requests[0]["key"]
    feeds: List[str] = key["feeds"]
    errors: int = rep["counts"]["errors"]
    return rep["verdict"], errors + len(feeds)


def executor_key(data: bytes) -> Tuple[str, Tuple[str, ...], bool]:
    key: ExecutorKey = tfreq.executor_key(data)
    signature, feeds, fetches, fetch_all = key
    assert (signature, feeds, fetches, fetch_all) == key
    return key.signature, key.feeds, key.fetch_all


def summary() -> int:
    s: Summary = tfreq.summarize([TFRECORD, PROD])
    merged: Summary = tfreq.merge_summaries([tfreq.summarize(TFRECORD), tfreq.summarize(PROD)])
    assert merged == s
    count: int = s["keys"][0]["count"]
    return s["requests"] + count


if __name__ == "__main__":
    b = build()
    print(message(b), examples(CLASSIFY), records(TFRECORD), response(RESPONSE))
    print(report(), executor_key(b), summary())
