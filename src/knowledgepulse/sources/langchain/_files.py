"""LangSmith run files: run trees, flat lists of runs, and ``post``/``patch`` ingest batches.

A file may hold a root run with its ``child_runs`` nested (``read_run(load_child_runs=True)``,
our own :func:`dump_run`), runs one per element or line with ``parent_run_id`` links
(``client.list_runs``), pages of runs as the REST API's ``POST /runs/query`` answers them
(``{"runs": [...], "cursors": {...}}``, what ``list_runs`` pages through; a rule's webhook posts
``{"rule_id", "runs": [...]}`` alike), or the batches the LangSmith SDK posts (``{"post": [...],
"patch": [...]}``: a patch updates the run posted with its id, which a JS SDK patch gives only at
the end of its ``dotted_order``). All runs of a file go into one pool; the
trees are rebuilt from it, children ordered by start time (else ``dotted_order``, else file
order), and each root is one trace.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from knowledgepulse._util.jsonpath import describe_value, format_path, non_empty
from knowledgepulse._util.times import moment
from knowledgepulse.errors import ConversionError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import Loc
from knowledgepulse.sources._envelope import TraceOptions, placed
from knowledgepulse.sources.langchain._runs import CONTENT_HINT, RunNode, convert_tree
from knowledgepulse.trace import TraceItem

_RUN_KEYS = ("run_type", "child_runs", "inputs", "outputs", "dotted_order")
_BATCH_KEYS = ("post", "patch")
_PAGE_KEY = "runs"
"""The list of runs in a page of the REST API's ``POST /runs/query`` (and a webhook's payload)."""
_NO_TIME = float("inf")
_NOWHERE = Location("<runs>")


def recognises(value: Any) -> bool:
    """Whether a file's first record is a LangSmith run, a list of runs, or an ingest batch."""
    if isinstance(value, list):
        return bool(value) and isinstance(value[0], Mapping) and _is_run(value[0])
    if not isinstance(value, Mapping):
        return False
    if _is_run(value):
        return True
    if _is_page(value):
        return True
    present = [key for key in _BATCH_KEYS if key in value]
    return bool(present) and all(
        isinstance(value[key], list)
        and all(isinstance(run, Mapping) and _patch_id(run) is not None for run in value[key])
        for key in present
    )


def _is_page(value: Mapping[str, Any]) -> bool:
    """A page of runs (``{"runs": [...], "cursors"}``): its first run a LangSmith run."""
    runs = value.get(_PAGE_KEY)
    return (
        not _looks_like_run(value)
        and isinstance(runs, list)
        and bool(runs)
        and isinstance(runs[0], Mapping)
        and _is_run(runs[0])
    )


def _is_run(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("run_type"), str) and ("id" in value or "trace_id" in value)


def _looks_like_run(value: Any) -> bool:
    return isinstance(value, Mapping) and any(key in value for key in _RUN_KEYS)


@dataclass(slots=True)
class _Entry:
    """A run of the pool: its (merged) fields, where it was read, and its parent."""

    key: str
    run: dict[str, Any]
    record: Record
    path: Loc
    seq: int
    parent: str | None = None
    children: list[str] = field(default_factory=list)


