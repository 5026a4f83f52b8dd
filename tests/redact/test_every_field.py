"""Every secret rule against every free-text field of a trace: one example a rule, in each field.

The examples are the first of each rule in ``data/gitleaks_tps.jsonl`` (gitleaks' own true
positives) and all of ``data/secret_examples.jsonl`` (the rules gitleaks' examples do not cover,
and the shapes issue 28 found missed). Fields the walker keeps whole by design (the id,
``metadata``, a step's ``tool``) are not here: ``docs/redaction.md`` lists them.
"""

from __future__ import annotations

from typing import Any

import pytest

from knowledgepulse.redact import redact_document
from knowledgepulse.redact.detectors import default_rules
from tests.builders import trace_json
from tests.redact.examples import secret_examples

EXAMPLES = secret_examples()
SECRET_RULES = [rule.name for rule in default_rules().rules if rule.secret]

# Where a trace holds free text, as a path into the document that _planted builds.
FIELDS: list[tuple[str | int, ...]] = [
    ("task", "objective"),
    ("task", "input_schema", "properties", "q", "description"),
    ("steps", 0, "content"),
    ("steps", 1, "content"),
    ("steps", 1, "input", "query"),
    ("steps", 1, "input", "args", 0, "env", "value"),
    ("steps", 2, "output_summary"),
    ("steps", 3, "content"),
    ("steps", 3, "output_summary"),
    ("outcome", "result_summary"),
    ("knowledge_graph_delta", "entities", 0, "name"),
    ("knowledge_graph_delta", "entities", 0, "type"),
    ("knowledge_graph_delta", "relationships", 0, "fact"),
    ("knowledge_graph_delta", "relationships", 0, "valid_from"),
]


def _planted(text: str) -> dict[str, Any]:
    """A valid trace with ``text`` in every field of :data:`FIELDS`."""
    document = trace_json(
        objective=text,
        step_list=[
            {"step_id": 0, "type": "thought", "content": text},
            {
                "step_id": 1,
                "type": "tool_call",
                "content": text,
                "tool": {"name": "shell"},
                "input": {"query": text, "args": [{"env": {"value": text}}, 3]},
            },
            {"step_id": 2, "type": "observation", "output_summary": text},
            {"step_id": 3, "type": "error_recovery", "content": text, "output_summary": text},
        ],
        knowledge_graph_delta={
            "entities": [{"name": text, "type": text}],
            "relationships": [{"fact": text, "valid_from": text}],
        },
    )
    document["task"]["input_schema"] = {"properties": {"q": {"description": text}}}
    document["outcome"]["result_summary"] = text
    return document


def _at(document: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


def test_every_secret_rule_has_an_example() -> None:
    """Each built-in secret rule is exercised by at least one example."""
    assert set(SECRET_RULES) - {example["rule"] for example in EXAMPLES} == set()


def test_the_planted_trace_holds_the_text_in_every_field() -> None:
    """The builder puts the text where FIELDS say (else the test below proves nothing)."""
    document = _planted("marker text")
    assert [_at(document, path) for path in FIELDS] == ["marker text"] * len(FIELDS)


@pytest.mark.parametrize("example", EXAMPLES, ids=[example["rule"] for example in EXAMPLES])
def test_a_secret_of_each_rule_is_redacted_in_every_field(example: dict[str, str]) -> None:
    """An example, ending a sentence in every free-text field, leaves its secret in none."""
    redacted, _ = redact_document(_planted(f"Noted: {example['sample']}."), "private")
    leaked = [path for path in FIELDS if example["secret"] in _at(redacted, path)]
    assert leaked == []
