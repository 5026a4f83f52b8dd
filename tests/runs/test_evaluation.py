"""``runs.evaluate_cases`` and ``runs.check_cases``: kp eval in one call, the same verdicts."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK, EXIT_REGRESSION, main
from knowledgepulse.errors import (
    OutputError,
    ParameterConflictError,
    PluginLoadError,
    ScorerParameterError,
    SettingTypeError,
)
from knowledgepulse.evals import Scorer, ScoreResult, load_report, preset, register_scorer
from knowledgepulse.evals.scorer import DETAILS_CHARS, unregister_scorer
from knowledgepulse.evals.tasks import TaskInput, load_task
from knowledgepulse.records import Problem
from knowledgepulse.reports.evals import suite_to_json, suite_to_markdown, to_markdown
from knowledgepulse.reports.junit import to_junit
from knowledgepulse.runs import EvalOutcome, evaluate_cases
from knowledgepulse.runs.evaluation import check_cases
from tests.redact.examples import lines, secret_examples

EXAMPLES = Path(__file__).parents[2] / "examples"
YAML_CASES = str(EXAMPLES / "evals" / "cases.yaml")
JSONL_CASES = str(EXAMPLES / "evals" / "cases.jsonl")
INVALID_CASES = str(EXAMPLES / "evals" / "invalid-cases.jsonl")
SUITE = str(EXAMPLES / "evals" / "suite.yaml")
RENAME_CASES = str(EXAMPLES / "pytest" / "rename-cases.yaml")
RENAME_TASK = f"{EXAMPLES / 'pytest' / 'rename_workflow.py'}:rename"
EXIT = {"passed": EXIT_OK, "failed": EXIT_FINDINGS, "regressed": EXIT_REGRESSION}


def kp_eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    """``kp eval ARGS -f json``: the exit code and the report."""
    capsys.readouterr()
    code = main(["eval", *args, "-f", "json", "-q"])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two baselines written by kp eval: every example under the suite, and the JSONL alone."""
    folder = tmp_path_factory.mktemp("baselines")
    written = {
        "all": (YAML_CASES, JSONL_CASES, "--suite", SUITE),
        "jsonl": (JSONL_CASES, "--preset", "standard"),
    }
    for name, args in written.items():
        assert main(["eval", *args, "--fail-on", "never", "-o", str(folder / f"{name}.json")]) == 0
    return {name: folder / f"{name}.json" for name in written}


CASES = {
    "failures": ((YAML_CASES, JSONL_CASES), {"suite": SUITE}, None, None),
    "all pass": ((JSONL_CASES,), {"preset": "standard"}, None, None),
    "old failures only": ((YAML_CASES, JSONL_CASES), {"suite": SUITE}, "all", None),
    "old failures fail": ((YAML_CASES, JSONL_CASES), {"suite": SUITE}, "all", "failure"),
    "recorded": ((YAML_CASES, JSONL_CASES), {"suite": SUITE}, "all", "never"),
    "new failures": ((YAML_CASES, JSONL_CASES), {"suite": SUITE}, "jsonl", None),
    "malformed": ((INVALID_CASES,), {"suite": SUITE}, None, None),
}


