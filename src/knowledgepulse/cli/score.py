"""``kp score``, ``kp validate`` and ``kp profiles``: traces checked and scored, and the weights.

Each command parses its options, makes one run (:mod:`knowledgepulse.runs`), writes and
summarises. Scoring streams a batch at a time, so memory stays flat; ``--order time``,
``--corpus`` and a percentile ``--min-score`` read the whole input first. What a user can fix
(an output directory, a model, a ``--frozen`` cache) is checked before the first record.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from knowledgepulse.cli._console import (
    REPORT_COLUMNS,
    open_output,
    output_console,
    output_target,
    report_format,
    say,
)
from knowledgepulse.cli._embedder import profiles_file_option, scorer_options
from knowledgepulse.cli._options import (
    MinScoreType,
    command,
    format_option,
    output_option,
)
from knowledgepulse.cli._redaction import notes_said, redact_options, redactor_from
from knowledgepulse.cli._traces import (
    InputPaths,
    exit_code,
    paths_argument,
    say_summary,
    shown_problems,
    source_options,
    trace_options_of,
)
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.reports.value_formats import SCORE_FORMATS
from knowledgepulse.runs.embedder import profiles_of
from knowledgepulse.runs.problems import validate_files
from knowledgepulse.runs.score_files import score_files
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD


def _milliseconds(seconds: float | None) -> float | None:
    """``--ttl`` in milliseconds; ``inf`` (or a number that overflows there) is no duration."""
    if seconds is None:
        return None
    if not math.isfinite(seconds * 1000):
        raise click.BadParameter(f"{seconds!r}: give a finite number of seconds")
    return seconds * 1000


@command("score")
@paths_argument
@format_option(
    SCORE_FORMATS,
    "Output format [default: table on a terminal; else from the --output suffix (.json, "
    ".csv, .html), else jsonl]; html: a self-contained report page.",
)
@output_option(
    "Write here instead of stdout (atomically: the file appears when the run completes)."
)
@scorer_options
@click.option(
    "--engine",
    type=click.Choice(("local", "ray")),
    default="local",
    show_default=True,
    help="ray: embed on a Ray cluster's actors, --workers of them (needs \"knowledge"
    'pulse[ray]"; see docs/ray.md). Same scores as local.',
)
@click.option(
    "--address",
    metavar="HOST:PORT",
    help="With --engine ray: the running Ray cluster to join (or auto) [default: "
    "start a local Ray for this run].",
)
@click.option(
    "--min-score",
    type=MinScoreType(),
    help="The sharing threshold: a score, or pNN, the NNth percentile of this run's scores "
    f"(reads the whole input first).  [default: {DEFAULT_THRESHOLD}]",
)
@click.option(
    "--annotate",
    is_flag=True,
    help="Write the traces back with metadata.quality_score filled in (JSONL, or a JSON list "
    "with --format json); dataset rows (--from) go back as they were, with kp_ columns added, "
    "as JSON Lines or Parquet (the input's form, or -o's suffix): every row, one kp cannot "
    "read in its place with kp_error saying why.",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A saved vector cache: opened before scoring (made if missing) and saved after. A "
    "ring file, memory-mapped and saved atomically under a file lock (docs/cache-file.md), "
    "unless the name ends in .npz or the file is an .npz cache.",
)
@click.option(
    "--frozen",
    is_flag=True,
    help="Score against the cache without adding to it (order-independent).",
)
@click.option(
    "--cache-size",
    type=click.IntRange(min=1),
    help="How many vectors the cache holds; the oldest is evicted first [default: 1000; a "
    "ring file keeps its own, and is rewritten when given another]. Millions are fine in a "
    "ring file.",
)
@click.option(
    "--ttl",
    "ttl_ms",
    type=click.FloatRange(min=0.0, min_open=True),
    callback=lambda _, __, seconds: _milliseconds(seconds),
    help="The cache's time-to-live in seconds: older vectors no longer count [default: none].",
)
@click.option(
    "--max-windows",
    "max_windows",
    metavar="N|none",
    help="Embed at most the first N windows of 254 word pieces per trace with the MiniLM model "
    "(so it runs it); 'none' for no cap [default: 32].",
)
@click.option(
    "--order",
    type=click.Choice(["input", "time"]),
    default="input",
    show_default=True,
    help="time: score in metadata.created_at order (ties by id), whatever the file order "
    "(reads the whole input first; rows come out in that order).",
)
@click.option(
    "--corpus",
    is_flag=True,
    help="Novelty against every other trace of the input (leave-one-out): order-free, and both "
    "traces of a near-duplicate pair get a low novelty (reads the whole input first).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Explain every score in words: after the table, or in each row (explanation) of json "
    "and jsonl.",
)
@source_options(required=False)
@redact_options
def score_command(
    *,
    paths: InputPaths,
    output_format: str | None,
    output: Path | None,
    annotate: bool,
    explain: bool,
    allow_empty: bool,
    **options: Any,
) -> int:
    """Score reasoning traces 0.0-1.0 for how valuable they are to share.

    PATH is a JSON file (one trace or a list), a JSONL file (one trace a line), either of them
    compressed (.gz, .xz, .bz2), or - for standard input. Bad records are reported on stderr as
    FILE:LINE: PATH: message and skipped (--annotate writes a bad dataset row back, with
    kp_error); exit code 1 when there were any. PATH may be an agent framework's file (see
    kp convert), recognised or named by --from, converted as it is read. --redact (with
    --annotate) writes the traces with their secrets and personal data redacted.
    """
    output_format = output_format or report_format(output, ("json", "csv", "html"), "jsonl")
    redactor = redactor_from(options)
    with ReadProgress.for_sources(paths) as progress, output_target(output) as target:
        done = score_files(
            paths.given,
            target,
            output_format=output_format,
            annotate=annotate,
            explain=explain,
            redact=redactor or False,
            options=trace_options_of(options),
            notes=notes_said(redactor),
            on_problem=shown_problems(),
            progress=progress.advance,
            scored=progress.scored,
            **options,
        )
    if output_format == "table" and not annotate:
        from knowledgepulse.reports.value_table import print_scores  # noqa: PLC0415

        with output_console(output, redirected_width=REPORT_COLUMNS) as console:
            print_scores(console, done.results, done.tally, explain=explain)
    say_summary(*done.notes, done.summary)
    return exit_code(done.tally, done.tally.scored, allow_empty=allow_empty)


@command("validate")
@paths_argument
@format_option(("text", "json"), "text: problems on stderr; json: a report on stdout.", "text")
@source_options(required=False)
def validate_command(
    *, paths: InputPaths, output_format: str, allow_empty: bool, **options: Any
) -> int:
    """Check traces against the ReasoningTrace schema, without scoring.

    Every problem is reported as FILE:LINE: PATH: message; exit code 1 when there were any.
    An agent framework's file (recognised, or named by --from) is converted and checked as kp
    score reads it: the traces valid here are the ones kp score scores.
    """
    with ReadProgress.for_sources(paths) as progress:
        done = validate_files(
            paths.given,
            keep=output_format == "json",
            options=trace_options_of(options),
            notes=say,
            on_problem=shown_problems(),
            progress=progress.advance,
            validated=progress.scored,
            **options,
        )
    if output_format == "json":
        with open_output(None) as stream:
            stream.write(json.dumps(done.report, ensure_ascii=False, indent=2) + "\n")
    say_summary(done.summary)
    return exit_code(done.tally, done.valid, allow_empty=allow_empty)


@command("profiles")
@format_option(("table", "json"), "Output format.", "table")
@profiles_file_option
def profiles_command(output_format: str, profiles_file: Path | None) -> int:
    """Show the weight profiles: which domain weighs which dimension how much.

    A trace's metadata.task_domain picks the profile by exact match; any other domain uses
    'default'.
    """
    registry = profiles_of(profiles_file)
    if output_format == "json":
        data = {name: weights.to_dict() for name, weights in registry.items()}
        click.echo(json.dumps(data, indent=2))
        return 0
    from knowledgepulse.reports.value_table import profiles_table  # noqa: PLC0415

    with output_console(None) as console:
        console.print(profiles_table(registry))
    return 0
