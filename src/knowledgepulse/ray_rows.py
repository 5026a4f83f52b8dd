"""A Ray Dataset of conversation rows, scored on a Ray cluster and given back as rows.

Each row holds one conversation in a format ``kp`` reads (OpenAI chat, Responses, Anthropic,
ShareGPT, Hermes) beside columns of its own. The actors turn rows into traces as
``kp score --from`` does and embed them; the driver scores them in order and gives each row back
unchanged with the ``kp_`` columns of ``kp score --annotate`` (``docs/datasets.md``). Columns
are guessed per batch (name them with ``RowOptions`` to be sure), and no actor knows a row's
place in the dataset, so a row without an id column is named by a digest of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Unpack

import orjson

from knowledgepulse.engines.ray_engine import ActorOptions, iter_dataset_scores
from knowledgepulse.records import Problem
from knowledgepulse.reports.rows import kp_columns
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources import convert as rows_to_traces
from knowledgepulse.trace import TraceItem

_NAME = "rows"


@dataclass(frozen=True, slots=True)
class RowsToTraces:
    """Makes the traces of a batch of rows in the actors (picklable: a source and options).

    Attributes:
        source: the conversation format (``openai-chat``...), or ``auto`` for each batch's.
        options: the domain, confidence and row columns.
    """

    source: str = "auto"
    options: TraceOptions = TraceOptions()  # noqa: RUF009 - frozen, so one shared default is safe

    def __call__(
        self, rows: list[dict[str, Any]]
    ) -> list[tuple[dict[str, Any] | None, list[tuple[str, str]]]]:
        """Each row's trace document, or ``None`` and its problems as ``(path, message)``."""
        documents: list[dict[str, Any] | None] = [None] * len(rows)
        problems: list[list[tuple[str, str]]] = [[] for _ in rows]
        for item in rows_to_traces(rows, source=self.source, options=self.options, name=_NAME):
            if isinstance(item, Problem):
                if not item.warning:
                    problems[item.location.index or 0].append((item.path, item.message))
            elif item.row is not None and item.row.location.index is not None:
                index = item.row.location.index
                documents[index] = _document(item, rows[index], index)
        unread = [("", "not read: its batch's first row is in no conversation format")]
        return [
            (document, [] if document is not None else problems[n] or unread)
            for n, document in enumerate(documents)
        ]


def _document(item: TraceItem, row: dict[str, Any], index: int) -> dict[str, Any]:
    """The trace as JSON; a row-number id (``rows:<n>`` of its batch) becomes a content digest."""
    document: dict[str, Any] = item.document
    if document["id"] == f"kp:trace:{_NAME}:{index}":
        raw = orjson.dumps(row, default=str, option=orjson.OPT_NON_STR_KEYS)
        source_id = f"{_NAME}:{hashlib.sha256(raw).hexdigest()[:16]}"
        metadata = document["metadata"]
        source = {**metadata["source"], "trace_id": source_id}
        document = {
            **document,
            "id": f"kp:trace:{source_id}",
            "metadata": {**metadata, "source": source},
        }
    return document


def iter_scored_rows(
    dataset: Any,
    *,
    source: str = "auto",
    options: TraceOptions | None = None,
    **engine: Unpack[ActorOptions],
) -> Iterator[dict[str, Any] | Problem]:
    """Each row of a Ray Dataset of conversations, in order: with its ``kp_`` columns, or why not.

    ``source`` is the conversation format, or ``auto`` (each batch's first row's); ``options``
    the domain, confidence and row columns (``RowOptions``); ``engine`` the scorer and actors,
    as the engine's ``iter_dataset_scores`` takes them. A row that gives no trace yields its
    problems, located at ``row N``, with the path inside the row.

    Raises:
        MissingDependencyError: Ray is not installed.
    """
    convert = RowsToTraces(source, options or TraceOptions())
    for scored in iter_dataset_scores(dataset, convert=convert, **engine):
        if scored.breakdown is None or scored.row is None:
            yield from scored.problems
            continue
        yield {**scored.row, **kp_columns(scored.breakdown)}


@dataclass(frozen=True, slots=True)
class ScoredRows:
    """The ``rows`` that gave a trace, in order, with ``kp_`` columns; the others' ``problems``."""

    rows: list[dict[str, Any]]
    problems: list[Problem]


def score_dataset(
    dataset: Any,
    *,
    source: str = "auto",
    options: TraceOptions | None = None,
    **engine: Unpack[ActorOptions],
) -> ScoredRows:
    """Score a Ray Dataset of conversation rows; the rows back with their ``kp_`` columns.

    See :func:`iter_scored_rows` for the arguments; this collects its rows (to write them with
    ``ray.data.from_items(result.rows).write_parquet(...)``, say).
    """
    items = list(iter_scored_rows(dataset, source=source, options=options, **engine))
    return ScoredRows(
        [item for item in items if not isinstance(item, Problem)],
        [item for item in items if isinstance(item, Problem)],
    )


__all__ = ["RowsToTraces", "ScoredRows", "iter_scored_rows", "score_dataset"]
