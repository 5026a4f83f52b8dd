"""Training rows rendered by real chat templates, as a trainer renders them before tokenizing.

``data/qwen3_chat_template.jinja`` is Qwen3's chat template (Qwen/Qwen3-0.6B's
``tokenizer_config.json``), ``data/mistral_v7_chat_template.jinja`` the one mistral-common
writes for its v7 tokenizer (Mistral Small 3's, Large 2411's) and
``data/hermes_chat_template.jinja`` vLLM's for Hermes' tool calls; all Apache-2.0, see
THIRD_PARTY_NOTICES.md. Each is rendered as transformers' ``apply_chat_template`` renders one:
a sandboxed Jinja environment that trims blocks, with its ``tojson`` filter and
``raise_exception``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Template
from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from knowledgepulse.records import Problem
from knowledgepulse.records._parted import is_parted_folder
from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources import read
from tests.paths import REPO

QWEN3 = Path(__file__).parent / "data" / "qwen3_chat_template.jinja"
MISTRAL = Path(__file__).parent / "data" / "mistral_v7_chat_template.jinja"
HERMES = Path(__file__).parent / "data" / "hermes_chat_template.jinja"
FILES = REPO / "tests" / "conformance" / "files"
CONFORMANCE = sorted(
    path
    for path in FILES.rglob("*")
    if is_parted_folder(path)
    or (
        path.is_file()
        and not path.name.endswith((".facts.json", ".md"))
        and not any(is_parted_folder(folder) for folder in path.parents[:2])
    )
)


def _raise(message: str) -> None:
    raise TemplateError(message)


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@cache
def compiled(template: Path) -> Template:
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise
    return environment.from_string(template.read_text(encoding="utf-8"))


def render(template: Path, row: dict[str, Any]) -> str:
    """The row's ``messages`` and ``tools`` as the template writes them (the row as JSON)."""
    row = json.loads(json.dumps(row))
    tools = json.loads(row["tools"]) or None
    return compiled(template).render(
        messages=row["messages"], tools=tools, add_generation_prompt=False, bos_token="<s>"
    )


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [
        chat_row(item.trace, system=item.system, offered=item.tools, task=item.task)
        for item in read([path])
        if not isinstance(item, Problem)
    ]


def test_a_run_ending_in_its_call_renders_that_call_with_qwen3s_template() -> None:
    """A turn of calls alone has an empty ``content``: Qwen3's template joins it to the turn."""
    (row,) = rows_of(FILES / "adk" / "adk_python_hello_world_roll_die.test.json")
    text = render(QWEN3, row)
    assert row["messages"][-1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [row["messages"][-1]["tool_calls"][0]],
    }
    assert text.endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n"
        '{"name": "roll_die", "arguments": {"sides": 6}}\n</tool_call><|im_end|>\n'
    )


def test_a_rows_calls_have_ids_mistrals_template_takes() -> None:
    """Each call's id is nine letters and digits: Mistral's templates stop on any other."""
    (row,) = rows_of(FILES / "anthropic" / "openinference_anthropic_multiple_tool_calling.jsonl")
    text = render(MISTRAL, row)
    assert (
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"location": "New York, NY"}, '
        '"id": "call00000"}, {"name": "get_time", "arguments": {"timezone": '
        '"America/New_York"}, "id": "call00001"}]'
    ) in text


@pytest.mark.parametrize(
    ("name", "told"),
    [
        ("gemini/llm_gemini_tools.jsonl", "pelican_name_generator() - "),
        ("langfuse/openai-agents-2025-09-30.json", "get_weather(city: str) - "),
    ],
)
def test_a_tool_offered_without_a_description_renders_with_hermes_template(
    name: str, told: str
) -> None:
    """A tool the source gave no description has ``""``: Hermes' template joins it to the prompt."""
    (row,) = rows_of(FILES / name)
    assert all(tool["function"]["description"] == "" for tool in json.loads(row["tools"]))
    assert f'"description": "{told}' in render(HERMES, row)


@pytest.mark.parametrize("template", [QWEN3, MISTRAL], ids=lambda path: path.stem)
@pytest.mark.parametrize("path", CONFORMANCE, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_training_row_renders_with_a_chat_template(path: Path, template: Path) -> None:
    """Each row of every source renders, each text and call in it, none stopping the template."""
    for row in rows_of(path):
        text = render(template, row)
        for message in row["messages"]:
            assert (message["content"] or "").strip() in text
            for call in message.get("tool_calls", []):
                assert f'{{"name": "{call["function"]["name"]}", "arguments": ' in text
