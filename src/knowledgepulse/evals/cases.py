"""Loading evaluation cases from JSON, JSON Lines and YAML files, keeping where each came from.

A malformed case becomes a :class:`MalformedCase` carrying every problem found in it (file,
line or index, JSON path, message); the cases around it are still read and run. A content
pattern that is not a valid regular expression, or that would cost too much to compile, makes
its case malformed: the case file is wrong, and a score around it would measure the file.
What the bulk-edit scorers read (operations, at least one page) depends on the suite, so it is
checked against one later (:func:`knowledgepulse.evals.needs.fit_cases`, and every run).

A part of a file that cannot be read at all (a syntax error, a file cut short) is a
:class:`FileProblem`, not a case: the records before it were read, those after it are lost.
Warnings (a case id used twice, an unpaired surrogate escape) ride with their case.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowledgepulse._util.pydantic_errors import problems_from
from knowledgepulse.errors import CaseValidationError
from knowledgepulse.evals.models import Case
from knowledgepulse.evals.patterns import compile_pattern, pattern_problem
from knowledgepulse.records import Location, Problem, Record, read_records


@dataclass(frozen=True, slots=True)
class LoadedCase:
    """A valid case and where it was read from.

    Attributes:
        case: the validated case.
        location: where the record starts.
        warnings: located warnings about it (its id used before, say); they reject nothing.
    """

    case: Case
    location: Location
    warnings: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class MalformedCase:
    """A record that is not a valid case, with everything wrong with it.

    Attributes:
        location: where the record starts.
        problems: each problem with its own location and JSON path.
        case_id: the record's ``id`` when it has a string one, else ``None``.
        warnings: located warnings about it, as for :class:`LoadedCase`.
    """

    location: Location
    problems: tuple[Problem, ...]
    case_id: str | None = None
    warnings: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A part of a case file that could not be read as records (a syntax error, say).

    Attributes:
        problem: where and why; a ``warning`` problem (a stray character in a comment) rejects
            nothing.
    """

    problem: Problem

    @property
    def location(self) -> Location:
        """Where in the file it is."""
        return self.problem.location


CaseInput = LoadedCase | MalformedCase | FileProblem


def parse_case(value: Any, *, source: str = "<case>") -> Case:
    """Validate parsed JSON as a :class:`Case`.

    Raises:
        CaseValidationError: listing every problem with its JSON path.
    """
    if isinstance(value, Case):
        return value
    result = validate_case(Record(Location(source), value))
    if isinstance(result, LoadedCase):
        return result.case
    raise CaseValidationError(f"{source}: not a valid case", result.problems)


def validate_case(record: Record) -> LoadedCase | MalformedCase:
    """A record as a valid case, or a malformed one with every problem found in it.

    Every content pattern is compiled here, so an invalid one is reported before the case runs.
    """
    raw_id = record.value.get("id") if isinstance(record.value, dict) else None
    case_id = raw_id if isinstance(raw_id, str) else None
    try:
        case = Case.model_validate(record.value)
    except ValidationError as error:
        return MalformedCase(record.location, tuple(problems_from(error, record)), case_id)
    # Kept on the case, so a problem found later (against a suite) points at its own line.
    case._lines = record.lines
    bad_patterns = tuple(_pattern_problems(case, record))
    if bad_patterns:
        return MalformedCase(record.location, bad_patterns, case_id)
    return LoadedCase(case, record.location)


