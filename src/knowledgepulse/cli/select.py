"""``kp select``: the best traces under a budget, across tasks, without near-duplicates.

Selection compares every trace with every other, so the whole input is held in memory (the
parsed traces, and 1.5 KB of vector per trace with MiniLM). Traces are scored in corpus mode
(each trace's novelty against all the others), so no verdict depends on input order, and the
selection is written in the order it was picked, which does not depend on it either.
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
from knowledgepulse.cli._console import (
    ReadProgress,
    open_output,
    say,
    stderr_is_terminal,
)
from knowledgepulse.cli._options import output_option
from knowledgepulse.cli._redact import Redactor, redact_options, redacted, summary_tail
from knowledgepulse.cli._rows import parquet_rows, row_output
from knowledgepulse.cli._sources import read_traces, source_options, trace_options
from knowledgepulse.cli._tasks import (
    print_similarity_histogram,
    similarity_histogram_option,
    task_options,
    task_summary,
    with_tasks,
)
from knowledgepulse.cli._traces import (
    ProblemSink,
    batch_size_for,
    embedder_from,
    min_score_option,
    model_options,
    novelty_text_option,
    paths_argument,
    sources,
)
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.cli.profiles import profiles_file_option, registry_from
from knowledgepulse.curation import (
    Candidate,
    MinScore,
    Rejection,
    Selection,
    budget_for_top,
    content_digest,
    score_corpus,
    select,
    task_at,
)
from knowledgepulse.reports.rows import kp_columns
from knowledgepulse.reports.value import RunTally, annotated_line, dumps, tidy
from knowledgepulse.trace.load import LoadedTrace
from knowledgepulse.value.breakdown import ValueBreakdown
from knowledgepulse.value.scorer import TraceValueScorer

if TYPE_CHECKING:  # the converters bring pydantic: loaded for --from only
    from knowledgepulse.integrations import TraceOptions
    from knowledgepulse.novelty import Embedder


@dataclass(frozen=True, slots=True)
class ScoredCorpus:
    """Every valid trace of the input with its corpus-mode breakdown and vector."""

    traces: list[LoadedTrace]
    breakdowns: list[ValueBreakdown]
    candidates: list[Candidate]
    vectors: Any
    sink: ProblemSink

    @property
    def has_rows(self) -> bool:
        """Whether the input was dataset rows (``--from``), to be written back as rows."""
        return bool(self.traces) and self.traces[0].row is not None


def corpus_scorer(
    embedder: Embedder | None, novelty_text: str, profiles_file: Path | None, batch_size: int | None
) -> TraceValueScorer:
    """The scorer ``kp select`` and ``kp dedupe`` score a whole input with."""
    return TraceValueScorer(
        embedder=embedder,
        novelty_text=novelty_text,
        profiles=registry_from(profiles_file),
        batch_size=batch_size_for(batch_size, embedder),
    )


def read_and_score(
    paths: Sequence[str],
    scorer: TraceValueScorer,
    *,
    keep_problems: bool = False,
    source: str | None = None,
    options: TraceOptions | None = None,
    redactor: Redactor | None = None,
) -> ScoredCorpus:
    """Read every trace (bad records reported on stderr as they are met), then score them all.

    With ``source`` (``--from``), the files are converted as they are read (dataset rows keep
    their row, to be written back); with ``redactor`` (``--redact``), redacted as they are read.
    """
    sink = ProblemSink(RunTally(scorer.threshold), keep=keep_problems)
    with ReadProgress.for_sources(sources(paths), enabled=stderr_is_terminal()) as progress:
        read = read_traces(paths, sink, progress, source, options)
        traces = list(redacted(redactor, read))
    scored = score_corpus(scorer, traces)
    candidates = [
        Candidate(
            key=b.trace_id,
            score=b.score,
            domain=b.domain,
            tiebreak=content_digest(t.record.value),
        )
        for t, b in zip(traces, scored.breakdowns, strict=True)
    ]
    return ScoredCorpus(traces, scored.breakdowns, candidates, scored.vectors, sink)


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
@min_score_option(
    default=None,
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
    embedder = embedder_from(no_embedder, model, workers=workers, device=device, paths=paths)
    scorer = corpus_scorer(embedder, novelty_text, profiles_file, batch_size)
    corpus = read_and_score(
        paths, scorer, source=source, options=convert_options, redactor=redactor
    )
    if max_similarity is not None:
        require_vectors(corpus, "--max-similarity")
    if similarity_histogram:
        print_similarity_histogram(corpus.breakdowns)
    task_path = _task_path(corpus.traces, task_field, source)
    corpus = replace(
        corpus,
        candidates=with_tasks(
            corpus.candidates,
            corpus.traces,
            corpus.vectors,
            task_field=task_path,
            task_similarity=task_similarity,
        ),
    )
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
        + f"; {task_summary(corpus.candidates, selection, task_path)}"
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


def trace_row(corpus: ScoredCorpus, index: int) -> dict[str, Any]:
    """One trace of the corpus as a report row: id, score, domain, and where it was read."""
    breakdown = corpus.breakdowns[index]
    location = corpus.traces[index].location
    return {
        "id": breakdown.trace_id,
        "score": breakdown.score,
        "domain": breakdown.domain,
        "file": location.file,
        "line": location.line,
    }


def require_vectors(corpus: ScoredCorpus, option: str) -> None:
    """Refuse to go on when ``option`` needs embeddings and no embedder could be loaded.

    Raises:
        click.UsageError: with how to get an embedder.
    """
    if corpus.vectors is None and corpus.traces:
        raise click.UsageError(
            f"{option} needs an embedder, and none could be loaded "
            "(install knowledgepulse[embeddings] or give --model)"
        )


def _rejection_row(corpus: ScoredCorpus, rejection: Rejection) -> dict[str, Any]:
    row = trace_row(corpus, rejection.index) | {"reason": rejection.reason}
    row["task"] = corpus.candidates[rejection.index].task
    if rejection.duplicate_of is not None:
        row["duplicate_of"] = corpus.breakdowns[rejection.duplicate_of].trace_id
        row["similarity"] = rejection.similarity
    return row


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
    if reasons["near_duplicate"]:
        parts.append(f"{reasons['near_duplicate']} near-duplicates")
    if reasons["over_budget"]:
        parts.append(f"{reasons['over_budget']} over budget")
    if reasons["over_per_task"]:
        parts.append(f"{reasons['over_per_task']} over --per-task")
    if corpus.sink.tally.invalid:
        n = corpus.sink.tally.invalid
        parts.append(f"{counted(n, 'invalid record')} skipped")
    return "; ".join(parts)


_ROW_TASK = "metadata.source.task"


def _task_path(
    traces: Sequence[LoadedTrace], task_field: str | None, source: str | None
) -> str | None:
    """Where each trace's task is (``None``: inferred).

    With ``--from``, a dataset row's task column, which the converter keeps in
    ``metadata.source.task``; else ``--task-field``'s dotted path.
    """
    if source is not None:
        found = any(task_at(traced.record.value, _ROW_TASK) is not None for traced in traces)
        return _ROW_TASK if found else None
    return task_field
