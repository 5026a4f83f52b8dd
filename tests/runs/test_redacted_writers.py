"""The law of redaction on the way out: no planted secret leaves any writer with redaction on.

A secret of every shape the rules know (gitleaks' first example of each rule, and ours) is
planted in one place of a chat row, and the row is converted by every writer (traces, training
messages, ATIF) with ``redact``: neither the output nor any problem holds the secret. Secrets
and personal data planted after every free-text string of a real file of each newer format
(``tests/conformance/files``) leave no writer either.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.redact.items import Redactor
from knowledgepulse.runs.convert import convert_files
from tests.redact.examples import secret_examples


def _row(
    objective: str = "Deploy the service",
    arguments: str = "deploy",
    result: str = "deployed",
    answer: str = "Done.",
    system: str | None = None,
    **columns: Any,
) -> dict[str, Any]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "shell", "arguments": json.dumps({"command": arguments})},
    }
    messages = [
        {"role": "user", "content": objective},
        {"role": "assistant", "content": "I will deploy it.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": answer},
    ]  # fmt: skip
    opening = [{"role": "system", "content": system}] if system else []
    return {"id": "r1", "messages": opening + messages, **columns}


def _tools(text: str) -> list[dict[str, Any]]:
    """A tools column (OpenAI function definitions) whose description holds ``text``."""
    parameters = {"type": "object", "properties": {"command": {"type": "string"}}}
    function = {"name": "shell", "description": f"Run {text}", "parameters": parameters}
    return [{"type": "function", "function": function}]


PLACES: dict[str, Callable[[str], dict[str, Any]]] = {
    "objective": lambda text: _row(objective=f"Deploy with {text}"),
    "tool arguments (a JSON string)": lambda text: _row(arguments=f"deploy {text}"),
    "tool result": lambda text: _row(result=f"Output:\n{text}\nexit 0"),
    "answer": lambda text: _row(answer=f"Done: {text}"),
    "a column kp does not read": lambda text: _row(notes=f"see {text}"),
    "a row kp cannot read": lambda text: {"id": "r2", "messages": f"lost {text}"},
    # What a training row (--to messages) opens with and lists, carried from the source row.
    "system prompt": lambda text: _row(system=f"You deploy services. {text}"),
    "offered tools": lambda text: _row(tools=_tools(text)),
}


@pytest.mark.parametrize("to", ["trace", "messages", "atif"])
@pytest.mark.parametrize("place", sorted(PLACES))
def test_no_planted_secret_leaves_any_writer_with_redaction_on(place: str, to: Any) -> None:
    """Output and problems hold no planted secret, for every writer.

    Every example in every place: all of them (a few seconds), so that the law is checked
    whole on every run rather than a sample that differs from run to run.
    """
    leaked = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.jsonl"
        for example in secret_examples():
            out = io.StringIO()
            problems: list[str] = []
            path.write_text(json.dumps(PLACES[place](example["sample"])) + "\n")
            convert_files(
                [str(path)], out, to=to, redact=Redactor("private"), on_problem=problems.append
            )
            assert out.getvalue() or problems  # something was written or told: it is checked
            if example["secret"] in out.getvalue() + "\n".join(problems):
                leaked.append(example["rule"])
    assert leaked == []


CONFORMANCE = Path(__file__).parents[1] / "conformance" / "files"
# A real file of each newer format: CrewAI, AutoGen and Google ADK runs as OTLP (OpenInference,
# OpenLLMetry, agentevals) and as a Langfuse export, Claude Code and Codex sessions, verifiers'
# prompt/completion rows (their oai_tools), chat rows with a tools column (Parquet too).
REAL_FILES = [
    "otlp/openinference_crewai_calculator.jsonl",
    "otlp/openllmetry_crewai_two_tasks.jsonl",
    "otlp/openinference_autogen_round_robin_team.jsonl",
    "otlp/agentevals_adk_v2_span_only_S5.json",
    "langfuse/google-adk-2025-08-28.json",
    "claude-code/codemie_claude_2.1.7_subagent.jsonl",
    "codex/codemie_codex_desktop_0.128.jsonl",
    "prompt-completion/mcp_env_gpt-4.1-mini.jsonl",
    "openai-chat/foundry_stock_toolcall_validation.jsonl",
    "openai-chat/foundry_stock_toolcall_validation.parquet",
]
# A secret of several providers (openai, github, aws, jwt, password-assignment), and personal
# data: an e-mail address, a phone number, a card number, an IBAN.
PLANTED_RULES = ("openai-key", "github-pat", "aws-access-token", "jwt", "password-assignment")
PERSONAL = ("jane.leakdoe@example.org", "(415) 555-0132", "4539 1488 0343 6467",
            "DE89 3704 0044 0532 0130 00")  # fmt: skip


def _planted_values() -> tuple[str, list[str]]:
    """The text planted (the first example of each of PLANTED_RULES, then PERSONAL), and every
    value that must not come out."""
    first: dict[str, dict[str, str]] = {}
    for example in secret_examples():
        first.setdefault(example["rule"], example)
    examples = [first[rule] for rule in PLANTED_RULES]
    text = " ".join([example["sample"] for example in examples] + list(PERSONAL))
    return text, [example["secret"] for example in examples] + list(PERSONAL)


def _plant(value: Any, text: str) -> Any:
    """``value`` with ``text`` after each of its free-text strings (one holding a space), at any
    depth, also inside a string that holds JSON (a span attribute, a tool call's arguments)."""
    if isinstance(value, dict):
        return {key: _plant(item, text) for key, item in value.items()}
    if isinstance(value, list):
        return [_plant(item, text) for item in value]
    if not isinstance(value, str) or " " not in value:
        return value
    if value.lstrip()[:1] in ("{", "["):
        try:
            return json.dumps(_plant(json.loads(value), text))
        except json.JSONDecodeError:
            pass
    return f"{value} {text}"


def _planted_file(name: str, folder: Path, text: str) -> Path:
    source = CONFORMANCE / name.replace(".parquet", ".jsonl")
    raw = source.read_text(encoding="utf-8")
    try:
        records = [json.loads(raw)]
        whole = True
    except json.JSONDecodeError:
        records = [json.loads(line) for line in raw.splitlines() if line.strip()]
        whole = False
    planted = [_plant(record, text) for record in records]
    path = folder / Path(name).name
    if name.endswith(".parquet"):
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        pq.write_table(pa.Table.from_pylist(planted), path)
    elif whole:
        path.write_text(json.dumps(planted[0]), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(record) + "\n" for record in planted))
    return path


@pytest.mark.parametrize("to", ["trace", "messages", "atif"])
@pytest.mark.parametrize("name", REAL_FILES)
def test_no_value_planted_in_a_real_file_of_a_newer_format_leaves_any_writer(
    name: str, to: Any
) -> None:
    """Secrets and personal data after every free-text string of a real file: none is written
    (at aggregated), nor told in a problem."""
    text, values = _planted_values()
    with tempfile.TemporaryDirectory() as folder:
        path = _planted_file(name, Path(folder), text)
        out = io.StringIO()
        problems: list[str] = []
        convert_files(
            [str(path)], out, to=to, redact=Redactor("aggregated"), on_problem=problems.append
        )
    written = out.getvalue()
    assert "[REDACTED:" in written  # the plants were read: the check checks something
    assert [value for value in values if value in written + "\n".join(problems)] == []
