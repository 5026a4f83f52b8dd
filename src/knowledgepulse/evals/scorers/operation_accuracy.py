"""``operation-accuracy``: how many expected operations the model actually made.

An expected operation matches the first unused actual one with the same known type, target
(:func:`target_key`) and insert position. One left unmatched is explained by the closest unused
actual one: ``position mismatch``, then ``type mismatch``, then ``target mismatch`` (each rank
over all of them before the next), else ``missing``; the rest are ``unexpectedOperations``.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from knowledgepulse.evals.models import (
    KNOWN_OPERATION_TYPES,
    ActualOutput,
    ExpectedOutput,
    Operation,
    Page,
)
from knowledgepulse.evals.operations import operation_label, page_key, target_key, unknown_type
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult, register_scorer


class Mismatch(StrEnum):
    """Why an expected operation found no match, closest first."""

    POSITION = "position mismatch"
    TYPE = "type mismatch"
    TARGET = "target mismatch"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class _Key:
    type: str
    target: Hashable
    page: str | None
    position: str | None

    @classmethod
    def of(cls, op: Operation, pages: Sequence[Page]) -> _Key:
        position = op.effective_position if op.type == "insert" else None
        return cls(op.type, target_key(op, pages), page_key(op, pages), position)


# Each rank's candidates for an unmatched expected operation: the unused actual ones in the group
# its key falls in, the first group first. POSITION: its known type and target; TYPE: its target,
# any other type (none of its known type is left there, or POSITION would have taken it); TARGET:
# its known type, any other target (the same reason), on its own page first. A target names its
# page, so in the first two the page is the same.
_CANDIDATES: tuple[tuple[Mismatch, tuple[Callable[[_Key], Hashable], ...]], ...] = (
    (Mismatch.POSITION, (lambda k: (k.type, k.target),)),
    (Mismatch.TYPE, (lambda k: k.target,)),
    (Mismatch.TARGET, (lambda k: (k.type, k.page), lambda k: k.type)),
)
_SAME_TYPE = (Mismatch.POSITION, Mismatch.TARGET)


def _grouped(
    grouping: Callable[[_Key], Hashable], keys: Sequence[_Key], used: set[int]
) -> dict[Hashable, deque[int]]:
    groups: dict[Hashable, deque[int]] = defaultdict(deque)
    for a, key in enumerate(keys):
        if a not in used:
            groups[grouping(key)].append(a)
    return groups


def _match(
    expected: Sequence[Operation], actual: Sequence[Operation], pages: Sequence[Page]
) -> tuple[list[tuple[int, Mismatch, int | None]], list[int]]:
    # Each unmatched expected operation (its index, why, the closest actual one); the unexpected.
    expected_keys = [_Key.of(op, pages) for op in expected]
    actual_keys = [_Key.of(op, pages) for op in actual]
    used: set[int] = set()
    unmatched: list[int] = []
    # The first unused actual operation with an equal key: each key's indices, in order.
    waiting: dict[_Key, deque[int]] = defaultdict(deque)
    for a, k in enumerate(actual_keys):
        waiting[k].append(a)
    for e, key in enumerate(expected_keys):
        queue = waiting.get(key) if key.type in KNOWN_OPERATION_TYPES else None
        if queue:
            used.add(queue.popleft())
        else:
            unmatched.append(e)

    closest: dict[int, tuple[Mismatch, int]] = {}
    for rank, groupings in _CANDIDATES:
        # Each group's unused actual operations in order; one used since is dropped when met, so
        # each index leaves each group once: linear, where a scan per expected one was quadratic.
        groups = [_grouped(grouping, actual_keys, used) for grouping in groupings]
        for e in unmatched:
            key = expected_keys[e]
            if e in closest or (rank in _SAME_TYPE and key.type not in KNOWN_OPERATION_TYPES):
                continue
            for grouping, group in zip(groupings, groups, strict=True):
                queue = group.get(grouping(key))
                while queue and queue[0] in used:
                    queue.popleft()
                if queue:
                    used.add(a := queue.popleft())
                    closest[e] = (rank, a)
                    break
    explained = [(e, *closest.get(e, (Mismatch.MISSING, None))) for e in unmatched]
    return explained, [a for a in range(len(actual)) if a not in used]


def operation_accuracy(matched: int, expected: int, actual: int) -> float:
    """``matched / expected``; with nothing expected, 1.0 only if nothing was done either."""
    if expected == 0:
        return 1.0 if actual == 0 else 0.0
    return matched / expected


@register_scorer("operation-accuracy")
class OperationAccuracy(Scorer):
    """The share of expected operations the model made (same type, target and position)."""

    default_threshold = 0.8
    reads = BULK_EDIT
    diagnosis_check = (
        "check unmatchedOperations: is it the type, the target or the position that does not match?"
    )

    def evaluate(
        self, actual: ActualOutput, expected: ExpectedOutput, pages: Sequence[Page]
    ) -> ScoreResult:
        """Match the operations and explain each expected one left unmatched."""
        wanted, made = expected.operations, actual.operations
        unmatched, unexpected = _match(wanted, made, pages)
        matched = len(wanted) - len(unmatched)
        details: dict[str, Any] = {
            "matchedOperations": matched,
            "totalExpectedOperations": len(wanted),
            "unmatchedOperations": [
                {
                    "expected": wanted[e].to_json(),
                    "reason": str(reason),
                    "expectedIndex": e,
                    "actual": None if a is None else made[a].to_json(),
                    "actualIndex": a,
                }
                for e, reason, a in unmatched
            ],
            "unexpectedOperations": [made[a].to_json() for a in unexpected],
            "unexpectedOperationIndices": unexpected,
        }
        return ScoreResult(operation_accuracy(matched, len(wanted), len(made)), details)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """The unmatched operations counted by reason, each with its closest actual one."""
        if result.score is None:
            return []
        details = result.details
        unmatched = details["unmatchedOperations"]
        unexpected = details["unexpectedOperations"]
        lines: list[str] = []
        if unmatched:
            counts = Counter(item["reason"] for item in unmatched)
            summary = ", ".join(f"{counts[r]} {r}" for r in Mismatch if counts[r])
            lines.append(
                f"{details['matchedOperations']} of {details['totalExpectedOperations']} "
                f"expected operations matched; unmatched: {summary}"
            )
        elif details["totalExpectedOperations"] == 0 and unexpected:
            lines.append(f"no operations were expected, but the model made {len(unexpected)}")
        for item in unmatched:
            expected_op = operation_label("expected", item["expectedIndex"], item["expected"])
            if item["actual"] is None:
                lines.append(
                    f"{expected_op}: missing; no unused actual operation has its type or target"
                )
            else:
                closest = operation_label("actual", item["actualIndex"], item["actual"])
                made = item["actual"]["type"]
                typo = "" if made in KNOWN_OPERATION_TYPES else f": {unknown_type(made)}"
                lines.append(f"{expected_op}: {item['reason']}; closest is {closest}{typo}")
        for index, op in zip(details["unexpectedOperationIndices"], unexpected, strict=True):
            # "Update" for "update" is a different, unknown type (spec): say which was meant.
            why = (
                "nothing asks for it"
                if op["type"] in KNOWN_OPERATION_TYPES
                else unknown_type(op["type"])
            )
            lines.append(f"{operation_label('actual', index, op)}: unexpected; {why}")
        return lines
