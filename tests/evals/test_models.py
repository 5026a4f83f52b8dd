"""The case data: what is valid, what is malformed, and what is kept as data.

A case's ``actual`` and ``expected`` may be any JSON; the bulk-edit form is checked only for a
suite whose scorers read it (:func:`bulk_problems` uses one that reads every part).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from knowledgepulse.evals.cases import check_case
from knowledgepulse.evals.models import Case, ExpectedOperation, Operation, Page
from knowledgepulse.evals.operations import resolve_page
from knowledgepulse.records import Location
from tests.evals.builders import actual_of, block, make_case, make_suite, op, page

ONE_PAGE = [page("p1", b1="one", b2="two")]


def _case_json(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "c1",
        "pages": ONE_PAGE,
        "actual": {"operations": []},
        "expected": {"operations": []},
    }
    data.update(overrides)
    return data


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as raised:
        Case.model_validate(data)
    return str(raised.value)


BULK_SUITE = make_suite({"type": "operation-accuracy"}, {"type": "anti-hallucination"})


def bulk_problems(data: dict[str, Any]) -> list[str]:
    """What a suite reading every part in the bulk-edit form finds wrong with a valid case."""
    case = Case.model_validate(data)
    return [str(p) for p in check_case(case, BULK_SUITE, Location("c.jsonl", 1)).problems]


def test_page_content_joins_blocks_with_newlines() -> None:
    """A page's content is its blocks' contents joined with '\\n'."""
    assert Page.model_validate(page("p1", b1="a", b2="", b3="c")).content == "a\n\nc"


def test_block_ids_must_be_unique_within_a_page() -> None:
    """Two blocks with one id on a page are malformed."""
    with pytest.raises(ValidationError, match="repeated: b1"):
        Page.model_validate(page("p1", block("b1", "a"), block("b1", "b")))


def test_page_ids_must_be_unique_within_a_case() -> None:
    """Two pages with one id make the case malformed."""
    assert "repeated: p1" in _error(_case_json(pages=[page("p1"), page("p1")]))


def test_a_bulk_edit_case_needs_at_least_one_page() -> None:
    """No pages is malformed for the bulk-edit scorers, and fine for a case of any kind."""
    assert bulk_problems(_case_json(pages=[])) == [
        "c.jsonl:1: pages: got a list of 0; expected at least 1 item"
    ]
    assert Case.model_validate(_case_json(pages=[])).pages == []


def test_list_patterns_with_several_pages_are_malformed() -> None:
    """A plain pattern list cannot say which of several pages it is for."""
    data = _case_json(
        pages=[page("p1"), page("p2")], expected={"operations": [], "contentPatterns": ["x"]}
    )
    [problem] = bulk_problems(data)
    assert problem.startswith("c.jsonl:1: expected.contentPatterns: a list, but")
    assert problem.endswith("use {pageId: [patterns]}")


@pytest.mark.parametrize(
    ("patterns", "told"),
    [
        ("x", 'expected.contentPatterns: got "x"; expected a list of regular expressions, or an'),
        ([5], "expected.contentPatterns[0]: got 5; expected a valid string"),
        ({"p1": "x"}, 'expected.contentPatterns.p1: got "x"; expected a valid list'),
        ({"p1": [5]}, "expected.contentPatterns.p1[0]: got 5; expected a valid string"),
    ],
)
def test_content_patterns_of_the_wrong_shape_are_told_once_at_their_path(
    patterns: object, told: str
) -> None:
    """One problem, at its JSON path, for the form the value has; never pydantic's union tags."""
    [problem] = bulk_problems(_case_json(expected={"operations": [], "contentPatterns": patterns}))
    assert problem.startswith(f"c.jsonl:1: {told}")


def test_expected_operations_need_page_id_with_several_pages() -> None:
    """Every expected operation names its page when there are several, and the error says which."""
    data = _case_json(
        pages=[page("p1", b1="a"), page("p2")],
        expected={"operations": [op("delete", "b1", page="p1"), op("delete", "b1")]},
    )
    [problem] = bulk_problems(data)
    assert problem.startswith("c.jsonl:1: expected.operations[1].pageId: required field is")


