"""``inspect_file``: the source, the field each part of the first trace came from, and its records.

The mapping is checked against the conversion itself: the value at each field ``inspect_file``
names, read from the raw record, is the converted trace's value, on the first file of each
folder of the conformance corpus and on every bundled example.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from knowledgepulse.errors import InputFileError
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.runs.read import read_items
from knowledgepulse.sources import (
    Inspection,
    RowOptions,
    Source,
    inspect_file,
    read,
    register_source,
)
from knowledgepulse.sources._chat._text import json_or_python
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources._inspect import (
    CONTINUED_REQUEST,
    HANDED_TO,
    HOSTED,
    JOINED,
    KEPT_RECORDS,
    UNSEEN,
    Part,
)
from knowledgepulse.sources._registry import get_source, unregister_source
from knowledgepulse.sources.openai_agents._items import transfer_tool
from knowledgepulse.trace import TraceItem
from tests.paths import REPO
from tests.sources.helpers import INSPECTED, first_trace


def _raw(path: Path) -> dict[int, Any]:
    """The file's records as the record reader gives them, by index (no source involved)."""
    return {
        record.location.index or 0: record.value
        for record in read_records(path)
        if isinstance(record, Record)
    }


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _found_at(records: dict[int, Any], part: Part) -> Any:
    """The value at the place a part says it came from, read from the raw records."""
    assert part.origin is not None, f"{part.name}: no origin"
    found = _at(records[part.origin.record], part.origin.path)
    if part.origin.inside is not None:
        # JSON text, of JSON text again in a Langfuse export, or a Python repr
        while isinstance(found, str) and (parsed := json_or_python(found)) is not None:
            found = parsed
        found = _at(found, part.origin.inside)
    return found


def _value_at(records: dict[int, Any], part: Part) -> str:
    """The text at the place a part says it came from, read from the raw records."""
    return " ".join(str(_found_at(records, part)).split())


def _part(inspection: Inspection, name: str) -> Part:
    return next(part for part in inspection.parts if part.name == name)


def _folded(text: str) -> str:
    return " ".join(text.split()).removesuffix("…").rstrip()


def _cases() -> Iterator[Any]:
    for path, source in INSPECTED.items():
        yield pytest.param(path, source, id=str(path.relative_to(REPO)))


@pytest.mark.parametrize(("path", "source"), list(_cases()))
def test_inspect_names_the_source_that_reads_the_file(path: Path, source: str) -> None:
    """The source is the one detection picks, and the counts are those of reading the file."""
    inspection = inspect_file(path)
    items = list(read([path]))
    assert inspection.source == source
    assert inspection.traces == sum(isinstance(item, TraceItem) for item in items)
    assert inspection.errors == sum(
        isinstance(item, Problem) and not item.warning for item in items
    )
    assert inspection.evidence


def _traced_cases() -> list[Any]:
    """The cases whose file gives a trace (the corpus's OTLP files hold no GenAI span: their
    source and counts are checked above, and the examples' OTLP file gives one)."""
    return [case for case in _cases() if first_trace(case.values[0]) is not None]


@pytest.mark.parametrize(("path", "source"), _traced_cases())
def test_the_objective_field_named_holds_the_converted_objective(path: Path, source: str) -> None:
    """Read from the raw record at the place named, the objective is the trace's objective."""
    item = first_trace(path)
    assert item is not None
    inspection = inspect_file(path)
    objective = _part(inspection, "objective")
    assert objective.value == item.trace.task.objective
    if objective.origin is None:  # no record holds the user's words: the reader said why,
        # or the file goes on past the records looked in
        assert objective.note in (*item.warnings, UNSEEN)
        return
    shown = _value_at(_raw(path), objective)
    wanted = _folded(item.trace.task.objective)
    if (objective.note or "").startswith(JOINED):  # the place named is the first text joined
        assert wanted.startswith(shown)
        assert wanted != shown
        return
    if objective.note == CONTINUED_REQUEST:  # the first of the user's turns is the place named
        wanted = _folded(item.trace.task.objective.partition("\n\n")[0])
    assert (
        (wanted in shown)
        if objective.origin and objective.origin.within
        else (shown.startswith(wanted))
    )


