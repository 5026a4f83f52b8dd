"""Opening an input by name: what a missing one's message says."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import InputFileError
from knowledgepulse.records.readers import check_openable


@pytest.mark.parametrize(
    ("name", "hint"),
    [("traces/*.jsonl", "kp does not expand a pattern"), ("~/t.jsonl", "~ is your home only")],
)
def test_a_missing_name_a_shell_would_have_expanded_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, hint: str
) -> None:
    """A quoted glob or ~ that names no file says the shell expands it, unquoted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "a.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(InputFileError, match="no such file") as raised:
        check_openable(name)
    assert hint in str(raised.value)


def test_a_pattern_that_matches_nothing_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unquoted, an unmatched glob reaches kp as written: no "leave it unquoted", but the folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputFileError) as raised:
        check_openable("cases/*.jsonl")
    assert str(raised.value) == (
        f"cases/*.jsonl: the pattern matches no file, relative to the working directory "
        f"{tmp_path} (there is no folder cases); fix the pattern, or run kp from the folder it "
        "is relative to"
    )


def test_a_plainly_missing_name_says_only_that(tmp_path: Path) -> None:
    """A name with no pattern in it gets no hint about the shell."""
    with pytest.raises(InputFileError) as raised:
        check_openable(tmp_path / "missing.jsonl")
    assert str(raised.value) == f"{tmp_path / 'missing.jsonl'}: no such file"
