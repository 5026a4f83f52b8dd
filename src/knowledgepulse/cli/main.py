"""The ``kp`` command: a thin shell over the library.

Each command lives in its own module and calls the library once; this module turns library
errors into one-line messages and exit codes, in one place:

- 0: everything was valid (and, for ``kp eval``, every case passed);
- 1: the run completed but found bad records or failing cases;
- 2: usage errors, unreadable files, suite errors.
"""

from __future__ import annotations

import logging
import sys

import click

from knowledgepulse import __version__
from knowledgepulse.cli._console import stderr_console
from knowledgepulse.errors import KnowledgePulseError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="kp")
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug) on stderr.")
def cli(verbose: int) -> None:
    """Judge AI agent traces and LLM workflow output, deterministically and transparently."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="kp: %(message)s", stream=sys.stderr)


def _register_commands() -> None:
    from knowledgepulse.cli.eval import eval_command  # noqa: PLC0415 - commands attach here only
    from knowledgepulse.cli.profiles import profiles_command  # noqa: PLC0415
    from knowledgepulse.cli.schema import schema_command  # noqa: PLC0415
    from knowledgepulse.cli.score import score_command, validate_command  # noqa: PLC0415

    for command in (
        score_command,
        validate_command,
        profiles_command,
        eval_command,
        schema_command,
    ):
        cli.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run ``kp`` and return its exit code (the console script exits with it)."""
    _register_commands()
    try:
        result = cli.main(args=argv, prog_name="kp", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.Abort:
        stderr_console().print("kp: aborted")
        return EXIT_USAGE
    except click.ClickException as error:
        error.show()
        return EXIT_USAGE if isinstance(error, click.UsageError) else error.exit_code
    except KnowledgePulseError as error:
        stderr_console().print(f"kp: error: {error}", markup=False, highlight=False)
        return EXIT_USAGE
    except BrokenPipeError:
        # `kp score ... | head` closes our stdout early; that is not an error.
        sys.stderr.close()
        return EXIT_OK
    return result if isinstance(result, int) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
