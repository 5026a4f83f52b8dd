"""Whether a case has what the scorers of a suite read: the bulk-edit form, only where needed.

A case's ``actual`` and ``expected`` may be any JSON value. Each scorer declares the parts it
reads in the bulk-edit form (:attr:`~knowledgepulse.evals.scorer.Scorer.reads`); a part is
checked against that form only when a scorer of the suite reads it, and each problem is
located in the case file (``FILE:LINE: PATH: message``). When the suite mixes scorers, so that
some read a part and others do not, the message ends with the scorers that need it: ``cases.
jsonl:3: actual: got "A summary"; expected a JSON object (needed by operation-accuracy)``.

Scoring recorded outputs also needs an ``actual`` in every case (``null`` counts); a task's
cases leave it out, and their output is checked when the task has answered.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from knowledgepulse._util.pydantic_errors import describe
from knowledgepulse.evals.cases import CaseInput, LoadedCase, MalformedCase
from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, bulk_expected_problems
from knowledgepulse.evals.scorer import CasePart
from knowledgepulse.evals.suite import Suite
from knowledgepulse.records import Location, Problem, Record

INPUT_PARTS: frozenset[CasePart] = frozenset({"pages", "expected"})
"""What can be checked before a task answers: everything but ``actual``."""
_MODELS: dict[CasePart, type[BaseModel]] = {"actual": ActualOutput, "expected": ExpectedOutput}
_ORDER: tuple[CasePart, ...] = ("pages", "actual", "expected")


def readers(suite: Suite, case: Case, *, output_known: bool = True) -> dict[CasePart, list[str]]:
    """For each part some scorer of the suite reads in the bulk-edit form, those scorers' keys.

    ``output_known=False`` (before a task has answered) counts only what each scorer declares
    it always reads, not what it would read of an output it has not seen.
    """
    found: dict[CasePart, list[str]] = {}
    for entry in suite.scorers:
        parts = entry.scorer.parts_read(case.actual) if output_known else entry.scorer.reads
        for part in parts:
            found.setdefault(part, []).append(entry.key)
    return {part: found[part] for part in _ORDER if part in found}


@dataclass(frozen=True, slots=True)
class Fit:
    """How a case fits a suite.

    Attributes:
        problems: every problem, located, each once.
        by_scorer: the problems each scorer (by key) is kept from scoring by.
    """

    problems: tuple[Problem, ...]
    by_scorer: Mapping[str, tuple[Problem, ...]]


def check_case(
    case: Case,
    suite: Suite,
    location: Location,
    *,
    parts: Iterable[CasePart] = _ORDER,
    require_actual: bool = True,
    output_known: bool = True,
) -> Fit:
    """Every way the case misses what the suite's scorers read, located in its file.

    Args:
        case: the case (its ``actual`` is the output to score).
        suite: the suite whose scorers will judge it.
        location: where the case was read from.
        parts: the parts to check (:data:`INPUT_PARTS` before a task has answered).
        require_actual: whether the case must give an ``actual`` (recorded outputs).
        output_known: whether ``actual`` is the output to score (see :func:`readers`).
    """
    record = Record(location, None, case.source_lines)
    wanted = set(parts)
    problems: list[Problem] = []
    by_scorer: dict[str, list[Problem]] = {}
    if require_actual and "actual" in wanted and not case.has_actual:
        missing = record.problem(
            ("actual",),
            "required field is missing; record the workflow's output here, or give a task "
            "that produces it (kp eval --task)",
        )
        problems.append(missing)
        for entry in suite.scorers:
            by_scorer[entry.key] = [missing]
    for part, keys in readers(suite, case, output_known=output_known).items():
        if part not in wanted or (part == "actual" and problems):
            continue
        suffix = "" if len(keys) == len(suite.scorers) else f" (needed by {', '.join(keys)})"
        found = [record.problem(loc, text + suffix) for loc, text in part_problems(case, part)]
        problems.extend(found)
        for key in keys if found else ():
            by_scorer.setdefault(key, []).extend(found)
    return Fit(tuple(problems), {key: tuple(found) for key, found in by_scorer.items()})


def part_problems(case: Case, part: CasePart) -> list[tuple[tuple[str | int, ...], str]]:
    """What is wrong with one part of a case in the bulk-edit form: (path, message) pairs."""
    if part == "pages":
        if case.pages:
            return []
        given = "pages" in case.model_fields_set
        return [(("pages",), "got a list of 0; expected at least 1 item" if given else _MISSING)]
    if part not in case.model_fields_set:
        return [((part,), _MISSING)]
    value = case.actual if part == "actual" else case.expected
    try:
        model = _MODELS[part].model_validate(value)
    except ValidationError as error:
        return [((part, *item["loc"]), describe(item)) for item in error.errors()]
    if isinstance(model, ExpectedOutput):
        found = bulk_expected_problems(model, case.pages)
        return [((part, *loc), message) for loc, message in found]
    return []


_MISSING = "required field is missing"


def fit_cases(
    inputs: Iterable[CaseInput], suite: Suite, *, before_task: bool = False
) -> Iterator[CaseInput]:
    """The inputs, each valid case that misses what the suite reads turned into a malformed one.

    ``before_task``: the cases are a task's, so their output is not there yet; only what the
    scorers always read of the input is checked. Malformed cases and file problems pass through
    unchanged, so fitting twice changes nothing.
    """
    for item in inputs:
        if isinstance(item, LoadedCase):
            fit = check_case(
                item.case,
                suite,
                item.location,
                parts=INPUT_PARTS if before_task else _ORDER,
                require_actual=not before_task,
                output_known=not before_task,
            )
            if fit.problems:
                yield MalformedCase(item.location, fit.problems, item.case.id, item.warnings)
                continue
        yield item
