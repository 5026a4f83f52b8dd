"""Inspect AI evaluation logs (``.json``, and the zipped ``.eval``) as traces: a trace per sample
and epoch.

The files are the conformance corpus's real ones (tests/conformance/files/inspect-ai, origins and
licences in SOURCES.md there); a variant changes one part of a real log to reach a rule it does
not show. The facts files cover objectives, tools, answers and labels; these tests the rest.
"""

from __future__ import annotations

import copy
import importlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.records import Problem
from knowledgepulse.records.readers import input_files
from knowledgepulse.sources._inspect import inspect_file
from knowledgepulse.sources._sessions.inspect_ai import score_value
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, recognise, source_of

INSPECT = Path(__file__).parents[1] / "conformance" / "files" / "inspect-ai"
BROWSER = INSPECT / "browser.json"
"""gpt-4o-mini browses with four tool calls, then answers; scored ``C``."""
POPULARITY = INSPECT / "log_formats.json"
"""One sample, no tool: the model answers ``No``; scored ``I``."""
STREAMING = INSPECT / "log_streaming.eval"
"""Two samples, two epochs each, in the zipped form (members in the order the run wrote them)."""
HUMAN = INSPECT / "metr_hawk_pr_arena_human_agent.eval"
"""A person's run through Inspect's ``human_agent()``: the messages hold the input alone, the
output says ``Done``; scored 1."""


def log(path: Path = BROWSER) -> dict[str, Any]:
    document = json.loads(path.read_text())
    assert isinstance(document, dict)
    return document


