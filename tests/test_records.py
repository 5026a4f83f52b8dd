"""Reading JSON, JSON Lines and YAML records with their locations."""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import io
import json
import lzma
import re
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Problem, Record, readers
from knowledgepulse.records.json_values import MAX_NESTING
from knowledgepulse.records.readers import (
    BOM,
    LIST_DEPTH,
    Format,
    Overlong,
    Source,
    lines,
    read_records,
    read_stream,
)


def parsed(text: str, fmt: Format, name: str = "") -> list[Record | Problem]:
    data = io.BytesIO(text.encode("utf-8", "surrogatepass"))
    return list(read_stream(Source(name or f"in.{fmt}", data), (fmt,)))


def test_json_list_elements_know_their_index() -> None:
    """Each element of a top-level JSON list is a record located by its index (no line: ijson)."""
    items = parsed('[\n  {"a": 1},\n\n  {"b": 2}\n]\n', "json", "t.json")
    assert [str(r.location) for r in items if isinstance(r, Record)] == ["t.json[0]", "t.json[1]"]


def test_json_single_document_is_one_record() -> None:
    """A JSON file holding one object is one record."""
    items = parsed('\n{"a": [1, 2]}\n', "json")
    assert len(items) == 1
    assert isinstance(items[0], Record)
    assert items[0].value == {"a": [1, 2]}
    assert items[0].location.line == 2


def test_jsonl_bad_line_is_reported_and_the_rest_read() -> None:
    """A broken JSON Lines line becomes a problem at its line; the lines after it are read."""
    items = parsed('{"a": 1}\n{"b": \n\n{"c": 3}\n', "jsonl", "x.jsonl")
    assert isinstance(items[1], Problem)
    assert str(items[1]).startswith("x.jsonl:2: invalid JSON")
    assert isinstance(items[2], Record)
    assert items[2].location.line == 4


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        *(
            (name, "NaN and infinite numbers are not valid JSON; use a finite number")
            for name in ("NaN", "Infinity", "-Infinity")
        ),
        (
            "1e999",
            "a number too large for a float (1e999); write it as a string or a smaller number",
        ),
    ],
)
def test_non_finite_numbers_are_problems_with_their_path(literal: str, message: str) -> None:
    """NaN, infinities and overflowing literals are rejected with the JSON path that holds them."""
    items = parsed(f'{{"steps": [{{"latency_ms": {literal}}}]}}\n', "jsonl", "t.jsonl")
    assert [str(i) for i in items] == [f"t.jsonl:1: steps[0].latency_ms: {message}"]


def test_yaml_records_know_the_line_of_each_key() -> None:
    """A problem deep inside a YAML record points at the line of that key."""
    (record,) = parsed("scorers:\n  - type: a\n    treshold: 2\n", "yaml", "s.yaml")
    assert isinstance(record, Record)
    assert str(record.problem(("scorers", 0, "treshold"), "unknown key")) == (
        "s.yaml:3: scorers[0].treshold: unknown key"
    )


def test_yaml_list_gives_one_record_per_item() -> None:
    """A top-level YAML list yields one record per item, with item-relative paths and lines."""
    items = parsed("- id: a\n- id: b\n  x: 1\n", "yaml", "c.yaml")
    second = items[1]
    assert isinstance(second, Record)
    assert second.value == {"id": "b", "x": 1}
    assert second.locate(("x",)).line == 3


def test_yaml_does_not_construct_python_objects() -> None:
    """YAML is loaded safely: a python/object tag is a problem, not code execution."""
    items = parsed("!!python/object/apply:os.system ['echo hi']\n", "yaml", "evil.yaml")
    assert isinstance(items[0], Problem)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    """A file that does not exist is one clear error naming it."""
    with pytest.raises(InputFileError, match="no such file"):
        list(read_records(tmp_path / "nope.jsonl"))


