"""What a redaction rule is: a detector of spans in a text, named and typed.

A rule finds the spans of a text to hide (a secret, or an identifier of a person); the cleaner
replaces each span by ``[REDACTED:<type>]``. Rules are cheap to skip: one whose ``keywords`` are
all absent from a text (lowercased), or that needs a digit in a text without one, never runs its
pattern there, which is what keeps hundreds of provider rules fast (gitleaks' own prefilter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

import regex

from knowledgepulse.trace.models import PRIVACY_LEVELS, PrivacyLevel

DEFAULT_LEVEL: PrivacyLevel = "aggregated"
"""The level a text without one is cleaned at (the reference SDK's default)."""

Span = tuple[int, int]
Accept = Callable[["regex.Match[str]", str], bool]
"""Whether a found value (the match, and the span's text) is really one; else it is kept."""
Finder = Callable[[str], Iterable[Span]]
"""A detector written in Python: the spans of a text to hide."""


@dataclass(frozen=True, eq=False)
class Rule:
    """One detector: a regular expression (or a Python function) and what its finds are.

    Attributes:
        name: The rule's id (``github-pat``, ``email``); reports name it.
        type: What the marker says: ``[REDACTED:<type>]`` (``api_key``, ``email``...).
        secret: A secret is redacted at every privacy level; an identifier is kept at
            ``private``.
        pattern: The regular expression (the ``regex`` module's syntax); ``None`` with ``finder``.
        keywords: Lowercase strings one of which a text must contain for the rule to run.
        digits: The rule runs only on a text with a digit.
        group: The capture group that is hidden; ``None``: the first group that matched, else
            the whole match (gitleaks' rule).
        accept: A check of each match (a checksum, entropy, an allowlist); a match it refuses
            is kept.
        finder: A Python detector, used instead of ``pattern``.
    """

    name: str
    type: str
    secret: bool
    pattern: str | None = None
    keywords: tuple[str, ...] = ()
    digits: bool = False
    group: int | str | None = None
    accept: Accept | None = None
    finder: Finder | None = field(default=None, repr=False)

    @cached_property
    def compiled(self) -> regex.Pattern[str]:
        """The pattern, compiled on first use (most rules never run on most inputs)."""
        assert self.pattern is not None
        return regex.compile(self.pattern)

    def spans(self, text: str) -> Iterator[Span]:
        """The spans of ``text`` this rule hides, in order."""
        if self.finder is not None:
            yield from self.finder(text)
            return
        for match in self.compiled.finditer(text):
            span = _secret_span(match, self.group)
            if span[0] == span[1]:
                continue
            if self.accept is not None and not self.accept(match, text[span[0] : span[1]]):
                continue
            yield span


def _secret_span(match: regex.Match[str], group: int | str | None) -> Span:
    if group is not None:
        return match.span(group)
    for index in range(1, (match.lastindex or 0) + 1):
        if match.group(index):
            return match.span(index)
    return match.span()


@dataclass(frozen=True)
class RuleSet:
    """Rules in the order they run: a later rule sees the markers of the earlier ones."""

    rules: tuple[Rule, ...]

    def for_level(self, level: PrivacyLevel) -> tuple[Rule, ...]:
        """The rules that run at ``level``: secrets always, identifiers unless ``private``."""
        return self._secrets if level == "private" else self.rules

    @cached_property
    def _secrets(self) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.secret)


def check_level(level: str) -> PrivacyLevel:
    """``level`` when it is a privacy level; else a ``ValueError`` naming the three."""
    if level in PRIVACY_LEVELS:
        return level
    raise ValueError(
        f"unknown privacy level {level!r}: expected one of {', '.join(PRIVACY_LEVELS)}"
    )
