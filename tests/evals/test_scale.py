"""Scoring grows with the size of a case, not with its square: a page of thousands of blocks."""

from __future__ import annotations

import time

from knowledgepulse.evals.models import Case
from knowledgepulse.evals.scorer import CaseContext, get_scorer_class
from tests.evals.builders import make_case, op, page

SCORERS = ("operation-accuracy", "anti-hallucination", "target-block-precision")


def _edit_everything(blocks: int) -> Case:
    """A page of ``blocks`` blocks: each updated, every 2nd inserted after, every 3rd deleted."""
    ids = [f"b{i}" for i in range(blocks)]
    operations = [
        *(op("update", b, content=f"new {b}") for b in ids),
        *(op("insert", b, content="x") for b in ids[::2]),
        *(op("delete", b) for b in ids[1::3]),
    ]
    return make_case(
        [page("p", **{b: f"old {b}" for b in ids})], actual=operations, expected=operations
    )


def _seconds(case: Case) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for name in SCORERS:
            get_scorer_class(name)().score_case(CaseContext.of(case))
        best = min(best, time.perf_counter() - start)
    return best


def test_sixteen_times_the_operations_cost_far_less_than_256_times_the_time() -> None:
    """Each operation finds its block by id: 16x the blocks and operations stay near 16x the time.

    A scan of the page in Python per operation made it about 256x (20 s for one case of 5,000
    blocks); what is left is list moves in C, about 45x here. The bound, 120x, tells them apart
    on a busy machine.
    """
    small, large = _seconds(_edit_everything(250)), _seconds(_edit_everything(4000))
    assert large < 120 * small, f"{large:.3f} s for 16x the case of {small:.3f} s"
