"""The law of redaction on the way out: no planted secret leaves any writer with redaction on.

A secret of every shape the rules know (gitleaks' first example of each rule, and ours) is
planted in one place of a chat row, and the row is converted by every writer (traces, training
messages, ATIF) with ``redact``: neither the output nor any problem holds the secret.
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
