"""``kp select``: the best traces under a budget, across tasks, without near-duplicates.

Traces are scored in corpus mode (see :mod:`knowledgepulse.cli._corpus`), and the selection is
written in the order it was picked, which does not depend on input order either. Each trace is
a run of a task (``--task-field``, else inferred), so the budget is spent across tasks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._corpus import ScoredCorpus, read_and_score, similarity_histogram_option
from knowledgepulse.cli._embedder import build_embedder, model_options, novelty_text_option
from knowledgepulse.cli._emit import parquet_rows, row_output
from knowledgepulse.cli._options import Command, MinScoreType, option_group, output_option
from knowledgepulse.cli._redact import Redactor, redact_options, summary_tail
from knowledgepulse.cli._traces import paths_argument, source_options, sources, trace_options
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.cli.profiles import profiles_file_option
from knowledgepulse.curation import (
    INFERRED_TASK_SIMILARITY,
    Candidate,
    MinScore,
    Rejection,
    RejectionReason,
    Selection,
    budget_for_top,
    infer_tasks,
    select,
    task_at,
)
from knowledgepulse.reports.rows import kp_columns
from knowledgepulse.reports.value import annotated_line, dumps, tidy


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


def _top_percent(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        percent = float(value.strip().removesuffix("%"))
    except ValueError:
        percent = float("nan")
    if not 0 < percent <= 100:
        raise click.BadParameter(
            f"{value!r}: give a percentage in (0, 100], such as 10%", param_hint="--top"
        )
    return percent


@click.command("select")
@paths_argument
@click.option("--budget", type=click.IntRange(min=0), help="Select at most N traces.")
@click.option("--top", "top", metavar="P%", help="Select at most the top P% of the valid traces.")
@click.option(
    "--per-domain",
    is_flag=True,
    help="Share the budget evenly across domains (a domain short of good traces leaves its "
    "share to the others).",
)
@click.option(
    "--min-score",
    type=MinScoreType(),
    help="Reject traces scoring below X (a score, or pNN: the NNth "
    "percentile of this input's scores).",
)
@click.option(
    "--max-similarity",
    type=click.FloatRange(-1.0, 1.0),
    help="Reject a trace whose cosine with an already selected trace reaches S "
    "(see --similarity-histogram).",
)
@task_options
@similarity_histogram_option
@output_option(
    "Write the selected traces here (JSONL, atomically) instead of stdout; dataset rows "
    "go as JSONL or, for a .parquet name, Parquet."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every rejected trace with its reason here (JSONL).",
)
@model_options
@novelty_text_option
@profiles_file_option
@source_options(required=False, task_field=False)
@redact_options
def select_command(
    *,
    paths: tuple[str, ...],
    budget: int | None,
    top: str | None,
    per_domain: bool,
    min_score: MinScore | None,
    max_similarity: float | None,
    task_field: str | None,
    task_similarity: float,
    per_task: int | None,
    similarity_histogram: bool,
    output: Path | None,
    report_path: Path | None,
    no_embedder: bool,
    model: Path | None,
    batch_size: int | None,
    workers: int | None,
    device: str,
    novelty_text: str,
    profiles_file: Path | None,
    source: str | None,
    domain: str | None,
    confidence: float | None,
    redact: bool,
    privacy_level: str | None,
    rules_file: Path | None,
    **row_columns: str | float | None,
) -> int:
    """Select the best traces: score first, across tasks, skipping near-duplicates.

    Traces are scored in corpus mode (novelty against every other trace of the input) and
    ranked by score, then id. Each trace is a run of a task (--task-field, else inferred), and
    the tasks take turns: the next pick is the best trace of a task with the fewest picks so
    far. A trace is rejected when it is below --min-score, when its cosine with a selected
    trace reaches --max-similarity, when its task has --per-task picks, or when the budget is
    spent. The selected traces are written as JSON Lines in the order they were picked (every
    task's best before any task's second, so the first N are a selection of N), each with
    metadata.quality_score set (and, with --redact, their secrets and personal data
    redacted); --report lists the rejected ones with their reasons. Dataset
    rows (--from) are written back as they were, with kp_ columns added, in the input's form
    (JSON Lines or Parquet) or -o's.
    """
    if source is not None:  # a dataset's task column becomes each trace's metadata.source.task
        row_columns = {**row_columns, "task_field": task_field}
    convert_options = trace_options(source, domain, confidence, row_columns)
    if source is not None:
        parquet_rows(output, sources(paths))  # Parquet needs -o: refused before reading
    percent = _top_percent(top)
    if budget is not None and percent is not None:
        raise click.UsageError("--budget and --top both set the budget; give one")
    if max_similarity is not None and no_embedder:
        raise click.UsageError(
            "--max-similarity compares embeddings, so it needs an embedder; drop --no-embedder"
        )
    for path in (output, report_path):
        if path is not None:
            check_destination(path, what="output")
    redactor = Redactor.from_options(redact, privacy_level, rules_file)
    corpus = read_and_score(
        paths,
        build_embedder(no_embedder, model, workers=workers, device=device, paths=paths),
        novelty_text=novelty_text,
        profiles_file=profiles_file,
        batch_size=batch_size,
        source=source,
        options=convert_options,
        redactor=redactor,
    )
    if max_similarity is not None:
        corpus.require_vectors("--max-similarity")
    if similarity_histogram:
        corpus.print_similarity_histogram()
    corpus, task_path = _with_tasks(corpus, task_field, source, task_similarity)
    if percent is not None:
        budget = budget_for_top(percent, len(corpus.traces))
    threshold = (
        None if min_score is None else min_score.resolve([b.score for b in corpus.breakdowns])
    )
    selection = select(
        corpus.candidates,
        corpus.vectors,
        budget=budget,
        min_score=threshold,
        max_similarity=max_similarity,
        per_domain=per_domain,
        per_task=per_task,
    )
    _write_selected(corpus, selection, output, paths)
    if report_path is not None:
        with open_output(report_path) as stream:
            for rejection in selection.rejected:
                stream.write(dumps(tidy(_rejection_row(corpus, rejection))) + "\n")
    say(
        _summary(corpus, selection, budget, min_score)
        + f"; {_task_summary(corpus.candidates, selection, task_path)}"
        + summary_tail(redactor),
    )
    return EXIT_FINDINGS if corpus.sink.errors else EXIT_OK


def _write_selected(
    corpus: ScoredCorpus, selection: Selection, output: Path | None, paths: Sequence[str]
) -> None:
    """The selected traces best first: dataset rows in their own form, else annotated traces."""
    if corpus.has_rows:
        with row_output(output, sources(paths)) as rows:
            for index in selection.selected:
                traced = corpus.traces[index]
                rows.write(traced.row or traced.record, kp_columns(corpus.breakdowns[index]))
        return
    with open_output(output) as stream:
        for index in selection.selected:
            traced = corpus.traces[index]
            score = corpus.breakdowns[index].score
            stream.write(annotated_line(traced.record.value, score) + "\n")


def _rejection_row(corpus: ScoredCorpus, rejection: Rejection) -> dict[str, Any]:
    row = corpus.row(rejection.index) | {"reason": rejection.reason}
    row["task"] = corpus.candidates[rejection.index].task
    if rejection.duplicate_of is not None:
        row["duplicate_of"] = corpus.breakdowns[rejection.duplicate_of].trace_id
        row["similarity"] = rejection.similarity
    return row


_REASONS: tuple[tuple[RejectionReason, str], ...] = (
    ("near_duplicate", "near-duplicates"),
    ("over_budget", "over budget"),
    ("over_per_task", "over --per-task"),
)


def _summary(
    corpus: ScoredCorpus, selection: Selection, budget: int | None, min_score: MinScore | None
) -> str:
    count = len(corpus.traces)
    domains = Counter(corpus.breakdowns[i].domain for i in selection.selected)
    picked = ", ".join(f"{domain} {n}" for domain, n in sorted(domains.items()))
    parts = [
        f"{counted(count, 'trace')} scored",
        f"{len(selection.selected)} selected"
        + (f" (budget {budget})" if budget is not None else "")
        + (f": {picked}" if picked else ""),
    ]
    reasons = Counter(r.reason for r in selection.rejected)
    if min_score is not None and selection.min_score is not None:
        shown = (
            f"{min_score} = {selection.min_score:.4f}"
            if min_score.percentile is not None
            else f"{min_score}"
        )
        parts.append(f"{reasons['below_min_score']} below the minimum score {shown}")
    for reason, words in _REASONS:
        if reasons[reason]:
            parts.append(f"{reasons[reason]} {words}")
    if invalid := corpus.sink.tally.invalid:
        parts.append(f"{counted(invalid, 'invalid record')} skipped")
    return "; ".join(parts)


_ROW_TASK = "metadata.source.task"


def _with_tasks(
    corpus: ScoredCorpus, task_field: str | None, source: str | None, similarity: float
) -> tuple[ScoredCorpus, str | None]:
    """Each candidate with its task, and the path it was read at (``None``: inferred).

    With ``--from``, a dataset row's task column, which the converter keeps in
    ``metadata.source.task``; else ``--task-field``'s dotted path.
    """
    if source is not None:
        found = any(task_at(t.record.value, _ROW_TASK) is not None for t in corpus.traces)
        task_field = _ROW_TASK if found else None
    tasks: Sequence[str | None]
    if task_field is not None:
        tasks = [task_at(t.record.value, task_field) for t in corpus.traces]
    else:
        objectives = [t.trace.task.objective for t in corpus.traces]
        tasks = infer_tasks(corpus.candidates, objectives, corpus.vectors, threshold=similarity)
    candidates = [replace(c, task=task) for c, task in zip(corpus.candidates, tasks, strict=True)]
    return replace(corpus, candidates=candidates), task_field


def _task_summary(
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
