"""Evaluation files (``*.kp.yaml``): a suite or preset and the case files it judges, named together.

Paths are relative to the file (docs/evals-pytest.md shows its keys). Every problem, here and in
the suite, is collected and raised once, before any case runs, as for a suite file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from knowledgepulse._util.jsonpath import describe
from knowledgepulse._util.text import closest, counted
from knowledgepulse.errors import InputFileError, PluginLoadError, SuiteError
from knowledgepulse.evals.evaluate import DEFAULT_TIMEOUT_S
from knowledgepulse.evals.suite import (
    PRESET_NAMES,
    Suite,
    load_suite,
    preset,
    read_document,
    unknown_key,
)
from knowledgepulse.evals.tasks import TaskFunction, load_plugin, load_task
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.readers import check_openable, matching_files

_GLOB_CHARACTERS = frozenset("*?[")
_RELATIVE = "paths in an evaluation file are relative to the file"


# `cases: cases.yaml` reads as naturally as a list of one.
_Files = Annotated[list[StrictStr], BeforeValidator(lambda v: [v] if isinstance(v, str) else v)]


class EvalFileModel(BaseModel):
    """An evaluation file, as written; docs/evals-pytest.md says what each key means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: StrictStr | None = None
    suite: StrictStr | None = Field(default=None, min_length=1)
    preset: StrictStr | None = Field(default=None, min_length=1)
    cases: _Files = Field(min_length=1)
    plugins: _Files = Field(default_factory=list)
    task: StrictStr | None = Field(default=None, min_length=1)
    timeout: float | None = Field(default=None, gt=0, strict=True, allow_inf_nan=False)
    retries: StrictInt = Field(default=0, ge=0)
    repeat: StrictInt = Field(default=1, ge=1)
    redact: StrictBool = False


@dataclass(frozen=True, slots=True)
class EvalSpec:
    """A resolved evaluation file: its suite built, its case files found, its task imported.

    ``case_files`` are each once, a glob's matches sorted; ``task`` is ``None`` to score ``actual``.
    ``timeout`` bounds each call of the user's code (the task's, and each of its scorers' on a
    case), as ``kp eval --timeout`` does, so a hung call cannot hang the session. ``redact``
    cleans what a failure shows (and JUnit XML keeps) of personal data, as ``kp eval --redact``.
    """

    source: str
    suite: Suite
    case_files: tuple[str, ...]
    task: TaskFunction | None = None
    timeout: float | None = DEFAULT_TIMEOUT_S
    retries: int = 0
    repeat: int = 1
    redact: bool = False


def load_eval_file(path: str | Path) -> EvalSpec:
    """Read an evaluation file, build its suite and find its case files (paths relative to it).

    Raises:
        InputFileError: the evaluation file cannot be opened.
        SuiteError: listing every problem in the evaluation file and in its suite.
    """
    name = str(path)
    record = read_document(path, "evaluation file", "not an evaluation file", _SHAPE, mapping=True)
    model, problems, wrong = _validated(record)
    if model is None:
        raise SuiteError(f"{Location(name)}: {counted(len(problems), 'problem')}", problems)
    base = Path(name).parent
    _plugins(model.plugins, base, record, problems)
    # A key refused already is not missing as well: its problem is said once.
    suite = None if wrong & {"suite", "preset"} else _suite(model, base, record, problems)
    case_files = _case_files(model.cases, base, record, problems)
    task = None if "task" in wrong else _task(model, base, record, problems)
    if problems or suite is None:
        count = counted(len(problems), "problem")
        summary = f"{Location(name)}: {count} in the evaluation file or its suite"
        raise SuiteError(summary, problems)
    timeout = DEFAULT_TIMEOUT_S if model.timeout is None else model.timeout
    return EvalSpec(
        name, suite, case_files, task, timeout, model.retries, model.repeat, model.redact
    )


def _validated(record: Record) -> tuple[EvalFileModel | None, list[Problem], set[str]]:
    """The file's model, its keys' problems and the keys refused (``None``: no model without them).

    A misspelt key (``timout``) or a bad value is one problem: the other keys are still read
    and checked, so their problems (a suite's, a task's) come in the same report.
    """
    try:
        return EvalFileModel.model_validate(record.value), [], set()
    except ValidationError as error:
        problems = [_model_problem(item, record) for item in error.errors()]
        problems.sort(key=lambda problem: problem.location.line or 0)
        wrong = {str(item["loc"][0]) for item in error.errors() if item["loc"]}
    if not isinstance(record.value, dict) or not wrong:
        return None, problems, wrong
    rest = {key: value for key, value in record.value.items() if key not in wrong}
    try:
        return EvalFileModel.model_validate(rest), problems, wrong
    except ValidationError:
        return None, problems, wrong


