"""The types of what tfreq returns, for type checkers and for reading.

The JSON reports (:func:`tfreq.diff`, :func:`tfreq.check`, :func:`tfreq.summarize`,
:func:`tfreq.merge_summaries`, :attr:`tfreq.Message.findings`) are plain dicts and lists at
run time, as ``json.loads`` gives them; the ``TypedDict`` classes below only name their keys
and value types (the documents are described in docs/codes.md and docs/keys.md). The
positional results are ``NamedTuple`` classes: still tuples (they compare, hash, unpack and
pickle as the tuples they were), with names for their fields.

>>> import tfreq
>>> key = tfreq.executor_key('tests/data/eas/faq_prod.bin')
>>> key.signature, key.fetch_all
('serving_default', False)
>>> key == ('serving_default', key.feeds, key.fetches, False)
True
"""

from __future__ import annotations

from typing import Dict, List, Literal, NamedTuple, Optional, Tuple, TypedDict, Union

__all__ = [
    "Wire",
    "Kind",
    "Method",
    "Severity",
    "Verdict",
    "ModelSpec",
    "Task",
    "Feature",
    "FeatureValue",
    "ExampleInput",
    "ExecutorKey",
    "Finding",
    "Key",
    "Counts",
    "Problem",
    "Binding",
    "RequestReport",
    "Coverage",
    "Unreadable",
    "BatchRule",
    "BatchGroup",
    "BatchRun",
    "Batching",
    "Report",
    "FileRead",
    "FeedShape",
    "First",
    "ShapeSummary",
    "KeySummary",
    "Summary",
    "Value",
]

#: ``Message.wire``.
Wire = Literal["eas", "tf-serving"]
#: ``Message.kind``: ``'log'`` and ``'line'`` only from :func:`tfreq.read`.
Kind = Literal["request", "response", "log", "line", "other"]
#: ``Message.method`` and ``Key.method``.
Method = Literal["predict", "classify", "regress", "classify_or_regress", "multi_inference"]
#: A finding's severity.
Severity = Literal["error", "warning", "note"]
#: A report's or a request's verdict (docs/codes.md, "Verdicts").
Verdict = Literal["ok", "same-executor", "undecided", "new-executor", "incompatible", "fail", "unreadable"]
#: One stored value, as ``TFResponse.get_values`` gives it.
Value = Union[float, int, bool, bytes, complex, None]
#: One value of a tf.Example feature.
FeatureValue = Union[bytes, float, int]


class ModelSpec(NamedTuple):
    """TF Serving's ``model_spec`` (``Message.model_spec``)."""

    name: str
    version: Optional[int]
    version_label: Optional[str]
    signature_name: str


class Task(NamedTuple):
    """One task of a ``MultiInferenceRequest`` (``Message.tasks``)."""

    method_name: str
    signature_name: Optional[str]


class Feature(NamedTuple):
    """One feature of a ``tf.train.Example``: its list's kind (``'bytes'``, ``'float'``,
    ``'int64'``, or ``'none'`` for a feature with no list) and its values."""

    kind: Literal["bytes", "float", "int64", "none"]
    values: List[FeatureValue]


class ExampleInput(TypedDict):
    """The ``input`` of a classify, regress or multi-inference request
    (``Message.input``): each example maps a feature name to its :class:`Feature`."""

    list: Literal["example_list", "example_list_with_context"]
    examples: List[Dict[str, Feature]]
    context: Optional[Dict[str, Feature]]


class ExecutorKey(NamedTuple):
    """The key TensorFlow compiles an executor for (:func:`tfreq.executor_key`), names
    sorted: hashable and picklable, equal to the plain tuple of its fields."""

    signature: str
    feeds: Tuple[str, ...]
    fetches: Tuple[str, ...]
    fetch_all: bool


class _Finding(TypedDict):
    code: str
    severity: Severity
    message: str


class Finding(_Finding, total=False):
    """One finding (docs/codes.md): a stable ``code``, its ``severity``, a ``message``,
    and, where they apply, the ``name`` it is about and the two sides it compares."""

    name: str
    left: str
    right: str


class _Key(TypedDict):
    signature: str
    feeds: List[str]
    fetches: List[str]
    fetch_all: bool


class Key(_Key, total=False):
    """An executor key in a JSON report: ``model`` only when the requests name one,
    ``method`` only for tf.Example requests."""

    model: str
    method: Method


