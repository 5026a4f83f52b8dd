"""Decontamination by n-gram overlap: which reference (evaluation) item a text contains.

A text is cut into words (case folded, punctuation dropped, every run of digits read as ``0``,
so a copy with other numbers still matches) and the words into n-grams. The defaults are
PaLM's (Chowdhery et al. 2022, section 8): 8-grams, and an evaluation example is contaminated
when 70 % of it is found (GPT-3, Brown et al. 2020, appendix C, uses 8 to 13 words). The share
is counted on words, as Llama 2's analysis counts tokens (Touvron et al. 2023, appendix A.6): a
reference item is *covered* by a text in the share of its words that lie in an n-gram the text
also has, or in a stretch the two texts align (:func:`aligned`). Measured on the reference
item, a training text that quotes an evaluation task inside more words covers it whole.

The grams alone lose a reworded copy: a changed word breaks the n grams over it, and words
within n of the start, the end or another change are in no shared gram (PaLM's 8-grams find
58 % of copies with four of ~35 words changed, ``bench/bench_decontaminate.py``). So the words
of a reference item are also covered where a word-level alignment of the two texts
(``difflib.SequenceMatcher``) matches them: only the changed words stay uncovered. This is the
check Phi-1 and Cosmopedia run on the items an n-gram names (the share of the benchmark
sample's words in matched blocks, the decontamination README of huggingface/cosmopedia:
10-grams, then over 0.5 of the sample); here it joins the grams' words, against PaLM's
stricter 70 %. It runs only on the :data:`CANDIDATES` a shared gram names, so it costs
nothing for the unrelated texts; the grams keep finding the reordered copies an alignment
cannot.

A text shorter than n words is one gram of all its words: it matches only a text equal to it
(after normalising), as GPT-3 found shorter n-grams collide spuriously.

The reference items' grams are hashed into an inverted index (gram hash to items), so a text is
compared only with the items that share a gram with it, and with at most the
:data:`CANDIDATES` that share the most.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

NGRAM = 8
"""Words per n-gram: PaLM's 8 (GPT-3's smallest)."""
MIN_OVERLAP = 0.7
"""The share of a reference item's words covered from which a text contains it (PaLM's 70 %)."""
CANDIDATES = 8
"""The reference items sharing the most grams with a text whose coverage is measured."""
COMMON_GRAM = 100
"""A gram held by more reference items than this (a template's phrase) names no candidate."""

_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")


def words_of(text: str) -> list[str]:
    """The words of ``text``, case folded, without punctuation, each run of digits ``0``."""
    return [_DIGITS.sub("0", word) for word in _WORD.findall(text.casefold())]


def gram_hashes(words: Sequence[str], n: int = NGRAM) -> list[int]:
    """The hash of each n-gram of ``words`` in order; one gram of them all when fewer than n."""
    if not words:
        return []
    if len(words) < n:
        return [hash(tuple(words))]
    return [hash(gram) for gram in zip(*(words[k:] for k in range(n)), strict=False)]


def coverage(reference: Sequence[str], text: Sequence[str], n: int = NGRAM) -> float:
    """The share of the ``reference`` words that ``text`` covers (see the module's docstring).

    A word is covered when it lies in an n-gram both have, or in a block of their word-level
    alignment (:func:`aligned`).
    """
    return _coverage(reference, gram_hashes(reference, n), text, set(gram_hashes(text, n)), n)


def aligned(reference: Sequence[str], text: Sequence[str]) -> list[bool]:
    """Whether each word of ``reference`` is matched in a word-level alignment with ``text``.

    The matching blocks of ``difflib.SequenceMatcher`` (no automatic junk: a long text's
    frequent words still align), in order: a reordered copy aligns only in part.
    """
    matched = [False] * len(reference)
    blocks = SequenceMatcher(None, reference, text, autojunk=False).get_matching_blocks()
    for start, _, size in blocks:
        matched[start : start + size] = [True] * size
    return matched


def _coverage(
    reference: Sequence[str],
    grams: Sequence[int],
    text: Sequence[str],
    found: set[int],
    n: int,
) -> float:
    """:func:`coverage` with the reference's grams and the text's set of grams at hand."""
    if not reference:
        return 0.0
    covered = aligned(reference, text)
    span = min(n, len(reference))
    for start, gram in enumerate(grams):
        if gram in found:
            covered[start : start + span] = [True] * span
    return sum(covered) / len(reference)


@dataclass(frozen=True, slots=True)
class Match:
    """The reference item a text covers most, and how much of it.

    Attributes:
        index: the reference item's position.
        overlap: the share of its words the text covers: in a shared n-gram or aligned (see
            the module's docstring).
    """

    index: int
    overlap: float


class OverlapIndex:
    """The reference texts' hashed n-grams, each to the items that hold it.

    Args:
        texts: the reference items' texts, in order.
        n: words per n-gram.

    Raises:
        ValueError: ``n`` below 1.
    """

    def __init__(self, texts: Iterable[str], n: int = NGRAM) -> None:
        if n < 1:
            raise ValueError(f"an n-gram holds 1 word or more, got n={n}")
        self.n = n
        self._grams: list[list[int]] = []
        self._words: list[list[str]] = []
        self._holders: dict[int, list[int]] = {}
        for index, text in enumerate(texts):
            words = words_of(text)
            grams = gram_hashes(words, n)
            self._grams.append(grams)
            self._words.append(words)
            for gram in set(grams):
                self._holders.setdefault(gram, []).append(index)

    def __len__(self) -> int:
        return len(self._grams)

    def best_match(self, text: str) -> Match | None:
        """The reference item ``text`` covers most (the first of equals), or ``None``.

        Measured on the :data:`CANDIDATES` items sharing the most grams with it, the earlier
        item first among those sharing as many.

        ``None`` when it shares no n-gram with any item (or only grams of :data:`COMMON_GRAM`).
        """
        words = words_of(text)
        found = set(gram_hashes(words, self.n))
        shared: Counter[int] = Counter()
        for gram in found:
            holders = self._holders.get(gram)
            if holders is not None and len(holders) <= COMMON_GRAM:
                shared.update(holders)
        best: Match | None = None
        # Ties go to the earlier item: Counter.most_common would keep the first counted, in
        # the order of the set of gram hashes, which PYTHONHASHSEED changes from run to run.
        ranked = heapq.nsmallest(CANDIDATES, shared.items(), key=lambda held: (-held[1], held[0]))
        for index, _ in ranked:
            overlap = _coverage(self._words[index], self._grams[index], words, found, self.n)
            if best is None or (overlap, -index) > (best.overlap, -best.index):
                best = Match(index, overlap)
        return best
