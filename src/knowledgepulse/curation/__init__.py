"""Curation: order-free corpus scoring, score-first selection across tasks, near-duplicates.

The steps under ``knowledgepulse.select`` and ``knowledgepulse.dedupe``: ``score_corpus``
scores every trace against all the others, ``infer_tasks`` groups runs of one task, and
``select`` and ``dedupe`` work on candidates (``select.Candidate``). Corpus helpers are in
``corpus``, score summaries and ``--min-score`` in ``percentiles``.
"""

from knowledgepulse.curation.corpus import score_corpus
from knowledgepulse.curation.select import dedupe, infer_tasks, select

__all__ = ["dedupe", "infer_tasks", "score_corpus", "select"]
