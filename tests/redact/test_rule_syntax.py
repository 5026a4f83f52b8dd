"""The rule files' patterns use only syntax that every ``regex`` pyproject.toml allows reads:
gitleaks writes Go's ``\\z`` (end of text), which regex reads only from 2026.2.19 (with the
declared 2024.4.16 every redaction, score and eval failed); ``\\Z`` means the same everywhere."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib.resources import files
from typing import Any

import regex

# An escape a pattern writes: ``\z``, not ``\\z`` (a backslash, then "z").
GO_END_OF_TEXT = regex.compile(r"(?<!\\)(?:\\\\)*\\z")


def patterns(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Each pattern of a rule file, with the rule (or allowlist) it belongs to."""
    for pattern in data.get("allowlist", {}).get("regexes", []):
        yield "allowlist", pattern
    for rule in data.get("rules", []):
        if "regex" in rule:
            yield rule["id"], rule["regex"]
        for allowlist in rule.get("allowlists", []):
            for pattern in allowlist.get("regexes", []):
                yield f"{rule['id']} allowlist", pattern


def test_no_rule_pattern_uses_go_s_end_of_text_escape() -> None:
    """``\\z`` is written ``\\Z``, so regex releases before 2026.2.19 compile every rule."""
    data = files("knowledgepulse.redact") / "data"
    found = [
        (name, where)
        for name in ("gitleaks_rules.toml", "more_rules.toml")
        for where, pattern in patterns(tomllib.loads((data / name).read_text("utf-8")))
        if GO_END_OF_TEXT.search(pattern)
    ]
    assert found == []


def test_the_scan_finds_the_go_escape() -> None:
    """The check sees ``\\z`` at a pattern's end and in a group, not after an escaped backslash."""
    assert GO_END_OF_TEXT.search(r"(?:[^\w-]|\z)")
    assert GO_END_OF_TEXT.search(r"abc\z")
    assert not GO_END_OF_TEXT.search(r"abc\\z")
    assert not GO_END_OF_TEXT.search(r"abc\Z")