class _Pool:
    """Every run of one file, by id, with the patches still to apply."""

    def __init__(self) -> None:
        self.entries: dict[str, _Entry] = {}
        self.patches: list[tuple[Record, Loc, Mapping[str, Any]]] = []
        self._seq = itertools.count()

    def add_record(self, record: Record) -> Iterator[Problem]:
        value = record.value
        if isinstance(value, list):
            for index, run in enumerate(value):
                yield from self.add_run(record, run, (index,))
        elif isinstance(value, Mapping) and _is_page(value):
            # A page of the runs query: its runs are a flat list, linked by parent_run_id (the
            # pages of one query, a JSON line each, are read as one pool).
            for index, run in enumerate(value[_PAGE_KEY]):
                yield from self.add_run(record, run, (_PAGE_KEY, index))
        elif (
            isinstance(value, Mapping)
            and not _looks_like_run(value)
            and any(key in value for key in _BATCH_KEYS)
        ):
            yield from self._add_batch(record, value)
        else:
            yield from self.add_run(record, value, ())

    def _add_batch(self, record: Record, batch: Mapping[str, Any]) -> Iterator[Problem]:
        for key in _BATCH_KEYS:
            runs = batch.get(key, [])
            if not isinstance(runs, list):
                yield record.problem(
                    (key,), f"expected a list of runs, found {describe_value(runs)}"
                )
                continue
            for index, run in enumerate(runs):
                if key == "post":
                    yield from self.add_run(record, run, (key, index))
                elif isinstance(run, Mapping):
                    self.patches.append((record, (key, index), run))
                else:
                    yield record.problem(
                        (key, index), f"expected a run, found {describe_value(run)}"
                    )

    def add_run(self, record: Record, run: Any, path: Loc) -> Iterator[Problem]:
        """Add a run and its nested ``child_runs`` (their parent is the run they sit in)."""
        pending: list[tuple[Any, Loc, str | None]] = [(run, path, None)]
        while pending:
            value, where, up = pending.pop()
            if not _looks_like_run(value):
                yield record.problem(where, _not_a_run(value))
                continue
            fields = {key: item for key, item in value.items() if key != "child_runs"}
            key = _run_id(fields) or f"#{next(self._seq)}"
            known = self.entries.get(key)
            if known is not None:  # the same run again (posted twice, or a later state): merge
                known.run.update({k: v for k, v in fields.items() if v is not None})
            else:
                self.entries[key] = _Entry(key, fields, record, where, next(self._seq), up)
            children = value.get("child_runs")
            if children is None:
                continue
            if not isinstance(children, list):
                yield record.problem((*where, "child_runs"), "expected a list of runs")
                continue
            pending.extend(
                (child, (*where, "child_runs", index), key)
                for index, child in reversed(list(enumerate(children)))
            )

    def apply_patches(self) -> Iterator[Problem]:
        for record, path, patch in self.patches:
            key = _patch_id(patch)
            entry = self.entries.get(key) if key else None
            if entry is not None:
                entry.run.update({k: v for k, v in patch.items() if v is not None})
            elif _is_run(patch):
                yield from self.add_run(record, patch, path)
            else:
                yield record.problem(
                    path,
                    f"a patch for run {key!r}, which no post in this file creates; "
                    "export the batch that posted it too",
                )
        self.patches.clear()

    def roots(self) -> Iterator[tuple[RunNode | None, _Entry, str | None]]:
        """Each tree (``None`` where its runs form a cycle), its root entry, and a warning."""
        for key, entry in self.entries.items():
            parent = entry.parent or non_empty(entry.run.get("parent_run_id"))
            entry.parent = parent if parent in self.entries and parent != key else None
            if entry.parent is not None:
                self.entries[entry.parent].children.append(key)
        reached: set[str] = set()
        ordered = sorted(self.entries.items(), key=lambda item: item[1].seq)
        for key, entry in ordered:
            if entry.parent is not None:
                continue
            missing = non_empty(entry.run.get("parent_run_id"))
            note = (
                f"its parent run {missing} is not in the file; read as a trace of its own"
                if missing and missing != key
                else None
            )
            yield self._tree(key, reached), entry, note
        for key, entry in ordered:
            if key not in reached:
                reached.add(key)
                yield None, entry, None

    def _tree(self, key: str, reached: set[str]) -> RunNode:
        root = RunNode(self.entries[key].run)
        stack = [(key, root)]
        reached.add(key)
        while stack:
            current, node = stack.pop()
            children = sorted(
                (self.entries[child] for child in self.entries[current].children),
                key=_start_key,
            )
            for child in children:
                child_key = child.key
                if child_key in reached:
                    continue
                reached.add(child_key)
                child_node = RunNode(child.run)
                node.children.append(child_node)
                stack.append((child_key, child_node))
        return root


def convert_records(
    records: Iterable[Record | Problem], options: TraceOptions
) -> Iterator[TraceItem | Problem]:
    """Every trace in one file's records (see the module docstring for the shapes).

    A part that cannot be read is a located problem and the rest go on; traces come after
    the whole file is read, since a child run may come before its parent.
    """
    pool = _Pool()
    for item in records:
        if isinstance(item, Problem):
            yield item
            continue
        yield from pool.add_record(item)
    yield from pool.apply_patches()
    for tree, entry, note in pool.roots():
        if tree is None:
            yield entry.record.problem(
                entry.path, "this run's parent_run_id links form a cycle; it was left out"
            )
            continue
        try:
            converted = convert_tree(tree, options)
        except ConversionError as error:
            yield entry.record.problem(entry.path, str(error))
            continue
        if note:
            converted = dataclasses.replace(converted, warnings=(*converted.warnings, note))
        yield placed(converted, entry.record.locate(entry.path))


def trees(value: Any) -> tuple[list[RunNode], list[str]]:
    """The run trees of an in-memory value (one of the file shapes), and what was wrong in it."""
    pool = _Pool()
    record = Record(_NOWHERE, value)
    problems = [str(problem) for problem in pool.add_record(record)]
    problems.extend(str(problem) for problem in pool.apply_patches())
    found: list[RunNode] = []
    for tree, entry, _ in pool.roots():
        if tree is None:
            problems.append(f"{format_path(entry.path)}: its parent_run_id links form a cycle")
        else:
            found.append(tree)
    return found, problems