@pytest.mark.parametrize("name", CASES)
def test_the_verdict_is_the_exit_code_kp_eval_gives(
    name: str, baselines: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """On the examples, with and without a baseline and each gate: kp eval's exit code and cases."""
    cases, suite, baseline, fail_on = CASES[name]
    base = baselines[baseline] if baseline is not None else None
    args = [*cases, *(f"--{key}={value}" for key, value in suite.items())]
    args += [f"--baseline={base}"] if base is not None else []
    args += [f"--fail-on={fail_on}"] if fail_on is not None else []
    code, report = kp_eval(capsys, *args)
    outcome = evaluate_cases(list(cases), baseline=base, fail_on=fail_on, **suite)  # type: ignore[arg-type]
    assert EXIT[outcome.verdict] == code
    assert outcome.passed == (code == EXIT_OK)
    assert outcome.report.model_dump(mode="json")["cases"] == report["cases"]


def test_a_baseline_may_be_a_run_a_report_or_its_file(baselines: dict[str, Path]) -> None:
    """The same comparison and gate whichever form the baseline takes."""
    earlier = evaluate_cases(JSONL_CASES, preset="standard", fail_on="never")
    forms = (earlier.run, earlier.report, str(baselines["jsonl"]), load_report(baselines["jsonl"]))
    outcomes = [evaluate_cases([YAML_CASES, JSONL_CASES], suite=SUITE, baseline=b) for b in forms]
    assert {o.verdict for o in outcomes} == {"regressed"}
    assert len({o.gate for o in outcomes}) == 1
    assert len({o.comparison.summary for o in outcomes if o.comparison is not None}) == 1


def test_problems_are_told_as_found_and_kept_in_the_outcome() -> None:
    """on_problem hears each problem as it is read, in the order the outcome keeps them."""
    told: list[Problem] = []
    outcome = evaluate_cases(INVALID_CASES, suite=SUITE, on_problem=told.append)
    assert tuple(told) == outcome.problems
    assert [problem.location.line for problem in told] == [2, 3, 4, 5]
    assert outcome.run.summary.malformed == 4


def test_check_cases_reads_every_case_and_scores_none() -> None:
    """A dry run: the resolved suite and what reading found; valid cases pass the check."""
    check = check_cases(INVALID_CASES, suite=SUITE)
    assert (check.cases, check.malformed, check.unreadable_files, check.warnings) == (5, 4, 0, 0)
    assert not check.passed
    assert len(check.problems) == 4
    good = check_cases([YAML_CASES, JSONL_CASES], preset="strict")
    assert good.passed
    assert good.cases == 9
    assert good.suite.name == "strict"


def test_cases_may_be_dicts_and_a_suite_an_object() -> None:
    """In-memory cases judged by a built suite: the verdicts of the same cases read from a file."""
    rows = [json.loads(line) for line in Path(JSONL_CASES).read_text("utf-8").splitlines()]
    in_memory = evaluate_cases(rows, suite=preset("standard"))
    from_file = evaluate_cases(JSONL_CASES, preset="standard")
    assert [case.passed for case in in_memory.run.cases] == [
        case.passed for case in from_file.run.cases
    ]
    assert str(in_memory.run.cases[1].location) == "<cases>[1]"


def test_a_suite_may_be_data_shaped_like_a_suite_file() -> None:
    """suite={"scorers": [...]} is built as the file with that content would be."""
    data = {"name": "ops", "scorers": [{"type": "operation-accuracy", "threshold": 0.9}]}
    outcome = evaluate_cases(JSONL_CASES, suite=data)
    assert outcome.suite.name == "ops"
    assert [(s.key, s.threshold) for s in outcome.suite.scorers] == [("operation-accuracy", 0.9)]


def test_a_list_of_scorers_as_the_suite_is_refused_naming_suite() -> None:
    """suite=[scorers] names the suite parameter and what it takes, not load_suite's path."""
    scorers: Any = [{"type": "operation-accuracy"}]
    with pytest.raises(SettingTypeError) as refused:
        evaluate_cases(JSONL_CASES, suite=scorers)
    message = str(refused.value)
    assert message.startswith("suite (a list): give a suite file's path, a Suite, or data")
    assert "a list of scorers goes under 'scorers'" in message
    with pytest.raises(SettingTypeError, match=r"^suite \(a list\)"):
        check_cases(JSONL_CASES, suite=scorers)


@pytest.mark.usefixtures("isolated_registry")
def test_one_plugin_given_alone_is_loaded_as_one(tmp_path: Path) -> None:
    """plugins="my_scorers.py" loads that file; it was read a character at a time ("no module
    named 's'"). A value of another type names plugins."""
    plugin = tmp_path / "kp_alone_plugin.py"
    plugin.write_text(
        "from knowledgepulse.evals import Scorer, ScoreResult, register_scorer\n\n"
        "@register_scorer('kp-test-alone')\nclass Alone(Scorer):\n"
        "    def evaluate(self, actual, expected, pages):\n        return ScoreResult(1.0)\n"
    )
    checked = check_cases(
        JSONL_CASES, suite={"scorers": [{"type": "kp-test-alone"}]}, plugins=str(plugin)
    )
    assert [scorer.key for scorer in checked.suite.scorers] == ["kp-test-alone"]
    wrong: Any = 3
    with pytest.raises(SettingTypeError, match=r"^plugins=3: give a module or a \.py file"):
        check_cases(JSONL_CASES, preset="standard", plugins=wrong)


def test_one_case_not_in_a_list_is_refused_saying_so() -> None:
    """cases=a_dict is not read as its keys (paths): the TypeError says to put it in a list."""
    case = json.loads(Path(JSONL_CASES).read_text("utf-8").splitlines()[0])
    with pytest.raises(TypeError, match=re.escape("cases=[case]")):
        evaluate_cases(case, preset="standard")


def test_a_case_that_is_not_a_mapping_is_a_malformed_case() -> None:
    """A number among in-memory cases is malformed at its index, as in a JSON file."""
    outcome = evaluate_cases([3], preset="standard")  # type: ignore[list-item]
    assert [str(problem) for problem in outcome.problems] == [
        "<cases>[0]: got 3; expected a JSON object"
    ]
    assert outcome.verdict == "failed"


def test_a_task_by_name_or_as_a_function_gives_the_same_run() -> None:
    """The example workflow renames Cart to Basket; named or passed, each case passes."""
    by_name = evaluate_cases(RENAME_CASES, preset="strict", task=RENAME_TASK, cache_dir=None)
    assert by_name.passed
    assert by_name.task_failures == ()

    function = load_task(RENAME_TASK)
    as_function = evaluate_cases(RENAME_CASES, preset="strict", task=function, cache_dir=None)
    assert verdicts(as_function) == verdicts(by_name)


def verdicts(outcome: EvalOutcome) -> list[tuple[str | None, bool, list[float | None]]]:
    """Each case's id, verdict and scores (not its durations, which vary)."""
    return [
        (case.id, case.passed, [score.score for score in case.scorers])
        for case in outcome.report.cases
    ]


def test_a_task_that_raises_is_a_located_problem_of_its_case() -> None:
    """Each failed call is a problem at its case, with the run it was, as kp eval prints it."""

    def flaky(task: TaskInput) -> object:
        if task.case_id == "rename-two-pages":
            raise RuntimeError("model unavailable")
        return {"operations": []}

    outcome = evaluate_cases(RENAME_CASES, preset="strict", task=flaky, repeat=2, cache_dir=None)
    at = f"tests/runs/test_evaluation.py:{flaky.__code__.co_firstlineno + 2}, in flaky"
    assert [str(problem) for problem in outcome.task_failures] == [
        f"{RENAME_CASES}:18: case 'rename-two-pages' (run {run}): the task raised "
        f"RuntimeError: model unavailable (at {at})"
        for run in (1, 2)
    ]
    assert outcome.verdict == "failed"


def test_a_task_returning_a_nan_is_said_to_return_it_at_its_path_not_to_raise() -> None:
    """The task raised nothing: its stderr line and each scorer's reason say what it returned."""

    def with_nan(task: TaskInput) -> object:
        return {"operations": [], "score": {"x": float("nan")}}

    outcome = evaluate_cases(RENAME_CASES, preset="strict", task=with_nan, cache_dir=None)
    said = "the task returned data that is not JSON (dict): score.x is nan; return"
    lines = [str(problem) for problem in outcome.task_failures]
    reasons = [score.error or "" for case in outcome.report.cases for score in case.scorers]
    assert lines
    assert reasons
    assert all(said in text and "raised" not in text for text in [*lines, *reasons])


def test_a_task_timeout_reads_timed_out_on_stderr_and_in_each_reason() -> None:
    """The wording the pytest plugin and the views use: 'timed out', not 'raised TimeoutError'."""

    def hung(task: TaskInput) -> object:
        time.sleep(1)
        return {"operations": []}

    outcome = evaluate_cases(RENAME_CASES, preset="strict", task=hung, timeout=0.05)
    lines = [str(problem) for problem in outcome.task_failures]
    reasons = [score.error or "" for case in outcome.report.cases for score in case.scorers]
    assert lines
    assert reasons
    said = "the task timed out: no answer within 0.05 s"
    assert all(said in text and "TimeoutError" not in text for text in [*lines, *reasons])


def test_a_long_or_multiline_task_error_is_one_short_line_and_whole_in_the_report() -> None:
    """A 300,000-character message is cut on its stderr line and in each scorer's reason, and
    kept whole, once, in the report's task error."""
    message = "first line\n" + "x" * 300_000

    def verbose(task: TaskInput) -> object:
        raise ValueError(message)

    outcome = evaluate_cases(RENAME_CASES, preset="strict", task=verbose, cache_dir=None)
    lines = [str(problem) for problem in outcome.task_failures]
    assert all(len(line) < 1_000 and "\n" not in line for line in lines)
    at = f"tests/runs/test_evaluation.py:{verbose.__code__.co_firstlineno + 1}, in verbose"
    cut = f"ValueError: first line\\n{'x' * 489}… (299,511 more characters) (at {at})"
    assert lines[0].endswith(cut)
    assert {
        case.task.error.message for case in outcome.report.cases if case.task and case.task.error
    } == {message}
    reasons = [score.error or "" for case in outcome.report.cases for score in case.scorers]
    assert reasons
    assert all(len(reason) < 1_000 and "(299,511 more characters)" in reason for reason in reasons)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"suite": SUITE, "preset": "standard"}, ("suite", "preset")),
        ({}, ("suite", "preset")),
        ({"suite": SUITE, "fail_on": "regression"}, ("fail_on=", "baseline=")),
        ({"suite": SUITE, "repeat": 2, "cache_dir": None}, ("repeat", "cache_dir", "task=")),
        ({"suite": SUITE, "baseline": "base.json", "tolerance": -1}, ("tolerance",)),
        ({"suite": SUITE, "tolerance": 0.1}, ("tolerance applies", "baseline=")),
        (
            {"suite": SUITE, "task": RENAME_TASK, "cache_dir": "elsewhere"},
            ("cache_dir holds the outputs cached under task_version",),
        ),
    ],
)
def test_settings_that_cannot_run_are_refused_by_their_parameter_names(
    arguments: dict[str, object], named: tuple[str, ...]
) -> None:
    """Before anything is read, a ValueError names the parameters as Python spells them."""
    with pytest.raises(ValueError, match=re.escape(named[0])) as refused:
        evaluate_cases("no-such-file.jsonl", **arguments)  # type: ignore[arg-type]
    message = str(refused.value)
    assert all(name in message for name in named), message
    assert "--" not in message


