"""Evaluation files: the suite and case files they name, and every problem in them at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import SuiteError
from knowledgepulse.evals.evaluate import DEFAULT_TIMEOUT_S
from knowledgepulse.pytest_plugin.eval_file import load_eval_file
from tests.pytest_plugin.conftest import SUITE, rename_case, write_jsonl


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``suite.yaml`` and case files under ``data/``, the evaluation file to go in ``evals/``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "data").mkdir()
    (tmp_path / "evals").mkdir()
    for name in ("b.jsonl", "a.jsonl", "c.yaml"):
        write_jsonl(tmp_path / "data" / name, [rename_case(name)])
    return tmp_path


def write(text: str) -> str:
    """The evaluation file ``evals/e.kp.yaml`` (relative to the working directory)."""
    path = Path("evals/e.kp.yaml")
    path.write_text(text, encoding="utf-8")
    return str(path)


def problems(text: str) -> list[str]:
    """Every problem reported for an evaluation file with ``text``."""
    with pytest.raises(SuiteError) as raised:
        load_eval_file(write(text))
    return [str(problem) for problem in raised.value.problems]


def test_paths_are_relative_to_the_evaluation_file_and_shown_tidy(tree: Path) -> None:
    """../data/a.jsonl from evals/ is data/a.jsonl; the suite is built from its file."""
    spec = load_eval_file(write("suite: ../suite.yaml\ncases: ../data/a.jsonl\n"))
    assert spec.case_files == ("data/a.jsonl",)
    assert spec.suite.name == "rename"
    assert [e.key for e in spec.suite.scorers] == ["operation-accuracy", "content-quality"]


def test_calls_of_user_code_are_bounded_by_kp_evals_default_timeout(tree: Path) -> None:
    """Without `timeout`, a task's or scorer's call has kp eval's limit, not none: no hung CI."""
    spec = load_eval_file(write("suite: ../suite.yaml\ncases: ../data/a.jsonl\n"))
    assert spec.timeout == DEFAULT_TIMEOUT_S


def test_a_glob_matches_files_sorted_and_a_file_named_twice_is_read_once(tree: Path) -> None:
    """Globs expand in name order; a file a later entry names again is not repeated."""
    spec = load_eval_file(
        write("preset: strict\ncases: ['../data/*.jsonl', ../data/a.jsonl, ../data/c.yaml]\n")
    )
    assert spec.case_files == ("data/a.jsonl", "data/b.jsonl", "data/c.yaml")
    assert spec.suite.name == "strict"


def test_every_problem_is_reported_at_once_at_its_line(tree: Path) -> None:
    """A missing file, an empty glob and a misspelt preset: three problems, in one error."""
    found = problems("preset: strct\ncases:\n  - ../data/none.jsonl\n  - '../data/*.csv'\n")
    assert found == [
        "evals/e.kp.yaml:1: preset: unknown preset 'strct'; did you mean 'strict'? the presets "
        "are standard, strict, operation-focused, or name your own suite file with 'suite'",
        "evals/e.kp.yaml:3: cases[0]: data/none.jsonl: no such file; paths in an evaluation "
        "file are relative to the file",
        "evals/e.kp.yaml:4: cases[1]: no file matches '../data/*.csv' in evals/, this file's "
        "folder, which its paths are relative to (looked for 'data/*.csv'); fix the pattern, or "
        "add the case files it should match",
    ]


def test_a_glob_written_from_the_working_directory_says_how_to_write_it(tree: Path) -> None:
    """A pattern that matches nothing from the file's folder but does from here: the fix."""
    assert problems("preset: strict\ncases: 'data/*.jsonl'\n") == [
        "evals/e.kp.yaml:2: cases[0]: no file matches 'data/*.jsonl' in evals/, this file's "
        "folder, which its paths are relative to (looked for 'evals/data/*.jsonl'); from the "
        "working directory it matches 2 files: write '../data/*.jsonl'"
    ]


