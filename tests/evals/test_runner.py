"""Running suites: verdicts, weighted scores, independence of scorers, and run statistics."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from knowledgepulse.evals.cases import FileProblem, LoadedCase, MalformedCase, load_cases
from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.results import (
    TOLERANCE,
    CaseResult,
    ScorerOutcome,
    mean_and_stderr,
    passes,
    weighted_score,
)
from knowledgepulse.evals.runner import evaluate_case, run_suite
from knowledgepulse.evals.scorer import (
    BULK_EDIT,
    DETAILS_CHARS,
    Scorer,
    ScoreResult,
    register_scorer,
)
from knowledgepulse.records import Location, Problem
from tests.evals.builders import cases, make_case, make_suite, op, page

LAW_TYPES: list[dict[str, Any]] = [
    {"type": "operation-accuracy"},
    {"type": "target-block-precision"},
    {"type": "content-quality"},
    {"type": "operation-result"},
    {"type": "anti-hallucination"},
    {"type": "response-time", "params": {"max_acceptable_ms": 2000}},
]
weights = st.lists(st.floats(0, 5, allow_nan=False), min_size=6, max_size=6).filter(
    lambda ws: any(w > 0 for w in ws)
)
thresholds = st.lists(st.floats(0, 1, allow_nan=False), min_size=6, max_size=6)


def law_suite(ws: Sequence[float], ts: Sequence[float]) -> Any:
    return make_suite(
        *(
            {**entry, "weight": w, "threshold": t}
            for entry, w, t in zip(LAW_TYPES, ws, ts, strict=True)
        )
    )


class Fixed(Scorer):
    """A test scorer returning whatever result it was built with."""

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        return self.result  # type: ignore[no-any-return]


class Raises(Scorer):
    """A test scorer that always raises."""

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        raise RuntimeError("boom")


def cart_rename(**overrides: Any) -> Case:
    pages = [page("p1", b1="Add to Cart", b2="Your Cart is empty", b3="Checkout")]
    renames = [
        op("update", "b1", content="Add to Basket"),
        op("update", "b2", content="Your Basket"),
    ]
    args: dict[str, Any] = {"actual": renames, "expected": renames, "patterns": ["Basket.*Basket"]}
    return make_case(pages, **{**args, **overrides})


# --- verdict laws ----------------------------------------------------------------------------


def test_a_score_a_hair_below_its_threshold_still_passes() -> None:
    """14/15·0.6 + 0.6·0.4 reaches 0.8 thanks to the 1e-9 tolerance; 0.8 - 2e-9 does not."""
    score = 14 / 15 * 0.6 + 0.6 * 0.4
    assert score < 0.8
    assert passes(score, 0.8)
    assert not passes(0.8 - 2 * TOLERANCE, 0.8)
    assert not passes(None, 0.0)
    hair = ScorerOutcome("k", "content-quality", None, 1.0, 0.8, ScoreResult(score))
    assert (hair.passed, hair.margin) == (True, 0.0)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
@example(0.5, 0.5)
@example(0.5 - TOLERANCE / 2, 0.5)
def test_a_margin_within_the_tolerance_reads_zero(score: float, threshold: float) -> None:
    """margin is score - threshold, 0.0 (and a pass) within the tolerance: never a false gap."""
    outcome = ScorerOutcome("k", "content-quality", None, 1.0, threshold, ScoreResult(score))
    assert outcome.margin is not None
    if abs(score - threshold) <= TOLERANCE:
        assert (outcome.margin, outcome.passed) == (0.0, True)
    else:
        assert outcome.margin == pytest.approx(score - threshold, abs=1e-11)
        assert (outcome.margin > 0) == (score > threshold)


@settings(max_examples=60, deadline=None)
@given(case=cases(), first=weights, second=weights, ts=thresholds)
def test_weights_never_change_a_verdict(
    case: Case, first: list[float], second: list[float], ts: list[float]
) -> None:
    """Two suites that differ only in weights give the same verdicts, case and scorer."""
    a = evaluate_case(law_suite(first, ts), case)
    b = evaluate_case(law_suite(second, ts), case)
    assert a.passed == b.passed
    assert [o.passed for o in a.outcomes] == [o.passed for o in b.outcomes]


@settings(max_examples=60, deadline=None)
@given(case=cases(), ws=weights, first=thresholds, second=thresholds)
def test_thresholds_never_change_a_score(
    case: Case, ws: list[float], first: list[float], second: list[float]
) -> None:
    """Two suites that differ only in thresholds give the same scores and weighted score."""
    a = evaluate_case(law_suite(ws, first), case)
    b = evaluate_case(law_suite(ws, second), case)
    assert [o.score for o in a.outcomes] == [o.score for o in b.outcomes]
    assert a.weighted_score == b.weighted_score


@settings(max_examples=60, deadline=None)
@given(case=cases(), ws=weights, ts=thresholds)
def test_weighted_score_lies_between_the_lowest_and_highest_score(
    case: Case, ws: list[float], ts: list[float]
) -> None:
    """The weighted score is within [min, max] of the weighted-in scores, or None without any."""
    result = evaluate_case(law_suite(ws, ts), case)
    counted = [o.score for o in result.outcomes if o.score is not None and o.weight > 0]
    if not counted:
        assert result.weighted_score is None
    else:
        assert result.weighted_score is not None
        assert min(counted) <= result.weighted_score <= max(counted)


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 10)), min_size=1, max_size=8))
@example([(0.5, 5e-324), (1.0, 5e-324)])  # products of subnormal weights underflow
def test_weighted_score_is_the_weighted_average(pairs: list[tuple[float, float]]) -> None:
    """Σ score·weight / Σ weight, or None when every weight is 0.

    The expectation is computed exactly (with fractions), so a tiny weight whose float product
    underflows, say 0.5 x 5e-324, still averages to its score.
    """
    total = sum(Fraction(w) for _, w in pairs)
    exact = sum(Fraction(s) * Fraction(w) for s, w in pairs) / total if total else None
    expected = None if exact is None else float(exact)
    got = weighted_score(pairs)
    assert (got is None) == (expected is None)
    if got is not None and expected is not None:
        assert got == pytest.approx(expected, abs=1e-12)


# --- error results and independence ----------------------------------------------------------


def test_error_result_fails_the_case_and_leaves_the_weighted_average() -> None:
    """response-time on a case without durationMs is an error: no score, failed, not averaged."""
    suite = make_suite(
        {"type": "operation-accuracy", "weight": 1},
        {"type": "content-quality", "weight": 3},
        {"type": "response-time", "weight": 100, "params": {"max_acceptable_ms": 10}},
    )
    result = evaluate_case(suite, cart_rename(patterns=["Basket", "nowhere"]))
    accuracy, content, timing = result.outcomes
    assert (accuracy.score, content.score) == (1.0, 0.5)
    assert timing.score is None
    assert timing.error is not None
    assert "durationMs" in timing.error
    assert (timing.passed, timing.margin) == (False, None)
    assert result.weighted_score == pytest.approx((1.0 * 1 + 0.5 * 3) / 4)
    assert not result.passed


def test_weighted_score_is_none_when_only_errors_have_weight() -> None:
    """With the only weighted scorer in error, there is no weighted score (not a 0)."""
    suite = make_suite(
        {"type": "operation-accuracy", "weight": 0},
        {"type": "response-time", "params": {"max_acceptable_ms": 10}},
    )
    assert evaluate_case(suite, cart_rename()).weighted_score is None


@pytest.mark.usefixtures("isolated_registry")
def test_a_raising_scorer_becomes_an_error_row_and_the_others_still_run() -> None:
    """An exception in one scorer is recorded with its type and message; the rest score."""
    register_scorer("kp-test-raises")(Raises)
    suite = make_suite(
        {"type": "operation-accuracy"}, {"type": "kp-test-raises"}, {"type": "content-quality"}
    )
    result = evaluate_case(suite, cart_rename())
    first, broken, last = result.outcomes
    assert (first.score, last.score) == (1.0, 1.0)
    assert broken.score is None
    assert broken.error is not None
    assert broken.error.startswith("the scorer raised RuntimeError: boom (at ")
    assert not result.passed
    assert result.failing == (broken,)


@pytest.mark.usefixtures("isolated_registry")
def test_a_raising_scorer_s_error_names_the_line_of_its_own_code_that_raised() -> None:
    """'KeyError: x' alone leaves the user to guess which lookup failed: the error says where."""
    register_scorer("kp-test-raises")(Raises)
    result = evaluate_case(make_suite({"type": "kp-test-raises"}), cart_rename())
    line = Raises.evaluate.__code__.co_firstlineno + 3  # its raise, below the signature
    where = os.path.relpath(__file__)
    assert result.outcomes[0].error == (
        f"the scorer raised RuntimeError: boom (at {where}:{line}, in evaluate)"
    )


class Sleeps(Scorer):
    """A test scorer that takes far longer than any test's timeout."""

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        time.sleep(5)
        return ScoreResult(1.0)


