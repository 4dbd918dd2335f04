"""The package's declared types: `mypy --strict` over the package and over a file that uses
its public API (typing_usage.py) against the installed wheel (its py.typed and
_tfreq.pyi), mypy's stubtest of the compiled module against _tfreq.pyi, and the values
tfreq returns held to the TypedDicts and NamedTuples of tfreq.results at run time. Each
check is shown to fail on a planted wrong type. Run by python/tests/run.sh in the py-mypy
environment (tests/data/gen/requirements-py-mypy.txt)."""

import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import tfreq
from tfreq import results

from conftest import REPO, data

USAGE = REPO / "python" / "tests" / "typing_usage.py"
PACKAGE = Path(tfreq.__file__).parent  # the installed package


def mypy(*args, cwd, env=None):
    """mypy's exit status and report (`python -m mypy ARGS` in `cwd`)."""
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--show-error-codes", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    return p.returncode, p.stdout + p.stderr


def stubtest(cwd, env=None):
    p = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "tfreq._tfreq"],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
    )
    return p.returncode, p.stdout + p.stderr


def test_the_wheel_ships_its_types():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "_tfreq.pyi").is_file()
    assert (PACKAGE / "results.py").is_file()


def test_usage_checks_strict_against_the_installed_package(tmp_path):
    # From a folder that holds only the usage file: `tfreq` is the installed one, read
    # through its py.typed marker.
    shutil.copy(USAGE, tmp_path / "usage.py")
    code, out = mypy("--strict", "usage.py", cwd=tmp_path)
    assert code == 0, out


def test_a_wrong_type_in_the_usage_fails(tmp_path):
    text = USAGE.read_text().replace("key: ExecutorKey = tfreq.executor_key(data)", "key: int = tfreq.executor_key(data)")
    assert "key: int" in text
    (tmp_path / "usage.py").write_text(text)
    code, out = mypy("--strict", "usage.py", cwd=tmp_path)
    assert code == 1 and "Incompatible types in assignment" in out and "[assignment]" in out, out


