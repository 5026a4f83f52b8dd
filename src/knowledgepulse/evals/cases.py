"""Loading evaluation cases from JSON, JSON Lines and YAML files, and checking them for a suite.

A malformed case (a bad pattern included) carries every problem, located, and the cases around
it still run; a part of a file that cannot be read is a :class:`FileProblem`. Each part a scorer
reads in the bulk-edit form is checked only when one does, naming it (``needed by ...``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import Any, cast, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from knowledgepulse._util.jsonpath import describe, describe_value
from knowledgepulse._util.settings import paths_of
from knowledgepulse._util.text import closest
from knowledgepulse.errors import CaseValidationError, Setting, SettingTypeError
from knowledgepulse.evals.models import (
    CASE_ID_PATTERN,
    KNOWN_OPERATION_TYPES,
    ActualOutput,
    Case,
    ExpectedOutput,
)
from knowledgepulse.evals.operations import CasePages, resolve_block, resolve_page, unknown_type
from knowledgepulse.evals.patterns import compile_pattern, pattern_problem
from knowledgepulse.evals.scorer import CasePart
from knowledgepulse.evals.suite import Suite
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import JsonError, check_python, leniently_read
from knowledgepulse.records.readers import read_records


@dataclass(frozen=True, slots=True)
class LoadedCase:
    """A valid case, where its record starts, and warnings about it (they reject nothing)."""

    case: Case
    location: Location
    warnings: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class MalformedCase:
    """A record that is not a valid case: every problem, located; its string ``id`` if any."""

    location: Location
    problems: tuple[Problem, ...]
    case_id: str | None = None
    warnings: tuple[Problem, ...] = ()
    # The case, when only its content patterns are bad: fit_cases checks it against the suite
    # too, so a bad pattern does not hide a bad field until the pattern is fixed and run again.
    case: Case | None = None


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A part of a case file that cannot be read (a syntax error), or a warning on the file."""

    problem: Problem

    @property
    def location(self) -> Location:
        """Where in the file it is."""
        return self.problem.location


CaseInput = LoadedCase | MalformedCase | FileProblem
CASE_ID = re.compile(CASE_ID_PATTERN)


def parse_case(value: Any, *, source: str = "<case>") -> Case:
    """Validate parsed JSON as a :class:`Case` (CaseValidationError lists every problem)."""
    if isinstance(value, Case):
        return value
    result = validate_case(Record(Location(source), value))
    if isinstance(result, LoadedCase):
        return result.case
    raise CaseValidationError(f"{Location(source)}: not a valid case", result.problems)


def validate_case(record: Record) -> LoadedCase | MalformedCase:
    """A record as a valid case, or a malformed one; every content pattern is compiled here."""
    case_id = _id_of(record.value)
    try:
        case = Case.model_validate(record.value)
    except ValidationError as error:
        return MalformedCase(record.location, tuple(_problems(record, error, Case)), case_id)
    # Kept on the case, so a problem found later (against a suite) points at its own line.
    case._lines = record.lines
    bad_patterns = tuple(_pattern_problems(case, record))
    if bad_patterns:
        return MalformedCase(record.location, bad_patterns, case_id, case=case)
    return LoadedCase(case, record.location)


def _id_of(value: Any) -> str | None:
    """The case id a record's value gives, even when the case is malformed; else None."""
    raw_id = value.get("id") if isinstance(value, dict) else None
    # A blank id names nothing in a report: the case is shown as "(no id) FILE:LINE".
    return raw_id if isinstance(raw_id, str) and CASE_ID.search(raw_id) else None


def _problems(record: Record, error: ValidationError, model: type[BaseModel]) -> list[Problem]:
    return [record.problem(tuple(item["loc"]), _described(item, model)) for item in error.errors()]


def _described(item: ErrorDetails, model: type[BaseModel]) -> str:
    """The error in words; an unknown key names the closest key its object takes."""
    text = describe(item)
    loc = tuple(item["loc"])
    if item["type"] != "extra_forbidden" or not loc or not isinstance(loc[-1], str):
        return text
    keys = _keys_at(model, loc[:-1])
    meant = closest(loc[-1], keys, ignore_case=True)
    if meant is None:
        return text
    return f"unknown field; did you mean {meant!r}? (or remove it)"