def test_an_unknown_fail_on_is_refused_before_any_case_is_read() -> None:
    """fail_on='failures' (a typo) is refused, naming it; it was judged as 'failure'."""
    read: list[Problem] = []
    with pytest.raises(
        ScorerParameterError, match=re.escape("fail_on='failures': give one of")
    ) as refused:
        evaluate_cases(INVALID_CASES, suite=SUITE, fail_on="failures", on_problem=read.append)  # type: ignore[arg-type]
    assert "'failures'" in str(refused.value)
    assert read == []


def test_a_dry_run_refuses_the_settings_the_run_would() -> None:
    """check_cases takes the run's settings and refuses a conflict as evaluate_cases does."""
    with pytest.raises(ParameterConflictError, match=re.escape("repeat only applies with task=")):
        check_cases(JSONL_CASES, preset="strict", repeat=2)


def test_a_task_that_is_no_function_is_refused_before_any_case_runs() -> None:
    """task=5 raises at once, naming task, instead of failing every case with 'not callable'."""
    with pytest.raises(SettingTypeError, match="task=5: give a function or 'module:function'"):
        evaluate_cases("no-such-file.jsonl", preset="strict", task=5)  # type: ignore[arg-type]


def test_a_task_function_of_the_wrong_arity_is_refused_before_any_case_runs() -> None:
    """A function that cannot take the one TaskInput is one error, as a spec naming it is."""

    def no_argument() -> str:
        return "x"

    def two(task: TaskInput, extra: str) -> str:
        return extra

    for task in (no_argument, two):
        with pytest.raises(SettingTypeError, match=r"^task: .*cannot be called with one argument"):
            evaluate_cases("no-such-file.jsonl", preset="strict", task=task)  # type: ignore[arg-type]
        with pytest.raises(SettingTypeError, match="TaskInput alone"):
            check_cases("no-such-file.jsonl", preset="strict", task=task)  # type: ignore[arg-type]


