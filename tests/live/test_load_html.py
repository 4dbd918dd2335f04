#!/usr/bin/env python3
"""`tfreq load --html` rendered by a real browser: headless Chromium takes a screenshot of the
page of a live run, and the pixels are checked.

    TFREQ_LIVE_READY=/path/to/ready.json TFREQ_BROWSER="$(bash .ci/browser)" \\
        python3 -m unittest tests/live/test_load_html.py

What must be on the screen: the page's text, the two plots at their size (640 x 320, framed
by their 1 px #ccc border), in the first the latency-by-percentile line (#1f77b4) across the
plot and rising (a latency never falls as the percentile grows), in the second a point
(#d62728 at half opacity) for the calls of the run, across the plot. The same check must fail
on a copy of the page without its plots and on one whose curve is drawn upside down, so it
can fail. Standard library only (the screenshot is decoded here).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from png import png_rgb  # noqa: E402
from recording import tfreq  # noqa: E402

READY = json.loads(Path(os.environ["TFREQ_LIVE_READY"]).read_text())
BROWSER = os.environ["TFREQ_BROWSER"]
REPO = Path(__file__).resolve().parents[2]

# The plots' size and inner margin (cli/src/load.rs: W, H, MARGIN).
W, H, MARGIN = 640, 320, 56
BORDER = (204, 204, 204)  # svg{border:1px solid #ccc}
LINE = (31, 119, 180)  # .line{stroke:#1f77b4}, .dot{fill:#1f77b4}


def near(px, want, tol=12):
    return all(abs(p - w) <= tol for p, w in zip(px, want))


def reddish(px):
    # #d62728 at fill-opacity 0.5 over white is (235, 147, 148); overlapping points darker.
    r, g, b = px
    return r >= 150 and r - g >= 50 and r - b >= 50


def frames(rows):
    """The plots' frames as (top, left, bottom, right): rows holding a run of the border's
    colour W px or longer, paired top with bottom."""
    lines = []
    for y, row in enumerate(rows):
        run, start = 0, 0
        for x, px in enumerate(row):
            if px == BORDER:
                if run == 0:
                    start = x
                run += 1
                if run >= W:
                    lines.append((y, start, start + run - 1))
                    break
            else:
                run = 0
    # A frame's top and bottom edges are H + 1 rows apart (content box H, 1 px border).
    out, used = [], set()
    for y, x0, _ in lines:
        if y in used:
            continue
        for y2, x2, _ in lines:
            if y2 == y + H + 1 and x2 == x0:
                out.append((y, x0, y2, x0 + W + 1))
                used.add(y2)
                break
    return out


def problems(png):
    """What is wrong with a screenshot of a `load --html` page; empty when it rendered."""
    _, _, rows = png_rgb(png)
    found = []
    plots = frames(rows)
    if len(plots) != 2:
        return ["%d plots framed at %d x %d, not 2: %r" % (len(plots), W, H, plots)]
    (t1, l1, b1, r1), (t2, l2, b2, r2) = sorted(plots)
    dark = sum(1 for row in rows[:t1] for px in row if max(px) < 100)
    if dark < 2000:
        found.append("only %d dark pixels of text above the first plot" % dark)
    # The first plot: its line, column by column (the topmost line pixel of each column).
    top_of = {}
    for y in range(t1 + 1, b1):
        for x in range(l1 + 1, r1):
            if near(rows[y][x], LINE) and x not in top_of:
                top_of[x] = y
    inner = W - 2 * MARGIN
    if len(top_of) < inner * 0.9:
        found.append("the percentile line covers %d columns of the plot's %d" % (len(top_of), inner))
    else:
        xs = sorted(top_of)
        # Rising: a column's top never lower on the screen than a column 6 px left of it
        # by more than the line's width and its dots' radius.
        falls = [(x, top_of[x]) for x in xs if x - 6 in top_of and top_of[x] > top_of[x - 6] + 4]
        if falls:
            found.append("the percentile line falls at %r" % falls[:5])
        if top_of[xs[-1]] >= top_of[xs[0]]:
            found.append("the percentile line ends no higher than it starts (%d, %d)"
                         % (top_of[xs[0]], top_of[xs[-1]]))
    # The second plot: the calls' points, across it.
    pts = [x for y in range(t2 + 1, b2) for x in range(l2 + 1, r2) if reddish(rows[y][x])]
    if len(pts) < 100:
        found.append("only %d pixels of points in the plot over the run" % len(pts))
    elif max(pts) - min(pts) < inner * 0.9:
        found.append("the points span %d px of the plot's %d" % (max(pts) - min(pts), inner))
    return found


def screenshot(page, out):
    r = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--window-size=1000,2000",
         "--screenshot=%s" % out, page.as_uri()],
        capture_output=True, timeout=120)
    if r.returncode != 0 or not out.exists():
        raise AssertionError("the browser failed (exit %d): %s"
                             % (r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return out.read_bytes()


class LoadHtmlRenders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = Path(cls.dir.name)
        cls.page = d / "report.html"
        url = "http://%s:%d/api/predict/faq" % (READY["host"], READY["http"])
        req = REPO / "tests" / "data" / "eas" / "faq_prod.bin"
        os.environ["TFREQ_TOKEN"] = READY["token"]
        code, out, err = tfreq("load", str(req), "--to", url, "-n", "400", "-c", "2",
                               "--format", "json", "--html", str(cls.page))
        if code != 0:
            raise AssertionError("tfreq load exited %d: %s%s" % (code, err, out[-3000:]))
        cls.report = json.loads(out)
        cls.html = cls.page.read_text()

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_the_page_renders_its_text_and_both_plots(self):
        self.assertEqual(self.report["answers"], 400, self.report)
        png = screenshot(self.page, Path(self.dir.name) / "report.png")
        self.assertEqual(problems(png), [])

    def test_the_check_fails_on_a_page_without_plots(self):
        page = Path(self.dir.name) / "no-plots.html"
        page.write_text(re.sub(r"<svg.*?</svg>", "", self.html, flags=re.S))
        found = problems(screenshot(page, Path(self.dir.name) / "no-plots.png"))
        self.assertTrue(found and "plots framed" in found[0], found)

    def test_the_check_fails_on_a_curve_drawn_upside_down(self):
        def flip(m):
            pts = " ".join("%s,%g" % (x, H - float(y))
                           for x, y in (p.split(",") for p in m.group(1).split()))
            return 'class="line" points="%s"' % pts
        flipped = re.sub(r'class="line" points="([^"]*)"', flip, self.html)
        self.assertNotEqual(flipped, self.html)
        page = Path(self.dir.name) / "flipped.html"
        page.write_text(flipped)
        found = problems(screenshot(page, Path(self.dir.name) / "flipped.png"))
        self.assertTrue(any("falls" in f or "no higher" in f for f in found), found)


if __name__ == "__main__":
    unittest.main()
