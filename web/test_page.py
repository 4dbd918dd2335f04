#!/usr/bin/env python3
"""The browser inspector (web/dist/, built by web/build.sh) driven in the system Chromium by
Playwright, against what the command line says of the same files.

    TFREQ=target/debug/tfreq TFREQ_BROWSER="$(bash .ci/browser)" \\
        "$(bash .ci/venv browser)" -m unittest web/test_page.py

The page is served from 127.0.0.1; files are chosen in its inputs as a user would. Checked:
each file's text as `tfreq --color never inspect` prints it, the text, verdict and finding
codes of `tfreq diff` on the faq warm-up and production pair, `tfreq check` against the faq
model's metadata JSON, `tfreq keys` of a gzip log read a slice at a time, names holding HTML
shown as text, no request at all once the page has loaded, and a screenshot whose pixels
show the verdict and the page's parts. TFREQ_WEB_SCREENSHOT=PATH keeps the screenshot (for
docs/web.md). Each CLI run is made in a folder holding the chosen files under their own
names, so that its labels are the page's (a browser knows a file's name, not its path).
"""

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "live"))
from png import png_rgb  # noqa: E402

DIST = Path(os.environ.get("TFREQ_WEB_DIST", REPO / "web" / "dist"))
TFREQ = str(Path(os.environ.get("TFREQ", REPO / "target" / "debug" / "tfreq")).resolve())
BROWSER = os.environ["TFREQ_BROWSER"]
DATA = REPO / "tests" / "data"

FILES = {
    "faq_warmup.bin": DATA / "eas" / "faq_warmup.bin",
    "faq_prod.bin": DATA / "eas" / "faq_prod.bin",
    "faq_prod_batch4.bin": DATA / "eas" / "faq_prod_batch4.bin",
    # A TF Serving warm-up (TFRecord of PredictionLog, three records).
    "warmup_predict.tfrecord": DATA / "tfrecord" / "warmup_predict.tfrecord",
    # A gzip TFRecord log written by TensorFlow (tests/data/gen/make_compressed.py).
    "prediction_logs-00000-of-00002.gz": DATA / "compressed" / "prediction_logs-00000-of-00002.gz",
    "names.bin": DATA / "hostile" / "names.bin",
    "faq.metadata.json": DATA / "models" / "faq.metadata.json",
}

# Names holding HTML: shown as text, they run nothing and add no element.
HTML_NAMES = """signature_name: "<b>sig</b>"
inputs {
  key: "<img src=x onerror=\\"window.pwned=1\\">"
  value {
    dtype: DT_FLOAT
    array_shape { dim: 1 }
    float_val: 1.0
  }
}
output_filter: "</pre><script>window.pwned=2</script>"
"""

# Colours of the page (web/page/style.css).
RED = (198, 40, 40)  # .verdict.bad, #c62828
GREEN = (46, 125, 50)  # .private's border, #2e7d32
BLUE = (31, 119, 180)  # .drop's dashed border, #1f77b4


def near(px, want, tol=10):
    return all(abs(p - w) <= tol for p, w in zip(px, want))


