"""Which text stands for a trace in novelty, and how it becomes one unit vector.

Novelty stays ``N = 1 - max cosine(trace, cache)``. A representation may join parts (texts the
embedder reads, or term sets hashed by :func:`term_vectors`): ``[sqrt(w1)*u1, sqrt(w2)*u2, ...]``
of unit part vectors has cosine ``w1*cos1 + w2*cos2 + ...`` with another (the weights sum to 1).
``docs/novelty.md`` measures the :data:`NOVELTY_TEXTS` and says why the default is the default.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import regex

from knowledgepulse._util.digest import stable_hash64
from knowledgepulse._util.text import did_you_mean
from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.novelty.embedder import Embedder, WindowedEmbedder, model_id_of
from knowledgepulse.novelty.settings import TERM_DIMENSIONS, WINDOW_PIECES
from knowledgepulse.trace.text import action_terms, actions_text, objective_text, whole_text

if TYPE_CHECKING:  # numpy loads when something is embedded, not when a name is looked up
    import numpy as np
    from numpy.typing import NDArray

    from knowledgepulse.trace.models import ReasoningTrace

TRUNCATE_PIECES = 510
"""The TypeScript SDK's cut: 512 positions with [CLS] and [SEP]."""


@runtime_checkable
class LeadingEmbedder(Embedder, Protocol):
    """An embedder that can read only the start of each text (a bounded cost per text).

    :class:`~knowledgepulse.novelty.MiniLMEmbedder` is one; others read with ``embed_batch``.
    """

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Each text's first ``max_pieces`` word pieces embedded as one window."""
        ...


@dataclass(frozen=True, slots=True)
class RepresentedVectors:
    """One unit vector per trace, and (reading windows) how much of each text was embedded."""

    vectors: NDArray[np.float32]
    windows: tuple[int, ...] | None = None
    capped: tuple[bool, ...] | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """A text of the trace, its share of the cosine, and its first word pieces read (or all)."""

    text: Callable[[ReasoningTrace], str]
    weight: float
    max_pieces: int | None


@dataclass(frozen=True, slots=True)
class TermsPart:
    """A set of terms of the trace, hashed (no model) into vectors, and its share of the cosine."""

    terms: Callable[[ReasoningTrace], set[str]]
    weight: float
    dimensions: int = TERM_DIMENSIONS


