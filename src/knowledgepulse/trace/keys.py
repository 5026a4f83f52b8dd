"""Misspelt keys: an unknown key one or two edits from a known key of the same object.

Unknown keys are kept (JSON-LD documents grow), but ``steps[2].tols`` is almost surely ``tool``,
and a misspelt key silently changes the score (a step without its tool lowers tool diversity).
The known keys come from the models themselves (their fields, by alias), so they never drift
from what is validated. A trace is looked at closely only when validation kept an unknown key
somewhere, and each distinct unknown key is compared with the known ones only once.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse.trace.models import CONTEXT_URLS, ReasoningTrace

MAX_EDITS = 2
"""The most edits (insertions, deletions, substitutions) between a misspelt key and the known one;
a known key of two letters (``id``) allows one, or every short extra key would be its typo."""


@dataclass(slots=True)
class _Shape:
    """An object's known keys, the shapes of the objects under them, and the guesses made."""

    known: frozenset[str]
    nested: dict[str, _Shape]
    guesses: dict[str, str | None] = field(default_factory=dict)

    def guess(self, key: str) -> str | None:
        """The known key ``key`` is a misspelling of, or ``None`` (remembered per key)."""
        if key not in self.guesses:
            # A bounded cache: a producer's many distinct extra keys cannot grow it for ever.
            if len(self.guesses) > 1024:
                self.guesses.clear()
            self.guesses[key] = _closest(key, self.known)
        return self.guesses[key]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds, itself or inside ``X | None`` or ``list[X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (list, typing.Union, types.UnionType):
        for argument in typing.get_args(annotation):
            model = _model_in(argument)
            if model is not None:
                return model
    return None


def _shape_of(model: type[BaseModel]) -> _Shape:
    known: list[str] = []
    nested: dict[str, _Shape] = {}
    for name, info in model.model_fields.items():
        key = info.alias or name
        known.append(key)
        inner = _model_in(info.annotation)
        if inner is not None:
            nested[key] = _shape_of(inner)
    return _Shape(frozenset(known), nested)


_TRACE = _shape_of(ReasoningTrace)


def _edits(one: str, other: str) -> int:
    """The edits difflib's alignment of the two strings makes (a bound on Levenshtein's)."""
    return sum(
        max(i2 - i1, j2 - j1)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, one, other).get_opcodes()
        if tag != "equal"
    )


def _closest(key: str, known: frozenset[str]) -> str | None:
    """The known key within :data:`MAX_EDITS` of ``key`` (case aside), the nearest first."""
    folded = key.lower()
    best: tuple[int, str] | None = None
    for candidate in sorted(known):
        bound = min(MAX_EDITS, len(candidate) // 2)
        # Cheap rejection first: lengths further apart than the bound need more edits.
        if abs(len(candidate) - len(folded)) > bound:
            continue
        edits = _edits(folded, candidate.lower())
        if edits <= bound and (best is None or edits < best[0]):
            best = (edits, candidate)
    return None if best is None else best[1]


def has_unknown_keys(trace: ReasoningTrace) -> bool:
    """Whether any object of a valid trace kept a key the models do not know.

    The cheap test every trace read takes before :func:`misspelt_keys` looks closer: pydantic
    has already set each model's unknown keys aside. Written out over the models' nesting
    rather than walked generically: 2 us a trace against 6 for the walk, on every trace read
    (``test_keys`` checks it sees every nested model).
    """
    if (
        trace.__pydantic_extra__
        or trace.metadata.__pydantic_extra__
        or trace.task.__pydantic_extra__
        or trace.outcome.__pydantic_extra__
    ):
        return True
    for step in trace.steps:
        if step.__pydantic_extra__ or (step.tool is not None and step.tool.__pydantic_extra__):
            return True
    delta = trace.knowledge_graph_delta
    return delta is not None and bool(
        delta.__pydantic_extra__
        or any(entity.__pydantic_extra__ for entity in delta.entities)
        or any(fact.__pydantic_extra__ for fact in delta.relationships)
    )


def misspelt_keys(document: Any) -> list[tuple[str, str]]:
    """Each unknown key of a trace document that looks like a misspelt known one.

    Gives the key's JSON path (``steps[2].tols``) and the known key it is close to
    (``tool``), in document order. Anything that is not an object where an object belongs is
    left to validation, and so is a document that names neither the trace's ``@context`` nor
    its ``@type``: that is another kind of record (a framework's file read without ``--from``),
    not a misspelt trace.
    """
    found: list[tuple[str, str]] = []
    if type(document) is dict and (
        document.get("@type") == "ReasoningTrace" or document.get("@context") in CONTEXT_URLS
    ):
        _walk(document, _TRACE, (), found)
    return found


def _walk(
    value: Any, shape: _Shape, loc: tuple[str | int, ...], found: list[tuple[str, str]]
) -> None:
    """Every misspelt key under ``value``, in document order, with its path."""
    if type(value) is not dict:
        return
    for key, item in value.items():
        if key not in shape.known:
            guess = shape.guess(str(key))
            if guess is not None:
                found.append((format_path((*loc, str(key))), guess))
            continue
        inner = shape.nested.get(key)
        if inner is None:
            continue
        if type(item) is list:
            for index, element in enumerate(item):
                _walk(element, inner, (*loc, key, index), found)
        else:
            _walk(item, inner, (*loc, key), found)
