"""The ``kp`` command: a thin shell over the library.

A command's module is imported only when that command runs (``kp score`` loads no evaluation
code); this module turns library errors into one-line messages and exit codes (see the epilog),
naming the options where the library names its parameters (:func:`flag_of`).
"""

from __future__ import annotations

import logging
import os
import pkgutil
import sys
from collections.abc import Iterable
from typing import Any

import click

from knowledgepulse import __version__
from knowledgepulse._util.collector import fewer_young_collections
from knowledgepulse._util.signals import Interrupted, Terminated, sigterm_as_ctrl_c
from knowledgepulse._util.stdout import reopen_closed_streams, stdout_to_devnull
from knowledgepulse._util.text import did_you_mean, grapheme_end, printable
from knowledgepulse.errors import (
    NO_VALUE,
    KnowledgePulseError,
    Setting,
    SuiteError,
    os_message,
    spelling_settings,
)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_REGRESSION = 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM: a CI job cancelled, kill, timeout

TRACEBACK_VARIABLE = "KP_TRACEBACK"

# name -> (the command in this package, MODULE:NAME; one-line help for `kp --help`
# without importing it).
_COMMANDS = {
    "score": ("score:score_command", "Score reasoning traces 0.0-1.0."),
    "validate": ("score:validate_command", "Check traces, no scoring."),
    "profiles": ("score:profiles_command", "Show the weight profiles."),
    "eval": ("eval:eval_command", "Run evaluation scorers over cases."),
    "compare": ("eval:compare_command", "Compare two kp eval reports."),
    "schema": ("schema:schema_command", "Print a file format's JSON Schema."),
    "select": ("curate:select_command", "Pick the best diverse traces."),
    "dedupe": ("curate:dedupe_command", "Group near-duplicate traces."),
    "split": ("split:split_command", "Train/test sets by task, leak-proof."),
    "redact": ("redact:redact_command", "Redact secrets and personal data."),
    "convert": ("convert:convert_command", "Agent framework telemetry to traces."),
    "inspect": ("inspect:inspect_command", "Show how a file is read, field by field."),
}


SPELT_AS: dict[str | tuple[str, object], str] = {
    ("cache_dir", None): "--no-cache",
    ("embedder", None): "--no-embedder",
    ("read_only", False): "without --frozen",
    ("read_only", True): "--frozen",
    "embedder": "--embedder",
    "max_elements": "--cache-size",
    "output": "-o",
    "target": "-o",  # a result's write_to(target), which kp's commands write through
    "VectorCache.open": "--cache FILE",
}
"""How kp spells a parameter (or a parameter and value) that no option is named after, or
that it spells otherwise than by the option's long name."""


def flag_of(setting: Setting) -> str:
    """A setting a library error names, as ``kp`` spells it: ``--device cuda:3``, say.

    By :data:`SPELT_AS`, else by the option of the running command (outside one, of the first
    command that has it) whose parameter has the setting's name: a flag by its long name
    (``without`` it when false), another option by its long name and the value (quoted when it
    is empty or spaces). A parameter no option sets is spelt as Python spells it.
    """
    value = setting.value
    if value is not NO_VALUE and (exact := SPELT_AS.get((setting.name, value))):
        return exact
    option = _option_named(setting.name)
    flag = SPELT_AS.get(setting.name) or (max(option.opts, key=len) if option else None)
    if flag is None:
        return str(setting)
    if option is not None and option.is_flag:
        return flag if value in (True, NO_VALUE) else f"without {flag}"
    return flag if value is NO_VALUE else f"{flag} {value if str(value).strip() else repr(value)}"


def _option_named(name: str) -> click.Option | None:
    context = click.get_current_context(silent=True) or click.Context(cli)
    commands: Iterable[click.Command] = [context.command]
    if context.command is cli:  # outside a command: the first command that has the option
        commands = (cli.get_command(context, command) or cli for command in _COMMANDS)
    options = (parameter for command in commands for parameter in command.params)
    return next((p for p in options if isinstance(p, click.Option) and p.name == name), None)