def written(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    return path


def items(tmp_path: Path, document: dict[str, Any]) -> list[TraceItem | Problem]:
    return convert_file(written(tmp_path, document))


def traces(tmp_path: Path, document: dict[str, Any]) -> list[ReasoningTrace]:
    found = items(tmp_path, document)
    assert [item for item in found if isinstance(item, Problem) and not item.warning] == []
    return [item.trace for item in found if isinstance(item, TraceItem)]


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_an_evaluation_log_is_recognised_by_its_content() -> None:
    """A log's ``version``, ``status`` and ``eval.task`` tell it: no ``--from`` is needed."""
    assert recognise(log()) == "inspect-ai"
    assert recognise({"status": "success", "version": 2, "samples": []}) is None


def test_a_failed_tool_call_is_an_error_and_the_next_call_its_recovery(tmp_path: Path) -> None:
    """A tool message with ``error`` set is an error observation carrying the error's message;
    the agent's next call is its ``error_recovery``."""
    document = log()
    messages = document["samples"][0]["messages"]
    messages[2]["error"] = {"type": "timeout", "message": "Command timed out"}
    (trace,) = traces(tmp_path, document)
    failed = next(n for n, s in enumerate(trace.steps) if s.content == "Command timed out")
    assert kinds(trace)[failed - 1 : failed + 2] == [
        ("tool_call", "web_browser_go"),
        ("observation", "web_browser_go"),
        ("error_recovery", "web_browser_click"),
    ]


def test_a_tool_message_without_an_error_is_no_failure_whatever_it_says(tmp_path: Path) -> None:
    """Inspect says which calls failed: a result whose text starts ``Error:`` but has no
    ``error`` is the tool's output, and nothing recovers from it."""
    document = log()
    document["samples"][0]["messages"][2]["content"] = "Error: the page says it moved"
    (trace,) = traces(tmp_path, document)
    assert not any(step.type == "error_recovery" for step in trace.steps)


def test_a_sample_that_failed_ends_in_its_error_and_fails(tmp_path: Path) -> None:
    """A sample's ``error`` (the solver raised) ends its trace, which fails whatever its score."""
    document = log()
    sample = document["samples"][0]
    sample["messages"] = sample["messages"][:5]  # died after the second call's result
    sample["error"] = {"message": "RuntimeError('sandbox died')", "traceback": ""}
    (trace,) = traces(tmp_path, document)
    assert trace.metadata.success is False
    assert trace.steps[-1].type == "observation"
    assert "sandbox died" in str(trace.steps[-1].content)


def test_each_epoch_of_a_sample_is_a_trace_of_one_task(tmp_path: Path) -> None:
    """Two epochs of sample 1: two traces, ``<run_id>:<id>:<epoch>``, one task between them."""
    document = log(POPULARITY)
    again = copy.deepcopy(document["samples"][0])
    again["epoch"] = 2
    again["scores"]["match"]["value"] = "C"
    document["samples"].append(again)
    found = [item for item in items(tmp_path, document) if isinstance(item, TraceItem)]
    assert [item.trace.id for item in found] == [
        "kp:trace:BpiPFmbVcMCRUAXv8ovCTx:1:1",
        "kp:trace:BpiPFmbVcMCRUAXv8ovCTx:1:2",
    ]
    assert [item.task for item in found] == ["popularity/1", "popularity/1"]
    assert [item.trace.metadata.success for item in found] == [False, True]
    assert [source_of(item)["epoch"] for item in found] == [1, 2]


def test_a_bad_sample_is_a_problem_at_its_json_path_and_the_others_are_read(
    tmp_path: Path,
) -> None:
    """A tool call with no function's name is located inside its sample; the next sample is
    still a trace."""
    document = log(POPULARITY)
    broken = copy.deepcopy(document["samples"][0])
    broken["messages"][2]["tool_calls"] = [{"id": "call_1", "arguments": {}}]
    document["samples"].insert(0, broken)
    found = items(tmp_path, document)
    (problem,) = [item for item in found if isinstance(item, Problem)]
    assert problem.path == "samples[0].messages[2].tool_calls[0].function.name"
    assert "expected a tool name" in problem.message
    assert len([item for item in found if isinstance(item, TraceItem)]) == 1


@pytest.mark.parametrize("tool_calls", [2**64, {"id": "call_1"}])
def test_tool_calls_that_are_no_list_are_a_problem_at_their_path(
    tmp_path: Path, tool_calls: Any
) -> None:
    """A number or an object where the list of calls belongs: the sample is unread, said where."""
    document = log()
    document["samples"][0]["messages"][5]["tool_calls"] = tool_calls
    (problem,) = items(tmp_path, document)
    assert isinstance(problem, Problem)
    assert problem.path == "samples[0].messages[5].tool_calls", problem.message


def test_a_log_that_ended_in_an_error_warns_on_each_sample(tmp_path: Path) -> None:
    """``status: error`` with samples logged: each is read, with a warning naming the error."""
    document = log()
    document["status"] = "error"
    document["error"] = {"message": "ProcessLookupError()", "traceback": ""}
    (item,) = [item for item in items(tmp_path, document) if isinstance(item, TraceItem)]
    assert any("ended in an error (ProcessLookupError())" in text for text in item.warnings)


def test_a_log_with_no_sample_is_a_problem_that_says_why(tmp_path: Path) -> None:
    """An error before any sample, or ``log_samples=False``: no trace, a problem saying so."""
    document = log()
    document["status"], document["samples"] = "error", None
    (problem,) = items(tmp_path, document)
    assert isinstance(problem, Problem)
    assert "ended in an error before it logged a sample" in problem.message
    document["status"] = "success"
    (problem,) = items(tmp_path, document)
    assert isinstance(problem, Problem)
    assert "log_samples=False" in problem.message


def test_a_log_of_an_empty_dataset_says_nothing_was_run(tmp_path: Path) -> None:
    """A dataset of no sample (``eval.dataset.samples`` 0, as Langtrace's example logged an empty
    one) ran nothing: the problem says so, not that samples went unlogged."""
    document = log(VERSION_1)
    document["eval"]["dataset"]["samples"], document["samples"] = 0, None
    (problem,) = items(tmp_path, document)
    assert isinstance(problem, Problem)
    assert "dataset held no sample" in problem.message
    assert "log_samples=False" not in problem.message


@pytest.mark.parametrize(
    ("value", "number"),
    [("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), (True, 1.0), ("yes", 1.0), ("0.7", 0.7)],
)
def test_a_score_reads_as_inspect_reads_it(value: Any, number: float) -> None:
    """Inspect's letters, booleans, yes/no words and numeric text, as ``value_to_float``."""
    assert score_value(value) == number


def test_a_score_of_many_values_gives_no_outcome() -> None:
    """A dict of values (one scorer's several metrics) is no single outcome."""
    assert score_value({"accuracy": 1}) is None
    assert score_value("maybe") is None


@given(st.floats(min_value=-10, max_value=10, allow_nan=False))
def test_a_numeric_score_succeeds_at_half_or_above(tmp_path_factory: Any, value: float) -> None:
    """A number is the reward; the sample succeeded when it is 0.5 or more."""
    document = log(POPULARITY)
    document["samples"][0]["scores"]["match"]["value"] = value
    (trace,) = traces(tmp_path_factory.mktemp("score"), document)
    assert trace.metadata.success is (value >= 0.5)


def test_kp_inspect_says_what_the_log_was_read_as() -> None:
    """``kp inspect``: the source, the task, model and status, and the fields each part is from."""
    inspection = inspect_file(BROWSER)
    assert inspection.source == "inspect-ai"
    assert "task 'browser', model openai/gpt-4o-mini, status success" in str(inspection.read_as)
    assert inspection.trace_id == "kp:trace:Ta3ZFVTCTcjsb3AEX9FD9v:1:1"


def test_a_zipped_log_reads_as_the_json_log_of_the_same_run() -> None:
    """``log_formats.eval`` and ``log_formats.json`` are one run in Inspect's two forms: the same
    traces, field for field."""
    zipped = convert_file(INSPECT / "log_formats.eval")
    assert [item.trace for item in zipped if isinstance(item, TraceItem)] == [
        item.trace for item in convert_file(POPULARITY) if isinstance(item, TraceItem)
    ]


def test_a_zipped_logs_samples_come_in_inspects_order_by_epoch_then_id() -> None:
    """The zip holds them as they finished (2:2, 2:1, 1:1, 1:2); Inspect's reader, and kp, sort
    them by epoch, then id."""
    found = convert_file(STREAMING)
    ids = [item.trace.id.rsplit(":", 2)[1:] for item in found if isinstance(item, TraceItem)]
    assert ids == [["1", "1"], ["2", "1"], ["1", "2"], ["2", "2"]]


def rezipped(tmp_path: Path, leave_out: str = "", replaced: dict[str, bytes] | None = None) -> Path:
    """``log_streaming.eval`` zipped again without one member, or with some replaced."""
    path = tmp_path / "run.eval"
    with zipfile.ZipFile(STREAMING) as source, zipfile.ZipFile(path, "w") as target:
        for name in source.namelist():
            if name != leave_out:
                target.writestr(name, (replaced or {}).get(name) or source.read(name))
    return path


def test_a_log_still_running_is_read_from_its_journal_and_warns(tmp_path: Path) -> None:
    """No ``header.json`` yet (the run is going, or crashed): the start journal is the header and
    the status ``started``, as Inspect reads it; each sample is read, with the status's warning."""
    found = convert_file(rezipped(tmp_path, leave_out="header.json"))
    read = [item for item in found if isinstance(item, TraceItem)]
    assert len(read) == 4
    for item in read:
        assert "the evaluation did not finish (status 'started')" in " ".join(item.warnings)


def test_a_sample_member_that_is_not_json_is_a_problem_naming_it(tmp_path: Path) -> None:
    """One broken sample costs that sample: the problem names the zip and the member."""
    broken = {"samples/2_epoch_1.json": b'{"id": 2, "epo'}
    found = convert_file(rezipped(tmp_path, replaced=broken))
    (problem,) = [item for item in found if isinstance(item, Problem) and not item.warning]
    assert str(problem).startswith(
        f"{tmp_path / 'run.eval'}: samples/2_epoch_1.json: is not a JSON"
    )
    assert sum(isinstance(item, TraceItem) for item in found) == 3


def test_a_folder_of_logs_reads_the_zipped_ones_too(tmp_path: Path) -> None:
    """``kp score logs/``: Inspect's log folder holds ``.eval`` files by default."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.eval").write_bytes(STREAMING.read_bytes())
    (tmp_path / "logs" / "notes.txt").write_text("not a log")
    assert input_files([tmp_path / "logs"]) == [tmp_path / "logs" / "run.eval"]


def test_a_sample_whose_input_is_two_user_messages_asks_with_both(tmp_path: Path) -> None:
    """An input of several messages (a document, then the question on it): the request is both,
    a blank line apart, not a reply of the user's to an agent that has not spoken."""
    document = log(POPULARITY)
    messages = document["samples"][0]["messages"]
    first = next(n for n, message in enumerate(messages) if message["role"] == "user")
    messages.insert(first + 1, {"role": "user", "content": "Answer Yes or No."})
    (trace,) = traces(tmp_path, document)
    assert trace.task.objective == f"{messages[first]['content']}\n\nAnswer Yes or No."
    assert all(step.tool is None or step.tool.name != "respond" for step in trace.steps)


def test_a_damaged_sample_member_is_a_problem_naming_it_and_the_others_are_read(
    tmp_path: Path,
) -> None:
    """A zip damaged inside one member's compressed data (a bad block, a bad CRC): that member
    cannot be read, and says so; the log's other samples are read (before: zlib's error, a crash
    of the whole file)."""
    path = rezipped(tmp_path)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/2_epoch_1.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for at in range(start + 10, start + info.compress_size - 10, 7):
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    _only_the_sample_unread(path)


ZSTD = INSPECT / "inspect_rl_tldr_rollout_zstd.eval"
"""inspect_ai 0.3.211's ``.eval``: every member packed with Zstandard (zip method 93)."""


def test_a_log_packed_with_zstandard_reads_its_samples() -> None:
    """Before: ``header.json: cannot be read (That compression method is not supported)`` and
    no trace (Python's zipfile unpacks method 93 from 3.14 on); now each sample is a trace."""
    with zipfile.ZipFile(ZSTD) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}
    found = convert_file(ZSTD)
    assert not [item for item in found if isinstance(item, Problem)]
    traces = [item.trace for item in found if isinstance(item, TraceItem)]
    assert len(traces) == 4
    assert all(trace.task.objective.startswith("SUBREDDIT: r/") for trace in traces)
    assert all(trace.metadata.success is False for trace in traces)  # rewards below 0.5


def test_a_zstandard_log_without_the_package_says_how_to_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where neither this Python nor an installed package unpacks Zstandard, each member is a
    problem that says what to install or how to give the log as JSON."""
    real = importlib.import_module

    def without_zstandard(name: str, package: str | None = None) -> Any:
        if name == "zstandard":
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", without_zstandard)
    found = convert_file(ZSTD)
    problems = [str(item) for item in found if isinstance(item, Problem) and not item.warning]
    assert problems
    assert problems[0].startswith(f"{ZSTD}: header.json: cannot be read (")
    assert "pip install zstandard" in problems[0]
    assert "inspect log convert --to json" in problems[0]


def test_a_zstandard_member_whose_data_is_damaged_is_a_problem_naming_it(tmp_path: Path) -> None:
    """A bad block in one Zstandard sample costs that sample, as a deflated one's does."""
    path = tmp_path / "damaged.eval"
    data = bytearray(ZSTD.read_bytes())
    with zipfile.ZipFile(ZSTD) as archive:
        info = archive.getinfo("samples/2_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for at in range(start + 20, start + info.compress_size - 10, 5):
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    _only_the_sample_unread(path)


def test_a_zstandard_member_bigger_than_its_archive_says_is_a_problem_unpacked_no_further(
    tmp_path: Path,
) -> None:
    """A member that unpacks past the size its archive gives (a bomb, or a damaged archive) is
    read one byte past that size, never whole, and is a problem naming it."""
    member = b"samples/2_epoch_1.json"
    data = bytearray(ZSTD.read_bytes())
    # The central directory's entry of the member: its uncompressed size 24 bytes in, its name
    # 46 bytes in (what zipfile reads, PKWARE's APPNOTE 4.3.12).
    entry = next(
        at
        for at in range(len(data))
        if data[at : at + 4] == b"PK\x01\x02" and data[at + 46 : at + 46 + len(member)] == member
    )
    data[entry + 24 : entry + 28] = (100).to_bytes(4, "little")
    path = tmp_path / "bomb.eval"
    path.write_bytes(bytes(data))
    assert "size" in str(_only_the_sample_unread(path))


def _only_the_sample_unread(path: Path) -> Problem:
    """The one problem of a log whose sample ``2_epoch_1`` was damaged: it names that member,
    and the log's other 3 samples are read."""
    found = convert_file(path)
    (problem,) = [item for item in found if isinstance(item, Problem) and not item.warning]
    assert str(problem).startswith(f"{path}: samples/2_epoch_1.json: cannot be read (")
    assert sum(isinstance(item, TraceItem) for item in found) == 3
    return problem


def test_a_sample_the_human_agent_answered_has_its_output_as_its_one_step() -> None:
    """Inspect's human agent sets the sample's output without adding it to the messages: the
    output's message (no ``completion`` field written) is the answer, the one step there is."""
    found = convert_file(HUMAN)
    (item,) = [each for each in found if isinstance(each, TraceItem)]
    assert [(step.type, step.content) for step in item.trace.steps] == [("thought", "Done")]
    assert item.trace.outcome.result_summary == "Done"
    assert item.trace.metadata.success is True


def test_an_output_with_no_completion_field_is_its_first_choices_text(tmp_path: Path) -> None:
    """Logs leave ``completion`` out (``ModelOutput`` fills it in from its first choice): a
    sample whose messages hold no model turn answers with that choice's text."""
    document = log(POPULARITY)
    sample = document["samples"][0]
    assert "completion" not in sample["output"], "the real log writes no completion"
    sample["messages"] = [m for m in sample["messages"] if m["role"] != "assistant"]
    (trace,) = traces(tmp_path, document)
    said = sample["output"]["choices"][0]["message"]["content"]
    assert trace.outcome.result_summary == (said if isinstance(said, str) else said[0]["text"])


def test_a_call_id_reused_in_a_later_turn_names_a_new_call(tmp_path: Path) -> None:
    """A model that reuses the id of its call before (gpt-oss served by vLLM does): the result
    after each call is its own, so the call that worked is no failure because the later one
    failed, and only the action after the failure is a recovery."""
    document = log()
    messages = document["samples"][0]["messages"]
    first = messages[3]["tool_calls"][0]["id"]
    messages[5]["tool_calls"][0]["id"] = messages[6]["tool_call_id"] = first
    messages[6]["error"] = {"type": "unknown", "message": "Element not found"}
    (trace,) = traces(tmp_path, document)
    calls = [step.type for step in trace.steps if step.type in ("tool_call", "error_recovery")]
    assert calls == ["tool_call", "tool_call", "tool_call", "error_recovery"]


VERSION_1 = INSPECT / "langtrace_security_guide_v1_critique_incorrect.json"
"""A log of version 1 (inspect_ai 0.3.14, Langtrace's example): its one sample's ``score`` is
``I``, the improved answer graded incorrect."""


def test_a_version_1_logs_one_score_is_its_label(tmp_path: Path) -> None:
    """Version 1 keeps the one scorer's ``Score`` as ``score``: ``I`` fails the sample, though it
    ends in its answer (before, the score went unread and the sample passed); ``C`` passes it."""
    document = log(VERSION_1)
    assert "scores" not in document["samples"][0]
    (trace,) = traces(tmp_path, document)
    assert trace.outcome.result_summary.startswith("Improved Answer:")
    assert trace.metadata.success is False
    document["samples"][0]["score"]["value"] = "C"
    (trace,) = traces(tmp_path, document)
    assert trace.metadata.success is True


def test_scores_win_over_a_score_where_a_sample_has_both(tmp_path: Path) -> None:
    """``scores`` is the later format's field: where it is there, ``score`` is not read."""
    document = log(POPULARITY)
    document["samples"][0]["score"] = {"value": "C"}
    (trace,) = traces(tmp_path, document)
    assert trace.metadata.success is False


GPT5_EPOCHS = INSPECT / "inspect_flow_gpqa_diamond_gpt5_4_epochs.eval"
"""gpt-5 answers one GPQA question in four epochs; each reply opens with OpenAI's encrypted
reasoning (``redacted``), its readable ``summary`` beside it."""


def test_redacted_reasoning_is_the_thought_its_summary_says() -> None:
    """The encrypted ``reasoning`` is no thought; the ``summary`` beside it is."""
    with zipfile.ZipFile(GPT5_EPOCHS) as archive:
        sample = json.loads(archive.read("samples/rec06pnAkLOr2t2mp_epoch_1.json"))
    part = sample["messages"][1]["content"][0]
    assert part["type"] == "reasoning"
    assert part["redacted"] is True
    first = next(item.trace for item in convert_file(GPT5_EPOCHS) if isinstance(item, TraceItem))
    assert [step.content for step in first.steps] == [
        part["summary"],
        sample["messages"][1]["content"][1]["text"],
    ]
    assert not any(part["reasoning"] in (step.content or "") for step in first.steps)


def test_unredacted_reasoning_is_its_own_text_not_its_summary(tmp_path: Path) -> None:
    """Reasoning in the clear is the thought as it is; a summary of it adds nothing."""
    document = log(POPULARITY)
    reply = next(m for m in document["samples"][0]["messages"] if m["role"] == "assistant")
    answer = reply["content"] if isinstance(reply["content"], str) else reply["content"][0]["text"]
    reply["content"] = [
        {
            "type": "reasoning",
            "reasoning": "Weigh the two.",
            "summary": "Weighed.",
            "redacted": False,
        },
        {"type": "text", "text": answer},
    ]
    (trace,) = traces(tmp_path, document)
    assert [step.content for step in trace.steps][:2] == ["Weigh the two.", answer]
