"""Redaction: secrets always, personal identifiers by privacy level, before a trace is shared.

``clean_text`` cleans one text as the reference SDK's ``cleanPii`` does; ``redact_trace`` and
``redact_document`` clean every free-text string of a trace by its ``metadata.privacy_level``
and say what was redacted where (type, JSON path, count), never the value. ``load_rules`` reads
a file of custom rules. The rules themselves are in ``rules`` and ``detectors``; a run's
redaction of its items is ``items.Redactor``.
"""

from __future__ import annotations

from knowledgepulse.redact.cleaner import clean_text
from knowledgepulse.redact.config import load_rules
from knowledgepulse.redact.walk import Finding, redact_document, redact_trace

__all__ = ["Finding", "clean_text", "load_rules", "redact_document", "redact_trace"]
