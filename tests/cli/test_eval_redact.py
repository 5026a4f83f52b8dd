"""``kp eval --redact``: no planted e-mail, phone or card in any report format, and the same
scores as without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.cli.main import EXIT_FINDINGS
from tests.cli.conftest import KpRunner
from tests.runs.test_evaluation_redact import PLANTED, contact_case

FORMATS = ("json", "junit", "markdown", "html", "table")


def _cases(tmp_path: Path) -> str:
    path = tmp_path / "cases.jsonl"
    cases = [contact_case("wrong", "b1"), contact_case("right", "b2")]
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return str(path)


@pytest.mark.parametrize("output_format", FORMATS)
def test_kp_eval_redact_leaves_no_planted_identifier_in_the_report_or_on_stderr(
    kp: KpRunner, tmp_path: Path, output_format: str
) -> None:
    """Each format shows the failing case's output and expectation, cleaned."""
    cases = _cases(tmp_path)
    plain = kp("eval", cases, "-p", "standard", "-f", output_format)
    run = kp("eval", cases, "-p", "standard", "-f", output_format, "--redact")
    assert (plain.code, run.code) == (EXIT_FINDINGS, EXIT_FINDINGS)
    assert all(value in plain.out for value in PLANTED[:1])  # shown without --redact
    assert [value for value in PLANTED if value in run.out + run.err] == []
    assert "[REDACTED:email]" in run.out


def test_kp_eval_redact_reports_the_same_scores(kp: KpRunner, tmp_path: Path) -> None:
    """The JSON reports differ only in the cleaned texts: every score, verdict and summary
    is the same."""
    cases = _cases(tmp_path)

    def scored(*extra: str) -> tuple[Any, ...]:
        report = json.loads(kp("eval", cases, "-p", "standard", "-f", "json", *extra).out)
        per_case = [
            (
                case["id"],
                case["passed"],
                case["weighted_score"],
                [s["score"] for s in case["scorers"]],
            )
            for case in report["cases"]
        ]
        return report["summary"], per_case

    assert scored("--redact") == scored()
