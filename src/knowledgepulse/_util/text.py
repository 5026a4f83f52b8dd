"""Small text helpers for messages and summaries."""

from __future__ import annotations


def counted(count: int, noun: str) -> str:
    """``1 trace``, ``2 traces``: a count and its noun, plural when it is not one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
