"""Redacting a whole trace: every free-text string cleaned, everything else left as it was.

Keys, ids, enumerations, names, dates and provenance (the whole of ``metadata``) are never
touched; a string under a key that names a secret is hidden whole (``docs/redaction.md``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import regex

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.redact.cleaner import candidate_rules, clean, marker
from knowledgepulse.redact.detectors import default_rules
from knowledgepulse.redact.rules import DEFAULT_LEVEL, Rule, RuleSet, check_level
from knowledgepulse.trace.models import PRIVACY_LEVELS, PrivacyLevel, ReasoningTrace

Loc = tuple[str | int, ...]

# The known fields that are not free text, by the object they are in; metadata is provenance
# (dates, enumerations, ids, where a converted trace came from), kept whole.
_KEPT_TOP = frozenset({"@context", "@type", "id", "source_skill", "metadata"})
_KEPT_STEP = frozenset({"step_id", "type", "tool", "latency_ms"})
_KEPT_ENTITY = frozenset({"type"})
_KEPT_RELATIONSHIP = frozenset({"valid_from"})

_SECRET_KEY = regex.compile(
    r"(?:password|passwd|passphrase|pwd|secret|token|apikey|accesskey|secretkey|privatekey|"
    r"authorization|auth|credentials?|cookie|sessionid)$"
)
_NOT_ALNUM = regex.compile(r"[^a-z0-9]")

_KEY_RULE = Rule("secret-key", "password", True)  # what hides a value for its key's name


@cache
def names_secret(key: str) -> bool:
    """Whether ``key`` names a secret: ends in one (``X-Api-Key``), not holds one (``author``)."""
    return _SECRET_KEY.search(_NOT_ALNUM.sub("", key.lower())) is not None


@dataclass(frozen=True, slots=True)
class Finding:
    """What was redacted in one string of a trace: where, what, by which rule, never the value.

    ``path``: JSON path; ``type``: the marker's (``api_key``); ``count``: the spans replaced.
    """

    path: str
    type: str
    rule: str
    count: int


Visit = Callable[[Loc, str, bool], str]
Shape = dict[str, "frozenset[str] | Shape"]
"""The fields of a known object that hold a list of objects (their kept fields) or an object."""

_TRACE_SHAPE: Shape = {
    "steps": _KEPT_STEP,
    "knowledge_graph_delta": {"entities": _KEPT_ENTITY, "relationships": _KEPT_RELATIONSHIP},
}


def _walk(
    value: Any,
    loc: Loc,
    visit: Visit,
    secret: bool,
    *,
    kept: frozenset[str] = frozenset(),
    shape: Shape | None = None,
) -> Any:
    # The value with each string replaced by visit(); the same object when nothing changed. A
    # list of known objects passes ``kept`` to its objects, not to a list nested in it.
    if isinstance(value, str):
        return visit(loc, value, secret)
    if isinstance(value, list):
        new = [
            _walk(item, (*loc, at), visit, secret, kept=frozenset() if type(item) is list else kept)
            for at, item in enumerate(value)
        ]
        return value if all(a is b for a, b in zip(new, value, strict=True)) else new
    if not isinstance(value, Mapping):
        return value
    changed: dict[str, Any] = {}
    for key, item in value.items():
        if key in kept:
            continue
        inner = shape.get(key) if shape else None
        if isinstance(inner, frozenset) and isinstance(item, list):
            new = _walk(item, (*loc, key), visit, False, kept=inner)
        elif isinstance(inner, dict) and isinstance(item, Mapping):
            new = _walk(item, (*loc, key), visit, secret, shape=inner)
        else:
            new = _walk(item, (*loc, key), visit, secret or names_secret(key))
        if new is not item:
            changed[key] = new
    return {**value, **changed} if changed else value


def _walk_trace(document: Mapping[str, Any], visit: Visit) -> Any:
    return _walk(document, (), visit, False, kept=_KEPT_TOP, shape=_TRACE_SHAPE)


def document_level(document: Mapping[str, Any]) -> PrivacyLevel:
    """The trace's own ``metadata.privacy_level``, or the default when it has none."""
    metadata = document.get("metadata")
    level = metadata.get("privacy_level") if isinstance(metadata, Mapping) else None
    return cast(PrivacyLevel, level) if level in PRIVACY_LEVELS else DEFAULT_LEVEL


def redact_document(
    document: Mapping[str, Any],
    level: PrivacyLevel | str | None = None,
    rules: RuleSet | None = None,
) -> tuple[Any, list[Finding]]:
    """A parsed trace (JSON) with its free text cleaned, and what was redacted where.

    As :func:`redact_trace`; the input is not changed, the result shares its unchanged parts.
    """
    chosen_level = check_level(level) if level is not None else document_level(document)
    return _redact(lambda visit: _walk_trace(document, visit), chosen_level, rules)


def redact_value(
    value: Any, level: PrivacyLevel | str | None = None, rules: RuleSet | None = None
) -> tuple[Any, list[Finding]]:
    """Any parsed JSON (a dataset row) with every string value cleaned; keys are kept.

    ``level`` defaults to ``aggregated``; a ``ValueError`` if it is not a privacy level.
    """
    level = check_level(level or DEFAULT_LEVEL)
    return _redact(lambda visit: _walk(value, (), visit, False), level, rules)


def _redact(
    walk: Callable[[Visit], Any], level: PrivacyLevel, rules: RuleSet | None
) -> tuple[Any, list[Finding]]:
    texts: list[str] = []

    def collect(loc: Loc, text: str, secret: bool) -> str:
        texts.append(text)
        return text

    walk(collect)
    # Which rules can find anything is decided once for the whole value, then per string.
    candidates = candidate_rules((rules or default_rules()).for_level(level), "\n".join(texts))
    findings: list[Finding] = []

    def redact(loc: Loc, text: str, secret: bool) -> str:
        if secret:
            if not text or (text.startswith("[REDACTED:") and text.endswith("]")):
                return text  # nothing to hide, or hidden already
            findings.append(Finding(format_path(loc), _KEY_RULE.type, _KEY_RULE.name, 1))
            return marker(_KEY_RULE.type)
        cleaned, found = clean(text, candidates) if candidates else (text, Counter[Rule]())
        if found:
            path = format_path(loc)
            findings.extend(Finding(path, rule.type, rule.name, n) for rule, n in found.items())
        return cleaned

    return walk(redact), findings


def redact_trace(
    trace: ReasoningTrace,
    level: PrivacyLevel | str | None = None,
    rules: RuleSet | None = None,
) -> tuple[ReasoningTrace, list[Finding]]:
    """A trace with its secrets (and, by level, personal identifiers) redacted, and the findings.

    ``level`` defaults to the trace's own ``metadata.privacy_level`` (a ``ValueError`` if it is
    not a privacy level), ``rules`` to every built-in rule. Nothing found: the same trace.
    """
    document = trace.model_dump(mode="json", by_alias=True, exclude_unset=True)
    redacted, findings = redact_document(document, level, rules)
    if not findings:
        return trace, findings
    return ReasoningTrace.model_validate(redacted), findings


def summarize(findings: Sequence[Finding]) -> dict[str, int]:
    """How many spans of each type ``findings`` redacted, most first."""
    counts: Counter[str] = Counter()
    for finding in findings:
        counts[finding.type] += finding.count
    return dict(counts.most_common())
