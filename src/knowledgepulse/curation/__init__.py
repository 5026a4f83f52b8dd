"""Curation: order-free corpus scoring, score-first selection across tasks, near-duplicates."""

from knowledgepulse.curation.corpus import (
    Corpus,
    canonical_order,
    content_digest,
    leave_one_out_nearest,
    score_corpus,
    time_order,
)
from knowledgepulse.curation.percentiles import (
    MinScore,
    ThresholdSpecError,
    domain_percentiles,
    percentiles,
)
from knowledgepulse.curation.select import (
    INFERRED_TASK_SIMILARITY,
    Candidate,
    DuplicateGroup,
    Rejection,
    RejectionReason,
    Selection,
    budget_for_top,
    dedupe,
    infer_tasks,
    ranking,
    select,
)
from knowledgepulse.trace.item import task_at

__all__ = [
    "INFERRED_TASK_SIMILARITY",
    "Candidate",
    "Corpus",
    "DuplicateGroup",
    "MinScore",
    "Rejection",
    "RejectionReason",
    "Selection",
    "ThresholdSpecError",
    "budget_for_top",
    "canonical_order",
    "content_digest",
    "dedupe",
    "domain_percentiles",
    "infer_tasks",
    "leave_one_out_nearest",
    "percentiles",
    "ranking",
    "score_corpus",
    "select",
    "task_at",
    "time_order",
]