@pytest.mark.usefixtures("isolated_registry")
def test_a_scorer_past_the_timeout_is_an_error_row_naming_it_and_the_limit() -> None:
    """run_suite(timeout=): a scorer that does not answer in time fails; the others score."""
    register_scorer("kp-test-sleeps")(Sleeps)
    suite = make_suite({"type": "kp-test-sleeps", "name": "slow"}, {"type": "content-quality"})
    started = time.perf_counter()
    [result] = run_suite(suite, [cart_rename()], timeout=0.5).cases
    assert time.perf_counter() - started < 4
    slow, content = result.outcomes
    assert slow.error == (
        "scorer 'slow (kp-test-sleeps)' gave no result within 0.5 s; make it faster, or give it "
        "more time (timeout)"
    )
    assert content.score == 1.0


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        (ScoreResult(1.5), "score 1.5, which is not a number in [0, 1]; scale it into"),
        (ScoreResult(1 + 2 * TOLERANCE), "which is not a number in [0, 1]"),
        (ScoreResult(-2 * TOLERANCE), "which is not a number in [0, 1]"),
        (ScoreResult(math.nan), "score nan, which is not a number in [0, 1]"),
        (ScoreResult(True), "score True"),
        (0.7, "returned float, not a ScoreResult; return ScoreResult(score, details)"),
        (ScoreResult(None), "no score and no error; return ScoreResult.failed(reason)"),
        (ScoreResult(None, {}, ValueError("not text")), "not text"),  # type: ignore[arg-type]
        (ScoreResult(1.0, ["a"]), "returned details of type list; give a dict"),  # type: ignore[arg-type]
    ],
)
def test_an_invalid_result_becomes_an_error_result(returned: Any, reason: str) -> None:
    """A scorer that returns something other than a score in [0, 1] gets an error (as text)."""
    suite = make_suite({"type": "operation-accuracy"})
    entry = suite.scorers[0]
    object.__setattr__(entry, "scorer", Fixed(returned))
    [outcome] = evaluate_case(suite, cart_rename()).outcomes
    assert outcome.score is None
    assert outcome.error is not None
    assert reason in outcome.error


