"""Applying operations to pages: resolution, ordering, applicability and the diff."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.evals.models import ActualOutput, Block, Case, ExpectedOutput, Operation, Page
from knowledgepulse.evals.operations import (
    BlockRef,
    CasePages,
    Inapplicable,
    apply_operations,
    describe_operation,
    inserted_block_id,
    resolve_block,
    resolve_target,
    target_key,
)
from tests.evals.builders import actual_of, block, cases, contents, make_case, op, page


def _pages(*raw: dict[str, object]) -> list[Page]:
    return [Page.model_validate(p) for p in raw]


def _ops(*raw: dict[str, object]) -> list[Operation]:
    return [Operation.model_validate(o) for o in raw]


ONE = _pages(page("p1", b1="one", b2="two", b3="three"))


def _final(*raw: dict[str, object], pages: list[Page] = ONE) -> list[str]:
    return contents(apply_operations(pages, _ops(*raw)).pages[0])


def test_target_resolves_by_block_id() -> None:
    """A targetBlockId names the original block with that id."""
    assert resolve_target(_ops(op("delete", "b2"))[0], ONE) == BlockRef("p1", "b2")


def test_target_resolves_by_index_into_original_blocks() -> None:
    """Without a targetBlockId, targetIndex is a 0-based index into the original blocks."""
    assert resolve_target(_ops(op("delete", index=2))[0], ONE) == BlockRef("p1", "b3")


def test_target_block_id_wins_over_index_even_when_it_names_nothing() -> None:
    """A targetBlockId that names no block is not rescued by a valid targetIndex."""
    assert resolve_target(_ops(op("delete", "b1", index=2))[0], ONE) == BlockRef("p1", "b1")
    assert resolve_target(_ops(op("delete", "zz", index=0))[0], ONE) is None


def test_negative_and_out_of_range_indices_name_no_block() -> None:
    """targetIndex -1 and len(blocks) resolve to nothing."""
    assert resolve_target(_ops(op("delete", index=-1))[0], ONE) is None
    assert resolve_target(_ops(op("delete", index=3))[0], ONE) is None


def test_no_operations_leave_pages_unchanged() -> None:
    """Applying nothing gives the original pages and an empty diff."""
    result = apply_operations(ONE, [])
    assert list(result.pages) == ONE
    assert result.outcomes == ()
    assert result.deleted == ()
    assert result.changed == ()
    assert result.inserted == {"p1": ()}


def test_several_inserts_after_one_block_keep_their_order() -> None:
    """Each insert after b1 goes after b1 and after the blocks inserted after b1 before it."""
    assert _final(
        op("insert", "b1", content="x"),
        op("insert", "b1", content="y"),
        op("insert", "b1", position="after", content="z"),
    ) == ["one", "x", "y", "z", "two", "three"]


def test_several_inserts_before_one_block_keep_their_order() -> None:
    """Each insert before b2 lands right before b2, so they read in operation order."""
    assert _final(
        op("insert", "b2", position="before", content="x"),
        op("insert", "b2", position="before", content="y"),
    ) == ["one", "x", "y", "two", "three"]


def test_insert_after_skips_only_blocks_inserted_after_the_same_target() -> None:
    """A block inserted before b2 is not part of b1's run of inserts, so it stays after them."""
    assert _final(
        op("insert", "b1", content="x"),
        op("insert", "b2", position="before", content="before-two"),
        op("insert", "b1", content="y"),
    ) == ["one", "x", "y", "before-two", "two", "three"]


def test_insert_without_target_before_goes_to_page_start_in_order() -> None:
    """Target-less 'before' inserts go to the start of the page and keep their order."""
    assert _final(
        op("insert", position="before", content="x"),
        op("insert", position="before", content="y"),
        op("insert", "b1", position="before", content="z"),
    ) == ["x", "y", "z", "one", "two", "three"]


def test_insert_without_target_defaults_to_page_end_in_order() -> None:
    """Target-less inserts without a position go to the end of the page, in order."""
    assert _final(op("insert", content="x"), op("insert", content="y")) == [
        "one",
        "two",
        "three",
        "x",
        "y",
    ]


def test_insert_into_empty_page() -> None:
    """A target-less insert works on a page with no blocks."""
    empty = _pages(page("p1"))
    assert _final(op("insert", position="before", content="x"), pages=empty) == ["x"]


def test_update_sets_content_and_delete_removes_block() -> None:
    """Update replaces the target's content; delete removes the target."""
    assert _final(op("update", "b1", content="ONE"), op("delete", index=1)) == ["ONE", "three"]


def test_target_index_stays_on_original_blocks_after_a_delete() -> None:
    """After b1 is deleted, targetIndex 1 still means the original second block, b2."""
    assert _final(op("delete", "b1"), op("update", index=1, content="TWO")) == ["TWO", "three"]


