"""Hypothesis strategies for curation: candidates with vectors that are often near-duplicates."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

from knowledgepulse.curation.select import Candidate


@dataclass(frozen=True)
class Pool:
    """Candidates and their unit vectors (row i for candidate i)."""

    candidates: list[Candidate]
    vectors: NDArray[np.float32]

    def permuted(self, order: list[int]) -> Pool:
        return Pool([self.candidates[i] for i in order], self.vectors[order])


# Few distinct directions, so equal and near-equal vectors are common.
_components = st.integers(min_value=-2, max_value=2)
_vector = st.tuples(_components, _components, _components).filter(any)


_TASKS = st.sampled_from([None, "t1", "t2", "t3", "t4", "t5"])


_OUTCOMES = st.sampled_from([None, 0.0, 0.5, 1.0, 1.0])


@st.composite
def pools(
    draw: st.DrawFn, max_size: int = 16, *, tasks: bool = False, outcomes: bool = False
) -> Pool:
    """Up to ``max_size`` candidates: repeated ids, tied scores, three domains.

    With ``tasks``, each candidate is a run of one of five tasks, or of none; with
    ``outcomes``, each has tied outcomes (or none) and may have failed.
    """
    size = draw(st.integers(min_value=0, max_value=max_size))
    raw = [draw(_vector) for _ in range(size)]
    vectors = np.array(raw, dtype=np.float32).reshape(size, 3)
    if size:
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    candidates = [
        Candidate(
            key=f"kp:trace:{draw(st.integers(min_value=0, max_value=size + 2))}",
            score=draw(st.sampled_from([0.1, 0.4, 0.4, 0.6, 0.9])),
            domain=draw(st.sampled_from(["code", "finance", "qa"])),
            # As a content digest would: equal vectors, equal tiebreak.
            tiebreak=vectors[row].tobytes(),
            task=draw(_TASKS) if tasks else None,
        )
        for row in range(size)
    ]
    if outcomes:
        # A digest covers the whole content: the outcome and success too.
        candidates = [
            replace(
                candidate,
                failed=(failed := draw(st.booleans())),
                outcome=(outcome := draw(_OUTCOMES)),
                tiebreak=candidate.tiebreak + repr((failed, outcome)).encode(),
            )
            for candidate in candidates
        ]
    return Pool(candidates, vectors)
