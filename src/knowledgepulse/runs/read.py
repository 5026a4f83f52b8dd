"""Reading inputs into trace items for a run: the sources' reading, each item with its task.

Every file's source is recognised from its content unless one is named: a ``ReasoningTrace``
file, a framework's export, dataset rows (:func:`knowledgepulse.sources.read`). Problems come in
input order beside the items, never raised: a bad record never stops a run.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypedDict

from knowledgepulse import sources
from knowledgepulse._util.settings import function_of, unknown_keyword
from knowledgepulse.records import Problem
from knowledgepulse.sources import TraceOptions
from knowledgepulse.sources._read import Notes
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.item import with_task
from knowledgepulse.trace.models import PrivacyLevel


def read_items(
    paths: Sequence[str | Path],
    *,
    source: str | None = None,
    options: TraceOptions | None = None,
    task_field: str | None = None,
    notes: Notes | None = None,
    progress: Callable[[int], object] | None = None,
    messages: PrivacyLevel = "private",
) -> Iterator[TraceItem | Problem]:
    """Every trace item of ``paths`` (``-``: standard input), and every problem, in input order.

    Args:
        paths: trace files (JSON, JSON Lines, compressed too), or a framework's or dataset's files
            (Parquet too).
        source: a source's name (``otlp``...), or ``None`` / ``auto``: each file's source is
            recognised from its first record.
        options: the domain, confidence and row columns of converted traces.
        task_field: where each item's task is read: a dataset's column (unless ``options``
            names one), else a dotted path in the trace's JSON (``metadata.task_id``). ``None``:
            a dataset's task column when one is found, else no task (left to inference).
        notes: told what a source says about a whole file.
        progress: told each further count of bytes read.
        messages: the level each problem's message is cleaned at (:func:`secret_free`).

    Raises:
        InputFileError: a file cannot be opened (every one checked before the first item).
        UnknownSourceError: ``source`` is not a registered source.
    """
    items = sources.read(
        paths,
        source=source or "auto",
        options=with_task_column(options, task_field),
        notes=notes,
        progress=progress,
    )
    return with_tasks(without_secrets(items, messages), task_field)


def without_secrets(
    items: Iterable[TraceItem | Problem], level: PrivacyLevel = "private"
) -> Iterator[TraceItem | Problem]:
    """The items, and each problem's message cleaned at ``level`` (:func:`secret_free`).

    A message quotes the value it refuses (``got "ghp_..."; expected a valid boolean``), and
    problems go to stderr, CI logs and reports.
    """
    for item in items:
        yield secret_free(item, level) if isinstance(item, Problem) else item


def secret_free(problem: Problem, level: PrivacyLevel = "private") -> Problem:
    """``problem`` with its message cleaned at ``level``, and its file's name of secrets.

    ``private`` (without ``--redact``): secrets only, an e-mail address is kept. A run that
    redacts gives its level (:func:`~knowledgepulse.runs.redaction.messages_level`): a message
    about a record is an output too, and carries none of the identifiers the records lose.
    """
    # The rules load on the first problem only: a clean input never pays for them.
    from knowledgepulse.redact import clean_text  # noqa: PLC0415

    # The path too: it names the keys it passes, and an unknown key is the input's own text
    # (['eyJ...']: unknown field).
    message = clean_text(problem.message, level).text
    path = clean_text(problem.path, level).text
    where = problem.location
    file = secret_free_file(where.file)
    if message == problem.message and path == problem.path and file == where.file:
        return problem
    location = dataclasses.replace(where, file=file)
    return dataclasses.replace(problem, message=message, path=path, location=location)


@functools.lru_cache(maxsize=64)
def secret_free_file(file: str) -> str:
    """A file's name as messages and reports show it: its secrets redacted, nothing else.

    The name the user gave is kept otherwise: a home path or an e-mail in it is how they find
    the file (a CI runner's home folder too). Cached: every problem and report row of
    a file names it.
    """
    from knowledgepulse.redact import clean_text  # noqa: PLC0415 - the rules load on first use

    return clean_text(file, "private").text


class TraceSettings(TypedDict, total=False):
    """How converted traces are read: the keywords of ``kp``'s ``--domain``... options.

    ``--success-field`` is ``success_field``, and so on; all optional.

    Each sets that field of ``options`` (a :class:`~knowledgepulse.sources.TraceOptions`)
    over what ``options`` says; ``None``: not said.

    Attributes:
        domain: the ``task_domain`` of every converted trace (it selects the weight profile).
        confidence: the outcome confidence of every converted trace, in [0, 1].
        messages_field: the column holding each row's conversation.
        id_field: the column holding each row's id.
        success_field: the column saying whether a run succeeded: a boolean, or a number (a
            reward) compared with ``success_threshold``.
        success_threshold: a number in the success column at or above it is a success.
        domain_field: the column giving each row's ``task_domain``.
    """

    domain: str | None
    confidence: float | None
    messages_field: str | None
    id_field: str | None
    success_field: str | None
    success_threshold: float | None
    domain_field: str | None


def options_with(
    options: TraceOptions | None, settings: Mapping[str, Any], call: Callable[..., Any]
) -> TraceOptions | None:
    """``options`` with the :class:`TraceSettings` given in ``settings`` set over them.

    ``settings``: the keywords ``call`` (the function given them) took in its ``**reading``.

    Raises:
        SettingTypeError: a key of ``settings`` that is no setting of ``call`` (a TypeError, as
            Python's own for a misspelt keyword), with the closest of its own and its reading
            settings (``select(budgt=10)``: ``budget``).
    """
    known = TraceSettings.__optional_keys__
    unknown = sorted(settings.keys() - known)
    if unknown:
        raise unknown_keyword(call.__name__, unknown[0], {*known, *_named_parameters(call)})
    given = {key: value for key, value in settings.items() if value is not None}
    if not given:
        return options
    base = options or TraceOptions()
    rows = {key: value for key, value in given.items() if key not in ("domain", "confidence")}
    return TraceOptions(
        domain=given.get("domain", base.domain),
        confidence=given.get("confidence", base.confidence),
        rows=dataclasses.replace(base.rows, **rows),
    )


def _named_parameters(call: Callable[..., Any]) -> list[str]:
    """The settings of ``call`` other than its ``**`` ones: its keyword-only parameters."""
    parameters = inspect.signature(call).parameters.values()
    return [parameter.name for parameter in parameters if parameter.kind == parameter.KEYWORD_ONLY]


def trace_options(task_field: str | None = None, **settings: Any) -> TraceOptions | None:
    """The options of converted traces from ``kp``'s (``None`` values: not given).

    ``settings``: :class:`TraceSettings`, the keywords the Python calls take too; ``task_field``
    the rows' task column. ``None`` when nothing is given. They apply to whatever is converted,
    named or recognised by content; a ``ReasoningTrace`` keeps its own domain and confidence,
    and the reader warns that it does.
    """
    return options_with(with_task_column(None, task_field), settings, trace_options)


def with_task_column(options: TraceOptions | None, task_field: str | None) -> TraceOptions | None:
    """The options with ``task_field`` as the rows' task column, unless they name one."""
    if task_field is None or (options is not None and options.rows.task_field is not None):
        return options
    options = options or TraceOptions()
    return dataclasses.replace(
        options, rows=dataclasses.replace(options.rows, task_field=task_field)
    )


def with_tasks(
    items: Iterable[TraceItem | Problem], task_field: str | None
) -> Iterator[TraceItem | Problem]:
    """Each item with its task: the one it was read with, else the one at ``task_field``."""
    for item in items:
        yield with_task(item, task_field) if isinstance(item, TraceItem) else item


OnProblem = Callable[[Problem], object]
"""Told each record that gives no trace item, as it is read."""

_log = logging.getLogger("knowledgepulse")

folding: ContextVar[OnProblem | None] = ContextVar("folding", default=None)
"""Where :func:`logged` tells a problem in a call that folds repeats (``None``: none does).

Set by :func:`~knowledgepulse.runs.problems.repeats_folded`.
"""


def log_warning(line: str) -> None:
    """``line`` as a warning on the ``knowledgepulse`` logger."""
    _log.warning("%s", line)


def logged(problem: Problem) -> None:
    """The ``on_problem`` of every one-call function given none: a logged warning.

    On the ``knowledgepulse`` logger, so that a row a result leaves out is never left unsaid;
    in a call that folds repeats (:data:`folding`), a kind's first few, then a count of the rest.
    """
    fold = folding.get()
    if fold is None:
        log_warning(str(problem))
    else:
        fold(problem)


def told_of(on_problem: OnProblem | None) -> OnProblem:
    """``on_problem``, or :func:`logged` for ``None``.

    Raises:
        SettingTypeError: ``on_problem`` is not a function (checked before any record is read,
            not when the first problem is told).
    """
    if on_problem is None:
        return logged
    return function_of(on_problem, "on_problem", "a function taking a Problem (problems.append)")


def tell_both(first: OnProblem, second: OnProblem) -> OnProblem:
    """An ``OnProblem`` that tells ``first``, then ``second``."""

    def told(problem: Problem) -> None:
        first(problem)
        second(problem)

    return told


def valid_items(
    stream: Iterable[TraceItem | Problem],
    problems: list[Problem] | None,
    on_problem: OnProblem | None,
) -> Iterator[TraceItem]:
    """The items of ``stream``; each problem kept in ``problems`` if given, told ``on_problem``."""
    for item in stream:
        if isinstance(item, TraceItem):
            yield item
            continue
        if problems is not None:
            problems.append(item)
        if on_problem is not None:
            on_problem(item)
