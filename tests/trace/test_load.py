"""Loading traces from files: valid ones in order, bad records reported and skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import LONE_SURROGATE
from knowledgepulse.trace import TraceItem, load_traces
from knowledgepulse.trace.load import trace_items
from tests.builders import trace_json

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"


def test_bad_records_do_not_stop_the_good_ones(tmp_path: Path) -> None:
    """A schema error and broken JSON are reported at their lines; the valid traces around load."""
    bad = trace_json(trace_id="kp:trace:bad")
    bad["steps"][0]["type"] = "plan"
    lines = [
        json.dumps(trace_json(trace_id="kp:trace:a")),
        json.dumps(bad),
        '{"@context": ',
        json.dumps(trace_json(trace_id="kp:trace:b")),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    items = list(load_traces([path]))
    assert [i.trace.id for i in items if isinstance(i, TraceItem)] == ["kp:trace:a", "kp:trace:b"]
    assert [str(i).split(": ")[0] for i in items if isinstance(i, Problem)] == [
        f"{path}:2",
        f"{path}:3",
    ]
    assert str(items[1]) == f'{path}:2: steps[0].type: got "plan"; expected ' + (
        "'thought', 'tool_call', 'observation' or 'error_recovery'"
    )


def test_one_path_is_one_file(tmp_path: Path) -> None:
    """A path given alone, as text or a Path, is read as one file; before, a str was iterated and
    each of its characters was a file name ('e: no such file')."""
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(trace_json()) + "\n")
    for named in (str(path), path):
        (item,) = load_traces(named)
        assert isinstance(item, TraceItem)


def test_json_list_file_loads_every_trace(tmp_path: Path) -> None:
    """A JSON file holding a list of traces yields each, with its index in the list."""
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps([trace_json(trace_id="kp:trace:1"), trace_json(trace_id="kp:trace:2")], indent=1)
    )
    items = list(load_traces([path]))
    assert [i.trace.id for i in items if isinstance(i, TraceItem)] == ["kp:trace:1", "kp:trace:2"]
    assert [i.location.index for i in items] == [0, 1]


def test_the_bundled_examples_are_valid() -> None:
    """Every trace in examples/traces/traces.jsonl and finance-tsmc.json validates."""
    for example in ("traces.jsonl", "finance-tsmc.json"):
        items = list(load_traces([EXAMPLES / example]))
        assert items
        assert not [i for i in items if isinstance(i, Problem)]


def test_the_bundled_invalid_examples_are_each_reported() -> None:
    """examples/traces/invalid.jsonl has five bad records and one valid trace."""
    items = list(load_traces([EXAMPLES / "invalid.jsonl"]))
    valid = [i for i in items if isinstance(i, TraceItem)]
    bad_lines = {i.location.line for i in items if isinstance(i, Problem)}
    assert len(valid) == 1
    assert bad_lines == {1, 2, 3, 4, 5}


def test_a_repeated_id_is_a_located_warning_and_both_traces_load(tmp_path: Path) -> None:
    """A duplicate trace id is said (a warning at the second one's line), not hidden or dropped."""
    path = tmp_path / "t.jsonl"
    same = json.dumps(trace_json(trace_id="kp:trace:same"))
    path.write_text(f"{same}\n{json.dumps(trace_json(trace_id='kp:trace:other'))}\n{same}\n")
    items = list(load_traces([path]))
    warnings = [i for i in items if isinstance(i, Problem)]
    assert [i.trace.id for i in items if isinstance(i, TraceItem)] == [
        "kp:trace:same",
        "kp:trace:other",
        "kp:trace:same",
    ]
    assert [(w.warning, w.location.line, w.path) for w in warnings] == [(True, 3, "id")]
    assert str(warnings[0]).startswith(f"{path}:3: warning: id: the id 'kp:trace:same' appeared")


def test_progress_counts_every_byte_read(tmp_path: Path) -> None:
    """The progress callback sees the whole file, record by record."""
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps(trace_json(trace_id=f"kp:trace:{n}")) + "\n" for n in range(3))
    )
    seen: list[int] = []
    assert len(list(load_traces([path], progress=seen.append))) == 3
    assert len(seen) == 3
    assert sum(seen) == path.stat().st_size