def _keys_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys the object at ``loc`` inside a ``model`` document takes (none when unknown)."""
    current: type[BaseModel] | None = model
    for key in loc:
        if current is None:
            return []
        if isinstance(key, str):
            fields = current.model_fields.items()
            field = next((f for name, f in fields if key in (name, f.alias)), None)
            current = None if field is None else _model_in(field.annotation)
    if current is None:
        return []
    return [field.alias or name for name, field in current.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds: ``Page`` for ``list[Page]`` or ``Page | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next(filter(None, (_model_in(arg) for arg in get_args(annotation))), None)


def _pattern_problems(case: Case, record: Record) -> Iterator[Problem]:
    expected = case.expected
    patterns = expected.get("contentPatterns") if isinstance(expected, dict) else None
    lists: dict[tuple[str, ...], Any] = {(): patterns}
    if isinstance(patterns, dict):
        lists = {(page_id,): items for page_id, items in patterns.items()}
    located: Iterator[tuple[tuple[str | int, ...], str]] = (
        (("expected", "contentPatterns", *prefix, i), pattern)
        for prefix, items in lists.items()
        if isinstance(items, list)
        for i, pattern in enumerate(items)
        if isinstance(pattern, str)
    )
    for loc, pattern in located:
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
    case, a list, or ``---`` documents. A case id used before gives the later case a warning; a
    file named twice is read once.

    Raises:
        InputFileError: a file cannot be opened at all.
        SettingTypeError: ``sources`` is not a path or paths.
    """
    paths = paths_of(sources)
    first_seen: dict[str, Location] = {}
    for source in _each_file_once(paths):
        # A case is no dataset row: its NaN is refused wherever it is, as YAML's .nan is.
        read = read_records(source, formats=("json", "jsonl", "yaml"), key_lines=True)
        yield from _file_cases(read, first_seen)


def _each_file_once(paths: list[str | Path]) -> list[str | Path]:
    # A file named twice (overlapping globs: cases/*.jsonl cases/a.jsonl) is read once, as the
    # pytest plugin reads it: read again, each of its cases counted twice, each warned about
    # as a repeat of itself, and the report refused as a baseline.
    once: dict[str, str | Path] = {}
    for path in paths:
        once.setdefault(str(path) if str(path) == "-" else os.path.realpath(path), path)
    return list(once.values())


def _file_cases(
    items: Iterable[Record | Problem], first_seen: dict[str, Location]
) -> Iterator[CaseInput]:
    # A reader's problems about a record (same index) come before it (warnings) or instead of
    # it (errors), gathered into one case; a problem without an index is about the file.
    for index, group in groupby(items, key=lambda item: item.location.index):
        problems: list[Problem] = []
        warnings: list[Problem] = []
        for item in group:
            if isinstance(item, Record):
                if problems:
                    yield _unread_case(problems, warnings, first_seen)
                    problems, warnings = [], []
                result = validate_case(item)
                found = [*warnings, *_duplicate_id(result, item, first_seen)]
                warnings = []
                yield replace(result, warnings=tuple(found)) if found else result
            elif index is None:
                yield FileProblem(item)
            else:
                (warnings if item.warning else problems).append(item)
        if problems:
            yield _unread_case(problems, warnings, first_seen)
        else:
            yield from (FileProblem(warning) for warning in warnings)


def _unread_case(
    problems: list[Problem], warnings: list[Problem], first_seen: dict[str, Location]
) -> MalformedCase:
    """A record the reader refused (a repeated key, a tag, NaN), by the id read from it if any.

    A YAML reader's record holds what was read of it; a JSON Lines line refused whole (a NaN in
    a field) holds its text, read leniently here for its id.
    """
    record = problems[0].record
    case_id = None if record is None else _id_of(_read_of(record))
    if record is None or case_id is None:
        return MalformedCase(problems[0].location, tuple(problems), None, tuple(warnings))
    case = MalformedCase(record.location, tuple(problems), case_id)
    return replace(case, warnings=(*warnings, *_duplicate_id(case, record, first_seen)))