def test_a_task_that_cannot_be_imported_and_a_missing_case_file_are_raised_together(
    tmp_path: Path,
) -> None:
    """The task's error is raised, the case file's a note on it (PEP 678): both in one run."""
    missing = str(tmp_path / "missing.jsonl")
    with pytest.raises(PluginLoadError, match="has no attribute 'renam'") as raised:
        evaluate_cases([RENAME_CASES, missing], preset="strict", task=RENAME_TASK[:-1])
    assert raised.value.__notes__ == [f"{missing}: no such file"]


def test_an_unwritable_cache_names_cache_dir(tmp_path: Path) -> None:
    """The output cache's error names the parameter (kp spells it --cache-dir)."""
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(OutputError) as refused:
        evaluate_cases(
            RENAME_CASES, preset="strict", task=RENAME_TASK, task_version="1", cache_dir=blocked
        )
    assert "(cache_dir)" in str(refused.value)
    assert "cache_dir=None" in str(refused.value)


def test_the_outcome_is_typed_data() -> None:
    """An EvalOutcome holds the run, the comparison, the gate and the problems."""
    outcome = evaluate_cases(JSONL_CASES, preset="standard")
    assert isinstance(outcome, EvalOutcome)
    assert outcome.comparison is None
    assert outcome.gate.fail_on == "failure"
    assert outcome.suite is outcome.run.suite


