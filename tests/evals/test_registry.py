"""The scorer registry: lookups, user registration, and parameter validation."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic import BaseModel, ConfigDict

from knowledgepulse.errors import ScorerParameterError, SuiteError, UnknownScorerError
from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Page
from knowledgepulse.evals.scorer import (
    BULK_EDIT,
    ENTRY_POINT_GROUP,
    Scorer,
    ScoreResult,
    get_scorer_class,
    register_scorer,
    scorer_types,
    unregister_scorer,
)
from knowledgepulse.evals.scorers.operation_accuracy import OperationAccuracy
from tests.evals.builders import bulk, make_case, make_suite, op, page

BUILT_IN_NAMES = [
    "anti-hallucination",
    "content-quality",
    "operation-accuracy",
    "operation-result",
    "response-time",
    "target-block-precision",
]


class _OpCountParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at_most: int = 3


class _OpCount(Scorer):
    """A user's scorer: 1.0 when the model made at most ``at_most`` operations."""

    default_threshold = 1.0
    Params = _OpCountParams
    reads = BULK_EDIT
    params: _OpCountParams

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        count = len(actual.operations)
        return ScoreResult(1.0 if count <= self.params.at_most else 0.0, {"operations": count})


def test_built_ins_are_registered_by_their_spec_names() -> None:
    """All six built-ins are known by type name."""
    assert set(BUILT_IN_NAMES) <= set(scorer_types())
    assert get_scorer_class("operation-accuracy") is OperationAccuracy
    assert OperationAccuracy.type_name == "operation-accuracy"


def test_lookup_miss_lists_known_names_closest_and_how_to_add() -> None:
    """An unknown type says which exist, which is closest, and how to add one."""
    with pytest.raises(UnknownScorerError) as raised:
        get_scorer_class("operation-acuracy")
    message = str(raised.value)
    assert "unknown scorer type 'operation-acuracy'" in message
    assert "Did you mean 'operation-accuracy'?" in message
    assert ", ".join(BUILT_IN_NAMES) in message
    assert "@register_scorer" in message
    assert ENTRY_POINT_GROUP in message


def test_lookup_miss_without_a_close_name_gives_no_guess() -> None:
    """A name like nothing known gets the list but no 'Did you mean'."""
    with pytest.raises(UnknownScorerError) as raised:
        get_scorer_class("zzz")
    assert "Did you mean" not in str(raised.value)


@pytest.mark.usefixtures("isolated_registry")
def test_user_scorer_registers_with_the_decorator_and_is_usable_by_name() -> None:
    """@register_scorer makes a user's class available by name, with its params validated."""
    register_scorer("op-count")(_OpCount)
    assert "op-count" in scorer_types()
    scorer = get_scorer_class("op-count").from_params({"at_most": 1})
    case = make_case([page("p1", b1="x")], actual=[op("delete", "b1"), op("delete", "b1")])
    assert scorer.score(*bulk(case)) == 0.0
    assert scorer.details(*bulk(case)) == {"operations": 2}
    assert scorer.diagnose(scorer.evaluate(*bulk(case))) == ['details: {"operations": 2}']


@pytest.mark.usefixtures("isolated_registry")
def test_registering_a_taken_name_with_another_class_fails() -> None:
    """Two classes cannot share a type name; the error names the holder."""

    class Other(_OpCount):
        pass

    with pytest.raises(ValueError, match="'operation-accuracy' is already registered by"):
        register_scorer("operation-accuracy")(Other)


@pytest.mark.usefixtures("isolated_registry")
def test_a_class_that_is_no_scorer_is_refused_at_registration() -> None:
    """It was listed as a known type, then ended the run when a suite used it."""

    class Judge:
        def evaluate(self, actual: object, expected: object, pages: object) -> float:
            return 1.0

    with pytest.raises(ScorerParameterError, match=r"decorates Judge, which is not a Scorer sub"):
        register_scorer("judge")(Judge)  # type: ignore[type-var]
    assert "judge" not in scorer_types()


@pytest.mark.parametrize(
    ("reads", "said"),
    [
        (
            "actual",
            "reads = 'actual'; give a set of the parts it reads in the bulk-edit form, "
            "such as {'actual'}",
        ),
        ({"answer"}, "reads = {'answer'}, which holds a part no case has; give a set"),
        (None, "reads = None; give a set"),
    ],
)
def test_a_scorer_whose_reads_is_no_set_of_parts_is_refused_as_its_class_is_made(
    reads: object, said: str
) -> None:
    """reads = "actual" failed every case with a pydantic error pointing at a URL."""
    body = {"reads": reads, "evaluate": lambda self, actual, expected, pages: ScoreResult(1.0)}
    with pytest.raises(ScorerParameterError, match="scorer class Judge: ") as raised:
        type("Judge", (Scorer,), body)  # class Judge(Scorer): reads = ... , made at import
    assert said in str(raised.value)