def _read_of(record: Record) -> Any:
    """What was read of a refused record: its value, else its line's text read leniently."""
    if record.value is None and record.raw is not None:
        return leniently_read(record.raw)
    return record.value


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
            f"the case id {case_id!r} is also used at {first}; give each case its own id: "
            "reports tell cases apart by it, and a comparison matches them by it, so this "
            "run's JSON report cannot be a baseline",
            warning=True,
        )
    ]


def load_cases(sources: str | Path | Iterable[str | Path]) -> list[CaseInput]:
    """Every case of the files, in order (see :func:`iter_cases`)."""
    return list(iter_cases(sources))


Cases = str | Path | Iterable[str | Path | Case | CaseInput | Mapping[str, Any]]
"""Case files (a path or a list of paths; ``-`` is stdin), or cases: models, loaded ones, or
plain dicts (the two not mixed)."""


def case_inputs(cases: Cases) -> Iterator[CaseInput]:
    """The cases as :func:`~knowledgepulse.evals.cases.iter_cases` yields them, read as needed.

    A case without a file is located as ``<cases>[index]``.

    Raises:
        InputFileError: a case file cannot be opened at all.
        SettingTypeError: paths mixed with cases, or one case not in a list.
    """
    if isinstance(cases, Mapping):
        raise SettingTypeError(
            Setting("cases"), " is one case alone: give a list of cases, cases=[case]"
        )
    if isinstance(cases, str | Path) or (
        isinstance(cases, Sequence) and all(isinstance(case, str | Path) for case in cases)
    ):
        yield from iter_cases(cast("str | Path | Sequence[str | Path]", cases))
        return
    for index, item in enumerate(cases):
        if isinstance(item, Case):
            yield LoadedCase(item, Location("<cases>", index=index))
        elif isinstance(item, LoadedCase | MalformedCase | FileProblem):
            yield item
        elif isinstance(item, str | Path):
            raise SettingTypeError(
                Setting("cases"),
                ": give case files as a list of paths, or cases, not the two mixed",
            )
        else:
            value = dict(item) if isinstance(item, Mapping) else item
            yield _python_case(Record(Location("<cases>", index=index), value))


def _python_case(record: Record) -> LoadedCase | MalformedCase:
    """A case made in Python, checked first as a file's JSON is (NaN, a cycle, a set...)."""
    try:
        check_python(record.value)
    except JsonError as error:
        problem = Problem(record.location, error.path, error.message)
        return MalformedCase(record.location, (problem,), _id_of(record.value))
    return validate_case(record)


# --- Checking cases against what a suite reads ---------------------------------------------

_MODELS: dict[CasePart, type[BaseModel]] = {"actual": ActualOutput, "expected": ExpectedOutput}
_ORDER: tuple[CasePart, ...] = ("pages", "actual", "expected")


@dataclass(frozen=True, slots=True)
class Fit:
    """How a case fits a suite: every problem once, and those keeping each scorer (by key).

    ``warnings``: what the case says that cannot be what was meant (an expected operation on a
    block the pages do not have); they reject nothing.
    """

    problems: tuple[Problem, ...]
    by_scorer: Mapping[str, tuple[Problem, ...]]
    warnings: tuple[Problem, ...] = ()


