"""smolagents' memory as chat messages (its benchmark's rows): read back as the run's steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources.smolagents import _files as smol_files
from knowledgepulse.sources.smolagents import _messages
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import convert_file

RETRY = (
    "\nNow let's retry: take care not to repeat previous errors! If you have retried several "
    "times, try a completely different approach.\n"
)


def said(role: str, text: str) -> dict[str, Any]:
    """One message as ``ChatMessage.dict()`` writes it in ``write_memory_to_messages()``."""
    return {
        "role": role,
        "content": [{"type": "text", "text": text}],
        "tool_calls": None,
        "raw": None,
        "token_usage": None,
    }


def calling(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    """A step's ``tool-call`` message: ``Calling tools:`` and the Python repr of its calls."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return said("tool-call", "Calling tools:\n" + str([call]))


def raised(code: str) -> dict[str, Any]:
    """What a ToolCallingAgent's step whose tool raised leaves: its error, nothing else."""
    return said(
        "tool-response",
        f"Error:\nError executing tool 'python_interpreter' with arguments {{'code': {code!r}}}: "
        "InterpreterError: Import from sympy is not allowed.\nPlease try again or use another "
        "tool\n",
    )


def row(messages: list[dict[str, Any]], answer: str, question: str = "What is 1+1?") -> str:
    """A smolagents benchmark row (``examples/smolagents_benchmark/run.py``) as a JSON line."""
    return json.dumps(
        {
            "model_id": "gpt-4o",
            "agent_action_type": "tool-calling",
            "question": question,
            "original_question": question,
            "answer": answer,
            "true_answer": "2",
            "source": "MATH",
            "intermediate_steps": [
                said("system", "You are an expert assistant..."),
                said("user", f"New task:\n{question}"),
                *messages,
            ],
            "start_time": 1753350000.0,
            "end_time": "2025-07-24 10:00:00",
            "token_counts": {"input": 0, "output": 0},
        }
    )


def answered(answer: str, call_id: str = "call_9") -> list[dict[str, Any]]:
    return [
        said("assistant", f"Tool call {call_id}: calling 'final_answer'"),
        calling("final_answer", {"answer": answer}, call_id),
        said("tool-response", f"Observation:\n{answer}"),
    ]


def read(tmp_path: Path, *lines: str) -> list[TraceItem | Problem]:
    path = tmp_path / "gpt-4o__tool-calling__math.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return convert_file(path)  # recognised by its content, as a user runs kp


def test_a_tool_that_raised_is_a_failed_call_and_the_next_call_its_recovery(
    tmp_path: Path,
) -> None:
    """A ToolCallingAgent step whose tool raised keeps only its error: the call it names is a
    tool call that failed (not an error of no tool), and the model's next call recovers it."""
    messages = [
        raised("import sympy"),
        said("assistant", "Tool call call_2: calling 'python_interpreter'"),
        calling("python_interpreter", {"code": "1 + 1"}, "call_2"),
        said("tool-response", "Observation:\nStdout:\n\nOutput: 2"),
        *answered("2"),
    ]
    (item,) = read(tmp_path, row(messages, "2"))
    assert isinstance(item, TraceItem)
    trace = item.trace
    assert trace.task.objective == "What is 1+1?"
    calls = [step for step in trace.steps if step.tool is not None and step.type != "observation"]
    assert [(step.type, step.tool.name) for step in calls if step.tool] == [
        ("tool_call", "python_interpreter"),
        ("error_recovery", "python_interpreter"),
    ]
    assert calls[0].input == {"code": "import sympy"}
    assert "Import from sympy is not allowed" in (trace.steps[1].content or "")
    assert trace.outcome.result_summary == "2"
    assert trace.metadata.success is True


def test_a_run_out_of_steps_ends_in_a_terminal_error_and_the_rows_answer(tmp_path: Path) -> None:
    """``Error:\\nReached max steps.`` ends the run: it failed, its answer the forced one."""
    messages = [
        said("assistant", "Thought: search.\n<code>\nprint(web_search('x'))\n</code>"),
        calling("python_interpreter", "print(web_search('x'))", "call_1"),
        said("tool-response", "Observation:\nExecution logs:\nnothing\nLast output: None"),
        said("tool-response", "Error:\nReached max steps." + RETRY),
    ]
    (item,) = read(tmp_path, row(messages, "Probably 42."))
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.success is False
    assert item.trace.outcome.result_summary == "Probably 42."
    assert not any(step.type == "error_recovery" for step in item.trace.steps)


