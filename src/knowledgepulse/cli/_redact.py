"""``--redact``: the traces a command writes to share, cleaned of secrets and identifiers.

Traces are redacted as they are read, before they are scored: only novelty reads text, so
redaction changes a score only through novelty's text. A dataset row (``--from``) is cleaned
too: every string of it, keys kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from knowledgepulse._util.text import counted
from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.trace.load import LoadedTrace
from knowledgepulse.trace.models import PRIVACY_LEVELS, ReasoningTrace

if TYPE_CHECKING:
    from knowledgepulse.redact import Finding, RuleSet

level_option = click.option(
    "--privacy-level",
    type=click.Choice(PRIVACY_LEVELS),
    help="Redact at this privacy level instead of each trace's metadata.privacy_level: secrets "
    "are always redacted; e-mails, phone numbers, IP addresses, home paths, cards, IBANs and "
    "SSNs at aggregated and federated, not at private.",
)


def rules_option(name: str) -> Callable[[Command], Command]:
    """A file of custom redaction rules (``docs/redaction.md``)."""
    return click.option(
        name,
        "rules_file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="Custom redaction rules (YAML): a name and a regular expression, or a Python "
        "callable, for your own token formats; they run before the built-in ones.",
    )


def redact_options(command: Command) -> Command:
    """``--redact``, ``--privacy-level`` and ``--redact-rules`` for a command that shares."""
    return option_group(
        command,
        click.option(
            "--redact",
            is_flag=True,
            help="Redact what is written: secrets always, personal identifiers by each trace's "
            "privacy level (see kp redact).",
        ),
        level_option,
        rules_option("--redact-rules"),
    )


class Redactor:
    """Redacts traces as they pass, and counts what it redacted."""

    def __init__(self, level: str | None, rules_file: Path | None) -> None:
        # The rules (and regex, ahocorasick_rs) load only with --redact: 30 ms of every kp run.
        from knowledgepulse.redact import default_rules, load_rules  # noqa: PLC0415

        self.level = level
        self.rules: RuleSet = load_rules(rules_file) if rules_file else default_rules()
        self.types: Counter[str] = Counter()
        self.redacted = 0
        self.kept_private = 0

    @classmethod
    def from_options(
        cls, redact: bool, level: str | None, rules_file: Path | None
    ) -> Redactor | None:
        """The redactor ``--redact`` asks for, or ``None``.

        Raises:
            click.UsageError: ``--privacy-level`` or ``--redact-rules`` without ``--redact``.
        """
        if not redact:
            if level is not None or rules_file is not None:
                raise click.UsageError(
                    "--privacy-level and --redact-rules say how to redact; add --redact"
                )
            return None
        return cls(level, rules_file)

    def redact(self, loaded: LoadedTrace) -> tuple[LoadedTrace, list[Finding]]:
        """The trace (and its dataset row) redacted, and what was redacted in them."""
        from knowledgepulse.redact import redact_document, redact_value  # noqa: PLC0415
        from knowledgepulse.redact.walk import document_level  # noqa: PLC0415

        level = self.level or document_level(loaded.record.value)
        document, findings = redact_document(loaded.record.value, level, self.rules)
        if level == "private":
            self.kept_private += 1
        row = loaded.row
        if row is not None:
            value, row_findings = redact_value(row.value, level, self.rules)
            if row_findings:
                row = replace(row, value=value, raw=None)
                findings = findings + [
                    replace(finding, path=f"row.{finding.path}") for finding in row_findings
                ]
        if not findings:
            return loaded, findings
        self.redacted += 1
        for finding in findings:
            self.types[finding.type] += finding.count
        record = replace(loaded.record, value=document, raw=None)
        return LoadedTrace(record, ReasoningTrace.model_validate(document), row), findings

    def summary(self) -> str:
        """``redacted 3 traces: 5 email, 1 api_key``; identifiers kept in private traces too.

        Said because a converted trace is private unless ``--privacy-level`` says otherwise.
        """
        kinds = ", ".join(f"{count} {kind}" for kind, count in self.types.most_common())
        said = (
            f"redacted {counted(self.redacted, 'trace')}: {kinds}"
            if self.redacted
            else "redacted nothing"
        )
        if self.kept_private:
            said += (
                f"; personal identifiers kept in {counted(self.kept_private, 'private trace')}"
                " (--privacy-level aggregated redacts them too)"
            )
        return said


def redacted(redactor: Redactor | None, traces: Iterator[LoadedTrace]) -> Iterator[LoadedTrace]:
    """``traces`` redacted when ``--redact`` was given, else as they are."""
    return traces if redactor is None else (redactor.redact(loaded)[0] for loaded in traces)


def summary_tail(redactor: Redactor | None) -> str:
    """``; redacted ...`` for a command's summary line when ``--redact`` was given, else ``""``."""
    return "" if redactor is None else f"; {redactor.summary()}"
