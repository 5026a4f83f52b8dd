"""A task field read with the items (``--task-field``): said when no item has it.

Apart from :mod:`knowledgepulse.runs.tasks`, which infers tasks with the curation layer (numpy):
a run that reads no task, such as ``kp score`` without an embedder, imports only this.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._rows import no_field
from knowledgepulse.trace.item import TraceItem, with_task

_log = logging.getLogger("knowledgepulse")


def task_column(options: TraceOptions | None) -> str | None:
    """The rows' task column ``options`` name, if any (``--task-field`` of a run needing none)."""
    return None if options is None else options.rows.task_field


def no_task_field(task_field: str, items: Sequence[TraceItem]) -> ScorerParameterError:
    """The error for a ``task_field`` no item has: it names the keys the first items do have."""
    return no_field(
        "task_field",
        task_field,
        "trace",
        keys_said(items),
        "give a dataset's column, or a dotted path in the trace's JSON (metadata.task_id)",
    )


def told_when_no_task(items: Iterable[TraceItem], task_field: str | None) -> Iterator[TraceItem]:
    """The items; after the last, when none had ``task_field``, a warning says so.

    For a run that reads tasks but needs none (``score``, ``convert``, ``redact``, a
    validation): a misspelt field is said, as :func:`~knowledgepulse.runs.tasks.tasks_read`
    refuses it, once every item has gone through. An item has it as ``select`` would read it:
    its task, else its row's column or its trace's JSON's path. The warning is logged with the
    error as its argument, so that ``kp`` names the option where the library names the
    parameter.
    """
    if task_field is None:
        yield from items
        return
    first: list[TraceItem] = []
    found = False
    for item in items:
        found = found or with_task(item, task_field).task is not None
        if len(first) < _KEYS_FROM:
            first.append(item)
        yield item
    if first and not found:
        _log.warning("%s", no_task_field(task_field, first))


def keys_said(items: Sequence[TraceItem]) -> str:
    """``; the rows have id, repo, task`` (or the traces' dotted keys), from the first items.

    Empty when the items are held without their JSON (a large file's, read again to write).
    """
    rows = any(item.row is not None for item in items[:_KEYS_FROM])
    keys = sorted({key for item in items[:_KEYS_FROM] for key in keys_of(item)})
    if not keys:
        return ""
    listed = ", ".join(keys[:_KEYS_LISTED]) + (", ..." if len(keys) > _KEYS_LISTED else "")
    return f"; the {'rows' if rows else 'traces'} have {listed}"


def keys_of(item: TraceItem) -> list[str]:
    """The keys a task field could name in ``item``: its row's columns, else its trace's JSON's.

    A trace's object values are listed one level down as dotted paths (``metadata.task_id``),
    as ``task_field`` reads them; its steps are not (no task is a step's).
    """
    if item.row is not None:
        return [str(key) for key in item.row.value] if isinstance(item.row.value, dict) else []
    document = item.document
    if not isinstance(document, dict):
        return []
    keys: list[str] = []
    for key, value in document.items():
        if isinstance(value, dict) and value:
            keys += (f"{key}.{inner}" for inner in value)
        elif key != "steps":
            keys.append(str(key))
    return keys


_KEYS_FROM = 3
"""How many items the keys named in an error are gathered from."""
_KEYS_LISTED = 30