def test_a_code_parsing_error_is_an_error_the_next_code_recovers(tmp_path: Path) -> None:
    messages = [
        said("assistant", "Thought: it is 2."),
        said("tool-response", "Error:\nError in code parsing:\nno <code> blob" + RETRY),
        said("assistant", "Thought: code.\n<code>\nfinal_answer(2)\n</code>"),
        calling("python_interpreter", "final_answer(2)", "call_2"),
        said("tool-response", "Observation:\nExecution logs:\nLast output from code snippet:\n2"),
    ]
    (item,) = read(tmp_path, row(messages, "2"))
    assert isinstance(item, TraceItem)
    assert [step.type for step in item.trace.steps].count("error_recovery") == 1
    assert item.trace.metadata.success is True  # the code called final_answer


def test_unreadable_calls_are_a_located_problem_and_the_other_rows_convert(
    tmp_path: Path,
) -> None:
    broken = [said("tool-call", "Calling tools:\n[<ToolCall object at 0x7f>]")]
    items = read(tmp_path, row(broken, "?"), row(answered("2"), "2"))
    problem, item = items
    assert isinstance(problem, Problem)
    assert isinstance(item, TraceItem)
    assert ":1: intermediate_steps[2].content: expected 'Calling tools:' and a list" in str(problem)


@pytest.mark.parametrize(
    ("role", "found"),
    [
        (["tool-call"], "a list"),
        ({"name": "assistant"}, "an object with keys name"),
        ("tool", "'tool'"),  # OpenAI's name for smolagents' tool-response
        (None, "null"),
    ],
)
def test_a_message_of_no_smolagents_role_is_a_problem_at_its_path_and_the_others_convert(
    tmp_path: Path, role: Any, found: str
) -> None:
    """A message whose ``role`` is none of smolagents' is told at its path, and the other rows
    convert (before: a list gave TypeError, every row lost, found by bench/fuzz_loaders.py
    --structured; then every odd role gave "not a smolagents step" for the whole row)."""
    odd = json.loads(row(answered("2"), "2"))
    odd["intermediate_steps"][3]["role"] = role
    item, problem = read(tmp_path, row(answered("2"), "2"), json.dumps(odd))
    assert isinstance(item, TraceItem)
    assert isinstance(problem, Problem)
    assert problem.location.line == 2
    assert ":2: intermediate_steps[3].role: expected one of ['assistant', " in str(problem)
    assert str(problem).endswith(f"found {found}")


def test_a_message_that_is_no_object_is_a_problem_at_its_path(tmp_path: Path) -> None:
    odd = json.loads(row(answered("2"), "2"))
    odd["intermediate_steps"][2] = "Tool call call_9"
    item, problem = read(tmp_path, row(answered("2"), "2"), json.dumps(odd))
    assert isinstance(item, TraceItem)
    assert ":2: intermediate_steps[2]: expected a message {role, content}, found a string" in str(
        problem
    )


def test_a_run_that_raised_before_any_step_is_its_error_not_an_answer(tmp_path: Path) -> None:
    """The benchmark keeps ``str(e)`` as the answer of a run that raised (no message): that
    text is the run's error, and the run failed."""
    error = "Error in generating model output:\nlitellm.AuthenticationError: bad key"
    (item,) = read(tmp_path, row([], error)[:0] + _no_steps(error))
    assert isinstance(item, TraceItem)
    assert item.trace.task.objective == "What is 1+1?"
    assert item.trace.metadata.success is False
    assert item.trace.outcome.result_summary != error
    assert any(error in (step.content or "") for step in item.trace.steps)


