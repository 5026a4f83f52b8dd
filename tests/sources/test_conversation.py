"""A conversation saved as the model's API takes it (``json.dump(messages, f)``): one run.

The law: saved alone, a conversation reads as the dataset row holding it does (its steps, its
objective, its answer), in the format the whole conversation is in. Checked on the rows of the
real files of the corpus, then the shapes a saved list takes: JSON Lines of messages, lists of
conversations, a record that is no message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from knowledgepulse.cli.main import cli
from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import read
from knowledgepulse.sources._chat._row import ChatSource, _follower, conversation, messages_column
from knowledgepulse.sources._registry import detect
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from tests.sources.helpers import recognise, source_of
from tests.sources.weather import step_shape

CORPUS = Path(__file__).parents[1] / "conformance" / "files"
CHAT_FORMATS = ("openai-chat", "anthropic", "sharegpt", "hermes", "openai-responses", "gemini")
ROWS_A_FILE = 3  # the law is the same on every row; a few a file keep the test fast


def saved_conversations() -> list[Any]:
    """``(file, row, source, conversation)`` of the corpus's chat rows held in one column."""
    found = []
    for folder in CHAT_FORMATS:
        for path in sorted((CORPUS / folder).glob("*.json*")):
            if path.name.endswith(".facts.json"):
                continue
            rows = [r for r in read_records(path) if isinstance(r, Record)][:ROWS_A_FILE]
            for record in rows:
                held = _held_alone(record.value)
                if held is not None:
                    name = f"{folder}/{path.name}:{record.location.index}"
                    found.append(pytest.param(record.value, *held, id=name))
    return found


def _held_alone(row: Any) -> tuple[str, list[Any]] | None:
    """The source and conversation of a row whose one column holds all of it, else None."""
    found = detect(row, ChatSource) if isinstance(row, dict) else []
    if len(found) != 1:
        return None
    family = found[0]
    assert isinstance(family, ChatSource)
    column = messages_column(row, family)
    if any(field in row for field in family.system_fields):
        return None  # a system prompt beside the conversation: not in the list saved
    if column is None or _follower(row, column, family) is not None:
        return None
    turns = conversation(row[column])
    if not turns or detect({"messages": turns}, ChatSource) != [family]:
        return None  # a row's text columns made into turns (alpaca's): no list to save
    return family.name, turns


def read_item(path: Path, source: str = "auto") -> TraceItem:
    (item,) = [item for item in read([path], source=source) if isinstance(item, TraceItem)]
    return item


def read_one(path: Path, source: str = "auto") -> ReasoningTrace:
    return read_item(path, source).trace


def told(trace: ReasoningTrace) -> tuple[Any, ...]:
    """What the conversation itself says: the objective and the steps."""
    steps = [
        (step.type, step.content, step.tool.name if step.tool else None) for step in trace.steps
    ]
    return trace.task.objective, steps


@pytest.mark.parametrize(("row", "source", "turns"), saved_conversations())
def test_a_conversation_saved_alone_reads_as_the_row_holding_it(
    tmp_path: Path, row: dict[str, Any], source: str, turns: list[Any]
) -> None:
    """The same objective and steps; the answer too unless a column of the row labels success.

    Named (``--from conversation``): a ShareGPT agent's turn may be known only among the others,
    so its first alone need not be recognised; with ``auto`` the file is read as the same.
    """
    as_row = tmp_path / "row.jsonl"
    as_row.write_text(json.dumps(row) + "\n")
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps(turns))
    item = read_item(saved, "conversation")
    alone, in_row = item.trace, read_one(as_row)
    assert told(alone) == told(in_row)
    if alone.metadata.success == in_row.metadata.success:
        assert alone.outcome.result_summary == in_row.outcome.result_summary
    assert source_of(item)["format"] == source
    assert "row" not in source_of(item)  # no row: nothing of the file is written back
    assert item.row is None
    if recognise(turns[0]) is not None:  # Gemini contents: gemini-cli's /chat save, alike
        assert told(read_one(saved)) == told(alone)


def test_the_corpus_has_conversations_of_each_chat_format_to_save() -> None:
    sources = {param.values[1] for param in saved_conversations()}
    assert {"openai-chat", "anthropic", "sharegpt", "openai-responses"} <= sources


WEATHER = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "18C sunny"},
    {"role": "assistant", "content": "It is 18C and sunny in Paris."},
]

ANTHROPIC = [
    {"role": "user", "content": "Which file is there?"},  # alone: a Chat Completions message
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "ls", "input": {"path": "."}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It is a.txt."}]},
]