@given(score=st.floats(-TOLERANCE, 1 + TOLERANCE))
@example(score=0.1 * 3 / 0.3)  # 1.0000000000000002
@example(score=-1e-17)
def test_a_score_within_rounding_of_0_1_is_kept_at_the_bound(score: float) -> None:
    """A user's score a rounding error outside [0, 1] is clamped to it, not an error result."""
    suite = make_suite({"type": "operation-accuracy", "threshold": 1.0})
    object.__setattr__(suite.scorers[0], "scorer", Fixed(ScoreResult(score)))
    [outcome] = evaluate_case(suite, cart_rename()).outcomes
    assert outcome.error is None
    assert outcome.score == min(max(score, 0.0), 1.0)
    assert outcome.passed == (score >= 1 - TOLERANCE)


def test_every_failing_scorer_is_listed_with_score_threshold_and_margin() -> None:
    """Not just the first or the last: each scorer below its threshold, with its margin."""
    suite = make_suite(
        {"type": "operation-accuracy"},
        {"type": "target-block-precision"},
        {"type": "content-quality"},
        {"type": "anti-hallucination"},
    )
    case = cart_rename(actual=[op("update", "b3", content="Basket")])
    failing = evaluate_case(suite, case).failing
    assert [(o.key, o.score, o.threshold, o.margin) for o in failing] == [
        ("operation-accuracy", 0.0, 0.8, -0.8),
        ("target-block-precision", 0.0, 0.75, -0.75),
        ("content-quality", 0.0, 0.6, -0.6),
        ("anti-hallucination", 0.0, 1.0, -1.0),
    ]