def test_a_run_over_no_case_fails_unless_allowed(tmp_path: Path) -> None:
    """An empty case file fails the verdict, as kp eval exits 1; allow_empty lets it pass."""
    empty = tmp_path / "none.jsonl"
    empty.write_text("", encoding="utf-8")
    refused = evaluate_cases(str(empty), preset="strict")
    allowed = evaluate_cases(str(empty), preset="strict", allow_empty=True)
    assert (refused.empty, refused.verdict, refused.passed) == (True, "failed", False)
    assert (allowed.verdict, allowed.passed) == ("passed", True)


def test_a_warning_found_checking_a_case_against_the_suite_is_told_once() -> None:
    """A case fitted to the suite as it is read, then run, carries its warning once."""
    case = {
        "id": "typo",
        "pages": [{"id": "p", "blocks": [{"id": "intro", "type": "p", "content": "Hi"}]}],
        "actual": {"operations": []},
        "expected": {"operations": [{"type": "update", "targetBlockId": "Intro"}]},
    }
    outcome = evaluate_cases([case], preset="standard")
    [warning] = outcome.problems
    assert warning.warning
    assert warning.path == "expected.operations[0].targetBlockId"
    assert outcome.run.summary.warnings == 1
    assert outcome.run.cases[0].warnings == (warning,)


def test_no_secret_a_case_or_a_task_holds_is_quoted_in_problems_or_reports(
    tmp_path: Path,
) -> None:
    """A refused value and a task's exception are quoted in messages and every report: any
    secret in them is redacted there, as in kp's other messages."""
    token = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
    key = "sk-proj-XwDwNy1dCzhPTZn-t-A52u1F7L7DEeb30G4ra6UUkCZznqpL"
    cases = [json.loads(line) for line in Path(JSONL_CASES).read_text().splitlines()[:2]]
    cases[0]["actual"]["durationMs"] = f'token="{token}"'
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(map(json.dumps, cases)) + "\n")
    told: list[Problem] = []
    outcome = evaluate_cases(str(path), suite=SUITE, on_problem=told.append)

    def leaky(task: TaskInput) -> object:
        raise RuntimeError(f"401 from https://api.example.com/v1?api_key={key}")

    failed = evaluate_cases(RENAME_CASES, preset="strict", task=leaky, cache_dir=None)
    messages = [*told, *outcome.problems, *failed.task_failures]
    reports = [outcome.report.model_dump_json(), failed.report.model_dump_json()]
    shown = "\n".join([*map(str, messages), *reports])
    assert "[REDACTED:" in shown
    assert token[:12] not in shown
    assert key[:12] not in shown


@pytest.mark.parametrize("redact", [False, True])
def test_no_secret_used_as_a_key_is_named_by_a_problem_s_path(redact: bool) -> None:
    """An unknown key is quoted in the problem's path (['eyJ...']: unknown field), which goes
    to stderr and every report: a secret there is redacted as in the message, --redact or not."""
    jwt = (
        "eyJhbGciOiJIUzI1NiJ9."
        + "eyJzdWIiOiJwbGFudGVkIn0.Xk3vPq9LmZr2Tw8YbN4cH6sJd1Fg7QaUe0Io5Ry2Ws"
    )
    cases = [json.loads(line) for line in Path(JSONL_CASES).read_text().splitlines()[:1]]
    cases[0][jwt] = 1
    told: list[Problem] = []
    outcome = evaluate_cases(cases, suite=SUITE, on_problem=told.append, redact=redact)
    shown = "\n".join([*map(str, [*told, *outcome.problems]), outcome.report.model_dump_json()])
    assert "unknown field" in shown
    assert jwt[:12] not in shown


