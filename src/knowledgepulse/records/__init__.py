"""Reading JSON, JSON Lines, YAML, Parquet and Arrow input into records and located problems.

A :class:`Record` is one input value with its :class:`Location`; what is wrong with the input is
a located :class:`Problem`. The readers are in ``readers`` (:func:`~.readers.read_records`).
"""

from __future__ import annotations

from knowledgepulse.errors import Location, Problem
from knowledgepulse.records.json_values import Record

__all__ = ["Location", "Problem", "Record"]
