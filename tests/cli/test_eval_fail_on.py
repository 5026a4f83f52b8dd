"""``kp eval --fail-on``: CI fails on what is worse than the baseline, or on any failure, or never.

The example run: 2 of 4 cases pass. Against it, the ``regressed`` cases make multi-page-rename
too slow (a regression), translate-heading-slow fast (improved); summarise-sections-
hallucinated-tip fails on both sides (an old failure).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner
from tests.cli.test_compare import CASES, SUITE, changed_cases

OLD_FAILURE = "summarise-sections-hallucinated-tip"


@pytest.fixture
def baseline(kp: KpRunner, tmp_path: Path) -> str:
    """Recorded as on main: --fail-on never exits 0 although two cases fail."""
    path = tmp_path / "base.json"
    run = kp("eval", CASES, "--suite", SUITE, "--fail-on", "never", "-o", str(path))
    assert run.code == 0, run.err
    assert json.loads(path.read_text(encoding="utf-8"))["summary"]["failed"] == 2
    return str(path)


@pytest.fixture
def regressed(tmp_path: Path) -> str:
    return changed_cases(tmp_path, {"multi-page-rename": 9000, "translate-heading-slow": 1000})


def junit(kp: KpRunner, cases: str, *options: str) -> tuple[int, ET.Element]:
    run = kp("eval", cases, "--suite", SUITE, "-f", "junit", *options)
    return run.code, ET.fromstring(run.out.encode())


def verdicts(root: ET.Element) -> dict[str, tuple[str, str]]:
    """Per failing testcase: its verdict element's tag and message."""
    found = {}
    for case in root.iter("testcase"):
        for verdict in case:
            if verdict.tag in ("failure", "error", "skipped"):
                found[case.get("name", "")] = (verdict.tag, verdict.get("message", ""))
    return found


def test_old_failures_exit_0_against_a_baseline_by_default(kp: KpRunner, baseline: str) -> None:
    """The same cases again: nothing is worse, so exit 0 though two cases fail; stderr says so."""
    run = kp("eval", CASES, "--suite", SUITE, "--baseline", baseline, "-f", "json")
    assert run.code == 0
    assert (
        "--fail-on regression: 0 regressions, 0 new failures; 2 old failures do not fail the run"
    ) in run.err


def test_fail_on_failure_keeps_exit_1_for_old_failures_and_4_for_regressions(
    kp: KpRunner, baseline: str, regressed: str
) -> None:
    """--fail-on failure: any failing case fails the run; a regression still wins with 4."""
    same = kp("eval", CASES, "--suite", SUITE, "--baseline", baseline, "--fail-on", "failure")
    assert same.code == 1
    worse = kp("eval", regressed, "--suite", SUITE, "--baseline", baseline, "--fail-on", "failure")
    assert worse.code == 4


def test_fail_on_failure_says_on_stderr_what_failed_the_run(
    kp: KpRunner, baseline: str, regressed: str
) -> None:
    """A CI log shows why the job exited 1 or 4, as it does for --fail-on regression."""
    same = kp("eval", CASES, "--suite", SUITE, "--baseline", baseline, "--fail-on", "failure")
    assert "--fail-on failure: 2 failing cases (2 old failures)" in same.err.splitlines()
    worse = kp("eval", regressed, "--suite", SUITE, "--baseline", baseline, "--fail-on", "failure")
    said = "--fail-on failure: 2 failing cases (1 regression, 1 old failure)"
    assert said in worse.err.splitlines()
    never = kp("eval", CASES, "--suite", SUITE, "--baseline", baseline, "--fail-on", "never")
    assert "--fail-on" not in never.err


def test_a_regression_exits_4(kp: KpRunner, baseline: str, regressed: str) -> None:
    """A case that passed in the baseline and fails now fails the default gate."""
    run = kp("eval", regressed, "--suite", SUITE, "--baseline", baseline, "-f", "json")
    assert run.code == 4
    assert "--fail-on regression: 1 regression, 0 new failures" in run.err


def test_a_failing_case_the_baseline_lacks_is_a_new_failure(
    kp: KpRunner, baseline: str, tmp_path: Path
) -> None:
    """A new case that fails is worse than the baseline (exit 4); one that passes is not."""
    lines = Path(CASES).read_text(encoding="utf-8").splitlines()
    failing = {**json.loads(lines[1]), "id": "a-new-case"}
    passing = {**json.loads(lines[0]), "id": "another-new-case"}
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join([*lines, json.dumps(passing)]) + "\n", encoding="utf-8")
    assert kp("eval", str(more), "--suite", SUITE, "--baseline", baseline).code == 0
    more.write_text("\n".join([*lines, json.dumps(failing)]) + "\n", encoding="utf-8")
    run = kp("eval", str(more), "--suite", SUITE, "--baseline", baseline, "-f", "json")
    assert run.code == 4
    assert "0 regressions, 1 new failure; 2 old failures" in run.err


