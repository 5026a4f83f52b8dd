"""docs/python-api-curation.md works as written: each Python block runs, in order, on the
bundled examples, and prints the output the page shows after it."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGE = ROOT / "docs" / "python-api-curation.md"
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", PAGE.read_text("utf-8"), re.S | re.M)


def examples() -> list[tuple[str, str | None]]:
    """Each Python block, and the text block right after it (what it prints), if there is one."""
    found = []
    for index, (kind, body) in enumerate(BLOCKS):
        if kind == "python":
            after = BLOCKS[index + 1] if index + 1 < len(BLOCKS) else ("", "")
            found.append((body, after[1] if after[0] == "text" else None))
    return found


def test_the_page_shows_the_calls_on_dicts_frames_datasets_and_groups() -> None:
    """The page covers what a curator reaches for: each call and input kind it promises."""
    code = "\n".join(body for body, _ in examples())
    for used in (
        "select(traces",
        "pd.read_json",
        "Dataset.from_pandas",
        "per_task=",
        "dedupe(",
        "split(",
    ):
        assert used in code
    assert "max_similarity=" in code
    assert 'write_to("best.parquet")' in code


def test_every_python_block_runs_and_prints_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blocks run in one namespace from a copy of the examples; each output is as shown."""
    pytest.importorskip("datasets")
    for folder in ("traces", "datasets"):
        shutil.copytree(ROOT / "examples" / folder, tmp_path / "examples" / folder)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for number, (code, shown) in enumerate(examples(), start=1):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{PAGE.name} block {number}", "exec"), namespace)
        if shown is not None:
            assert printed.getvalue() == shown, f"block {number}:\n{code}"
