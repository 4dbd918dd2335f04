"""``run_cli`` leaves the interpreter's signal dispositions as it found them, unless the
caller owns the process (``own_process=True``, the package's ``tfreq`` command)."""

import subprocess
import sys

import pytest

# Runs the command in a fresh interpreter and prints its status and whether the set of
# signals the process catches (Linux's SigCgt mask) is the same after the run.
PROBE = r"""
import sys
from tfreq._tfreq import run_cli

def caught():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("SigCgt:"):
                return int(line.split()[1], 16)

before = caught()
argv = ["tfreq", "convert", sys.argv[1], "--wire", "tf-serving", "-o", sys.argv[2]]
code = run_cli(argv, own_process=sys.argv[3] == "own")
print(code, caught() == before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("mode, unchanged", [("embedded", b"True"), ("own", b"False")])
def test_run_cli_installs_handlers_only_in_its_own_process(tmp_path, mode, unchanged):
    # Writing a file (-o) registers the removal of its temporary on SIGINT, SIGTERM,
    # SIGHUP and SIGQUIT: in its own process only.
    out = subprocess.run(
        [sys.executable, "-c", PROBE, "tests/data/eas/seed_warm_up.bin", str(tmp_path / "o.bin"), mode],
        capture_output=True,
        check=True,
    ).stdout.split()
    assert out == [b"0", unchanged]
    assert (tmp_path / "o.bin").stat().st_size > 0
