"""What a redaction rule is: a detector of the spans of a text to hide, named and typed.

A rule never runs its pattern on a text without one of its ``keywords`` (or a digit, if it
needs one): gitleaks' own prefilter, which keeps hundreds of provider rules fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import cast

import regex

from knowledgepulse._util.settings import one_of
from knowledgepulse.trace.models import PRIVACY_LEVELS, PrivacyLevel

DEFAULT_LEVEL: PrivacyLevel = "aggregated"
"""The level a text without one is cleaned at (the reference SDK's default)."""

Span = tuple[int, int]
_ESCAPED_BREAK = regex.compile(r"\\[nrt]")
# The forms of ASCII a person's text may hold: full-width ones (U+FF01-FF5E, as Chinese and
# Japanese input methods write a number and an IBAN; the ideographic space U+3000) and the Unicode
# dashes (U+2010-2015, U+2212; a word processor's non-breaking hyphen U+2011): what NFKC makes
# of the first, and phonenumbers reads as its dash. One character for one, so a span found in
# the folded text is the same span of the text (NFKC itself changes lengths: "㎏" is "kg").
_FOLD = {
    **{code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)},
    0x3000: ord(" "),
    **dict.fromkeys((*range(0x2010, 0x2016), 0x2212), ord("-")),
}


_FOLDABLE = regex.compile("[" + "".join(regex.escape(chr(code)) for code in _FOLD) + "]")
"""Any character :data:`_FOLD` maps: ``str.translate`` with a dict takes a lookup a character,
six times the search for one, and few texts that are not ASCII hold any (accents, CJK text)."""


@lru_cache(maxsize=16)  # each rule that folds asks for the same text's, one after another
def folded(text: str) -> str:
    """``text`` with full-width forms and Unicode dashes as their ASCII: the same length."""
    if text.isascii() or not _FOLDABLE.search(text):
        return text
    return text.translate(_FOLD)


Accept = Callable[["regex.Match[str]", str], bool]
"""Whether a found value (the match, and the span's text) is really one; else it is kept."""
Finder = Callable[[str], Iterable[Span]]
"""A detector written in Python: the spans of a text to hide."""


