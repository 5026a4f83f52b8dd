"""anti-hallucination: no new content, no unexpected deletions, only specified changes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from knowledgepulse.evals.models import Case
from knowledgepulse.evals.scorer import ScoreResult, get_scorer_class
from tests.evals.builders import diagnose, evaluate, make_case, op, page

PAGES = [page("p1", b1="one", b2="two", b3="three")]
TWO_PAGES = [page("p1", b1="one", b2="two"), page("p2", b3="uno")]


def _score(
    actual: list[dict[str, Any]],
    expected: Sequence[dict[str, Any]] = (),
    pages: list[dict[str, Any]] | None = None,
) -> ScoreResult:
    case = make_case(pages or PAGES, actual=actual, expected=expected)
    return evaluate("anti-hallucination", case)


def test_default_threshold_is_1() -> None:
    """Hallucination must be zero."""
    assert get_scorer_class("anti-hallucination").default_threshold == 1.0


def test_doing_exactly_what_was_expected_scores_one(cart_case: Case) -> None:
    """Expected updates only: 1, with an empty diff."""
    result = evaluate("anti-hallucination", cart_case)
    assert result.score == 1.0
    assert result.details == {
        "noNewContent": True,
        "noDeletedBlocks": True,
        "onlySpecifiedChanges": True,
        "hallucinatedIds": [],
        "unexpectedInserts": [],
        "unexpectedDeletions": [],
        "unexpectedChanges": [],
    }


def test_block_id_not_in_any_page_is_new_content() -> None:
    """An operation naming a block the input does not have scores 0."""
    result = _score([op("update", "b9", content="x")], [op("update", "b9", content="x")])
    assert result.score == 0.0
    assert result.details["noNewContent"] is False
    assert result.details["hallucinatedIds"] == [
        {"operationIndex": 0, "field": "targetBlockId", "id": "b9"}
    ]


def test_block_ids_are_counted_over_all_pages() -> None:
    """A block id from another page is not invented (the operation is merely inapplicable)."""
    result = _score([op("delete", "b3", page="p1")], pages=TWO_PAGES)
    assert result.score == 1.0


def test_page_id_not_in_input_is_new_content() -> None:
    """Naming a page that does not exist scores 0."""
    result = _score([op("delete", "b1", page="p7")], pages=TWO_PAGES)
    assert result.details["hallucinatedIds"] == [
        {"operationIndex": 0, "field": "pageId", "id": "p7"}
    ]
    assert result.score == 0.0


def test_operations_of_any_type_are_checked_for_invented_ids() -> None:
    """An unknown-type operation naming an invented block still counts."""
    assert _score([op("rewrite", "ghost", content="x")]).score == 0.0


def test_out_of_range_index_is_not_new_content() -> None:
    """targetIndex 10 is not applicable but invents nothing."""
    assert _score([op("update", index=10, content="x"), op("delete", index=-1)]).score == 1.0


def test_more_inserts_than_expected_on_a_page_is_new_content() -> None:
    """Two blocks inserted where one insert is expected: 0, listing both inserted blocks."""
    result = _score(
        [op("insert", "b1", content="x"), op("insert", content="y")],
        [op("insert", "b1", content="x")],
    )
    assert result.score == 0.0
    assert result.details["unexpectedInserts"] == [
        {
            "pageId": "p1",
            "inserted": 2,
            "expectedInserts": 1,
            "blocks": [
                {"blockId": "kp:inserted:0", "operationIndex": 0, "content": "x"},
                {"blockId": "kp:inserted:1", "operationIndex": 1, "content": "y"},
            ],
        }
    ]
    # Only inserts (no invented id): the flag of the first condition is down all the same.
    assert (result.details["hallucinatedIds"], result.details["noNewContent"]) == ([], False)


def test_as_many_inserts_as_expected_is_fine_wherever_they_go() -> None:
    """The count per page matters, not the position."""
    result = _score([op("insert", "b3", content="x")], [op("insert", "b1", content="x")])
    assert result.score == 1.0


def test_expected_inserts_on_one_page_do_not_allow_inserts_on_another() -> None:
    """An insert on p2 is not covered by an expected insert on p1."""
    result = _score(
        [op("insert", page="p2", content="x")],
        [op("insert", page="p1", content="x")],
        TWO_PAGES,
    )
    assert result.score == 0.0
    assert result.details["unexpectedInserts"][0]["pageId"] == "p2"


def test_inserts_that_were_not_applied_do_not_count() -> None:
    """An insert without content adds nothing."""
    assert _score([op("insert", "b1")]).score == 1.0


def test_unexpected_deletion_scores_zero() -> None:
    """Deleting a block no expected delete targets: 0, with its content."""
    result = _score([op("delete", "b2")], [op("delete", "b3")])
    assert result.score == 0.0
    assert result.details["noDeletedBlocks"] is False
    assert result.details["unexpectedDeletions"] == [
        {"pageId": "p1", "blockId": "b2", "content": "two", "operationIndex": 0}
    ]


def test_expected_deletion_by_index_allows_deletion_by_id() -> None:
    """Expected deletions are resolved to original blocks."""
    assert _score([op("delete", "b2")], [op("delete", index=1)]).score == 1.0


def test_unexpected_change_scores_zero_with_before_and_after() -> None:
    """Changing a block no expected update targets: 0, with before and after."""
    result = _score(
        [op("update", "b1", content="ONE"), op("update", "b1", content="1")],
        [op("update", "b2", content="x")],
    )
    assert result.score == 0.0
    assert result.details["onlySpecifiedChanges"] is False
    assert result.details["unexpectedChanges"] == [
        {"pageId": "p1", "blockId": "b1", "before": "one", "after": "1", "operationIndices": [0, 1]}
    ]


def test_expected_update_allows_any_new_content_of_its_target() -> None:
    """Only the target matters for 'specified changes'; content is content-quality's job."""
    assert _score([op("update", "b1", content="x")], [op("update", "b1", content="y")]).score == 1.0


