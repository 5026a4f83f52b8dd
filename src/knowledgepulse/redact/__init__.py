"""Redaction: secrets always, personal identifiers by privacy level, before a trace is shared.

``clean_text`` cleans one text as the reference SDK's ``cleanPii`` does; ``redact_trace`` and
``redact_document`` clean every free-text string of a trace by its ``metadata.privacy_level``
and say what was redacted where (type, JSON path, count), never the value.
"""

from __future__ import annotations

from knowledgepulse.redact.cleaner import MAX_TEXT, CleanedText, clean_text
from knowledgepulse.redact.config import load_rules
from knowledgepulse.redact.detectors import default_rules
from knowledgepulse.redact.rules import Rule, RuleSet
from knowledgepulse.redact.walk import (
    Finding,
    names_secret,
    redact_document,
    redact_trace,
    redact_value,
    summarize,
)
from knowledgepulse.trace.models import PRIVACY_LEVELS, PrivacyLevel

__all__ = [
    "MAX_TEXT",
    "PRIVACY_LEVELS",
    "CleanedText",
    "Finding",
    "PrivacyLevel",
    "Rule",
    "RuleSet",
    "clean_text",
    "default_rules",
    "load_rules",
    "names_secret",
    "redact_document",
    "redact_trace",
    "redact_value",
    "summarize",
]
