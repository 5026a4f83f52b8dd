"""The node ids of evaluation cases: what pytest's selection, --lf and its output make of them."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.conftest import Project, literal, rename_case

pytest_plugins = ["pytester"]


def test_lf_reruns_every_failed_case_whatever_its_id(
    pytester: pytest.Pytester, project: Project
) -> None:
    """--lf reruns a case whose id holds brackets or '::', and a repeated id's second case
    (``twice[2]``); pytest 9 reads a cached node id's ``[...]`` as parameters, so these were
    skipped as if they had passed."""
    failing = ["twice", "twice", "cart[en]", "a::b"]
    project(rename_case("good"), *(rename_case(i, renamed="Cart") for i in failing))
    first = pytester.runpytest("-W", "ignore::knowledgepulse.pytest_plugin.EvalWarning")
    first.assert_outcomes(passed=1, failed=4)
    again = pytester.runpytest(
        "--lf", "-v", "-W", "ignore::knowledgepulse.pytest_plugin.EvalWarning"
    )
    again.assert_outcomes(failed=4)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 4 failures"])


def test_a_case_id_with_controls_is_one_escaped_line_in_pytests_output(
    pytester: pytest.Pytester, project: Project
) -> None:
    """A line break, a tab or an escape sequence in a case id is shown escaped in the node id,
    as the reports show such an id, so pytest's lines stay one per test and nothing is obeyed."""
    project(rename_case("two\nlines"), rename_case("tab\there"), rename_case("red\x1b[31m"))
    result = pytester.runpytest("-v", "-rA")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            literal(r"evals.kp.yaml::two\nlines PASSED*"),
            literal(r"evals.kp.yaml::tab\there PASSED*"),
            literal(r"evals.kp.yaml::red\x1b[31m PASSED*"),
        ]
    )
    assert "\x1b" not in result.stdout.str()


def test_the_kp_marker_selects_or_leaves_out_the_evaluation_cases(
    pytester: pytest.Pytester, project: Project
) -> None:
    """Each case carries the registered marker ``kp``: ``-m kp`` runs the evaluations alone and
    ``-m "not kp"`` the other tests, under --strict-markers too."""
    project(rename_case("first"), rename_case("second"))
    pytester.makepyfile(test_unit="def test_unit():\n    pass\n")
    only = pytester.runpytest("--strict-markers", "-m", "kp")
    only.assert_outcomes(passed=2, deselected=1)
    others = pytester.runpytest("--strict-markers", "-m", "not kp", "-v")
    others.assert_outcomes(passed=1, deselected=2)
    others.stdout.fnmatch_lines(["test_unit.py::test_unit PASSED*"])
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.kp: *"])