def test_stdin_is_sniffed_as_jsonl(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input with one object a line is read as JSON Lines."""
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": 1}\n{"a": 2}\n'))
    items = list(read_records("-"))
    assert [str(i.location) for i in items] == ["<stdin>:1", "<stdin>:2"]


@pytest.mark.parametrize("first", [b'{"a": "caf\xe9"}', b'{"a": "\x00"}', b'{"a": 1,,}'])
def test_stdin_whose_first_line_is_broken_is_still_json_lines(first: bytes) -> None:
    """A Latin-1 byte, a NUL or a typo costs the first line alone, not the lines after it."""
    items = list(
        read_stream(Source("<stdin>", io.BytesIO(first + b'\n{"b": 2}\n')), ("json", "jsonl"))
    )
    assert [type(item).__name__ for item in items] == ["Problem", "Record"]
    assert [item.location.line for item in items] == [1, 2]


objects = st.dictionaries(
    st.text(max_size=4),
    st.recursive(
        # Integers a 64-bit one holds: one past them is read as a float, as orjson reads it.
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=6),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=6,
    ),
    min_size=1,
    max_size=4,
)


@given(objects, objects, st.integers(min_value=1), st.sampled_from(["rows.jsonl", "rows"]))
def test_a_first_record_cut_short_costs_its_line_alone(
    tmp_path_factory: pytest.TempPathFactory, first: Any, second: Any, cut: int, name: str
) -> None:
    """A JSON Lines file whose first record ends early (a write cut off, a paste) is JSON Lines.

    It was read as one pretty-printed document: every record after it lost in one problem said
    at a line past the first.
    """
    text = json.dumps(first, ensure_ascii=False).encode()
    broken = text[: 1 + cut % (len(text) - 1)]  # a prefix of the object, never all of it
    path = tmp_path_factory.mktemp("cut") / name
    path.write_bytes(broken + b"\n" + json.dumps(second).encode() + b"\n")
    items = list(read_records(path))
    assert [type(item).__name__ for item in items] == ["Problem", "Record"]
    assert [item.location.line for item in items] == [1, 2]
    assert isinstance(items[1], Record)
    assert items[1].value == second


@given(objects, st.sampled_from([1, 2, None]))
def test_a_pretty_printed_object_in_a_jsonl_file_is_one_document(
    tmp_path_factory: pytest.TempPathFactory, value: Any, indent: int | None
) -> None:
    """However it is broken into lines, a whole object stays one record: a value on the line
    after its key (``{"a":`` then ``{"b": 1}``) carries the first line on."""
    # With no indent, each member's value on the line after its key (a separator, not a text
    # replace, which would break a key that holds '": ' itself).
    text = json.dumps(value, indent=indent, separators=None if indent else (", ", ":\n"))
    path = tmp_path_factory.mktemp("pretty") / "one.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    items = list(read_records(path))
    assert len(items) == 1
    assert isinstance(items[0], Record)
    assert items[0].value == value


def test_a_one_line_file_cut_short_is_said_at_its_line(tmp_path: Path) -> None:
    """Not at a line after the last, with or without the line's end."""
    for data in (b'{"a": 1', b'{"a": 1\n'):
        (problem,) = read_file(tmp_path, "one.jsonl", data)
        assert isinstance(problem, Problem)
        assert problem.location.line == 1, problem


def test_stdin_pretty_json_is_one_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input holding one pretty-printed object is read as one JSON document."""
    monkeypatch.setattr("sys.stdin", io.StringIO('{\n  "a": 1\n}\n'))
    items = list(read_records("-"))
    assert len(items) == 1
    assert isinstance(items[0], Record)


def test_yaml_is_refused_where_only_json_is_accepted(tmp_path: Path) -> None:
    """A YAML file given where JSON is expected is an error that names the accepted formats."""
    path = tmp_path / "t.yaml"
    path.write_text("a: 1\n")
    with pytest.raises(InputFileError, match="use json, jsonl"):
        list(read_records(path, formats=("json", "jsonl")))


def read_file(tmp_path: Path, name: str, data: bytes) -> list[Record | Problem]:
    path = tmp_path / name
    path.write_bytes(data)
    return list(read_records(path))


def shown(items: list[Record | Problem]) -> list[str]:
    """Each item as the user sees it: a problem's text, or a record's line and value."""
    return [
        str(item).split(": ", 1)[1]
        if isinstance(item, Problem)
        else f"{item.location.line}:{item.value}"
        for item in items
    ]


def test_a_utf8_bom_does_not_cost_the_first_record(tmp_path: Path) -> None:
    """A byte-order mark before the first record is dropped, in JSON Lines and JSON alike."""
    assert shown(read_file(tmp_path, "t.jsonl", b'\xef\xbb\xbf{"a": 1}\n{"a": 2}\n')) == [
        "1:{'a': 1}",
        "2:{'a': 2}",
    ]
    items = read_file(tmp_path, "t.json", b'\xef\xbb\xbf[{"a": 1}]')
    assert [item.value for item in items] == [{"a": 1}]  # type: ignore[union-attr]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_json_lines_split_on_newline_only(tmp_path: Path, separator: str) -> None:
    """A raw U+2028, NEL or form feed inside a string is part of the string, not a line break."""
    text = f'{{"a": "x{separator}y"}}\n{{"a": 2}}\n'
    items = read_file(tmp_path, "t.jsonl", text.encode("utf-8"))
    assert [item.value for item in items if isinstance(item, Record)] == [
        {"a": f"x{separator}y"},
        {"a": 2},
    ]


def test_an_invalid_utf8_byte_costs_only_its_line(tmp_path: Path) -> None:
    """A bad byte rejects its own line, located by column; the lines around it are read."""
    items = read_file(tmp_path, "t.jsonl", b'{"a": 1}\n{"a": "caf\xe9"}\n{"a": 3}\n')
    assert shown(items) == [
        "1:{'a': 1}",
        "not UTF-8 text: byte 0xe9 at column 11 (invalid continuation byte); "
        "save the file as UTF-8",
        "3:{'a': 3}",
    ]
    assert isinstance(items[1], Problem)
    assert items[1].location.line == 2


COMPRESSORS = [(".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)]


@pytest.mark.parametrize(("suffix", "compress"), COMPRESSORS, ids=[s for s, _ in COMPRESSORS])
@pytest.mark.parametrize("stem", ["t.jsonl", "t"])
def test_compressed_files_are_read_transparently(
    tmp_path: Path, suffix: str, compress: Any, stem: str
) -> None:
    """A gzip, xz or bzip2 file, known by its first bytes, is decompressed as it is read, its
    lines numbered as in the original."""
    data = compress(b'{"a": 1}\n\n{"a": 3}\n')
    assert shown(read_file(tmp_path, stem + suffix, data)) == ["1:{'a': 1}", "3:{'a': 3}"]


@pytest.mark.parametrize(("suffix", "compress"), COMPRESSORS, ids=[s for s, _ in COMPRESSORS])
def test_compressed_stdin_is_recognised_by_its_magic(
    monkeypatch: pytest.MonkeyPatch, suffix: str, compress: Any
) -> None:
    """Compressed standard input is decompressed and sniffed like plain input."""
    stdin = io.TextIOWrapper(io.BytesIO(compress(b'{"a": 1}\n{"a": 2}\n')))
    monkeypatch.setattr("sys.stdin", stdin)
    assert [str(i.location) for i in read_records("-")] == ["<stdin>:1", "<stdin>:2"]


def test_a_zstd_file_says_so_and_how_to_read_it(tmp_path: Path) -> None:
    """Not "not UTF-8 text: save the file as UTF-8": what it is, and the pipe that reads it."""
    (problem,) = read_file(tmp_path, "t.jsonl.zst", b"\x28\xb5\x2f\xfd\x04\x58" + b"\x00" * 20)
    assert isinstance(problem, Problem)
    path = tmp_path / "t.jsonl.zst"
    assert str(problem) == (
        f"{path}: is zstd-compressed, which kp does not read: give it decompressed, as standard "
        f"input: zstd -dc {path} | kp ... -"
    )


def test_a_zip_that_is_no_inspect_log_says_how_to_read_it(tmp_path: Path) -> None:
    """A zip of trace files: its members, unzipped into a pipe, are what kp reads."""
    path = tmp_path / "traces.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("traces.jsonl", '{"a": 1}\n')
    (problem,) = list(read_records(path))
    assert isinstance(problem, Problem)
    assert str(problem) == (
        f"{path}: is a zip archive, which kp does not read: give it decompressed, as standard "
        f"input: unzip -p {path} | kp ... -"
    )


def test_a_broken_zip_says_it_cannot_be_read(tmp_path: Path) -> None:
    """Only a zip's first bytes (a download cut short): no traceback, the reason."""
    (problem,) = read_file(tmp_path, "run.eval", b"PK\x03\x04\x14\x00" + b"\x00" * 20)
    assert isinstance(problem, Problem)
    assert str(problem) == (
        f"{tmp_path / 'run.eval'}: is a zip archive that cannot be read (File is not a zip file)"
    )


def test_a_zip_on_standard_input_is_read_as_a_file_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe cannot seek, as a zip's reader must: its bytes are read whole first."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("traces.jsonl", '{"a": 1}\n')
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(buffer.getvalue())))
    (problem,) = list(read_records("-"))
    assert isinstance(problem, Problem)
    assert "is a zip archive, which kp does not read" in problem.message
    assert "unzip -p FILE | kp ... -" in problem.message


