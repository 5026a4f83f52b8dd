"""The planted secrets of the redaction tests: one example of every secret rule.

gitleaks' first true positive of each of its rules (``data/gitleaks_tps.jsonl``), then every one
of ours (``data/secret_examples.jsonl``: the rules gitleaks' examples do not cover, and the
shapes issue 28 found missed). Each is ``{"rule", "sample", "secret", ...}``: ``sample`` holds
``secret``, which must never come out with redaction on.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"


def lines(name: str) -> list[dict[str, str]]:
    """The rows of one of ``data/``'s JSON Lines files."""
    with (DATA / name).open(encoding="utf-8") as rows:
        return [json.loads(row) for row in rows]


def secret_examples() -> list[dict[str, str]]:
    """gitleaks' first example of each of its rules, then every one of ours."""
    first: dict[str, dict[str, str]] = {}
    for row in lines("gitleaks_tps.jsonl"):
        first.setdefault(row["rule"], row)
    return [*first.values(), *lines("secret_examples.jsonl")]
