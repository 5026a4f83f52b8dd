"""The live hook: a LangChain tracer that scores each finished root run, and ``activate``.

LangChain's ``BaseTracer`` builds the run tree and hands over the finished root run, with its
``child_runs``, once; the run is dumped to the JSON LangSmith keeps and converted by the same
reader as files, so a live run and its saved file give the same steps. Open runs live in the
tracer's ``run_map`` only until they end; a root run left open longer than
:data:`MAX_TRACE_AGE_S` (a crashed worker) is dropped when the next trace starts. Nothing here
raises into LangChain: every error is logged and the run goes on.

This module imports ``langchain_core``; the package imports it only when a live hook is made.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any, Unpack

from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.context import register_configure_hook
from langchain_core.tracers.schemas import Run

from knowledgepulse.errors import ConversionError
from knowledgepulse.integrations._collector import Collector, CollectorSettings
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.langchain._files import dump_run, trees
from knowledgepulse.sources.langchain._runs import convert_tree
from knowledgepulse.trace import TraceItem

logger = logging.getLogger("knowledgepulse.integrations")

MAX_TRACE_AGE_S = 3600.0
"""A root run still open after this many seconds is dropped (with its children)."""


class _Recorder(BaseTracer):
    """A tracer that gives each finished root run, dumped to plain data, to its collectors."""

    # Callbacks run in order, in the caller's thread, even under asyncio (as LangSmith's own
    # tracer does): a tracer that sees an end before its start loses the run.
    run_inline = True

    def __init__(self, *, max_trace_age_s: float = MAX_TRACE_AGE_S) -> None:
        # "original+chat": chat model runs keep their input messages (LangSmith's shape).
        BaseTracer.__init__(self, _schema_format="original+chat")
        self._max_age = timedelta(seconds=max_trace_age_s)
        self.last_run: dict[str, Any] | None = None
        """The last finished root run as LangSmith JSON, ``child_runs`` nested (to save it)."""

    def _collectors(self) -> tuple[Collector, ...]:
        raise NotImplementedError

    def _kept_run(self, dumped: dict[str, Any]) -> dict[str, Any]:
        """The run as :attr:`last_run` keeps it."""
        return dumped

    def _start_trace(self, run: Run) -> None:
        if run.parent_run_id is None:
            self._drop_stale(run.start_time)
        super()._start_trace(run)

    def _drop_stale(self, now: datetime) -> None:
        try:
            cutoff = _aware(now) - self._max_age
            # A snapshot: graph nodes in worker threads may add runs meanwhile.
            open_runs = list(self.run_map.items())
            stale = {
                open_run.trace_id
                for _, open_run in open_runs
                if open_run.parent_run_id is None and _aware(open_run.start_time) < cutoff
            }
            for key, open_run in open_runs:
                if open_run.trace_id in stale:
                    self.run_map.pop(key, None)
            for trace_id in stale:
                logger.warning("knowledgepulse dropped unfinished LangChain trace %s", trace_id)
        except Exception:
            logger.exception("knowledgepulse: could not prune open LangChain runs")

    def _persist_run(self, run: Run) -> None:
        try:
            dumped = dump_run(run, serialized=False)
        except Exception:
            logger.exception("knowledgepulse could not read a LangChain run; the run goes on")
            return
        try:
            self.last_run = self._kept_run(dumped)
        except Exception:
            self.last_run = None  # never the run unredacted
            logger.exception("knowledgepulse could not keep a LangChain run; the run goes on")
        for collector in self._collectors():
            collector.finish(_builder(dumped, collector.options))


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _builder(dumped: dict[str, Any], options: TraceOptions) -> Callable[[], TraceItem]:
    def build() -> TraceItem:
        found, problems = trees(dumped)
        if len(found) != 1:
            raise ConversionError("; ".join(problems) or "the run holds no trace")
        return convert_tree(found[0], options)

    return build


class KPTracer(Collector, _Recorder):
    """A LangChain tracer that converts and scores every finished root run.

    Pass it in ``config={"callbacks": [tracer]}`` (any runnable, chain, LangGraph graph); the
    traces it made are in :attr:`captured`, :attr:`traces` and :attr:`breakdowns`. See
    :class:`~knowledgepulse.integrations._collector.Collector` for the arguments every live
    hook shares.

    Args:
        max_trace_age_s: a root run still open after this many seconds is dropped.
    """

    def __init__(
        self, *, max_trace_age_s: float = MAX_TRACE_AGE_S, **settings: Unpack[CollectorSettings]
    ) -> None:
        Collector.__init__(self, **settings)
        _Recorder.__init__(self, max_trace_age_s=max_trace_age_s)

    def _collectors(self) -> tuple[Collector, ...]:
        return (self,)

    def _kept_run(self, dumped: dict[str, Any]) -> dict[str, Any]:
        # What redact= promises of the traces holds for the run a user saves (--save runs.json).
        return self.kept_value(dumped)


class _ContextTracer(_Recorder):
    """The tracer ``activate`` puts in the context: it hands runs to the active collectors."""

    def __init__(self, collectors: tuple[Collector, ...]) -> None:
        super().__init__()
        self.collectors = collectors

    def _collectors(self) -> tuple[Collector, ...]:
        return self.collectors


_ACTIVE: ContextVar[_ContextTracer | None] = ContextVar("kp_langchain_tracer", default=None)
# Every callback manager LangChain configures while the variable holds a tracer adds it, and
# hands it down to child runs (inheritable): the user passes no ``callbacks=``.
register_configure_hook(_ACTIVE, True)


# The tracer of each set of collectors while a run holds it. A capture switches its hooks on for
# each step of a generator it wraps: a stream's later runs must reach the tracer its first step
# gave the run, or each step's tracer would keep its share of the run as a trace of its own.
_TRACERS: weakref.WeakValueDictionary[tuple[int, ...], _ContextTracer] = (
    weakref.WeakValueDictionary()
)
_TRACERS_LOCK = threading.Lock()


def _tracer_for(collectors: tuple[Collector, ...]) -> _ContextTracer:
    """The tracer of ``collectors``: the one a run still holds, else a new one."""
    key = tuple(id(collector) for collector in collectors)  # alive while their tracer is
    with _TRACERS_LOCK:
        tracer = _TRACERS.get(key)
        if tracer is None:
            tracer = _TRACERS[key] = _ContextTracer(collectors)
        return tracer


@contextlib.contextmanager
def activate(collector: Collector) -> Iterator[None]:
    """Give ``collector`` every LangChain run started in this context while inside."""
    current = _ACTIVE.get()
    collectors = (*(current.collectors if current is not None else ()), collector)
    token = _ACTIVE.set(_tracer_for(collectors))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


__all__ = ["MAX_TRACE_AGE_S", "KPTracer", "activate"]