@dataclass(frozen=True, eq=False)
class Rule:
    r"""One detector: a ``regex`` pattern (or a Python ``finder``) and what its finds are.

    ``name`` is the rule's id (``github-pat``), ``type`` the marker's (``[REDACTED:api_key]``).
    A ``secret`` is redacted at every privacy level, an identifier kept at ``private``. It runs
    only on a text holding one of its lowercase ``keywords`` (if any) and, with ``digits``, a
    digit. ``group`` is the capture group hidden (``None``: the first that matched, else the
    whole match, as gitleaks); a match ``accept`` refuses (a checksum, entropy) is kept. With
    ``escapes``, a line break or tab escaped as JSON text writes it (``\n``, two characters)
    bounds what it finds, as a real one does: ``\n415-867-5309`` holds a phone number. With
    ``folds``, it reads the text :func:`folded` (a full-width plus, a non-breaking hyphen):
    personal data as people type it, where a secret's format is ASCII and a full-width one no
    secret. ``timeout_ms``: how long one text's search may take (a custom rule's, whose pattern
    may be catastrophic); past it a :class:`RuleTimeoutError` is raised. ``None``: unbounded (the
    built-in rules, written to run in linear time).
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
    escapes: bool = False
    folds: bool = False
    timeout_ms: float | None = None

    @cached_property
    def compiled(self) -> regex.Pattern[str]:
        """The pattern, compiled on first use (most rules never run on most inputs)."""
        assert self.pattern is not None
        return regex.compile(self.pattern)

    def spans(self, text: str) -> Iterator[Span]:
        """The spans of ``text`` this rule hides, in order."""
        if self.folds:
            text = folded(text)
        if self.escapes and "\\" in text:
            # Each escape as two line breaks: the same offsets, and no word glued to what follows.
            text = _ESCAPED_BREAK.sub("\n\n", text)
        if self.finder is not None:
            yield from self.finder(text)
            return
        found = list(self._matches(text))
        yield from found
        if '\\"' in text and '"' in self.compiled.pattern:
            # Quotes escaped as JSON text inside a text (a tool call's arguments, a JSON body
            # kept as a string): <add key=\"Password\" value=\"...\" /> is matched as written
            # unescaped, and its spans taken back to the text's own offsets.
            yield from self._matches_in(*_quotes_unescaped(text))
        if "%" in text:
            # A URL's query kept percent-encoded in another's (a logged redirect, a callback:
            # ?next=%2Fauth%3Ftoken%3D...%26x%3D1) is matched as its server reads it: each run
            # of the text without a space that holds an escape, decoded. Not where a match of
            # the text as written starts: that one reads its escapes as written
            # (/Users/alice%20smith/x, decoded, would end at the space).
            written = {start for start, _ in found}
            for at, view in _encoded_runs(text):
                for start, end in self._matches_in(*view):
                    if at + start not in written:
                        yield at + start, at + end

    def _matches_in(self, plain: str, starts: list[int], ends: list[int]) -> Iterator[Span]:
        # The spans of a decoded view of a text, taken back to the text's own offsets.
        yield from ((starts[start], ends[end - 1]) for start, end in self._matches(plain))

    def _matches(self, text: str) -> Iterator[Span]:
        timeout = None if self.timeout_ms is None else self.timeout_ms / 1000
        try:
            yield from self._found(self.compiled.finditer(text, timeout=timeout), text)
        except TimeoutError:
            raise RuleTimeoutError(self, len(text)) from None

    def _found(self, matches: Iterator[regex.Match[str]], text: str) -> Iterator[Span]:
        for match in matches:
            span = _secret_span(match, self.group)
            if span[0] == span[1]:
                continue
            if self.accept is not None and not self.accept(match, text[span[0] : span[1]]):
                continue
            yield span


class RuleTimeoutError(TimeoutError):
    """Raised when a rule's search of one text takes longer than its ``timeout_ms``."""

    def __init__(self, rule: Rule, chars: int) -> None:
        super().__init__(f"the rule {rule.name!r} timed out")
        self.rule = rule
        self.chars = chars

    def told(self, where: str) -> str:
        """The warning for it, ``where`` naming the text (a JSON path, ``the text``)."""
        return (
            f"redaction rule {self.rule.name!r} timed out after {self.rule.timeout_ms:g} ms on "
            f"{where} ({self.chars} characters); what it finds there is not redacted: make its "
            "pattern simpler (avoid nested repetition such as '(a+)+')"
        )


View = tuple[str, list[int], list[int]]
"""A decoded text, and where each of its characters starts and ends in the text it came from."""


def _quotes_unescaped(text: str) -> View:
    r"""``text`` with each ``\"`` as ``"``, and where each of its characters stands in ``text``."""
    pieces = text.split('\\"')
    at: list[int] = []
    position = 0
    for index, piece in enumerate(pieces):
        if index:
            at.append(position + 1)  # the quote, after its backslash
            position += 2
        at.extend(range(position, position + len(piece)))
        position += len(piece)
    return '"'.join(pieces), at, [start + 1 for start in at]


# An escape of a URL's, once or twice encoded (%3D, and %253D: a URL inside a URL's query).
_PERCENT = regex.compile(r"%(?:25)?([0-9A-Fa-f]{2})")
_ENCODED_RUN = regex.compile(r"(?<!\S)\S*%(?:25)?[0-9A-Fa-f]{2}\S*")  # a run without a space


@lru_cache(maxsize=4)
def _encoded_runs(text: str) -> tuple[tuple[int, View], ...]:
    """Each run of ``text`` holding an escape, decoded, and where it starts.

    Found once for a text, which every rule then reads.
    """
    return tuple(
        (run.start(), _percent_decoded(run.group())) for run in _ENCODED_RUN.finditer(text)
    )


def _percent_decoded(text: str) -> View:
    """``text`` with each percent escape as its character (a byte: Latin-1, as an ASCII secret)."""
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for escape in _PERCENT.finditer(text):
        pieces.append(text[position : escape.start()])
        starts.extend(range(position, escape.start()))
        pieces.append(chr(int(escape.group(1), 16)))
        starts.append(escape.start())
        ends.extend(range(position + 1, escape.start() + 1))
        ends.append(escape.end())
        position = escape.end()
    pieces.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    return "".join(pieces), starts, ends


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
    """``level`` when it is a privacy level.

    Raises:
        ScorerParameterError: anything else, naming the three (and the closest).
    """
    return cast(PrivacyLevel, one_of(level, "level", PRIVACY_LEVELS))
