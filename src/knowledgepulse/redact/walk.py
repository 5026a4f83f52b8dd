"""Redacting a whole trace: every free-text string cleaned, everything else left as it was.

Cleaned: the objective, each step's content, output summary and tool input at any depth, the
result summary, the knowledge graph's entity names and facts, and the strings of fields a
producer added to a trace, task, step or outcome (JSON-LD documents grow). Never touched: keys,
ids, enumerations and the fields that hold names, dates or provenance (``@context``, ``@type``,
``id``, ``source_skill``, the whole of ``metadata``, ``step_id``, a step's ``type`` and
``tool``, an entity's ``type``, ``valid_from``), and any value that is not a string. A string
under a key that names a secret (``password``, ``api_key``, ``authorization``...) at any depth
is hidden whole: the JSON form of a ``password=`` assignment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.redact.cleaner import candidate_rules, clean, marker
from knowledgepulse.redact.detectors import default_rules
from knowledgepulse.redact.rules import (
    DEFAULT_LEVEL,
    PRIVACY_LEVELS,
    PrivacyLevel,
    Rule,
    RuleSet,
    check_level,
)
from knowledgepulse.trace.models import ReasoningTrace

Loc = tuple[str | int, ...]

# The known fields that are not free text, by the object they are in.
# metadata is provenance: dates, enumerations, ids, where a converted trace came from (and what
# scoring reads besides the steps); it is kept whole.
_KEPT_TOP = frozenset({"@context", "@type", "id", "source_skill", "metadata"})
_KEPT_STEP = frozenset({"step_id", "type", "tool", "latency_ms"})
_KEPT_ENTITY = frozenset({"type"})
_KEPT_RELATIONSHIP = frozenset({"valid_from"})

_SECRET_KEY = regex.compile(
    r"(?:password|passwd|passphrase|pwd|secret|token|apikey|accesskey|secretkey|privatekey|"
    r"authorization|auth|credentials?|cookie|sessionid)$"
)
_NOT_ALNUM = regex.compile(r"[^a-z0-9]")

KEY_TYPE = "password"
"""The marker type of a value hidden for its key's name."""
KEY_RULE = Rule("secret-key", KEY_TYPE, True)


@cache
def names_secret(key: str) -> bool:
    """Whether a value under ``key`` is a secret, by the key's name.

    The name ends in a secret's (``db_password``, ``X-Api-Key``, ``refreshToken``), not merely
    contains one (``max_tokens``, ``author``).
    """
    return _SECRET_KEY.search(_NOT_ALNUM.sub("", key.lower())) is not None


@dataclass(frozen=True, slots=True)
class Finding:
    """What was redacted in one string of a trace: never the value, nor a hash of it.

    Attributes:
        path: The string's JSON path (``steps[3].input.headers.Authorization``).
        type: The marker's type (``api_key``, ``email``...).
        rule: The rule that found it (``github-pat``, ``email``, ``secret-key``...).
        count: How many spans of the string it replaced.
    """

    path: str
    type: str
    rule: str
    count: int


Visit = Callable[[Loc, str, bool], str]


def _walk(value: Any, loc: Loc, visit: Visit, secret: bool) -> Any:
    # The value with each string replaced by visit(); the same object when nothing changed.
    if isinstance(value, str):
        return visit(loc, value, secret)
    if isinstance(value, Mapping):
        return _walk_mapping(value, loc, visit, secret, frozenset())
    if isinstance(value, list):
        items = [_walk(item, (*loc, index), visit, secret) for index, item in enumerate(value)]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


def _walk_mapping(
    value: Mapping[str, Any], loc: Loc, visit: Visit, secret: bool, kept: frozenset[str]
) -> Any:
    changed: dict[str, Any] = {}
    for key, item in value.items():
        if key in kept:
            continue
        new = _walk(item, (*loc, key), visit, secret or names_secret(key))
        if new is not item:
            changed[key] = new
    return {**value, **changed} if changed else value


def _walk_trace(document: Mapping[str, Any], visit: Visit) -> Any:
    changed: dict[str, Any] = {}
    for key, item in document.items():
        if key in _KEPT_TOP:
            continue
        loc: Loc = (key,)
        if key == "steps" and isinstance(item, list):
            new = _walk_each(item, loc, visit, _KEPT_STEP)
        elif key == "knowledge_graph_delta" and isinstance(item, Mapping):
            new = _walk_graph(item, loc, visit)
        else:
            new = _walk(item, loc, visit, names_secret(key))
        if new is not item:
            changed[key] = new
    return {**document, **changed} if changed else document


