"""A run's problems: each counted, kept if asked, and handed on as it is found."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from knowledgepulse.records import Problem
from knowledgepulse.reports.value import RunTally
from knowledgepulse.value.scorer import DEFAULT_THRESHOLD

if TYPE_CHECKING:
    from knowledgepulse.runs.write import UnreadRows


class ProblemSink:
    """Counts each problem in ``tally``, keeps it if asked, and tells ``unread`` and ``show``.

    ``unread``: the rows that gave no trace, to be written back; ``show``: given each problem as
    a line of text as it is found (a shell prints it).
    """

    def __init__(
        self,
        tally: RunTally | None = None,
        *,
        keep: bool = False,
        unread: UnreadRows | None = None,
        show: Callable[[str], object] | None = None,
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
        if self._show is not None:
            self._show(str(problem))
