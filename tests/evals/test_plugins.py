"""Third-party scorers found through the knowledgepulse.scorers entry-point group, for real.

Each test writes a module and a ``<dist>-0.1.dist-info`` (METADATA, entry_points.txt) into a
temporary directory on ``sys.path``, which is exactly what ``pip install`` leaves behind.
"""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledgepulse.errors import SuiteError, UnknownScorerError
from knowledgepulse.evals import scorer as registry
from knowledgepulse.evals.runner import evaluate_case
from knowledgepulse.evals.scorers.operation_accuracy import OperationAccuracy
from knowledgepulse.evals.suite import load_suite
from tests.evals.builders import bulk, make_case, op, page

PLUGIN_SOURCE = '''
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult


class ShortEdits(Scorer):
    """1.0 when every actual operation's content is at most 10 characters."""

    default_threshold = 0.5
    reads = BULK_EDIT

    def evaluate(self, actual, expected, pages):
        long = [o for o in actual.operations if len(o.content or "") > 10]
        return ScoreResult(0.0 if long else 1.0, {"longOperations": len(long)})

    def diagnose(self, result):
        return [f"{result.details['longOperations']} operations are too long"]


NotAScorer = object
'''


@pytest.fixture
def plugin_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_registry: None
) -> Iterator[Path]:
    """A directory on sys.path, with entry points reloaded on the next lookup miss."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._scorers.entry_points_loaded = False
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("kp_test_plugin"):
            del sys.modules[name]


def _install(where: Path, dist: str, module: str, source: str, entries: dict[str, str]) -> None:
    """Write a module and a dist-info declaring ``entries`` in the scorer group."""
    (where / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = where / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = "\n".join(f"{name} = {target}" for name, target in entries.items())
    (info / "entry_points.txt").write_text(
        f"[{registry.ENTRY_POINT_GROUP}]\n{lines}\n", encoding="utf-8"
    )


def test_entry_point_scorer_is_found_and_usable_by_name(plugin_dir: Path) -> None:
    """A scorer published under the entry-point group is looked up and runs like a built-in."""
    _install(
        plugin_dir,
        "kp-test-plugin",
        "kp_test_plugin_short",
        PLUGIN_SOURCE,
        {"short-edits": "kp_test_plugin_short:ShortEdits"},
    )
    cls = registry.get_scorer_class("short-edits")
    assert cls.__name__ == "ShortEdits"
    assert cls.type_name == "short-edits"
    assert cls.default_threshold == 0.5
    scorer = cls.from_params({})
    case = make_case(
        [page("p1", b1="x")], actual=[op("update", "b1", content="a long piece of text")]
    )
    result = scorer.evaluate(*bulk(case))
    assert (result.score, result.details) == (0.0, {"longOperations": 1})
    assert scorer.diagnose(result) == ["1 operations are too long"]
    assert "short-edits" in registry.scorer_types()


def test_broken_plugin_is_logged_and_others_still_load(
    plugin_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A plugin that fails to import, or is not a Scorer, is skipped with a warning."""
    _install(
        plugin_dir,
        "kp-test-plugin-mixed",
        "kp_test_plugin_mixed",
        PLUGIN_SOURCE,
        {
            "broken": "kp_test_plugin_missing:Nothing",
            "not-a-scorer": "kp_test_plugin_mixed:NotAScorer",
            "short-edits": "kp_test_plugin_mixed:ShortEdits",
        },
    )
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        assert registry.get_scorer_class("short-edits").__name__ == "ShortEdits"
    messages = [record.getMessage() for record in caplog.records]
    assert any(
        "kp_test_plugin_missing:Nothing" in m and "could not be loaded" in m for m in messages
    )
    assert any("not a Scorer subclass" in m for m in messages)
    with pytest.raises(UnknownScorerError):
        registry.get_scorer_class("broken")


def test_plugin_cannot_shadow_a_built_in(plugin_dir: Path) -> None:
    """An entry point with a built-in's name is ignored; the built-in stays."""
    _install(
        plugin_dir,
        "kp-test-plugin-shadow",
        "kp_test_plugin_shadow",
        PLUGIN_SOURCE,
        {"operation-accuracy": "kp_test_plugin_shadow:ShortEdits"},
    )
    assert "operation-accuracy" in registry.scorer_types()
    assert registry.get_scorer_class("operation-accuracy") is OperationAccuracy


PARAM_PLUGIN_SOURCE = '''
from pydantic import BaseModel, ConfigDict

from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult


class MaxOpsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    at_most: int


class MaxOps(Scorer):
    """1.0 when the model made at most ``at_most`` operations."""

    Params = MaxOpsParams
    reads = BULK_EDIT

    def evaluate(self, actual, expected, pages):
        n = len(actual.operations)
        return ScoreResult(1.0 if n <= self.params.at_most else 0.0, {"operations": n})

    def diagnose(self, result):
        return [f"made {result.details['operations']} operations"]
'''


def test_entry_point_scorer_is_usable_from_a_suite_file_with_validated_params(
    plugin_dir: Path,
) -> None:
    """A plugin's type works in YAML by name; its params are checked; its hint is reported."""
    _install(
        plugin_dir,
        "kp-test-plugin-params",
        "kp_test_plugin_params",
        PARAM_PLUGIN_SOURCE,
        {"max-ops": "kp_test_plugin_params:MaxOps"},
    )
    suite_file = plugin_dir / "suite.yaml"
    suite_file.write_text("scorers:\n  - type: max-ops\n    params: {at_most: 1}\n")
    suite = load_suite(suite_file)
    case = make_case([page("p1", b1="x")], actual=[op("delete", "b1"), op("delete", "b1")])
    [outcome] = evaluate_case(suite, case).outcomes
    assert (outcome.key, outcome.score, outcome.threshold) == ("max-ops", 0.0, 1.0)
    assert outcome.diagnosis == ("made 2 operations",)

    suite_file.write_text("scorers:\n  - type: max-ops\n    params: {at_most: many}\n")
    with pytest.raises(SuiteError) as raised:
        load_suite(suite_file)
    [problem] = raised.value.problems
    assert str(problem).startswith(f'{suite_file}:3: scorers[0].params.at_most: got "many"')