def test_target_deleted_earlier_is_not_applicable() -> None:
    """An operation whose target an earlier operation deleted is skipped, and says so."""
    result = apply_operations(
        ONE, _ops(op("delete", "b2"), op("update", "b2", content="x"), op("delete", index=1))
    )
    reasons = [o.reason for o in result.outcomes]
    assert reasons == [None, Inapplicable.TARGET_DELETED, Inapplicable.TARGET_DELETED]
    assert "'b2'" in result.outcomes[1].explain()
    assert "deleted earlier" in result.outcomes[1].explain()


def test_unknown_type_is_skipped_and_later_operations_apply() -> None:
    """An unknown type is not applicable, and the operations after it still apply."""
    result = apply_operations(
        ONE, _ops(op("replace", "b1", content="x"), op("update", "b1", content="y"))
    )
    assert [o.reason for o in result.outcomes] == [Inapplicable.UNKNOWN_TYPE, None]
    assert contents(result.pages[0]) == ["y", "two", "three"]
    assert "'replace'" in result.outcomes[0].explain()


def test_insert_and_update_without_content_are_not_applicable() -> None:
    """Insert and update need content; delete does not."""
    result = apply_operations(ONE, _ops(op("insert", "b1"), op("update", "b1"), op("delete", "b1")))
    assert [o.reason for o in result.outcomes] == [
        Inapplicable.NO_CONTENT,
        Inapplicable.NO_CONTENT,
        None,
    ]


def test_update_and_delete_need_a_target() -> None:
    """Only an insert may have no target."""
    result = apply_operations(ONE, _ops(op("update", content="x"), op("delete")))
    assert [o.reason for o in result.outcomes] == [Inapplicable.NO_TARGET] * 2
    assert "targetBlockId or targetIndex" in result.outcomes[0].explain()


def test_unresolvable_targets_are_not_applicable() -> None:
    """An unknown block id, a negative or an out-of-range index: the target does not resolve."""
    result = apply_operations(
        ONE,
        _ops(
            op("update", "b9", content="x"),
            op("update", index=-1, content="x"),
            op("insert", index=3, content="x"),
        ),
    )
    assert [o.reason for o in result.outcomes] == [Inapplicable.TARGET_NOT_FOUND] * 3
    assert result.outcomes[0].explain() == "block 'b9' is not on page 'p1'"
    assert "targetIndex 3" in result.outcomes[2].explain()
    assert list(result.pages) == ONE


def test_pages_in_a_multi_page_case_need_page_ids() -> None:
    """With several pages, an operation without pageId is on no page; an unknown pageId too."""
    two = _pages(page("p1", b1="one"), page("p2", b1="uno"))
    result = apply_operations(
        two,
        _ops(
            op("update", "b1", content="x"),
            op("update", "b1", page="p3", content="x"),
            op("update", "b1", page="p2", content="UNO"),
        ),
    )
    assert [o.reason for o in result.outcomes] == [
        Inapplicable.NO_PAGE_ID,
        Inapplicable.PAGE_NOT_FOUND,
        None,
    ]
    assert [contents(p) for p in result.pages] == [["one"], ["UNO"]]
    assert result.changed[0].ref == BlockRef("p2", "b1")


def test_single_page_operation_may_omit_page_id() -> None:
    """With one page, an operation without pageId is on that page."""
    assert apply_operations(ONE, _ops(op("delete", "b1"))).outcomes[0].page_id == "p1"


def test_inserted_blocks_get_ids_that_cannot_collide_with_originals() -> None:
    """Inserted ids are kp:inserted:<op index>, suffixed when an original already uses one."""
    pages = _pages(page("p1", block("kp:inserted:1", "sneaky"), block("kp:inserted:1:1", "x")))
    result = apply_operations(pages, _ops(op("insert", content="a"), op("insert", content="b")))
    assert [b.id for b in result.pages[0].blocks][2:] == ["kp:inserted:0", "kp:inserted:1:2"]
    assert inserted_block_id(4, set()) == "kp:inserted:4"
    assert [b.ref.block_id for b in result.inserted["p1"]] == ["kp:inserted:0", "kp:inserted:1:2"]


def test_diff_lists_inserted_deleted_and_changed_blocks() -> None:
    """The result names inserted blocks per page, deleted and changed original blocks."""
    result = apply_operations(
        ONE,
        _ops(
            op("delete", "b3"),
            op("update", "b2", content="TWO"),
            op("insert", "b1", content="new"),
            op("delete", "b1"),
            op("update", "b2", content="2"),
        ),
    )
    assert [(d.ref.block_id, d.content, d.operation_index) for d in result.deleted] == [
        ("b1", "one", 3),
        ("b3", "three", 0),
    ]
    assert [(c.ref.block_id, c.before, c.after, c.operation_indices) for c in result.changed] == [
        ("b2", "two", "2", (1, 4))
    ]
    assert [(b.content, b.operation_index) for b in result.inserted["p1"]] == [("new", 2)]
    assert result.applicable_count == 5


