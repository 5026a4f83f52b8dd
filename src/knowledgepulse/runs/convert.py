"""Converting files in one call: a framework's or dataset's files written as traces or rows.

What ``kp convert`` does, as a library call: the items are written as they are read (an OTel
file exporter's run can be long), as ``ReasoningTrace`` JSON Lines, training rows in chat form,
or Harbor ATIF trajectories.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal, TypeAlias

from knowledgepulse._util.atomic import check_destination
from knowledgepulse._util.text import counted
from knowledgepulse.records.json_values import json_text
from knowledgepulse.records.readers import check_openable, listed_inputs
from knowledgepulse.reports.redaction import redaction_tail
from knowledgepulse.reports.value import RunTally, unread_parts
from knowledgepulse.runs.problems import ProblemDigest, ProblemSink
from knowledgepulse.runs.read import read_items, valid_items
from knowledgepulse.runs.redaction import (
    messages_level,
    redactor_of,
    unread_rows,
    written_items,
)
from knowledgepulse.runs.task_field import task_column, told_when_no_task
from knowledgepulse.runs.write import (
    check_output_name,
    item_writer,
    output_form,
    target_of,
    text_output,
)
from knowledgepulse.sources import TraceOptions

if TYPE_CHECKING:
    from knowledgepulse.redact.items import Redactor
    from knowledgepulse.sources._read import Notes

ConvertTo: TypeAlias = Literal["trace", "messages", "atif"]
"""``trace``: ``ReasoningTrace`` JSON Lines; ``messages``: training rows in OpenAI chat form
(JSON Lines, or Parquet for a ``.parquet`` path); ``atif``: Harbor ATIF trajectories."""


@dataclass(frozen=True)
class Converted:
    """What :func:`convert_files` did: traces written, the tally, rows kept, the redactor."""

    traces: int
    tally: RunTally
    kept_rows: int = 0
    redactor: Redactor | None = None

    @property
    def summary(self) -> str:
        """One line: converted, could not be read, rows written back, warnings, redacted."""
        parts = [
            f"converted {counted(self.traces, 'trace')}",
            *unread_parts(self.tally, self.kept_rows),
        ]
        return "; ".join(parts) + redaction_tail(self.redactor)


def convert_files(
    paths: Sequence[str],
    target: str | os.PathLike[str] | IO[str],
    *,
    to: ConvertTo = "trace",
    redact: bool | Redactor = False,
    source: str | None = "auto",
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    on_problem: Callable[[str], object] | ProblemDigest | None = None,
) -> Converted:
    """Write the traces of ``paths`` to ``target`` as they are read.

    Args:
        paths: a framework's or dataset's files, or trace files (``-``: standard input).
        target: a path (a str or a Path, replaced atomically when done) or a text stream.
        to: the form written (:data:`ConvertTo`); with ``messages``, a row that gives no
            trace is written too (every field empty, ``kp_error`` saying why).
        redact: clean the traces of secrets and personal data: ``True`` by each trace's
            privacy level, or a configured ``Redactor``.
        source: a source's name, or ``auto``: recognised from each file's content.
        options: the domain, confidence and row columns of converted traces; training rows
            (``to="messages"``) keep their texts whole, whatever its ``text_limit``.
        notes: told what a reader says about a whole file.
        on_problem: told each record that gives no trace, as a line of text (a
            :class:`~knowledgepulse.runs.problems.ProblemDigest`: the problem, repeats digested).

    Raises:
        InputFileError: a file given is missing (checked before any output).
        OutputError: ``target`` cannot be written.
    """
    target = target_of(target)  # a path given as text is a path, not a stream
    redactor = redactor_of(redact)
    files = listed_inputs(paths)  # the folders' (read as given: strays told apart)
    for path, in_folder in files:
        if not in_folder:  # a found one that cannot be opened is a problem, the rest read
            check_openable(path)  # a missing file fails now, before any output
    messages = to == "messages"
    if messages:  # a training row needs its texts whole, where a trace to share is cut
        options = dataclasses.replace(options or TraceOptions(), text_limit=None)
    if isinstance(target, Path):
        check_output_name(target, parquet=to != "atif")
        check_destination(target, what="output", inputs=[str(file) for file, _ in files])
    unread = unread_rows(redactor) if messages else None
    sink = ProblemSink(unread=unread, show=on_problem)
    read = read_items(
        paths, source=source, options=options, notes=notes, messages=messages_level(redactor)
    )
    valid = told_when_no_task(valid_items(read, None, sink), task_column(options))
    items = written_items(valid, unread, redactor)
    count = 0
    if to == "atif":
        from knowledgepulse.sources._sessions.atif import to_atif  # noqa: PLC0415

        with text_output(target) as stream:
            for item in items:
                stream.write(json_text(to_atif(item.trace)) + "\n")
                count += 1
    else:
        form = output_form(target, (), rows=messages)
        with item_writer(target, form, (), messages=messages, unread=unread) as written:
            for item in items:
                written.write_trace(item)
        count = written.items
    kept = 0 if unread is None else unread.written
    return Converted(count, sink.tally, kept, redactor)
