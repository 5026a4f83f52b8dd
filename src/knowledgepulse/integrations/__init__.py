"""Live collectors: agent runs converted and scored as they finish, and ``capture``.

One hook per framework, each importing its framework only when it is made::

    import knowledgepulse as kp

    graph.invoke(inputs, config={"callbacks": [kp.integrations.langchain.tracer(domain="code")]})
    trace = kp.integrations.pydantic_ai.to_trace(result.all_messages()).trace

Reading a framework's files, exports and dataset rows needs no framework and no scorer: that is
:mod:`knowledgepulse.sources`, whose ``to_trace`` functions are re-exported here beside the
hooks (``smolagents`` and ``pydantic_ai`` have no live hook: their runs are read after the fact).
``docs/integrations.md`` is the contract.
"""

from __future__ import annotations

# Each hook module imports its framework only when a live hook is made, so importing them
# here costs no framework; `kp.integrations.langchain` then works without an import line.
from knowledgepulse.integrations import capture, langchain, openai_agents, otel
from knowledgepulse.sources import pydantic_ai, smolagents

__all__ = [
    "capture",
    "langchain",
    "openai_agents",
    "otel",
    "pydantic_ai",
    "smolagents",
]
