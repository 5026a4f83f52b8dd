"""The task options of ``kp select`` and the similarity histogram of ``kp select`` / ``kp dedupe``.

A task key for every trace (``--task-field``, else inferred), so that selection spends its
budget across tasks and ``--per-task`` keeps the best K runs of each; and the distribution of
nearest-neighbour similarities, printed on stderr, to choose ``--max-similarity`` from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import say
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.curation import (
    INFERRED_TASK_SIMILARITY,
    Candidate,
    Selection,
    infer_tasks,
    task_at,
)
from knowledgepulse.curation.percentiles import (
    SUMMARY_PERCENTILES,
    SimilarityHistogram,
    similarity_histogram,
)

if TYPE_CHECKING:
    from knowledgepulse.trace.load import LoadedTrace
    from knowledgepulse.value.breakdown import ValueBreakdown

similarity_histogram_option = click.option(
    "--similarity-histogram",
    is_flag=True,
    help="Print on stderr the distribution of each trace's cosine with its nearest other "
    "trace (percentiles and a histogram), to choose --max-similarity from your own data.",
)


def task_options(command: Command) -> Command:
    """``--task-field``, ``--task-similarity`` and ``--per-task``."""
    return option_group(
        command,
        click.option(
            "--task-field",
            metavar="PATH",
            help="The task each trace is a run of: with --from, a dataset column; else the "
            "value at this dotted path of the trace's JSON (metadata.task_id, or any key). "
            "Default: a dataset's task column when one is found, else inferred (the same "
            "objective, or novelty vectors within --task-similarity of the task's best run).",
        ),
        click.option(
            "--task-similarity",
            type=click.FloatRange(-1.0, 1.0),
            default=INFERRED_TASK_SIMILARITY,
            show_default=True,
            help="Without --task-field: a trace whose cosine with a task's best run "
            "reaches S is a run of that task (1 groups only equal objectives).",
        ),
        click.option(
            "--per-task",
            type=click.IntRange(min=1),
            metavar="K",
            help="Keep at most the best K traces of each task (best of N).",
        ),
    )


def with_tasks(
    candidates: Sequence[Candidate],
    traces: Sequence[LoadedTrace],
    vectors: Any,
    *,
    task_field: str | None,
    task_similarity: float,
) -> list[Candidate]:
    """The candidates, each with its task: read at ``task_field``, else inferred.

    A task the reader already set on a candidate (a dataset row's task column) is kept.
    """
    if any(c.task is not None for c in candidates):
        return list(candidates)
    if task_field is not None:
        tasks: Sequence[str | None] = [task_at(t.record.value, task_field) for t in traces]
    else:
        objectives = [t.trace.task.objective for t in traces]
        tasks = infer_tasks(candidates, objectives, vectors, threshold=task_similarity)
    return [replace(c, task=task) for c, task in zip(candidates, tasks, strict=True)]


def task_summary(
    candidates: Sequence[Candidate], selection: Selection, task_field: str | None
) -> str:
    """``3 of 5 tasks covered (inferred)``, and how many traces had no task at the field."""
    tasks = {c.task for c in candidates}
    covered = {candidates[i].task for i in selection.selected}
    how = f"by {task_field}" if task_field is not None else "inferred"
    words = f"{len(covered)} of {counted(len(tasks), 'task')} covered ({how})"
    missing = sum(c.task is None for c in candidates)
    if missing:
        words += f", {counted(missing, 'trace')} without {task_field} taken as one task"
    return words


def print_similarity_histogram(breakdowns: Sequence[ValueBreakdown]) -> None:
    """The histogram of each trace's corpus-novelty similarity, on stderr."""
    similarities = [
        b.novelty.similarity
        for b in breakdowns
        if b.novelty.source == "embedding" and b.novelty.similarity is not None
    ]
    say(render_similarity_histogram(similarity_histogram(similarities)))


BAR_WIDTH = 40


def render_similarity_histogram(histogram: SimilarityHistogram | None) -> str:
    """Percentiles, one bar per bin, and how many traces each usual limit reaches."""
    if histogram is None:
        return "no nearest-neighbour similarities: fewer than two traces were embedded"
    summary = histogram.summary
    total = int(summary["count"])
    lines = [
        f"cosine of each trace with its nearest other trace ({total} traces):",
        "  "
        + "  ".join(
            f"{name} {summary[name]:.3f}"
            for name in ("min", *(f"p{p}" for p in SUMMARY_PERCENTILES), "max")
        ),
    ]
    tallest = max(count for _, _, count in histogram.bins)
    for low, high, count in histogram.bins:
        bar = "#" * (round(BAR_WIDTH * count / tallest) if tallest else 0)
        lines.append(f"  {low:5.2f}-{high:4.2f} {count:>7} {bar}")
    reach = ", ".join(
        f"{limit:g}: {count} ({100 * count / total:.0f}%)" for limit, count in histogram.at_or_above
    )
    lines.append(f"  traces at or above --max-similarity S (the most S can reject): {reach}")
    return "\n".join(lines)
