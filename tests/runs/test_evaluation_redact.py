"""``redact=True`` (``kp eval --redact``): personal data leaves every text a run reports, and
the scorers still judge the raw output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.evals.tasks import TaskInput
from knowledgepulse.records import Problem
from knowledgepulse.runs import evaluate_cases
from knowledgepulse.runs.evaluation import EvalOutcome, check_cases

EMAIL, PHONE, CARD = "jane.doe@example.com", "+1 415 555 0132", "4111 1111 1111 1111"
PLANTED = (EMAIL, PHONE, CARD)
ANSWER = f"Write to {EMAIL}, call {PHONE}, card {CARD}"


def contact_case(case_id: str = "contact", target: str = "b1") -> dict[str, Any]:
    """A bulk edit whose answer quotes a customer's details and edits the wrong block: it
    fails, so every report shows its output, expectation and diagnoses."""
    blocks = [{"id": b, "type": "paragraph", "content": b} for b in ("b1", "b2")]

    def edit(block: str) -> dict[str, object]:
        update = {"type": "update", "pageId": "help", "targetBlockId": block, "content": ANSWER}
        return {"operations": [update]}

    return {
        "id": case_id,
        "instruction": f"Put the support contact ({EMAIL}) in the footer.",
        "pages": [{"id": "help", "blocks": blocks}],
        "actual": edit(target),
        "expected": edit("b2"),
    }


def scores(outcome: EvalOutcome) -> list[tuple[str | None, bool, float | None, list[Any]]]:
    return [
        (
            result.case_id,
            result.passed,
            result.weighted_score,
            [o.result.score for o in result.outcomes],
        )
        for result in outcome.run.cases
    ]


def test_redact_cleans_personal_data_from_every_text_a_run_reports() -> None:
    """Output, expectation, details, diagnoses and the suite's params: no planted e-mail,
    phone or card; each becomes ``[REDACTED:type]``."""
    outcome = evaluate_cases([contact_case()], preset="standard", redact=True)
    shown = outcome.report.model_dump_json()
    assert [value for value in PLANTED if value in shown] == []
    assert "[REDACTED:email]" in shown
    assert "[REDACTED:phone]" in shown
    assert "[REDACTED:credit_card]" in shown


def test_without_redact_a_report_keeps_personal_data_as_before() -> None:
    """Secrets only by default: an e-mail address in an answer is what was answered."""
    shown = evaluate_cases([contact_case()], preset="standard").report.model_dump_json()
    assert all(value in shown for value in PLANTED)


def test_redact_changes_no_score_or_verdict() -> None:
    """The scorers judge the raw output: a passing case (the right block) and a failing one
    score the same with and without ``redact``."""
    cases = [contact_case("wrong", "b1"), contact_case("right", "b2")]
    plain = evaluate_cases(cases, preset="standard")
    redacted = evaluate_cases(cases, preset="standard", redact=True)
    assert scores(redacted) == scores(plain)
    assert redacted.verdict == plain.verdict
    assert [result.passed for result in plain.run.cases] == [False, True]


def test_redact_cleans_task_errors_and_problem_messages(tmp_path: Path) -> None:
    """A task's exception and a refused case value quote personal data: neither reaches a
    message, the report or a dry run with ``redact``."""
    refused = contact_case()
    refused["actual"]["durationMs"] = f"call {PHONE} or {EMAIL}"
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(refused) + "\n")
    told: list[Problem] = []
    outcome = evaluate_cases(str(path), preset="standard", on_problem=told.append, redact=True)
    checked = check_cases(str(path), preset="standard", redact=True)

    def leaky(task: TaskInput) -> object:
        raise RuntimeError(f"no account for {EMAIL} ({PHONE})")

    failed = evaluate_cases([contact_case()], preset="strict", task=leaky, redact=True)
    messages = [*told, *outcome.problems, *checked.problems, *failed.task_failures]
    assert told  # the values were quoted, and cleaned
    assert failed.task_failures
    shown = "\n".join(
        [*map(str, messages), outcome.report.model_dump_json(), failed.report.model_dump_json()]
    )
    assert [value for value in PLANTED if value in shown] == []
    assert "[REDACTED:email]" in shown
