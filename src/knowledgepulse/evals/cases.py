"""Loading evaluation cases from JSON, JSON Lines and YAML files, keeping where each came from.

A malformed case becomes a :class:`MalformedCase` carrying every problem found in it (file,
line or index, JSON path, message); the cases around it are still read and run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from knowledgepulse._util.pydantic_errors import problems_from
from knowledgepulse.errors import CaseValidationError
from knowledgepulse.evals.models import Case
from knowledgepulse.records import Location, Problem, Record, read_records


@dataclass(frozen=True, slots=True)
class LoadedCase:
    """A valid case and where it was read from."""

    case: Case
    location: Location


@dataclass(frozen=True, slots=True)
class MalformedCase:
    """A record that is not a valid case, with everything wrong with it.

    Attributes:
        location: where the record starts.
        problems: each problem with its own location and JSON path.
        case_id: the record's ``id`` when it has a string one, else ``None``.
    """

    location: Location
    problems: tuple[Problem, ...]
    case_id: str | None = None


CaseInput = LoadedCase | MalformedCase


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


def validate_case(record: Record) -> CaseInput:
    """A record as a valid case, or a malformed one with every problem found in it."""
    try:
        case = Case.model_validate(record.value)
    except ValidationError as error:
        raw_id = record.value.get("id") if isinstance(record.value, dict) else None
        return MalformedCase(
            record.location,
            tuple(problems_from(error, record)),
            raw_id if isinstance(raw_id, str) else None,
        )
    return LoadedCase(case, record.location)


def iter_cases(sources: str | Path | Iterable[str | Path]) -> Iterator[CaseInput]:
    """Read cases from files (``-`` is standard input), in order, valid or malformed.

    A JSON file holds one case or a list; a JSON Lines file one case a line; a YAML file one
    case, a list, or several ``---`` documents.

    Raises:
        InputFileError: a file cannot be read at all.
    """
    paths = [sources] if isinstance(sources, str | Path) else list(sources)
    for source in paths:
        for item in read_records(source, formats=("json", "jsonl", "yaml")):
            if isinstance(item, Problem):
                yield MalformedCase(item.location, (item,))
            else:
                yield validate_case(item)


def load_cases(sources: str | Path | Iterable[str | Path]) -> list[CaseInput]:
    """Every case of the files, in order (see :func:`iter_cases`).

    Raises:
        InputFileError: a file cannot be read at all.
    """
    return list(iter_cases(sources))
