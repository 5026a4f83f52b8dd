"""Task keys: which task a trace is a run of, read from the trace or inferred from the corpus.

Selection spends its budget across tasks, and ``per_task`` keeps the best K runs of each (best
of N for rejection-sampling fine-tuning), so every candidate needs a task key: a plain string.
It is read from the trace's document (:func:`task_at`, a dotted path such as
``metadata.task_id``), or a dataset row's column, or else inferred (:func:`infer_tasks`).

Inference. Runs of one task are paraphrases of each other, not near-copies, so a task is a
group, not a duplicate: walking down the ranking (as selection does), a trace joins the task of
an earlier trace with the same objective text, else the task whose first (best) run is most
similar to it when their cosine reaches the threshold, else it starts a task of its own, named
by its id. The vectors are the corpus's novelty vectors (objective, actions and the terms they
act on, see ``docs/curation.md``): on tau-bench (50 tasks, 4 runs each, every objective worded
anew) they group runs at an adjusted Rand index of 0.71 at 0.65, where the objectives' own
embeddings reach 0.46 at most; Reflexion's runs of one question share its text (1.00).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.curation.select import Candidate, ranking

INFERRED_TASK_SIMILARITY = 0.65
"""The cosine of two novelty vectors from which they are runs of one task (measured in
``docs/curation.md``: tau-bench's runs of one task have a median cosine of 0.75, two tasks'
0.35, and 0.61 at the 99th percentile)."""


def task_at(document: Any, path: str) -> str | None:
    """The task key at a dotted ``path`` of a trace's JSON (``metadata.task_id``, ``extra.0``).

    Any key may be named, the schema's or one a producer added; a number segment indexes a
    list. A string is the key itself; another JSON value is its compact JSON text (``7``,
    ``true``, ``{"a":1}`` with sorted keys), so equal values make equal keys. ``None`` when a
    segment is missing or the value is null.
    """
    value = document
    for segment in path.split("."):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def infer_tasks(
    candidates: Sequence[Candidate],
    objectives: Sequence[str],
    vectors: NDArray[np.float32] | None = None,
    *,
    threshold: float = INFERRED_TASK_SIMILARITY,
) -> list[str]:
    """Each candidate's task: the id of the best run of the task it is inferred to belong to.

    See the module's docstring. Without vectors, only equal objectives make a task. The answer
    does not depend on the order of the candidates (it walks the ranking). Two tasks whose best
    runs share an id are one task (a second copy of an id is the same trace).

    Args:
        candidates: the traces on offer (their ``task`` is ignored).
        objectives: each candidate's ``task.objective``.
        vectors: unit vectors, row ``i`` for ``candidates[i]`` (``None``: objectives only).
        threshold: the cosine with a task's best run from which a trace is a run of it.

    Raises:
        ValueError: objectives or vectors not one per candidate.
    """
    count = len(candidates)
    if len(objectives) != count or (vectors is not None and vectors.shape[0] != count):
        raise ValueError(f"{count} candidates, {len(objectives)} objectives, vectors {vectors}")
    tasks = [""] * count
    by_objective: dict[str, str] = {}
    leaders: list[int] = []  # the first (best) run of each task, in ranking order
    # Their vectors, a row per task as tasks are found (never more rows than candidates).
    rows = None if vectors is None else np.zeros_like(vectors)
    for index in ranking(candidates):
        task = by_objective.get(objectives[index])
        if task is None and vectors is not None and rows is not None and leaders:
            similarities = rows[: len(leaders)] @ vectors[index]
            best = int(np.argmax(similarities))  # ties: the earlier, better task
            if similarities[best] >= threshold:
                task = tasks[leaders[best]]
        if task is None:
            task = candidates[index].key
            if rows is not None and vectors is not None:
                rows[len(leaders)] = vectors[index]
            leaders.append(index)
        tasks[index] = task
        by_objective.setdefault(objectives[index], task)
    return tasks