def test_actual_operations_may_omit_page_id_with_several_pages() -> None:
    """A model's operation without pageId is data (it is on no page), not a malformed case."""
    case = make_case([page("p1"), page("p2")], actual=[op("delete", "b1")])
    assert resolve_page(actual_of(case).operations[0], case.pages) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "insert", "position": "middle", "content": "x"},
        {"type": "delete", "targetIndex": 2.0},
        {"type": "delete", "targetIndex": "2"},
        {"targetBlockId": "b1"},
        {"type": 3, "targetBlockId": "b1"},
        {"type": "update", "targetBlockId": 7, "content": "x"},
        {"type": "update", "targetBlockId": "b1", "content": 5},
        {"type": "delete", "pageId": 1, "targetBlockId": "b1"},
    ],
)
def test_malformed_operations_make_the_case_malformed(bad: dict[str, Any]) -> None:
    """Bad position, non-integer index, missing or non-string type, non-string id or content."""
    [problem] = bulk_problems(_case_json(actual={"operations": [bad]}))
    assert problem.startswith("c.jsonl:1: actual.operations[0].")


@pytest.mark.parametrize("duration", [-1, "100", True])
def test_duration_must_be_a_number_at_least_zero(duration: Any) -> None:
    """durationMs: a number >= 0, not a string or boolean."""
    [problem] = bulk_problems(_case_json(actual={"operations": [], "durationMs": duration}))
    assert problem.startswith("c.jsonl:1: actual.durationMs: got")


def test_nan_is_refused_anywhere_in_a_case() -> None:
    """NaN is not JSON: refused in any case, whatever the suite."""
    assert "actual" in _error(_case_json(actual={"operations": [], "durationMs": float("nan")}))


def test_unknown_operation_type_is_data() -> None:
    """An unknown type is kept as data, not rejected."""
    case = make_case(ONE_PAGE, actual=[op("rename", "b1")], expected=[op("rename", "b1")])
    assert actual_of(case).operations[0].type == "rename"


def test_actual_operations_keep_extra_keys_and_expected_reject_them() -> None:
    """A model's extra keys are kept; a case author's unknown key is a typo."""
    actual = Operation.model_validate({**op("delete", "b1"), "reason": "duplicate"})
    assert actual.to_json() == {"type": "delete", "targetBlockId": "b1", "reason": "duplicate"}
    with pytest.raises(ValidationError, match="targetBlockID"):
        ExpectedOperation.model_validate({"type": "delete", "targetBlockID": "b1"})


def test_operation_json_uses_case_file_names_and_omits_unset_fields() -> None:
    """to_json gives camelCase keys and no nulls."""
    operation = Operation.model_validate(
        op("insert", "b1", page="p1", position="before", content="x")
    )
    assert operation.to_json() == {
        "type": "insert",
        "pageId": "p1",
        "targetBlockId": "b1",
        "position": "before",
        "content": "x",
    }


def test_insert_position_defaults_to_after() -> None:
    """effective_position is 'after' unless 'before' is given."""
    assert Operation.model_validate(op("insert", content="x")).effective_position == "after"
    assert Operation.model_validate(op("insert", position="before")).effective_position == "before"


def test_has_target_when_either_field_is_given() -> None:
    """targetBlockId or targetIndex (0 included) is a target."""
    assert Operation.model_validate(op("delete", index=0)).has_target
    assert Operation.model_validate(op("delete", "b1")).has_target
    assert not Operation.model_validate(op("insert", content="x")).has_target


def test_resolve_page_gives_the_named_page_or_the_only_page() -> None:
    """resolve_page: the named page, the only page, or None."""
    case = make_case(ONE_PAGE, actual=[op("delete", "b1"), op("delete", "b1", page="zz")])
    first, second = actual_of(case).operations
    assert resolve_page(first, case.pages) is case.pages[0]
    assert resolve_page(second, case.pages) is None
