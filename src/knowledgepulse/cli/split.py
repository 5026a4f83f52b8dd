"""``kp split``: train, test (and validation) sets by group, no group on two sides."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click

from knowledgepulse.cli._embedder import model_options
from knowledgepulse.cli._options import command, not_stdout, task_options
from knowledgepulse.cli._redaction import redact_options
from knowledgepulse.cli._traces import (
    InputPaths,
    ProblemSink,
    paths_argument,
    run_arguments,
    say_summary,
    source_options,
)
from knowledgepulse.curation.splits import BY_TASK
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.runs.splits import check_split_directory, split, write_split

_share = click.FloatRange(0.0, 1.0, min_open=True, max_open=True)


@command("split")
@paths_argument
@click.option(
    "--by",
    metavar="KEY",
    default=BY_TASK,
    show_default=True,
    help="The group no two sets share: task (the rows' task column or --task-field, else "
    "inferred as kp select infers it: see --task-similarity), domain, or any column of the "
    "rows or dotted path of the trace's JSON (metadata.session_id). A trace without it is a "
    "group of its own (by task: the group of its objective).",
)
@click.option("--test", "test", type=_share, required=True, metavar="F", help="The test share.")
@click.option(
    "--validation",
    type=_share,
    metavar="F",
    help="The validation share [default: no validation set].",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="The same seed gives the same split."
)
@click.option(
    "--stratify",
    metavar="KEY",
    help="Split each value of KEY apart, in the same shares (domain, or a key as --by).",
)
@click.option(
    "-o",
    "--output",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    callback=not_stdout("the sets are files in a directory; give the directory's path"),
    help="The directory of train, test (and validation) .jsonl, or .parquet for Parquet input; "
    "rows that give no trace go to unread, with kp_error; an earlier split's sets there "
    "are replaced.",
)
@task_options
@model_options
@source_options(required=False, task_field=False)
@redact_options
def split_command(
    *,
    paths: InputPaths,
    validation: float | None,
    task_field: str | None,
    directory: Path,
    allow_empty: bool,
    **options: Any,
) -> int:
    """Split traces into train and test sets (and validation) by group, leak-proof.

    Every group (a task by default) goes whole to one set, so no set holds a run of another's
    task; the split is checked after and the summary says so. Groups are shuffled by --seed
    and each goes to the set furthest below its share, so the sets come within a group of
    their shares and the same seed gives the same split. Each set is written as DIR/train,
    DIR/test (and DIR/validation) in the input's form: dataset rows as they were (JSON Lines,
    or Parquet), traces as JSON Lines, or a Parquet table of traces as one; --redact cleans
    them of secrets and personal data (the groups are read first: the same split).
    """
    sink = ProblemSink()
    run = run_arguments(paths, sink, options, partial(check_split_directory, directory))
    with ReadProgress.for_sources(paths) as progress:
        result = split(
            paths.given,
            validation=validation or 0.0,
            task_field=task_field,
            progress=progress.advance,
            **run,
            **options,
        )
    write_split(result, directory)
    say_summary(result.summary)
    return sink.exit_code(len(result.items), allow_empty=allow_empty)
