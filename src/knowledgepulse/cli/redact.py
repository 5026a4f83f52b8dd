"""``kp redact``: traces cleaned of secrets and identifiers to be shared.

Each trace is cleaned by its privacy level as it is read (its dataset row too) and written back
in its own form; what was redacted is said by JSON path, never by value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowledgepulse.cli._console import output_target, say
from knowledgepulse.cli._options import command, output_option, report_option
from knowledgepulse.cli._redaction import level_option, notes_said, rules_option
from knowledgepulse.cli._traces import (
    InputPaths,
    exit_code,
    paths_argument,
    say_summary,
    shown_problems,
    source_options,
    trace_options_of,
)
from knowledgepulse.reports.terminal import ReadProgress
from knowledgepulse.runs.redaction import redact_files, redactor_for


@command("redact")
@paths_argument
@level_option
@rules_option("--rules")
@output_option(
    "Write the redacted traces here (JSONL, atomically) instead of stdout; dataset rows go "
    "as JSONL or, for a .parquet name, Parquet."
)
@report_option(
    "Write what was redacted in each trace here (JSON: id, file, line, and each JSON "
    "path's type, rule and count) instead of listing it on stderr."
)
@source_options(required=False)
def redact_command(
    *, paths: InputPaths, output: Path | None, allow_empty: bool, **options: Any
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
    written back in their own form, every string cleaned; a row that cannot be read too, with
    kp_error saying why.

    PATH is a JSON or JSON Lines file (.gz, .xz, .bz2 too), or - for standard input. A record
    that cannot be read is reported on stderr as FILE:LINE: PATH: message and the others go
    on; exit code 1 when there was any.
    """
    with ReadProgress.for_sources(paths) as progress, output_target(output) as target:
        done = redact_files(
            paths.given,
            target,
            options=trace_options_of(options),
            notes=notes_said(redactor_for(True, options.get("privacy_level"))),
            on_problem=shown_problems(),
            on_finding=say,
            progress=progress.advance,
            **options,
        )
    say_summary(done.summary)
    return exit_code(done.tally, done.traces, allow_empty=allow_empty)
