"""Tests of the Python package, run from the repository root by python/tests/run.sh (each file
in the environment it needs: see there)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch):
    """Paths in the tests (and in the doctests) are relative to the repository root."""
    monkeypatch.chdir(REPO)


def data(*parts):
    return REPO.joinpath("tests", "data", *parts)
