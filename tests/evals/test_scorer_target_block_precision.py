"""target-block-precision: k-th pairing per page and type, and what counts as the same target."""

from __future__ import annotations

import json
from typing import Any

from knowledgepulse.evals.scorer import ScoreResult, get_scorer_class
from knowledgepulse.evals.scorers.target_block_precision import ordinal
from tests.evals.builders import diagnose, evaluate, make_case, op, page

PAGES = [page("p1", b1="one", b2="two", b3="three")]
TWO_PAGES = [page("p1", b1="one", b2="two"), page("p2", b1="uno", b2="dos")]


def _score(
    actual: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    pages: list[dict[str, Any]] | None = None,
) -> ScoreResult:
    case = make_case(pages or PAGES, actual=actual, expected=expected)
    return evaluate("target-block-precision", case)


def _counts(result: ScoreResult) -> tuple[int, int]:
    return result.details["correctTargets"], result.details["totalTargets"]


def test_default_threshold_is_0_75() -> None:
    """The guide's threshold: 75%."""
    assert get_scorer_class("target-block-precision").default_threshold == 0.75


def test_other_indices_and_no_block_ids_are_not_the_same_target() -> None:
    """Two missing targetBlockIds are not equal: indices 0 and 1 name two blocks, so wrong."""
    result = _score([op("delete", index=1)], [op("delete", index=0)])
    assert (result.score, _counts(result)) == (0.0, (0, 1))
    by_id = _score([op("delete", "b2")], [op("delete", index=0)])
    assert (by_id.score, _counts(by_id)) == (0.0, (0, 1))


def test_kth_expected_pairs_with_kth_actual_of_its_type() -> None:
    """Swapped order: the 1st update is paired with the 1st, so both targets are wrong."""
    result = _score(
        [op("update", "b2", content="x"), op("update", "b1", content="x")],
        [op("update", "b1", content="x"), op("update", "b2", content="x")],
    )
    assert result.score == 0.0
    assert _counts(result) == (0, 2)


def test_types_are_paired_separately() -> None:
    """A delete pairs with the first actual delete, whatever updates come before it."""
    result = _score([op("update", "b2", content="x"), op("delete", "b1")], [op("delete", "b1")])
    assert result.score == 1.0


def test_untargeted_expected_operations_count_for_k_but_not_in_the_score() -> None:
    """An expected insert without target shifts k, yet is not itself counted."""
    result = _score(
        [op("insert", "b1", content="x"), op("insert", "b2", content="y")],
        [op("insert", content="x"), op("insert", "b2", content="y")],
    )
    assert _counts(result) == (1, 1)


def test_untargeted_actual_operations_count_for_k() -> None:
    """An actual update without target is still the 1st update, and it has no target."""
    result = _score(
        [op("update", content="x"), op("update", "b1", content="x")],
        [op("update", "b1", content="x")],
    )
    assert _counts(result) == (0, 1)
    assert result.details["incorrectTargets"][0]["actual"] == {
        "targetBlockId": None,
        "targetIndex": None,
    }


def test_missing_kth_actual_is_incorrect_with_null_actual() -> None:
    """With fewer actual operations of a type, the extra expected ones pair with nothing."""
    result = _score([op("delete", "b1")], [op("delete", "b1"), op("delete", "b2")])
    assert _counts(result) == (1, 2)
    assert result.details["incorrectTargets"][0]["actual"] is None
    assert result.details["incorrectTargets"][0]["ordinal"] == 2


def test_equal_block_ids_are_correct() -> None:
    """The same targetBlockId is correct."""
    assert _score([op("delete", "b2")], [op("delete", "b2")]).score == 1.0


def test_equal_indices_are_correct_even_out_of_range() -> None:
    """The same targetIndex is correct, whether or not it names a block."""
    assert _score([op("delete", index=7)], [op("delete", index=7)]).score == 1.0


def test_id_and_index_resolving_to_the_same_block_are_correct() -> None:
    """targetBlockId b3 and targetIndex 2 name the same original block."""
    assert _score([op("delete", index=2)], [op("delete", "b3")]).score == 1.0
    assert _score([op("delete", "b3")], [op("delete", index=2)]).score == 1.0


def test_one_equal_field_is_enough() -> None:
    """Equal targetBlockId with a different targetIndex is still correct."""
    assert _score([op("delete", "b1", index=2)], [op("delete", "b1", index=0)]).score == 1.0


def test_fields_given_on_one_side_only_are_not_equal() -> None:
    """targetBlockId vs targetIndex naming other blocks: incorrect."""
    assert _score([op("delete", index=2)], [op("delete", "b1")]).score == 0.0


