"""The pytest plugin with a task: the workflow is called for each case, then its answer scored."""

from __future__ import annotations

import pytest

from tests.pytest_plugin.conftest import SUITE, Json, literal, write_jsonl

pytest_plugins = ["pytester"]

WORKFLOW = '''
def renamed(text):
    return text.replace("Cart", "Basket")


def rename(task):
    """Renames Cart to Basket in every block; raises for the case whose instruction says so."""
    if task.instruction == "explode":
        raise RuntimeError("the model is down")
    if task.instruction == "forget":
        return {"operations": []}
    return {
        "operations": [
            {"type": "update", "targetBlockId": b.id, "content": renamed(b.content)}
            for page in task.pages
            for b in page.blocks
        ]
    }
'''


def asked(case_id: str, instruction: str = "rename Cart to Basket") -> Json:
    """A case with no recorded output: the task answers it."""
    return {
        "id": case_id,
        "instruction": instruction,
        "pages": [{"id": "p", "blocks": [{"id": "b1", "type": "p", "content": "Your Cart"}]}],
        "expected": {
            "operations": [{"type": "update", "targetBlockId": "b1"}],
            "contentPatterns": ["Basket"],
        },
    }


@pytest.fixture
def workflow(pytester: pytest.Pytester) -> pytest.Pytester:
    """``suite.yaml`` and ``flows/workflow.py`` (a task) in the pytester directory."""
    (pytester.path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (pytester.path / "flows").mkdir()
    (pytester.path / "flows" / "workflow.py").write_text(WORKFLOW, encoding="utf-8")
    return pytester


def test_a_task_answers_each_case_and_its_answer_is_scored(workflow: pytest.Pytester) -> None:
    """Cases without `actual` pass when the task's answer meets the suite, fail when not."""
    write_jsonl(workflow.path / "cases.jsonl", [asked("renamed"), asked("forgot", "forget")])
    (workflow.path / "evals.kp.yaml").write_text(
        "suite: suite.yaml\ncases: cases.jsonl\ntask: flows/workflow.py:rename\n"
    )
    result = workflow.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*::renamed PASSED*",
            "*::forgot FAILED*",
            "2 scorers below threshold: operation-accuracy 0.000 < 0.800, content-quality 0.000*",
        ]
    )


def test_a_task_that_raises_fails_that_case_only(workflow: pytest.Pytester) -> None:
    """The exception is the case's error result, with the hint; the next case still runs."""
    write_jsonl(workflow.path / "cases.jsonl", [asked("down", "explode"), asked("fine")])
    (workflow.path / "evals.kp.yaml").write_text(
        "suite: suite.yaml\ncases: cases.jsonl\ntask: flows/workflow.py:rename\nretries: 0\n"
    )
    result = workflow.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the task raised RuntimeError: the model is down*"])
    assert "Traceback" not in result.stdout.str()


def test_a_task_that_cannot_be_found_is_a_collection_error(workflow: pytest.Pytester) -> None:
    """A misspelt function is reported at the task line, with the closest name."""
    write_jsonl(workflow.path / "cases.jsonl", [asked("x")])
    (workflow.path / "evals.kp.yaml").write_text(
        "suite: suite.yaml\ncases: cases.jsonl\ntask: flows/workflow.py:renam\n"
    )
    result = workflow.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["evals.kp.yaml:3: task: *has no attribute 'renam'*'rename'*"])


def test_task_settings_without_a_task_are_a_problem(workflow: pytest.Pytester) -> None:
    """retries and repeat apply to task calls; alone they are a mistake to report."""
    write_jsonl(workflow.path / "cases.jsonl", [asked("x")])
    (workflow.path / "evals.kp.yaml").write_text(
        "suite: suite.yaml\ncases: cases.jsonl\nretries: 5\n"
    )
    result = workflow.runpytest()
    result.stdout.fnmatch_lines(
        [literal("evals.kp.yaml:3: retries: 'retries' applies to a task's calls*")]
    )


def test_kp_task_calls_the_task_for_the_case_files_given(workflow: pytest.Pytester) -> None:
    """--kp-task with --kp-suite: the named case files are answered by the task."""
    write_jsonl(workflow.path / "cases.jsonl", [asked("renamed")])
    result = workflow.runpytest(
        "--kp-suite", "suite.yaml", "--kp-task", "flows/workflow.py:rename", "cases.jsonl"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*calling flows/workflow.py:rename"])


def test_kp_task_without_a_suite_is_a_usage_error(workflow: pytest.Pytester) -> None:
    """A task alone has nothing to be judged by."""
    result = workflow.runpytest("--kp-task", "flows/workflow.py:rename")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --kp-task needs a suite*"])


def test_a_task_that_raises_names_the_line_of_the_users_code_it_raised_at(
    workflow: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare ``KeyError: 'content'`` says not which lookup failed: the failure names the
    deepest line of the user's own code (a helper module the workflow calls), as pytest's
    traceback would."""
    (workflow.path / "flows" / "parse.py").write_text(
        "def content_of(answer):\n    return answer['content']\n", encoding="utf-8"
    )
    (workflow.path / "flows" / "parsing.py").write_text(
        "from parse import content_of\n\n\ndef answer(task):\n    return content_of({})\n",
        encoding="utf-8",
    )
    write_jsonl(workflow.path / "cases.jsonl", [asked("parsed")])
    (workflow.path / "evals.kp.yaml").write_text(
        "suite: suite.yaml\ncases: cases.jsonl\ntask: flows/parsing.py:answer\n"
    )
    monkeypatch.setenv("CI", "true")  # pytest then prints the summary's message uncut
    result = workflow.runpytest("-rf", "--junitxml=report.xml")
    result.assert_outcomes(failed=1)
    said = "the task raised KeyError: 'content' (at flows/parse.py:2, in content_of) (1 attempt)"
    result.stdout.fnmatch_lines([said, f"FAILED *::parsed - Failed: {said}"])
    assert said in (workflow.path / "report.xml").read_text(encoding="utf-8")
