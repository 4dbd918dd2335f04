"""The `tfreq` command of the Python package: the same CLI, exit codes and pipe behaviour as the
cargo-installed binary."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

EXE = shutil.which("tfreq", path=str(Path(sys.executable).parent))


def run(*args, **kw):
    return subprocess.run([EXE, *args], capture_output=True, **kw)


def test_the_command_is_installed():
    assert EXE, "no tfreq next to " + sys.executable
    r = run("--version")
    assert r.returncode == 0 and r.stdout.startswith(b"tfreq ")


def test_exit_codes():
    assert run("inspect", "tests/data/eas/seed_warm_up.bin").returncode == 0
    # An error finding: 1 (int8 values out of range).
    r = run("inspect", "tests/data/eas/int_out_of_range.bin")
    assert r.returncode == 1, r.stderr
    # Unreadable input and usage errors: 2.
    r = run("inspect", "tests/data/no such file")
    assert r.returncode == 2 and b"no such file" in r.stderr.lower()
    assert run("inspect", "--no-such-flag").returncode == 2
    assert run("diff", "tests/data/eas/faq_warmup.bin", "tests/data/eas/faq_prod.bin").returncode == 1


def test_standard_input():
    data = Path("tests/data/eas/seed_warm_up.bin").read_bytes()
    r = run("inspect", "-", input=data)
    assert r.returncode == 0, r.stderr
    assert b"sentence1" in r.stdout


def test_a_closed_pipe_is_quiet():
    p = subprocess.Popen(
        f"'{EXE}' inspect --format text tests/data/eas/seed_warm_up.bin | head -n 1",
        shell=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0
    assert len(out.splitlines()) == 1
    assert err == b"", err


def test_ctrl_c_stops_it(tmp_path):
    # `send` to a port that accepts and never answers: the command waits (up to its
    # timeout); SIGINT must end it at once, as it ends the Rust binary.
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    p = subprocess.Popen(
        [EXE, "send", "tests/data/eas/seed_warm_up.bin", "--to", f"http://127.0.0.1:{port}/api/predict/m", "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    conn, _ = srv.accept()
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=10)
    finally:
        conn.close()
        srv.close()
    assert p.returncode in (-signal.SIGINT, 130), p.returncode