def test_update_to_the_same_content_is_not_a_change() -> None:
    """An update that leaves the text as it was changes nothing."""
    assert apply_operations(ONE, _ops(op("update", "b1", content="one"))).changed == ()


def test_updated_then_deleted_block_is_deleted_not_changed() -> None:
    """A block updated and later deleted is reported once, as deleted."""
    result = apply_operations(ONE, _ops(op("update", "b1", content="x"), op("delete", "b1")))
    assert result.changed == ()
    assert [d.ref.block_id for d in result.deleted] == ["b1"]


def test_japanese_content_is_applied_as_is() -> None:
    """Non-ASCII content goes through unchanged, joined with newlines."""
    pages = _pages(page("ページ", b1="カートに追加"))
    result = apply_operations(pages, _ops(op("insert", "b1", content="要約: バスケット")))
    assert result.pages[0].content == "カートに追加\n要約: バスケット"


def test_identical_operations_share_a_target_key_even_when_unresolved() -> None:
    """Two operations naming the same missing block have the same target; others differ."""
    a, b, c, d = _ops(
        op("delete", "zz"),
        op("update", "zz", content="x"),
        op("delete", "b1"),
        op("delete", index=0),
    )
    assert target_key(a, ONE) == target_key(b, ONE)
    assert target_key(c, ONE) == target_key(d, ONE)
    assert target_key(a, ONE) != target_key(c, ONE)


@given(cases())
def test_applying_no_operations_leaves_any_pages_unchanged(case: Case) -> None:
    """For any pages, applying no operations returns them as they were."""
    result = apply_operations(case.pages, [])
    assert list(result.pages) == case.pages


@given(cases())
def test_block_count_follows_applied_inserts_and_deletes(case: Case) -> None:
    """Final blocks = original blocks + applied inserts - applied deletes, per case."""
    result = apply_operations(case.pages, actual_of(case).operations)
    applied = [o.operation.type for o in result.outcomes if o.applicable]
    before = sum(len(p.blocks) for p in case.pages)
    after = sum(len(p.blocks) for p in result.pages)
    assert after == before + applied.count("insert") - applied.count("delete")
    assert [p.id for p in result.pages] == [p.id for p in case.pages]


@given(st.lists(st.sampled_from(["x", "y", "z"]), max_size=5))
def test_inserts_after_the_last_block_read_in_operation_order(texts: list[str]) -> None:
    """However many inserts follow one block, they appear in the order they were made."""
    result = _final(*(op("insert", "b3", content=t) for t in texts))
    assert result == ["one", "two", "three", *texts]


def test_original_case_is_not_modified() -> None:
    """Applying operations works on a copy: the case's pages are as before."""
    case = make_case([page("p1", b1="one")], actual=[op("update", "b1", content="x")])
    apply_operations(case.pages, actual_of(case).operations)
    assert case.pages[0].blocks[0].content == "one"


@pytest.mark.parametrize(
    ("key", "meant"),
    [
        ("targetBlockID", "targetBlockId"),
        ("target_block_id", "targetBlockId"),
        ("Position", "position"),
    ],
)
def test_an_operations_key_near_a_field_is_named_in_its_description(key: str, meant: str) -> None:
    """A model's 'target_block_id' is read as no field: its description says which one it meant."""
    told = describe_operation({"type": "update", key: "b1"})
    assert told.endswith(f"; {key!r} is read as no field: did you mean {meant!r}?")


def test_an_operation_with_known_keys_only_is_described_as_before() -> None:
    """Nothing is added for the spec's keys, or for a key near none of them."""
    assert describe_operation({"type": "update", "targetBlockId": "b1", "why": "x"}) == (
        "update block 'b1'"
    )


def test_a_page_copied_with_other_blocks_resolves_its_own_blocks() -> None:
    """The index of a page's blocks is never a copy's: model_copy keeps what a page caches."""
    original = Page.model_validate(page("p1", b1="one"))
    target = Operation.model_validate(op("update", "b1"))
    assert resolve_block(target, original) is not None
    copied = original.model_copy(update={"blocks": [Block.model_validate(block("b2", "two"))]})
    assert resolve_block(target, copied) is None
    assert resolve_block(target, original) is not None
    indexed = CasePages([original])
    assert resolve_block(target, copied, CasePages([copied])) is None
    assert resolve_block(target, original, indexed) is indexed[0].blocks[0]


@given(cases())
def test_the_case_index_resolves_every_operation_as_a_scan_of_its_page_does(case: Case) -> None:
    """CasePages looks targets up by id; what it finds is what the pages themselves hold."""
    operations = [
        *ActualOutput.model_validate(case.actual).operations,
        *ExpectedOutput.model_validate(case.expected).operations,
    ]
    indexed = CasePages.of(case.pages)
    assert CasePages.of(indexed) is indexed
    for operation in operations:
        assert resolve_target(operation, indexed) == resolve_target(operation, case.pages)
        assert target_key(operation, indexed) == target_key(operation, case.pages)
