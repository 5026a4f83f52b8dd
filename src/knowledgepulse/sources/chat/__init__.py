"""Conversation datasets as traces: one row, one conversation, its other columns beside it.

The formats curators keep agent runs in, one module each (``--from`` names in brackets):
OpenAI Chat Completions messages (``openai-chat``), OpenAI Responses items
(``openai-responses``), Anthropic Messages (``anthropic``), ShareGPT turns and their agent
variants (``sharegpt``), Hermes ``<tool_call>`` text (``hermes``). Rows come from JSON, JSON
Lines or Parquet files, or from Python (:func:`rows_to_traces`: any iterable of row dicts, a
``datasets.Dataset`` included). Each trace keeps the row it came from, so the row can be written
back with ``kp_`` columns (``spec/integrations.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.sources._envelope import ConvertedTrace, TraceOptions
from knowledgepulse.sources._rows import RowOptions
from knowledgepulse.sources.chat import (
    _row,
    anthropic,
    hermes,
    openai_chat,
    openai_responses,
    sharegpt,
)

FAMILIES: dict[str, _row.Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (hermes, anthropic, openai_responses, openai_chat, sharegpt)
}
"""Each conversation format by its ``--from`` name, in the order ``auto`` tries them."""


def family_of(row: Any) -> str | None:
    """The conversation format of a row, or ``None`` when no column holds a conversation."""
    for name, family in FAMILIES.items():
        if _row.recognises(row, family):
            return name
    return None


def rows_to_traces(
    rows: Iterable[Mapping[str, Any]],
    *,
    source: str = "auto",
    options: TraceOptions | None = None,
    name: str = "rows",
) -> Iterator[ConvertedTrace | Problem]:
    """Each row of a dataset as a trace (its ``row`` the record it came from), or a problem.

    Args:
        rows: row dicts: a list, a generator, or a ``datasets.Dataset`` (iterating one gives
            dicts); nothing is fetched.
        source: one of :data:`FAMILIES`, or ``auto`` to recognise it from the first row.
        options: the domain, confidence and row columns (:class:`RowOptions`).
        name: what locations and row-number ids call the rows (``kp:trace:<name>:<row>``).

    Raises:
        ValueError: ``source`` is unknown, or ``rows`` is a mapping (a ``DatasetDict`` of
            splits, say) rather than rows.
    """
    if isinstance(rows, Mapping):
        raise ValueError(
            "rows is a mapping, not rows (a DatasetDict?): give one split, e.g. dataset['train']"
        )
    options = options or TraceOptions()
    records = (
        Record(Location(name, i + 1, i), dict(row) if isinstance(row, Mapping) else row)
        for i, row in enumerate(rows)
    )
    first = next(records, None)
    if first is None:
        return
    found = family_of(first.value) if source == "auto" else source
    if found not in FAMILIES:
        if source != "auto":
            raise ValueError(
                f"unknown source {source!r}; choose one of auto, {', '.join(FAMILIES)}"
            )
        yield first.problem(
            (),
            "no column holds a conversation this tool knows; give source= one of "
            + ", ".join(FAMILIES),
        )
        return
    yield from _row.convert_rows(chain([first], records), options, FAMILIES[found])


__all__ = ["FAMILIES", "RowOptions", "family_of", "rows_to_traces"]
