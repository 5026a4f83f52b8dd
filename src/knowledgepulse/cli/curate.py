"""``kp select`` and ``kp dedupe``: curating a corpus, scored whole in corpus mode.

Novelty is against every other trace of the input, so no verdict depends on its order; the
whole input is held in memory (1.5 KB of vector per trace with MiniLM).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import ReadProgress, open_output, say
from knowledgepulse.cli._embedder import (
    batch_size_for,
    build_embedder,
    model_options,
    novelty_text_option,
)
from knowledgepulse.cli._options import (
    MinScoreType,
    output_option,
    profiles_file_option,
    registry_from,
)
from knowledgepulse.cli._redaction import redact_options, redactor_from, summary_tail
from knowledgepulse.cli._traces import (
    ProblemSink,
    parquet_rows,
    paths_argument,
    read_traces,
    row_output,
    source_options,
    sources,
    trace_options,
)
from knowledgepulse.curation import (
    INFERRED_TASK_SIMILARITY,
    Candidate,
    MinScore,
    Rejection,
    RejectionReason,
    Selection,
    budget_for_top,
    content_digest,
    dedupe,
    infer_tasks,
    score_corpus,
    select,
)
from knowledgepulse.curation.percentiles import (
    SUMMARY_PERCENTILES,
    SimilarityHistogram,
    similarity_histogram,
)
from knowledgepulse.reports.rows import DEDUPE_COLUMNS, SCORE_COLUMNS, kp_columns
from knowledgepulse.reports.value import annotated_line, dumps, tidy
from knowledgepulse.runs.read import ROW_TASK
from knowledgepulse.runs.redaction import redact_items
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.redact.items import Redactor

similarity_histogram_option = click.option(
    "--similarity-histogram",
    is_flag=True,
    help="Print on stderr the distribution of each trace's cosine with its nearest other "
    "trace (percentiles and a histogram), to choose --max-similarity from your own data.",
)


@dataclass(frozen=True, slots=True)
class ScoredCorpus:
    """Every valid trace of the input with its corpus-mode breakdown and vector."""

    traces: list[TraceItem]
    breakdowns: list[ValueBreakdown]
    candidates: list[Candidate]
    vectors: Any
    sink: ProblemSink
    redactor: Redactor | None

    @property
    def has_rows(self) -> bool:
        """Whether the input was dataset rows (``--from``), to be written back as rows."""
        return bool(self.traces) and self.traces[0].row is not None

    def row(self, index: int) -> dict[str, Any]:
        """One trace as a report row: id, score, domain, and where it was read."""
        breakdown, location = self.breakdowns[index], self.traces[index].location
        return {
            "id": breakdown.trace_id,
            "score": breakdown.score,
            "domain": breakdown.domain,
            "file": location.file,
            "line": location.line,
        }


def read_corpus(
    paths: tuple[str, ...],
    outputs: tuple[Path | None, ...],
    *,
    needs_vectors: str | None,
    histogram: bool,
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
    trace_task_field: str | None = None,
    **row_columns: str | float | None,
) -> ScoredCorpus:
    """Read every trace (converted with ``--from``, redacted with ``--redact``), then score all.

    The options and ``outputs`` are checked before the first record is read; ``needs_vectors``
    names what needs embeddings, a usage error when none could be made.
    """
    options = trace_options(source, domain, confidence, row_columns)
    if source is not None:
        parquet_rows(outputs[0], sources(paths))  # Parquet needs -o: refused before reading
    for path in outputs:
        if path is not None:
            check_destination(path, what="output")
    redactor = redactor_from(redact, privacy_level, rules_file)
    embedder = build_embedder(no_embedder, model, workers=workers, device=device, paths=paths)
    scorer = TraceValueScorer(
        embedder=embedder,
        novelty_text=novelty_text,
        profiles=registry_from(profiles_file),
        batch_size=batch_size_for(batch_size, embedder),
    )
    sink = ProblemSink()
    with ReadProgress.for_sources(sources(paths)) as progress:
        read = read_traces(
            paths,
            sink,
            source=source,
            options=options,
            task_field=trace_task_field,
            progress=progress,
        )
        traces = list(read if redactor is None else redact_items(read, redactor))
    scored = score_corpus(scorer, traces)
    if needs_vectors is not None and scored.vectors is None and traces:
        raise click.UsageError(
            f"{needs_vectors} needs an embedder, and none could be loaded "
            "(install knowledgepulse[embeddings] or give --model)"
        )
    if histogram:
        similarities = [
            b.novelty.similarity
            for b in scored.breakdowns
            if b.novelty.source == "embedding" and b.novelty.similarity is not None
        ]
        say(render_similarity_histogram(similarity_histogram(similarities)))
    candidates = [
        Candidate(b.trace_id, b.score, domain=b.domain, tiebreak=content_digest(t.record.value))
        for t, b in zip(traces, scored.breakdowns, strict=True)
    ]
    return ScoredCorpus(traces, scored.breakdowns, candidates, scored.vectors, sink, redactor)


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


def _top_percent(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
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
@click.option(
    "--top",
    metavar="P%",
    callback=_top_percent,
    help="Select at most the top P% of the valid traces.",
)
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
@click.option(
    "--task-field",
    metavar="PATH",
    help="The task each trace is a run of: with --from, a dataset column; else the "
    "value at this dotted path of the trace's JSON (metadata.task_id, or any key). "
    "Default: a dataset's task column when one is found, else inferred (the same "
    "objective, or novelty vectors within --task-similarity of the task's best run).",
)
@click.option(
    "--task-similarity",
    type=click.FloatRange(-1.0, 1.0),
    default=INFERRED_TASK_SIMILARITY,
    show_default=True,
    help="Without --task-field: a trace whose cosine with a task's best run "
    "reaches S is a run of that task (1 groups only equal objectives).",
)
@click.option(
    "--per-task",
    type=click.IntRange(min=1),
    metavar="K",
    help="Keep at most the best K traces of each task (best of N).",
)
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
    top: float | None,
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
    source: str | None,
    **options: Any,
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
    if budget is not None and top is not None:
        raise click.UsageError("--budget and --top both set the budget; give one")
    if max_similarity is not None and no_embedder:
        raise click.UsageError(
            "--max-similarity compares embeddings, so it needs an embedder; drop --no-embedder"
        )
    if source is not None:  # a dataset's task column
        options["task_field"] = task_field
    corpus = read_corpus(
        paths,
        (output, report_path),
        needs_vectors=None if max_similarity is None else "--max-similarity",
        histogram=similarity_histogram,
        no_embedder=no_embedder,
        source=source,
        trace_task_field=None if source is not None else task_field,
        **options,
    )
    corpus, task_path = _with_tasks(corpus, task_field, source, task_similarity)
    if top is not None:
        budget = budget_for_top(top, len(corpus.traces))
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
    if corpus.has_rows:
        with row_output(output, sources(paths)) as rows:
            for index in selection.selected:
                traced = corpus.traces[index]
                rows.write(traced.row or traced.record, kp_columns(corpus.breakdowns[index]))
    else:
        with open_output(output) as stream:
            for index in selection.selected:
                value, score = corpus.traces[index].record.value, corpus.breakdowns[index].score
                stream.write(annotated_line(value, score) + "\n")
    if report_path is not None:
        with open_output(report_path) as stream:
            for rejection in selection.rejected:
                stream.write(dumps(tidy(_rejection_row(corpus, rejection))) + "\n")
    say(_summary(corpus, selection, budget, min_score, task_path) + summary_tail(corpus.redactor))
    return corpus.sink.exit_code


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
    corpus: ScoredCorpus,
    selection: Selection,
    budget: int | None,
    min_score: MinScore | None,
    task_field: str | None,
) -> str:
    """Counts of the selected and rejected, then ``3 of 5 tasks covered (inferred)``."""
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
    parts += [f"{reasons[reason]} {words}" for reason, words in _REASONS if reasons[reason]]
    if invalid := corpus.sink.tally.invalid:
        parts.append(f"{counted(invalid, 'invalid record')} skipped")
    candidates = corpus.candidates
    tasks = {c.task for c in candidates}
    covered = {candidates[i].task for i in selection.selected}
    how = f"by {task_field}" if task_field is not None else "inferred"
    parts.append(f"{len(covered)} of {counted(len(tasks), 'task')} covered ({how})")
    if missing := sum(c.task is None for c in candidates):
        parts[-1] += f", {counted(missing, 'trace')} without {task_field} taken as one task"
    return "; ".join(parts)


def _with_tasks(
    corpus: ScoredCorpus, task_field: str | None, source: str | None, similarity: float
) -> tuple[ScoredCorpus, str | None]:
    """Each candidate with its task, and where it was read (``None``: inferred).

    The task each item was read with (a dataset's task column, or ``--task-field``), else
    inferred from the objectives and vectors.
    """
    if source is not None:
        task_field = ROW_TASK if any(t.task is not None for t in corpus.traces) else None
    tasks: Sequence[str | None]
    if task_field is not None:
        tasks = [t.task for t in corpus.traces]
    else:
        objectives = [t.trace.task.objective for t in corpus.traces]
        tasks = infer_tasks(corpus.candidates, objectives, corpus.vectors, threshold=similarity)
    candidates = [replace(c, task=task) for c, task in zip(corpus.candidates, tasks, strict=True)]
    return replace(corpus, candidates=candidates), task_field


@click.command("dedupe")
@paths_argument
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=0.95,
    show_default=True,
    help="Two traces are near-duplicates when their cosine reaches S (see --similarity-histogram).",
)
@similarity_histogram_option
@output_option(
    "Write the groups here (JSONL, atomically) instead of stdout; dataset rows go as "
    "JSONL or, for a .parquet name, Parquet."
)
@model_options
@novelty_text_option
@profiles_file_option
@source_options(required=False)
@redact_options
def dedupe_command(
    *,
    paths: tuple[str, ...],
    threshold: float,
    similarity_histogram: bool,
    output: Path | None,
    no_embedder: bool,
    **options: Any,
) -> int:
    """Group near-duplicate traces; each group names the trace it keeps.

    One JSON line per group of two or more traces: the representative (highest score, then
    smallest id) and each member with its cosine to the representative. Dataset rows (--from)
    are written back instead, every row in input order with its kp_ columns, kp_group (its
    group's number, or null) and kp_kept (false for a duplicate that would go); --redact
    cleans them of secrets and personal data first.
    """
    if no_embedder:
        raise click.UsageError("kp dedupe compares embeddings; drop --no-embedder")
    corpus = read_corpus(
        paths,
        (output,),
        needs_vectors="kp dedupe",
        histogram=similarity_histogram,
        no_embedder=False,
        **options,
    )
    groups = (
        []
        if corpus.vectors is None
        else dedupe(corpus.candidates, corpus.vectors, threshold=threshold)
    )
    if corpus.has_rows:
        group_of = {
            index: number
            for number, group in enumerate(groups)
            for index in (group.representative, *(member for member, _ in group.members))
        }
        dropped = {index for group in groups for index, _ in group.members}
        with row_output(output, sources(paths), SCORE_COLUMNS + DEDUPE_COLUMNS) as rows:
            for index, traced in enumerate(corpus.traces):
                columns = kp_columns(corpus.breakdowns[index])
                columns["kp_group"] = group_of.get(index)
                columns["kp_kept"] = index not in dropped
                rows.write(traced.row or traced.record, columns)
    else:
        with open_output(output) as stream:
            for group in groups:
                row = {
                    "representative": corpus.row(group.representative),
                    "size": 1 + len(group.members),
                    "members": [
                        {**corpus.row(index), "similarity": similarity}
                        for index, similarity in group.members
                    ],
                }
                stream.write(dumps(tidy(row)) + "\n")
    duplicates = sum(len(g.members) for g in groups)
    count = len(corpus.traces)
    say(
        f"{counted(count, 'trace')} scored; {counted(len(groups), 'near-duplicate group')} "
        f"at cosine >= {threshold:g}; "
        f"{counted(duplicates, 'trace')} would go, "
        f"{count - duplicates} kept" + summary_tail(corpus.redactor),
    )
    return corpus.sink.exit_code
