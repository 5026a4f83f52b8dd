"""Reading defects the lead left open (leftovers D), each fixed by its format's own rule.

* The Anthropic Messages API's reply saved alone (``{"type": "message", "role": "assistant",
  "content": [blocks], "stop_reason", ...}``, AgentOps's fixtures) is Anthropic's: typed
  ``message`` as a Responses item is, but its text is a ``text`` block, which no Responses item
  holds (``input_text``, ``output_text``); it was read as an OpenAI run, or (with a
  ``tool_use`` block) claimed by both and not read.
* Aider's ``.aider.chat.history.md`` (Markdown for people, each run of the CLI opened by
  ``# aider chat started at <time>``, aider/io.py) is refused once, naming it, not as one
  "invalid JSON" error a line.
* Bedrock AgentCore's runtime log group: the application's own JSON log lines that come before
  the first span or log record (no source recognises them, so none decides the file) are left
  out with OTLP's one warning for the file, as those after it are, not refused one by one as
  "not a trace file".
* Qwen Code's ``qwen -p --output-format stream-json``: on the model's API failing, its JSON
  output adapter appends ``parseAndFormatApiError``'s text (``[API Error: ...]``) to the
  assistant message it builds; that text is the CLI's, read once as the error (not as a thought
  and again as the failed ``result``'s error).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import read
from knowledgepulse.sources._chat._row import ChatSource
from knowledgepulse.sources._registry import detect
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file, source_of

AGENTCORE = CORPUS / "otlp" / "agentcore_toolkit_strands_openai_cloudwatch.jsonl"
ANTHROPIC_REPLY = CORPUS / "conversation" / "sdk_reply_agentops_anthropic_message.json"

QWEN_STREAM_ERROR = CORPUS / "claude-code" / "qwen_code_0.24.4_stream_api_error.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _steps(path: Path) -> list[tuple[str, str | None]]:
    (item,) = [item for item in convert_file(path) if isinstance(item, TraceItem)]
    return [(step.type, step.content) for step in item.trace.steps]


def test_qwen_codes_api_error_text_is_read_once_as_the_error() -> None:
    error = "[API Error: 400 The model `qwen3-coder-plus` does not exist]"
    (item,) = [item for item in convert_file(QWEN_STREAM_ERROR) if isinstance(item, TraceItem)]
    steps = item.trace.steps
    assert [step.content for step in steps] == [error]
    assert steps[0].type != "thought"
    assert item.trace.metadata.success is False


def test_the_text_is_the_clis_only_in_qwen_codes_stream(tmp_path: Path) -> None:
    """Claude Code's stream writes no such text: a model's ``[API Error: ...]`` there is its own."""
    lines = _lines(QWEN_STREAM_ERROR)
    init = {k: v for k, v in lines[0].items() if k != "qwen_code_version"}
    init["claude_code_version"] = "2.1.7"
    path = _write(tmp_path / "claude.jsonl", [init, *lines[1:]])
    assert _steps(path)[0][0] == "thought"


def test_text_the_model_streamed_before_the_failure_stays_its_thought(tmp_path: Path) -> None:
    lines = _lines(QWEN_STREAM_ERROR)
    said = "Let me look.[API Error: 400 The model `qwen3-coder-plus` does not exist]"
    lines[2]["message"]["content"] = [{"type": "text", "text": said}]
    steps = _steps(_write(tmp_path / "partial.jsonl", lines))
    assert steps[0] == ("thought", said)


def _chat_formats(messages: list[Any]) -> list[str]:
    return [source.name for source in detect({"messages": messages}, ChatSource)]


def test_the_messages_apis_reply_alone_is_read_as_anthropics() -> None:
    (item,) = [item for item in read(ANTHROPIC_REPLY) if isinstance(item, TraceItem)]
    assert item.trace.metadata.framework == "anthropic"
    assert item.trace.outcome.result_summary == "The capital of France is Paris."


def test_the_messages_apis_reply_names_the_model(tmp_path: Path) -> None:
    """The reply's ``model`` is the trace's, saved alone or after the turns that asked for it;
    before, no model was read from a conversation's messages."""
    reply = json.loads(ANTHROPIC_REPLY.read_text())
    (alone,) = [item for item in read(ANTHROPIC_REPLY) if isinstance(item, TraceItem)]
    assert source_of(alone).get("model") == reply["model"] == "claude-3-opus-20240229"
    asked = {"role": "user", "content": "What is the capital of France?"}
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps([asked, reply]))
    (item,) = [item for item in read(path) if isinstance(item, TraceItem)]
    assert item.trace.task.objective == asked["content"]
    assert source_of(item).get("model") == reply["model"]


