"""How the trace commands read traces (``--from``: a framework's files) and write rows back.

Bad records are printed on stderr as ``FILE:LINE: PATH: message`` as found, and skipped. Rows go
out as the first input's form (JSON Lines or Parquet) or ``-o``'s; Parquet needs a file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse._util.atomic import atomic_binary
from knowledgepulse.cli._console import ReadProgress, open_output, say
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.records import Problem
from knowledgepulse.records.readers import STDIN
from knowledgepulse.reports.rows import SCORE_COLUMNS, RowWriter, row_format
from knowledgepulse.reports.value import RunTally
from knowledgepulse.runs import read_items
from knowledgepulse.sources import SOURCE_CHOICES
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
    """Prints each problem on stderr as it is found, counts it, and keeps it if asked."""

    def __init__(self, tally: RunTally | None = None, *, keep: bool = False) -> None:
        self.tally = tally or RunTally(DEFAULT_THRESHOLD)
        self.kept: list[Problem] = []
        self._keep = keep

    def __call__(self, problem: Problem) -> None:
        self.tally.add_problem(problem)
        if self._keep:
            self.kept.append(problem)
        say(str(problem), one_line=True)

    @property
    def exit_code(self) -> int:
        """The command's exit code: 1 when any record was rejected."""
        return EXIT_FINDINGS if self.tally.invalid else EXIT_OK


SHAPES = (
    "otlp: OTLP JSON or JSON Lines (the OTel file exporter, a collector's file exporter) or the "
    "Python SDK's console exporter output; langsmith: a LangSmith run with child_runs, a list of "
    "runs, or {post, patch} payloads; openai-agents: the Agents SDK's exported trace and span "
    "lines; smolagents: memory steps; pydantic-ai: all_messages() JSON; langfuse: a trace "
    "export ({trace, observations}) or the public API's traces or observations; phoenix: Arize "
    "Phoenix span rows (context.trace_id, attributes.* columns); jaeger: the query API's JSON "
    "({data: [{traceID, spans, processes}]}); otel-js: OTel JS spans (spanContext, HrTime "
    "times), the Vercel AI SDK's included; Tempo exports are otlp; dataset rows (JSON Lines, "
    "JSON or Parquet, one conversation a row): openai-chat (messages with tool_calls), "
    "openai-responses (items), anthropic (content blocks), sharegpt (conversations of "
    "from/value), hermes (<tool_call> tags); auto: recognised from the first record."
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
    """``--from``, ``--domain``, ``--confidence``, the row options (``--task-field`` if asked)."""
    return option_group(
        click.option(
            "--from",
            "source",
            type=click.Choice(SOURCE_CHOICES),
            default="auto" if required else None,
            show_default=required,
            help="The framework's file format to convert from. " + SHAPES,
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
    )


def trace_options(
    source: str | None,
    domain: str | None,
    confidence: float | None,
    rows: Mapping[str, Any],
) -> TraceOptions | None:
    """The options for converted traces, from the command's (``None`` without ``--from``)."""
    given_rows = {key: value for key, value in rows.items() if value is not None}
    if source is None and (domain is not None or confidence is not None or given_rows):
        raise click.UsageError(
            "--domain and --confidence (and the row options, --messages-field...) say what a "
            "framework's file or a dataset does not record; they go with --from (a "
            "ReasoningTrace file already has its domain and confidence)"
        )
    if domain is not None and not domain.strip():
        raise click.UsageError("--domain must not be empty")
    if source is None:
        return None
    from knowledgepulse.sources import RowOptions, TraceOptions  # noqa: PLC0415

    try:
        row_options = RowOptions(**given_rows)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    return TraceOptions(domain=domain, confidence=confidence, rows=row_options)


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


def parquet_rows(output: Path | None, inputs: Sequence[str]) -> bool:
    """Whether the rows go out as Parquet; a ``click.UsageError`` without ``-o``."""
    if row_format(output, inputs) != "parquet":
        return False
    if output is None:
        raise click.UsageError(
            "the rows are Parquet, which needs a file: give -o FILE.parquet (or -o FILE.jsonl "
            "for JSON Lines)"
        )
    return True


@contextmanager
def row_output(
    output: Path | None, inputs: Sequence[str], added: tuple[str, ...] = SCORE_COLUMNS
) -> Iterator[RowWriter]:
    """A writer of rows in the input's form or ``-o``'s, finished (atomically) at the end."""
    if parquet_rows(output, inputs):
        assert output is not None  # parquet_rows refuses standard output
        with atomic_binary(output) as stream, RowWriter("parquet", stream, added) as writer:
            yield writer
        return
    with open_output(output) as text, RowWriter("jsonl", text, added) as writer:
        yield writer