def dump_run(run: Any, *, serialized: bool = True) -> dict[str, Any]:
    """A live LangChain / LangSmith run as LangSmith's JSON, its ``child_runs`` nested.

    Messages and other objects in inputs and outputs become their JSON form; what JSON cannot
    say becomes its ``str()``. ``serialized`` keeps the runnable's serialised form (large).
    """
    stack: list[tuple[Any, dict[str, Any] | None]] = [(run, None)]
    top: dict[str, Any] = {}
    memo: dict[int, Any] = {}
    while stack:
        current, parent = stack.pop()
        dumped = _dumped(current, memo)
        if not serialized:
            dumped.pop("serialized", None)
        dumped["child_runs"] = []
        if parent is None:
            top = dumped
        else:
            parent["child_runs"].append(dumped)
        stack.extend((child, dumped) for child in reversed(getattr(current, "child_runs", [])))
    return top


_BULKY = ("inputs", "outputs")
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SHARED_DEPTH = 3
"""Containers walked by :func:`_shared`: a state's message list, a chat model's batches."""


def _dumped(run: Any, memo: dict[int, Any]) -> dict[str, Any]:
    """One run as JSON: its inputs and outputs by :func:`_shared`, the rest by pydantic."""
    fields = getattr(type(run), "model_fields", {})
    bulky = {key: getattr(run, key) for key in _BULKY if key in fields}
    if not bulky:
        found: dict[str, Any] = to_jsonable_python(run, fallback=_unknown)
        return found
    dumped: dict[str, Any] = to_jsonable_python(
        run.model_copy(update=dict.fromkeys(bulky)), fallback=_unknown
    )
    for key, value in bulky.items():  # in place: the keys keep their order
        dumped[key] = _shared(value, memo)
    return dumped


def _shared(value: Any, memo: dict[int, Any], depth: int = 0) -> Any:
    """``value`` as pydantic dumps it, each object dumped once a tree (``memo``) and shared.

    LangSmith's runs each keep the inputs they were called with: in a LangGraph run, every
    node's and model's the state so far, the same message objects again at each step. Dumped
    once each (the tree holds them alive, so no id is reused while ``memo`` lives), a 200-step
    run's dump takes 2.4 times less time; the JSON is the same, with shared parts.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    found = memo.get(id(value))
    if found is None:
        if depth < _SHARED_DEPTH and kind is dict and all(type(key) is str for key in value):
            found = {key: _shared(item, memo, depth + 1) for key, item in value.items()}
        elif depth < _SHARED_DEPTH and kind in (list, tuple):
            found = [_shared(item, memo, depth + 1) for item in value]
        else:
            found = to_jsonable_python(value, fallback=_unknown)
        memo[id(value)] = found
    return found


def _unknown(value: Any) -> Any:
    """What pydantic cannot write as JSON: a LangGraph ``Send`` as LangGraph JS writes it, else str.

    Not ``str(send)``: a ``Send`` carries the graph state, its repr writes every message's
    repr, and a LangChain message's repr costs some 300 times its JSON (it compares each field
    with its default). A long LangGraph run, whose conditional edge returns a ``Send`` per
    tool call, spent most of its traced time there. One level: deeper unknowns are ``str()``.
    """
    kind = type(value)
    if kind.__name__ == "Send" and kind.__module__.startswith("langgraph."):
        fields = {"lg_name": "Send", "node": value.node, "args": value.arg}
        return to_jsonable_python(fields, fallback=str)
    return str(value)


def _start_key(entry: _Entry) -> tuple[float, int]:
    start = moment(entry.run.get("start_time")) or _dotted_time(entry.run.get("dotted_order"))
    return (start.timestamp() if start else _NO_TIME, entry.seq)


def _dotted_time(value: Any) -> datetime | None:
    """The start time the last segment of a ``dotted_order`` begins with."""
    if not isinstance(value, str) or not value:
        return None
    last = value.rsplit(".", 1)[-1]
    try:
        return moment(datetime.strptime(last[:22], "%Y%m%dT%H%M%S%fZ"))
    except ValueError:
        return None


def _run_id(run: Mapping[str, Any]) -> str | None:
    value = run.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return non_empty(value)


def _patch_id(run: Mapping[str, Any]) -> str | None:
    """The id of the run a patch updates: its ``id``, else the end of its ``dotted_order``.

    LangSmith JS patches carry no ``id``; the last segment of a ``dotted_order`` is the run's
    start time (22 characters, ``20241013T070537170001Z``) followed by its id.
    """
    found = _run_id(run)
    order = run.get("dotted_order")
    if found is None and isinstance(order, str):
        found = non_empty(order.rsplit(".", 1)[-1][22:])
    return found


def _not_a_run(value: Any) -> str:
    return (
        f"not a LangSmith run: {describe_value(value)}; expected an object with run_type, "
        'inputs, outputs (and child_runs), a {"runs": [...]} page of the runs query, or a '
        '{"post": [...], "patch": [...]} batch'
    )


__all__ = ["CONTENT_HINT", "convert_records", "dump_run", "recognises", "trees"]
