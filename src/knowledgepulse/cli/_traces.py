"""The trace commands' inputs: the paths, the input options (``--from``...), the problems.

Bad records are printed on stderr as ``FILE:LINE: PATH: message`` as found, and skipped; the
exit code says whether there were any.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import click

from knowledgepulse._util.atomic import check_stdout
from knowledgepulse.cli._console import say
from knowledgepulse.cli._embedder import scorer_from
from knowledgepulse.cli._options import Command, allow_empty_option, option_group
from knowledgepulse.cli._redaction import notes_said, redactor_from
from knowledgepulse.cli.main import EXIT_FINDINGS, EXIT_OK
from knowledgepulse.records.readers import STDIN, input_files
from knowledgepulse.reports.value import RunTally
from knowledgepulse.runs import problems
from knowledgepulse.runs.read import TraceSettings, trace_options
from knowledgepulse.sources import SOURCE_CHOICES, TraceOptions
from knowledgepulse.sources._registry import get_source, source_names


class InputPaths(list[str]):
    """The files to read: those given and those in the folders given (``[-]``: standard input).

    ``given``: the paths as given, for the library call that reads them, which tells a file
    found in a folder from one the user named (what no source recognises in it is not theirs).
    """

    def __init__(self, files: Sequence[str], given: Sequence[str]) -> None:
        super().__init__(files)
        self.given = list(given)


def _sources(context: click.Context, parameter: click.Parameter, paths: Sequence[str]) -> Any:
    """The inputs: the files given and those in the folders given, or piped standard input."""
    if not paths and sys.stdin.isatty():
        raise click.UsageError(
            "give trace files (JSON or JSONL) or folders of them, or - to read standard input"
        )
    files = [str(file) for file in input_files(paths)]
    check_stdout(sys.stdout, files)
    return InputPaths(files, paths) if files else InputPaths([STDIN], [STDIN])


paths_argument = click.argument("paths", nargs=-1, metavar="[PATH]...", callback=_sources)
"""``[PATH]...``: the inputs, an :class:`InputPaths` (``[-]``, standard input, when none is
given)."""


class ProblemSink(problems.ProblemSink):
    """The run's problem sink, printing each problem on stderr; and the command's exit code."""

    def __init__(self, tally: RunTally | None = None, **settings: Any) -> None:
        super().__init__(tally, show=shown_problems(), **settings)

    def exit_code(self, traces: int, *, allow_empty: bool, references: int | None = None) -> int:
        """The command's exit code (:func:`exit_code`).

        ``references``: the items ``--against`` read; none is a finding, as an empty input is.
        """
        if references == 0 and not allow_empty:
            say(
                "kp: --against gave no reference item, so no trace was compared with any; "
                "give --allow-empty when that is expected"
            )
            return EXIT_FINDINGS
        return exit_code(self.tally, traces, allow_empty=allow_empty)


def shown_problems() -> problems.ProblemDigest:
    """The command's one digest of problems on stderr, its repeats told as the command ends."""
    context = click.get_current_context()
    if (digest := context.meta.get("kp.problems")) is None:
        digest = context.meta["kp.problems"] = problems.ProblemDigest(partial(say, one_line=True))
        context.call_on_close(digest.close)
    return digest


def say_summary(*lines: str) -> None:
    """Say a run's last lines, after the count of the problems its digest did not show."""
    shown_problems().close()
    for line in lines:
        say(line)


def exit_code(tally: RunTally, traces: int, *, allow_empty: bool) -> int:
    """A command's exit code: 1 when any record was rejected, or none gave a trace.

    ``traces``: how many the command read; none is a finding unless ``allow_empty``.
    """
    if not traces and not tally.invalid and not allow_empty:
        say("kp: the input holds no trace; give --allow-empty when that is expected")
        return EXIT_FINDINGS
    return EXIT_FINDINGS if tally.invalid else EXIT_OK


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
        allow_empty_option("trace"),
    )


TRACE_OPTIONS = ("task_field", *TraceSettings.__optional_keys__)
"""The options of :func:`source_options` that say how traces are converted: the Python calls'
keywords (:class:`~knowledgepulse.runs.read.TraceSettings`, and ``task_field``)."""


def trace_options_of(options: dict[str, Any]) -> TraceOptions | None:
    """The converted traces' options (``--domain``...), taken out of a command's ``options``."""
    return trace_options(**{name: options.pop(name) for name in TRACE_OPTIONS if name in options})


def run_arguments(
    paths: list[str],
    sink: ProblemSink,
    options: dict[str, Any],
    check_outputs: Callable[[list[str]], object],
) -> dict[str, Any]:
    """A curation run's keyword arguments (``scorer``, ``redact``...), taken out of ``options``.

    Every option is checked before a record is read: the input's, the destinations (by
    ``check_outputs``, given every file the run reads: none may be replaced), the redaction
    rules, then the model, which takes longest to load.
    """
    reading = trace_options_of(options)
    read = [str(options[key]) for key in ("profiles_file", "model_path") if options.get(key)]
    check_outputs([*paths, *read])
    redactor = redactor_from(options)
    return {
        "redact": redactor or False,
        "scorer": scorer_from(paths, options),
        "source": options.pop("source"),
        "options": reading,
        "notes": notes_said(redactor),
        "on_problem": sink,
    }