def test_multi_page_case_is_scored_per_page() -> None:
    """Operations and patterns on two pages are matched by pageId."""
    pages = [page("en", a1="View Cart"), page("ja", j1="カートを見る")]
    ops = [
        op("update", "a1", page="en", content="View Basket"),
        op("update", "j1", page="ja", content="バスケットを見る"),
    ]
    case = make_case(
        pages, actual=ops, expected=ops, patterns={"en": ["Basket"], "ja": ["バスケット"]}
    )
    suite = make_suite(
        {"type": "operation-accuracy"}, {"type": "content-quality"}, {"type": "anti-hallucination"}
    )
    assert [o.score for o in evaluate_case(suite, case).outcomes] == [1.0, 1.0, 1.0]
    wrong_page = make_case(
        pages, actual=[ops[0], op("update", "j1", page="en", content="x")], expected=ops
    )
    accuracy = evaluate_case(suite, wrong_page).outcomes[0]
    assert accuracy.score == 0.5


# --- diagnosis -------------------------------------------------------------------------------


def test_failing_builtin_gets_the_guides_check_then_its_own_lines() -> None:
    """operation-accuracy below threshold: the guide's question, then the unmatched operations."""
    suite = make_suite({"type": "operation-accuracy"})
    [outcome] = evaluate_case(suite, cart_rename(actual=[])).outcomes
    assert outcome.diagnosis[0].startswith("check unmatchedOperations")
    assert "0 of 2 expected operations matched; unmatched: 2 missing" in outcome.diagnosis[1]


def test_passing_scorer_has_no_diagnosis() -> None:
    """Diagnosis is only for scorers below their threshold."""
    [outcome] = evaluate_case(make_suite({"type": "operation-accuracy"}), cart_rename()).outcomes
    assert outcome.passed
    assert outcome.diagnosis == ()


class WordLimit(Scorer):
    """A user's scorer with its own hint: 0 when any content is over 10 characters."""

    default_threshold = 1.0
    reads = BULK_EDIT

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        long = [o.content for o in actual.operations if len(o.content or "") > 10]
        return ScoreResult(0.0 if long else 1.0, {"long": long})

    def diagnose(self, result: ScoreResult) -> list[str]:
        return [f"shorten: {text}" for text in result.details["long"]]


class BrokenHint(WordLimit):
    """A user's scorer whose diagnose raises."""

    def diagnose(self, result: ScoreResult) -> list[str]:
        raise KeyError("oops")


@pytest.mark.usefixtures("isolated_registry")
def test_custom_scorer_hint_appears_in_the_diagnosis() -> None:
    """A user's diagnose lines are the diagnosis, without a built-in's guide line."""
    register_scorer("kp-test-word-limit")(WordLimit)
    suite = make_suite({"type": "kp-test-word-limit"})
    [outcome] = evaluate_case(suite, cart_rename()).outcomes
    assert outcome.diagnosis == ("shorten: Add to Basket", "shorten: Your Basket")


class NoHint(WordLimit):
    """A user's scorer with no diagnose of its own."""

    diagnose = Scorer.diagnose


@pytest.mark.usefixtures("isolated_registry")
def test_a_failing_scorer_without_its_own_hint_shows_its_details() -> None:
    """Without diagnose(), the details explain the failure in every report, cut to one line."""
    register_scorer("kp-test-no-hint")(NoHint)
    [outcome] = evaluate_case(make_suite({"type": "kp-test-no-hint"}), cart_rename()).outcomes
    assert outcome.diagnosis == ('details: {"long": ["Add to Basket", "Your Basket"]}',)
    many = ScoreResult(0.0, {"long": ["x" * 50] * 20})
    [line] = NoHint().diagnose(many)
    assert len(line) == len("details: ") + DETAILS_CHARS
    assert line.endswith("...")


@pytest.mark.usefixtures("isolated_registry")
def test_a_raising_diagnose_does_not_break_the_report() -> None:
    """diagnose() raising becomes a line that says so; the result stands."""
    register_scorer("kp-test-broken-hint")(BrokenHint)
    suite = make_suite({"type": "kp-test-broken-hint"}, {"type": "operation-accuracy"})
    broken, accuracy = evaluate_case(suite, cart_rename()).outcomes
    assert broken.score == 0.0
    line = BrokenHint.diagnose.__code__.co_firstlineno + 1
    at = f"(at {os.path.relpath(__file__)}:{line}, in diagnose)"
    assert broken.diagnosis == (f"kp-test-broken-hint.diagnose() raised KeyError: 'oops' {at}",)
    assert accuracy.score == 1.0