def test_no_planted_secret_of_any_shape_is_quoted_in_eval_problems_or_reports(
    tmp_path: Path,
) -> None:
    """Every example the rules know (tests/redact/examples) as a refused case value, and ours
    (the shapes leak hunts found) in a task's exception: none is quoted in a message or a
    report. (All of gitleaks' in one exception cost a minute: a few of its rules are slow on a
    long text of many lines.)"""
    examples = secret_examples()
    template = json.loads(Path(JSONL_CASES).read_text().splitlines()[0])
    cases = []
    for index, example in enumerate(examples):
        case = json.loads(json.dumps(template))
        case["id"] = f"case-{index}"
        case["actual"]["durationMs"] = example["sample"]
        cases.append(case)
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(map(json.dumps, cases)) + "\n")
    told: list[Problem] = []
    outcome = evaluate_cases(str(path), suite=SUITE, on_problem=told.append)

    ours = lines("secret_examples.jsonl")

    def leaky(task: TaskInput) -> object:
        raise RuntimeError("\n".join(example["sample"] for example in ours))

    failed = evaluate_cases(RENAME_CASES, preset="strict", task=leaky, cache_dir=None)
    messages = [*told, *outcome.problems, *failed.task_failures]
    shown = "\n".join(
        [*map(str, messages), outcome.report.model_dump_json(), failed.report.model_dump_json()]
    )
    assert len(told) >= len(examples)  # every case was refused, its value quoted
    assert [e["rule"] for e in [*examples, *ours] if e["secret"] in shown] == []


@pytest.fixture
def echoing_scorers() -> Iterator[None]:
    """Two scorers that quote the output: in their details (the default diagnosis shows them,
    cut at 300 characters) and in a diagnosis of their own."""

    @register_scorer("echo-details")
    class EchoDetails(Scorer):
        default_threshold = 1.0

        def evaluate(self, actual: Any, expected: Any, pages: Any) -> ScoreResult:
            return ScoreResult(0.0, {"seen": json.dumps(actual), "wanted": json.dumps(expected)})

    @register_scorer("echo-diagnosis")
    class EchoDiagnosis(EchoDetails):
        def diagnose(self, result: ScoreResult) -> list[str]:
            return [f"it answered {result.details['seen']}"]

    yield
    unregister_scorer("echo-details")
    unregister_scorer("echo-diagnosis")


def _split_by_the_cut(sample: str, secret: str) -> str:
    """``sample`` after as many spaces as put the middle of its secret at the default diagnosis'
    cut (:data:`DETAILS_CHARS`), as an output of ``echo-details`` is shown there."""
    shown = json.dumps({"seen": json.dumps(sample)}, ensure_ascii=False)
    at = shown.index(secret) + len(secret) // 2
    return " " * max(0, DETAILS_CHARS - 3 - at) + sample