@pytest.mark.parametrize("text", [b"BZh: 1\n", b"BZh91AY&S: 1\n"])
def test_a_text_that_starts_as_bzip2_does_is_read_as_text(tmp_path: Path, text: bytes) -> None:
    """bzip2 is known by its first block's bytes too, which no UTF-8 text has."""
    (tmp_path / "suite.yaml").write_bytes(text)
    (record,) = read_records(tmp_path / "suite.yaml", formats=("yaml",))
    assert isinstance(record, Record)


@pytest.mark.parametrize(("suffix", "compress"), COMPRESSORS, ids=[s for s, _ in COMPRESSORS])
def test_a_compressed_parquet_file_is_read(tmp_path: Path, suffix: str, compress: Any) -> None:
    """Read whole first, as standard input is: its footer cannot be reached by seeking."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": [1, 2]}), buffer)
    items = read_file(tmp_path, "t.parquet" + suffix, compress(buffer.getvalue()))
    assert [item.value for item in items if isinstance(item, Record)] == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize(("suffix", "compress"), COMPRESSORS, ids=[s for s, _ in COMPRESSORS])
def test_a_truncated_compressed_file_keeps_the_records_before_the_break(
    tmp_path: Path, suffix: str, compress: Any
) -> None:
    """A compressed file cut short yields its readable records, then one problem saying so."""
    # Unlike runs, so that bzip2 (level 1: 100 KB blocks) has a whole block before the break.
    pads = (hashlib.sha256(b"%d" % n).hexdigest() * 3 for n in range(1000))
    lines = b"".join(b'{"n": %d, "pad": "%s"}\n' % (n, pad.encode()) for n, pad in enumerate(pads))
    data = bz2.compress(lines, 1) if suffix == ".bz2" else compress(lines)
    items = read_file(tmp_path, "t.jsonl" + suffix, data[: len(data) // 2])
    records = [item for item in items if isinstance(item, Record)]
    assert records
    assert [r.value["n"] for r in records] == list(range(len(records)))
    assert isinstance(items[-1], Problem)
    assert "ends early" in items[-1].message


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"\n", b"\r", BOM, b"{}"]), max_size=30).map(b"".join),
    max_bytes=st.integers(0, 8),
)
def test_lines_past_the_limit_are_skipped_and_measured(data: bytes, max_bytes: int) -> None:
    """Each line is itself (no ending, no first BOM) up to ``max_bytes``, else its length alone."""
    pieces = data.split(b"\n")[: data.count(b"\n") + (not data.endswith(b"\n"))]
    expected = [
        Overlong(len(piece))
        if len(piece) > max_bytes
        else (piece.removeprefix(BOM) if number == 0 else piece).removesuffix(b"\r")
        for number, piece in enumerate(pieces if data else [])
    ]
    assert list(lines(io.BytesIO(data), max_bytes)) == expected


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz", "t"])
def test_an_overlong_json_lines_line_costs_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A line past the limit is one located problem, first or not; the lines after it are read."""
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 64)
    text = b'{"a": "%s"}\n{"a": 2}\n{"a": "%s"}\n{"a": 4}\n' % (b"x" * 100, b"y" * 100)
    data = gzip.compress(text) if name.endswith(".gz") else text
    items = read_file(tmp_path, name, data)
    overlong = "a line of 109 bytes, more than the 64 a record may have; skipped unread"
    assert [shown([item])[0].split(" (")[0] for item in items] == [
        overlong,
        "2:{'a': 2}",
        overlong,
        "4:{'a': 4}",
    ]
    assert [item.location.line for item in items] == [1, 2, 3, 4]


