"""The evaluation HTML report in a real browser: hostile content inert, 5,000 cases open, contrast.

    python bench/bench_html_browser.py          # needs chromium on PATH; 5,000 cases
    python bench/bench_html_browser.py 20000

Drives headless Chromium over the DevTools protocol (with websockets, which the integration
extras install) and prints, for a page of hostile cases
(``<script>``, ``"><img onerror>``, ``javascript:`` links, 100 KB and unbroken answers, emoji and
RTL, CRLF, NUL) and one of many cases: its size, the time to write and to load it, whether
anything ran or was fetched (a dialog, a console message, a refused load, a changed title, an
element the data made), whether it scrolls sideways at 800 px, whether a column header broke
mid-word, and the contrast of the pass and fail colours as the browser computed them (WCAG AA
asks 4.5:1 for text, 3:1 for what tells states apart). Asserts nothing; the tests parse the page
with html.parser and need no browser.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from itertools import count
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.builders import make_suite
from websockets.sync.client import connect

from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.reports.evals_html import to_html

HOSTILE = {
    "<script>document.title='RAN'</script>": "<script>document.title='RAN'</script>",
    '"><img src=x onerror="document.title=\'RAN\'">': "\"><img src=x onerror=alert('RAN')>",
    "javascript:alert(1)": "[x](javascript:alert(1)) <a href='javascript:alert(1)'>x</a>",
    "long-" + "A" * 3000: "B" * 20_000,
    "big": "x" * 100_000,
    "emoji-👨‍👩‍👧‍👦-rtl-مرحبا-שלום": "مرحبا 👍🏽 שלום \u202eevil.exe",
    "crlf\r\nid": "line one\r\nline two\r\n",
    "nul\x00id": "before\x00after",
}
# What the page reports of itself once loaded (DevTools evaluation is not bound by its CSP).
PROBE = """(() => {
  const colour = (sel, prop) => { const e = document.querySelector(sel);
    return e ? getComputedStyle(e)[prop] : null; };
  const lines = (node) => { const range = document.createRange(); range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; };
  const broken = [...document.querySelectorAll("th")].filter(th =>
    !/[\\s-]/.test(th.textContent.trim()) && lines(th) > 1);
  return {
    title: document.title,
    made: document.querySelectorAll("img,script,iframe,object,embed,[onerror],[onload]").length,
    links: [...document.querySelectorAll("a[href]")].filter(a =>
      !a.getAttribute("href").startsWith("#")).length,
    sideways: document.documentElement.scrollWidth - window.innerWidth,
    headersBroken: broken.map(th => th.textContent),
    failingTarget: !!document.getElementById("failing"),
    rowHeaders: document.querySelectorAll("th[scope=row]").length,
    unscoped: document.querySelectorAll("th:not([scope])").length,
    colours: {
      pass: colour(".ok", "color"), fail: colour(".bad", "color"),
      passCell: colour("td.p", "backgroundColor"), failCell: colour("td.f", "backgroundColor"),
      body: colour("body", "color"),
    },
  };
})()"""


def hostile_run() -> EvalRun:
    """One failing case per hostile id, its answer hostile too."""
    cases = [
        {"id": case_id, "actual": answer, "expected": {"contentPatterns": ["never"]}}
        for case_id, answer in HOSTILE.items()
    ]
    return run_suite(make_suite({"type": "content-quality"}, name="<b>suite</b>"), cases)


def many_run(cases: int) -> EvalRun:
    """``cases`` cases, one in ten failing."""
    rows = [
        {
            "id": f"case-{i:05d}",
            "actual": "hello world " * 5 + ("no" if i % 10 == 0 else "yes"),
            "expected": {"contentPatterns": ["yes"]},
        }
        for i in range(cases)
    ]
    return run_suite(make_suite({"type": "content-quality"}), rows)


class Browser:
    """Headless Chromium and one page of it, driven over the DevTools protocol."""

    def __init__(self, binary: str, profile: Path) -> None:
        self._process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=800,1000",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        while not port_file.exists():
            time.sleep(0.05)
        time.sleep(0.2)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as answer:
            targets = json.loads(answer.read())
        page = next(t for t in targets if t["type"] == "page")
        self._socket = connect(page["webSocketDebuggerUrl"], max_size=None)
        self._ids = count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer, keeping the events that come meanwhile."""
        ident = next(self._ids)
        self._socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._socket.recv())
            if message.get("id") == ident:
                return dict(message.get("result", {}))
            self.events.append(message)

    def load(self, path: Path) -> float:
        """Open the page; the seconds until its load event."""
        self.events.clear()
        start = time.perf_counter()
        self.call("Page.navigate", url=path.as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(json.loads(self._socket.recv()))
        return time.perf_counter() - start

    def close(self) -> None:
        """End the browser."""
        self._socket.close()
        self._process.terminate()
        self._process.wait(timeout=10)


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(first: str, second: str) -> float:
    """The WCAG contrast ratio of two computed ``rgb(...)`` colours."""
    high, low = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def report(browser: Browser, name: str, run: EvalRun, folder: Path) -> None:
    """Write the run's page, load it, and print what the browser saw."""
    start = time.perf_counter()
    page = to_html(run)
    wrote = time.perf_counter() - start
    path = folder / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    took = browser.load(path)
    seen = browser.call("Runtime.evaluate", expression=PROBE, returnByValue=True)["result"]["value"]
    noisy = [
        e["method"]
        for e in browser.events
        if e.get("method")
        in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")
        or e.get("method", "").startswith("Page.javascriptDialog")
    ]
    size = path.stat().st_size
    print(f"{name}: {len(run.cases):,} cases, {size / 1e6:.2f} MB, written in {wrote:.2f} s, ")
    print(f"  loaded in {took:.2f} s; title {seen['title']!r}; made by data {seen['made']}")
    print(f"  links out {seen['links']}; console/dialog {noisy}; sideways {seen['sideways']} px")
    print(f"  headers broken mid-word {seen['headersBroken']}; unscoped th {seen['unscoped']}")
    print(f"  row headers {seen['rowHeaders']}; #failing target {seen['failingTarget']}")
    colours = seen["colours"]
    white = "rgb(255, 255, 255)"
    for label, colour in (("pass text", colours["pass"]), ("fail text", colours["fail"])):
        if colour:
            print(f"  {label} {colour} on white: {contrast(colour, white):.2f}:1")
    if colours["passCell"] and colours["failCell"]:
        cells = contrast(colours["passCell"], colours["failCell"])
        print(f"  pass cell vs fail cell background: {cells:.2f}:1")


def main() -> None:
    """Both pages, one browser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=int, nargs="?", default=5_000)
    args = parser.parse_args()
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        sys.exit("no chromium on PATH: apt-get install chromium")
    with tempfile.TemporaryDirectory() as folder:
        browser = Browser(binary, Path(folder) / "profile")
        try:
            report(browser, "hostile", hostile_run(), Path(folder))
            report(browser, "many", many_run(args.cases), Path(folder))
        finally:
            browser.close()


if __name__ == "__main__":
    main()
