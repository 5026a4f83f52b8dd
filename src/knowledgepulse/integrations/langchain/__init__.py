"""LangChain / LangGraph runs and LangSmith run files as ``ReasoningTrace`` documents.

Live, one line (any runnable: a chain, a LangGraph graph)::

    import knowledgepulse as kp

    tracer = kp.integrations.langchain.tracer(domain="code")
    graph.invoke(inputs, config={"callbacks": [tracer]})
    tracer.captured[-1].breakdown.score

After the fact, from a run (``client.read_run(run_id, load_child_runs=True)``) or its JSON::

    converted = kp.integrations.langchain.to_trace(run, domain="code")

From a file (a run with ``child_runs``, a list of runs, or ``{"post": [...], "patch": [...]}``
batches): ``kp convert --from langsmith FILE``. LangChain's tracer runs and LangSmith's runs share
one schema, so one mapping serves both (``spec/integrations.md``). Domain and confidence come
from the argument, else the run metadata keys ``kp.task_domain`` / ``kp.confidence``
(``config={"metadata": {...}}``), else the defaults. Nothing imports ``langchain_core`` until
:func:`tracer` or :func:`activate` is called.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from knowledgepulse.errors import missing_extra
from knowledgepulse.integrations._collector import DEFAULT_KEEP, Collector, OnTrace
from knowledgepulse.integrations._envelope import ConversionError, ConvertedTrace, TraceOptions
from knowledgepulse.integrations.langchain._files import (
    CONTENT_HINT,
    convert_records,
    dump_run,
    recognises,
    trees,
)
from knowledgepulse.integrations.langchain._runs import convert_tree
from knowledgepulse.value import TraceValueScorer

if TYPE_CHECKING:
    from knowledgepulse.integrations.langchain._live import KPTracer


def _live_module() -> ModuleType:
    try:
        importlib.import_module("langchain_core.tracers.base")
    except ImportError as error:
        raise missing_extra("langchain-core", "langchain", error) from error
    return importlib.import_module("knowledgepulse.integrations.langchain._live")


def tracer(
    *,
    domain: str | None = None,
    confidence: float | None = None,
    scorer: TraceValueScorer | None = None,
    on_trace: OnTrace | None = None,
    keep: int = DEFAULT_KEEP,
    redact: bool = False,
) -> KPTracer:
    """A LangChain tracer (``BaseTracer``) that converts and scores every finished root run.

    Args:
        domain: the ``task_domain`` of every trace (else ``kp.task_domain`` in the run
            metadata, else ``default``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each :class:`~knowledgepulse.integrations.CapturedTrace`.
        keep: how many captured traces the tracer keeps (``.captured``, ``.traces``).
        redact: redact each trace (secrets always, personal identifiers by its
            ``metadata.privacy_level``; see :mod:`knowledgepulse.redact`) before it is scored
            and kept; only novelty reads its text, so only novelty can change.

    Raises:
        MissingDependencyError: ``langchain-core`` is not installed.
    """
    tracer_type: type[KPTracer] = _live_module().KPTracer
    return tracer_type(
        domain=domain,
        confidence=confidence,
        scorer=scorer,
        on_trace=on_trace,
        keep=keep,
        redact=redact,
    )


def activate(collector: Collector) -> AbstractContextManager[None]:
    """While inside, every LangChain run started in this context goes to ``collector.finish``.

    Used by ``kp.capture``: no ``callbacks=`` needed (a LangChain configure hook adds the tracer).

    Raises:
        MissingDependencyError: ``langchain-core`` is not installed.
    """
    context: AbstractContextManager[None] = _live_module().activate(collector)
    return context


def to_trace(
    run: Any, *, domain: str | None = None, confidence: float | None = None
) -> ConvertedTrace:
    """One run tree as a ``ReasoningTrace``.

    Args:
        run: a live root run with its ``child_runs`` (a LangChain tracer's ``Run``, a LangSmith
            ``Run`` or ``RunTree``), or its JSON (text, bytes, or parsed): a run with
            ``child_runs``, a list of runs linked by ``parent_run_id``, or a ``{"post": [...],
            "patch": [...]}`` batch. It must hold exactly one root run.
        domain: the trace's ``task_domain`` (default ``default``).
        confidence: the outcome's confidence (default 0.8 on success, 0.2 on failure).

    Raises:
        ConversionError: ``run`` is none of these, holds no root run or several, or no step.
    """
    value = _plain(run)
    found, problems = trees(value)
    if problems:
        raise ConversionError("; ".join(problems[:5]))
    if len(found) != 1:
        raise ConversionError(
            f"expected one root run, found {len(found)}; give one trace's runs, or convert a "
            "file of many with `kp convert --from langsmith`"
        )
    return convert_tree(found[0], TraceOptions(domain=domain, confidence=confidence))


def _plain(run: Any) -> Any:
    if isinstance(run, bytes | bytearray | str):
        try:
            return json.loads(run)
        except ValueError as error:
            raise ConversionError(f"the runs are not valid JSON: {error}") from error
    if isinstance(run, Mapping):
        return run
    if isinstance(run, list | tuple):
        return [item if isinstance(item, Mapping) else dump_run(item) for item in run]
    if hasattr(run, "run_type"):
        return dump_run(run)
    raise ConversionError(f"not a LangChain or LangSmith run: a {type(run).__name__}")


__all__ = [
    "CONTENT_HINT",
    "activate",
    "convert_records",
    "dump_run",
    "recognises",
    "to_trace",
    "tracer",
]
