"""Sources: the formats kp reads, each recognised by its content and converted to trace items.

A ``ReasoningTrace`` file is read as itself; an agent framework's file (OTLP, LangSmith runs,
the Agents SDK's export, smolagents steps, Pydantic AI messages), an observability tool's
export (Langfuse, Phoenix, Jaeger, OTel JS) and dataset rows of a conversation format are
converted. Pure: reading needs no framework, no scorer and no embedder::

    from knowledgepulse import sources

    for item in sources.read(["runs.jsonl"]):  # each file's source recognised from its content
        ...

Each source is a :class:`Source` registered by name (:func:`register_source`, or the
``knowledgepulse.sources`` entry-point group), the built-ins through the same decorator. The
live collectors that score runs as they finish are :mod:`knowledgepulse.integrations`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from knowledgepulse.sources._envelope import TraceOptions, assemble
from knowledgepulse.sources._inspect import Inspection, inspect_file
from knowledgepulse.sources._read import convert, read
from knowledgepulse.sources._registry import Source, register_source, source_names
from knowledgepulse.sources._rows import RowOptions
from knowledgepulse.sources._steps import StepBuilder

if TYPE_CHECKING:
    SOURCE_CHOICES: tuple[str, ...]


def __getattr__(name: str) -> Any:
    # The names --from takes, made on first use: listing them loads every built-in reader and
    # the entry points, which `import knowledgepulse.sources` alone does not.
    if name == "SOURCE_CHOICES":
        return ("auto", *source_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Inspection",
    "RowOptions",
    "Source",
    "StepBuilder",
    "TraceOptions",
    "assemble",
    "convert",
    "inspect_file",
    "read",
    "register_source",
]