def test_a_scorer_reading_a_tuple_of_parts_is_accepted() -> None:
    """Any collection of known parts is a set of them: membership is all that is asked."""

    class Lister(Scorer):
        reads = ("actual", "pages")  # type: ignore[assignment]

        def evaluate(self, actual: object, expected: object, pages: object) -> ScoreResult:
            return ScoreResult(score=1.0)

    assert "actual" in Lister.reads


@pytest.mark.usefixtures("isolated_registry")
def test_registering_the_same_class_twice_is_harmless() -> None:
    """Re-running a module that registers a class (a notebook cell) is not an error."""
    register_scorer("op-count")(_OpCount)
    register_scorer("op-count")(_OpCount)
    assert get_scorer_class("op-count") is _OpCount


@pytest.mark.usefixtures("isolated_registry")
def test_unregister_removes_a_name() -> None:
    """unregister_scorer frees the name."""
    register_scorer("op-count")(_OpCount)
    unregister_scorer("op-count")
    with pytest.raises(UnknownScorerError):
        get_scorer_class("op-count")


@pytest.mark.parametrize("name", ["", " spaced", "trailing "])
def test_bad_type_names_are_rejected(name: str) -> None:
    """Empty names or names with surrounding spaces are refused."""
    with pytest.raises(ValueError, match="non-empty without spaces"):
        register_scorer(name)


def test_unknown_parameter_is_rejected_with_its_name() -> None:
    """A misspelt parameter fails and says to check its spelling."""
    with pytest.raises(ScorerParameterError) as raised:
        get_scorer_class("content-quality").from_params({"ignore_cse": True})
    assert str(raised.value) == (
        "content-quality: ignore_cse: unknown field; remove it or check its spelling"
    )


def test_scorer_without_parameters_rejects_any() -> None:
    """A scorer that takes no parameters rejects every one given."""
    with pytest.raises(ScorerParameterError, match="operation-accuracy: threshold: unknown field"):
        get_scorer_class("operation-accuracy").from_params({"threshold": 0.9})


def test_bad_parameter_value_says_what_was_found_and_expected() -> None:
    """A wrong value names the parameter, what it holds, and what was expected."""
    with pytest.raises(ScorerParameterError) as raised:
        get_scorer_class("response-time").from_params({"max_acceptable_ms": -1})
    assert str(raised.value) == "response-time: max_acceptable_ms: got -1; expected greater than 0"


def test_every_bad_parameter_is_reported_at_once() -> None:
    """Several bad parameters are listed in one error."""
    with pytest.raises(ScorerParameterError) as raised:
        get_scorer_class("operation-result").from_params({"ignore_case": 1, "timeout": 5})
    message = str(raised.value)
    assert "ignore_case: got 1" in message
    assert "timeout: unknown field" in message


def test_no_params_and_empty_params_are_the_same() -> None:
    """from_params(None) and from_params({}) build the same scorer."""
    cls = get_scorer_class("content-quality")
    assert cls.from_params(None).params == cls.from_params({}).params


class _LaxParams(BaseModel):
    """A user's parameters written without extra="forbid": pydantic ignores unknown keys."""

    max_words: int = 50


class _Lax(Scorer):
    Params = _LaxParams

    def evaluate(self, actual: object, expected: object, pages: Sequence[Page]) -> ScoreResult:
        return ScoreResult(1.0)


@pytest.mark.usefixtures("isolated_registry")
def test_a_misspelt_parameter_is_refused_even_when_the_params_model_ignores_extras() -> None:
    """'max_word' for 'max_words' is an error naming the key meant, not a run with the default."""
    register_scorer("kp-test-lax")(_Lax)
    with pytest.raises(SuiteError) as raised:
        make_suite({"type": "kp-test-lax", "params": {"max_word": 3}})
    [problem] = raised.value.problems
    assert (problem.path, problem.message) == (
        "scorers[0].params.max_word",
        "unknown key; did you mean 'max_words'? kp-test-lax takes: max_words",
    )
    with pytest.raises(ScorerParameterError, match="kp-test-lax: max_word: unknown field"):
        _Lax.from_params({"max_word": 3})


@pytest.mark.usefixtures("isolated_registry")
def test_a_params_model_that_allows_extras_keeps_them() -> None:
    """extra="allow" is a choice: the keys it keeps are not refused."""

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

    class OpenScorer(Scorer):
        Params = Open

        def evaluate(self, actual: object, expected: object, pages: Sequence[Page]) -> ScoreResult:
            return ScoreResult(1.0)

    assert OpenScorer.from_params({"anything": 1}).params.model_extra == {"anything": 1}