def test_the_suites_own_problems_are_reported_with_the_evaluation_files(tree: Path) -> None:
    """A bad suite's problems point into the suite file, next to the evaluation file's own."""
    (tree / "suite.yaml").write_text("scorers:\n  - type: nope\n", encoding="utf-8")
    found = problems("suite: ../suite.yaml\ncases: [../data/missing.jsonl]\n")
    assert found[0].startswith("suite.yaml:2: scorers[0].type: unknown scorer type 'nope'")
    assert found[1].startswith("evals/e.kp.yaml:2: cases[0]: data/missing.jsonl: no such file")


def test_a_misspelt_key_does_not_hide_the_other_keys_problems(tree: Path) -> None:
    """`timout` is one problem: the suite's and the case files' are reported with it."""
    (tree / "suite.yaml").write_text("scorers:\n  - type: nope\n", encoding="utf-8")
    found = problems("suite: ../suite.yaml\ncases: [../data/missing.jsonl]\ntimout: 3\n")
    assert found[0].startswith("evals/e.kp.yaml:3: timout: unknown key; did you mean 'timeout'?")
    assert found[1].startswith("suite.yaml:2: scorers[0].type: unknown scorer type 'nope'")
    assert found[2].startswith("evals/e.kp.yaml:2: cases[0]: data/missing.jsonl: no such file")
    assert len(found) == 3


def test_a_refused_suite_or_task_is_not_reported_missing_as_well(tree: Path) -> None:
    """`suite: 3` is wrong, not absent: no "give exactly one of" for it, nor for `retries`."""
    found = problems("suite: 3\ncases: ../data/a.jsonl\nretries: 2\ntask: 5\n")
    assert found == [
        "evals/e.kp.yaml:1: suite: got 3; expected a valid string",
        "evals/e.kp.yaml:4: task: got 5; expected a valid string",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cases: [x]\n", "give exactly one of 'suite' (a suite file) or 'preset'"),
        ("suite: s.yaml\npreset: strict\ncases: [x]\n", "give exactly one of 'suite'"),
        ("preset: strict\n", "cases: required field is missing; list the case files"),
        ("preset: strict\ncases: []\n", "cases: got a list of 0; expected at least 1 item"),
        ("preset: strict\ncase: [x]\n", "case: unknown key; did you mean 'cases'?"),
        (
            "scorers: []\npreset: strict\ncases: [x]\n",
            "scorers: unknown key; an evaluation "
            "file does not list scorers: put them in a suite file",
        ),
        ("just a sentence\n", "holds one mapping with 'suite' (a suite file) or 'preset'"),
        ("preset: [\n", "invalid YAML"),
    ],
    ids=["neither", "both", "no-cases", "empty-cases", "typo", "scorers", "a-scalar", "syntax"],
)
def test_a_malformed_evaluation_file_says_what_to_write(
    tree: Path, text: str, expected: str
) -> None:
    """Each mistake gets a message saying what the file should hold."""
    assert any(expected in problem for problem in problems(text))


@pytest.mark.parametrize("text", ["- preset: strict\n  cases: ../data/a.jsonl\n", "- a\n- b\n"])
def test_an_evaluation_file_that_is_a_list_is_refused_saying_it_found_a_list(
    tree: Path, text: str
) -> None:
    """A list at the top level (a mapping written as a list item, say) is named a list."""
    [problem] = problems(text)
    assert problem.startswith("evals/e.kp.yaml:1: an evaluation file holds one mapping")
    assert problem.endswith("; found a list (1 item)" if "preset" in text else "(2 items)")


def test_an_evaluation_file_that_is_a_list_holding_a_nan_says_both(tree: Path) -> None:
    """The list is named with the .nan in one run, not only once the .nan is fixed."""
    problem, nan = problems("- preset: strict\n  cases: ../data/a.jsonl\n  timeout: .nan\n")
    assert problem.startswith("evals/e.kp.yaml:1: an evaluation file holds one mapping")
    assert problem.endswith("; found a list (1 item)")
    assert nan.startswith("evals/e.kp.yaml:3: timeout: NaN")
