"""Reading JSON, JSON Lines, YAML and Parquet input into records and located problems."""

from __future__ import annotations

from knowledgepulse.errors import Location, Problem
from knowledgepulse.records.json_values import Record
from knowledgepulse.records.readers import STDIN, STDIN_NAME, Format, read_records

__all__ = ["STDIN", "STDIN_NAME", "Format", "Location", "Problem", "Record", "read_records"]