@dataclass(frozen=True, slots=True)
class NoveltyText:
    """A named way to turn a trace into the vector novelty compares (``--novelty-text NAME``)."""

    name: str
    description: str
    parts: tuple[Part | TermsPart, ...]

    def dimensions(self, embedder_dimensions: int) -> int:
        """The length of its vectors for an embedder of ``embedder_dimensions``."""
        return sum(
            part.dimensions if isinstance(part, TermsPart) else embedder_dimensions
            for part in self.parts
        )

    def cache_model_id(self, embedder: Embedder) -> str:
        """The model id a cache of these vectors records: the embedder's and this name.

        ``windows`` keeps the bare id, which caches saved before the names record.
        """
        model_id = model_id_of(embedder)
        return model_id if self.name == "windows" else f"{model_id}{NOVELTY_TEXT_MARK}{self.name}"

    def embed(self, embedder: Embedder, traces: Sequence[ReasoningTrace]) -> RepresentedVectors:
        """One unit vector per trace over the parts it has.

        A part a trace lacks (an empty text, no terms) is a zero block, and the vector is
        renormalised over the rest: two traces without actions compare by their objectives.
        """
        import numpy as np  # noqa: PLC0415 - see the imports

        from knowledgepulse.novelty.windows import unit_rows  # noqa: PLC0415

        blocks: list[NDArray[np.float32]] = []
        windows: tuple[int, ...] | None = None
        capped: tuple[bool, ...] | None = None
        for part in self.parts:
            if isinstance(part, TermsPart):
                hashed = term_vectors([part.terms(trace) for trace in traces], part.dimensions)
                blocks.append(hashed * np.float32(math.sqrt(part.weight)))
                continue
            texts = [part.text(trace) for trace in traces]
            if part.max_pieces is not None and isinstance(embedder, LeadingEmbedder):
                raw = embedder.embed_leading(texts, part.max_pieces)
            elif part.max_pieces is None and isinstance(embedder, WindowedEmbedder):
                result = embedder.embed_windowed(texts)
                raw, windows, capped = result.vectors, result.windows, result.capped
            else:
                raw = embedder.embed_batch(texts)
            vectors = np.asarray(raw, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(texts):
                return RepresentedVectors(vectors)  # the scorer reports the wrong shape
            # A trace without this part (no action step: empty actions) leaves it out, so the
            # rest is renormalised over the parts it has. Embedding the empty text would give
            # every such trace the same vector, and any two of them this part's cosine for free.
            absent = np.array([not text.strip() for text in texts], dtype=bool)
            vectors = unit_rows(vectors)
            vectors[absent] = 0.0
            blocks.append(vectors * np.float32(math.sqrt(part.weight)))
        if len(blocks) == 1:
            return RepresentedVectors(blocks[0], windows, capped)
        return RepresentedVectors(unit_rows(np.concatenate(blocks, axis=1)), windows, capped)


def term_vectors(
    term_sets: Sequence[Iterable[str]], dimensions: int = TERM_DIMENSIONS
) -> NDArray[np.float32]:
    """Each set of terms as one unit vector (zeros for an empty set): (sets, dimensions).

    Signed feature hashing: each distinct term adds +1 or -1 to one bucket, both chosen by an
    8-byte BLAKE2b digest (stable across processes), so a cosine estimates the sets' overlap
    |A ∩ B| / sqrt(|A| |B|). A model finds two ids alike; a repeat is often the *same* id.
    """
    import numpy as np  # noqa: PLC0415 - see the imports

    from knowledgepulse.novelty.windows import unit_rows  # noqa: PLC0415

    sets = [set(terms) for terms in term_sets]
    # Each distinct term of the call hashed once: a corpus's terms recur (a quarter distinct).
    digests = {term: stable_hash64(term) for term in set().union(*sets)}
    found = np.fromiter(
        (digests[term] for terms in sets for term in terms), np.uint64, sum(map(len, sets))
    )
    rows = np.repeat(np.arange(len(sets)), [len(terms) for terms in sets])
    signs = np.where(found >> np.uint64(63), np.float32(1.0), np.float32(-1.0))
    matrix = np.zeros((len(sets), dimensions), dtype=np.float32)
    # Sums of +-1 are exact in float32, so the order of the additions is free.
    np.add.at(matrix, (rows, (found % np.uint64(dimensions)).astype(np.intp)), signs)
    return unit_rows(matrix)


_NOT_LETTER = regex.compile(r"[^\p{L}]+")
_NOT_LATIN = regex.compile(r"[^\p{Latin}]+")
_SCRIPT_SAMPLE = 2000
"""The characters of a text whose letters tell its script (a prompt can be kilobytes)."""


def in_model_script(text: str) -> bool:
    """Whether most letters of ``text`` are Latin (or it has none): what the models read apart.

    all-MiniLM-L6-v2 was trained on English, and the static table is distilled from it: they
    read other scripts as runs of characters, so any two texts in Cyrillic, Chinese, Arabic,
    Hebrew or Devanagari come out alike (a cosine near 0.9 between unrelated requests, against
    0.02 in English; ``docs/novelty.md``). A cosine of two such texts says nothing of their tasks.
    Only the first 2,000 characters are looked at.
    """
    if text.isascii():  # every ASCII letter is Latin: the common case, at C speed
        return True
    sample = text[:_SCRIPT_SAMPLE]
    letters = len(_NOT_LETTER.sub("", sample))
    return letters == 0 or 2 * len(_NOT_LATIN.sub("", sample)) >= letters


NOVELTY_TEXT_MARK = "+novelty-text:"
"""What joins the embedder's id and the novelty text's name in a cache's model id."""


def split_cache_model_id(model_id: str) -> tuple[str, str]:
    """``(embedder id, novelty text name)`` of a cache's model id (a bare id is ``windows``)."""
    embedder_id, marked, name = model_id.partition(NOVELTY_TEXT_MARK)
    return embedder_id, name if marked else "windows"


DEFAULT_NOVELTY_TEXT = "objective-actions-terms"

NOVELTY_TEXTS: dict[str, NoveltyText] = {
    text.name: text
    for text in (
        NoveltyText(
            "objective-actions-terms",
            "the objective, the first 254 word pieces of the actions and the terms they act on"
            " (a third each)",
            (
                Part(objective_text, 1 / 3, WINDOW_PIECES),
                Part(actions_text, 1 / 3, WINDOW_PIECES),
                TermsPart(action_terms, 1 / 3),
            ),
        ),
        NoveltyText(
            "objective-actions",
            "the objective (0.5) and the first 254 word pieces of the actions (0.5)",
            (Part(objective_text, 0.5, WINDOW_PIECES), Part(actions_text, 0.5, WINDOW_PIECES)),
        ),
        NoveltyText(
            "windows",
            "objective and all step content, 254-piece windows averaged by length",
            (Part(whole_text, 1.0, None),),
        ),
        NoveltyText(
            "truncate",
            "objective and all step content, the first 510 word pieces in one window",
            (Part(whole_text, 1.0, TRUNCATE_PIECES),),
        ),
    )
}


def novelty_text(name: str) -> NoveltyText:
    """The representation called ``name``.

    Raises:
        ScorerParameterError: no representation has that name; the message lists them.
    """
    found = NOVELTY_TEXTS.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    names = sorted(NOVELTY_TEXTS)
    hint = did_you_mean(str(name), names)
    raise ScorerParameterError(
        f"unknown novelty text {name!r}; the names are {', '.join(map(repr, names))}.{hint}"
    )
