"""A run's problems: each counted, kept if asked, and handed on as it is found.

:func:`validate_files` is a run of reading only: the valid traces counted, the problems found.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from knowledgepulse._util.repeats import RepeatDigest, Repeats
from knowledgepulse.records import Problem
from knowledgepulse.reports.value import RunTally, validation_line, validation_report
from knowledgepulse.runs.read import folding, log_warning, read_items, valid_items
from knowledgepulse.runs.task_field import task_column, told_when_no_task
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from knowledgepulse.runs.write import UnreadRows
    from knowledgepulse.sources import TraceOptions
    from knowledgepulse.sources._read import Notes


class ProblemDigest:
    """Shows the first ``first`` problems of each kind as lines; the rest are counted.

    A kind is a file's same message at the same path: a table of 100,000 rows of the wrong
    shape gives 100,000 identical problems, and a terminal flooded with them hides the rest. A
    problem of a whole file (no line, no row) is of a kind with the same one of other files: a
    folder's 300 ``package.json`` files skipped are three lines and a count.
    :meth:`close` shows one line per kind for those not shown. Only the lines shown are
    digested: every problem is still counted, kept and written back by its sink.
    """

    def __init__(self, show: Callable[[str], object], first: int = 3) -> None:
        self._digest = RepeatDigest(show, _more_problems, first)

    def __call__(self, problem: Problem) -> None:
        """Show ``problem`` if few of its kind were shown, else count it."""
        location = problem.location
        whole_file = location.line is None and location.index is None
        file = None if whole_file else location.file
        kind = (file, problem.path, problem.message, problem.warning)
        self._digest(kind, str(problem), str(location))

    def close(self) -> None:
        """Show one line for each kind with problems not shown; forget them."""
        self._digest.close()


def _more_problems(kind: object, more: Repeats) -> str:
    whole_files = isinstance(kind, tuple) and kind[0] is None
    unit = "file" if whole_files else "record"
    units = unit if more.count == 1 else f"{unit}s"
    return (
        f"... and {more.count:,} more {units} with the same problem "
        f"(first at {more.first}, last at {more.last})"
    )


@contextmanager
def repeats_folded() -> Iterator[None]:
    """In this call (a decorator too) the problems logged by default are folded as ``kp``'s are.

    A :class:`ProblemDigest` on the ``knowledgepulse`` logger: a kind's first three, then, as
    the call ends, one line counting the rest (``... and 49,997 more records with the same
    problem``), so that a wrong ``source=`` on 50,000 rows is four lines, not 50,000. Nested
    calls fold into the outermost's.
    """
    if folding.get() is not None:
        yield
        return
    digest = ProblemDigest(log_warning)
    token = folding.set(digest)
    try:
        yield
    finally:
        folding.reset(token)
        digest.close()


class ProblemSink:
    """Counts each problem in ``tally``, keeps it if asked, and tells ``unread`` and ``show``.

    ``unread``: the rows that gave no trace, to be written back; ``show``: given each problem as
    a line of text as it is found (a shell prints it), or a :class:`ProblemDigest` given the
    problem itself.
    """

    def __init__(
        self,
        tally: RunTally | None = None,
        *,
        keep: bool = False,
        unread: UnreadRows | None = None,
        show: Callable[[str], object] | ProblemDigest | None = None,
    ) -> None:
        self.tally = tally or RunTally(DEFAULT_THRESHOLD)
        self.kept: list[Problem] = []
        self._keep = keep
        self._unread = unread
        self._show = show

    def __call__(self, problem: Problem) -> None:
        """Count ``problem``, keep it if asked, and tell it on."""
        self.tally.add_problem(problem)
        if self._keep:  # its message, not its record: a report's memory stays small
            self.kept.append(dataclasses.replace(problem, record=None))
        if self._unread is not None:
            self._unread.add(problem)
        if isinstance(self._show, ProblemDigest):
            self._show(problem)
        elif self._show is not None:
            self._show(str(problem))


@dataclasses.dataclass(frozen=True)
class Validated:
    """What :func:`validate_files` found: the valid traces, the tally, the problems kept."""

    valid: int
    tally: RunTally
    problems: list[Problem]

    @property
    def report(self) -> dict[str, Any]:
        """The JSON report: the valid and invalid counts, warnings and each problem kept."""
        return validation_report(self.valid, self.tally, self.problems)

    @property
    def summary(self) -> str:
        """One line: ``5 valid traces; 1 invalid record; 2 warnings``."""
        return validation_line(self.valid, self.tally)


def validate_files(
    paths: Sequence[str],
    *,
    keep: bool = False,
    source: str | None = None,
    options: TraceOptions | None = None,
    notes: Notes | None = None,
    on_problem: Callable[[str], object] | ProblemDigest | None = None,
    progress: Callable[[int], object] | None = None,
    validated: Callable[[int], object] | None = None,
) -> Validated:
    """Read ``paths`` as a scoring run would, without scoring: count the valid traces.

    Args:
        paths: trace files, or a framework's or dataset's files (``-``: standard input).
        keep: keep each problem (its message) for :attr:`Validated.report`.
        source: a source's name, or ``None`` / ``auto``: recognised from the content.
        options: the domain, confidence and row columns of converted traces.
        notes: told what a reader says about a whole file.
        on_problem: told each record that gives no valid trace, as a line of text (a
            :class:`ProblemDigest`: the problem, its repeats digested).
        progress: told each further count of bytes read.
        validated: told the valid traces so far.
    """
    sink = ProblemSink(keep=keep, show=on_problem)
    read = read_items(paths, source=source, options=options, notes=notes, progress=progress)
    valid = 0
    for _ in told_when_no_task(valid_items(read, None, sink), task_column(options)):
        valid += 1
        if validated is not None:
            validated(valid)
    return Validated(valid, sink.tally, sink.kept)