def _walk_each(items: list[Any], loc: Loc, visit: Visit, kept: frozenset[str]) -> list[Any]:
    new = [
        _walk_mapping(item, (*loc, index), visit, False, kept)
        if isinstance(item, Mapping)
        else _walk(item, (*loc, index), visit, False)
        for index, item in enumerate(items)
    ]
    return items if all(a is b for a, b in zip(new, items, strict=True)) else new


def _walk_graph(graph: Mapping[str, Any], loc: Loc, visit: Visit) -> Any:
    changed: dict[str, Any] = {}
    for key, item in graph.items():
        if key == "entities" and isinstance(item, list):
            new = _walk_each(item, (*loc, key), visit, _KEPT_ENTITY)
        elif key == "relationships" and isinstance(item, list):
            new = _walk_each(item, (*loc, key), visit, _KEPT_RELATIONSHIP)
        else:
            new = _walk(item, (*loc, key), visit, names_secret(key))
        if new is not item:
            changed[key] = new
    return {**graph, **changed} if changed else graph


def document_level(document: Mapping[str, Any]) -> PrivacyLevel:
    """The trace's own ``metadata.privacy_level``, or the default when it has none."""
    metadata = document.get("metadata")
    level = metadata.get("privacy_level") if isinstance(metadata, Mapping) else None
    for known in PRIVACY_LEVELS:
        if level == known:
            return known
    return DEFAULT_LEVEL


def redact_document(
    document: Mapping[str, Any],
    level: PrivacyLevel | str | None = None,
    rules: RuleSet | None = None,
) -> tuple[Any, list[Finding]]:
    """A parsed trace (JSON) with its free text cleaned, and what was redacted where.

    The input is not changed; the result shares every part that did not change with it.

    Args:
        document: The trace as parsed JSON.
        level: The privacy level [default: the trace's ``metadata.privacy_level``].
        rules: The rules [default: every built-in rule].

    Raises:
        ValueError: ``level`` is not a privacy level.
    """
    chosen_level = check_level(level) if level is not None else document_level(document)
    return _redact(document, _walk_trace, chosen_level, rules)


def redact_value(
    value: Any, level: PrivacyLevel | str | None = None, rules: RuleSet | None = None
) -> tuple[Any, list[Finding]]:
    """Any parsed JSON (a dataset row) with every string value cleaned; keys are kept.

    Args:
        value: The parsed JSON.
        level: The privacy level [default: ``aggregated``].
        rules: The rules [default: every built-in rule].

    Raises:
        ValueError: ``level`` is not a privacy level.
    """

    def walk(value: Any, visit: Visit) -> Any:
        return _walk(value, (), visit, False)

    return _redact(value, walk, check_level(level or DEFAULT_LEVEL), rules)


def _redact(
    value: Any, walk: Callable[[Any, Visit], Any], level: PrivacyLevel, rules: RuleSet | None
) -> tuple[Any, list[Finding]]:
    chosen = (rules or default_rules()).for_level(level)
    texts: list[str] = []

    def collect(loc: Loc, text: str, secret: bool) -> str:
        texts.append(text)
        return text

    walk(value, collect)
    # Which rules can find anything is decided once for the whole value, then per string.
    candidates = candidate_rules(chosen, "\n".join(texts))
    findings: list[Finding] = []

    def redact(loc: Loc, text: str, secret: bool) -> str:
        if secret:
            return _hide_whole(loc, text, findings)
        cleaned, found = clean(text, candidates) if candidates else (text, Counter[Rule]())
        if found:
            path = format_path(loc)
            findings.extend(Finding(path, rule.type, rule.name, n) for rule, n in found.items())
        return cleaned

    return walk(value, redact), findings


def _hide_whole(loc: Loc, text: str, findings: list[Finding]) -> str:
    hidden = marker(KEY_TYPE)
    if not text or (text.startswith("[REDACTED:") and text.endswith("]")):
        return text  # nothing to hide, or hidden already
    findings.append(Finding(format_path(loc), KEY_TYPE, KEY_RULE.name, 1))
    return hidden


def redact_trace(
    trace: ReasoningTrace,
    level: PrivacyLevel | str | None = None,
    rules: RuleSet | None = None,
) -> tuple[ReasoningTrace, list[Finding]]:
    """A trace with its secrets (and, by level, personal identifiers) redacted.

    Args:
        trace: The trace.
        level: The privacy level [default: the trace's own ``metadata.privacy_level``].
        rules: The rules [default: every built-in rule].

    Returns:
        The redacted trace (the same object when nothing was found) and what was redacted:
        type, JSON path and count, never the value.

    Raises:
        ValueError: ``level`` is not a privacy level.
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
