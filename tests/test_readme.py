"""The README's Python snippets run as written, from the project's root."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)


@pytest.mark.embedder
@pytest.mark.parametrize("snippet", SNIPPETS[:2], ids=["trace-value", "evaluations"])
def test_readme_snippet_runs(snippet: str) -> None:
    """Each of the README's first two snippets runs in a fresh interpreter without an error."""
    result = subprocess.run(
        [sys.executable, "-c", snippet], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