def problems(png):
    """What is missing from a screenshot of the page after a diff; empty when all is drawn:
    the privacy note's green bar, the drop zone's blue border, a red verdict badge below
    them, and text."""
    width, _, rows = png_rgb(png)
    found = []

    def rows_with(colour, least):
        return [y for y, row in enumerate(rows) if sum(1 for px in row if near(px, colour)) >= least]

    green = rows_with(GREEN, 3)
    if len(green) < 20:
        found.append("the privacy note's green bar spans %d rows" % len(green))
    blue = rows_with(BLUE, width // 4)
    if not blue:
        found.append("no row of the drop zone's blue border")
    red = rows_with(RED, 30)
    if len(red) < 8:
        found.append("no red verdict badge (%d rows with red)" % len(red))
    elif blue and min(red) < min(blue):
        found.append("the verdict badge is above the drop zone")
    dark = sum(1 for row in rows for px in row if max(px) < 90)
    if dark < 5000:
        found.append("only %d dark pixels of text" % dark)
    return found


def cli(cwd, *args):
    r = subprocess.run([TFREQ, "--color", "never", *args], cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (DIST / "index.html").is_file():
            raise AssertionError("no %s/index.html: run web/build.sh first" % DIST)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        for name, path in FILES.items():
            shutil.copyfile(path, cls.dir / name)
        (cls.dir / "html_names.txt").write_text(HTML_NAMES)
        handler = functools.partial(Quiet, directory=str(DIST))
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d/" % cls.server.server_address[1]
        cls.pw = sync_playwright().start()
        cls.browser = cls.pw.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        cls.context = cls.browser.new_context(viewport={"width": 1100, "height": 900})
        cls.requests = []
        cls.context.on("request", lambda r: cls.requests.append(r.url))
        cls.page = cls.context.new_page()
        cls.errors = []
        cls.page.on("pageerror", lambda e: cls.errors.append(str(e)))
        cls.page.on("console", lambda m: m.type == "error" and cls.errors.append(m.text))
        cls.page.goto(cls.url)
        cls.page.wait_for_selector("body[data-ready='1']", timeout=60000)
        cls.loading = list(cls.requests)
        cls.requests.clear()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        cls.pw.stop()
        cls.server.shutdown()
        cls.tmp.cleanup()

    def choose(self, selector, *names):
        self.page.set_input_files(selector, [str(self.dir / n) for n in names])

    def inspected(self, *names):
        """The text of each file's section once the page has inspected them."""
        self.page.evaluate("document.getElementById('inspect-out').replaceChildren()")
        self.choose("#files", *names)
        self.page.wait_for_function(
            "n => document.querySelectorAll('#inspect-out section.file').length === n", arg=len(names))
        sections = self.page.query_selector_all("#inspect-out section.file")
        out = {}
        for s in sections:
            pre = s.query_selector("pre")
            err = s.query_selector(".error")
            out[s.query_selector("h3").text_content()] = (
                pre.text_content() if pre else None, err.text_content() if err else None)
        return out

    def test_1_loading_fetched_only_the_page_own_files(self):
        own = {self.url + f for f in ["", "style.css", "app.js", "tfreq_web.js", "wasm-bytes.js", "worker.js",
                                       "favicon.svg"]}
        self.assertEqual(set(self.loading) - own, set(), self.loading)
        self.assertIn(self.url + "wasm-bytes.js", self.loading)
        csp = self.page.get_attribute("meta[http-equiv='Content-Security-Policy']", "content")
        self.assertIn("connect-src 'none'", csp)
        self.assertIn("never leave this browser", self.page.text_content("#private"))

    def test_2_inspect_says_what_the_command_line_says(self):
        names = ["faq_warmup.bin", "faq_prod_batch4.bin", "warmup_predict.tfrecord",
                 "prediction_logs-00000-of-00002.gz", "names.bin"]
        got = self.inspected(*names)
        self.assertEqual(sorted(got), sorted(names))
        for n in names:
            code, out, err = cli(self.dir, "inspect", n)
            self.assertIn(code, (0, 1), err)
            text, error = got[n]
            self.assertIsNone(error, n)
            self.assertEqual(text.rstrip("\n"), out.rstrip("\n"), n)
        # The feeds' table of the faq warm-up: the feeds JSON output names.
        code, out, _ = cli(self.dir, "inspect", "--format", "json", "faq_warmup.bin")
        want = [(i["name"], i["dtype"]) for i in json.loads(out)["inputs"]]
        rows = self.page.eval_on_selector_all(
            "#inspect-out section.file:first-child table tbody tr",
            "rs => rs.map(r => [r.cells[0].textContent, r.cells[1].textContent])")
        self.assertEqual([tuple(r) for r in rows], want)

    def test_3_names_holding_html_are_text(self):
        got = self.inspected("html_names.txt")
        text, error = got["html_names.txt"]
        self.assertIsNone(error)
        _, out, _ = cli(self.dir, "inspect", "html_names.txt")
        self.assertEqual(text.rstrip("\n"), out.rstrip("\n"))
        self.assertIn('<img src=x onerror="window.pwned=1">', text)
        self.assertIsNone(self.page.evaluate("window.pwned"))
        found = self.page.eval_on_selector_all("#inspect-out img, #inspect-out script, #inspect-out b", "e => e.length")
        self.assertEqual(found, 0)
        cells = self.page.eval_on_selector_all("#inspect-out td", "ts => ts.map(t => t.textContent)")
        self.assertIn('<img src=x onerror="window.pwned=1">', cells)

    def test_4_diff_and_check_of_the_faq_pair(self):
        self.choose("#warmup", "faq_warmup.bin")
        self.choose("#model", "faq.metadata.json")
        self.choose("#production", "faq_prod.bin", "faq_prod_batch4.bin")
        self.page.wait_for_selector("#diff-out pre")
        self.page.wait_for_selector("#check-out pre")
        code, out, err = cli(self.dir, "diff", "faq_warmup.bin", "faq_prod.bin", "faq_prod_batch4.bin",
                             "--model", "faq.metadata.json")
        self.assertEqual(code, 1, err)
        self.assertEqual(self.page.text_content("#diff-out pre").rstrip("\n"), out.rstrip("\n"))
        _, js, _ = cli(self.dir, "diff", "faq_warmup.bin", "faq_prod.bin", "faq_prod_batch4.bin",
                       "--model", "faq.metadata.json", "--format", "json")
        report = json.loads(js)
        self.assertEqual(self.page.text_content("#diff-out-verdict"), report["verdict"])
        self.assertEqual(report["verdict"], "new-executor")
        codes = self.page.eval_on_selector_all("#diff-out tbody tr", "rs => rs.map(r => [...r.cells[2].querySelectorAll('code')].map(c => c.textContent))")
        self.assertEqual(codes, [[f["code"] for f in q["findings"]] for q in report["requests"]])
        self.assertIn(["FETCH_ADDED", "BATCH_SIZE_CHANGED"], codes)
        code, out, err = cli(self.dir, "check", "faq_prod.bin", "faq_prod_batch4.bin", "--model", "faq.metadata.json")
        self.assertIn(code, (0, 1), err)
        self.assertEqual(self.page.text_content("#check-out pre").rstrip("\n"), out.rstrip("\n"))

        png = self.page.screenshot(full_page=True)
        self.assertEqual(problems(png), [])
        keep = os.environ.get("TFREQ_WEB_SCREENSHOT")
        if keep:
            # docs/web.md's picture: the privacy note and the diff of the faq pair.
            self.page.evaluate("document.getElementById('inspect-section').hidden = true")
            Path(keep).write_bytes(self.page.screenshot(clip={"x": 0, "y": 0, "width": 1100, "height": 1000}))
            self.page.evaluate("document.getElementById('inspect-section').hidden = false")
        # The same check fails on the page without its verdict.
        self.page.evaluate("document.getElementById('diff-out').replaceChildren();"
                           "document.getElementById('check-out').replaceChildren()")
        found = problems(self.page.screenshot(full_page=True))
        self.assertTrue(any("verdict" in f for f in found), found)

    def test_5_keys_of_a_gzip_log_read_a_slice_at_a_time(self):
        self.choose("#log", "prediction_logs-00000-of-00002.gz")
        self.page.wait_for_function("() => document.getElementById('keys-done').textContent.startsWith('done')")
        code, out, err = cli(self.dir, "keys", "prediction_logs-00000-of-00002.gz")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.page.text_content("#keys-text").rstrip("\n"), out.rstrip("\n"))

    def test_5b_keys_of_a_log_over_several_slices(self):
        # A plain log of about 9 MiB: the worker's 4 MiB slices cut records at two places.
        one = FILES["warmup_predict.tfrecord"].read_bytes()
        (self.dir / "big.tfrecord").write_bytes(one * ((9 << 20) // len(one) + 1))
        self.page.evaluate("document.getElementById('keys-done').textContent = ''")
        self.choose("#log", "big.tfrecord")
        self.page.wait_for_function(
            "() => document.getElementById('keys-done').textContent.startsWith('done')", timeout=120000)
        code, out, err = cli(self.dir, "keys", "big.tfrecord")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.page.text_content("#keys-text").rstrip("\n"), out.rstrip("\n"))

    def test_6_no_request_after_loading(self):
        # Runs last (unittest orders by name): after every file chosen above.
        self.assertEqual(self.requests, [])
        self.assertEqual(self.errors, [])


if __name__ == "__main__":
    unittest.main()
