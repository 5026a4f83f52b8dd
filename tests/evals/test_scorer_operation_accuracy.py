"""operation-accuracy: matching expected to actual operations, and why some do not match."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings

from knowledgepulse.evals.models import (
    KNOWN_OPERATION_TYPES,
    ActualOutput,
    Case,
    ExpectedOutput,
    Operation,
    Page,
)
from knowledgepulse.evals.scorer import ScoreResult, get_scorer_class
from knowledgepulse.evals.scorers.operation_accuracy import Mismatch, _Key, _match
from tests.evals.builders import cases, diagnose, evaluate, make_case, op, page

PAGES = [page("p1", b1="one", b2="two", b3="three")]
TWO_PAGES = [page("p1", b1="one", b2="two"), page("p2", b1="uno", b2="dos")]


def _score(
    actual: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    pages: list[dict[str, Any]] | None = None,
) -> ScoreResult:
    return evaluate(
        "operation-accuracy", make_case(pages or PAGES, actual=actual, expected=expected)
    )


def _reasons(result: ScoreResult) -> list[tuple[str, int | None]]:
    return [(u["reason"], u["actualIndex"]) for u in result.details["unmatchedOperations"]]


def test_default_threshold_is_0_8() -> None:
    """The guide's threshold: 80%."""
    assert get_scorer_class("operation-accuracy").default_threshold == 0.8


def test_identical_operations_score_one(cart_case: Case) -> None:
    """Every expected operation made exactly: 1.0 and nothing unmatched or unexpected."""
    result = evaluate("operation-accuracy", cart_case)
    assert result.score == 1.0
    assert result.details == {
        "matchedOperations": 2,
        "totalExpectedOperations": 2,
        "unmatchedOperations": [],
        "unexpectedOperations": [],
        "unexpectedOperationIndices": [],
    }


def test_score_is_matched_over_expected() -> None:
    """Two of three expected operations matched: 2/3."""
    result = _score(
        [op("update", "b1", content="x"), op("delete", "b3")],
        [op("update", "b1", content="x"), op("delete", "b3"), op("delete", "b2")],
    )
    assert result.score == 2 / 3


def test_content_does_not_matter_for_matching() -> None:
    """Type and target decide; the content of an update does not."""
    assert _score([op("update", "b1", content="a")], [op("update", "b1", content="b")]).score == 1.0


def test_target_by_id_matches_target_by_index_of_the_same_block() -> None:
    """Targets are compared as resolved original blocks."""
    assert _score([op("delete", index=1)], [op("delete", "b2")]).score == 1.0


def test_inapplicable_operation_still_matches() -> None:
    """An update without content cannot be applied but still names the expected target."""
    assert _score([op("update", "b1")], [op("update", "b1", content="x")]).score == 1.0


def test_insert_position_defaults_to_after() -> None:
    """An insert without position is an insert after."""
    result = _score(
        [op("insert", "b1", position="after", content="x")], [op("insert", "b1", content="x")]
    )
    assert result.score == 1.0


def test_each_actual_operation_matches_at_most_once() -> None:
    """Two expected deletes of b1 and one actual: one match, one missing."""
    result = _score([op("delete", "b1")], [op("delete", "b1"), op("delete", "b1")])
    assert result.score == 0.5
    assert _reasons(result) == [("missing", None)]


def test_type_mismatch_when_closest_has_same_target_other_type() -> None:
    """Expected update of b1, actual delete of b1: type mismatch, and it is not 'unexpected'."""
    result = _score([op("delete", "b1")], [op("update", "b1", content="x")])
    assert result.score == 0.0
    assert _reasons(result) == [("type mismatch", 0)]
    assert result.details["unmatchedOperations"][0]["actual"] == {
        "type": "delete",
        "targetBlockId": "b1",
    }
    assert result.details["unexpectedOperations"] == []


def test_target_mismatch_when_closest_has_same_type_other_target() -> None:
    """Expected update of b1, actual update of b2: target mismatch."""
    result = _score([op("update", "b2", content="x")], [op("update", "b1", content="x")])
    assert _reasons(result) == [("target mismatch", 0)]


def test_position_mismatch_when_insert_has_other_position() -> None:
    """Expected insert after b1, actual insert before b1: position mismatch."""
    result = _score(
        [op("insert", "b1", position="before", content="x")], [op("insert", "b1", content="x")]
    )
    assert _reasons(result) == [("position mismatch", 0)]


def test_missing_when_no_actual_operations() -> None:
    """Nothing done: every expected operation is missing."""
    result = _score([], [op("delete", "b1"), op("insert", content="x")])
    assert result.score == 0.0
    assert _reasons(result) == [("missing", None), ("missing", None)]


def test_unrelated_actual_explains_nothing_and_stays_unexpected() -> None:
    """An actual sharing neither type nor target: expected is missing, actual is unexpected."""
    result = _score([op("delete", "b3")], [op("update", "b1", content="x")])
    assert _reasons(result) == [("missing", None)]
    assert result.details["unexpectedOperations"] == [{"type": "delete", "targetBlockId": "b3"}]
    assert result.details["unexpectedOperationIndices"] == [0]


