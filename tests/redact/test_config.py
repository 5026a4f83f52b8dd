"""Custom rules from a file: a regular expression or a Python callable, before the built-ins."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledgepulse.errors import RedactionRulesError
from knowledgepulse.redact import clean_text, load_rules, redact_document
from knowledgepulse.runs.redaction import redact_files
from tests.builders import step, trace_json


def find_tickets(text: str) -> Iterator[tuple[int, int]]:
    """A detector written in Python: every ``TICKET-`` and the four characters after it."""
    start = text.find("TICKET-")
    while start >= 0:
        yield start, start + 11
        start = text.find("TICKET-", start + 1)


def _rules(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    return path


def test_a_pattern_rule_runs_before_the_built_in_ones(tmp_path: Path) -> None:
    """A company format is one marker of its own type, kept out of any generic match."""
    rules = load_rules(
        _rules(
            tmp_path,
            "rules:\n  - name: acme\n    pattern: 'acme_[0-9a-f]{8}'\n    keywords: [ACME_]\n",
        )
    )
    cleaned = clean_text("password=acme_deadbeef", rules=rules)
    assert cleaned.text == "password=[REDACTED:acme]"
    assert cleaned.rules == {"acme": 1}


def test_a_callable_rule_is_imported_by_module_and_name(tmp_path: Path) -> None:
    """``callable: module:function`` finds spans in Python."""
    rules = load_rules(
        _rules(
            tmp_path,
            "rules:\n  - name: tickets\n    callable: tests.redact.test_config:find_tickets\n",
        )
    )
    assert clean_text("see TICKET-AB12 now", rules=rules).text == "see [REDACTED:tickets] now"


def test_an_identifier_rule_is_kept_at_private(tmp_path: Path) -> None:
    """``secret: false`` makes an identifier: redacted at aggregated, kept at private."""
    rules = load_rules(
        _rules(
            tmp_path, "rules:\n  - name: employee\n    pattern: 'EMP-\\d{6}'\n    secret: false\n"
        )
    )
    assert clean_text("EMP-123456", "aggregated", rules).text == "[REDACTED:employee]"
    assert clean_text("EMP-123456", "private", rules).text == "EMP-123456"


def test_every_mistake_of_the_file_is_reported_at_once(tmp_path: Path) -> None:
    """Neither pattern nor callable, an unimportable callable, a bad type: all listed."""
    path = _rules(
        tmp_path,
        "rules:\n"
        "  - name: none\n"
        "  - name: gone\n    callable: no_such_module_kp:find\n"
        "  - name: typed\n    pattern: x\n    type: 'has space'\n"
        "  - name: dashed\n    callable: my-tool:find\n",
    )
    with pytest.raises(RedactionRulesError) as raised:
        load_rules(path)
    message = str(raised.value)
    assert "rules[0]: give one of pattern" in message
    assert "rules[1]: callable 'no_such_module_kp:find': cannot import" in message
    assert "rules[2].type" in message
    assert "rules[3]: callable 'my-tool:find': cannot import 'my-tool'" in message


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("- name: a\n  pattern: x\n- name: b\n  pattern: y\n", "; found 2 values (a list"),
        ("- name: a\n  pattern: x\n", "rules.yaml:1: one rule alone; expected one mapping"),
        ("name: a\npattern: x\n", "rules.yaml:1: one rule alone; expected one mapping"),
        ("[1]\n", "rules.yaml:1: expected one mapping with the rules listed under rules: "),
    ],
)
def test_rules_not_listed_under_rules_are_told_how_to_list_them(
    tmp_path: Path, text: str, told: str
) -> None:
    """A bare list of rules, or one rule alone, is told the file's shape, with an example.

    Before, two rules said ``expected one mapping with a list of rules``, and one rule said
    ``name: unknown field; the file holds only rules`` for each of its keys, then
    ``rules: expected a list of rules``: three problems for one mistake, none saying how.
    """
    with pytest.raises(RedactionRulesError) as raised:
        load_rules(_rules(tmp_path, text))
    message = str(raised.value)
    assert told in message
    assert "(rules: [{name: ..., pattern: ...}])" in message
    assert "unknown field" not in message


def test_a_catastrophic_rule_times_out_is_told_where_and_the_rest_are_redacted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A user's ``(a|aa)+$`` is bounded as a suite's patterns are; the built-in rules still run."""
    rules = load_rules(_rules(tmp_path, "rules:\n  - name: slow\n    pattern: '(a|aa)+$'\n"))
    document = {"output": "a" * 60 + "!", "note": "mail jane.doe@example.com"}
    with caplog.at_level("WARNING", logger="knowledgepulse"):
        redacted, findings = redact_document(document, "aggregated", rules)
    assert [record.getMessage() for record in caplog.records] == [
        "redaction rule 'slow' timed out after 1000 ms on output (61 characters); what it finds "
        "there is not redacted: make its pattern simpler (avoid nested repetition such as "
        "'(a+)+')"
    ]
    assert redacted["note"] == "mail [REDACTED:email]"
    assert [finding.rule for finding in findings] == ["email"]


def test_a_rule_that_times_out_in_a_file_is_told_at_its_file_and_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``kp redact --rules``: the warning says which trace (``FILE:LINE``), not only the path.

    Before, it named ``steps[0].content`` alone: in a file of thousands of traces, no one's.
    """
    rules_file = _rules(tmp_path, "rules:\n  - name: slow\n    pattern: '(a|aa)+c$'\n")
    traces = tmp_path / "traces.jsonl"
    slow = trace_json(trace_id="kp:trace:slow", step_list=[step(0, "thought", "a" * 60 + "!")])
    traces.write_text(json.dumps(trace_json()) + "\n" + json.dumps(slow) + "\n")
    with caplog.at_level("WARNING", logger="knowledgepulse"):
        redact_files([str(traces)], tmp_path / "out.jsonl", rules_file=rules_file)
    told = [record.getMessage() for record in caplog.records]
    assert [message.partition(" after ")[0] for message in told] == [
        f"{traces}:2: warning: redaction rule 'slow' timed out"
    ]
    assert "on steps[0].content (61 characters)" in told[0]


def test_a_document_or_text_of_the_wrong_type_is_told_what_to_give() -> None:
    """A list of traces or a number is refused naming the parameter, not an AttributeError.

    Before: ``'list' object has no attribute 'get'`` and ``'int' object has no attribute
    'isascii'``, from inside the walk.
    """
    with pytest.raises(TypeError) as raised:
        redact_document([{"id": "kp:trace:a"}])  # type: ignore[arg-type]
    assert str(raised.value) == (
        "document (a list): give one trace's JSON, a dict (for a list of traces, redact each one)"
    )
    with pytest.raises(TypeError, match=r"^text=5: give a str$"):
        clean_text(5)  # type: ignore[arg-type]
