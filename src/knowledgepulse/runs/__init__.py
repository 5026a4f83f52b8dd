"""Workflows as library calls: read items, redact, score, select, dedupe, write rows back.

Each ``kp`` command is option parsing, one call here, a write and a summary; the pytest plugin
and Ray run the same steps.
"""

from __future__ import annotations

from knowledgepulse.runs.inputs import RunInput, items_of
from knowledgepulse.runs.read import read_items

__all__ = ["RunInput", "items_of", "read_items"]
