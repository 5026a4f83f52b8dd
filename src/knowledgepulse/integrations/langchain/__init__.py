"""LangChain / LangGraph runs, live: a tracer that converts and scores every finished root run.

One line (any runnable: a chain, a LangGraph graph)::

    import knowledgepulse as kp

    tracer = kp.integrations.langchain.tracer(domain="code")
    graph.invoke(inputs, config={"callbacks": [tracer]})
    tracer.captured[-1].breakdown.score

After the fact, from a run (``client.read_run(run_id, load_child_runs=True)``) or its JSON::

    item = kp.integrations.langchain.to_trace(run, domain="code")

Reading runs and LangSmith files needs no dependency (:mod:`knowledgepulse.sources.langchain`).
Domain and confidence come from the argument, else the run metadata keys ``kp.task_domain`` /
``kp.confidence`` (``config={"metadata": {...}}``), else the defaults. Nothing imports
``langchain_core`` until :func:`tracer` or :func:`activate` is called.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Unpack, cast

from knowledgepulse.integrations._collector import Collector, CollectorSettings, live_module
from knowledgepulse.sources.langchain import to_trace as to_trace

if TYPE_CHECKING:
    from knowledgepulse.integrations.langchain._live import KPTracer


def _live_module() -> ModuleType:
    # Not named _live: importing the submodule _live sets that name on this package.
    return live_module(
        "knowledgepulse.integrations.langchain._live",
        "langchain_core.tracers.base",
        "langchain-core",
        "langchain",
    )


def tracer(**settings: Unpack[CollectorSettings]) -> KPTracer:
    """A LangChain tracer (``BaseTracer``) that converts and scores every finished root run.

    Args:
        domain: the ``task_domain`` of every trace (else ``kp.task_domain`` in the run
            metadata, else ``default``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each :class:`~knowledgepulse.value.ScoredItem`.
        keep: how many captured traces the tracer keeps (``.captured``, ``.traces``).
        redact: redact each trace before it is scored and kept: ``True`` (by its privacy
            level, secrets always) or a :class:`~knowledgepulse.redact.items.Redactor`; as
            :func:`~knowledgepulse.integrations.capture.capture` says.

    Raises:
        MissingDependencyError: ``langchain-core`` is not installed.
    """
    tracer_type: type[KPTracer] = _live_module().KPTracer
    return tracer_type(**settings)


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, every LangChain run started in this context goes to ``collector.finish``.

    Used by ``kp.capture``: no ``callbacks=`` needed (a LangChain configure hook adds the tracer).

    Raises:
        MissingDependencyError: ``langchain-core`` is not installed.
    """
    return cast("AbstractContextManager[None]", _live_module().activate(collector))