def _pattern_problems(case: Case, record: Record) -> Iterator[Problem]:
    """Each content pattern that cannot be compiled; the patterns' shape is checked elsewhere."""
    expected = case.expected
    patterns = expected.get("contentPatterns") if isinstance(expected, dict) else None
    located: Iterable[tuple[tuple[str | int, ...], object]]
    if isinstance(patterns, list):
        located = ((("expected", "contentPatterns", i), p) for i, p in enumerate(patterns))
    elif isinstance(patterns, dict):
        located = (
            (("expected", "contentPatterns", page_id, i), p)
            for page_id, items in patterns.items()
            if isinstance(items, list)
            for i, p in enumerate(items)
        )
    else:
        return
    for loc, pattern in located:
        if not isinstance(pattern, str):
            continue
        refused = pattern_problem(pattern)
        if refused is not None:
            yield record.problem(loc, f"pattern refused: {refused}")
            continue
        compiled = compile_pattern(pattern, False)
        if isinstance(compiled, str):
            yield record.problem(
                loc,
                f"not a valid regular expression: {compiled}; fix the pattern (a backslash "
                "makes a special character literal, as in '\\(')",
            )


def iter_cases(sources: str | Path | Iterable[str | Path]) -> Iterator[CaseInput]:
    """Read cases from files (``-`` is standard input), in order, as they are read.

    A JSON file holds one case or a list; a JSON Lines file one case a line; a YAML file one
    case, a list, or several ``---`` documents. Yields valid and malformed cases, and a
    :class:`FileProblem` for each part of a file that cannot be read as records. A case id
    already used (in any of the files) gives the later case a warning.

    Raises:
        InputFileError: a file cannot be opened at all.
    """
    paths = [sources] if isinstance(sources, str | Path) else list(sources)
    first_seen: dict[str, Location] = {}
    for source in paths:
        yield from _file_cases(read_records(source, formats=("json", "jsonl", "yaml")), first_seen)


def _file_cases(
    items: Iterable[Record | Problem], first_seen: dict[str, Location]
) -> Iterator[CaseInput]:
    """Records become cases; a record's problems (and warnings) are gathered into one case."""
    pending = _Pending()
    for item in items:
        # A reader's problem without an index is about the file, not one record.
        if isinstance(item, Problem) and item.location.index is None:
            yield from pending.flush(end=True)
            yield FileProblem(item)
        elif isinstance(item, Problem):
            if pending.index != item.location.index:
                yield from pending.flush(end=True)
            (pending.warnings if item.warning else pending.problems).append(item)
            pending.index = item.location.index
        else:
            yield from pending.flush(end=pending.index != item.location.index)
            result = validate_case(item)
            warnings = [*pending.take_warnings(), *_duplicate_id(result, item, first_seen)]
            yield replace(result, warnings=tuple(warnings)) if warnings else result
    yield from pending.flush(end=True)


class _Pending:
    """The problems and warnings read so far for one record (``index``) not yet complete."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.index: int | None = None

    def take_warnings(self) -> list[Problem]:
        warnings, self.warnings = self.warnings, []
        return warnings

    def flush(self, *, end: bool) -> Iterator[CaseInput]:
        """The malformed case, if the record had problems; its warnings go with it.

        Warnings without problems wait for their record, unless ``end`` (the file ends, or the
        next item is another record's): then they stand on their own.
        """
        if self.problems:
            location = self.problems[0].location
            yield MalformedCase(location, tuple(self.problems), None, tuple(self.take_warnings()))
            self.problems = []
        elif end:
            yield from (FileProblem(warning) for warning in self.take_warnings())


def _duplicate_id(
    result: LoadedCase | MalformedCase, record: Record, first_seen: dict[str, Location]
) -> list[Problem]:
    case_id = result.case.id if isinstance(result, LoadedCase) else result.case_id
    if case_id is None:
        return []
    here = record.locate(("id",))
    first = first_seen.setdefault(case_id, here)
    if first is here:
        return []
    return [
        record.problem(
            ("id",),
            f"the case id {case_id!r} is also used at {first}; give each case its own id so "
            "that reports can tell them apart",
            warning=True,
        )
    ]


def load_cases(sources: str | Path | Iterable[str | Path]) -> list[CaseInput]:
    """Every case of the files, in order (see :func:`iter_cases`).

    Raises:
        InputFileError: a file cannot be read at all.
    """
    return list(iter_cases(sources))
