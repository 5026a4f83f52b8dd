"""The licence files the wheel carries: the package ships Apache-2.0 material (the tokenizer and
the static table derived from all-MiniLM-L6-v2, THIRD_PARTY_NOTICES.md), and that licence asks
for its text to go with it; a link alone (as before) does not."""

from __future__ import annotations

import tomllib

from tests.paths import REPO

LICENCE_FILES: list[str] = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"][
    "license-files"
]


def test_every_licence_file_listed_exists() -> None:
    """A path in ``license-files`` that is missing would fail the build."""
    assert [name for name in LICENCE_FILES if not (REPO / name).is_file()] == []


def test_the_apache_licence_text_ships_with_the_apache_material() -> None:
    """The notices name the Apache License 2.0 for shipped files; its text is a licence file."""
    notices = (REPO / "THIRD_PARTY_NOTICES.md").read_text("utf-8")
    assert "src/knowledgepulse/novelty/data/tokenizer.json" in notices
    assert "Apache License 2.0" in notices
    texts = [(REPO / name).read_text("utf-8") for name in LICENCE_FILES]
    assert any(
        "Version 2.0, January 2004" in text and "TERMS AND CONDITIONS FOR USE" in text
        for text in texts
    )