def test_a_file_not_read_in_full_still_fails_the_regression_gate(
    kp: KpRunner, baseline: str, tmp_path: Path
) -> None:
    """Cases lost to a JSON list cut short cannot be judged no worse: exit 1, and the gate's
    line says the file is why (no case is worse)."""
    broken = tmp_path / "broken.json"
    lines = Path(CASES).read_text(encoding="utf-8").splitlines()
    broken.write_text("[" + ",\n".join(lines) + ",\n{", encoding="utf-8")
    run = kp("eval", str(broken), "--suite", SUITE, "--baseline", baseline, "-f", "json")
    assert json.loads(run.out)["summary"]["unreadable_files"] == 1
    assert run.code == 1
    assert run.err.splitlines()[-1].endswith("; 1 file not read in full")


def test_fail_on_regression_without_a_baseline_is_a_usage_error(kp: KpRunner) -> None:
    """Nothing to be no worse than: refused, rather than passing every run."""
    run = kp("eval", CASES, "--suite", SUITE, "--fail-on", "regression")
    assert run.code == 2
    assert "--fail-on regression needs --baseline FILE" in run.err


def test_junit_marks_regressions_and_skips_old_failures(
    kp: KpRunner, baseline: str, regressed: str
) -> None:
    """Regression: a failure saying so; old failure: skipped; the totals count the elements."""
    code, root = junit(kp, regressed, "--baseline", baseline)
    assert code == 4
    found = verdicts(root)
    assert found["multi-page-rename"][0] == "failure"
    assert found["multi-page-rename"][1].startswith("regression: 1 scorer below threshold")
    assert found[OLD_FAILURE][0] == "skipped"
    assert found[OLD_FAILURE][1].startswith("old failure: ")
    assert "translate-heading-slow" not in found
    [suite] = root.iter("testsuite")
    assert {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")} == {
        "tests": "4",
        "failures": "1",
        "errors": "0",
        "skipped": "1",
    }
    assert root.get("failures") == "1"


def test_junit_with_fail_on_failure_keeps_old_failures_as_failures(
    kp: KpRunner, baseline: str, regressed: str
) -> None:
    """Every failing case fails the run, so every one is a failure, its standing in the message."""
    code, root = junit(kp, regressed, "--baseline", baseline, "--fail-on", "failure")
    assert code == 4
    found = verdicts(root)
    assert found[OLD_FAILURE][0] == "failure"
    assert found[OLD_FAILURE][1].startswith("old failure: ")
    assert root.get("failures") == "2"
    assert root.get("skipped") == "0"


@pytest.mark.parametrize("against_baseline", [False, True])
def test_junit_with_fail_on_never_still_fails_the_failing_cases(
    kp: KpRunner, baseline: str, regressed: str, against_baseline: bool
) -> None:
    """--fail-on never sets the exit code only: a failing case is a failure, never skipped."""
    options = ("--baseline", baseline) if against_baseline else ()
    code, root = junit(kp, regressed, *options, "--fail-on", "never")
    assert code == 0
    found = verdicts(root)
    assert {tag for tag, _ in found.values()} == {"failure"}
    assert set(found) == {"multi-page-rename", OLD_FAILURE}
    assert (root.get("failures"), root.get("skipped")) == ("2", "0")


def test_junit_without_a_baseline_is_as_before(kp: KpRunner) -> None:
    """No standing to say: the failures' messages are the scorers' alone."""
    code, root = junit(kp, CASES)
    assert code == 1
    messages = [message for _, message in verdicts(root).values()]
    assert len(messages) == 2
    assert all(message.startswith("1 scorer below threshold") for message in messages)


def test_a_baseline_with_no_passing_case_is_warned_loudly_on_the_comparison(
    kp: KpRunner, tmp_path: Path, regressed: str
) -> None:
    """Recorded in an outage (every case failed), it gates nothing: the comparison says so first."""
    ids = [json.loads(line)["id"] for line in Path(CASES).read_text(encoding="utf-8").splitlines()]
    outage = changed_cases(tmp_path, dict.fromkeys(ids, 10**7))
    base = tmp_path / "outage.json"
    assert kp("eval", outage, "--suite", SUITE, "--fail-on", "never", "-o", str(base)).code == 0
    assert json.loads(base.read_text(encoding="utf-8"))["summary"]["passed"] == 0
    warning = f"WARNING: the base run {base} has no passing case, so no case can regress"
    run = kp("eval", regressed, "--suite", SUITE, "--baseline", str(base), "-f", "json")
    assert run.code == 0  # as before: the warning changes no verdict
    assert warning in run.err
    new = tmp_path / "new.json"
    kp("eval", CASES, "--suite", SUITE, "-o", str(new))
    assert warning in kp("compare", str(base), str(new), "-f", "json").err
    markdown = kp("compare", str(base), str(new), "-f", "markdown").out
    assert markdown.split("\n")[2].startswith("**WARNING: the base run ")
    assert "has no passing case" in markdown


