"""``kp select`` and ``kp dedupe``: the options, one call to ``runs.curate``, the output, a summary.

Novelty is against every other trace of the input, so no verdict depends on its order. A
large file is held apart (about 1 KB and a vector a trace) and read again to write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import click

from knowledgepulse.cli._console import output_target, say
from knowledgepulse.cli._embedder import scorer_options
from knowledgepulse.cli._options import (
    TO_MESSAGES_HELP,
    MinScoreType,
    command,
    given,
    output_option,
    refuse_usage,
    report_option,
    similarity_histogram_option,
    task_options,
    to_option,
    unless_given,
)
from knowledgepulse.cli._redaction import redact_options
from knowledgepulse.cli._traces import (
    InputPaths,
    ProblemSink,
    paths_argument,
    run_arguments,
    say_summary,
    source_options,
)
from knowledgepulse.curation.corpus import Corpus
from knowledgepulse.curation.overlap import MIN_OVERLAP, NGRAM
from knowledgepulse.curation.percentiles import similarity_histogram
from knowledgepulse.curation.select import is_top_percent
from knowledgepulse.reports.curation import render_similarity_histogram
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.runs.contamination import Contaminated, DecontaminationResult, decontaminate
from knowledgepulse.runs.curate import (
    DEDUPE_BY_SIMILARITY,
    DEDUPE_BY_TASK,
    DEDUPE_THRESHOLD,
    RANK_BY_SCORE,
    DedupeResult,
    Rejected,
    SelectionResult,
    dedupe,
    select,
)
from knowledgepulse.runs.write import check_outputs, with_report


def _top_percent(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        percent = float(value.strip().removesuffix("%"))
    except ValueError:
        percent = float("nan")
    if not is_top_percent(percent):
        raise click.BadParameter(
            f"{value!r}: give a percentage from 1 to 100, such as 10%, not a fraction "
            "(0.1 is 0.1%); for fewer than 1% of the traces, give --budget N",
            ctx,
            param,
        )
    return percent


def _histogram(corpus: Corpus) -> None:
    say(render_similarity_histogram(similarity_histogram(corpus.nearest_similarities())))


def _write(
    result: SelectionResult | DedupeResult | DecontaminationResult,
    paths: list[str],
    output: Path | None,
    to: str | None,
    *,
    report: Path | None = None,
    rows: Iterable[Rejected | Contaminated] = (),
) -> None:
    """The result to ``output`` (or stdout), ``rows`` to the ``report``, then the summary."""
    with output_target(output) as target:
        write = partial(result.write_to, target, paths, messages=to == "messages")
        with_report(write, report, rows)
    say_summary(result.summary)


@command("select")
@paths_argument
@click.option("--budget", type=click.IntRange(min=0), help="Select at most N traces.")
@click.option(
    "--top",
    metavar="P%",
    callback=_top_percent,
    help="Select at most the top P% of the valid traces (P from 1 to 100: 10 or 10% is the top "
    "10%; a fraction such as 0.1 is refused).",
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
@task_options
@click.option(
    "--per-task",
    type=click.IntRange(min=1),
    metavar="K",
    help="Keep at most the best K traces of each task by the ranking (best of N).",
)
@click.option(
    "--rank-by",
    metavar="score|reward|FIELD",
    default=RANK_BY_SCORE,
    show_default=True,
    help="Rank first by: score (successful runs, then the trace score); reward (a dataset's "
    "success column, when it holds numbers, else a reward column); or FIELD (a numeric column "
    "of the rows, or a dotted path to a number in the trace's JSON). Ties go to success, then "
    "the trace score; a trace without the number ranks last.",
)
@click.option(
    "--min-reward",
    type=float,
    metavar="X",
    help="Reject traces whose reward (or --rank-by FIELD) is below X or missing.",
)
@similarity_histogram_option("--max-similarity")
@output_option(
    "Write the selected traces here (JSONL, atomically) instead of stdout; traces and "
    "dataset rows go as JSONL or, for a .parquet name, Parquet."
)
@to_option(("messages",), TO_MESSAGES_HELP)
@report_option("Write every rejected trace with its reason here (JSONL).")
@scorer_options
@source_options(required=False, task_field=False)
@redact_options
def select_command(
    *,
    paths: InputPaths,
    task_field: str | None,
    similarity_histogram: bool,
    output: Path | None,
    report_path: Path | None,
    to: str | None,
    allow_empty: bool,
    **options: Any,
) -> int:
    """Select the best traces: score first, across tasks, skipping near-duplicates.

    Traces are scored in corpus mode (novelty against every other trace of the input) and
    ranked by --rank-by, then successful before failed, then by score, then id. Each trace is
    a run of a task (--task-field, else inferred), and the tasks take turns: every task's best
    first, then the successful runs left before any failed one, each time from a task with
    the fewest picks so far. A trace is rejected when it is below --min-score or --min-reward,
    when its cosine with a selected trace reaches --max-similarity, when its task has
    --per-task picks, or when the budget is spent. The selected traces are written as JSON
    Lines in the order they were picked (every task's best before any task's second, so the
    first N are a selection of N), each with metadata.quality_score set. Dataset rows (--from)
    are written back as they were, with kp_ columns added; a row that cannot be read follows
    them, with kp_error.
    """
    sink = ProblemSink()
    rows = options["source"] not in (None, "auto") and to != "messages"
    run = run_arguments(
        paths, sink, options, lambda read: check_outputs(read, output, report_path, rows=rows)
    )
    with ReadProgress.for_sources(paths) as progress:
        # reread=None: a large file is held apart, and read again to write.
        result = select(
            paths.given,
            task_field=task_field,
            progress=progress.advance,
            reread=None,
            **run,
            **options,
        )
    if similarity_histogram:
        _histogram(result.corpus)
    _write(result, paths, output, to, report=report_path, rows=result.rejected)
    return sink.exit_code(len(result.corpus.items), allow_empty=allow_empty)


@command("dedupe")
@paths_argument
@click.option(
    "--by",
    type=click.Choice((DEDUPE_BY_SIMILARITY, DEDUPE_BY_TASK)),
    default=DEDUPE_BY_SIMILARITY,
    show_default=True,
    help="similarity: near-copies, by cosine (--threshold); task: the runs of one task, "
    "each task keeping its best (the task read with --task-field or a dataset's task "
    "column, else inferred as kp select infers it: see --task-similarity).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(-1.0, 1.0),
    default=DEDUPE_THRESHOLD,
    show_default=True,
    callback=unless_given,
    help="Two traces are near-duplicates when their cosine reaches S (see --similarity-histogram).",
)
@task_options
@click.option(
    "--against",
    "against",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="REF",
    help="Decontaminate instead: remove from the input the traces that copy a task of REF "
    "(an evaluation set in any form kp reads, a folder of them, or a .txt file of task texts, "
    "one a line), by n-gram overlap of the task text and, with an embedder, by cosine "
    "(--threshold). "
    "Repeatable; a REF that gives no item exits 1, as an empty input does.",
)
@click.option(
    "--against-field",
    metavar="FIELD",
    help="With --against: read each REF record's task text at FIELD (a column, or a dotted path "
    "in its JSON; a list of chat messages gives its first user message), not as a trace: for "
    "an evaluation set of prompts.",
)
@click.option(
    "--ngram",
    type=click.IntRange(min=1),
    default=NGRAM,
    show_default=True,
    help="With --against: words per n-gram (PaLM's 8; case, punctuation and numbers aside).",
)
@click.option(
    "--min-overlap",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=MIN_OVERLAP,
    show_default=True,
    help="With --against: a trace copies a REF task when its task text covers this share of "
    "the REF task's words in shared n-grams or aligned blocks (PaLM's 70%).",
)
@report_option(
    "With --against: write each removed trace here (JSONL), with the REF item it "
    "matched, the overlap and the cosine."
)
@similarity_histogram_option("--threshold")
@output_option(
    "Write the groups here (JSONL, atomically) instead of stdout; dataset rows go as "
    "JSONL or, for a .parquet name, Parquet."
)
@to_option(("messages",), "The kept traces only, each a training row: " + TO_MESSAGES_HELP)
@scorer_options
@source_options(required=False, task_field=False)
@redact_options
def dedupe_command(
    *,
    paths: InputPaths,
    task_field: str | None,
    against: tuple[Path, ...],
    report_path: Path | None,
    similarity_histogram: bool,
    output: Path | None,
    to: str | None,
    allow_empty: bool,
    **options: Any,
) -> int:
    """Group near-duplicate traces; each group names the trace it keeps.

    --by task groups the runs of each task instead (--task-field, a dataset's task column,
    else inferred as kp select infers tasks); a trace without a read task is in no group.
    Without an embedder (--no-embedder) inference groups equal objectives only.

    With --against REF, remove instead the traces whose task copies one of REF's
    (decontamination, docs/curation.md) and write the others (or their rows) as they came;
    --redact cleans them and the --report (the traces are compared first, as read).

    One JSON line per group of two or more traces: the representative (highest score, then
    smallest id) and each member with its cosine to the representative. Dataset rows (--from)
    are written back instead, every row in input order with its kp_ columns, kp_group (its
    group's number, or null) and kp_kept (false for a duplicate that would go), a row that
    cannot be read with kp_error.
    """
    refs = [str(path) for path in against]
    if against:
        by, task_similarity = options.pop("by"), options.pop("task_similarity")  # one set's
        refuse_usage(
            (by == DEDUPE_BY_TASK, "--by task is for dedupe within one set: drop --against"),
            (similarity_histogram, "--similarity-histogram is for dedupe within one set: drop it"),
            (task_similarity is not None, "--task-similarity is for dedupe --by task: drop it"),
        )
        options["task_field"] = task_field  # a row column, as before: which task is not asked
        call: Callable[..., DedupeResult | DecontaminationResult] = partial(
            decontaminate, against=refs
        )
    else:
        refuse_usage(
            (report_path is not None, "--report lists what --against removed: give --against"),
            (
                bool(extra := given("ngram", "min_overlap", "against_field")),
                f"{', '.join(extra)} only appl{'y' if extra[1:] else 'ies'} with --against REF",
            ),
        )
        del options["ngram"], options["min_overlap"], options["against_field"]  # --against's
        # reread=None: a large file is held apart, and read again to write.
        call = partial(dedupe, task_field=task_field, reread=None)
    sink = ProblemSink()
    rows = options["source"] not in (None, "auto") and to != "messages"
    run = run_arguments(  # the --against files are read too: no destination may replace one
        paths,
        sink,
        options,
        lambda read: check_outputs(read + refs, output, report_path, rows=rows),
    )
    with ReadProgress.for_sources(paths) as progress:
        result = call(paths.given, progress=progress.advance, **run, **options)
    if isinstance(result, DecontaminationResult):
        _write(result, paths, output, to, report=report_path, rows=result.removed)
        return sink.exit_code(
            len(result.items), allow_empty=allow_empty, references=result.references
        )
    if similarity_histogram:
        _histogram(result.corpus)
    _write(result, paths, output, to)
    return sink.exit_code(len(result.corpus.items), allow_empty=allow_empty)