class _LazyGroup(click.Group):
    """Imports a command's module only when that command is run or its help is shown."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `kp score ... | head` closed stdout early: not an error
            stdout_to_devnull()  # (click's main would exit 1, even outside standalone mode)
            return EXIT_OK
        except KeyboardInterrupt:  # before the command ran (importing it)
            raise Interrupted({}) from None

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:  # click guesses from self.commands: none here
            hint = "" if args[0][:1] == "-" else did_you_mean(args[0], _COMMANDS)
            raise click.UsageError(error.message + hint, ctx) from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS:
            return None
        command = pkgutil.resolve_name(f"{__package__}.{_COMMANDS[cmd_name][0]}")
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, (_, summary) in _COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="An input file given as - is standard input; a folder, the trace files in it, at any "
    "depth. Exit codes: 0 clean; 1 bad records, no "
    "trace or case (see --allow-empty) or failed cases; 2 usage or unreadable input; "
    f"3 internal error (set {TRACEBACK_VARIABLE}=1 for the traceback); 4 a regression against "
    "a baseline (kp compare, kp eval --baseline); 130 interrupted (Ctrl-C); 143 terminated "
    "(SIGTERM: kill, a cancelled CI job). A reader of stdout that "
    "leaves early (| head) ends kp with 0, or kp eval's and kp compare's verdict.",
)
@click.version_option(__version__, "-V", "--version", prog_name="kp")
@click.option("-v", "--verbose", count=True, help="Log more of kp's own (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """Judge AI agent traces and LLM workflow output, deterministically and transparently."""
    _log_to_stderr(logging.WARNING - 10 * min(verbose, 2))


def _log_to_stderr(level: int) -> None:
    """Log ``kp: ...`` lines on stderr at ``level``; others' (a task's: ``myapp: ...``) at warning.

    Only kp's logger is raised: the root's debug would show every library's (httpx, asyncio).
    A test's own logging is kept. ``main`` sets it before a command's module logs (a plugin
    that cannot load, read for ``--from``'s choices); the group then sets ``-v``'s level.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PrintableFormatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if any(isinstance(h.formatter, _PrintableFormatter) for h in logging.getLogger().handlers):
        logging.getLogger("knowledgepulse").setLevel(level)


class _PrintableFormatter(logging.Formatter):
    """Log lines with the control characters of data in them (a file name) shown escaped.

    A library error logged as an argument (novelty falling back to 0.5) names options, as one
    raised does.
    """

    def format(self, record: logging.LogRecord) -> str:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(arg, KnowledgePulseError) for arg in args):
            record = logging.makeLogRecord(record.__dict__)
            record.args = tuple(
                arg.message_with(flag_of) if isinstance(arg, KnowledgePulseError) else arg
                for arg in args
            )
        said = record.name if record.name.partition(".")[0] != "knowledgepulse" else "kp"
        return printable(f"{said}: {super().format(record)}")


def _say(message: str) -> None:
    from knowledgepulse.cli._console import say  # noqa: PLC0415 - rich loads on demand

    say(message)


def main(argv: list[str] | None = None) -> int:
    """Run ``kp`` and return its exit code (the console script exits with it)."""
    reopen_closed_streams()
    terminated = Terminated()
    try:
        _log_to_stderr(logging.WARNING)
        with sigterm_as_ctrl_c(terminated), fewer_young_collections(), spelling_settings(flag_of):
            result: Any = cli.main(args=argv, prog_name="kp", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except (Interrupted, click.Abort, KeyboardInterrupt) as stop:
        # click turns an EOFError raised anywhere into Abort too: that one is a bug, not Ctrl-C.
        if isinstance(stop.__cause__, EOFError):
            return _internal_error(stop.__cause__)
        _say(_interrupted(stop))
        return EXIT_TERMINATED if terminated.seen else EXIT_INTERRUPTED
    except click.ClickException as error:
        if isinstance(error, click.NoSuchOption) and error.option_name in ("-v", "--verbose"):
            error = click.UsageError(f"{error.message} It is kp's own: kp -v COMMAND", error.ctx)
        error.show()
        return EXIT_USAGE if isinstance(error, click.UsageError) else error.exit_code
    except SuiteError as error:  # every problem on a line of its own, then what they mean
        summary = str(error).split("\n", 1)[0]
        said = [f"kp: error: {line}" for line in (f"{summary}; no case was run", *error.also)]
        _say("\n".join([*map(str, error.problems), *said]))
        return EXIT_USAGE
    except KnowledgePulseError as error:  # with the errors found together with it
        lines = (error.message_with(flag_of), *error.also)
        _say(_secret_free("\n".join(f"kp: error: {line}" for line in lines)))
        return EXIT_USAGE
    except OSError as error:
        # The system refused something the user can fix: a full disk, a permission.
        _say(f"kp: error: {os_message(error)}")
        return EXIT_USAGE
    except Exception as error:  # the one place a bug becomes a message
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        return _internal_error(error)
    return result if isinstance(result, int) else EXIT_OK


def _interrupted(stop: BaseException) -> str:
    """Ctrl-C's line: the files given to write, left as they were (no blank line: Interrupted)."""
    given = stop.args[0] if isinstance(stop, Interrupted) else {}
    wrote = ["output", "directory", "report_path"] + ["cache_path"] * (not given.get("frozen"))
    options = [option for name in wrote if given.get(name) and (option := _option_named(name))]
    kept = " or ".join(max(option.opts, key=len) for option in options)  # kp split's -o too
    return f"kp: interrupted; nothing was written to {kept}" if kept else "kp: interrupted"


def _secret_free(text: str) -> str:
    """``text`` with its secrets redacted: an error names a file, or quotes a value it met."""
    try:  # the rules load on an error only; a bug in loading them must not hide the error
        from knowledgepulse.redact import clean_text  # noqa: PLC0415

        return clean_text(text, "private").text
    except Exception:  # said without the text, which may hold a secret
        return "(the message could not be cleaned of secrets, so it is not shown)"


def _internal_error(error: BaseException) -> int:
    text = _secret_free(str(error).strip().split("\n", 1)[0])
    if len(text) > 300:
        text = text[: grapheme_end(text, 299)] + "…"
    _say(
        f"kp: internal error: {type(error).__name__}: {text}\n"
        f"kp: this is a bug in kp, not in your input; rerun with {TRACEBACK_VARIABLE}=1 "
        "to see the traceback, and report it"
    )
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