def test_runs_that_raised_at_once_on_two_questions_are_two_traces(tmp_path: Path) -> None:
    """No message tells them apart: their questions do (one id for both was a repeated run)."""
    first, second = read(tmp_path, _no_steps("AuthError"), _no_steps("AuthError", "What is 2+2?"))
    assert isinstance(first, TraceItem)
    assert isinstance(second, TraceItem)
    assert first.trace.id != second.trace.id


def _no_steps(answer: str, question: str = "What is 1+1?") -> str:
    value = json.loads(row([], answer, question))
    value["intermediate_steps"] = []
    return json.dumps(value)


def test_recognised_by_its_messages_not_other_rows() -> None:
    chat = {"messages": [{"role": "user", "content": "hi"}], "question": "q", "answer": "a"}
    openai_steps = {"intermediate_steps": [{"role": "function", "content": "x"}]}
    assert smol_files.recognises(json.loads(row(answered("2"), "2")))
    assert not smol_files.recognises(chat)
    assert not smol_files.recognises(openai_steps | {"question": "q", "answer": "a"})


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_every_call_is_a_tool_call_in_order_whether_it_raised_or_not(
    raises: list[bool],
) -> None:
    """The tools kp reads are the calls the model asked for, in order: one that raised (only
    its error names it) as well as one that ran; each raised one's result is an error."""
    messages: list[dict[str, Any]] = []
    for number, fails in enumerate(raises):
        code = f"print({number})"
        if fails:
            messages.append(raised(code))
        else:
            messages.append(calling("python_interpreter", {"code": code}, f"call_{number}"))
            messages.append(said("tool-response", f"Observation:\n{number}"))
    line = row([*messages, *answered("done")], "done")
    record = Record(value=json.loads(line), location=Location(file="rows.jsonl", line=1))
    items = list(smol_files.convert_records([record], TraceOptions()))
    (item,) = items
    assert isinstance(item, TraceItem)
    calls = [
        step
        for step in item.trace.steps
        if step.type in ("tool_call", "error_recovery") and step.tool is not None
    ]
    assert [step.input for step in calls] == [
        {"code": f"print({number})"} for number in range(len(raises))
    ]
    failed = [
        "Error executing tool" in (step.content or "")
        for step in item.trace.steps
        if step.type == "observation"
    ]
    assert failed == raises


def test_a_tool_error_full_of_brace_colons_is_parsed_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each ``}: `` tried as the end of the arguments parses the text up to it: an error of
    many (a huge repr that does not read back) is tried a few times, not once each (a square);
    the tool's name is still read."""
    calls: list[str] = []

    def counted(source: str) -> Any:
        calls.append(source)
        return None

    monkeypatch.setattr(_messages, "_literal", counted)
    found = _messages._failed_call("Error executing tool 'x' with arguments {'a': (" + "}: " * 5000)
    assert found == {"tool_calls": [{"function": {"name": "x", "arguments": None}}]}
    assert 0 < len(calls) <= _messages._TRIED_ENDS


def test_the_lines_tool_calling_agent_appends_a_call_are_no_thought(tmp_path: Path) -> None:
    """Since 1.20 ToolCallingAgent appends to a step's model output a line a call it ran
    (``Tool call <id>: calling '<name>' with arguments: {...}``): its own restatement of the
    call. Before, each was a thought of the model's; the model's own words before them stay."""
    arguments = {"query": "Deshayes retirement"}
    appended = f"Tool call call_1: calling 'web_search' with arguments: {arguments}"
    messages = [
        said("assistant", f"I will search for it.\n{appended}"),
        calling("web_search", arguments, "call_1"),
        said("tool-response", "Observation:\nHe retired in 1842."),
        said(
            "assistant",
            "Tool call call_9: calling 'final_answer' with arguments: {'answer': '1842'}",
        ),
        calling("final_answer", {"answer": "1842"}, "call_9"),
        said("tool-response", "Observation:\n1842"),
    ]
    (item,) = read(tmp_path, row(messages, "1842"))
    assert isinstance(item, TraceItem)
    steps = [(step.type, step.content) for step in item.trace.steps if step.tool is None]
    assert steps == [("thought", "I will search for it."), ("thought", "1842")]
    assert item.trace.outcome.result_summary == "1842"
