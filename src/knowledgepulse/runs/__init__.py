"""Workflows as library calls: read items, redact, score, select, dedupe, write rows back.

Each ``kp`` command is option parsing, one call here, a write and a summary; the pytest plugin
and Ray run the same steps. :func:`score`, :func:`annotate` and :func:`redact` are the one-call
forms for Python data (``docs/python-api.md``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from knowledgepulse.runs.inputs import RunInput, items_of
from knowledgepulse.runs.read import read_items

if TYPE_CHECKING:
    from knowledgepulse.runs.api import Redaction, annotate, redact, score
    from knowledgepulse.runs.curate import (
        DedupeGroup,
        DedupeResult,
        Rejected,
        SelectionResult,
        dedupe,
        select,
    )
    from knowledgepulse.runs.redaction import redact_items
    from knowledgepulse.runs.scoring import ScoreRun, score_items
    from knowledgepulse.runs.write import ItemWriter, item_writer

# Curation brings numpy, scoring the scorer, redaction its rules: imported on first use (PEP
# 562), so reading alone stays light.
_HOME_OF = {
    "DedupeGroup": "curate",
    "DedupeResult": "curate",
    "ItemWriter": "write",
    "Redaction": "api",
    "Rejected": "curate",
    "ScoreRun": "scoring",
    "SelectionResult": "curate",
    "annotate": "api",
    "dedupe": "curate",
    "item_writer": "write",
    "redact": "api",
    "redact_items": "redaction",
    "score": "api",
    "score_items": "scoring",
    "select": "curate",
}


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME_OF})


__all__ = [
    "DedupeGroup",
    "DedupeResult",
    "ItemWriter",
    "Redaction",
    "Rejected",
    "RunInput",
    "ScoreRun",
    "SelectionResult",
    "annotate",
    "dedupe",
    "item_writer",
    "items_of",
    "read_items",
    "redact",
    "redact_items",
    "score",
    "score_items",
    "select",
]