def test_two_missing_fields_are_not_equal() -> None:
    """Unresolvable ids that differ, both without index: absent indices do not make them equal."""
    assert _score([op("delete", "yy")], [op("delete", "zz")]).score == 0.0


def test_no_targets_to_check_scores_one() -> None:
    """No expected operation has a target: 1.0 with nothing counted."""
    result = _score([op("delete", "b1")], [op("insert", content="x")])
    assert result.score == 1.0
    assert _counts(result) == (0, 0)


def test_extra_actual_operations_do_not_lower_the_score() -> None:
    """Actual operations beyond the expected ones are not counted."""
    result = _score(
        [op("delete", "b1"), op("delete", "b2"), op("update", "b3", content="x")],
        [op("delete", "b1")],
    )
    assert result.score == 1.0


def test_pairing_is_per_page() -> None:
    """Operations on different pages are paired within their page."""
    result = _score(
        [op("update", "b2", page="p2", content="x"), op("update", "b1", page="p1", content="x")],
        [op("update", "b1", page="p1", content="x"), op("update", "b2", page="p2", content="x")],
        TWO_PAGES,
    )
    assert result.score == 1.0


def test_actual_without_page_id_in_multi_page_case_pairs_with_nothing() -> None:
    """Without pageId, with several pages, an actual operation is on no page."""
    result = _score([op("delete", "b1")], [op("delete", "b1", page="p1")], TWO_PAGES)
    assert _counts(result) == (0, 1)
    assert result.details["incorrectTargets"][0]["actual"] is None


def test_single_page_operations_pair_with_or_without_page_id() -> None:
    """With one page, a pageId and its absence name the same page."""
    assert _score([op("delete", "b1")], [op("delete", "b1", page="p1")]).score == 1.0


def test_score_is_correct_over_total() -> None:
    """Three of four targets right: 0.75, which meets the default threshold."""
    result = _score(
        [op("delete", "b1"), op("delete", "b2"), op("delete", "b3"), op("delete", "b3")],
        [op("delete", "b1"), op("delete", "b2"), op("delete", index=2), op("delete", "b1")],
    )
    assert result.score == 0.75


def test_incorrect_target_details_shape() -> None:
    """Each incorrect target gives expected and actual targets, where, and both indices."""
    result = _score(
        [op("update", "b1", content="x"), op("update", index=2, content="y")],
        [op("update", "b1", content="x"), op("update", "b2", content="y")],
    )
    assert result.details["incorrectTargets"] == [
        {
            "expected": {"targetBlockId": "b2", "targetIndex": None},
            "actual": {"targetBlockId": None, "targetIndex": 2},
            "pageId": "p1",
            "type": "update",
            "ordinal": 2,
            "expectedIndex": 1,
            "actualIndex": 1,
            "expectedBlock": "b2",
            "actualBlock": "b3",
        }
    ]
    assert json.loads(json.dumps(result.details)) == result.details


def test_diagnosis_names_expected_and_actual_targets() -> None:
    """Each incorrect target is one line naming both operations and blocks."""
    case = make_case(
        PAGES,
        actual=[op("update", index=2, content="y"), op("delete", "b9")],
        expected=[op("update", "b2", content="y"), op("delete", "b1"), op("delete", "b3")],
    )
    assert diagnose("target-block-precision", case)[1:] == [
        "expected.operations[0] (1st update on page 'p1') targets block 'b2', "
        "but actual.operations[0] targets targetIndex 2 = block 'b3'",
        "expected.operations[1] (1st delete on page 'p1') targets block 'b1', "
        "but actual.operations[1] targets block 'b9', which names no block of the original page",
        "expected.operations[2] (2nd delete on page 'p1') targets block 'b3', "
        "but the actual operations have no 2nd delete on page 'p1'",
    ]


def test_the_pairing_rule_is_told_with_the_type_of_the_first_wrong_target() -> None:
    """Deletes only: the rule's example speaks of deletes (it said 'update' whatever the type)."""
    case = make_case(PAGES, actual=[op("delete", "b2")], expected=[op("delete", "b1")])
    first = diagnose("target-block-precision", case)[0]
    assert first.startswith("0 of 1 targets correct")
    assert "the k-th expected delete on a page with the k-th actual delete there" in first


def test_ordinals_follow_english_including_the_teens() -> None:
    """1st 2nd 3rd 4th; 11th-13th are teens; 21st, 112th: the diagnosis's k-th, spelt right."""
    numbers = (1, 2, 3, 4, 10, 11, 12, 13, 20, 21, 22, 23, 101, 111, 112, 121)
    assert [ordinal(n) for n in numbers] == [
        *("1st", "2nd", "3rd", "4th", "10th", "11th", "12th", "13th", "20th"),
        *("21st", "22nd", "23rd", "101st", "111th", "112th", "121st"),
    ]
