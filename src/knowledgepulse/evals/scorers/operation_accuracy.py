"""``operation-accuracy``: how many expected operations the model actually made.

Matching: an expected operation matches one unused actual operation with the same known type,
the same target block (:func:`target_key`) and, for ``insert``, the same position. Expected
operations take, in order, the first that matches; "matches" is an equivalence, so this finds
the most matches.

An unmatched expected operation is explained by the closest unused actual one, ranked
``position mismatch`` (an insert, same target), ``type mismatch`` (same target), ``target
mismatch`` (same type; the same page preferred); each rank is assigned over all unmatched
expected operations before the next, each actual explaining at most one. Sharing neither type
nor target explains nothing: ``missing``. ``unexpectedOperations``: the actual operations
neither matched nor named as closest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
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
from knowledgepulse.evals.operations import operation_label, page_key, target_key
from knowledgepulse.evals.registry import register_scorer
from knowledgepulse.evals.scorer import BULK_EDIT, Scorer, ScoreResult


class Mismatch(StrEnum):
    """Why an expected operation found no match, closest first."""

    POSITION = "position mismatch"
    TYPE = "type mismatch"
    TARGET = "target mismatch"
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Unmatched:
    """An expected operation without a match, and the actual operation that came closest."""

    expected_index: int
    reason: Mismatch
    actual_index: int | None


@dataclass(frozen=True, slots=True)
class OperationMatching:
    """(expected, actual) index pairs, the unmatched expected ones, the unexpected actual ones."""

    matches: tuple[tuple[int, int], ...]
    unmatched: tuple[Unmatched, ...]
    unexpected: tuple[int, ...]


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


def _closeness(expected: _Key, actual: _Key) -> Mismatch | None:
    """How close an unused actual operation is to an unmatched expected one (None: unrelated)."""
    same_type = expected.type == actual.type and expected.type in KNOWN_OPERATION_TYPES
    if expected.target == actual.target:
        # Same known type and target left unmatched can only differ in an insert's position.
        return Mismatch.POSITION if same_type else Mismatch.TYPE
    return Mismatch.TARGET if same_type else None


def match_operations(
    expected: Sequence[Operation], actual: Sequence[Operation], pages: Sequence[Page]
) -> OperationMatching:
    """Pair expected with actual operations and explain every expected one left unmatched."""
    expected_keys = [_Key.of(op, pages) for op in expected]
    actual_keys = [_Key.of(op, pages) for op in actual]
    used: set[int] = set()
    matches: list[tuple[int, int]] = []
    unmatched: list[int] = []
    for e, key in enumerate(expected_keys):
        found = None
        if key.type in KNOWN_OPERATION_TYPES:
            found = next((a for a, k in enumerate(actual_keys) if a not in used and k == key), None)
        if found is None:
            unmatched.append(e)
        else:
            used.add(found)
            matches.append((e, found))

    closest: dict[int, tuple[Mismatch, int]] = {}
    for rank in (Mismatch.POSITION, Mismatch.TYPE, Mismatch.TARGET):
        for e in unmatched:
            if e in closest:
                continue
            candidates = [
                a
                for a, k in enumerate(actual_keys)
                if a not in used and _closeness(expected_keys[e], k) is rank
            ]
            if candidates:
                a = min(candidates, key=lambda a: (actual_keys[a].page != expected_keys[e].page, a))
                used.add(a)
                closest[e] = (rank, a)
    return OperationMatching(
        matches=tuple(matches),
        unmatched=tuple(
            Unmatched(e, *closest[e]) if e in closest else Unmatched(e, Mismatch.MISSING, None)
            for e in unmatched
        ),
        unexpected=tuple(a for a in range(len(actual)) if a not in used),
    )


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
        matching = match_operations(expected.operations, actual.operations, pages)
        details: dict[str, Any] = {
            "matchedOperations": len(matching.matches),
            "totalExpectedOperations": len(expected.operations),
            "unmatchedOperations": [
                {
                    "expected": expected.operations[u.expected_index].to_json(),
                    "reason": str(u.reason),
                    "expectedIndex": u.expected_index,
                    "actual": (
                        None
                        if u.actual_index is None
                        else actual.operations[u.actual_index].to_json()
                    ),
                    "actualIndex": u.actual_index,
                }
                for u in matching.unmatched
            ],
            "unexpectedOperations": [actual.operations[a].to_json() for a in matching.unexpected],
            "unexpectedOperationIndices": list(matching.unexpected),
        }
        score = operation_accuracy(
            len(matching.matches), len(expected.operations), len(actual.operations)
        )
        return ScoreResult(score, details)

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
                lines.append(f"{expected_op}: {item['reason']}; closest is {closest}")
        for index, op in zip(details["unexpectedOperationIndices"], unexpected, strict=True):
            lines.append(f"{operation_label('actual', index, op)}: unexpected; nothing asks for it")
        return lines
