"""A folder given as an input: the files in it that kp reads, at any depth, in path order."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.errors import InputFileError
from knowledgepulse.records.readers import STDIN, input_files
from tests.paths import REPO

HF_FOLDER = REPO / "examples" / "datasets" / "openai_chat_hf"


def touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}\n")


def test_a_folder_gives_its_trace_files_at_any_depth_in_path_order(tmp_path: Path) -> None:
    """Data files by suffix (through ``.gz``, ``.xz``, ``.bz2``, any case); YAML, text, other
    packings and dot-names left out."""
    touch(
        tmp_path,
        "c.jsonl",
        "a.json",
        "b/z.traj",
        "b/y.JSONL.gz",
        "b/w.json.XZ",
        "b/v.jsonl.bz2",
        "b/u.jsonl.zst",
        "b/deep/x.parquet",
        "config.yaml",
        "notes.txt",
        ".hidden.jsonl",
        ".git/objects.json",
        "b/run.ndjson",
    )
    found = input_files([str(tmp_path)])
    assert found == [
        str(tmp_path / name)
        for name in [
            "a.json",
            "b/deep/x.parquet",
            "b/run.ndjson",
            "b/v.jsonl.bz2",
            "b/w.json.XZ",
            "b/y.JSONL.gz",
            "b/z.traj",
            "c.jsonl",
        ]
    ]


def test_files_stdin_and_a_saved_dataset_stay_as_given(tmp_path: Path) -> None:
    """Only a plain folder is expanded; a ``Path`` gives ``Path``s, a name gives names."""
    touch(tmp_path, "t.jsonl")
    given: list[str | Path] = [
        STDIN,
        str(tmp_path / "t.jsonl"),
        str(HF_FOLDER),
        tmp_path / "x.json",
    ]
    assert input_files(given) == given
    assert input_files([tmp_path]) == [tmp_path / "t.jsonl"]


def test_a_saved_dataset_inside_a_folder_is_one_input(tmp_path: Path) -> None:
    """Its ``.arrow`` shards are not read one by one: the folder is read as its dataset."""
    shutil.copytree(HF_FOLDER, tmp_path / "ds")
    touch(tmp_path, "a.jsonl")
    assert input_files([tmp_path]) == [tmp_path / "a.jsonl", tmp_path / "ds"]


def test_a_folder_holding_nothing_to_read_says_which_files_are_read(tmp_path: Path) -> None:
    touch(tmp_path, "config.yaml", ".hidden/t.jsonl")
    with pytest.raises(InputFileError, match=r"holding no file kp reads \(any of \.json, "):
        input_files([tmp_path])


def test_a_link_back_up_the_tree_is_not_followed(tmp_path: Path) -> None:
    touch(tmp_path, "t.jsonl")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert input_files([tmp_path]) == [tmp_path / "t.jsonl"]


def test_a_folder_that_cannot_be_listed_is_an_error_not_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subfolder kp may not read (no permission) is named; its files are never dropped unsaid."""
    touch(tmp_path, "a/t.jsonl", "b/u.jsonl")
    listed = os.scandir

    def refusing(path: Any) -> Any:
        if Path(path).name == "b":  # as chmod 000 does to anyone but root
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return listed(path)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(InputFileError) as raised:
        input_files([tmp_path])
    assert str(raised.value).startswith(
        f"{tmp_path / 'b'}: is a folder that cannot be read (Permission denied)"
    )