def test_a_gzip_bomb_is_read_past_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """32 MiB of zeros in 32 KiB of gzip, one line, cost the limit's memory, not the line's."""
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1 << 20)
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as bomb:
        for _ in range(32):
            bomb.write(bytes(1 << 20))
        bomb.write(b'\n{"a": 1}\n')
    tracemalloc.start()
    try:
        items = list(read_records(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert shown(items) == [
        "a line of 33,554,432 bytes, more than the 1,048,576 a record may have; skipped unread "
        "(a runaway line? else split the record, one trace a line)",
        "2:{'a': 1}",
    ]
    assert peak < 8 << 20


@pytest.mark.parametrize("name", ["<stdin>", "t.jsonl"])
def test_a_document_read_whole_keeps_its_long_lines(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """The line limit is JSON Lines': a pretty-printed document's long line is read as it is."""
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 16)
    text = '{\n  "a": "%s",\r\n  "b": 2\n}\n' % ("x" * 100)
    items = list(read_stream(Source(name, io.BytesIO(text.encode())), ("json", "jsonl")))
    assert [item.value for item in items if isinstance(item, Record)] == [{"a": "x" * 100, "b": 2}]
    assert len(items) == 1
    # Only the first line may start with a byte-order mark; on another it is a stray character.
    stray = b"{\n" + BOM + b'"a": 1}\n'
    (problem,) = read_stream(Source(name, io.BytesIO(stray)), ("json", "jsonl"))
    assert isinstance(problem, Problem)
    assert problem.location.line == 2


def test_an_overlong_first_line_where_json_lines_are_not_read_is_one_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Too long to tell what document it starts, it is refused as it is, at line 1."""
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 16)
    items = list(read_stream(Source("<stdin>", io.BytesIO(b"[" + b" " * 100 + b"]")), ("json",)))
    assert [(type(item).__name__, item.location.line) for item in items] == [("Problem", 1)]


@pytest.mark.parametrize("head", [b"\x1f\x8b", b"\x1f\x8b\x08garbage", b"\x1f\x8b\x09\x00abc"])
@pytest.mark.parametrize("name", ["t.jsonl.gz", "t.json.gz", "t.gz"])
def test_a_gzip_broken_before_its_first_byte_is_a_problem_not_an_empty_file(
    tmp_path: Path, head: bytes, name: str
) -> None:
    """A .gz file that fails on its first read is reported; before, it read as an empty file."""
    items = read_file(tmp_path, name, head)
    assert len(items) == 1
    assert isinstance(items[0], Problem)
    assert not items[0].warning
    assert str(items[0]).startswith(str(tmp_path / name))


@pytest.mark.parametrize("name", ["t.jsonl", "t.json"])
def test_a_repeated_key_keeps_its_last_value(tmp_path: Path, name: str) -> None:
    """A key given twice keeps the last value, as JSON.parse does (spec: changed in session 3)."""
    data = b'{"steps": [{"type": "a", "type": "b"}]}\n'
    data = data if name.endswith("jsonl") else b"[" + data + b"]"
    (record,) = [item for item in read_file(tmp_path, name, data) if isinstance(item, Record)]
    assert record.value == {"steps": [{"type": "b"}]}


def test_a_json_lines_line_with_a_repeated_key_is_told_and_keeps_no_bytes(tmp_path: Path) -> None:
    """The value under the key's first occurrence was never read: a warning, and no raw bytes."""
    data = b'{"id": "r1", "notes": "AKIAZ7QW3RTY5UIOP2LK", "notes": "clean"}\n{"id": "r2"}\n'
    warning, first, second = read_file(tmp_path, "t.jsonl", data)
    assert isinstance(warning, Problem)
    assert warning.warning
    assert str(warning) == (
        f"{tmp_path / 't.jsonl'}:1: warning: the key 'notes' appears twice in one object; "
        "the last value is used, the first ignored"
    )
    assert isinstance(first, Record)
    assert first.raw is None
    assert isinstance(second, Record)
    assert second.raw == b'{"id": "r2"}'


def test_an_overlong_integer_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    """An integer of 5,000 digits (past Python's int conversion limit) is one record's problem."""
    items = read_file(tmp_path, "t.jsonl", b'{"a": ' + b"9" * 5000 + b'}\n{"a": 2}\n')
    assert isinstance(items[0], Problem)
    assert "a number too long to read" in items[0].message
    assert len(str(items[0])) < 300
    assert isinstance(items[1], Record)


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5000])
def test_deep_nesting_is_a_problem_not_a_crash(tmp_path: Path, depth: int) -> None:
    """Nesting past the limit (or past the parser's recursion) is refused; the next line is read."""
    deep = b'{"a": ' + b"[" * depth + b"]" * depth + b"}\n"
    items = read_file(tmp_path, "t.jsonl", deep + b'{"a": 2}\n')
    assert isinstance(items[0], Problem)
    assert f"nested deeper than {MAX_NESTING} levels" in items[0].message
    assert isinstance(items[1], Record)


