"""A folder of many small files: what kp does per file stays small, and means what it did."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records import readers
from knowledgepulse.records.readers import (
    check_openable,
    input_files,
    read_records,
    reads_once,
)

FILES = 20


def sessions(folder: Path) -> None:
    for number in range(FILES):
        session = folder / f"project{number % 3}" / f"{number:04d}.jsonl"
        session.parent.mkdir(parents=True, exist_ok=True)
        session.write_text(f'{{"type": "user", "n": {number}}}\n{{"type": "assistant"}}\n')


def test_a_folder_read_stats_each_file_three_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Expanding the folder, checking each file opens and reading it: three stats a file (was 5)."""
    sessions(tmp_path)
    calls: list[object] = []
    real_stat = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if str(path).endswith(".jsonl"):  # a session file's, not a folder's
            calls.append(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    files = input_files([str(tmp_path)])
    for path in files:
        check_openable(path)
    records = [record for path in files for record in read_records(path)]
    assert len(records) == 2 * FILES
    assert len(calls) == 3 * FILES


def test_a_json_lines_files_whole_first_line_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sniffing a first line that is a whole value leaves the slower json module unused."""
    sessions(tmp_path)
    parsed: list[object] = []
    monkeypatch.setattr(json, "loads", lambda *given, **_: parsed.append(given))
    assert len(list(read_records(tmp_path / "project0" / "0000.jsonl"))) == 2
    assert parsed == []


def continues_by_json_alone(line: bytes) -> bool:
    """The sniff as it was, by the json module alone: the definition the faster one keeps."""
    stripped = line.strip()
    if stripped[:1] not in (b"{", b"["):
        return False
    try:
        json.loads(stripped)
    except RecursionError:
        return False
    except ValueError as error:
        return isinstance(error, json.JSONDecodeError) and error.pos >= len(error.doc.rstrip())
    return False


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(values, st.integers(min_value=0), st.sampled_from([b"", b" ", b"x", b"}", b"\xff"]))
def test_the_first_line_sniff_is_the_json_modules(value: Any, cut: int, tail: bytes) -> None:
    """Whether a line opens a value going on past it: as the json module alone said it."""
    text = json.dumps(value).encode()
    line = text[: cut % (len(text) + 1)] + tail
    assert readers._continues(line) == continues_by_json_alone(line)


def reads_once_by_pathlib(path: Path) -> bool:
    """Whether a path is read once, as pathlib's three stats said it."""
    return path.exists() and not (path.is_file() or path.is_dir())


def test_what_is_read_once_is_as_pathlib_said(tmp_path: Path) -> None:
    """A pipe is read once; a file, a folder, a missing or dangling name, a loop are not."""
    (tmp_path / "file.jsonl").write_text("{}\n")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    names = ["file.jsonl", "folder", "pipe", "dangling", "loop", "missing", "file.jsonl/under"]
    for name in names:
        assert reads_once(tmp_path / name) == reads_once_by_pathlib(tmp_path / name), name
    assert reads_once(tmp_path / "pipe")
    assert not reads_once(f"{tmp_path}/nul\0name")