@pytest.mark.parametrize(("path", "source"), _traced_cases())
def test_the_tool_and_answer_fields_named_hold_the_converted_values(
    path: Path, source: str
) -> None:
    """The first tool's name, the answer and the model are at the places named, where found.

    The tool is the first the run called: kp's ``respond`` (what was said to the user, and the
    user's reply) only where the run called none.
    """
    item = first_trace(path)
    assert item is not None
    inspection = inspect_file(path)
    records = _raw(path)
    steps = item.trace.steps
    tools = [s.tool.name for s in steps if s.tool and (s.tool.name != "respond" or s.input)]
    tools = tools or [step.tool.name for step in steps if step.tool is not None]
    tool = _part(inspection, "tool")
    assert tool.value == (tools[0] if tools else None)
    if tool.origin is not None:
        shown = _value_at(records, tool)
        if tool.note == HANDED_TO:  # the agent the handoff's tool is named after
            assert transfer_tool(shown) == tools[0]
        elif tool.origin.within:  # a call written in a text
            assert tools[0] in shown
        else:
            assert shown == tools[0]
    answer = _part(inspection, "answer")
    if answer.origin is not None and not answer.origin.within:
        found = _found_at(records, answer)
        if isinstance(found, str):
            assert _value_at(records, answer).startswith(_folded(item.trace.outcome.result_summary))
        else:  # an object the answer is the JSON text of (a structured output)
            assert found == orjson.loads(item.trace.outcome.result_summary)
    model = _part(inspection, "model")
    assert model.value == (item.trace.metadata.model_extra or {}).get("source", {}).get("model")
    if model.origin is not None:
        assert _value_at(records, model) == model.value


@pytest.mark.parametrize(
    ("path", "source"), [case for case in _cases() if "datasets" in str(case.values[0])]
)
def test_a_datasets_columns_named_hold_its_task_and_reward(path: Path, source: str) -> None:
    """The task and success columns named are those the rows' task and reward came from."""
    item = first_trace(path)
    assert item is not None
    assert item.row is not None
    inspection = inspect_file(path)
    task, success = _part(inspection, "task"), _part(inspection, "success")
    if task.field is None:  # no column named: the rows name no task
        assert item.task is None
    else:
        assert str(item.row.value[task.field]) == item.task
    if success.field is None:  # success is whether the conversation ends in an answer
        assert item.reward is None
    elif item.reward is not None:
        assert float(item.row.value[success.field]) == item.reward
    else:
        assert item.row.value[success.field] is item.trace.metadata.success


def test_the_columns_named_are_the_ones_the_user_gave() -> None:
    """A --task-field given is the task field shown, and the task read from it."""
    path = REPO / "examples" / "datasets" / "openai_chat.jsonl"
    options = TraceOptions(rows=RowOptions(task_field="repo"))
    inspection = inspect_file(path, options=options)
    assert _part(inspection, "task").field == "repo"
    assert _part(inspection, "task").value == "acme/widgets"


@pytest.mark.parametrize(
    ("name", "task_field", "task"),
    [
        ("traces/traces.jsonl", "metadata.framework", "langgraph"),
        ("datasets/openai_chat.jsonl", "kp_nothing_here", None),
    ],
)
def test_the_task_shown_is_the_one_select_reads(
    name: str, task_field: str, task: str | None
) -> None:
    """A --task-field that is a dotted path of a trace's JSON is the task shown, as select
    groups by it; before, a trace file's was shown as none (a trial of option combinations)."""
    path = REPO / "examples" / name
    options = TraceOptions(rows=RowOptions(task_field=task_field))
    (read_first,) = itertools.islice(read_items([path], task_field=task_field), 1)
    assert isinstance(read_first, TraceItem)
    assert read_first.task == task
    assert _part(inspect_file(path, options=options), "task").value == task


def test_a_record_no_source_knows_before_the_first_is_counted_as_unsure(tmp_path: Path) -> None:
    """Detection decides on a later record; the records before it are said."""
    row = (REPO / "examples" / "datasets" / "sharegpt.jsonl").read_text().splitlines()[0]
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"note": "a header line"}\n' + row + "\n")
    inspection = inspect_file(path)
    assert inspection.source == "sharegpt"
    assert inspection.decided_by == 1
    assert inspection.errors == 1


def test_a_file_no_source_recognises_is_an_input_error(tmp_path: Path) -> None:
    """No source knows the record: the error says so and names the sources to choose from."""
    path = tmp_path / "odd.json"
    path.write_text('{"colour": "blue"}')
    with pytest.raises(InputFileError, match=r"not a trace file this tool knows.*otlp"):
        inspect_file(path)


@pytest.fixture
def rival() -> Iterator[None]:
    """Two sources that both recognise ``{"rival": ...}`` records."""

    class Rival(Source):
        def recognises(self, value: Any) -> bool:
            return isinstance(value, dict) and "rival" in value

    register_source("rival-a")(type("RivalA", (Rival,), {}))
    register_source("rival-b")(type("RivalB", (Rival,), {}))
    yield
    unregister_source("rival-a")
    unregister_source("rival-b")


