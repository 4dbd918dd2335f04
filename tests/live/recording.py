"""`tfreq record` for the live tests: start the proxy in front of one of the live server's ports,
stop it with SIGTERM, and read its summary and file (test_record_tfs.py, test_record_sdk.py).

The binary is $TFREQ_BIN, else target/debug/tfreq (run.sh builds it).
"""

import os
import re
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TFREQ = os.environ.get("TFREQ_BIN") or str(REPO / "target" / "debug" / "tfreq")
TIMEOUT = 30


class Recording:
    """`tfreq record --listen 127.0.0.1:0 --to URL -o DIR/NAME ARGS...`, its port read from the
    address it prints on start."""

    def __init__(self, to, name, *args):
        self.dir = tempfile.TemporaryDirectory(prefix="tfreq-record-")
        self.out = Path(self.dir.name) / name
        self.proc = subprocess.Popen(
            [TFREQ, "record", "--listen", "127.0.0.1:0", "--to", to, "-o", str(self.out), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
        first = self.proc.stderr.readline().decode()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+),", first)
        if not m:
            self.proc.kill()
            raise AssertionError("tfreq record printed no address: %r" % first)
        self.port = int(m.group(1))
        self.stderr = [first]
        self._reader = threading.Thread(target=lambda: self.stderr.append(
            self.proc.stderr.read().decode()), daemon=True)
        self._reader.start()

    def stop(self):
        """SIGTERM; returns (exit code, stdout: the summary)."""
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=TIMEOUT)
        self._reader.join(TIMEOUT)
        return self.proc.returncode, out.decode()

    def traffic_dir(self):
        d = Path(self.dir.name) / "traffic"
        d.mkdir(exist_ok=True)
        return d

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)
        self.dir.cleanup()


def tfreq(*args):
    """Runs tfreq; (exit code, stdout, stderr)."""
    r = subprocess.run([TFREQ, *args], capture_output=True, cwd=REPO, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()