@pytest.mark.usefixtures("echoing_scorers")
def test_no_secret_is_quoted_by_a_scorers_details_or_diagnosis() -> None:
    """A scorer's details and diagnosis that quote the output are cleaned as the output is,
    in every report; the default diagnosis is cut from the cleaned details, so that a secret
    the cut splits (a JWT without its signature) is not left half there."""
    plain = re.compile(r"[\w.+/=-]{16,}")  # written as it is, inside JSON inside JSON
    examples = [e for e in secret_examples() if plain.fullmatch(e["secret"])]
    cases = [
        {"id": f"c{i}", "actual": _split_by_the_cut(e["sample"], e["secret"]), "expected": None}
        for i, e in enumerate(examples)
    ]
    suite = {"scorers": [{"type": "echo-details"}, {"type": "echo-diagnosis"}]}
    outcome = evaluate_cases(cases, suite=suite)
    shown = outcome.report.model_dump_json() + to_markdown(outcome.run) + to_junit(outcome.run)
    assert shown.count("[REDACTED:") >= 4 * len(examples)
    halves = [e["rule"] for e in examples if e["secret"][: len(e["secret"]) // 2] in shown]
    assert halves == []


JUDGE_KEY = "sk-proj-XwDwNy1dCzhPTZn-t-A52u1F7L7DEeb30G4ra6UUkCZznqpL"


@pytest.fixture
def judge() -> Iterator[None]:
    """A scorer that takes an API key as a parameter, and passes only when it has it whole."""

    class JudgeParams(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        api_key: str

    @register_scorer("keyed-judge")
    class Judge(Scorer):
        default_threshold = 1.0
        Params: ClassVar[type[BaseModel]] = JudgeParams
        params: JudgeParams

        def evaluate(self, actual: Any, expected: Any, pages: Any) -> ScoreResult:
            return ScoreResult(float(self.params.api_key == JUDGE_KEY))

    yield
    unregister_scorer("keyed-judge")


@pytest.mark.usefixtures("judge")
def test_a_key_among_a_scorers_parameters_is_in_no_report_and_still_used() -> None:
    """A judge's API key given as a parameter: the JSON report's suite and the dry run's (JSON,
    Markdown) show it redacted, while the scorer is called with its key (the case passes)."""
    suite = {"scorers": [{"type": "keyed-judge", "params": {"api_key": JUDGE_KEY}}]}
    cases = [{"id": "c", "actual": "an answer", "expected": "an answer"}]
    outcome = evaluate_cases(cases, suite=suite)
    assert outcome.passed
    checked = check_cases(cases, suite=suite).suite
    shown = [outcome.report.model_dump_json(), suite_to_json(checked), suite_to_markdown(checked)]
    assert all("[REDACTED:api_key]" in text for text in shown)
    assert not any(JUDGE_KEY[:16] in text for text in shown)


@pytest.mark.parametrize(
    ("said", "redact"),
    [(f"your key is {JUDGE_KEY}", False), ("write to ada@example.org", True)],
)
def test_an_output_the_report_cleans_never_reaches_the_cache(
    tmp_path: Path, said: str, redact: bool
) -> None:
    """An answer quoting an API key (or, with redact, an e-mail address) is not written to the
    output cache on disk, which CI keeps between runs; the next run calls the task again."""
    calls: list[str] = []

    def quoting(task: TaskInput) -> object:
        calls.append(task.case_id)
        return {"operations": [], "note": said}

    def run() -> EvalOutcome:
        return evaluate_cases(
            RENAME_CASES,
            preset="strict",
            task=quoting,
            task_version="v1",
            cache_dir=tmp_path,
            redact=redact,
        )

    first = run()
    cached = [path.read_text() for path in tmp_path.rglob("*.json")]
    assert [case.task.cached for case in first.report.cases if case.task] == [False] * len(calls)
    assert cached == []
    assert said not in first.report.model_dump_json()
    run()
    assert len(calls) == 2 * len(first.report.cases)


def test_a_scorer_giving_details_that_are_no_dict_fails_its_case_not_the_run() -> None:
    """Details as a list were an internal error of the whole run; now that scorer's error."""

    @register_scorer("listed-details")
    class ListedDetails(Scorer):
        def evaluate(self, actual: Any, expected: Any, pages: Any) -> ScoreResult:
            return ScoreResult(1.0, ["not", "a", "dict"])  # type: ignore[arg-type]

    try:
        case = {"id": "a", "actual": "x", "expected": None}
        outcome = evaluate_cases([case], suite={"scorers": [{"type": "listed-details"}]})
    finally:
        unregister_scorer("listed-details")
    assert outcome.verdict == "failed"
    [scored] = outcome.run.cases[0].outcomes
    assert scored.error == (
        'the scorer returned details of type list; give a dict, ScoreResult(score, {"reason": ...})'
    )


def test_details_with_a_key_json_has_not_are_reported_not_an_internal_error() -> None:
    """A tuple key in a scorer's details stopped the run in its default diagnosis; now shown."""

    @register_scorer("tuple-keyed")
    class TupleKeyed(Scorer):
        def evaluate(self, actual: Any, expected: Any, pages: Any) -> ScoreResult:
            return ScoreResult(0.0, {("page", 1): "missing"})  # type: ignore[dict-item]

    try:
        case = {"id": "a", "actual": "x", "expected": None}
        outcome = evaluate_cases([case], suite={"scorers": [{"type": "tuple-keyed"}]})
    finally:
        unregister_scorer("tuple-keyed")
    [scored] = outcome.run.cases[0].outcomes
    assert scored.diagnosis == ("details: {('page', 1): 'missing'}",)
    assert outcome.report.model_dump()["cases"][0]["scorers"][0]["details"] == {
        "['page', 1]": "missing"
    }
