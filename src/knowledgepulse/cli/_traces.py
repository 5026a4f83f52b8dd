"""How the trace commands read traces (``--from``: a framework's files) and write rows back.

Bad records are printed on stderr as ``FILE:LINE: PATH: message`` as found, and skipped. Rows go
out as the first input's form (JSON Lines or Parquet) or ``-o``'s; Parquet needs a file.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._console import open_output, say
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.records import Problem
from knowledgepulse.records.readers import STDIN
from knowledgepulse.reports.rows import SCORE_COLUMNS, row_format
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.reports.value import RunTally
from knowledgepulse.runs.read import read_items
from knowledgepulse.runs.write import ItemWriter, UnreadRows, WriteForm, item_writer
from knowledgepulse.sources import SOURCE_CHOICES
from knowledgepulse.sources._registry import get_source, source_names
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD

if TYPE_CHECKING:  # the converters bring pydantic: loaded for --from only
    from knowledgepulse.sources import TraceOptions

paths_argument = click.argument("paths", nargs=-1, metavar="[PATH]...")


def sources(paths: Sequence[str]) -> list[str]:
    """The inputs: the paths given, or standard input when it is piped and no path is given."""
    if paths:
        return list(paths)
    if sys.stdin.isatty():
        raise click.UsageError("give trace files (JSON or JSONL), or - to read standard input")
    return [STDIN]


class ProblemSink:
    """Prints each problem on stderr as it is found, counts it, and keeps it if asked.

    ``unread``: also given each problem, to write the rows that gave no trace back.
    """

    def __init__(
        self,
        tally: RunTally | None = None,
        *,
        keep: bool = False,
        unread: UnreadRows | None = None,
    ) -> None:
        self.tally = tally or RunTally(DEFAULT_THRESHOLD)
        self.kept: list[Problem] = []
        self._keep = keep
        self._unread = unread

    def __call__(self, problem: Problem) -> None:
        self.tally.add_problem(problem)
        if self._keep:  # its message, not its record: a report's memory stays small
            self.kept.append(dataclasses.replace(problem, record=None))
        if self._unread is not None:
            self._unread.add(problem)
        say(str(problem), one_line=True)

    def exit_code(self, traces: int, *, allow_empty: bool) -> int:
        """The command's exit code: 1 when any record was rejected, or none gave a trace.

        ``traces``: how many the command read; none is a finding unless ``allow_empty``.
        """
        if not traces and not self.tally.invalid and not allow_empty:
            say("kp: the input holds no trace; give --allow-empty when that is expected")
            return EXIT_FINDINGS
        return EXIT_FINDINGS if self.tally.invalid else EXIT_OK


def shapes_help() -> str:
    """``--from``'s help: what each registered source reads (its ``shapes``), in detection order."""
    described = (get_source(name) for name in source_names())
    listed = "; ".join(f"{s.name}: {s.shapes}" if s.shapes else s.name for s in described)
    return (
        f"The format to convert from: {listed}; auto: recognised from the first record. "
        "Dataset rows are JSON Lines, JSON or Parquet, one conversation a row."
    )


ROW_OPTIONS = (
    ("--messages-field", "The column holding each row's conversation [default: guessed]."),
    (
        "--id-field",
        "The column holding each row's id [default: id, uuid... else kp:trace:<file stem>:<row>].",
    ),
    ("--task-field", "The column naming the task a row is a run of [default: task_id... guessed]."),
    (
        "--success-field",
        "The column saying whether a run succeeded: a boolean, or a number (a reward) compared "
        "with --success-threshold [default: success, resolved, reward... guessed; else whether "
        "the conversation ends in an answer].",
    ),
    ("--domain-field", "The column giving each row's task_domain [default: domain... guessed]."),
)


def source_options(*, required: bool, task_field: bool = True) -> Callable[[Command], Command]:
    """The input's options: ``--from``, ``--domain``, ``--confidence``, the row options.

    ``--task-field`` is among them if asked; ``--allow-empty`` always.
    """
    return option_group(
        click.option(
            "--from",
            "source",
            type=click.Choice(SOURCE_CHOICES),
            default="auto" if required else None,
            show_default=required,
            help=shapes_help(),
        ),
        click.option(
            "--domain",
            help="The task_domain of every converted trace (it selects the weight "
            "profile) [default: the run's kp.task_domain metadata, else 'default'].",
        ),
        click.option(
            "--confidence",
            type=click.FloatRange(0.0, 1.0),
            help="The outcome confidence of every converted trace [default: the run's "
            "kp.confidence metadata, else 0.8 on success and 0.2 on failure].",
        ),
        *(
            click.option(name, help=text)
            for name, text in ROW_OPTIONS
            if task_field or name != "--task-field"
        ),
        click.option(
            "--success-threshold",
            type=float,
            help="A number in the success column at or above it is a success [default: 0.5].",
        ),
        click.option(
            "--allow-empty",
            is_flag=True,
            help="Exit 0 when the input holds no trace [default: exit 1, as a mistake].",
        ),
    )


def trace_options(
    domain: str | None, confidence: float | None, rows: Mapping[str, Any]
) -> TraceOptions | None:
    """The options for converted traces, from the command's (``None``: none given).

    They apply to whatever is converted, with ``--from`` or recognised by content; a
    ``ReasoningTrace`` keeps its own domain and confidence, and the reader warns that it does.
    """
    given_rows = {key: value for key, value in rows.items() if value is not None}
    if domain is None and confidence is None and not given_rows:
        return None
    from knowledgepulse.sources import RowOptions, TraceOptions  # noqa: PLC0415

    return TraceOptions(domain=domain, confidence=confidence, rows=RowOptions(**given_rows))


def read_traces(
    paths: Sequence[str],
    sink: ProblemSink,
    *,
    source: str | None,
    options: TraceOptions | None,
    task_field: str | None = None,
    progress: ReadProgress | None = None,
) -> Iterator[TraceItem]:
    """The valid traces of ``paths``, converted as they are read when ``source`` (``--from``)."""
    for item in read_items(
        sources(paths),
        source=source,
        options=options,
        task_field=task_field,
        notes=say,
        progress=None if progress is None else progress.advance,
    ):
        if isinstance(item, Problem):
            sink(item)
        else:
            yield item


def rows_form(output: Path | None, inputs: Sequence[str], other: WriteForm = "jsonl") -> WriteForm:
    """The form rows go out in: Parquet when the first input or ``-o`` is, else ``other``.

    Parquet needs a file: without ``-o`` it is a ``click.UsageError``.
    """
    if row_format(output, inputs) != "parquet":
        return other
    if output is None:
        raise click.UsageError(
            "the rows are Parquet, which needs a file: give -o FILE.parquet (or -o FILE.jsonl "
            "for JSON Lines)"
        )
    return "parquet"


@contextmanager
def item_output(
    output: Path | None,
    form: WriteForm,
    added: tuple[str, ...] = SCORE_COLUMNS,
    *,
    messages: bool = False,
    unread: UnreadRows | None = None,
) -> Iterator[ItemWriter]:
    """A writer of items in their own form (or as training rows) to ``-o`` or standard output.

    ``unread``: the rows that gave no trace, written back in their places.
    """
    if output is not None:
        with item_writer(output, form, added, messages=messages, unread=unread) as writer:
            yield writer
        return
    with (
        open_output(None) as stream,
        item_writer(stream, form, added, messages=messages, unread=unread) as w,
    ):
        yield w
