"""docs/python-api.md works as written: each Python block, run in turn from a copy of the
repository's examples, prints the output block that follows it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "python-api.md"
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", PAGE.read_text("utf-8"), re.S | re.M)
EXAMPLES = [
    (code, BLOCKS[n + 1][1] if n + 1 < len(BLOCKS) and BLOCKS[n + 1][0] == "text" else None)
    for n, (kind, code) in enumerate(BLOCKS)
    if kind == "python"
]


def test_the_page_shows_the_output_of_each_example() -> None:
    """Every section's example is followed by what it prints (no example without its output)."""
    assert len(EXAMPLES) >= 5
    assert all(shown is not None for _, shown in EXAMPLES)


@pytest.mark.embedder
def test_each_example_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The blocks run in order in one namespace, as in a notebook, from a copy of examples/."""
    shutil.copytree(ROOT / "examples" / "datasets", tmp_path / "examples" / "datasets")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for code, shown in EXAMPLES:
        exec(compile(code, str(PAGE), "exec"), namespace)
        assert capsys.readouterr().out == shown, code
