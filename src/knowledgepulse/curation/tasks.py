"""Task keys: which task a trace is a run of, read from the trace or inferred from the corpus.

Selection spends its budget across tasks, so every candidate needs a task key: read from the
trace's document (:func:`task_at`), a dataset row's column, or else inferred
(:func:`infer_tasks`). Runs of one task are paraphrases, not near-copies, so a task is a group
of traces with the same objective or novelty vectors close to its best run's (measured on
tau-bench in ``docs/curation.md``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.curation.select import Candidate, ranking

INFERRED_TASK_SIMILARITY = 0.65
"""The cosine of two novelty vectors from which they are runs of one task (``docs/curation.md``:
on tau-bench, a median of 0.75 within a task, 0.35 between two)."""


def task_at(document: Any, path: str) -> str | None:
    """The task key at a dotted ``path`` of a trace's JSON (``metadata.task_id``, ``extra.0``).

    A number segment indexes a list. A string is the key itself; another JSON value is its
    compact JSON text with sorted keys, so equal values make equal keys. ``None`` when a
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

    Walking down the ranking, a candidate joins the task of an earlier one with the same
    objective (``objectives[i]``), else the task whose best run's vector is most similar to its
    own when their cosine reaches ``threshold``, else it starts its own. Without vectors, only
    equal objectives make a task. The answer does not depend on the candidates' order.

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