def test_nesting_up_to_the_limit_is_read(tmp_path: Path) -> None:
    """A document exactly MAX_NESTING levels deep is valid."""
    depth = MAX_NESTING - 1
    items = read_file(tmp_path, "t.jsonl", b'{"a": ' + b"[" * depth + b"]" * depth + b"}\n")
    assert isinstance(items[0], Record)


def test_a_too_deep_element_of_a_json_list_costs_only_itself(tmp_path: Path) -> None:
    """In a JSON list, an element nested too deep is refused at its index; the others are read."""
    deep = b"[" * (MAX_NESTING + 1) + b"]" * (MAX_NESTING + 1)
    items = read_file(tmp_path, "t.json", b'[\n{"a": 1},\n{"b": ' + deep + b'},\n{"a": 4}\n]\n')
    assert [(type(i).__name__, str(i.location)) for i in items] == [
        ("Record", f"{tmp_path / 't.json'}[0]"),
        ("Problem", f"{tmp_path / 't.json'}[1]"),
        ("Record", f"{tmp_path / 't.json'}[2]"),
    ]


_ANY_ESCAPE = re.compile(rb"\\.", re.DOTALL)  # the oracle: each backslash pair, left to right


@settings(max_examples=500)
@given(st.lists(st.sampled_from([b"\\", *(bytes([byte]) for byte in b'"[]{},an\n')])))
def test_escaped_marks_go_as_each_escape_dropped_left_to_right_would(parts: list[bytes]) -> None:
    """The marks a JSON list's depth scan sees: those dropping every escape pair leaves."""
    data = b"".join(parts)
    marks = b'"[]{},'
    assert [b for b in readers.without_escaped_marks(data) if b in marks] == [
        b for b in _ANY_ESCAPE.sub(b"", data) if b in marks
    ]


@pytest.mark.parametrize("bad", [b'{"a": NaN, "b": "trunc', b'{"a": 1,,}'])
def test_a_syntax_error_in_a_json_list_keeps_the_elements_before_it(
    tmp_path: Path, bad: bytes
) -> None:
    """A syntax error ends the list there, at its line; earlier ones count."""
    items = read_file(tmp_path, "t.json", b'[\n{"a": 1},\n{"a": 2},\n' + bad + b',\n{"a": 4}\n]')
    assert [type(i).__name__ for i in items] == ["Record", "Record", "Problem"]
    assert isinstance(items[2], Problem)
    assert items[2].location.line == 4
    assert items[2].message.startswith("invalid JSON: ")


