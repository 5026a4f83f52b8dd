"""``--kp-redact`` and an evaluation file's ``redact: true``: a failure (and JUnit XML) shows no
personal data from a case's answer, and the cases score as without it."""

from __future__ import annotations

import pytest

# Imported in the outer session: pytester's in-process runs drop what a run imported, and numpy
# (which the items import) cannot be loaded twice in one process.
import knowledgepulse.pytest_plugin.items  # noqa: F401
from tests.pytest_plugin.conftest import Project, rename_case
from tests.runs.test_evaluation_redact import PLANTED, contact_case

# Enabled per module: pytest refuses `pytest_plugins` in a conftest that is not at the root.
pytest_plugins = ["pytester"]

ANSWERS = "suite: suite.yaml\ncases: cases.jsonl\n"


def _leaky_project(project: Project, eval_file: str = ANSWERS) -> None:
    """A passing case and one that fails quoting an e-mail, a phone and a card."""
    project(rename_case("good"), contact_case("contact"), eval_file=eval_file)


@pytest.mark.parametrize(
    ("given", "eval_file"),
    [(("--kp-redact",), ANSWERS), ((), f"{ANSWERS}redact: true\n")],
    ids=["--kp-redact", "redact: true"],
)
def test_redact_leaves_no_planted_identifier_in_failures_or_junitxml(
    pytester: pytest.Pytester, project: Project, given: tuple[str, ...], eval_file: str
) -> None:
    """The failure shows the case's output and diagnosis, cleaned; verdicts are unchanged."""
    _leaky_project(project, eval_file)
    result = pytester.runpytest("-v", "--junitxml=report.xml", *given)
    result.assert_outcomes(passed=1, failed=1)
    shown = result.stdout.str() + (pytester.path / "report.xml").read_text()
    assert "[REDACTED:email]" in shown
    assert [value for value in PLANTED if value in shown] == []


def test_without_redact_a_failure_shows_the_answer_as_it_was(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Secrets only by default: the e-mail address the case answered is shown."""
    _leaky_project(project)
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    assert PLANTED[0] in result.stdout.str()


def test_kp_redact_applies_to_kp_suite_case_files(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A case file named with ``--kp-suite`` is cleaned as an evaluation file's cases are."""
    _leaky_project(project)
    result = pytester.runpytest("-v", "--kp-suite", "suite.yaml", "cases.jsonl", "--kp-redact")
    result.assert_outcomes(passed=1, failed=1)
    assert [value for value in PLANTED if value in result.stdout.str()] == []
