"""Redaction as a step of a run: each item cleaned as it passes, what was found told by JSON path.

The :class:`~knowledgepulse.redact.items.Redactor` does the cleaning and counts; this step feeds
it the items of a run and says, for a report, what was redacted where (never the values).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from knowledgepulse.records import Record
from knowledgepulse.runs.write import UnreadRows
from knowledgepulse.trace import TraceItem

if TYPE_CHECKING:  # the rules, regex and ahocorasick_rs load only to redact
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.redact.walk import Finding

Found = Callable[[TraceItem, "list[Finding]"], object]
"""Told each item (as it was read) and what was redacted in it (an empty list: nothing)."""


def redacted_record(record: Record, redactor: Redactor) -> Record:
    """A row that gave no trace, cleaned as a read row is, so that writing it back leaks nothing.

    At the redactor's level, else ``private`` (a converted row's).
    """
    from knowledgepulse.redact.walk import redact_value  # noqa: PLC0415 - the rules load here

    value, findings = redact_value(record.value, redactor.level or "private", redactor.rules)
    return Record(record.location, value) if findings else record


def redactor_of(redact: bool | Redactor) -> Redactor | None:
    """A run's ``redact`` argument as a redactor: ``True`` by each trace's privacy level."""
    if redact is False:
        return None
    if redact is True:
        from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load here

        return Redactor()
    return redact


def redact_items(
    items: Iterable[TraceItem], redactor: Redactor, *, found: Found | None = None
) -> Iterator[TraceItem]:
    """Each item with its trace (and dataset row) redacted by ``redactor``, in order.

    ``redactor`` counts what it redacted (``types``, ``redacted``, ``kept_private``);
    ``found``, if given, is told each item and its findings.
    """
    for item in items:
        cleaned, findings = redactor.redact(item)
        if found is not None:
            found(item, findings)
        yield cleaned


def finding_entry(item: TraceItem, findings: Sequence[Finding]) -> dict[str, Any]:
    """One item's entry in a redaction report: its id, file, line, and each path's findings.

    The id as it was written: its hash when it held anything (a finding at ``id``).
    """
    from knowledgepulse.redact.walk import hashed_id  # noqa: PLC0415 - the rules load to redact

    hashed = any(finding.path == "id" for finding in findings)
    return {
        "id": hashed_id(item.trace.id) if hashed else item.trace.id,
        "file": item.location.file,
        "line": item.location.line,
        "redactions": [
            {"path": f.path, "type": f.type, "rule": f.rule, "count": f.count} for f in findings
        ],
    }


def redaction_report(
    redactor: Redactor, traces: int, by_trace: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """A run's redaction report: the traces, those redacted, the counts by type, the entries.

    ``by_trace``: the :func:`finding_entry` of each trace that had anything redacted.
    """
    return {
        "traces": traces,
        "redacted_traces": redactor.redacted,
        "redactions": dict(redactor.types.most_common()),
        "by_trace": list(by_trace),
    }


def unread_rows(redactor: Redactor | None = None, *, in_place: bool = True) -> UnreadRows:
    """The rows that give no trace, held to be written back, cleaned by ``redactor`` if any."""
    clean = None if redactor is None else partial(redacted_record, redactor=redactor)
    return UnreadRows(clean, in_place=in_place)


def written_items(
    items: Iterable[TraceItem], unread: UnreadRows | None, redactor: Redactor | None
) -> Iterable[TraceItem]:
    """``items`` as a run writes them back: each unread row's place held, each item redacted."""
    items = items if unread is None else unread.items(items)
    return items if redactor is None else redact_items(items, redactor)
