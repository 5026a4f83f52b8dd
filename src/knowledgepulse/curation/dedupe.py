"""Near-duplicate groups, each with the trace kept to represent it.

A group is what selection with no budget would make of it: walking down the ranking (score,
then id), a trace is kept unless its cosine with a kept one reaches the threshold; then it joins
the group of the kept trace it is most similar to. So the representative is the group's best
trace (highest score, then smallest id), and no two representatives are near-duplicates.
Unlike connected components, groups do not chain: every member is within the threshold of its
representative, not merely of some other member.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.curation.select import Candidate, select


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """A kept trace and the near-duplicates it stands for.

    Attributes:
        representative: the index of the kept candidate.
        members: ``(index, cosine with the representative)`` of each near-duplicate, in ranking
            order.
    """

    representative: int
    members: tuple[tuple[int, float], ...]


def dedupe(
    candidates: Sequence[Candidate], vectors: NDArray[np.float32], *, threshold: float
) -> list[DuplicateGroup]:
    """The near-duplicate groups (two or more traces), best representative first.

    Tasks play no part: a group is made of near-copies, whatever task each is a run of.
    """
    task_blind = [replace(candidate, task=None) for candidate in candidates]
    selection = select(task_blind, vectors, max_similarity=threshold)
    members: dict[int, list[tuple[int, float]]] = {}
    for rejection in selection.rejected:
        # With no budget and no minimum score, every rejection is a near-duplicate.
        if rejection.duplicate_of is not None and rejection.similarity is not None:
            members.setdefault(rejection.duplicate_of, []).append(
                (rejection.index, rejection.similarity)
            )
    return [
        DuplicateGroup(kept, tuple(members[kept])) for kept in selection.selected if kept in members
    ]