def test_a_saved_message_list_is_one_run_of_its_format(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(WEATHER))
    trace = read_one(path)
    assert trace.id == "kp:trace:chat:0"
    assert trace.task.objective == "What is the weather in Paris?"
    assert step_shape(trace) == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "It is 18C and sunny in Paris."
    assert trace.metadata.success is True
    assert recognise(WEATHER[0]) == "conversation"


def test_the_whole_conversation_decides_its_format_not_its_first_message(tmp_path: Path) -> None:
    path = tmp_path / "claude.jsonl"
    path.write_text("".join(json.dumps(message) + "\n" for message in ANTHROPIC))
    item = read_item(path)
    trace = item.trace
    assert source_of(item)["format"] == "anthropic"
    assert step_shape(trace) == [
        ("thought", None),
        ("tool_call", "ls"),
        ("observation", "ls"),
        ("thought", None),
    ]
    assert trace.outcome.result_summary == "It is a.txt."


def test_each_list_record_is_a_conversation_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(WEATHER) + "\n" + json.dumps(ANTHROPIC) + "\n")
    items = list(read([path]))
    assert [item.trace.metadata.framework for item in items if isinstance(item, TraceItem)] == [
        "openai",
        "anthropic",
    ]
    assert [item.location.line for item in items if isinstance(item, TraceItem)] == [1, 2]


def test_a_record_that_is_no_message_is_its_own_error_and_the_conversation_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([*WEATHER[:2], {"note": "saved by my agent"}, *WEATHER[2:]]))
    items = list(read([path]))
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    assert [(str(p.location), p.message) for p in problems] == [
        (f"{path}[2]", "expected a chat message, found an object with keys note")
    ]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    assert step_shape(trace) == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("thought", None),
    ]


def test_a_bad_message_is_reported_at_its_own_record(tmp_path: Path) -> None:
    broken = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": 7}],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([*WEATHER[:2], broken, *WEATHER[3:]]))
    (problem,) = [item for item in read([path]) if isinstance(item, Problem) and not item.warning]
    assert str(problem.location) == f"{path}[2]"
    assert problem.path.startswith("tool_calls[0]")


def test_annotating_a_saved_conversation_writes_its_trace_not_rows(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(WEATHER))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        cli, ["score", "--no-embedder", str(path), "--annotate", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    (written,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert written["@type"] == "ReasoningTrace"
    assert written["metadata"]["quality_score"] > 0


def test_a_list_of_gemini_contents_stays_gemini_clis_chat_save() -> None:
    content = {"role": "user", "parts": [{"text": "hi"}]}
    assert recognise(content) == "gemini-cli"


# Other APIs' and libraries' messages have a role and a content too, but keep their calls where
# no chat format kp reads looks: read as chat, the calls were lost without a word (a Converse
# conversation read as two thoughts). Each such message is now its own error, saying where.
FOREIGN = {
    "bedrock converse": (
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "ls"}}]},
        "content[0] is a part of keys toolUse, with no type",
    ),
    "haystack": (
        {"role": "assistant", "content": [{"tool_call": {"tool_name": "ls", "id": "c1"}}]},
        "content[0] is a part of keys tool_call, with no type",
    ),
    "open interpreter": (
        {"role": "assistant", "type": "code", "format": "python", "content": "print(1)"},
        'a message of type "code"',
    ),
    "assistants api": (
        {"role": "assistant", "content": [{"type": "text", "text": {"value": "4"}}]},
        "content[0]'s text is an object with keys value, not a string",
    ),
    "llamaindex": (
        {"role": "assistant", "blocks": [{"block_type": "text", "text": "4"}]},
        "a message with no content (its keys: blocks, role)",
    ),
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_a_message_of_another_apis_form_is_its_own_error(tmp_path: Path, name: str) -> None:
    message, reason = FOREIGN[name]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([*WEATHER, message]))
    items = list(read([path]))
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    assert [(str(p.location), p.message.split(": no chat format")[0]) for p in problems] == [
        (f"{path}[5]", reason)
    ]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    assert step_shape(trace)[0] == ("tool_call", "get_weather")  # the others are read


def test_a_list_record_holding_another_apis_message_says_which_and_reads_the_rest(
    tmp_path: Path,
) -> None:
    message, reason = FOREIGN["bedrock converse"]
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps([*WEATHER[:4], message, WEATHER[4]]) + "\n")
    items = list(read([path]))
    (problem,) = [item for item in items if isinstance(item, Problem) and not item.warning]
    assert problem.path == "[4]"
    assert problem.message.startswith(reason)
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    assert trace.outcome.result_summary == "It is 18C and sunny in Paris."