def test_position_beats_type_beats_target_as_closest() -> None:
    """Among unused actuals, the position mismatch is chosen over type and target ones."""
    actual = [
        op("insert", "b2", content="x"),  # same type, other target
        op("delete", "b1"),  # same target, other type
        op("insert", "b1", position="before", content="x"),  # same type and target
    ]
    result = _score(actual, [op("insert", "b1", content="x")])
    assert _reasons(result) == [("position mismatch", 2)]
    assert result.details["unexpectedOperationIndices"] == [0, 1]


def test_type_beats_target_as_closest() -> None:
    """Same target with another type is closer than same type with another target."""
    result = _score(
        [op("update", "b2", content="x"), op("delete", "b1")], [op("update", "b1", content="x")]
    )
    assert _reasons(result) == [("type mismatch", 1)]


def test_closer_reasons_are_assigned_first_over_all_expected() -> None:
    """A later expected operation's position mismatch wins over an earlier one's type mismatch."""
    result = _score(
        [op("insert", "b1", position="before", content="x")],
        [op("update", "b1", content="x"), op("insert", "b1", content="x")],
    )
    assert _reasons(result) == [("missing", None), ("position mismatch", 0)]


def test_target_mismatch_prefers_an_actual_on_the_same_page() -> None:
    """Of two same-type actuals with other targets, the one on the expected page is closest."""
    result = _score(
        [op("delete", "b2", page="p2"), op("delete", "b2", page="p1")],
        [op("delete", "b1", page="p1")],
        TWO_PAGES,
    )
    assert _reasons(result) == [("target mismatch", 1)]


def test_same_block_id_on_another_page_is_another_target() -> None:
    """Block identity is (page, block id): b1 on p2 is not b1 on p1."""
    result = _score([op("delete", "b1", page="p2")], [op("delete", "b1", page="p1")], TWO_PAGES)
    assert _reasons(result) == [("target mismatch", 0)]


def test_unknown_type_never_matches() -> None:
    """An unknown type matches nothing, not even an identical operation; reason: type."""
    result = _score([op("replace", "b1", content="x")], [op("replace", "b1", content="x")])
    assert result.score == 0.0
    assert _reasons(result) == [("type mismatch", 0)]


def test_no_expected_and_no_actual_scores_one() -> None:
    """Nothing expected and nothing done: 1.0."""
    assert _score([], []).score == 1.0


def test_no_expected_but_some_actual_scores_zero() -> None:
    """Nothing expected but something done: 0.0, with the operations listed as unexpected."""
    result = _score([op("delete", "b1")], [])
    assert result.score == 0.0
    assert result.details["unexpectedOperations"] == [{"type": "delete", "targetBlockId": "b1"}]


def test_details_are_plain_json() -> None:
    """Details survive a JSON round trip unchanged."""
    result = _score(
        [op("insert", "b1", position="before", content="x", reason="model note")],
        [op("insert", "b1", content="x"), op("delete", "b3")],
    )
    assert json.loads(json.dumps(result.details)) == result.details
    assert result.details["unmatchedOperations"][0] == {
        "expected": {"type": "insert", "targetBlockId": "b1", "content": "x"},
        "reason": "position mismatch",
        "expectedIndex": 0,
        "actual": {
            "type": "insert",
            "targetBlockId": "b1",
            "position": "before",
            "content": "x",
            "reason": "model note",
        },
        "actualIndex": 0,
    }


def test_diagnosis_counts_reasons_and_names_each_operation() -> None:
    """The diagnosis counts unmatched by reason and points at both operation lists."""
    case = make_case(
        PAGES,
        actual=[
            op("delete", "b1"),
            op("insert", "b2", position="before", content="x"),
            op("delete", "b3"),
        ],
        expected=[
            op("update", "b1", content="x"),
            op("insert", "b2", content="x"),
            op("update", "b3", content="y"),
            op("delete", "b2"),
        ],
    )
    lines = diagnose("operation-accuracy", case)
    assert lines[0] == (
        "0 of 4 expected operations matched; unmatched: 1 position mismatch, 2 type mismatch, "
        "1 missing"
    )
    assert lines[1] == (
        "expected.operations[0] (update block 'b1'): type mismatch; "
        "closest is actual.operations[0] (delete block 'b1')"
    )
    assert lines[2] == (
        "expected.operations[1] (insert after block 'b2'): position mismatch; "
        "closest is actual.operations[1] (insert before block 'b2')"
    )
    assert lines[4] == (
        "expected.operations[3] (delete block 'b2'): missing; "
        "no unused actual operation has its type or target"
    )


def test_diagnosis_lists_unexpected_operations() -> None:
    """Unexpected actual operations are named with their index."""
    case = make_case(PAGES, actual=[op("delete", "b1", page="p1")], expected=[])
    assert diagnose("operation-accuracy", case) == [
        "no operations were expected, but the model made 1",
        "actual.operations[0] (delete block 'b1' on page 'p1'): unexpected; nothing asks for it",
    ]