def test_a_nan_then_a_broken_record_costs_only_its_line(tmp_path: Path) -> None:
    """A record with a NaN (or a repeated key) and then a syntax error is one located problem."""
    lines = [
        json.dumps(trace_json(trace_id="kp:trace:a")),
        '{"a": NaN, "b": "trunc',
        '{"a": 1, "a": 2, "b": [tr',
        json.dumps(trace_json(trace_id="kp:trace:b")),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    items = list(load_traces([path]))
    assert [i.trace.id for i in items if isinstance(i, TraceItem)] == ["kp:trace:a", "kp:trace:b"]
    assert [str(i).split(": ")[0:2] for i in items if isinstance(i, Problem)] == [
        [f"{path}:2", "invalid JSON"],
        [f"{path}:3", "invalid JSON"],
    ]


def test_a_repeated_key_keeps_its_last_value_in_a_trace(tmp_path: Path) -> None:
    """A key given twice keeps the last value, as JSON.parse does, with a warning naming it."""
    text = json.dumps(trace_json(trace_id="kp:trace:a"))
    path = tmp_path / "t.jsonl"
    path.write_text(text.replace('"task": {', '"task": {"objective": "first", ', 1) + "\n")
    warning, loaded = load_traces([path])
    assert isinstance(warning, Problem)
    assert warning.warning
    assert "the key 'objective' appears twice" in warning.message
    assert isinstance(loaded, TraceItem)
    assert loaded.trace.task.objective == trace_json()["task"]["objective"]


def test_a_json_list_broken_midway_keeps_the_traces_before_the_break(tmp_path: Path) -> None:
    """Elements stream one by one: those before a syntax error load; the error names its line."""
    traces = [json.dumps(trace_json(trace_id=f"kp:trace:{n}")) for n in range(3)]
    path = tmp_path / "t.json"
    path.write_text("[\n" + ",\n".join(traces) + ',\n{"a": NaN, "b": "trunc\n]\n')
    items = list(load_traces([path]))
    assert [i.trace.id for i in items if isinstance(i, TraceItem)] == [
        "kp:trace:0",
        "kp:trace:1",
        "kp:trace:2",
    ]
    assert [str(i.location) for i in items if isinstance(i, TraceItem)] == [
        f"{path}[0]",
        f"{path}[1]",
        f"{path}[2]",
    ]
    problem = items[-1]
    assert isinstance(problem, Problem)
    assert str(problem).startswith(f"{path}:5: invalid JSON: ")


@given(
    st.text(max_size=8),
    st.sampled_from(["\ud83d", "\udc4b", "\udfff\ud800"]),
    st.text(max_size=8),
)
def test_a_lone_surrogate_made_in_python_reads_as_in_a_file(
    tmp_path_factory: pytest.TempPathFactory, before: str, lone: str, after: str
) -> None:
    """A value from json.loads keeps a lone surrogate; it reads as U+FFFD with a warning, as
    the same escape in a file does, and the trace is kept (it was refused)."""
    document = trace_json(objective=f"{before}{lone}{after}")
    in_memory = list(trace_items([Record(Location("rows", None, 0), document)]))
    path = tmp_path_factory.mktemp("lone") / "lone.jsonl"
    path.write_text(json.dumps(document), encoding="ascii")  # the escapes, as a file has them
    from_file = list(load_traces([path]))
    assert [type(item) for item in in_memory] == [type(item) for item in from_file]
    read = [item.trace.task.objective for item in in_memory if isinstance(item, TraceItem)]
    assert read == [item.trace.task.objective for item in from_file if isinstance(item, TraceItem)]
    assert len(read) == 1
    assert [p.message for p in in_memory if isinstance(p, Problem)] == [LONE_SURROGATE]


def test_a_folder_loads_as_its_trace_files_named_and_leaves_its_tables_out(
    tmp_path: Path,
) -> None:
    """A folder's JSON and JSON Lines files, at any depth, in path order; a table in it is a
    dataset's, for the sources to read, not a trace file's problem."""
    import shutil

    (tmp_path / "b").mkdir()
    shutil.copy(EXAMPLES / "traces.jsonl", tmp_path / "b" / "traces.jsonl")
    shutil.copy(EXAMPLES / "finance-tsmc.json", tmp_path / "a.json")
    shutil.copy(EXAMPLES.parent / "datasets" / "hermes.parquet", tmp_path / "rows.parquet")
    by_folder = list(load_traces(tmp_path))
    assert by_folder == list(load_traces([tmp_path / "a.json", tmp_path / "b" / "traces.jsonl"]))
    traces = [item for item in by_folder if isinstance(item, TraceItem)]
    assert len(traces) == 1 + len((EXAMPLES / "traces.jsonl").read_text().splitlines())


def test_another_formats_record_among_traces_is_one_problem() -> None:
    """A record with neither @context nor @type is one problem naming its keys; a record that
    says it is a trace (@type) is still told each field it lacks."""
    row = Record(Location("f.jsonl", 2), {"messages": [], "id": "r1"})
    broken = Record(Location("f.jsonl", 3), {"@type": "ReasoningTrace"})
    found = [item for item in trace_items([row, broken], instead="") if isinstance(item, Problem)]
    assert [str(problem) for problem in found if problem.location.line == 2] == [
        "f.jsonl:2: not a ReasoningTrace: it has neither @context nor @type (its keys: id, "
        "messages), so it is a record of another format"
    ]
    assert sum(problem.location.line == 3 for problem in found) > 1
