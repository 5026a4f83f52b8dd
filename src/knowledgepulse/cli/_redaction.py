"""``--redact`` and its options, for a command that writes traces to be shared: the redactor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse.cli._console import say
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.runs.redaction import messages_level, redactor_for
from knowledgepulse.trace.models import PRIVACY_LEVELS

if TYPE_CHECKING:
    from knowledgepulse.redact.items import Redactor

level_option = click.option(
    "--privacy-level",
    type=click.Choice(PRIVACY_LEVELS),
    help="Redact at this privacy level instead of each trace's metadata.privacy_level, which "
    "then says it: secrets are always redacted; e-mails, phone numbers, IP addresses, home "
    "paths, cards, IBANs and SSNs at aggregated and federated, not at private.",
)


def rules_option(name: str) -> Callable[[Command], Command]:
    """A file of custom redaction rules (``docs/redaction.md``)."""
    return click.option(
        name,
        "rules_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Custom redaction rules (YAML): a name and a regular expression, or a Python "
        "callable, for your own token formats; they run before the built-in ones.",
    )


redact_options = option_group(
    click.option(
        "--redact",
        is_flag=True,
        help="Redact what is written: secrets always, personal identifiers by each trace's "
        "privacy level (see kp redact).",
    ),
    level_option,
    rules_option("--redact-rules"),
)
"""``--redact``, ``--privacy-level`` and ``--redact-rules``, for a command that shares."""

REDACT_OPTIONS = ("redact", "privacy_level", "rules_file")


def redactor_from(options: dict[str, Any]) -> Redactor | None:
    """The redactor ``--redact`` asks for, or ``None``, its options taken out of ``options``."""
    return redactor_for(*(options.pop(name) for name in REDACT_OPTIONS))


def notes_said(redactor: Redactor | None) -> Callable[[str], None]:
    """How a run tells a file's notes (``FILE: read as ...``): on stderr, cleaned as its messages.

    A note can quote the file's values (tau2's domain and models), so a run that redacts cleans
    it at the level of its other messages (``messages_level``: personal identifiers too, unless
    ``--privacy-level private``). Only when the run redacts, which loads the rules anyway: a run
    that does not keeps the name as typed rather than load them for it.
    """
    if redactor is None:
        return say
    from knowledgepulse.redact import clean_text  # noqa: PLC0415 - the run loads the rules

    level = messages_level(redactor)
    return lambda note: say(clean_text(note, level).text)