def test_update_to_identical_content_is_no_change() -> None:
    """Rewriting a block with its own text changes nothing."""
    assert _score([op("update", "b1", content="one")]).score == 1.0


def test_same_block_id_on_another_page_is_another_block() -> None:
    """An expected update of b1 on p1 does not allow changing b1 on p2."""
    pages = [page("p1", b1="one"), page("p2", b1="uno")]
    result = _score(
        [op("update", "b1", page="p2", content="x")],
        [op("update", "b1", page="p1", content="x")],
        pages,
    )
    assert result.details["unexpectedChanges"][0]["pageId"] == "p2"


def test_details_are_plain_json() -> None:
    """The diff survives a JSON round trip unchanged."""
    result = _score(
        [op("update", "b1", content="新しい"), op("delete", "b2"), op("insert", content="x")]
    )
    assert json.loads(json.dumps(result.details, ensure_ascii=False)) == result.details


def test_diagnosis_shows_the_diff() -> None:
    """Each invented id, extra insert, deletion and change is one line naming the operation."""
    case = make_case(
        PAGES,
        actual=[
            op("update", "b1", content="ONE"),
            op("delete", "b2"),
            op("insert", "b3", content="extra"),
            op("delete", "b8"),
        ],
    )
    assert diagnose("anti-hallucination", case) == [
        "actual.operations[3] names block 'b8' (targetBlockId), which is not in any input page",
        "page 'p1': 1 block inserted, but the expected operations insert 0: "
        "actual.operations[2] added 'extra'",
        "actual.operations[1] deleted block 'b2' on page 'p1' ('two'), "
        "which no expected delete targets",
        "block 'b1' on page 'p1' was changed by actual.operations[0] but no expected update "
        "targets it: before 'one', after 'ONE'",
    ]
