"""Workflows as library calls: read, redact, score, select, dedupe, write back; evaluate cases.

Each ``kp`` command is option parsing, one call here, a write and a summary; the pytest plugin
and Ray run the same steps.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from knowledgepulse.runs.inputs import RunInput, items_of
from knowledgepulse.runs.read import read_items

if TYPE_CHECKING:
    from knowledgepulse.runs.curate import (
        DedupeGroup,
        DedupeResult,
        Rejected,
        SelectionResult,
        dedupe,
        select,
    )
    from knowledgepulse.runs.evaluation import CaseCheck, EvalOutcome, check_cases, evaluate_cases

# Curation brings numpy, evaluation the scorers: imported on first use (PEP 562), so reading
# alone stays light.
_HOME_OF = {
    "CaseCheck": "evaluation",
    "EvalOutcome": "evaluation",
    "check_cases": "evaluation",
    "evaluate_cases": "evaluation",
    "DedupeGroup": "curate",
    "DedupeResult": "curate",
    "Rejected": "curate",
    "SelectionResult": "curate",
    "dedupe": "curate",
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
    "CaseCheck",
    "DedupeGroup",
    "DedupeResult",
    "EvalOutcome",
    "Rejected",
    "RunInput",
    "SelectionResult",
    "check_cases",
    "dedupe",
    "evaluate_cases",
    "items_of",
    "read_items",
    "select",
]