NANOBOT_HEADER = {
    "_type": "metadata",
    "key": "cli:direct",
    "created_at": "2026-03-08T14:53:54.118079",
    "updated_at": "2026-03-08T14:55:18.040289",
    "metadata": {},
    "last_consolidated": 0,
}


def test_a_session_header_names_the_run_and_says_when_it_began(tmp_path: Path) -> None:
    """nanobot's session file: a metadata line, then one message a line; no line unread."""
    path = tmp_path / "cli_direct.jsonl"
    state = {"_type": "provider_state", "state": {"kind": "openai_responses", "version": 1}}
    lines = [NANOBOT_HEADER, state, *WEATHER[1:]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    items = list(read([path]))
    assert not [item for item in items if isinstance(item, Problem) and not item.warning]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    assert trace.id == "kp:trace:cli:direct"
    assert trace.metadata.created_at.isoformat().startswith("2026-03-08T14:53:54")
    assert trace.task.objective == "What is the weather in Paris?"
    assert recognise(NANOBOT_HEADER) == "conversation"


def test_a_shell_result_ending_in_a_failed_exit_code_is_an_error_recovered_by_the_next_call(
    tmp_path: Path,
) -> None:
    """nanobot's ``exec`` tool ends a command's output with ``Exit code: N``: not 0, it failed."""

    def call(number: int, command: str) -> dict[str, Any]:
        arguments = json.dumps({"command": command})
        function = {"name": "exec", "arguments": arguments}
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{number}", "type": "function", "function": function}],
        }

    messages = [
        {"role": "user", "content": "List the skills."},
        call(1, "find skills -name SKILL.md"),
        {"role": "tool", "tool_call_id": "c1", "content": "STDERR:\nfind: bad\n\nExit code: 1"},
        call(2, "dir /b skills"),
        {"role": "tool", "tool_call_id": "c2", "content": "cron\nweather\n\nExit code: 0"},
        {"role": "assistant", "content": "cron and weather."},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    assert step_shape(read_one(path)) == [
        ("tool_call", "exec"),
        ("observation", "exec"),
        ("error_recovery", "exec"),
        ("observation", "exec"),
        ("thought", None),
    ]


def test_an_assistant_content_of_bare_strings_is_one_thought_not_two(tmp_path: Path) -> None:
    """harmony's messages (vLLM's fixtures) keep content as a list of strings: each string is
    text, read once; it was read again as reasoning."""
    messages = [
        {"role": "user", "content": "Find work."},
        {"role": "assistant", "channel": "analysis", "content": ["The user wants a search."]},
        {"role": "assistant", "channel": "final", "content": ["Found it."]},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    trace = read_one(path)
    assert [step.content for step in trace.steps] == ["The user wants a search.", "Found it."]


def test_a_harmony_message_sent_to_a_tool_is_the_models_call_of_it(tmp_path: Path) -> None:
    """gpt-oss's harmony messages (as vLLM's fixtures keep them): an assistant message whose
    ``recipient`` is ``functions.NAME`` calls NAME with its text; the ``tool`` message named so
    answers it. The call was a thought, and a call made of the result alone."""
    messages = [
        {"role": "user", "content": "Search for work."},
        {"role": "assistant", "channel": "analysis", "recipient": None, "content": ["Search."]},
        {
            "role": "assistant",
            "channel": "commentary",
            "recipient": "functions.file_search",
            "content": ['{"query":"work"}'],
        },
        {
            "role": "tool",
            "name": "functions.file_search",
            "channel": "commentary",
            "recipient": "assistant",
            "content": ['{"results": []}'],
        },
        {"role": "assistant", "channel": "final", "recipient": None, "content": ["None found."]},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    trace = read_one(path)
    assert step_shape(trace) == [
        ("thought", None),
        ("tool_call", "file_search"),
        ("observation", "file_search"),
        ("thought", None),
    ]
    assert trace.steps[1].input == {"query": "work"}
    assert trace.outcome.result_summary == "None found."


def test_an_older_session_header_without_a_key_is_still_the_header(tmp_path: Path) -> None:
    """nanobot's earlier sessions: ``{"_type": "metadata", "created_at": ...}``, no key."""
    path = tmp_path / "cli_direct.jsonl"
    header = {"_type": "metadata", "created_at": "2026-02-19T14:31:15.994215", "metadata": {}}
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *WEATHER[1:]]))
    items = list(read([path]))
    assert not [item for item in items if isinstance(item, Problem) and not item.warning]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    assert trace.id == "kp:trace:cli_direct:1"  # the file's: no key names the session


