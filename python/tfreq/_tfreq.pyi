# The compiled module `tfreq._tfreq` (python/src/lib.rs, python/src/decoded.rs): its types for
# type checkers. python/tests/test_typing.py holds it to the module (mypy.stubtest) and checks
# the package against it (mypy --strict).

from typing import Any, List, Optional, Protocol, Tuple, TypedDict, Union, final

from .results import ExampleInput, Finding, Kind, Method, ModelSpec, Task, Value, Wire

__all__ = [
    "__version__",
    "Error",
    "DecodeError",
    "Builder",
    "decode",
    "read",
    "diff_json",
    "check_json",
    "executor_key",
    "run_cli",
    "summarize_paths",
    "summarize_reader",
    "merge_summaries",
]

__version__: str

class Error(Exception):
    """Any error of tfreq that is not a refusal of an argument."""

class DecodeError(ValueError):
    """Bytes that are not a valid request or response."""

    offset: Optional[int]
    field_path: Optional[str]
    record: Optional[int]
    file: Optional[str]

@final
class Builder:
    def __new__(cls, signature_name: str, wire: str = "eas") -> "Builder": ...
    def add_array(self, name: str, shape: List[int], dtype: int, array: Any) -> None: ...
    def add_list(self, name: str, shape: List[int], dtype: int, kind: str, values: List[Any]) -> None: ...
    def add_fetch(self, name: str) -> None: ...
    def set_signature_name(self, name: str) -> None: ...
    def feed_names(self) -> List[str]: ...
    def fetches(self) -> List[str]: ...
    def to_bytes(self) -> bytes: ...
    def to_tf_serving_bytes(self, model_name: str) -> bytes: ...

# How `Decoded.array` hands over a tensor's values: ("view", offset, count, numpy type,
# ml_dtypes type or None), ("bytes", data, numpy type, ml_dtypes type or None), or
# ("objects", a 1-D numpy object array).
_ArrayData = Union[
    Tuple[str, int, int, str, Optional[str]],
    Tuple[str, bytes, str, Optional[str]],
    Tuple[str, Any],
]

@final
class _Decoded:
    """One decoded message: its values on demand."""

    def array(self, i: int, max_bytes: int, ml_dtypes: bool = True) -> _ArrayData: ...
    def values(self, i: int, max_bytes: int) -> List[Value]: ...
    def findings(self) -> List[Finding]: ...
    def text(self) -> Optional[str]: ...
    def raw(self) -> bytes: ...

# One tensor of a decoded message: (name, dtype number, dtype name, shape, numpy type or None).
_TensorInfo = Tuple[str, int, str, List[int], Optional[str]]

class _MessageBase(TypedDict):
    label: str
    wire: Wire
    kind: Kind
    signature_name: str
    fetches: List[str]
    model_spec: Optional[ModelSpec]
    tensors: List[_TensorInfo]
    method: Method
    input: Optional[ExampleInput]
    tasks: List[Task]
    log_kind: Optional[str]
    source: _Decoded

class _Message(_MessageBase, total=False):
    """What `decode` and `read` give for each message (`tfreq.Message` wraps it);
    `line` only for a line of a text warm-up."""

    line: bytes

@final
class _Records:
    def __iter__(self) -> "_Records": ...
    def __next__(self) -> _Message: ...

class _Readable(Protocol):
    def read(self, n: int, /) -> bytes: ...

def decode(data: bytes, wire: Optional[str] = None, kind: Optional[str] = None) -> _Message: ...
def read(data: bytes, max_size: int = ..., path: Optional[str] = None) -> _Records: ...
def diff_json(warmup: List[bytes], production: List[bytes], strict_shapes: bool = False) -> str: ...
def check_json(requests: List[bytes], model: str, signature: Optional[str] = None) -> str: ...
def executor_key(data: bytes) -> Tuple[str, Tuple[str, ...], Tuple[str, ...], bool]: ...
def run_cli(argv: List[str], own_process: bool = False) -> int: ...
def summarize_paths(paths: List[str]) -> str: ...
def summarize_reader(name: str, reader: _Readable) -> str: ...
def merge_summaries(summaries: List[str]) -> str: ...
