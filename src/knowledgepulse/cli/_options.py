"""What the commands' options are made with: option groups, shared options, usage checks."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from knowledgepulse._util.signals import Interrupted
from knowledgepulse.errors import ParameterConflictError, ScorerParameterError, Setting

Command = TypeVar("Command", bound=Callable[..., Any])


class _KpCommand(click.Command):
    """A command that shows the library's refusal of its options as a usage error, naming them."""

    def invoke(self, ctx: click.Context) -> Any:
        from knowledgepulse.cli.main import flag_of  # noqa: PLC0415 - main imports commands

        try:
            return super().invoke(ctx)
        except (ParameterConflictError, ScorerParameterError) as error:
            spelt = [(flag_of(p), str(p)) for p in error.parts if isinstance(p, Setting)]
            if isinstance(error, ScorerParameterError) and all(a == b for a, b in spelt):
                raise  # a setting no option gives (a suite scorer's): the input's, one line
            raise click.UsageError(error.message_with(flag_of), ctx) from None
        except KeyboardInterrupt:  # the options given say which files the run was to write
            raise Interrupted(ctx.params) from None


def command(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """A ``kp`` command named ``name`` (``click.command``'s decorator)."""
    return click.command(name, cls=_KpCommand)


def option_group(*options: Callable[[Any], Any]) -> Callable[[Command], Command]:
    """A decorator giving a command ``options``, which ``--help`` lists in the order given."""

    def decorate(command: Command) -> Command:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def a_file(context: click.Context, parameter: click.Parameter, given: str | None) -> Path | None:
    """The file an option names; a name ending in a slash, a folder's, is a usage error.

    ``Path("out/")`` is ``Path("out")``: without this, ``-o out/`` (no such folder yet) wrote a
    file named out where a folder was meant.
    """
    if given is None:
        return None
    if given.endswith(("/", os.sep)):
        raise click.BadParameter(
            f"{given!r} names a folder (it ends in {given[-1]}); this option takes a file, "
            f"such as {given}out.jsonl",
            context,
            parameter,
        )
    return Path(given)


def output_option(help: str) -> Callable[[Command], Command]:
    """``-o/--output PATH``: where a command writes instead of stdout (``-o -``: stdout)."""

    def output(context: click.Context, parameter: click.Parameter, given: str | None) -> Any:
        path = a_file(context, parameter, given)
        # `-o -` is standard output, as `-` is standard input, not a file named "-".
        return None if path == Path("-") else path

    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False),
        callback=output,
        help=help,
    )


def allow_empty_option(what: str) -> Callable[[Command], Command]:
    """``--allow-empty``: exit 0 when the input holds no ``what`` (else 1: most often a mistake)."""
    return click.option(
        "--allow-empty",
        is_flag=True,
        help=f"Exit 0 when the input holds no {what} [default: exit 1, as a mistake].",
    )


def report_option(help: str) -> Callable[[Command], Command]:
    """``--report FILE``: where a command writes what it did to each trace (``report_path``)."""
    refuse_stdout = not_stdout("standard output carries the command's output; give a file")

    def report(context: click.Context, parameter: click.Parameter, given: str | None) -> Any:
        return refuse_stdout(context, parameter, a_file(context, parameter, given))

    return click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False),
        callback=report,
        help=help,
    )


def not_stdout(why: str) -> Callable[[click.Context, click.Parameter, Path | None], Any]:
    """An option callback refusing ``-``, which would be a file or folder named "-", saying why."""

    def refuse(context: click.Context, parameter: click.Parameter, path: Path | None) -> Any:
        if path == Path("-"):
            raise click.BadParameter(f"- is not accepted here: {why}", context, parameter)
        return path

    return refuse


def format_option(
    choices: Sequence[str], help: str, default: str | None = None
) -> Callable[[Command], Command]:
    """``-f/--format``: the output format, one of ``choices`` (a ``default`` is shown)."""
    return _choice_option(("-f", "--format", "output_format"), choices, help, default)