def test_a_reply_that_closes_a_think_block_it_never_opened_began_inside_it(
    tmp_path: Path,
) -> None:
    """Qwen3's and DeepSeek-R1's templates open ``<think>`` in the prompt: the reply holds only
    ``...</think>answer`` (nanobot's sessions keep it so). The answer was all of it, tag too."""
    messages = [
        {"role": "user", "content": "Howdy"},
        {"role": "assistant", "content": "A greeting: reply briefly.</think>Howdy! What's up?"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    trace = read_one(path)
    assert [step.content for step in trace.steps] == [
        "A greeting: reply briefly.",
        "Howdy! What's up?",
    ]
    assert trace.outcome.result_summary == "Howdy! What's up?"


UNREAD = [  # a part of a type no chat format has (an agent's own): its call is not in the trace
    {"role": "user", "content": [{"type": "text", "text": "List files"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "toolUse", "toolUseId": "t1", "name": "shell", "input": {}},
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Two."}]},
]


def test_content_parts_no_chat_format_has_are_said_not_dropped_unseen(tmp_path: Path) -> None:
    """A call in a part of an agent's own kind is missing from the trace: the trace says so
    (before, a plausible trace of two thoughts, exit 0, no word). goose's messages, which kp
    read so before, are the goose source's now (tests/sources/test_goose.py)."""
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(UNREAD))
    item = read_item(path)
    assert step_shape(item.trace) == [("thought", None), ("thought", None)]
    assert item.warnings == (
        "content parts of a type no chat format kp reads ('toolUse' in message(s) 1) are not "
        "read: what they hold (a call, its result) is not in the trace",
    )
    images = [{"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": "?"}]}]
    path.write_text(json.dumps([*images, {"role": "assistant", "content": "A cat."}]))
    # A picture is passed over knowingly, and said once: a training row will not have it.
    assert read_item(path).warnings == (
        "image_url content parts are not kept: a trace holds the text, so a training row "
        "written from it (--to messages) has none of them",
    )


@pytest.mark.parametrize(
    "picture",
    [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},  # Chat
        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},  # Anthropic
    ],
)
def test_a_file_of_rows_with_pictures_says_once_that_they_are_not_kept(
    tmp_path: Path, picture: dict[str, Any]
) -> None:
    """Training rows written from such a dataset have no pictures: said once for the file,
    every row still read."""
    path = tmp_path / "vision.jsonl"
    rows = [
        {
            "messages": [
                {"role": "user", "content": [picture, {"type": "text", "text": f"What is {n}?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": f"A cat, {n}."}]},
            ]
        }
        for n in range(3)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    found = list(read(path))
    said = [item.message for item in found if isinstance(item, Problem)]
    assert said == [
        f"{picture['type']} content parts are not kept: a trace holds the text, so a training "
        "row written from it (--to messages) has none of them"
    ]
    assert len([item for item in found if not isinstance(item, Problem)]) == 3


def test_an_images_column_is_said_once_not_kept_as_content_parts_are() -> None:
    """LLaMA-Factory's multimodal demo lists its pictures in an ``images`` column, the text
    marking each ``<image>``: the training rows have none of them (before, said of content
    parts only: this file converted with no word of its 8 pictures)."""
    found = list(read(CORPUS / "openai-chat" / "mllm_demo.json"))
    said = [item.message for item in found if isinstance(item, Problem)]
    assert said == [
        "the images column of the rows is not kept: a trace holds the text, so a training row "
        "written from it (--to messages) has none of them"
    ]
    assert len([item for item in found if not isinstance(item, Problem)]) == 6


def test_a_content_part_whose_type_is_no_text_is_said_not_a_crash(tmp_path: Path) -> None:
    """A part whose ``type`` is an object (found by bench/fuzz_pipelines.py, seed 4511)."""
    path = tmp_path / "odd.json"
    odd = [{"type": {}}, {"type": "text", "text": "Hi"}]
    path.write_text(
        json.dumps([{"role": "user", "content": odd}, {"role": "assistant", "content": "Hello."}])
    )
    assert read_item(path).trace.task.objective == "Hi"


def test_kimi_cli_context_marks_are_passed_over_and_its_system_prompt_is_the_system_message(
    tmp_path: Path,
) -> None:
    """Kimi CLI's context file: its ``_checkpoint`` and ``_usage`` records are no message, its
    ``_system_prompt`` the system message it sends; the run reads as the plain messages do."""
    system: Any = WEATHER[0]
    rest: list[Any] = WEATHER[1:]
    kimi: list[Any] = [
        {"role": "_system_prompt", "content": system["content"]},
        {"role": "_checkpoint", "id": 0},
    ]
    for number, message in enumerate(rest):
        kimi += [message, {"role": "_usage", "token_count": 100 + number}]
        if message["role"] == "tool":
            kimi.append({"role": "_checkpoint", "id": number})
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "context.jsonl"
    plain.write_text("".join(json.dumps(line) + "\n" for line in WEATHER))
    marked.write_text("".join(json.dumps(line) + "\n" for line in kimi))
    items = list(read([marked]))
    assert not [item for item in items if isinstance(item, Problem)]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    (expected,) = [item.trace for item in read([plain]) if isinstance(item, TraceItem)]
    assert trace.task == expected.task
    assert trace.id == "kp:trace:context:0"  # named after the line the run begins at
    assert trace.steps == expected.steps
    assert trace.outcome == expected.outcome
    assert recognise({"role": "_checkpoint", "id": 0}) == "conversation"
    assert recognise({"role": "_system_prompt", "content": "You are Kimi."}) == "conversation"


def test_kimi_cli_think_parts_are_the_thoughts_it_sends_as_reasoning(tmp_path: Path) -> None:
    """Kimi CLI keeps its model's reasoning as ``think`` parts of the assistant's content: each
    a thought before the message's text and calls (kp dropped them, warning of a part type no
    chat format kp reads); a part whose reasoning is only ``encrypted`` gives none."""
    shell = {"name": "Shell", "arguments": '{"command": "git diff --stat"}'}
    call = {"id": "Shell:0", "type": "function", "function": shell}
    thinking = [
        {"type": "think", "think": "Look at the diff first.", "encrypted": None},
        {"type": "text", "text": "Checking the diff."},
    ]
    lines: list[Any] = [
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "Summarise the change."},
        {"role": "assistant", "content": thinking, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "Shell:0", "content": "1 file changed"},
        {"role": "_usage", "token_count": 120},
        {"role": "assistant", "content": [{"type": "think", "think": "", "encrypted": "opaque"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "One file changed."}]},
    ]
    path = tmp_path / "context.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item,) = read([path])
    assert isinstance(item, TraceItem)
    assert [(step.type, step.content) for step in item.trace.steps] == [
        ("thought", "Look at the diff first."),
        ("thought", "Checking the diff."),
        ("tool_call", 'Shell {"command":"git diff --stat"}'),
        ("observation", "1 file changed"),
        ("thought", "One file changed."),
    ]
    assert item.warnings == ()