def test_catastrophic_pattern_times_out_quickly_through_a_suite() -> None:
    """(a|aa)+$ on 5000 a's and a b stops at timeout_ms and is reported as a timeout issue.

    Unstopped, the search would not end; the bound on the time leaves a loaded machine room
    (2.1 s at load 20 on 2 cores).
    """
    suite = make_suite(
        {"type": "content-quality", "params": {"timeout_ms": 50}},
        {"type": "operation-result", "params": {"timeout_ms": 50}},
    )
    case = make_case([page("p1", b1="a" * 5000 + "b")], patterns=["(a|aa)+$", "b"])
    started = time.perf_counter()
    result = evaluate_case(suite, case)
    elapsed = time.perf_counter() - started
    content, _ = result.outcomes
    assert elapsed < 20
    assert content.score == 0.5
    [issue] = content.result.details["contentIssues"]
    assert "timed out after 50 ms" in issue
    assert any("timed out" in line for line in content.diagnosis)


# --- runs and statistics ---------------------------------------------------------------------


def test_mean_and_standard_error() -> None:
    """Sample standard deviation over √n; no standard error below two values, no mean at none."""
    mean, stderr = mean_and_stderr([0.0, 1.0, 0.5, 0.5])
    assert mean == 0.5
    assert stderr == pytest.approx(math.sqrt(1 / 6) / 2)
    assert mean_and_stderr([0.3]) == (0.3, None)
    assert mean_and_stderr([]) == (None, None)


def test_run_summary_counts_malformed_cases_as_failed() -> None:
    """Pass rate, per-scorer means and the weighted mean; a malformed case fails, unscored."""
    suite = make_suite(
        {"type": "operation-accuracy"},
        {"type": "response-time", "weight": 0.5, "params": {"max_acceptable_ms": 1000}},
    )
    good = cart_rename(duration_ms=500)
    half = cart_rename(actual=[op("update", "b1", content="Add to Basket")], duration_ms=1500)
    no_time = cart_rename()
    bad = MalformedCase(Location("x.jsonl", 4, 3), (Problem(Location("x.jsonl", 4), "id", "bad"),))
    run = run_suite(suite, [good, half, no_time, bad])
    s = run.summary
    assert (s.cases, s.passed, s.failed, s.malformed) == (4, 1, 3, 1)
    assert s.pass_rate == 0.25
    accuracy, timing = s.scorers["operation-accuracy"], s.scorers["response-time"]
    assert accuracy.mean == pytest.approx(2.5 / 3)
    assert (accuracy.n, accuracy.errors) == (3, 0)
    assert accuracy.stderr == pytest.approx(math.sqrt(1 / 12) / math.sqrt(3))
    assert (timing.mean, timing.n, timing.errors) == (0.75, 2, 1)
    weighted = [1.0, (0.5 + 0.5 * 0.5) / 1.5, 1.0]
    assert s.weighted_mean == pytest.approx(sum(weighted) / 3)
    assert [r.case_id for r in run.cases] == ["case-1", "case-1", "case-1", None]
    assert run.cases[3].malformed
    assert not run.passed


def test_run_suite_reads_case_files_and_dicts_as_evaluate_does(tmp_path: Path) -> None:
    """A path, a list of paths or plain dicts give the run that loaded cases give."""
    suite = make_suite({"type": "operation-accuracy"})
    data = cart_rename(case_id="c1").model_dump(by_alias=True, exclude_none=True)
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(data) + "\n")
    expected = run_suite(suite, load_cases(path))
    for given_cases in (path, str(path), [path]):
        assert run_suite(suite, given_cases) == expected
    [from_dict] = run_suite(suite, [data]).cases
    assert (from_dict.case_id, from_dict.passed, str(from_dict.location)) == (
        "c1",
        True,
        "<cases>[0]",
    )


def _verdict(result: CaseResult) -> tuple[Any, ...]:
    scores = [(o.key, o.score, dict(o.result.details)) for o in result.outcomes]
    return result.malformed, result.passed, [p.message for p in result.problems], scores


