"""``anti-hallucination``: 1 when the model added, removed and changed only what was asked.

All three of the spec's conditions: no new content (no operation names a page or block id not
in the input, no page gets more inserts than expected), no deleted blocks but those expected
deletes target, and only specified changes (each changed block is an expected update's target).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from knowledgepulse._util.text import counted
from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Operation, Page
from knowledgepulse.evals.operations import (
    ApplicationResult,
    BlockRef,
    apply_operations,
    page_key,
    resolve_target,
)
from knowledgepulse.evals.patterns import preview
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult, register_scorer


def _hallucinated_ids(
    operations: Sequence[Operation], pages: Sequence[Page]
) -> list[dict[str, Any]]:
    known = {
        "pageId": {page.id for page in pages},
        "targetBlockId": {block.id for page in pages for block in page.blocks},
    }
    return [
        {"operationIndex": index, "field": field, "id": named}
        for index, op in enumerate(operations)
        for field, named in (("pageId", op.page_id), ("targetBlockId", op.target_block_id))
        if named is not None and named not in known[field]
    ]


def _unexpected_inserts(
    applied: ApplicationResult, expected: Sequence[Operation], pages: Sequence[Page]
) -> list[dict[str, Any]]:
    allowed = Counter(page_key(op, pages) for op in expected if op.type == "insert")
    return [
        {
            "pageId": page_id,
            "inserted": len(blocks),
            "expectedInserts": allowed[page_id],
            "blocks": [
                {
                    "blockId": block.ref.block_id,
                    "operationIndex": block.operation_index,
                    "content": block.content,
                }
                for block in blocks
            ],
        }
        for page_id, blocks in applied.inserted.items()
        if len(blocks) > allowed[page_id]
    ]


def _expected_targets(
    expected: Sequence[Operation], kind: str, pages: Sequence[Page]
) -> set[BlockRef]:
    targets = (resolve_target(op, pages) for op in expected if op.type == kind)
    return {ref for ref in targets if ref is not None}


@register_scorer("anti-hallucination")
class AntiHallucination(Scorer):
    """1 when nothing was invented, deleted or changed beyond what was expected, else 0."""

    default_threshold = 1.0
    reads = BULK_EDIT
    diagnosis_check = (
        "check the input/output diff: what was added, deleted or changed that nothing asked for?"
    )

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Diff the input with the output of the actual operations, against what was expected."""
        applied = apply_operations(pages, actual.operations)
        invented = _hallucinated_ids(actual.operations, pages)
        inserts = _unexpected_inserts(applied, expected.operations, pages)
        may_delete = _expected_targets(expected.operations, "delete", pages)
        may_change = _expected_targets(expected.operations, "update", pages)
        deletions = [
            {
                "pageId": block.ref.page_id,
                "blockId": block.ref.block_id,
                "content": block.content,
                "operationIndex": block.operation_index,
            }
            for block in applied.deleted
            if block.ref not in may_delete
        ]
        changes = [
            {
                "pageId": block.ref.page_id,
                "blockId": block.ref.block_id,
                "before": block.before,
                "after": block.after,
                "operationIndices": list(block.operation_indices),
            }
            for block in applied.changed
            if block.ref not in may_change
        ]
        details = {
            "noNewContent": not invented and not inserts,
            "noDeletedBlocks": not deletions,
            "onlySpecifiedChanges": not changes,
            "hallucinatedIds": invented,
            "unexpectedInserts": inserts,
            "unexpectedDeletions": deletions,
            "unexpectedChanges": changes,
        }
        clean = not (invented or inserts or deletions or changes)
        return ScoreResult(1.0 if clean else 0.0, details)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The diff of input and output: what was invented, added, deleted and changed."""
        if result.score is None:
            return []
        details = result.details
        lines = []
        for item in details["hallucinatedIds"]:
            what = "page" if item["field"] == "pageId" else "block"
            where = "the input" if what == "page" else "any input page"
            lines.append(
                f"actual.operations[{item['operationIndex']}] names {what} '{item['id']}' "
                f"({item['field']}), which is not in {where}"
            )
        for item in details["unexpectedInserts"]:
            added = "; ".join(
                f"actual.operations[{b['operationIndex']}] added {quote(b['content'])}"
                for b in item["blocks"]
            )
            lines.append(
                f"page '{item['pageId']}': {counted(item['inserted'], 'block')} inserted, but the "
                f"expected operations insert {item['expectedInserts']}: {added}"
            )
        for item in details["unexpectedDeletions"]:
            lines.append(
                f"actual.operations[{item['operationIndex']}] deleted block '{item['blockId']}' "
                f"on page '{item['pageId']}' ({quote(item['content'])}), "
                "which no expected delete targets"
            )
        for item in details["unexpectedChanges"]:
            by = ", ".join(f"actual.operations[{i}]" for i in item["operationIndices"])
            lines.append(
                f"block '{item['blockId']}' on page '{item['pageId']}' was changed by {by} "
                f"but no expected update targets it: before {quote(item['before'])}, "
                f"after {quote(item['after'])}"
            )
        return lines


def quote(text: str) -> str:
    """Text in single quotes, cut to 60 characters, newlines shown escaped."""
    return f"'{preview(text, 60)}'"
