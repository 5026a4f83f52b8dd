"""docs/python-api-curation.md works as written: each Python block runs, in order, on the
bundled examples, and prints the output the page shows after it."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Ran:
    """What each block printed, and the kind of value each name held after each block."""

    printed: list[str]
    kinds: list[dict[str, tuple[type, ...]]]


def kind(value: object) -> tuple[type, ...]:
    """A value's type and, for a result, its rows' type: ``select`` on a DataFrame and on a
    list of dicts give one class, typed by its rows (``SelectionResult[DataFrame]``...)."""
    rows = getattr(value, "rows", None)
    return (type(value),) if rows is None or callable(rows) else (type(value), type(rows))


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """The blocks run in one namespace, in order, from a copy of the examples."""
    pytest.importorskip("datasets")
    root = tmp_path_factory.mktemp("page")
    for folder in ("traces", "datasets"):
        shutil.copytree(ROOT / "examples" / folder, root / "examples" / folder)
    namespace: dict[str, object] = {}
    printed: list[str] = []
    kinds: list[dict[str, tuple[type, ...]]] = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(root)
        for number, (code, _) in enumerate(examples(), start=1):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{PAGE.name} block {number}", "exec"), namespace)
            printed.append(out.getvalue())
            kinds.append({name: kind(value) for name, value in namespace.items()})
    return Ran(printed, kinds)


def test_every_python_block_runs_and_prints_what_the_page_shows(ran: Ran) -> None:
    """Each block's output is the text block the page shows after it."""
    pairs = zip(examples(), ran.printed, strict=True)
    for number, ((code, shown), printed) in enumerate(pairs, start=1):
        if shown is not None:
            assert printed == shown, f"block {number}:\n{code}"


def test_each_name_holds_one_kind_of_value_through_the_page(ran: Ran) -> None:
    """The page pasted into one file type-checks: a name rebound to another type (a selection
    of dicts, then of a DataFrame) is refused by mypy --strict where the second is used."""
    first: dict[str, tuple[int, tuple[type, ...]]] = {}
    for number, kinds in enumerate(ran.kinds, start=1):
        for name, held in kinds.items():
            since, before = first.setdefault(name, (number, held))
            assert held == before, f"{name}: {before} in block {since}, {held} in block {number}"
