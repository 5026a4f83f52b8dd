"""The task each item is a run of, read or inferred: what select, dedupe and split group by.

A task is read where the item was read (a dataset's task column, or ``task_field``: a row's
column, else a dotted path in the trace's JSON, set on the item by ``runs.read.with_task``).
When no item has one, the tasks are inferred from the scored corpus: the same objective, or a
cosine with a task's best run reaching ``task_similarity`` (:func:`inferred_tasks`).
"""

from __future__ import annotations

from collections.abc import Sequence

from knowledgepulse._util.settings import check_cosine
from knowledgepulse.curation import infer_tasks
from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.curation.select import INFERRED_TASK_SIMILARITY, JOIN_MARGIN
from knowledgepulse.curation.splits import BY_TASK
from knowledgepulse.errors import ParameterConflictError, ScorerParameterError, Setting
from knowledgepulse.runs.task_field import no_task_field
from knowledgepulse.trace.item import TraceItem


def similarity_of_tasks(
    task_similarity: float | None, task_field: str | None, *, by_task: bool = True
) -> float:
    """``task_similarity`` checked, or ``INFERRED_TASK_SIMILARITY`` when it is ``None``.

    Raises:
        ParameterConflictError: given with ``task_field`` (the tasks are read, not inferred),
            or without ``by_task`` (no task is asked for).
        ScorerParameterError: outside [-1, 1]; an empty ``task_field``.
    """
    if task_field is not None and not task_field.strip():
        raise ScorerParameterError(
            Setting("task_field", task_field), ": give a column or a dotted path (metadata.task_id)"
        )
    if task_similarity is None:
        return INFERRED_TASK_SIMILARITY
    if task_field is not None:
        raise ParameterConflictError(
            Setting("task_similarity"),
            " infers the tasks ",
            Setting("task_field"),
            " reads: give one of them",
        )
    if not by_task:
        task = Setting("by", BY_TASK)
        raise ParameterConflictError(
            Setting("task_similarity"), " infers the tasks of ", task, ": give ", task
        )
    check_cosine("task_similarity", task_similarity)
    return task_similarity


def tasks_of(
    corpus: Corpus, task_field: str | None, similarity: float
) -> tuple[list[str | None], bool]:
    """Each item's task, and whether they were inferred (:func:`tasks_read`, else inferred)."""
    read = tasks_read([scored.item for scored in corpus.items], task_field)
    if read is not None:
        return read, False
    return list(inferred_tasks(corpus, similarity)), True


def tasks_read(items: Sequence[TraceItem], task_field: str | None) -> list[str | None] | None:
    """The tasks read with the items, or ``None``: there are none, and they are inferred.

    They are read when the caller named a task field or any item has a task (a dataset's task
    column); an item without one then has ``None``.

    Raises:
        ScorerParameterError: ``task_field`` is named and no item has it (misspelt): every
            item would be of one task.
    """
    read = [item.task for item in items]
    if task_field is not None and read and all(task is None for task in read):
        raise no_task_field(task_field, items)
    return read if task_field is not None or any(task is not None for task in read) else None


def inferred_tasks(corpus: Corpus, similarity: float) -> list[str]:
    """Each item's task inferred from the objectives and the vectors (:func:`infer_tasks`).

    What :func:`~knowledgepulse.runs.select`, :func:`~knowledgepulse.runs.dedupe` and
    :func:`~knowledgepulse.runs.split` group by when
    no task is read: the same objective, or a cosine with the task's best run reaching
    ``similarity`` (on MiniLM's scale: :attr:`Corpus.cosine_of`); then a task whose runs all
    failed joins its mutually nearest task with a successful run when the mean cosine of their
    runs reaches ``similarity - JOIN_MARGIN`` (below 1). Without vectors, or for an objective
    written mostly outside the Latin script (which the models cannot tell apart), the same
    objective only.
    """
    facts = corpus.item_facts()
    return infer_tasks(
        corpus.candidates(),
        [item.objective_digest for item in facts],  # 16 bytes each, not a text
        corpus.vectors,
        threshold=corpus.cosine_of(similarity),
        compared=[item.objective_read for item in facts],
        failed=[not item.success for item in facts],
        # At 1 only equal objectives make a task, as --task-similarity says: nothing joins.
        joined=corpus.cosine_of(max(-1.0, similarity - JOIN_MARGIN)) if similarity < 1 else None,
    )