class Counts(TypedDict):
    """How many findings of each severity a report holds."""

    errors: int
    warnings: int
    notes: int


class _Problem(TypedDict):
    file: str
    label: str
    code: str
    severity: Severity
    message: str


class Problem(_Problem, total=False):
    """A finding about an input itself (a warm-up TF Serving refuses to load...)."""

    name: str
    left: str
    right: str


class Binding(TypedDict):
    """How a request's name was bound to the signature (``check``)."""

    kind: Literal["feed", "fetch"]
    name: str
    alias: str
    tensor: str
    matched_by: Literal["alias", "tensor-name"]


class _RequestReport(TypedDict):
    label: str
    file: str
    verdict: Verdict
    key: Key
    findings: List[Finding]


class RequestReport(_RequestReport, total=False):
    """One request's verdict and findings; ``warmed_by`` and ``compared_with`` for
    ``diff``, ``bindings`` for ``check``."""

    warmed_by: List[str]
    compared_with: str
    bindings: List[Binding]


class Coverage(TypedDict):
    """A distinct production key and the warm-up requests that warm it (``diff``)."""

    key: Key
    requests: List[str]
    warmed_by: List[str]


class Unreadable(TypedDict):
    """A file that could not be read, and why."""

    file: str
    error: str


class _BatchRule(TypedDict):
    allowed_batch_sizes: List[int]
    max_batch_size: int
    pad_variable_length_inputs: bool


class BatchRule(_BatchRule, total=False):
    """The batching rule the padded sizes come from."""

    max_execution_batch_size: int


class _BatchGroup(TypedDict):
    key: Key
    feeds: str
    production: Dict[str, int]


class BatchGroup(_BatchGroup, total=False):
    """The padded batch sizes of one executor key's requests (padded size → requests)."""

    warmup: List[int]
    not_warmed: List[int]


class _BatchRun(TypedDict):
    label: str
    padded_batch_sizes: List[int]


class BatchRun(_BatchRun, total=False):
    """The batch size of one request and the padded sizes it runs at, or why it is
    refused."""

    batch_size: int
    refused: str


class _Batching(TypedDict):
    rule: BatchRule
    source: str
    production_padded_sizes: List[int]
    too_large: int
    not_batchable: int
    groups: List[BatchGroup]


class Batching(_Batching, total=False):
    """The padded batch sizes requests run at (docs/warmup.md, "Batch sizes")."""

    warmup_padded_sizes: List[int]
    not_warmed: List[int]
    warmup: List[BatchRun]
    requests: List[BatchRun]


class _Report(TypedDict):
    command: Literal["diff", "check"]
    verdict: Verdict
    failed: bool
    counts: Counts
    requests: List[RequestReport]


class Report(_Report, total=False):
    """The report of :func:`tfreq.diff` and :func:`tfreq.check`: what ``tfreq diff
    --format json`` and ``tfreq check --format json`` print (docs/codes.md, "Output")."""

    strict_shapes: bool
    warmup: List[str]
    model: str
    problems: List[Problem]
    coverage: List[Coverage]
    unreadable: List[Unreadable]
    batching: Batching


class FileRead(TypedDict):
    """A file a summary counted, and its size as read."""

    path: str
    bytes: int


class FeedShape(TypedDict):
    """A feed's dtype and shape in a shape key."""

    dtype: str
    shape: List[int]


class _First(TypedDict):
    file: str


class First(_First, total=False):
    """The earliest request of a shape key: its file, and its record in a file of
    several."""

    record: int


class ShapeSummary(TypedDict):
    """One shape key of an executor key: its feeds, how many requests, the first."""

    feeds: Dict[str, FeedShape]
    count: int
    first: First


class _KeySummary(TypedDict):
    signature: str
    feeds: List[str]
    fetches: List[str]
    fetch_all: bool
    count: int
    shapes: List[ShapeSummary]


class KeySummary(_KeySummary, total=False):
    """One executor key of a summary, with its shape keys."""

    model: str
    method: Method


class _Summary(TypedDict):
    schema: int
    requests: int
    skipped: int
    executor_keys: int
    shape_keys: int
    files: List[FileRead]
    unreadable: List[Unreadable]
    keys: List[KeySummary]


class Summary(_Summary, total=False):
    """What :func:`tfreq.summarize` and :func:`tfreq.merge_summaries` return:
    ``tfreq keys --format json`` (schema 1, docs/keys.md)."""

    batching: Batching