@pytest.mark.usefixtures("rival")
def test_a_file_two_sources_claim_names_both(tmp_path: Path) -> None:
    """Two sources recognise the record: the error names both and how to choose (source=)."""
    path = tmp_path / "rival.json"
    path.write_text('{"rival": 1}')
    with pytest.raises(InputFileError, match=r"rival-a: the plugin .*RivalA, rival-b: .*") as err:
        inspect_file(path)
    assert str(err.value).endswith("read it with, source='rival-a' or source='rival-b'")


def test_an_empty_file_is_inspected_as_no_record_and_no_source(tmp_path: Path) -> None:
    """A file with no record gives no trace, as read() gives none; no source is recognised."""
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    inspection = inspect_file(path)
    assert (inspection.source, inspection.records, inspection.traces) == (None, 0, 0)


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd")
def test_a_pipe_is_refused_as_standard_input_is() -> None:
    """``kp inspect <(cat FILE)`` was read twice: the second read found the pipe empty."""
    read_end, write_end = os.pipe()
    os.write(write_end, (REPO / "examples" / "traces" / "traces.jsonl").read_bytes()[:4096])
    os.close(write_end)
    try:
        with pytest.raises(InputFileError, match="standard input or a pipe cannot be"):
            inspect_file(f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)


def test_a_folder_is_refused_with_the_command_that_reads_one(tmp_path: Path) -> None:
    """A folder gave "is a directory; pass the files inside it"; a dataset's folder is read."""
    with pytest.raises(
        InputFileError, match=r"is a folder; inspect reads one file \(validate the folder"
    ):
        inspect_file(tmp_path)
    assert inspect_file(REPO / "examples" / "datasets" / "openai_chat_hf").traces


def test_a_named_source_is_explained_on_the_first_record_it_recognises(tmp_path: Path) -> None:
    """--from: the evidence is from the first record the source knows, not a stray line."""
    row = (REPO / "examples" / "datasets" / "sharegpt.jsonl").read_text().splitlines()[0]
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"note": "a header line"}\n' + row + "\n")
    inspection = inspect_file(path, source="sharegpt")
    assert inspection.named
    assert inspection.decided_by == 1
    assert inspection.evidence is not None
    assert inspection.evidence.startswith("column 'conversations' holds sharegpt turns")


def test_a_broken_plugins_warning_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A source whose recognises() raises is warned about once per record, not per question."""

    class Broken(Source):
        def recognises(self, value: Any) -> bool:
            raise RuntimeError("broken plugin")

    register_source("broken")(Broken)
    try:
        path = tmp_path / "trace.json"
        path.write_bytes((REPO / "examples" / "traces" / "finance-tsmc.json").read_bytes())
        with caplog.at_level("WARNING", logger="knowledgepulse"):
            inspect_file(path)
    finally:
        unregister_source("broken")
    said = [r.getMessage() for r in caplog.records if "'broken' (the plugin" in r.getMessage()]
    assert len(said) == 1
    assert "its recognises() raised RuntimeError: broken plugin (at tests/sources/" in said[0]


def test_a_plugins_evidence_or_mapping_that_raises_is_a_warning_not_a_crash(
    tmp_path: Path,
) -> None:
    """kp inspect still shows the file when a plugin's evidence() or mapping() has a bug."""

    class Lines(Source):
        def recognises(self, value: Any) -> bool:
            return isinstance(value, dict) and "line_run" in value

        def convert(self, records: Any, options: TraceOptions) -> Iterator[TraceItem | Problem]:
            return get_source("reasoning-trace").convert(
                (Record(r.location, r.value["line_run"]) for r in records), options
            )

        def evidence(self, value: Any) -> str:
            raise KeyError("evidence")

        def mapping(self, first: Any, options: TraceOptions) -> dict[str, str]:
            raise KeyError("mapping")

    trace = orjson.loads((REPO / "examples" / "traces" / "finance-tsmc.json").read_bytes())
    path = tmp_path / "lines.jsonl"
    path.write_bytes(orjson.dumps({"line_run": trace}) + b"\n")
    register_source("lines")(Lines)
    try:
        inspection = inspect_file(path)
    finally:
        unregister_source("lines")
    assert inspection.source == "lines"
    assert inspection.plugin == f"{__name__}.{Lines.__qualname__}"  # no package publishes it
    assert inspection.traces == 1
    assert inspection.evidence is None
    said = " ".join(inspection.warnings)
    assert "its evidence() raised KeyError: 'evidence' (at tests/sources/test_inspect.py:" in said
    assert "its mapping() raised KeyError: 'mapping'" in said


