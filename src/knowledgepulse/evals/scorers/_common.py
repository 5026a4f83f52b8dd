"""What the built-in scorers share: pattern parameters and how diagnoses name operations.

Diagnoses are built from a result's details alone (that is all :meth:`Scorer.diagnose` gets), so
the helpers here read operations in their JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator

from knowledgepulse.evals.patterns import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, preview

PositiveMs = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]


class PatternParams(BaseModel):
    """Parameters of the scorers that search content patterns."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ignore_case: StrictBool = Field(
        default=False, description="Match patterns without regard to letter case."
    )
    timeout_ms: PositiveMs = Field(
        default=DEFAULT_TIMEOUT_MS,
        description="Longest time one pattern may search one page, in ms; past it the pattern "
        "counts as not matched and an issue says it timed out.",
    )

    @field_validator("timeout_ms")
    @classmethod
    def _bounded(cls, value: float) -> float:
        # The bound is what keeps a catastrophic pattern from hanging a run: it cannot be lifted.
        if value > MAX_TIMEOUT_MS:
            raise ValueError(
                f"at most {MAX_TIMEOUT_MS:g} ms (one minute) per pattern and page; the bound keeps "
                "a catastrophic pattern from hanging the run, so it cannot be switched off"
            )
        return value


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``..."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def quote(text: str, limit: int = 60) -> str:
    """Text in single quotes, cut to ``limit`` characters, newlines shown escaped."""
    return f"'{preview(text, limit)}'"


def describe_target(op: Mapping[str, Any]) -> str:
    """The target an operation (JSON form) names: ``block 'b2' (targetIndex 1)``, ``no target``."""
    block_id, index = op.get("targetBlockId"), op.get("targetIndex")
    if block_id is not None and index is not None:
        return f"block '{block_id}' (targetIndex {index})"
    if block_id is not None:
        return f"block '{block_id}'"
    if index is not None:
        return f"targetIndex {index}"
    return "no target"


def describe_operation(op: Mapping[str, Any]) -> str:
    """An operation (JSON form) in words: ``insert before block 'b2' on page 'p1'``."""
    kind = str(op.get("type"))
    has_target = op.get("targetBlockId") is not None or op.get("targetIndex") is not None
    if kind == "insert":
        position = op.get("position") or "after"
        if has_target:
            text = f"insert {position} {describe_target(op)}"
        else:
            text = "insert at the page start" if position == "before" else "insert at the page end"
    else:
        text = f"{kind} {describe_target(op)}" if has_target else f"{kind} with no target"
    if op.get("pageId") is not None:
        text += f" on page '{op['pageId']}'"
    return text


def operation_label(side: str, index: int, op: Mapping[str, Any]) -> str:
    """``actual.operations[3] (update of block 'b2')``: where to find it, and what it is."""
    return f"{side}.operations[{index}] ({describe_operation(op)})"