@pytest.mark.parametrize(
    ("bad", "column"), [(b'{"a": NaN, "b": "trunc', 7), (b'{"a": 1, "a": 2, "b": [tr', 26)]
)
def test_a_nan_or_repeated_key_then_a_syntax_error_costs_one_line(
    tmp_path: Path, bad: bytes, column: int
) -> None:
    """A NaN (or a repeated key), then a broken record: one located problem; the rest is kept."""
    items = read_file(tmp_path, "t.jsonl", b'{"a": 1}\n' + bad + b'\n{"a": 3}\n')
    assert shown(items)[0] == "1:{'a': 1}"
    assert shown(items)[2] == "3:{'a': 3}"
    problem = items[1]
    assert isinstance(problem, Problem)
    assert problem.location.line == 2
    assert problem.message.startswith("invalid JSON: ")
    assert problem.message.endswith(f"(column {column})")


def test_a_long_json_list_is_read_in_order(tmp_path: Path) -> None:
    """Each element of a 5,000-element list is read, in order, knowing its index."""
    data = "[\n" + ",\n".join(f'{{"n": {n}}}' for n in range(5000)) + "\n]\n"
    items = read_file(tmp_path, "t.json", data.encode())
    assert [(i.location.index, i.value["n"]) for i in items] == [(n, n) for n in range(5000)]  # type: ignore[union-attr]


def test_crlf_line_endings_are_read(tmp_path: Path) -> None:
    """Windows line endings do not leave a carriage return in the record."""
    assert shown(read_file(tmp_path, "t.jsonl", b'{"a": 1}\r\n{"a": 2}\r\n')) == [
        "1:{'a': 1}",
        "2:{'a': 2}",
    ]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=400),
    suffix=st.sampled_from(["t.jsonl", "t.json", "t.txt", "t.jsonl.gz"]),
)
def test_any_bytes_give_records_or_problems_only(tmp_path: Path, data: bytes, suffix: str) -> None:
    """Whatever the bytes, reading yields records and located problems, never another exception."""
    if suffix.endswith(".gz") and data[:1] != b"\x1f":
        data = gzip.compress(data)
    for item in read_file(tmp_path, suffix, data):
        assert isinstance(item, Record | Problem)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(json_values, min_size=1, max_size=5))
def test_valid_json_lines_round_trip(tmp_path: Path, values: list[object]) -> None:
    """Any JSON values written one a line (raw, not ASCII-escaped) are read back equal, in order.

    Integers of up to 64 bits (signed): past them a list's reader (ijson) refuses the list there,
    and orjson reads a JSON Lines line's as a float, as JSON.parse reads every number.
    """
    data = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode(
        "utf-8", "surrogatepass"
    )
    items = read_file(tmp_path, "t.jsonl", data)
    assert [i.value for i in items if isinstance(i, Record)] == values


def test_half_a_surrogate_pair_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    """\\ud800 alone names no character: it becomes U+FFFD, with a warning at its path."""
    items = read_file(tmp_path, "t.jsonl", b'{"a": ["ok", "x\\ud800"], "b": "\\ud83d\\ude00"}\n')
    warning, record = items
    assert isinstance(warning, Problem)
    assert warning.warning
    assert warning.path == "a[1]"
    assert isinstance(record, Record)
    assert record.value == {"a": ["ok", "x\ufffd"], "b": "\U0001f600"}


def _object_text(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f"{json.dumps(key)}:{value}" for key, value in pairs) + "}"


json_texts = st.recursive(
    st.sampled_from(["1", "-0", "2.5", "1e5", "true", "null", '"a:b"', '"\\u003a"', '"\\\\u003a"'])
    | st.text(max_size=6).map(json.dumps)
    | st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1).map(str),
    lambda children: (
        st.lists(children, max_size=4).map(lambda items: "[" + ",".join(items) + "]")
        | st.lists(
            st.tuples(st.sampled_from(["a", "b", "a:", "\u00e9"]), children), max_size=4
        ).map(_object_text)
    ),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(text=json_texts)
def test_json_lines_and_lists_read_what_python_reads(text: str) -> None:
    """Any strict JSON (repeated keys included: the last wins) reads as Python's json reads it.

    A line (or list element) with a repeated key says so in a warning, and only such a one.
    """
    expected = json.loads(text)
    repeats: list[bool] = []

    def pairs_of(pairs: list[tuple[str, object]]) -> None:
        repeats.append(len({key for key, _ in pairs}) < len(pairs))

    json.loads(text, object_pairs_hook=pairs_of)
    *warnings, line = parsed(text, "jsonl")
    assert [isinstance(w, Problem) and w.message.startswith("the key ") for w in warnings] == [
        True
    ] * any(repeats)
    assert isinstance(line, Record)
    assert json.dumps(line.value) == json.dumps(expected)  # same int/float types, same key order
    element, *warnings = parsed(f"[{text}]", "json")
    assert [isinstance(w, Problem) and w.message.startswith("the key ") for w in warnings] == [
        True
    ] * any(repeats)
    assert isinstance(element, Record)
    assert json.dumps(element.value) == json.dumps(expected)


