"""``kp eval`` and ``kp schema`` as a user runs them, on the shipped examples."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "evals"
CASES_YAML = str(EXAMPLES / "cases.yaml")
CASES_JSONL = str(EXAMPLES / "cases.jsonl")
INVALID = str(EXAMPLES / "invalid-cases.jsonl")
SUITE = str(EXAMPLES / "suite.yaml")
BAD_SUITE = str(EXAMPLES / "invalid-suite.yaml")
PASSING_CASE = {
    "id": "ok",
    "pages": [{"id": "p", "blocks": [{"id": "b1", "type": "paragraph", "content": "Cart"}]}],
    "actual": {"operations": [{"type": "update", "targetBlockId": "b1", "content": "Basket"}]},
    "expected": {"operations": [{"type": "update", "targetBlockId": "b1"}]},
}


def test_examples_give_the_documented_verdicts(kp: KpRunner) -> None:
    """The example dataset: 4 of 9 pass; each failing case fails for its documented reason."""
    run = kp("eval", CASES_YAML, CASES_JSONL, "--suite", SUITE, "--format", "json")
    assert run.code == 1
    document = json.loads(run.out)
    verdicts = {case["id"]: case["passed"] for case in document["cases"]}
    assert verdicts == {
        "rename-cart-to-basket": True,
        "summarise-sections-ja": True,
        "rename-cart-missed-one": False,
        "fix-typo-wrong-target": False,
        "summarise-ja-exact-pattern": False,
        "multi-page-rename": True,
        "summarise-sections-hallucinated-tip": False,
        "translate-heading-slow": False,
        "delete-outdated-notice": True,
    }
    failing = {
        case["id"]: [s["type"] for s in case["scorers"] if not s["passed"]]
        for case in document["cases"]
        if not case["passed"]
    }
    assert failing == {
        "rename-cart-missed-one": [
            "operation-accuracy",
            "target-block-precision",
            "content-quality",
        ],
        "fix-typo-wrong-target": [
            "operation-accuracy",
            "target-block-precision",
            "content-quality",
            "anti-hallucination",
        ],
        "summarise-ja-exact-pattern": ["content-quality"],
        "summarise-sections-hallucinated-tip": ["anti-hallucination"],
        "translate-heading-slow": ["response-time"],
    }
    assert document["summary"]["pass_rate"] == 4 / 9
    assert run.err.strip() == "4 of 9 cases passed (44.4%); weighted mean 0.810"


def test_every_case_passing_exits_zero(kp: KpRunner, tmp_path: Path) -> None:
    """Exit code 0 when every case passes."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(PASSING_CASE) + "\n")
    run = kp("eval", str(cases), "--preset", "standard", "-f", "json")
    assert run.code == 0
    assert json.loads(run.out)["summary"]["passed"] == 1


def test_malformed_cases_are_reported_on_stderr_and_the_others_still_run(kp: KpRunner) -> None:
    """Each problem is FILE:LINE: PATH: message on stderr; valid cases run; exit 1."""
    run = kp("eval", INVALID, "--suite", SUITE, "-f", "json")
    assert run.code == 1
    assert (
        f"{INVALID}:2: actual.operations[0].position: got \"inside\"; expected 'before' or 'after'"
        in run.err
    )
    assert f"{INVALID}:3: invalid JSON" in run.err
    assert f"{INVALID}:4: expect: unknown field" in run.err
    assert f"{INVALID}:5: " in run.err
    cases = json.loads(run.out)["cases"]
    assert [(c["id"], c["passed"]) for c in cases] == [
        ("valid-neighbour", True),
        ("insert-inside", False),
        (None, False),
        ("typo-in-keys", False),
        ("multi-page-no-page-id", False),
    ]
    assert all(c["error"] and c["scorers"] == [] for c in cases[1:])


def test_suite_errors_are_printed_together_and_exit_two(kp: KpRunner) -> None:
    """Every suite problem on its own FILE:LINE: PATH: message line; no case runs."""
    run = kp("eval", CASES_YAML, "--suite", BAD_SUITE, "-f", "json")
    assert run.code == 2
    assert run.out == ""
    lines = run.err.strip().splitlines()
    assert [line.split(": ", 2)[:2] for line in lines[:-1]] == [
        [f"{BAD_SUITE}:5", "scorers[0].treshold"],
        [f"{BAD_SUITE}:6", "scorers[1].type"],
        [f"{BAD_SUITE}:8", "scorers[2].weight"],
        [f"{BAD_SUITE}:10", "scorers[3].threshold"],
        [f"{BAD_SUITE}:11", "scorers[4].params.max_acceptable_ms"],
    ]
    assert "Did you mean 'content-quality'?" in lines[1]
    assert lines[-1] == f"kp: error: {BAD_SUITE}: 5 problems in the suite; no case was run"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((CASES_YAML,), "give exactly one of --suite FILE or --preset NAME"),
        ((CASES_YAML, "--suite", SUITE, "--preset", "strict"), "give exactly one of"),
        (("--preset", "strict"), "give case files"),
        ((CASES_YAML, "--preset", "strcit"), "'standard', 'strict', 'operation-focused'"),
        (("--preset", "strict", "--dry-run", "-f", "junit"), "--dry-run prints the suite"),
    ],
)
def test_usage_errors_exit_two(kp: KpRunner, args: tuple[str, ...], message: str) -> None:
    """Suite and preset are exclusive and one is required; unknown presets list the three."""
    run = kp("eval", *args)
    assert run.code == 2
    assert message in run.err


