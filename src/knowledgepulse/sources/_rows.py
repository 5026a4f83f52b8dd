"""What a user says about the columns of a dataset's rows (``--messages-field`` and the rest).

Kept apart from the readers that use it, so that :class:`TraceOptions` can carry it without
importing them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from knowledgepulse._util.settings import number_of, text_of
from knowledgepulse.errors import ScorerParameterError, Setting

DEFAULT_SUCCESS_THRESHOLD = 0.5
"""A number in the success column counts as success from this value up, unless told."""


def no_field(name: str, field: str, had: str, keys: str, give: str) -> ScorerParameterError:
    """The error for a ``name`` (``task_field``, ``id_field``) that no item of the input has.

    A misspelling, not a field to read past: ``had`` says what lacked it (``row``, ``trace``),
    ``keys`` what they have instead (``; the rows have id, messages``), ``give`` what to give.
    Raised as a parameter's, ``kp`` shows it as a usage error naming its option.
    """
    return ScorerParameterError(
        Setting(name, field), f": no {had} has it (misspelt?){keys}; {give}"
    )


@dataclass(frozen=True, slots=True)
class RowOptions:
    """The columns of a row that hold its conversation and its labels (``None``: guessed).

    Attributes:
        messages_field: the column holding the conversation (a list, or a JSON string of one).
        id_field: the column holding the row's id; without one the id is
            ``kp:trace:<file stem>:<row>``.
        task_field: the column naming the task the row is a run of (kept in
            ``metadata.source.task``).
        success_field: the column saying whether the run succeeded: a boolean, or a number
            (a reward) compared with ``success_threshold``.
        success_threshold: a number in the success column at or above it is a success.
        domain_field: the column giving the trace's ``task_domain``.
    """

    messages_field: str | None = None
    id_field: str | None = None
    task_field: str | None = None
    success_field: str | None = None
    success_threshold: float | None = None
    domain_field: str | None = None

    def __post_init__(self) -> None:
        if self.success_threshold is not None:
            number_of(self.success_threshold, "success_threshold", "a finite number", math.isfinite)
        for field in fields(self):
            column = getattr(self, field.name)
            if field.name.endswith("_field") and column is not None:
                text_of(column, field.name, "a column's name")

    def row_only(self) -> tuple[str, ...]:
        """The options given that only dataset rows have (a trace's task has a dotted path too)."""
        return tuple(
            field.name
            for field in fields(self)
            if field.name != "task_field" and getattr(self, field.name) is not None
        )