def test_objects_back_to_back_in_a_json_file_are_one_record_each(tmp_path: Path) -> None:
    """Pretty-printing exporters write one indented object after another: each is a record."""
    path = tmp_path / "spans.json"
    path.write_text('{\n  "a": 1\n}\n{\n  "b": 2\n}\n')
    items = list(read_records(path))
    assert [(item.value, item.location.line, item.location.index) for item in items] == [  # type: ignore[union-attr]
        ({"a": 1}, 1, 0),
        ({"b": 2}, 4, 1),
    ]


def test_anything_but_an_object_after_a_document_is_still_extra_data(tmp_path: Path) -> None:
    """A JSON text sequence is objects only; trailing garbage is located."""
    path = tmp_path / "bad.json"
    path.write_text('{"a": 1}\n  x')
    items = list(read_records(path))
    assert isinstance(items[1], Problem)
    assert str(items[1]) == f"{path}:2: invalid JSON: extra data after the document (column 3)"


def test_an_integer_past_64_bits_in_a_json_list_reads_as_a_float(tmp_path: Path) -> None:
    """ijson refuses it; the list is read on, the integer a float as in JSON Lines."""
    items = read_file(tmp_path, "t.json", b'[{"a": 1},\n{"b": 18446744073709551616}, {"c": 3}]')
    assert [item.value for item in items] == [{"a": 1}, {"b": 2.0**64}, {"c": 3}]  # type: ignore[union-attr]
    assert [item.location.index for item in items] == [0, 1, 2]


@pytest.mark.parametrize(
    ("literal", "path"),
    [('{"b": NaN}', "a.b"), ("-Infinity", "a"), ("1e999", "a"), ("[1, Infinity]", "a[1]")],
)
def test_a_non_finite_number_in_a_json_list_costs_only_its_element(
    tmp_path: Path, literal: str, path: str
) -> None:
    """As in JSON Lines: the element is a problem at its path, the elements after it are read."""
    data = f'[{{"a": 1}},\n{{"a": {literal}}},\n{{"a": 3}}]'.encode()
    items = read_file(tmp_path, "t.json", data)
    assert [str(item).split("t.json", 1)[1] for item in items if isinstance(item, Problem)] == [
        f"[1]: {path}: NaN and infinite numbers are not valid JSON; use a finite number"
    ]
    assert [(i.location.index, i.value) for i in items if isinstance(i, Record)] == [
        (0, {"a": 1}),
        (2, {"a": 3}),
    ]


def test_a_repeated_key_in_a_json_list_element_is_told_at_its_index(tmp_path: Path) -> None:
    """As in JSON Lines, the value never read is said, at the element that held it."""
    data = b'[{"a": 1}, {"b": {"c": "AKIAZ7QW3RTY5UIOP2LK", "c": "clean"}}, {"a": 3}]'
    items = read_file(tmp_path, "t.json", data)
    assert [str(item) for item in items if isinstance(item, Problem)] == [
        f"{tmp_path / 't.json'}[1]: warning: the key 'c' appears twice in one object; "
        "the last value is used, the first ignored"
    ]
    assert [item.value for item in items if isinstance(item, Record)] == [
        {"a": 1},
        {"b": {"c": "clean"}},
        {"a": 3},
    ]