def test_the_tool_shown_is_the_first_the_run_called_not_kps_respond() -> None:
    """A Gemini CLI session whose first turns are the user retrying after API errors: its
    ``respond`` observations come first, but the tool shown is its first call, ``read_file``,
    found in the records."""
    path = REPO / "tests/conformance/files/gemini-cli/aim_control_flash_api_errors.json"
    tool = _part(inspect_file(path), "tool")
    assert tool.value == "read_file"
    assert tool.origin is not None
    assert _value_at(_raw(path), tool) == "read_file"


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("otel_contrib_openai_agents_handoff.json", "transfer_to_agenta"),
        ("otel_contrib_openai_agents_music_composer.json", "transfer_to_symphony_composer"),
    ],
)
def test_a_handoff_read_from_a_printed_call_is_found_in_its_text(name: str, tool: str) -> None:
    """The contrib OpenAI Agents instrumentation writes a handoff only as the SDK's
    ``ResponseFunctionToolCall(..., name='transfer_to_x', ...)`` text part: the tool is found
    there, as the other calls are at their spans. Before, "made by the source"."""
    path = REPO / "tests/conformance/files/otlp" / name
    part = _part(inspect_file(path), "tool")
    assert part.value == tool
    assert part.origin is not None
    assert part.origin.within
    shown = _at(
        orjson.loads(_at(_raw(path)[part.origin.record], part.origin.path)),
        part.origin.inside or (),
    )
    assert shown.startswith("ResponseFunctionToolCall(")
    assert f"name='{tool}'" in shown


def test_a_domain_given_is_said_as_the_python_setting_and_kps_option() -> None:
    """A Python caller was told of ``--domain``, an option of a command it never ran."""
    path = REPO / "examples" / "datasets" / "openai_chat.jsonl"
    inspection = inspect_file(path, options=TraceOptions(domain="finance"))
    (domain,) = [part for part in inspection.parts if part.name == "domain"]
    assert domain.value == "finance"
    assert domain.note == "given as a setting (options.domain; kp: --domain)"


@pytest.mark.parametrize(
    ("name", "tool", "agent"),
    [
        ("langsmith_sdk_handoff.jsonl", "transfer_to_handoff_agent", "Handoff Agent"),
        ("openllmetry_router_analytics_handoff_ingest.jsonl", "transfer_to_analytics_agent", None),
    ],
)
def test_a_handoffs_tool_is_found_where_the_agent_it_names_is(
    name: str, tool: str, agent: str | None
) -> None:
    """An Agents SDK ``handoff`` span names only the agent (``to_agent``); the reader names
    its tool ``transfer_to_<agent>`` as the SDK does. The place shown is the agent's name, and
    says so. Before, "made by the source"."""
    path = REPO / "tests/conformance/files/openai-agents" / name
    part = _part(inspect_file(path), "tool")
    assert part.value == tool
    assert part.origin is not None
    assert part.note == HANDED_TO
    shown = _value_at(_raw(path), part)
    assert transfer_tool(shown) == tool
    assert agent is None or shown == agent


@pytest.mark.parametrize(
    ("name", "tool", "written"),
    [
        ("hermes/hermes_function_calling_v1_card_examples.json", "search_flights", "<tool_call>"),
        ("sharegpt/adp_swe_smith_sample_sft.json", "execute_bash", "<function=execute_bash>"),
        ("openai-chat/openllmetry_llamaindex_react_agent_and_tools.jsonl", "multiply", "Action:"),
        (
            "conversation/reason_map_plus_924_areal_geo_edit_trajectory.json",
            "map_text_ocr",
            "<action>",
        ),
        ("cline/roo_code_leaf_write_and_run.json", "list_files", "<list_files>"),
    ],
)
def test_a_tool_called_in_a_text_is_found_in_that_text(name: str, tool: str, written: str) -> None:
    """A call the model wrote in its text (Hermes' tags, the ``<function=...>`` XML, ReAct's
    ``Action:``, ``<action>`` JSON, Cline's ``<list_files>``) is found in the text the reader
    read it from, not in a prompt that lists the tools. Before, "made by the source"."""
    path = REPO / "tests/conformance/files" / name
    part = _part(inspect_file(path), "tool")
    assert part.value == tool
    assert part.origin is not None
    assert part.origin.within
    shown = _value_at(_raw(path), part)
    assert written in shown
    assert tool in shown


