"""Gemini CLI session files (``~/.gemini/tmp/<project>/chats/session-*.json``) as traces.

The files are the conformance corpus's real ones (tests/conformance/files/gemini-cli, origins and
licences in SOURCES.md there); a variant changes one message of a real file to reach a rule it
does not show. The facts files cover objectives, tools, recoveries and answers; these tests the
steps themselves.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import convert
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, source_of

GEMINI = Path(__file__).parents[1] / "conformance" / "files" / "gemini-cli"
AUDIT = GEMINI / "agentcmd_session-2025-10-27T19-55-981c87cb.json"
"""Three requests: a cancelled shell call, a failed ``list_directory`` retried."""
REFUSED = GEMINI / "agentcmd_session-2025-10-29T10-39-a63242d9.json"
"""One call, refused (``Tool "write_file" not found in registry``), and the session ends."""
READ = GEMINI / "agentcmd_session-2025-10-29T10-36-9c9a14e1.json"
"""One ``read_file``, then the answer."""
NO_TOOL = GEMINI / "agent_history_gemini_2.5_flash.json"
"""One thought and the answer, no call (texts redacted by its project)."""
API_ERRORS = GEMINI / "aim_control_flash_api_errors.json"
"""Three ``[API Error: ...]`` messages and ``info`` notices before the model runs."""


def session(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text())
    assert isinstance(document, dict)
    return document


def one_trace(items: list[TraceItem | Problem]) -> ReasoningTrace:
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    return item.trace


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_failed_call_is_an_error_observation_and_its_retry_the_recovery() -> None:
    """``status: error``: the observation carries ``response.error``; the next call recovers."""
    trace = one_trace(convert_file(AUDIT))
    failed = next(
        n for n, step in enumerate(trace.steps) if step.content == "Path must be absolute: ."
    )
    assert kinds(trace)[failed - 1 : failed + 1] == [
        ("error_recovery", "list_directory"),  # itself the next action after the cancelled call
        ("observation", "list_directory"),
    ]
    after = [step for step in trace.steps[failed + 1 :] if step.type != "thought"]
    assert (after[0].type, after[0].tool and after[0].tool.name) == (
        "error_recovery",
        "list_directory",
    )


def test_a_call_the_user_cancelled_is_an_error() -> None:
    """``status: cancelled``: the call gave no result; what the CLI told the model is the error."""
    trace = one_trace(convert_file(AUDIT))
    cancelled = [step for step in trace.steps if "[Operation Cancelled]" in (step.content or "")]
    assert [(step.type, step.tool and step.tool.name) for step in cancelled] == [
        ("observation", "run_shell_command")
    ]
    assert sum(step.type == "error_recovery" for step in trace.steps) == 2


def test_a_session_that_ends_in_a_failed_call_failed_with_no_answer() -> None:
    """Nothing after the refused call: a terminal error, no recovery, no result, no success."""
    trace = one_trace(convert_file(REFUSED))
    assert kinds(trace)[-2:] == [("tool_call", "write_file"), ("observation", "write_file")]
    assert "not found in registry" in (trace.steps[-1].content or "")
    assert not any(step.type == "error_recovery" for step in trace.steps)
    assert trace.metadata.success is False


def test_a_session_with_no_tool_call_is_its_thought_and_its_answer() -> None:
    """A thought summary (subject, then description) is a thought; the text the answer."""
    trace = one_trace(convert_file(NO_TOOL))
    assert [(step.type, step.content) for step in trace.steps] == [
        ("thought", "Generating Specific Response\n\n[REDACTED_THOUGHT]"),
        ("thought", "[REDACTED_ASSISTANT_TEXT]"),
    ]
    assert trace.outcome.result_summary == "[REDACTED_ASSISTANT_TEXT]"
    assert trace.metadata.success is True


def test_a_calls_result_is_its_observation_and_the_session_keeps_its_model() -> None:
    """The ``functionResponse`` output follows the call; ``args`` are the call's input."""
    item = next(i for i in convert_file(READ) if isinstance(i, TraceItem))
    trace = item.trace
    call = next(step for step in trace.steps if step.type == "tool_call")
    assert call.input == {"absolute_path": "/private/tmp/gemini-test/sample.txt"}
    observation = trace.steps[trace.steps.index(call) + 1]
    assert (observation.type, observation.content) == (
        "observation",
        "test content from gemini research\n",
    )
    assert trace.id == "kp:trace:9c9a14e1-2b8f-443b-8cec-61516ff39741"
    assert source_of(item)["model"] == "gemini-2.5-pro"


def test_api_errors_are_errors_and_the_clis_notices_no_step() -> None:
    """An ``error`` message is an error outside a tool; ``info`` (``Model set to``) is nothing."""
    trace = one_trace(convert_file(API_ERRORS))
    texts = [step.content or "" for step in trace.steps]
    assert texts.count("[API Error: Requested entity was not found.]") == 3
    assert not any(text.startswith(("Model set to", "This request failed")) for text in texts)
    assert trace.task.objective == "hello"


def test_what_gemini_cli_writes_as_the_user_is_not_the_objective() -> None:
    """The ``<session_context>`` it injects before the user's first message is no request."""
    document = session(READ)
    first = document["messages"][0]
    injected = {**first, "id": "c", "content": [{"text": "<session_context>\nThis is the CLI."}]}
    document["messages"] = [injected, *document["messages"]]
    trace = one_trace(list(convert([document], source="gemini-cli")))
    assert trace.task.objective == first["content"]
    assert not any("session_context" in (step.content or "") for step in trace.steps)


def test_a_later_user_message_is_the_users_reply() -> None:
    """A request after the first is the user answering the model: a ``respond`` observation."""
    trace = one_trace(convert_file(AUDIT))
    replies = [
        step.content
        for step in trace.steps
        if step.type == "observation" and step.tool and step.tool.name == "respond"
    ]
    assert replies == [
        "python",
        "can you audit this codebase and provide me with detailed suggestions for improvement?",
    ]


def test_a_message_that_is_no_object_is_a_located_problem() -> None:
    """A broken message names its JSON path and what a message holds; no trace, no traceback."""
    document = copy.deepcopy(session(READ))
    document["messages"][1] = "gemini said"
    (problem,) = list(convert([document], source="gemini-cli"))
    assert isinstance(problem, Problem)
    assert problem.path == "messages[1]"
    assert "expected {id, timestamp, type: user|gemini|info|warning|error" in problem.message


def test_a_document_of_another_shape_read_as_gemini_cli_says_what_it_expected() -> None:
    """``--from gemini-cli`` on something else: the problem says what a session file holds."""
    (problem,) = list(convert([{"messages": []}], source="gemini-cli"))
    assert isinstance(problem, Problem)
    assert "not a Gemini CLI session" in problem.message
    assert "~/.gemini/tmp/*/chats/session-*.json" in problem.message