def test_a_cline_sdk_sessions_model_is_its_last_replys_model_info() -> None:
    """A Cline SDK session's assistant turns name their model by ``modelInfo.id`` (the user
    switched to another for the last "hello"); before, its traces named no model."""
    for path in (
        CORPUS / "anthropic" / "cline_sdk_session_messages.json",
        CORPUS / "openai-chat" / "cline_sdk_basic_compaction.json",
    ):
        said = [m for m in json.loads(path.read_text())["messages"] if m["role"] == "assistant"]
        (item,) = [item for item in read(path) if isinstance(item, TraceItem)]
        assert source_of(item).get("model") == said[-1]["modelInfo"]["id"], path.name


def test_a_reply_of_a_tool_use_block_is_anthropics_alone(tmp_path: Path) -> None:
    """Before, Anthropic (by its block) and Responses (by the type) both claimed it: unread."""
    reply = json.loads(ANTHROPIC_REPLY.read_text())
    reply["content"] = [{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}]
    reply["stop_reason"] = "tool_use"
    assert _chat_formats([reply]) == ["anthropic"]
    path = tmp_path / "reply.json"
    path.write_text(json.dumps(reply))
    (item,) = [item for item in read(path) if isinstance(item, TraceItem)]
    assert [step.type for step in item.trace.steps] == ["tool_call"]


def test_responses_messages_and_chat_parts_are_read_as_before() -> None:
    said = {"type": "output_text", "text": "Paris.", "annotations": []}
    typed = {"type": "message", "role": "assistant", "status": "completed", "content": [said]}
    assert _chat_formats([typed]) == ["openai-responses"]
    part = {"type": "text", "text": "Paris."}
    assert _chat_formats([{"role": "assistant", "content": [part]}]) == ["openai-chat"]


AIDER_HISTORY = (
    # As aider/io.py appends it: "\n# aider chat started at %Y-%m-%d %H:%M:%S\n\n", then the
    # chat (tool output quoted with "> ", the user's input as "#### " headings).
    "\n# aider chat started at 2025-10-20 21:49:17\n\n"
    "> You can skip this check with --no-gitignore  \n\n"
    "#### /add **  \n>  \n> ^C KeyboardInterrupt  \n\n"
    "# aider chat started at 2025-10-22 09:29:12\n\n"
    "> Aider v0.86.1  \n"
)


def _problems(path: Path) -> list[Problem]:
    items = list(read(path))
    assert not [item for item in items if isinstance(item, TraceItem)]
    return [item for item in items if isinstance(item, Problem)]


def test_aiders_chat_history_is_refused_once_by_name(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(AIDER_HISTORY)
    (problem,) = _problems(path)
    assert "Aider's chat history" in problem.message
    assert "not a trace file kp reads" in problem.message
    # Trimmed of its first blank line, it is read as a JSON document: refused alike.
    path.write_text(AIDER_HISTORY.lstrip())
    (problem,) = _problems(path)
    assert "Aider's chat history" in problem.message


def test_other_markdown_is_refused_line_by_line_as_before(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("\n# notes\n\nsome text\n")
    assert [problem.message.startswith("invalid JSON") for problem in _problems(path)] == [
        True,
        True,
    ]


APP_LINE = {
    "timestamp": "2025-11-18T07:43:54.057Z",
    "level": "INFO",
    "message": "Invocation completed successfully (16.847s)",
    "logger": "bedrock_agentcore.app",
    "requestId": "d42556b3-d415-4d87-88c8-62d44370b561",
    "sessionId": "cfd84bec-fec8-47a5-8a28-73b9aa5ee6c6",
}


def test_app_log_lines_before_the_first_span_are_left_out_as_those_after(
    tmp_path: Path,
) -> None:
    lines = AGENTCORE.read_text().splitlines()
    path = tmp_path / "log_group.jsonl"
    path.write_text("\n".join([json.dumps(APP_LINE), json.dumps(APP_LINE), *lines]) + "\n")
    items = list(read(path))
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    told = [item for item in items if isinstance(item, Problem) and "own log" in item.message]
    (warning,) = told
    assert warning.location.line == 1
    before = [i.trace.id for i in read(AGENTCORE) if isinstance(i, TraceItem)]
    assert [item.trace.id for item in items if isinstance(item, TraceItem)] == before


def test_a_line_no_source_knows_before_the_spans_is_still_refused(tmp_path: Path) -> None:
    lines = AGENTCORE.read_text().splitlines()
    path = tmp_path / "log_group.jsonl"
    path.write_text("\n".join([json.dumps({"note": "hello"}), *lines]) + "\n")
    errors = [item for item in read(path) if isinstance(item, Problem) and not item.warning]
    assert [error.message.startswith("not a span record") for error in errors] == [True]
