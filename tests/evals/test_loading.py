"""Loading a task and scorer plugins by name: modules, files, and one-line errors."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledgepulse.errors import PluginLoadError
from knowledgepulse.evals import scorer as registry
from knowledgepulse.evals.tasks import load_plugin, load_task

WORKFLOW = """
from knowledgepulse.evals import TaskInput

def summarise(task: TaskInput) -> str:
    return "summary"

class Bot:
    def answer(self, task):
        return "bot"

bot = Bot()
NOT_CALLABLE = 3
"""
SCORERS = """
from knowledgepulse.evals import Scorer, ScoreResult, register_scorer

@register_scorer("kp-test-always")
class Always(Scorer):
    reads = frozenset()

    def evaluate(self, actual, expected, pages):
        return ScoreResult(1.0)
"""


@pytest.fixture
def code_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_registry: None
) -> Iterator[Path]:
    """A directory of user modules; whatever they import is forgotten afterwards."""
    (tmp_path / "kp_test_workflow.py").write_text(WORKFLOW, encoding="utf-8")
    (tmp_path / "kp_test_scorers.py").write_text(SCORERS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("kp_test_"):  # the user modules, never a library (numpy loads once)
            del sys.modules[name]


def test_a_module_function_is_found_from_the_working_directory(code_dir: Path) -> None:
    """``module:function`` imports the module beside the user, as ``python -m`` would."""
    task = load_task("kp_test_workflow:summarise")
    assert task(None) == "summary"  # type: ignore[arg-type]


def test_a_file_and_a_dotted_attribute_are_found(code_dir: Path) -> None:
    """``path/to/file.py:object.method`` works too."""
    task = load_task(f"{code_dir / 'kp_test_workflow.py'}:bot.answer")
    assert task(None) == "bot"  # type: ignore[arg-type]


def test_a_file_named_twice_is_imported_once(code_dir: Path) -> None:
    """The module name is the file's, so a second load gives the same module."""
    path = str(code_dir / "kp_test_scorers.py")
    assert load_plugin(path) is load_plugin(path)
    assert load_plugin("kp_test_scorers") is load_plugin(path)


def test_a_plugin_registers_its_scorers(code_dir: Path) -> None:
    """Importing a plugin is all it takes for its scorer types to exist."""
    load_plugin(str(code_dir / "kp_test_scorers.py"))
    assert registry.get_scorer_class("kp-test-always").__name__ == "Always"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("summarise", "give MODULE:FUNCTION or path/to/file.py:FUNCTION"),
        ("kp_no_such_module:run", "no module named 'kp_no_such_module'"),
        ("kp_test_workflow:summarize", "has no attribute 'summarize'; did you mean 'summarise'?"),
        ("kp_test_workflow:NOT_CALLABLE", "NOT_CALLABLE is a int, not a function"),
        ("missing/workflow.py:run", "no such file"),
    ],
)
def test_a_bad_task_spec_is_one_line_naming_it(code_dir: Path, spec: str, message: str) -> None:
    """Each way a spec can be wrong says so on one line, with the spec as given."""
    with pytest.raises(PluginLoadError) as raised:
        load_task(spec)
    text = str(raised.value)
    assert "\n" not in text
    assert text.startswith(f"task {spec!r}: ")
    assert message in text


def test_a_module_that_raises_on_import_is_reported_not_raised(code_dir: Path) -> None:
    """The exception's type and first line, not a traceback; a later fix can load it."""
    (code_dir / "kp_test_broken.py").write_text("import kp_missing_dependency\n")
    with pytest.raises(PluginLoadError) as raised:
        load_plugin("kp_test_broken")
    assert str(raised.value) == (
        "plugin 'kp_test_broken': importing it raised ModuleNotFoundError: No module named "
        "'kp_missing_dependency' (at kp_test_broken.py:1); fix the module (run it with python "
        "to see the traceback)"
    )
    (code_dir / "kp_test_broken.py").write_text("VALUE = 1\n")
    assert load_plugin(str(code_dir / "kp_test_broken.py")).VALUE == 1


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("import json\n\nimport kp_missing_dependency\n", "'kp_missing_dependency' (at {}:3)"),
        ("def run(task):\n    return 'x' +\n", "SyntaxError: invalid syntax (at {}:2)"),
        ("X = 1\nraise RuntimeError('no API key')\n", "no API key (at {}:2)"),
        ("import json\njson.loads('{')\n", "column 2 (char 1) (at {}:2)"),
    ],
)
def test_an_import_error_names_the_users_line(code_dir: Path, source: str, said: str) -> None:
    """The line of the user's file the import failed at, not one inside importlib or json."""
    (code_dir / "kp_test_broken.py").write_text(source)
    for spec in ("kp_test_broken:run", f"{code_dir / 'kp_test_broken.py'}:run"):
        with pytest.raises(PluginLoadError, match=re.escape(said.format("kp_test_broken.py"))):
            load_task(spec)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("def run(a, b):\n    pass\n", "run(a, b) (at kp_test_sig.py:1) cannot be called"),
        ("\ndef run():\n    pass\n", "run() (at kp_test_sig.py:2) cannot be called"),
        (
            "class Bot:\n    def __call__(self, *, task):\n        pass\nrun = Bot()\n",
            "Bot(*, task) (at kp_test_sig.py:2) cannot be called",
        ),
    ],
)
def test_a_task_that_takes_no_single_argument_is_refused_at_load(
    code_dir: Path, source: str, said: str
) -> None:
    """A wrong signature is one error naming the definition, not a TypeError in every case."""
    (code_dir / "kp_test_sig.py").write_text(source)
    with pytest.raises(PluginLoadError) as raised:
        load_task("kp_test_sig:run")
    assert said in str(raised.value)
    method = "__call__(self, " if "class" in source else "run("
    assert str(raised.value).endswith(f"TaskInput alone: def {method}task: TaskInput) -> ...")


def test_a_task_with_defaults_or_a_bound_method_loads(code_dir: Path) -> None:
    """One argument is all a call gives: more with defaults, or a bound method, is fine."""
    (code_dir / "kp_test_sig.py").write_text("def run(task, model='small', **extra):\n    pass\n")
    assert load_task("kp_test_sig:run") is not None
    assert load_task("kp_test_workflow:bot.answer") is not None


def test_a_file_that_shadows_an_imported_module_is_refused(code_dir: Path) -> None:
    """A file named like a module already imported from elsewhere would not be the one run."""
    (code_dir / "textwrap.py").write_text("X = 1\n")
    with pytest.raises(PluginLoadError, match="already imported from"):
        load_plugin(str(code_dir / "textwrap.py"))
    assert textwrap.dedent(" x") == "x"
