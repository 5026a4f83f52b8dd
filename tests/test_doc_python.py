"""The Python blocks of docs/ run as a reader runs them: page by page, in order, in one namespace,
in a fresh process, in a folder beside the bundled examples, after the page's console blocks that
come before them (a baseline a page's ``kp eval`` wrote, say). A ``text`` block right after a
Python block is what it prints (spaces and line wrapping aside; ``...`` stands for text left out).

A block that cannot run here says why on the line before it, as a console block does:
``<!-- docs-test: not run: REASON -->``. python-api.md and python-api-curation.md have tests of
their own (tests/runs/test_python_api_page.py, tests/test_python_api_curation_page.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import REPO
from tests.test_doc_commands import BLOCK as CONSOLE
from tests.test_doc_commands import BUNDLED, shows, steps

TESTED_ELSEWHERE = {"python-api.md", "python-api-curation.md"}
FENCE = re.compile(r"^(?:<!-- docs-test: not run: (.+?) -->\n)?```(\w*)\n(.*?)^```", re.S | re.M)
# One process a page: what a block registers (a scorer, a source, an OTel provider) stays there.
CHILD = """
import contextlib, io, json, sys
from tests.test_doc_commands import run
steps, printed, code = json.loads(sys.stdin.read()), [], 0
for kind, body, where in steps:
    if kind == "kp":
        code, _ = run(body, code)
        continue
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(body, where, "exec"), globals())
    printed.append(out.getvalue())
sys.__stdout__.write("\\n" + json.dumps(printed))
"""


@dataclass
class Page:
    """A page's steps in order (a Python block, or a console block's ``kp`` command), and the
    output shown after each Python block (``None``: none shown)."""

    name: str
    steps: list[tuple[str, str, str]]
    shown: list[str | None]


def page(path: Path) -> Page:
    """The runnable blocks of one page; a console block counts when test_doc_commands runs it."""
    text = path.read_text("utf-8")
    fences = list(FENCE.finditer(text))
    found = Page(path.name, [], [])
    consoles = {match.start(2): match for match in CONSOLE.finditer(text) if not match.group(1)}
    for index, fence in enumerate(fences):
        console = consoles.get(fence.start(3))
        if fence.group(2) == "console" and console is not None:
            shown = steps(console.group(2))
            if any(step.shown for step in shown):
                found.steps += [("kp", step.command, "") for step in shown]
        elif fence.group(2) == "python" and not fence.group(1):
            line = text.count("\n", 0, fence.start(3)) + 1
            found.steps.append(("python", fence.group(3), f"{path.name}:{line}"))
            after = fences[index + 1] if index + 1 < len(fences) else None
            follows = after is not None and text[fence.end() : after.start()].strip() == ""
            text_after = follows and after is not None and after.group(2) == "text"
            found.shown.append(after.group(3) if text_after and after is not None else None)
    while found.steps and found.steps[-1][0] == "kp":  # nothing after them reads what they wrote
        found.steps.pop()
    return found


PAGES = [
    found
    for path in sorted((REPO / "docs").glob("*.md"))
    if path.name not in TESTED_ELSEWHERE
    for found in [page(path)]
    if any(kind == "python" for kind, _, _ in found.steps)
]


@pytest.mark.embedder
@pytest.mark.parametrize("found", PAGES, ids=[found.name for found in PAGES])
def test_a_pages_python_blocks_run_and_print_what_it_shows(found: Page, tmp_path: Path) -> None:
    """Each block runs without an error; the output a page shows after one is what it printed."""
    for name in BUNDLED:
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    env = {"PYTHONPATH": f"{REPO / 'src'}:{REPO}", "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "80"}
    child = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(found.steps),
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    printed = json.loads(child.stdout.rsplit("\n", 1)[1])
    blocks = [body for kind, body, _ in found.steps if kind == "python"]
    for code, shown, output in zip(blocks, found.shown, printed, strict=True):
        if shown is not None:
            assert shows(shown.splitlines(), output), (code, output)


def test_the_pages_found_are_those_with_python_to_run() -> None:
    """The parser finds the pages and skips the blocks marked not run, and the live hooks' ones."""
    names = {found.name for found in PAGES}
    assert {"scoring.md", "redaction.md", "datasets.md", "evals-baselines.md"} <= names
    assert "ray.md" not in names  # every block needs a cluster
    integrations = next(found for found in PAGES if found.name == "integrations.md")
    assert all("kp.integrations" not in body for _, body, _ in integrations.steps)