def check_case(
    case: Case,
    suite: Suite,
    location: Location,
    *,
    require_actual: bool = True,
    output_known: bool = True,
) -> Fit:
    """Every way the case misses what the suite's scorers read, and every bad pattern, located.

    A refused or invalid content pattern makes the case malformed, as :func:`validate_case` does
    for a case read from a file, so a case given as a model is judged as its file would be.

    ``require_actual``: for recorded outputs; ``output_known``: ``actual`` is the output to score
    (before a task has answered, only what each scorer always reads of the input is checked).
    """
    record = Record(location, None, case.source_lines)
    problems: list[Problem] = []
    by_scorer: dict[str, list[Problem]] = {}
    no_output = require_actual and not case.has_actual
    if no_output:
        missing = record.problem(
            ("actual",),
            "required field is missing; record the workflow's output here, or give a task "
            "that produces it (kp eval --task)",
        )
        problems.append(missing)
        for entry in suite.scorers:
            by_scorer[entry.key] = [missing]
    readers: dict[CasePart, list[str]] = {}
    by_kind: list[str] = []  # scorers that read a text output as it is, and this one in bulk
    # Without an output, what a scorer reads of it is unknown: only what it always reads is
    # checked (content-quality wants pages for edit operations, not for a text; a case lacking
    # both was told to add pages when the fix was an actual alone).
    known = output_known and not no_output
    for entry in suite.scorers:
        parts = entry.scorer.parts_read(case.actual) if known else entry.scorer.reads
        for part in parts:
            readers.setdefault(part, []).append(entry.key)
        if known and parts != entry.scorer.parts_read("") and not _bulk_like(case.actual):
            by_kind.append(entry.key)
    if problems:  # no output at all: that is said already
        by_kind = []
    for key in by_kind:
        # An agent's {"answer": ..., "tool_calls": [...]} read as edit operations was told
        # "pages: required field is missing" and "expected.tools: unknown field; remove it".
        mismatch = record.problem(("actual",), _not_a_text(key, case.actual))
        problems.append(mismatch)
        by_scorer.setdefault(key, []).append(mismatch)
    timers = [entry.key for entry in suite.scorers if entry.scorer.reads_duration]
    for part in _ORDER:
        keys = [key for key in readers.get(part, []) if key not in by_kind]
        if not keys or (part == "actual" and (problems or not output_known)):
            continue
        for loc, text in _part_problems(case, part):
            # A bad durationMs is the concern of the scorers that judge it (response-time, as
            # the suite names it), though every bulk reader refuses it: it was told "(needed by
            # operation-accuracy)", a scorer that never reads it.
            named = (timers if loc[:2] == ("actual", "durationMs") else []) or keys
            needed = "" if len(named) == len(suite.scorers) else f" (needed by {', '.join(named)})"
            found = record.problem(loc, text + needed)
            problems.append(found)
            for key in dict.fromkeys([*keys, *named]):
                by_scorer.setdefault(key, []).append(found)
    # A case given as a model (evaluate_case, run_suite's cases) was never read by validate_case:
    # an invalid pattern must make it malformed as it does a case read from a file.
    problems.extend(_pattern_problems(case, record))
    warnings = (
        ()
        if problems
        else (
            *(_unresolved(case, record) if "expected" in readers else ()),
            *(_unknown_types(case, record) if "actual" in readers and output_known else ()),
        )
    )
    return Fit(tuple(problems), {key: tuple(found) for key, found in by_scorer.items()}, warnings)


def _bulk_like(actual: Any) -> bool:
    """Whether an output looks like edit operations (an object with one of their keys)."""
    return isinstance(actual, Mapping) and bool({"operations", "durationMs"} & set(actual))


def _not_a_text(key: str, actual: Any) -> str:
    """Why a scorer of texts (or edit operations) cannot read this output, and the ways out."""
    texts = (
        [k for k, v in actual.items() if isinstance(v, str)] if isinstance(actual, Mapping) else []
    )
    field = f" (its text is under {', '.join(map(repr, texts[:3]))}?)" if texts else ""
    return (
        f"{key} reads a text output, or bulk-edit operations {{operations, durationMs}} on "
        f"pages; this output is {describe_value(actual)}{field}: make the task return the "
        f"text, or score this output with a scorer of your own (kp eval --plugin)"
    )


