"""LangChain / LangGraph runs and LangSmith run files as ``ReasoningTrace`` documents.

From a run (``client.read_run(run_id, load_child_runs=True)``) or its JSON::

    item = kp.integrations.langchain.to_trace(run, domain="code")

From a file (a run with ``child_runs``, a list of runs, or ``{"post": [...], "patch": [...]}``
batches): ``kp convert --from langsmith FILE``. LangChain's tracer runs and LangSmith's runs share
one schema, so one mapping serves both (``docs/integrations.md``). Domain and confidence come
from the argument, else the run metadata keys ``kp.task_domain`` / ``kp.confidence``
(``config={"metadata": {...}}``), else the defaults. Nothing here imports ``langchain_core``; the
live tracer is :mod:`knowledgepulse.integrations.langchain`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from knowledgepulse.errors import ConversionError
from knowledgepulse.sources._envelope import TraceOptions
from knowledgepulse.sources.langchain._files import dump_run, trees
from knowledgepulse.sources.langchain._runs import convert_tree
from knowledgepulse.trace import TraceItem


def to_trace(run: Any, *, domain: str | None = None, confidence: float | None = None) -> TraceItem:
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
            f"expected one root run, found {len(found)}; give one trace's runs, or read a file "
            "of many with sources.read(paths, source='langsmith')"
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
