"""An inspection (``kp inspect``) redacted, so that it can be pasted in a bug report.

An inspection shows a file's values as they were read: the first trace's parts and steps, the
records it was made of, the problems and warnings reading met. Each is cleaned whole here,
before a renderer cuts it to a screen's width (a token cut short is no longer found); the
field names, JSON paths, notes and counts say how the file is read and are kept.
"""

from __future__ import annotations

from dataclasses import replace

from knowledgepulse.redact.cleaner import clean_text
from knowledgepulse.redact.rules import DEFAULT_LEVEL, RuleSet, check_level
from knowledgepulse.redact.walk import redact_id, redact_value
from knowledgepulse.sources import Inspection
from knowledgepulse.trace.models import PrivacyLevel

_ID_PARTS = frozenset({"id", "tool", "task", "domain"})
"""Parts that are ids or names: kept, or hashed whole when a rule finds anything (as written)."""


def redact_inspection(
    inspection: Inspection,
    level: PrivacyLevel | str | None = None,
    rules: RuleSet | None = None,
) -> Inspection:
    """``inspection`` with every value it shows from the file redacted at ``level``.

    ``level`` defaults to the first trace's own privacy level (``private`` for a converted
    trace: secrets only), else ``aggregated``; ``private`` keeps personal identifiers, as in a
    problem's message. An id (the trace's, a tool's name, the task) is shown as written with
    ``--redact``: as it is, or its hash when a rule finds anything in it.
    """
    chosen = check_level(level or inspection.privacy_level or DEFAULT_LEVEL)

    def text(value: str) -> str:
        return clean_text(value, chosen, rules).text

    def text_or_none(value: str | None) -> str | None:
        return None if value is None else text(value)

    def ident(value: str | None) -> str | None:
        return None if value is None else redact_id(value, chosen, rules)[0]

    return replace(
        inspection,
        file=text(inspection.file),
        evidence=text_or_none(inspection.evidence),
        read_as=text_or_none(inspection.read_as),
        problems=tuple(map(text, inspection.problems)),
        warnings=tuple(map(text, inspection.warnings)),
        parts=tuple(
            replace(part, value=(ident if part.name in _ID_PARTS else text_or_none)(part.value))
            for part in inspection.parts
        ),
        steps=tuple(
            replace(step, tool=ident(step.tool), text=text(step.text)) for step in inspection.steps
        ),
        trace_id=ident(inspection.trace_id),
        source_records=tuple(
            replace(
                record,
                location=text(record.location),
                value=redact_value(record.value, chosen, rules)[0],
            )
            for record in inspection.source_records
        ),
    )
