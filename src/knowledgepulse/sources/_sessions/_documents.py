"""What the session formats share: one document a record, and their timestamps."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from knowledgepulse._util.jsonpath import describe_value
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources._envelope import finished
from knowledgepulse.trace import TraceItem


def each_document(
    records: Iterable[Record | Problem],
    recognises: Callable[[Any], bool],
    convert: Callable[[Record], TraceItem],
    *,
    what: str,
    expected: str,
) -> Iterator[TraceItem | Problem]:
    """Every record converted as one document (a JSON file is one; JSON Lines may hold many).

    A record that is not ``what`` is a problem naming the ``expected`` shape; a document that
    cannot be converted, a problem saying why; the others go on.
    """
    for item in documents(records, recognises, what=what, expected=expected):
        yield item if isinstance(item, Problem) else finished(partial(convert, item), item)


def documents(
    records: Iterable[Record | Problem],
    recognises: Callable[[Any], bool],
    *,
    what: str,
    expected: str,
) -> Iterator[Record | Problem]:
    """The records that are ``what``; any other is a problem naming the ``expected`` shape."""
    for item in records:
        if isinstance(item, Problem) or recognises(item.value):
            yield item
        else:
            yield item.problem((), f"not {what}: {describe_value(item.value)}; expected {expected}")


def first_record(
    records: Iterable[Record | Problem],
) -> tuple[Record | None, Iterator[Record | Problem]]:
    """A file's first record (the one that tells a format's dialect), and every item, in order.

    ``None`` when the file holds none (its problems only).
    """
    remaining = iter(records)
    held: list[Record | Problem] = []
    for item in remaining:
        held.append(item)
        if isinstance(item, Record):
            return item, itertools.chain(held, remaining)
    return None, iter(held)


def run_name(record: Record) -> str:
    """A one-run document's name: its file's stem (agents name a trajectory after the task).

    A document past a JSON Lines file's first adds its index; one read from standard input is
    named by a digest of its ``info``.
    """
    stem = Path(record.location.file).stem
    if stem and not stem.startswith("<") and stem != "-":
        return stem if record.location.index in (None, 0) else f"{stem}-{record.location.index}"
    digest = hashlib.sha256(str(record.value.get("info")).encode("utf-8", "replace"))
    return digest.hexdigest()[:32]