_MARKED_TEXT = st.text(alphabet='[]{}",\\:ab\n')
_ELEMENTS = st.recursive(
    st.none() | st.integers(-5, 5) | _MARKED_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_MARKED_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(before=st.lists(_ELEMENTS, max_size=4), after=st.lists(_ELEMENTS, max_size=3))
def test_a_json_list_stops_only_at_an_element_nesting_past_the_list_depth(
    before: list[object], after: list[object]
) -> None:
    """Brackets, quotes and escapes in strings never count: the list stops at the deep element."""
    deep = "[" * LIST_DEPTH + "]" * LIST_DEPTH  # the list itself is one more level
    text = "[" + ",".join([*map(json.dumps, before), deep, *map(json.dumps, after)]) + "]"
    items = parsed(text, "json")
    assert [i.value for i in items if isinstance(i, Record)] == before
    assert [(i.location.index, i.message) for i in items if isinstance(i, Problem)] == [
        (len(before), f"nested deeper than {MAX_NESTING} levels; flatten the document")
    ]


@settings(max_examples=30, deadline=None)
@given(before=st.lists(_ELEMENTS, max_size=4), after=st.lists(_ELEMENTS, max_size=3))
def test_a_json_list_element_at_the_list_depth_costs_only_itself(
    before: list[object], after: list[object]
) -> None:
    """One level less deep, the element alone is refused (past MAX_NESTING); the rest is read."""
    deep = "[" * (LIST_DEPTH - 1) + "]" * (LIST_DEPTH - 1)
    text = "[" + ",".join([*map(json.dumps, before), deep, *map(json.dumps, after)]) + "]"
    items = parsed(text, "json")
    assert [i.value for i in items if isinstance(i, Record)] == before + after
    assert [i.location.index for i in items if isinstance(i, Problem)] == [len(before)]


def test_unclosed_brackets_in_a_json_list_cost_memory_linear_in_the_file() -> None:
    """5,000 ``[`` (ijson alone keeps 60 MB of paths) are refused at their element, cheaply."""
    tracemalloc.start()
    try:
        items = parsed('[{"a": 1}, ' + "[" * 5000, "json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000
    assert [(type(i).__name__, i.location.index) for i in items] == [("Record", 0), ("Problem", 1)]


@pytest.mark.parametrize(
    ("codec", "mark"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
    ],
)
@pytest.mark.parametrize("name", ["t.jsonl", "t.json", "t.jsonl.gz"])
def test_a_utf16_or_utf32_text_with_its_byte_order_mark_is_read(
    tmp_path: Path, codec: str, mark: bytes, name: str
) -> None:
    """As Python's json reads it (Windows PowerShell's ``>`` writes UTF-16): every record."""
    text = '{"a": "é"}\n{"b": 2}\n' if "jsonl" in name else '[{"a": "é"}, {"b": 2}]'
    data = mark + text.encode(codec)
    data = gzip.compress(data) if name.endswith(".gz") else data
    assert [item.value for item in read_file(tmp_path, name, data)] == [{"a": "é"}, {"b": 2}]  # type: ignore[union-attr]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("name", ["t.jsonl", "t.json", "t.jsonl.gz"])
def test_a_utf16_json_text_without_a_byte_order_mark_is_read(
    tmp_path: Path, codec: str, name: str
) -> None:
    """UTF-16 without a mark (iconv -t UTF-16LE) is known by its NULs; before, every line failed."""
    text = '{"a": "é"}\r\n{"b": 2}\r\n' if "jsonl" in name else '[{"a": "é"}, {"b": 2}]'
    data = text.encode(codec)
    data = gzip.compress(data) if name.endswith(".gz") else data
    assert [item.value for item in read_file(tmp_path, name, data)] == [{"a": "é"}, {"b": 2}]  # type: ignore[union-attr]


def test_bytes_that_only_start_like_utf16_are_read_as_they_are(tmp_path: Path) -> None:
    """Junk with a UTF-16 mark, of an odd length, is no UTF-16: its line is a bad record."""
    items = read_file(tmp_path, "t.jsonl", b"\xff\xfe\x00garbage\n" + b'{"a": 12}\n')
    assert [type(item).__name__ for item in items] == ["Problem", "Record"]
    assert "not UTF-8 text: byte 0xff at column 1" in items[0].message  # type: ignore[union-attr]


def test_key_lines_give_each_path_of_a_json_document_its_line() -> None:
    """Documents back to back: each path at its own line of the file; without key_lines, none."""
    text = '{\n  "a": {\n    "b": 1\n  }\n}\n{\n  "c": [\n    2\n  ]\n}\n'
    data = io.BytesIO(text.encode())
    first, second = read_stream(Source("t.json", data), ("json",), key_lines=True)
    assert isinstance(first, Record)
    assert isinstance(second, Record)
    assert (first.locate(["a", "b"]).line, second.locate(["c", 0]).line) == (3, 8)
    [plain, _] = parsed(text, "json", "t.json")
    assert isinstance(plain, Record)
    assert plain.lines == {}


def test_key_lines_keep_none_when_yaml_reads_the_document_otherwise() -> None:
    """A repeated key (JSON keeps the last, YAML refuses it): the record as it was."""
    text = '\n{\n  "a": 1,\n  "a": 2\n}\n'
    read = list(read_stream(Source("t.json", io.BytesIO(text.encode())), ("json",), key_lines=True))
    [record] = [item for item in read if isinstance(item, Record)]
    assert (record.value, record.lines, record.location.line) == ({"a": 2}, {}, 2)


def test_a_json_list_s_elements_keep_their_lines_with_key_lines(tmp_path: Path) -> None:
    """With ``key_lines``, each element of a JSON list is at its line, and so is each key in it,
    as a YAML list's; before, an element was only ``FILE[1]``, every problem in it too."""
    path = tmp_path / "cases.json"
    path.write_text('[\n  {"id": "a"},\n  {\n    "id": "b",\n    "pages": 3\n  }\n]\n')
    records = [item for item in read_records(path, key_lines=True) if isinstance(item, Record)]
    assert [(str(r.location), r.location.index) for r in records] == [
        (f"{path}:2", 0),
        (f"{path}:3", 1),
    ]
    assert str(records[1].locate(("pages",))) == f"{path}:5"