def test_an_extra_operation_beside_every_expected_one_is_only_listed_as_unexpected() -> None:
    """All expected matched and one more made: no summary line says nothing was expected."""
    expected = [op("delete", "b1", page="p1")]
    case = make_case(PAGES, actual=[*expected, op("delete", "b2", page="p1")], expected=expected)
    assert diagnose("operation-accuracy", case) == [
        "actual.operations[1] (delete block 'b2' on page 'p1'): unexpected; nothing asks for it",
    ]


@given(cases(known_types_only=True))
def test_actual_equal_to_expected_scores_one(case: Case) -> None:
    """Whatever the operations, doing exactly what was expected scores 1.0."""
    assert isinstance(case.actual, dict)
    assert isinstance(case.expected, dict)
    same = case.model_copy(
        update={"actual": {**case.actual, "operations": case.expected["operations"]}}
    )
    assert evaluate("operation-accuracy", same).score == 1.0


def _match_by_scan(
    expected: Sequence[Operation], actual: Sequence[Operation], pages: Sequence[Page]
) -> tuple[list[tuple[int, Mismatch, int | None]], list[int]]:
    """The module docstring's rule written out plainly: every unused actual one scanned per rank."""
    e_keys = [_Key.of(o, pages) for o in expected]
    a_keys = [_Key.of(o, pages) for o in actual]
    used: set[int] = set()
    unmatched = []
    for e, key in enumerate(e_keys):
        same = [a for a, k in enumerate(a_keys) if a not in used and k == key]
        if same and key.type in KNOWN_OPERATION_TYPES:
            used.add(same[0])
        else:
            unmatched.append(e)

    def closeness(x: _Key, y: _Key) -> Mismatch | None:
        same_type = x.type == y.type and x.type in KNOWN_OPERATION_TYPES
        if x.target == y.target:
            return Mismatch.POSITION if same_type else Mismatch.TYPE
        return Mismatch.TARGET if same_type else None

    found: dict[int, tuple[Mismatch, int]] = {}
    for rank in (Mismatch.POSITION, Mismatch.TYPE, Mismatch.TARGET):
        for e in (e for e in unmatched if e not in found):
            near = [
                a
                for a in range(len(actual))
                if a not in used and closeness(e_keys[e], a_keys[a]) is rank
            ]
            if near:
                a = min(near, key=lambda a: (a_keys[a].page != e_keys[e].page, a))
                used.add(a)
                found[e] = (rank, a)
    explained = [(e, *found.get(e, (Mismatch.MISSING, None))) for e in unmatched]
    return explained, [a for a in range(len(actual)) if a not in used]


@settings(max_examples=300)
@given(cases())
def test_the_closest_actual_operations_are_those_of_a_scan_of_every_one(case: Case) -> None:
    """Found by group in linear time, the reasons and closest ones are the plain scan's."""
    expected = ExpectedOutput.model_validate(case.expected).operations
    actual = ActualOutput.model_validate(case.actual).operations
    assert _match(expected, actual, case.pages) == _match_by_scan(expected, actual, case.pages)


@pytest.mark.parametrize(
    ("made", "meant"), [("Update", "update"), ("updte", "update"), ("DELETE", "delete")]
)
def test_diagnosis_names_the_known_type_a_misspelt_one_meant(made: str, meant: str) -> None:
    """A type spelt in another case or with a typo is told with the type meant; scores stay."""
    told = (
        f"type '{made}' is unknown (known types: insert, update, delete). Did you mean '{meant}'?"
    )
    made_op = op(made, "b1", page="p1", content="x")
    unexpected = make_case(PAGES, actual=[made_op], expected=[op("insert", "b2", content="x")])
    assert evaluate("operation-accuracy", unexpected).score == 0.0
    line = diagnose("operation-accuracy", unexpected)[-1]
    assert line == f"actual.operations[0] ({made} block 'b1' on page 'p1'): unexpected; {told}"
    # Paired with the expected operation it was meant as: a type mismatch, with the same hint.
    paired = make_case(PAGES, actual=[made_op], expected=[op(meant, "b1", page="p1", content="x")])
    assert evaluate("operation-accuracy", paired).score == 0.0
    line = diagnose("operation-accuracy", paired)[1]
    assert line == (
        f"expected.operations[0] ({meant} block 'b1' on page 'p1'): type mismatch; closest is "
        f"actual.operations[0] ({made} block 'b1' on page 'p1'): {told}"
    )


def test_diagnosis_of_an_unknown_type_far_from_any_suggests_nothing() -> None:
    """A type like no known one is told unknown, with the known ones and no guess."""
    case = make_case(PAGES, actual=[op("replace", "b1", page="p1", content="x")], expected=[])
    assert diagnose("operation-accuracy", case)[-1].endswith(
        "unexpected; type 'replace' is unknown (known types: insert, update, delete)"
    )
