"""Workflows as library calls: read, redact, score, select, dedupe, split, write back; evaluate.

Each ``kp`` command is option parsing, one call here, a write and a summary; the pytest plugin
and Ray run the same steps. :func:`score`, :func:`annotate` and :func:`redact` are the one-call
forms for Python data (``docs/python-api.md``); :func:`decontaminate` cleans a set of
another's copies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from knowledgepulse.runs.inputs import RunInput as RunInput
from knowledgepulse.runs.inputs import items_of

if TYPE_CHECKING:
    from knowledgepulse.runs.api import Redaction as Redaction
    from knowledgepulse.runs.api import annotate, redact, score
    from knowledgepulse.runs.contamination import DecontaminationResult as DecontaminationResult
    from knowledgepulse.runs.contamination import decontaminate
    from knowledgepulse.runs.curate import DedupeResult as DedupeResult
    from knowledgepulse.runs.curate import SelectionResult as SelectionResult
    from knowledgepulse.runs.curate import dedupe, select
    from knowledgepulse.runs.evaluation import EvalOutcome as EvalOutcome
    from knowledgepulse.runs.evaluation import evaluate_cases
    from knowledgepulse.runs.splits import SplitResult as SplitResult
    from knowledgepulse.runs.splits import split

# Curation brings numpy, scoring the scorer, redaction its rules, evaluation the scorers:
# imported on first use (PEP 562), so reading alone stays light. The steps under these calls
# (``scoring``, ``write``, ``redaction``, ``on_ray``) are imported from their modules.
_HOME_OF = {
    "DecontaminationResult": "contamination",
    "DedupeResult": "curate",
    "EvalOutcome": "evaluation",
    "Redaction": "api",
    "SelectionResult": "curate",
    "SplitResult": "splits",
    "annotate": "api",
    "decontaminate": "contamination",
    "dedupe": "curate",
    "evaluate_cases": "evaluation",
    "redact": "api",
    "score": "api",
    "select": "curate",
    "split": "splits",
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


# The calls. What they return is reachable here too (``runs.SelectionResult``), and the input
# type is ``runs.inputs.RunInput``.
__all__ = [
    "annotate",
    "decontaminate",
    "dedupe",
    "evaluate_cases",
    "items_of",
    "redact",
    "score",
    "select",
    "split",
]