def _unresolved(case: Case, record: Record) -> tuple[Problem, ...]:
    # An expected target the pages lack is a typo in the case: the scorers would compare the
    # model's operations with an edit no model can make, and fail the one that edits the right
    # block. Spec-wise the case is valid, so this is a warning.
    # The same for a page id of contentPatterns: its patterns are counted and never found.
    # An expected type that is no known one (spelt "Update") is matched by nothing.
    expected = ExpectedOutput.model_validate(case.expected)
    pages = CasePages(case.pages)
    found: list[Problem] = []
    listed = ", ".join(repr(p.id) for p in case.pages)
    for i, operation in enumerate(expected.operations):
        if operation.type not in KNOWN_OPERATION_TYPES:
            found.append(
                record.problem(
                    ("expected", "operations", i, "type"),
                    f"{unknown_type(operation.type)} No operation can match it, so this "
                    "expected operation is always unmatched: fix the type",
                    warning=True,
                )
            )
        page = resolve_page(operation, pages)
        if page is None:
            found.append(
                record.problem(
                    ("expected", "operations", i, "pageId"),
                    f"{operation.page_id!r} is no page of the case (its pages: {listed}); no "
                    "operation can be on it, so check the id",
                    warning=True,
                )
            )
        elif operation.has_target and resolve_block(operation, page, pages) is None:
            by_id = operation.target_block_id is not None
            field, given = (
                ("targetBlockId", operation.target_block_id)
                if by_id
                else ("targetIndex", operation.target_index)
            )
            ids = [block.id for block in page.blocks]
            near = closest(str(given), ids, ignore_case=True) if by_id else None
            blocks = (
                f"did you mean {near!r}?"
                if near is not None
                else f"{len(ids)} blocks"
                if len(ids) > 8
                else "blocks " + (", ".join(map(repr, ids)) or "none")
            )
            found.append(
                record.problem(
                    ("expected", "operations", i, field),
                    f"{given!r} names no block of page {page.id!r} ({blocks}); the model cannot "
                    "edit it, and one that edits the block meant is scored wrong: check the "
                    f"{'id' if by_id else 'index (0-based, into the original blocks)'}",
                    warning=True,
                )
            )
    patterns = expected.content_patterns
    for page_id in patterns if isinstance(patterns, dict) else ():
        if page_id not in pages.blocks:
            found.append(
                record.problem(
                    ("expected", "contentPatterns", page_id),
                    f"{page_id!r} is no page of the case (its pages: {listed}); its patterns "
                    "are searched in no content and count as not found, so check the id",
                    warning=True,
                )
            )
    return tuple(found)


def _unknown_types(case: Case, record: Record) -> tuple[Problem, ...]:
    # A recorded operation whose type is no known one ("Update", "updte") is data, by the spec:
    # not applied, matched by nothing, so the scores stay. Said here, the type it was surely
    # meant as is named where the output is, not only in the scorers' details.
    actual = ActualOutput.model_validate(case.actual)
    return tuple(
        record.problem(
            ("actual", "operations", i, "type"),
            f"{unknown_type(operation.type)} The operation is scored as made of an unknown type "
            "(not applied, matched by nothing); if the workflow means a known one, make it "
            "write that type",
            warning=True,
        )
        for i, operation in enumerate(actual.operations)
        if operation.type not in KNOWN_OPERATION_TYPES
    )


def _part_problems(case: Case, part: CasePart) -> list[tuple[tuple[str | int, ...], str]]:
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
        return [((part, *item["loc"]), _described(item, _MODELS[part])) for item in error.errors()]
    if not isinstance(model, ExpectedOutput) or len(case.pages) <= 1:
        return []
    # With several pages: a plain pattern list, expected operations without a pageId.
    problems: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(model.content_patterns, list):
        plain = "a list, but the case has several pages; use {pageId: [patterns]}"
        problems.append(((part, "contentPatterns"), plain))
    problems.extend(
        (
            (part, "operations", i, "pageId"),
            "required field is missing; the case has several pages, so every expected "
            "operation needs a pageId",
        )
        for i, op in enumerate(model.operations)
        if op.page_id is None
    )
    return problems


_MISSING = "required field is missing"


def fit_cases(
    inputs: Iterable[CaseInput], suite: Suite, *, before_task: bool = False
) -> Iterator[CaseInput]:
    """The inputs, each valid case that misses what the suite reads turned into a malformed one.

    ``before_task``: only what the scorers always read of the input is checked.
    """
    for item in inputs:
        if isinstance(item, LoadedCase):
            fit = check_case(
                item.case,
                suite,
                item.location,
                require_actual=not before_task,
                output_known=not before_task,
            )
            if fit.problems:
                yield MalformedCase(item.location, fit.problems, item.case.id, item.warnings)
                continue
            # Cases already fitted (evaluate_cases' run_suite) are fitted again: warn once.
            found = tuple(w for w in fit.warnings if w not in item.warnings)
            if found:
                yield replace(item, warnings=(*item.warnings, *found))
                continue
        elif isinstance(item, MalformedCase) and item.case is not None:
            # check_case finds the bad patterns again, with what the suite's scorers miss.
            fit = check_case(
                item.case,
                suite,
                item.location,
                require_actual=not before_task,
                output_known=not before_task,
            )
            if fit.problems:
                yield replace(item, problems=fit.problems)
                continue
        yield item