def test_think_parts_keep_the_reasoning_a_message_holds_already(tmp_path: Path) -> None:
    """A message with its own ``reasoning_content`` and ``think`` parts keeps both (the message's
    first), and one whose think parts hold no text keeps its own: none is lost to the parts."""
    parts: list[dict[str, Any]] = [
        {"type": "think", "think": "", "encrypted": "opaque"},
        {"type": "text", "text": "Four."},
    ]
    lines: list[Any] = [
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "reasoning_content": "Add them.", "content": parts},
    ]
    path = tmp_path / "context.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item,) = read([path])
    assert isinstance(item, TraceItem)
    assert [(step.type, step.content) for step in item.trace.steps] == [
        ("thought", "Add them."),
        ("thought", "Four."),
    ]
    parts[0] = {"type": "think", "think": "Carry nothing.", "encrypted": None}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item,) = read([path])
    assert isinstance(item, TraceItem)
    assert item.trace.steps[0].content == "Add them.\nCarry nothing."
    parts[0] = {"type": "think", "think": "Add them.", "encrypted": None}  # written both ways
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (item,) = read([path])
    assert isinstance(item, TraceItem)
    assert item.trace.steps[0].content == "Add them."


def test_kimi_cli_real_context_file_reads_every_line_and_each_call() -> None:
    """The corpus's Kimi CLI run: no line refused (85 of its marks were, each a message with no
    content), and one call a ``tool_calls`` entry of its assistant lines, in order."""
    path = CORPUS / "conversation" / "kimi_cli_context_sklearn_26323.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    called = [
        call["function"]["name"]
        for line in lines
        if line["role"] == "assistant"
        for call in line.get("tool_calls") or []
    ]
    items = list(read([path]))
    assert not [item for item in items if isinstance(item, Problem)]
    (trace,) = [item.trace for item in items if isinstance(item, TraceItem)]
    calls = [step for step in trace.steps if step.type == "tool_call"]
    assert [step.tool.name for step in calls if step.tool] == called
    assert trace.task.objective.startswith("You will be provided with a partial code base")
