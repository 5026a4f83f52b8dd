"""The fixed words of a ``ReasoningTrace``, for the models and the compiled check alike."""

from __future__ import annotations

from typing import Literal

CONTEXT_URLS: tuple[str, ...] = (
    "https://openknowledgepulse.org/schema/v1",
    "https://knowledgepulse.dev/schema/v1",
)
"""Both ``@context`` URLs the seeds use; either validates."""

StepType = Literal["thought", "tool_call", "observation", "error_recovery"]
STEP_TYPES: tuple[StepType, ...] = ("thought", "tool_call", "observation", "error_recovery")
