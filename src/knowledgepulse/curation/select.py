"""Score-first, diversity-aware selection (in the spirit of DEITA's filtering).

Candidates are ranked by score (highest first), ties by trace id, then by a digest of the
trace's content, so the ranking, and everything decided from it, never depends on input order.
Walking down the ranking, a candidate is rejected when it is below the minimum score, when its
cosine with a trace already selected reaches the similarity limit (it is a near-duplicate of the
most similar one), or when the budget is spent; otherwise it is selected. A rejected trace never
blocks another: similarity is only measured against selected ones.

With ``per_domain`` the domains take turns: each round, every domain that still has an eligible
candidate selects its best one (the round's picks in ranking order), until the budget is spent.
So the budget is split evenly across domains, and a domain with too few good traces leaves its
share to the others instead of wasting it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

RejectionReason = Literal["below_min_score", "near_duplicate", "over_budget"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One trace offered for selection.

    Attributes:
        key: the trace id (ties in score go to the smaller id).
        score: its value score.
        domain: its ``metadata.task_domain`` (for ``per_domain``).
        tiebreak: a digest of its content, for two copies of one id with equal scores.
    """

    key: str
    score: float
    domain: str = ""
    tiebreak: bytes = b""


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a candidate was not selected.

    Attributes:
        index: the candidate's position in the list given to :func:`select`.
        reason: ``below_min_score``, ``near_duplicate`` or ``over_budget``.
        duplicate_of: with ``near_duplicate``, the index of the most similar selected candidate.
        similarity: with ``near_duplicate``, the cosine with that candidate.
    """

    index: int
    reason: RejectionReason
    duplicate_of: int | None = None
    similarity: float | None = None


@dataclass(frozen=True, slots=True)
class Selection:
    """The outcome of :func:`select`: indexes into the candidate list, in ranking order.

    Attributes:
        selected: the selected candidates, best first.
        rejected: every other candidate with its reason, in ranking order.
        min_score: the minimum score applied (``None`` when there was none).
    """

    selected: tuple[int, ...]
    rejected: tuple[Rejection, ...]
    min_score: float | None = None


def ranking(candidates: Sequence[Candidate]) -> list[int]:
    """The candidates' indexes, best first: score descending, then id, content digest, domain."""
    return sorted(
        range(len(candidates)),
        key=lambda i: (
            -candidates[i].score,
            candidates[i].key,
            candidates[i].tiebreak,
            candidates[i].domain,
        ),
    )


def budget_for_top(percent: float, count: int) -> int:
    """How many of ``count`` traces make the top ``percent``% (rounded down: never more)."""
    return int(count * percent / 100.0 + 1e-9)


def select(
    candidates: Sequence[Candidate],
    vectors: NDArray[np.float32] | None = None,
    *,
    budget: int | None = None,
    min_score: float | None = None,
    max_similarity: float | None = None,
    per_domain: bool = False,
) -> Selection:
    """Pick the best candidates under a budget, a minimum score and a similarity limit.

    Args:
        candidates: the traces on offer.
        vectors: unit vectors, row ``i`` for ``candidates[i]``; needed with ``max_similarity``.
        budget: at most this many are selected (``None``: no limit).
        min_score: candidates scoring below this are rejected.
        max_similarity: a candidate whose cosine with a selected one reaches this is rejected.
        per_domain: share the budget evenly across domains (see the module's docstring).

    Raises:
        ValueError: ``max_similarity`` without vectors, or vectors of the wrong shape.
    """
    if max_similarity is not None:
        if vectors is None:
            raise ValueError("max_similarity needs the candidates' vectors")
        if vectors.ndim != 2 or vectors.shape[0] != len(candidates):
            raise ValueError(f"{vectors.shape} vectors for {len(candidates)} candidates")
    limit = len(candidates) if budget is None else max(0, budget)
    order = ranking(candidates)
    position = {index: rank for rank, index in enumerate(order)}
    rejected: dict[int, Rejection] = {}
    queues: dict[str, deque[int]] = {}
    for index in order:
        if min_score is not None and candidates[index].score < min_score:
            rejected[index] = Rejection(index, "below_min_score")
        else:
            domain = candidates[index].domain if per_domain else ""
            queues.setdefault(domain, deque()).append(index)
    picked = _Picked(vectors, limit, max_similarity)

    def head(queue: deque[int]) -> int | None:
        # The queue's best candidate that is not a near-duplicate of a selected one.
        while queue:
            duplicate = picked.duplicate(queue[0])
            if duplicate is None:
                return queue[0]
            rejected[queue[0]] = duplicate
            queue.popleft()
        return None

    while not picked.full:
        heads = [(i, queue) for queue in queues.values() if (i := head(queue)) is not None]
        if not heads:
            break
        for _, queue in sorted(heads, key=lambda pair: position[pair[0]]):
            # An earlier pick in this round may have made this domain's head a near-duplicate.
            if picked.full or head(queue) is None:
                continue
            picked.add(queue.popleft())
    for queue in queues.values():
        for index in queue:
            rejected[index] = picked.duplicate(index) or Rejection(index, "over_budget")
    return Selection(
        selected=tuple(picked.indexes),
        rejected=tuple(rejected[i] for i in sorted(rejected, key=position.__getitem__)),
        min_score=min_score,
    )


class _Picked:
    """The selected candidates, and their vectors for the near-duplicate test."""

    def __init__(
        self, vectors: NDArray[np.float32] | None, limit: int, max_similarity: float | None
    ) -> None:
        self.indexes: list[int] = []
        self._limit = limit
        self._max_similarity = max_similarity
        self._vectors = vectors
        self._rows: NDArray[np.float32] | None = None
        if vectors is not None and max_similarity is not None:
            # One row per possible pick, filled as picks are made (never more than the limit).
            self._rows = np.zeros((min(limit, len(vectors)), vectors.shape[1]), dtype=np.float32)

    @property
    def full(self) -> bool:
        return len(self.indexes) >= self._limit

    def add(self, index: int) -> None:
        if self._rows is not None and self._vectors is not None:
            self._rows[len(self.indexes)] = self._vectors[index]
        self.indexes.append(index)

    def duplicate(self, index: int) -> Rejection | None:
        """A ``near_duplicate`` rejection when ``index`` is too close to a pick, else ``None``."""
        if self._rows is None or self._vectors is None or self._max_similarity is None:
            return None
        if not self.indexes:
            return None
        similarities = self._rows[: len(self.indexes)] @ self._vectors[index]
        best = int(np.argmax(similarities))  # ties: the earliest pick, the better one
        similarity = min(1.0, max(-1.0, float(similarities[best])))
        if similarity < self._max_similarity:
            return None
        return Rejection(index, "near_duplicate", self.indexes[best], similarity)
