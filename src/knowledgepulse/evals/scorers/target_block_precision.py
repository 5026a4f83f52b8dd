"""``target-block-precision``: how often the model picked the right block to operate on.

The k-th expected operation of a type on a page is paired with the k-th actual one of that type
there (the spec's Decision); a pair is correct when ``targetBlockId`` or ``targetIndex`` is equal
on both sides, or both resolve to one original block. Untargeted expected operations and extra
actual ones do not count.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from knowledgepulse.evals.models import ActualOutput, ExpectedOutput, Operation, Page
from knowledgepulse.evals.operations import describe_target, page_key, resolve_target
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult, register_scorer


def _same_target(expected: Operation, actual: Operation, pages: Sequence[Page]) -> bool:
    # Equal targetBlockId, equal targetIndex (both given), or the same original block.
    if expected.target_block_id is not None and expected.target_block_id == actual.target_block_id:
        return True
    if expected.target_index is not None and expected.target_index == actual.target_index:
        return True
    resolved = resolve_target(expected, pages)
    return resolved is not None and resolved == resolve_target(actual, pages)


def _pair_targets(
    expected: Sequence[Operation], actual: Sequence[Operation], pages: Sequence[Page]
) -> list[tuple[int, int | None, int, bool]]:
    # Each targeted expected operation, the k-th of its type on its page: (its index, the k-th
    # actual one's there or None, k, whether their targets agree).
    by_group: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, op in enumerate(actual):
        page = page_key(op, pages)
        if page is not None:
            by_group[(page, op.type)].append(index)
    seen: dict[tuple[str | None, str], int] = defaultdict(int)
    pairs = []
    for index, op in enumerate(expected):
        page = page_key(op, pages)
        seen[(page, op.type)] += 1
        k = seen[(page, op.type)]
        if not op.has_target:
            continue
        candidates = by_group.get((page, op.type), []) if page is not None else []
        paired = candidates[k - 1] if k <= len(candidates) else None
        correct = paired is not None and _same_target(op, actual[paired], pages)
        pairs.append((index, paired, k, correct))
    return pairs


def _target_json(op: Operation) -> dict[str, Any]:
    return {"targetBlockId": op.target_block_id, "targetIndex": op.target_index}


def _resolved(op: Operation, pages: Sequence[Page]) -> str | None:
    ref = resolve_target(op, pages)
    return ref.block_id if ref is not None else None


@register_scorer("target-block-precision")
class TargetBlockPrecision(Scorer):
    """The share of expected targets the paired actual operations hit."""

    default_threshold = 0.75
    reads = BULK_EDIT
    diagnosis_check = (
        "check incorrectTargets: why did the model not find the block it was meant to edit?"
    )

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Pair operations by page, type and rank, and compare their targets."""
        pairs = _pair_targets(expected.operations, actual.operations, pages)
        correct = sum(hit for *_, hit in pairs)
        incorrect = []
        for e, a, k, hit in pairs:
            if hit:
                continue
            exp = expected.operations[e]
            act = None if a is None else actual.operations[a]
            incorrect.append(
                {
                    "expected": _target_json(exp),
                    "actual": None if act is None else _target_json(act),
                    "pageId": page_key(exp, pages),
                    "type": exp.type,
                    "ordinal": k,
                    "expectedIndex": e,
                    "actualIndex": a,
                    "expectedBlock": _resolved(exp, pages),
                    "actualBlock": None if act is None else _resolved(act, pages),
                }
            )
        details = {
            "correctTargets": correct,
            "totalTargets": len(pairs),
            "incorrectTargets": incorrect,
        }
        # Nothing to check is not a failure of targeting: 1.0.
        score = correct / len(pairs) if pairs else 1.0
        return ScoreResult(score, details)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """Each incorrect target: what was expected, and what the paired actual operation did."""
        if result.score is None:
            return []
        details = result.details
        lines = []
        if details["incorrectTargets"]:
            kind = details["incorrectTargets"][0]["type"]  # the rule told with a type at hand
            lines.append(
                f"{details['correctTargets']} of {details['totalTargets']} targets correct; "
                f"operations are paired by page and type in order (the k-th expected {kind} "
                f"on a page with the k-th actual {kind} there)"
            )
        for item in details["incorrectTargets"]:
            nth = f"{ordinal(item['ordinal'])} {item['type']}"
            where = f"page '{item['pageId']}'" if item["pageId"] is not None else "no page"
            wanted = _describe(item["expected"], item["expectedBlock"])
            head = (
                f"expected.operations[{item['expectedIndex']}] ({nth} on {where}) targets {wanted}"
            )
            if item["actual"] is None:
                lines.append(f"{head}, but the actual operations have no {nth} on {where}")
            else:
                got = _describe(item["actual"], item["actualBlock"])
                lines.append(f"{head}, but actual.operations[{item['actualIndex']}] targets {got}")
        return lines


def _describe(target: dict[str, Any], resolved: str | None) -> str:
    if target["targetBlockId"] is None and target["targetIndex"] is None:
        return "no block (it gives neither targetBlockId nor targetIndex)"
    named = describe_target(target)
    if resolved is None:
        return f"{named}, which names no block of the original page"
    if target["targetBlockId"] is None:
        return f"{named} = block '{resolved}'"
    return named


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