@settings(max_examples=60)
@given(case=cases())
@example(case=make_case([page("p1", b1="Cart")], patterns=["Cart", "(unclosed"]))
def test_a_case_is_judged_alike_alone_as_a_model_or_as_data(case: Case) -> None:
    """evaluate_case, run_suite on the model and on its JSON: one verdict (bad patterns too)."""
    suite = make_suite(*LAW_TYPES)
    data = case.model_dump(mode="json", by_alias=True, exclude_unset=True)
    alone = _verdict(evaluate_case(suite, case))
    assert _verdict(run_suite(suite, [case]).cases[0]) == alone
    assert _verdict(run_suite(suite, [data]).cases[0]) == alone


def test_run_with_no_cases_has_no_rates() -> None:
    """Zero cases: pass rate and means are None, not 0 or a division error."""
    s = run_suite(make_suite({"type": "operation-accuracy"}), []).summary
    assert (s.cases, s.pass_rate, s.weighted_mean) == (0, None, None)
    assert s.scorers["operation-accuracy"].mean is None


def test_an_unreadable_file_fails_the_run_and_is_counted_by_file() -> None:
    """Cases lost to a syntax error are not "0 of 1 passed": the file counts, the run fails."""
    suite = make_suite({"type": "operation-accuracy"})
    broken = Problem(Location("b.yaml", 7), "", "invalid YAML: oops")
    stray = Problem(Location("c.yaml", 2), "", "odd", warning=True)
    run = run_suite(
        suite,
        [
            LoadedCase(cart_rename(), Location("a.jsonl", 1, 0)),
            FileProblem(broken),
            FileProblem(Problem(Location("b.yaml", 9), "", "again")),
            FileProblem(stray),
        ],
    )
    s = run.summary
    assert (s.cases, s.passed, s.failed, s.malformed) == (1, 1, 0, 0)
    assert (s.unreadable_files, s.warnings) == (1, 1)
    assert run.file_problems[0] is broken
    assert not run.passed


def test_warnings_are_counted_and_change_no_verdict() -> None:
    """A duplicate id's warning rides on its case result; the case still passes."""
    warning = Problem(Location("a.jsonl", 2, 1), "id", "used before", warning=True)
    run = run_suite(
        make_suite({"type": "operation-accuracy"}),
        [LoadedCase(cart_rename(), Location("a.jsonl", 2, 1), (warning,))],
    )
    assert run.cases[0].warnings == (warning,)
    assert run.cases[0].passed
    assert run.passed
    assert run.summary.warnings == 1
    assert run.warnings == (warning,)


@settings(max_examples=60, deadline=None)
@given(
    case=cases(),
    ws=weights,
    ts=thresholds,
    lowered=st.lists(st.floats(0, 1, allow_nan=False), min_size=6, max_size=6),
)
def test_a_verdict_is_monotone_in_the_thresholds(
    case: Case, ws: list[float], ts: list[float], lowered: list[float]
) -> None:
    """What passes at some thresholds passes at any lower ones, scorer by scorer and whole."""
    lower = [t * f for t, f in zip(ts, lowered, strict=True)]
    high = evaluate_case(law_suite(ws, ts), case)
    low = evaluate_case(law_suite(ws, lower), case)
    for strict, lenient in zip(high.outcomes, low.outcomes, strict=True):
        assert lenient.passed or not strict.passed
    assert low.passed or not high.passed


@pytest.mark.parametrize(
    ("returned", "lines"),
    [
        ("the answer is wrong", ["the answer is wrong"]),
        (None, ["hinting.diagnose() returned None, not a list of lines; return [line, ...]"]),
        (["one", 2], ["one", "2"]),
    ],
)
def test_a_diagnosis_given_as_a_text_is_one_line_and_none_says_so(
    returned: Any, lines: list[str]
) -> None:
    """A str was shown a letter a line, and None as a TypeError diagnose() never raised."""

    class Hinting(Fixed):
        type_name = "hinting"

        def diagnose(self, result: ScoreResult) -> list[str]:
            return returned  # type: ignore[no-any-return]

    suite = make_suite({"type": "operation-accuracy"})
    object.__setattr__(suite.scorers[0], "scorer", Hinting(ScoreResult(0.0)))
    [outcome] = evaluate_case(suite, cart_rename()).outcomes
    assert list(outcome.diagnosis) == lines
