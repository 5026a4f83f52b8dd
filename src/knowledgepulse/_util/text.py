"""Small text helpers for messages, summaries and reports."""

from __future__ import annotations

import codecs
import difflib
import unicodedata
from collections.abc import Iterable

import regex

# Where the errors below this layer can use it too; imported from here by the rest.
from knowledgepulse._printable import printable as printable  # noqa: PLC0414 - re-exported

PATTERN_TIMEOUT_MS = 1000.0
"""How long one search of a user's regular expression may take (the ``regex`` package's CPU-time
``timeout``): a suite's content pattern by default, a custom redaction rule always. A
catastrophic pattern (``(a+)+$``) would otherwise hang a run."""

ENCODING_ERRORS = "backslashreplace"
"""What a stream or file written as text does with what UTF-8 cannot encode (a lone surrogate)."""


def counted(count: int, noun: str) -> str:
    """``1 trace``, ``2 traces``, ``3,000 traces``: a count and its noun, plural when not one."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name[2]``, ``name[3]``... when it is taken already; then taken too.

    How pytest names a parametrized test's repeats, so a test report keeps each one.
    """
    shown, n = name, 1
    while shown in taken:
        n += 1
        shown = f"{name}[{n}]"
    taken.add(shown)
    return shown


def closest(
    name: str,
    known: Iterable[str],
    *,
    ignore_case: bool = False,
    ignore_underscores: bool = False,
    max_edits: int | None = None,
) -> str | None:
    """The known name nearest to ``name``, spelt as ``known`` spells it; ``None`` if none is near.

    Near is difflib's: a similarity of 0.6 or more (``get_close_matches``), the most similar
    first. With ``max_edits``, near is within that many edits instead, and half the known name's
    length at most (so a short name is not near every short key); the fewest edits first, then
    the name first in sorted order. ``ignore_case`` and ``ignore_underscores`` compare names
    with those set aside, for names people write in several styles (``target_block_id`` and
    ``TargetBlockID`` are then ``targetBlockId``); the name answered is still spelt as known.
    """

    def folded(text: str) -> str:
        text = text.casefold() if ignore_case else text
        return text.replace("_", "") if ignore_underscores else text

    spelt: dict[str, str] = {}
    for candidate in known:
        spelt.setdefault(folded(candidate), candidate)
    wanted = folded(name)
    if max_edits is None:
        near = difflib.get_close_matches(wanted, spelt, n=1)
        return spelt[near[0]] if near else None
    found: list[tuple[int, str]] = []
    for key, candidate in spelt.items():
        bound = min(max_edits, len(key) // 2)
        # Cheap rejection first: lengths further apart than the bound need more edits.
        if abs(len(key) - len(wanted)) > bound:
            continue
        # The edits of difflib's alignment: a bound on Levenshtein's distance.
        opcodes = difflib.SequenceMatcher(None, wanted, key).get_opcodes()
        edits = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal")
        if edits <= bound:
            found.append((edits, candidate))
    return min(found)[1] if found else None


def did_you_mean(name: str, known: Iterable[str], *, ignore_case: bool = False) -> str:
    """`` Did you mean 'x'?`` for the known name :func:`closest` to ``name``, or ``""``."""
    near = closest(name, known, ignore_case=ignore_case)
    return f" Did you mean {near!r}?" if near is not None else ""


# A grapheme cluster: what a reader sees as one character (a letter and its accents, an emoji
# and its modifiers and joiners, a flag, CR LF). Cutting inside one shows a lone accent or half
# a family, or changes a flag to two letters.
_GRAPHEME = regex.compile(r"\X")
_LONGEST_CLUSTER = 32
"""Clusters longer than this (accents stacked by the dozen) may be cut inside."""


def grapheme_end(text: str, index: int) -> int:
    """The last place at or before ``index`` where ``text`` can be cut between graphemes.

    A cut there leaves whole what a reader sees as one character: ``text[:grapheme_end(text,
    n)]`` is at most ``n`` characters and never ends inside an emoji sequence or before a
    combining accent. Only the last :data:`_LONGEST_CLUSTER` characters before ``index`` are
    looked at, so a longer cluster is cut at ``index``.
    """
    if index >= len(text):
        return len(text)
    if index <= 0:
        return 0
    start = max(0, index - _LONGEST_CLUSTER)
    for found in _GRAPHEME.finditer(text, start):
        if found.end() > index:
            # The first cluster found may start mid-cluster when the search began mid-way.
            return found.start() if found.start() > start or start == 0 else index
    return index  # pragma: no cover - some cluster always holds the character at ``index``


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` of at most ``max_bytes`` UTF-8 bytes, between graphemes.

    A lone surrogate counts the 3 bytes ``surrogatepass`` writes it in, and is kept as it is.
    """
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return text
    # The incremental decoder holds back the bytes of a character the cut splits.
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    head = decoder.decode(encoded[: max(0, max_bytes)], final=False)
    return text[: grapheme_end(text, len(head))]


def comparable(text: str) -> str:
    """``text`` in the form two writings of one request share.

    Compatibility forms folded (NFKC: full-width digits are digits, a combining accent joins its
    letter), case folded, and each run of white space one space, none at the ends.
    """
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def line_ends(text: str) -> str:
    r"""``text`` with each CRLF as LF: in a page or Markdown a CR before LF only ends a line.

    A lone CR stays, to be escaped; the terminal's view keeps every CR escaped (``\x0d``): there
    a CR moves the cursor, which can hide what came before it on the line.
    """
    return text.replace("\r\n", "\n")


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the rest said as ``… (12,345 more characters)``.

    The cut falls between graphemes (:func:`grapheme_end`), so it may keep a few less.
    """
    if len(text) <= limit:
        return text
    kept = grapheme_end(text, limit)
    return f"{text[:kept]}… ({len(text) - kept:,} more characters)"