def test_missing_suite_file_is_a_one_line_error(kp: KpRunner, tmp_path: Path) -> None:
    """An unreadable suite is `kp: error: ...`, exit 2."""
    run = kp("eval", CASES_YAML, "--suite", str(tmp_path / "nope.yaml"))
    assert run.code == 2
    assert run.err.strip() == f"kp: error: {tmp_path / 'nope.yaml'}: no such file"


def test_dry_run_prints_the_resolved_suite_without_running_cases(kp: KpRunner) -> None:
    """--dry-run: each scorer with key, type, weight, threshold and params with defaults."""
    run = kp("eval", "--suite", SUITE, "--dry-run", "-f", "json")
    assert run.code == 0
    suite = json.loads(run.out)
    assert [s["key"] for s in suite["scorers"]] == [
        "operation-accuracy",
        "target-block-precision",
        "content-quality",
        "anti-hallucination",
        "response-time",
    ]
    assert suite["scorers"][2]["params"] == {"ignore_case": False, "timeout_ms": 1000.0}
    assert suite["scorers"][4]["params"] == {"max_acceptable_ms": 5000.0}
    assert run.err == ""


def test_dry_run_checks_the_case_files_it_is_given(kp: KpRunner) -> None:
    """With cases, --dry-run reports malformed ones (exit 1) but scores nothing."""
    run = kp("eval", INVALID, "--preset", "standard", "--dry-run", "-f", "json")
    assert run.code == 1
    assert "scorers" in json.loads(run.out)
    assert f"{INVALID}:2: actual.operations[0].position" in run.err


def test_json_output_is_byte_identical_across_runs(kp: KpRunner) -> None:
    """Two runs on the same inputs print the same bytes."""
    args = ("eval", CASES_YAML, CASES_JSONL, INVALID, "--suite", SUITE, "-f", "json")
    assert kp(*args).out == kp(*args).out


def test_output_suffix_picks_junit_and_the_file_parses(kp: KpRunner, tmp_path: Path) -> None:
    """-o report.xml writes JUnit XML with one testcase per case and failures explained."""
    report = tmp_path / "report.xml"
    run = kp("eval", CASES_YAML, CASES_JSONL, INVALID, "--suite", SUITE, "-o", str(report))
    assert run.code == 1
    assert run.out == ""
    root = ET.parse(report).getroot()
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 14
    slow = root.find("testsuite/testcase[@name='translate-heading-slow']/failure")
    assert slow is not None
    assert "took 7400 ms, 2400 ms (48%) over max_acceptable_ms 5000" in (slow.text or "")
    assert len(root.findall("testsuite/testcase/error")) == 4


def test_markdown_format_prints_a_summary_for_ci(kp: KpRunner) -> None:
    """--format markdown starts with the summary table and lists the failing cases."""
    run = kp("eval", CASES_YAML, "--suite", SUITE, "-f", "markdown")
    assert run.out.startswith("## Evaluation: bulk-edit\n")
    assert "### Failing cases (3)" in run.out
    assert "#### `fix-typo-wrong-target`" in run.out


def test_table_format_to_a_file_puts_failing_cases_first(kp: KpRunner, tmp_path: Path) -> None:
    """--format table -o FILE writes the console view without colour codes."""
    report = tmp_path / "report.txt"
    kp("eval", CASES_YAML, "--suite", SUITE, "-f", "table", "-o", str(report))
    text = report.read_text(encoding="utf-8")
    assert "\x1b[" not in text
    assert text.index("FAIL rename-cart-missed-one") < text.index("Passing cases")
    assert text.index("Passing cases") < text.index("Suite bulk-edit")


def test_cases_can_come_from_stdin(kp: KpRunner) -> None:
    """- reads cases from standard input."""
    run = kp("eval", "-", "--preset", "strict", "-f", "json", stdin=json.dumps(PASSING_CASE))
    assert run.code == 0
    assert json.loads(run.out)["cases"][0]["file"] == "<stdin>"


def test_quiet_prints_nothing_on_stderr(kp: KpRunner) -> None:
    """-q drops the problems and the summary line from stderr; the report has them."""
    run = kp("eval", INVALID, "--suite", SUITE, "-f", "json", "-q")
    assert run.code == 1
    assert run.err == ""


def test_schema_suite_prints_the_committed_schema(kp: KpRunner) -> None:
    """kp schema suite prints exactly schemas/suite.schema.json."""
    run = kp("schema", "suite")
    assert run.code == 0
    assert run.out == (ROOT / "schemas" / "suite.schema.json").read_text(encoding="utf-8")
