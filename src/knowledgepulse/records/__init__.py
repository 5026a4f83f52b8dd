"""Reading JSON, JSON Lines, YAML and Parquet input into records that remember where they came from.

A part of the input that cannot be parsed becomes a located :class:`Problem` in the stream, in
input order; the records around it are still read. ``.gz`` files and standard input are read as
they are decompressed, JSON Lines line by line and a JSON list element by element.
"""

from __future__ import annotations

from knowledgepulse.errors import Location, Problem
from knowledgepulse.records.json_values import Record
from knowledgepulse.records.readers import STDIN, STDIN_NAME, Format, read_records

__all__ = ["STDIN", "STDIN_NAME", "Format", "Location", "Problem", "Record", "read_records"]