def test_the_package_checks_strict(tmp_path):
    # The package's own code against its stub; tfreq.beam needs apache-beam, which this
    # environment does not have (its DoFn would be Any).
    shutil.copytree(PACKAGE, tmp_path / "tfreq", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    code, out = mypy("--strict", "--exclude", "beam\\.py$", "-p", "tfreq", cwd=tmp_path, env={"MYPYPATH": str(tmp_path)})
    assert code == 0, out


def test_a_wrong_stub_fails_the_package_check(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "tfreq", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    stub = tmp_path / "tfreq" / "_tfreq.pyi"
    text = stub.read_text()
    wrong = text.replace("def diff_json(warmup: List[bytes], production: List[bytes], strict_shapes: bool = False) -> str: ...",
                         "def diff_json(warmup: List[bytes], production: List[bytes], strict_shapes: bool = False) -> int: ...")
    assert wrong != text
    stub.write_text(wrong)
    code, out = mypy("--strict", "--exclude", "beam\\.py$", "-p", "tfreq", cwd=tmp_path, env={"MYPYPATH": str(tmp_path)})
    assert code == 1 and "__init__.py" in out and "[arg-type]" in out, out


def test_the_stub_matches_the_compiled_module(tmp_path):
    code, out = stubtest(cwd=tmp_path)
    assert code == 0, out


def test_a_stub_that_misnames_an_argument_fails_stubtest(tmp_path):
    # The same stub with `decode`'s first argument renamed, found first on MYPYPATH.
    shutil.copytree(PACKAGE, tmp_path / "stubs" / "tfreq", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    stub = tmp_path / "stubs" / "tfreq" / "_tfreq.pyi"
    text = stub.read_text()
    wrong = text.replace("def decode(data: bytes,", "def decode(buf: bytes,")
    assert wrong != text
    stub.write_text(wrong)
    code, out = stubtest(cwd=tmp_path, env={"MYPYPATH": str(tmp_path / "stubs")})
    assert code == 1 and "tfreq._tfreq.decode" in out and "buf" in out, out


# -- the values tfreq returns, held to the declared types at run time ------------------------


def conforms(value, tp, where="value"):
    """Raises AssertionError naming the first place where `value` is not of type `tp` (the
    typing forms results.py uses: TypedDict, NamedTuple, List, Dict, Tuple, Optional,
    Union, Literal)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is typing.Any:
        return
    if origin is typing.Literal:
        assert value in args, f"{where}: {value!r} is none of {args}"
        return
    if origin is typing.Union:
        errors = []
        for a in args:
            try:
                conforms(value, a, where)
                return
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{where}: {value!r} is none of {args}: {errors}")
    if isinstance(tp, type) and typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        hints = typing.get_type_hints(tp)
        missing = tp.__required_keys__ - value.keys()
        assert not missing, f"{where}: {tp.__name__} without {sorted(missing)}"
        extra = value.keys() - hints.keys()
        assert not extra, f"{where}: {tp.__name__} has no {sorted(extra)}"
        for k, v in value.items():
            conforms(v, hints[k], f"{where}[{k!r}]")
        return
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
        assert type(value) is tp, f"{where}: {type(value).__name__}, not {tp.__name__}"
        for k, t in typing.get_type_hints(tp).items():
            conforms(getattr(value, k), t, f"{where}.{k}")
        return
    if origin is list:
        assert isinstance(value, list), f"{where}: {type(value).__name__}, not a list"
        for i, v in enumerate(value):
            conforms(v, args[0], f"{where}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        for k, v in value.items():
            conforms(k, args[0], f"{where} key")
            conforms(v, args[1], f"{where}[{k!r}]")
        return
    if origin is tuple:
        assert isinstance(value, tuple), f"{where}: {type(value).__name__}, not a tuple"
        if len(args) == 2 and args[1] is Ellipsis:
            for i, v in enumerate(value):
                conforms(v, args[0], f"{where}[{i}]")
        else:
            assert len(value) == len(args), f"{where}: {len(value)} items, not {len(args)}"
            for i, (v, t) in enumerate(zip(value, args)):
                conforms(v, t, f"{where}[{i}]")
        return
    if tp is type(None):
        assert value is None, f"{where}: {value!r}, not None"
        return
    if tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {value!r}, not an int"
        return
    if tp is float:
        assert isinstance(value, (float, int)) and not isinstance(value, bool), f"{where}: {value!r}, not a float"
        return
    assert isinstance(value, tp), f"{where}: {type(value).__name__}, not {tp.__name__}"


def test_reports_are_what_results_declares():
    conforms(tfreq.diff(data("eas", "faq_warmup.bin"), data("eas", "faq_prod.bin")), results.Report)
    conforms(tfreq.diff(data("eas", "faq_prod.bin"), data("eas", "faq_prod_reordered.bin"), strict_shapes=True), results.Report)
    conforms(tfreq.check(data("eas", "seed_warm_up.bin"), data("models", "seed")), results.Report)


def test_summaries_are_what_results_declares():
    s = tfreq.summarize([data("tfrecord", "warmup_predict.tfrecord"), data("eas", "faq_prod.bin"), data("examples", "requests", "classify_valid_context.pb")])
    assert any("method" in k for k in s["keys"]) and any("record" in sh["first"] for k in s["keys"] for sh in k["shapes"])
    conforms(s, results.Summary)
    conforms(tfreq.merge_summaries([s, tfreq.summarize(data("eas", "faq_warmup.bin"))]), results.Summary)


def test_messages_hold_what_results_declares():
    m = tfreq.decode(data("examples", "requests", "classify_valid_context.pb"))
    assert m.input is not None and m.model_spec is not None
    conforms(m.input, results.ExampleInput, "input")
    conforms(m.model_spec, results.ModelSpec, "model_spec")
    seen_tasks = 0
    for path in sorted(data("examples").rglob("*.pb")) + sorted(data("tfs").glob("*.bin")):
        try:
            m = tfreq.decode(path)
        except tfreq.DecodeError:
            continue
        conforms(m.tasks, typing.List[results.Task], f"{path.name} tasks")
        seen_tasks += len(m.tasks)
        conforms(m.model_spec, typing.Optional[results.ModelSpec], f"{path.name} model_spec")
        conforms(m.input, typing.Optional[results.ExampleInput], f"{path.name} input")
        conforms(m.findings, typing.List[results.Finding], f"{path.name} findings")
        conforms(m.wire, results.Wire)
        conforms(m.kind, results.Kind)
        conforms(m.method, results.Method)
    assert seen_tasks > 0
    key = tfreq.executor_key(data("eas", "faq_prod.bin"))
    conforms(key, results.ExecutorKey)
    assert key == tuple(key) and hash(key) == hash(tuple(key))


def test_a_wrong_declaration_fails_the_run_time_check():
    class Counts(typing.TypedDict):
        errors: str
        warnings: int
        notes: int

    with pytest.raises(AssertionError, match=r"counts\['errors'\]: int, not str"):
        conforms(tfreq.diff(data("eas", "faq_warmup.bin"), data("eas", "faq_prod.bin"))["counts"], Counts, "counts")


def test_the_usage_file_runs():
    p = subprocess.run([sys.executable, str(USAGE)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_the_dtype_constants_are_tensorflows():
    # TFRequest.DT_* are written out for type checkers; they are the numbers of _DTYPES.
    consts = {k: v for k, v in vars(tfreq.TFRequest).items() if k.startswith("DT_")}
    assert consts == tfreq._DTYPES
