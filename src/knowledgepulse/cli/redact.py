"""``kp redact``, and ``--redact``: traces cleaned of secrets and identifiers to be shared.

Each trace is cleaned by its privacy level as it is read, before scoring (only novelty reads
text), its dataset row too; what was redacted is said by JSON path, never by value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.cli._console import ReadProgress, open_output, say
from knowledgepulse.cli._options import Command, option_group, output_option
from knowledgepulse.cli._traces import (
    ProblemSink,
    parquet_rows,
    paths_argument,
    read_traces,
    row_output,
    source_options,
    sources,
    trace_options,
)
from knowledgepulse.reports.value import dumps
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.trace.models import PRIVACY_LEVELS

if TYPE_CHECKING:  # the rules, regex and ahocorasick_rs load only to redact
    from knowledgepulse.redact.items import Redactor

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


def redactor_from(redact: bool, level: str | None, rules_file: Path | None) -> Redactor | None:
    """The redactor ``--redact`` asks for, or ``None`` (a usage error for its options alone)."""
    if not redact:
        if level is not None or rules_file is not None:
            raise click.UsageError(
                "--privacy-level and --redact-rules say how to redact; add --redact"
            )
        return None
    # The rules (and regex, ahocorasick_rs) load only with --redact: 30 ms of every kp run.
    from knowledgepulse.redact.items import Redactor  # noqa: PLC0415

    return Redactor(level, rules_file=rules_file)


def redaction_summary(redactor: Redactor) -> str:
    """``redacted 3 traces: 5 email, 1 api_key``, and any private traces' kept identifiers.

    Said because a converted trace is private unless ``--privacy-level`` says otherwise.
    """
    kinds = ", ".join(f"{count} {kind}" for kind, count in redactor.types.most_common())
    said = (
        f"redacted {counted(redactor.redacted, 'trace')}: {kinds}"
        if redactor.redacted
        else "redacted nothing"
    )
    if redactor.kept_private:
        said += (
            f"; personal identifiers kept in {counted(redactor.kept_private, 'private trace')}"
            " (--privacy-level aggregated redacts them too)"
        )
    return said


def redacted(redactor: Redactor | None, traces: Iterator[TraceItem]) -> Iterator[TraceItem]:
    """``traces`` redacted when ``--redact`` was given, else as they are."""
    return traces if redactor is None else (redactor.redact(loaded)[0] for loaded in traces)


def summary_tail(redactor: Redactor | None) -> str:
    """``; redacted ...`` for a command's summary line when ``--redact`` was given, else ``""``."""
    return "" if redactor is None else f"; {redaction_summary(redactor)}"


@click.command("redact")
@paths_argument
@level_option
@rules_option("--rules")
@output_option(
    "Write the redacted traces here (JSONL, atomically) instead of stdout; dataset rows go "
    "as JSONL or, for a .parquet name, Parquet."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write what was redacted in each trace here (JSON: id, file, line, and each JSON "
    "path's type, rule and count) instead of listing it on stderr.",
)
@source_options(required=False)
def redact_command(
    *,
    paths: tuple[str, ...],
    privacy_level: str | None,
    rules_file: Path | None,
    output: Path | None,
    report_path: Path | None,
    source: str | None,
    domain: str | None,
    confidence: float | None,
    **row_columns: str | float | None,
) -> int:
    """Redact secrets and personal data from traces, so that they are safe to share.

    Every free-text string of a trace (objective, step content, tool input at any depth,
    observations, result summary) is cleaned; keys, ids, enumerations and non-strings are
    never changed, and no trace is dropped. Secrets (API keys and tokens of some 200
    providers, private keys, JWTs, connection strings, passwords, credentials in URLs, values
    under keys such as password or api_key) are always replaced by [REDACTED:<type>]; e-mails,
    phone numbers, IP addresses, home-directory paths, card numbers, IBANs and US SSNs too,
    unless the trace's privacy level is private (a trace converted with --from is private:
    give --privacy-level aggregated to remove identifiers too). Dataset rows (--from) are
    written back in their own form, every string cleaned.

    PATH is a JSON or JSON Lines file (.gz too), or - for standard input. A record that cannot
    be read is reported on stderr as FILE:LINE: PATH: message and the others go on; exit code
    1 when there was any.
    """
    options = trace_options(source, domain, confidence, row_columns)
    inputs = sources(paths)
    if source is not None:
        parquet_rows(output, inputs)  # Parquet needs -o: refused before reading
    for path in (output, report_path):
        if path is not None:
            check_destination(path, what="output")
    from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load only here

    redactor = Redactor(privacy_level, rules_file=rules_file)
    sink = ProblemSink()
    reported: list[dict[str, Any]] = []
    written = 0
    with ReadProgress.for_sources(inputs) as progress:
        traces = read_traces(inputs, sink, source=source, options=options, progress=progress)
        first = next(traces, None)
        traces = itertools.chain([] if first is None else [first], traces)
        redacted = _redacted(traces, redactor, reported if report_path else None)
        if first is not None and first.row is not None:
            with row_output(output, inputs, added=()) as rows:
                for loaded in redacted:
                    rows.write(loaded.row or loaded.record, {})
                    written += 1
        else:
            with open_output(output) as stream:
                for loaded in redacted:
                    stream.write(dumps(loaded.record.value) + "\n")
                    written += 1
    if report_path is not None:
        report = {
            "traces": written,
            "redacted_traces": redactor.redacted,
            "redactions": dict(redactor.types.most_common()),
            "by_trace": reported,
        }
        with open_output(report_path) as stream:
            stream.write(dumps(report) + "\n")
    message = f"read {counted(written, 'trace')}; {redaction_summary(redactor)}"
    if sink.tally.invalid:
        message += f"; {counted(sink.tally.invalid, 'record')} could not be read"
    say(message)
    return sink.exit_code


def _redacted(
    traces: Iterator[TraceItem], redactor: Redactor, reported: list[dict[str, Any]] | None
) -> Iterator[TraceItem]:
    """Each trace redacted; what was redacted in it goes to ``reported``, else to stderr."""
    for loaded in traces:
        cleaned, findings = redactor.redact(loaded)
        if findings and reported is not None:
            reported.append(
                {
                    "id": loaded.trace.id,
                    "file": loaded.location.file,
                    "line": loaded.location.line,
                    "redactions": [
                        {"path": f.path, "type": f.type, "rule": f.rule, "count": f.count}
                        for f in findings
                    ],
                }
            )
        else:
            for finding in findings:
                say(
                    f"{loaded.location}: {finding.path}: redacted {finding.count} "
                    f"{finding.type} ({finding.rule})"
                )
        yield cleaned
