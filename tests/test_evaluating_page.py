"""docs/evaluating.md's "Run a suite from Python" works as written: each Python block runs, in
order, on the bundled examples, and prints the output the page shows after it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any, get_type_hints

import pytest

ROOT = Path(__file__).parents[1]
PAGE = ROOT / "docs" / "evaluating.md"
SECTION = PAGE.read_text("utf-8").split("## Run a suite from Python\n", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", SECTION, re.S | re.M)


def test_every_python_block_runs_and_prints_what_the_page_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The blocks run in one namespace beside the examples (writing nothing); each output is as
    shown. Not from a copy: the task module is imported from one place per session."""
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    ran = 0
    for index, (kind, code) in enumerate(BLOCKS):
        if kind != "python":
            continue
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{PAGE.name} block {index}", "exec"), namespace)
        shown = BLOCKS[index + 1] if index + 1 < len(BLOCKS) else ("", "")
        assert shown[0] == "text", f"block {index} shows no output"
        assert printed.getvalue() == shown[1], f"block {index}:\n{code}"
        ran += 1
    assert ran == 5


def test_the_own_scorer_example_is_annotated_as_strict_typed_code_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page's scorer subclass types every parameter: pasted into a mypy --strict project it
    checks (an unannotated ``evaluate`` is "missing a type annotation"), and it still scores."""
    import knowledgepulse.evals
    from knowledgepulse.evals.models import ActualOutput

    own = PAGE.read_text("utf-8").split("## Your own scorer\n", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"^```python\n(.*?)^```", own, re.S | re.M)
    # Registered nowhere: the example's name must not leak into the other tests' registry.
    monkeypatch.setattr(knowledgepulse.evals, "register_scorer", lambda _name: lambda cls: cls)
    namespace: dict[str, Any] = {}
    exec(compile(code, f"{PAGE.name} own scorer", "exec"), namespace)
    scorer = namespace["WordCount"]
    assert set(get_type_hints(scorer.evaluate)) == {"actual", "expected", "pages", "return"}
    actual = ActualOutput.model_validate({"operations": [{"type": "create", "content": "a b"}]})
    assert scorer().evaluate(actual, None, ()).details == {"words": 2}
