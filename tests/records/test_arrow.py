"""Arrow IPC files and Hugging Face ``save_to_disk`` folders as records, read with pyarrow alone.

``examples/datasets/openai_chat_hf/`` is ``openai_chat.jsonl`` saved by ``datasets``
(``examples/datasets/make_hf_dataset.py``): its messages are JSON text (``arrow.json``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyarrow import ipc

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.arrow import batch_rows
from knowledgepulse.records.readers import STDIN_NAME, Source, read_records, read_stream
from tests.paths import REPO

EXAMPLES = REPO / "examples" / "datasets"
FOLDER = EXAMPLES / "openai_chat_hf"
ARROW = FOLDER / "data-00000-of-00001.arrow"
JSONL_ROWS = [
    json.loads(line) for line in (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()
]


def values(path: Path, **kwargs: Any) -> list[Any]:
    """The values of a file's records, which must all be records."""
    read = list(read_records(path, **kwargs))
    assert all(isinstance(record, Record) for record in read), read
    return [record.value for record in read if isinstance(record, Record)]


def write_stream(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Rows as an Arrow IPC stream, as ``datasets`` writes its data files."""
    table = pa.Table.from_pylist(rows)
    with ipc.new_stream(path, table.schema) as writer:
        writer.write_table(table)
    return path


def saved_folder(folder: Path, shards: list[list[dict[str, Any]]]) -> Path:
    """A ``save_to_disk``-shaped folder: its shards, listed in ``state.json`` in order."""
    folder.mkdir()
    names = [f"data-{n:05}-of-{len(shards):05}.arrow" for n in range(len(shards))]
    for name, rows in zip(names, shards, strict=True):
        write_stream(folder / name, rows)
    state = {"_data_files": [{"filename": name} for name in names], "_split": "train"}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")
    return folder


def test_a_saved_dataset_folder_reads_as_the_rows_it_was_made_from() -> None:
    """The example folder's rows are the JSON Lines rows, messages parsed from their JSON text."""
    assert values(FOLDER) == JSONL_ROWS


def test_its_arrow_file_alone_reads_as_the_same_rows() -> None:
    """The folder's ``.arrow`` file (an IPC stream) is rows, not "not UTF-8 text"."""
    assert values(ARROW) == JSONL_ROWS


def test_a_folders_rows_are_located_at_their_row_of_the_dataset(tmp_path: Path) -> None:
    """Shards are read in ``state.json``'s order, rows numbered through them (``FOLDER:ROW``)."""
    shards = [[{"n": 0}, {"n": 1}], [{"n": 2}]]
    folder = saved_folder(tmp_path / "ds", shards)
    read = list(read_records(folder))
    assert [record.value for record in read if isinstance(record, Record)] == [
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]
    assert [str(record.location) for record in read] == [f"{folder}:{n}" for n in (1, 2, 3)]


def test_a_dataset_dict_folder_names_the_split_folders_to_pass(tmp_path: Path) -> None:
    """A ``DatasetDict``'s folder is refused with its splits and the path of one."""
    root = tmp_path / "dd"
    root.mkdir()
    (root / "dataset_dict.json").write_text('{"splits": ["test", "train"]}')
    saved_folder(root / "train", [[{"n": 0}]])
    saved_folder(root / "test", [[{"n": 0}]])
    with pytest.raises(InputFileError, match=r"splits: test, train\); pass one split's folder"):
        list(read_records(root))


def test_another_folder_is_still_refused_as_a_directory(tmp_path: Path) -> None:
    """A folder without ``state.json`` says to pass the files inside it."""
    with pytest.raises(InputFileError, match="is a directory; pass the files inside it"):
        list(read_records(tmp_path))


def test_a_state_file_naming_a_missing_shard_says_which(tmp_path: Path) -> None:
    """``state.json`` listing a file the folder lacks names that file."""
    folder = saved_folder(tmp_path / "ds", [[{"n": 0}]])
    (folder / "data-00000-of-00001.arrow").unlink()
    with pytest.raises(InputFileError, match=r"lists data files the folder lacks: .*data-00000"):
        list(read_records(folder))


@pytest.mark.parametrize("listed", ["../secret.arrow", "{outside}", "link.arrow", "loop.arrow"])
def test_a_state_file_naming_a_file_outside_the_folder_is_refused(
    tmp_path: Path, listed: str
) -> None:
    """A shard named ``../x``, by absolute path or through a link out is refused, not read."""
    folder = saved_folder(tmp_path / "ds", [[{"n": 0}]])
    secret = write_stream(tmp_path / "secret.arrow", [{"n": "secret"}])
    (folder / "link.arrow").symlink_to(secret)
    (folder / "loop.arrow").symlink_to(folder / "loop.arrow")
    listed = listed.format(outside=secret)
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": listed}]}))
    refusal = "the folder lacks" if listed == "loop.arrow" else "outside the folder"
    with pytest.raises(InputFileError, match=f"lists data files {refusal}: "):
        list(read_records(folder))


def test_an_arrow_ipc_file_reads_like_a_stream(tmp_path: Path) -> None:
    """The IPC file format (``ARROW1``, Feather v2) is read too, by content whatever the name."""
    table = pa.Table.from_pylist([{"n": 1}, {"n": 2}])
    path = tmp_path / "rows.bin"
    with ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
    assert values(path) == [{"n": 1}, {"n": 2}]


def test_an_arrow_stream_on_standard_input_is_read() -> None:
    """Piped Arrow bytes are known by their magic and read whole."""
    opened = Source(STDIN_NAME, io.BufferedReader(io.BytesIO(ARROW.read_bytes())))
    read = list(read_stream(opened, ("json", "jsonl", "parquet", "arrow")))
    assert [record.value for record in read if isinstance(record, Record)] == JSONL_ROWS


def test_a_broken_arrow_file_is_one_problem(tmp_path: Path) -> None:
    """Garbage after the stream marker is a located problem, not an exception."""
    path = tmp_path / "d.arrow"
    path.write_bytes(b"\xff\xff\xff\xffnot really arrow")
    (problem,) = list(read_records(path))
    assert isinstance(problem, Problem)
    assert "not a readable Arrow file" in problem.message


def test_arrow_where_only_json_is_accepted_says_so() -> None:
    """An Arrow file given where only JSON is read is refused by its format, not as bad text."""
    with pytest.raises(InputFileError, match="ARROW input is not accepted here"):
        list(read_records(ARROW, formats=("json", "jsonl")))


def test_json_text_columns_are_parsed_inside_lists_and_structs() -> None:
    """``arrow.json`` values become the JSON they hold at any depth; other strings stay text."""
    json_type = pa.json_()
    nested = [("x", json_type), ("y", pa.int64())]
    columns = {
        "plain": (['{"a": 1}', None], pa.string()),
        "whole": (['{"a": 1}', None], json_type),
        "listed": ([["[1, 2]", "null"], None], pa.list_(json_type)),
        "nested": ([{"x": '"text"', "y": 3}, None], pa.struct(nested)),
        "broken": (["{not json", "2"], json_type),
    }
    batch = pa.RecordBatch.from_pydict(
        {
            name: pa.array(data, type=_storage(kind)).cast(kind)
            for name, (data, kind) in columns.items()
        }
    )
    assert list(batch_rows(batch)) == [
        {"plain": '{"a": 1}', "whole": {"a": 1}, "listed": [[1, 2], None],
         "nested": {"x": "text", "y": 3}, "broken": "{not json"},
        {"plain": None, "whole": None, "listed": None, "nested": None, "broken": 2},
    ]  # fmt: skip


def _storage(kind: Any) -> Any:
    """The type with each ``arrow.json`` in it as its storage, strings (pyarrow builds those)."""
    if isinstance(kind, pa.BaseExtensionType):
        return kind.storage_type
    if pa.types.is_list(kind):
        return pa.list_(_storage(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([(field.name, _storage(field.type)) for field in kind])
    return kind