def test_a_baseline_with_a_passing_case_gets_no_warning(kp: KpRunner, baseline: str) -> None:
    """The example baseline passes two cases: no warning."""
    run = kp("eval", CASES, "--suite", SUITE, "--baseline", baseline, "-f", "json")
    assert "WARNING" not in run.err


@pytest.mark.parametrize("output_format", ["table", "markdown"])
def test_a_case_id_with_a_line_break_is_printed_on_one_line(
    kp: KpRunner, tmp_path: Path, output_format: str
) -> None:
    """'two\\nlines' is shown two\\nlines, escaped, in the run's and the comparison's reports."""
    cases = [json.loads(line) for line in Path(CASES).read_text(encoding="utf-8").splitlines()]
    cases[1]["id"] = "two\nlines"  # a failing case: its heading names it too
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    kp("eval", str(path), "--suite", SUITE, "-o", str(base))
    kp("eval", CASES, "--suite", SUITE, "-o", str(new))
    shown = [
        kp("eval", str(path), "--suite", SUITE, "-f", output_format).out,
        kp("compare", str(base), str(new), "-f", output_format).out,
    ]
    for out in shown:
        assert "two\\nlines" in out
        assert not any(line.strip(" |│").startswith("lines") for line in out.splitlines())


def test_a_baseline_written_with_a_repeated_case_id_says_it_cannot_be_one(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Told when the report is written, not first when it is used (and refused) as a baseline."""
    cases = [json.loads(line) for line in Path(CASES).read_text(encoding="utf-8").splitlines()]
    cases[1]["id"] = cases[0]["id"]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    base = tmp_path / "base.json"
    written = kp("eval", str(path), "--suite", SUITE, "--fail-on", "never", "-o", str(base))
    assert written.code == 0
    assert f"{path}:2: warning: id: the case id 'multi-page-rename' is also used" in written.err
    assert "this run's JSON report cannot be a baseline" in written.err
    used = kp("eval", CASES, "--suite", SUITE, "--baseline", str(base))
    assert (used.code, "case ids repeat" in used.err) == (2, True)


def test_the_gate_line_says_why_the_exit_code_without_a_baseline_too(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A CI log without --baseline still says what failed the run, and what passed it."""
    failing = kp("eval", CASES, "--suite", SUITE, "-f", "json")
    assert failing.code == 1
    assert failing.err.splitlines()[-1] == "--fail-on failure: 2 failing cases"
    passing = changed_cases(tmp_path, {})  # the same cases: failing ones dropped below
    kept = [
        line for line in Path(passing).read_text("utf-8").splitlines() if OLD_FAILURE not in line
    ]
    Path(passing).write_text("\n".join(kept[:1]) + "\n", "utf-8")
    passed = kp("eval", passing, "--suite", SUITE, "-f", "json")
    assert (passed.code, passed.err.splitlines()[-1]) == (0, "--fail-on failure: 0 failing cases")
    never = kp("eval", CASES, "--suite", SUITE, "-f", "json", "--fail-on", "never")
    assert (never.code, "--fail-on" in never.err) == (0, False)


@pytest.mark.parametrize(
    ("name", "case", "nan"),
    [
        ("cases.yaml", "- id: fast\n  actual: {durationMs: %s}\n  expected: {}\n", ".nan"),
        ("cases.jsonl", '{"id": "fast", "actual": {"durationMs": %s}, "expected": {}}\n', "NaN"),
    ],
    ids=["yaml", "jsonl"],
)
def test_a_case_refused_while_read_is_a_regression_not_a_removed_case(
    kp: KpRunner, tmp_path: Path, name: str, case: str, nan: str
) -> None:
    """A passing case given a NaN is compared by its id: regressed, not removed."""
    cases = tmp_path / name
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers:\n  - type: response-time\n    params: {max_acceptable_ms: 500}\n")
    base = tmp_path / "base.json"
    cases.write_text(case % "100")
    assert kp("eval", str(cases), "--suite", str(suite), "-o", str(base)).code == 0
    cases.write_text(case % nan)
    run = kp("eval", str(cases), "--suite", str(suite), "--baseline", str(base), "-f", "json")
    summary = json.loads(run.out)["comparison"]["summary"]
    assert (summary["regressions"], summary["removed"], summary["added"]) == (1, 0, 0)
    assert run.code == 4