def test_a_tool_call_kept_as_a_python_repr_is_found_inside_it() -> None:
    """A ShareGPT ``function-call`` turn holding ``{"name": ..., "arguments": '...'}`` (single
    quotes: no JSON) is looked into as the reader reads it; the name is found there whole."""
    path = REPO / "tests/conformance/files/sharegpt/function_calling_chatml_card_example.json"
    part = _part(inspect_file(path), "tool")
    assert part.value == "create_contact"
    assert part.origin is not None
    assert part.origin.inside == ("name",)
    assert _value_at(_raw(path), part) == "create_contact"


def test_an_objective_joined_from_text_parts_names_its_first_part() -> None:
    """A user message of text, an image, then text: the objective is the two texts joined on a
    new line. The place named is the first part, and the note says it was joined with the
    second. Before, "made by the source"."""
    path = (
        REPO
        / "tests/conformance/files/conversation/reason_map_plus_924_areal_geo_edit_trajectory.json"
    )
    part = _part(inspect_file(path), "objective")
    assert part.origin is not None
    assert (part.origin.record, part.origin.path) == (0, ("content", 0, "text"))
    assert part.note == f"{JOINED} record 1: content[2].text"
    assert (part.value or "").startswith(_value_at(_raw(path), part) + "\n")


def test_an_alpaca_request_names_its_instruction_joined_with_its_input() -> None:
    """An alpaca row's request is its ``instruction`` then its ``input`` on a new line: the
    same rule names the instruction, joined with the input."""
    path = REPO / "tests/conformance/files/alpaca/axolotl_alpaca.json"
    part = _part(inspect_file(path), "objective")
    assert part.origin is not None
    assert part.origin.path == ("instruction",)
    assert part.note == f"{JOINED} record 1: input"


def test_a_hosted_tools_call_is_found_at_its_items_type() -> None:
    """A Responses item ``{"type": "web_search_call"}`` names its tool only by its type; the
    reader's tool is ``web_search`` (the type less ``_call``). Before, "made by the source"."""
    path = (
        REPO
        / "tests/conformance/files/openai-responses"
        / "test_openai_responses_model_web_search_tool_with_allowed_domains.jsonl"
    )
    part = _part(inspect_file(path), "tool")
    assert part.value == "web_search"
    assert part.origin is not None
    assert part.origin.path[-1] == "type"
    assert part.note == HOSTED
    assert _value_at(_raw(path), part) == "web_search_call"


def test_an_answer_written_as_json_is_found_at_the_object_it_was_written_from() -> None:
    """A structured output's answer is the JSON text of its output tool's arguments, an object
    in the record: found there. Before, "made by the source"."""
    path = REPO / "tests/conformance/files/anthropic/test_anthropic_tool_output.jsonl"
    part = _part(inspect_file(path), "answer")
    assert part.origin is not None
    assert not part.origin.within
    assert part.origin.path[-1] == "input"
    assert _found_at(_raw(path), part) == orjson.loads(part.value or "")


def test_a_value_not_in_the_records_looked_in_of_a_longer_file_says_so() -> None:
    """A session longer than the records inspected ends with its answer past them: said as
    perhaps there, not only as made by the source."""
    path = REPO / "tests/conformance/files/claude-code/cursor_hack_cursor_agent_direct-sleep.jsonl"
    inspection = inspect_file(path)
    assert inspection.records > KEPT_RECORDS
    answer = _part(inspection, "answer")
    assert answer.origin is None
    assert answer.note == UNSEEN
    assert answer.value is not None
    past = [value for at, value in _raw(path).items() if at >= KEPT_RECORDS]
    assert any(answer.value in str(value) for value in past)


def test_a_row_file_past_the_records_looked_in_holds_its_first_trace_whole(
    tmp_path: Path,
) -> None:
    """A row is a trace: with more rows than inspect looks in, the first row's values not found
    are made by the source, not perhaps in the rows not looked in (those are other traces)."""
    path = REPO / "tests/conformance/files/smolagents/benchmark_code_gaia_gpt-4o.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    many = tmp_path / "rows.jsonl"
    many.write_text((first + "\n") * (KEPT_RECORDS + 50), encoding="utf-8")
    assert [part.note for part in inspect_file(many).parts] == [
        part.note for part in inspect_file(path).parts
    ]


def test_an_answer_written_as_a_text_is_found_at_that_text_before_an_equal_object() -> None:
    """Where a record holds the answer's text itself, that is its place, not an object elsewhere
    that the text writes as JSON."""
    path = REPO / "tests/conformance/files/otlp/any_agent_llama_index_trace.json"
    part = _part(inspect_file(path), "answer")
    assert part.origin is not None
    assert _found_at(_raw(path), part) == part.value