def to_option(
    choices: Sequence[str], help: str, default: str | None = None
) -> Callable[[Command], Command]:
    """``--to``: the form items are written in (``messages``: training rows in chat form)."""
    return _choice_option(("--to",), choices, help, default)


def _choice_option(
    names: Sequence[str], choices: Sequence[str], help: str, default: str | None
) -> Callable[[Command], Command]:
    return click.option(
        *names,
        type=click.Choice(choices),
        default=default,
        show_default=default is not None,
        help=help,
    )


TO_MESSAGES_HELP = (
    "messages: write each trace as a training row in OpenAI chat form (messages with "
    "tool_calls and tool turns, tools as a JSON string, the kp_ columns and the id beside "
    "them), as JSON Lines or, for a .parquet -o, Parquet."
)


def given(*names: str) -> list[str]:
    """The options among ``names`` given on the command line, as ``--name``."""
    context = click.get_current_context()
    return [
        f"--{name.replace('_', '-')}"
        for name in names
        if context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]


def unless_given(context: click.Context, parameter: click.Parameter, value: Any) -> Any:
    """An option callback: ``None`` for an option left at its default, which ``--help`` shows.

    The library then applies the default itself, and can refuse a setting given where it
    does not apply.
    """
    source = context.get_parameter_source(parameter.name or "")
    return None if source is click.core.ParameterSource.DEFAULT else value


def refuse_usage(*rules: tuple[bool, str]) -> None:
    """Raise the first ``(broken, message)`` rule that is broken as a usage error (exit 2)."""
    for broken, message in rules:
        if broken:
            raise click.UsageError(message)


class MinScoreType(click.ParamType):  # type: ignore[type-arg]
    """``--min-score X|pNN``: a score in [0, 1] or a percentile of the run's scores."""

    name = "X|pNN"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        # curation (and numpy) load only when a --min-score is given.
        from knowledgepulse.curation.percentiles import MinScore, ThresholdSpecError  # noqa: PLC0415

        if isinstance(value, MinScore):
            return value
        try:
            return MinScore.parse(str(value))
        except ThresholdSpecError as error:
            self.fail(str(error), param, ctx)


def similarity_histogram_option(threshold: str) -> Callable[[Command], Command]:
    """``--similarity-histogram``: the cosines to choose the command's ``threshold`` option by."""
    return click.option(
        "--similarity-histogram",
        is_flag=True,
        help="Print on stderr the distribution of each trace's cosine with its nearest other "
        f"trace (percentiles and a histogram), to choose {threshold} from your own data.",
    )


_task_field_option = click.option(
    "--task-field",
    metavar="PATH",
    help="The task each trace is a run of: a dataset row's column, else the "
    "value at this dotted path of the trace's JSON (metadata.task_id, or any key). "
    "Default: a dataset's task column when one is found, else inferred (the same "
    "objective, or novelty vectors within --task-similarity of the task's best run).",
)


def _task_similarity_option(command: Command) -> Command:
    """``--task-similarity S``, for the commands that infer tasks (curation loads with them)."""
    from knowledgepulse.curation.select import INFERRED_TASK_SIMILARITY  # noqa: PLC0415 - numpy

    return click.option(
        "--task-similarity",
        type=click.FloatRange(-1.0, 1.0),
        default=INFERRED_TASK_SIMILARITY,
        show_default=True,
        callback=unless_given,
        help="Without --task-field: a trace whose cosine with a task's best run "
        "reaches S is a run of that task (1 groups only equal objectives); then a task "
        "whose runs all failed joins the task with a successful run that is its nearest, "
        "and whose nearest it is, when their runs' mean cosine reaches S - 0.1.",
    )(command)


task_options = option_group(_task_field_option, _task_similarity_option)
"""``--task-field`` and ``--task-similarity``: where a trace's task is read, else how inferred."""
