"""The evaluation HTML report in headless Chromium: it renders, logs nothing, shows the failures."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from knowledgepulse.evals.compare import compare_runs
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.reports.evals_html import to_html
from tests.evals.builders import make_case, op
from tests.reports.test_evals_html import PAGES, SUITE, build_run


def _browser() -> str | None:
    return next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )


needs_browser = pytest.mark.skipif(
    _browser() is None, reason="no chromium on PATH (CI installs it)"
)


def render(path: Path, *flags: str) -> tuple[str, list[str]]:
    """The DOM Chromium builds from the page, and every console message it logged."""
    browser = _browser()
    assert browser is not None
    result = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            *flags,
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    # Script errors and refused loads (the page's security policy) are console messages.
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result.stdout, console


@needs_browser
def test_the_report_renders_with_no_console_message_and_shows_the_failures(
    tmp_path: Path,
) -> None:
    """With a baseline comparison: the DOM has every failing case; the console stays silent."""
    run = build_run(hostile_id="<img src=x onerror=alert(1)>")
    rename = [op("update", "b1", content="Add to Basket")]
    base = run_suite(SUITE, [make_case(PAGES, actual=rename, expected=rename, case_id="slow")])
    path = tmp_path / "report.html"
    path.write_text(to_html(run, compare_runs(base, run)), encoding="utf-8")
    dom, console = render(path)
    assert console == []
    assert "Failing cases (3)" in dom
    for anchor in ('id="case-1"', 'id="case-2"', 'id="case-3"'):
        assert anchor in dom
    assert "&lt;img src=x onerror=alert(1)&gt;" in dom
    assert "<img" not in dom
    assert "Comparison with the baseline" in dom


@needs_browser
def test_the_console_check_sees_a_script_error(tmp_path: Path) -> None:
    """The check above can fail: a page with a broken script logs an uncaught error."""
    path = tmp_path / "broken.html"
    path.write_text("<!DOCTYPE html><p>x</p><script>not_defined()</script>", encoding="utf-8")
    _, console = render(path)
    assert any("Uncaught ReferenceError" in line for line in console)


@needs_browser
def test_long_unbroken_answers_and_ids_wrap_within_a_narrow_window(tmp_path: Path) -> None:
    """A 3,000-character token in an answer and a 300-character id scroll nothing sideways."""
    token = [op("update", "b1", content="X" * 3000)]
    rename = [op("update", "b1", content="Add to Basket")]
    case = make_case(PAGES, actual=token, expected=rename, case_id="Y" * 300)
    page = to_html(run_suite(SUITE, [case]))
    # The page's policy refuses scripts; this copy drops it to measure its own width.
    page = re.sub(r"<meta http-equiv='Content-Security-Policy'[^>]*>", "", page)
    root = "document.documentElement"
    measure = f"document.body.dataset.over = {root}.scrollWidth - {root}.clientWidth"
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", f"<script>{measure}</script></body>"), "utf-8")
    dom, _ = render(path, "--window-size=800,600")
    over = re.search(r"<body data-over=\"(-?\d+)\"", dom)
    assert over is not None  # the script ran
    assert int(over.group(1)) == 0  # pixels the page is wider than the window