_SHAPE = (
    "an evaluation file holds one mapping with 'suite' (a suite file) or 'preset', and 'cases' "
    "(the case files)"
)
_FIELDS = tuple(EvalFileModel.model_fields)


def _model_problem(item: Any, record: Record) -> Problem:
    loc = tuple(item["loc"])
    if item["type"] == "extra_forbidden" and len(loc) == 1:
        key = str(loc[0])
        if key == "scorers":
            return record.problem(
                loc,
                "unknown key; an evaluation file does not list scorers: put them in a suite file "
                "and name it with 'suite: FILE' (or use 'preset: standard')",
            )
        return record.problem(loc, unknown_key(key, _FIELDS, "an evaluation file takes"))
    if item["type"] == "missing" and loc == ("cases",):
        return record.problem(loc, "required field is missing; list the case files to evaluate")
    return record.problem(loc, describe(item))


def _suite(
    model: EvalFileModel, base: Path, record: Record, problems: list[Problem]
) -> Suite | None:
    presets = ", ".join(PRESET_NAMES)
    if (model.suite is None) == (model.preset is None):
        said = f"give exactly one of 'suite' (a suite file) or 'preset' ({presets})"
        problems.append(record.problem((), said))
        return None
    if model.preset is not None:
        if model.preset in PRESET_NAMES:
            return preset(model.preset)
        near = closest(model.preset, PRESET_NAMES)
        guess = f"did you mean {near!r}? " if near is not None else ""
        own = "or name your own suite file with 'suite'"
        said = f"unknown preset {model.preset!r}; {guess}the presets are {presets}, {own}"
        problems.append(record.problem(("preset",), said))
        return None
    try:
        return load_suite(_joined(base, model.suite or ""))
    except InputFileError as error:
        problems.append(record.problem(("suite",), f"{error}; {_RELATIVE}"))
    except SuiteError as error:
        problems.extend(error.problems)
    return None


def _plugins(written: list[str], base: Path, record: Record, problems: list[Problem]) -> None:
    for index, entry in enumerate(written):
        spec = _joined(base, entry) if entry.endswith(".py") or "/" in entry else entry
        try:
            load_plugin(spec)
        except PluginLoadError as error:
            problems.append(record.problem(("plugins", index), str(error)))


def _task(
    model: EvalFileModel, base: Path, record: Record, problems: list[Problem]
) -> TaskFunction | None:
    if model.task is None:
        problems.extend(
            record.problem((key,), f"'{key}' applies to a task's calls; name the task with 'task'")
            for key in ("retries", "repeat")
            if key in model.model_fields_set
        )
        return None
    where, colon, function = model.task.rpartition(":")
    if colon and (where.endswith(".py") or "/" in where):
        where = _joined(base, where)  # a file, like every path here, is relative to this file
    try:
        return load_task(f"{where}{colon}{function}")
    except PluginLoadError as error:
        problems.append(record.problem(("task",), str(error)))
        return None


def _case_files(
    written: list[str], base: Path, record: Record, problems: list[Problem]
) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for index, entry in enumerate(written):
        path = _joined(base, entry)
        if _GLOB_CHARACTERS.isdisjoint(entry) or os.path.exists(path):
            matches = [path]
        else:
            matches = matching_files(path)
            if not matches:
                problems.append(record.problem(("cases", index), _unmatched(entry, base, path)))
        for match in matches:
            try:
                check_openable(match)
            except InputFileError as error:
                problems.append(record.problem(("cases", index), f"{error}; {_RELATIVE}"))
            else:
                found.setdefault(match, None)
    return tuple(found)


def _unmatched(written: str, base: Path, path: str) -> str:
    """Which pattern matched nothing, in which folder, and the fix (one written from the root?)."""
    folder = os.path.normpath(base)
    said = (
        f"no file matches {written!r} in {os.path.join(folder, '')}, this file's folder, which "
        f"its paths are relative to (looked for {path!r})"
    )
    elsewhere = matching_files(written)
    if elsewhere and not os.path.isabs(written):
        moved = os.path.relpath(written, folder)
        return (
            f"{said}; from the working directory it matches {counted(len(elsewhere), 'file')}: "
            f"write {moved!r}"
        )
    return f"{said}; fix the pattern, or add the case files it should match"


def _joined(base: Path, written: str) -> str:
    # Tidied, as messages show it: ``a/../b`` is b.
    return os.path.normpath(base / written)
