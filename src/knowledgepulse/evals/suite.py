"""Suites: which scorers judge each case, with what weight and threshold; the guide's presets.

A suite file is read into strict models, each ``type`` looked up and its ``params`` validated by
the scorer's ``Params``; every problem is located and raised at once, as a ``SuiteError``.
Results are keyed by ``name``, else ``type``. Presets are suite-file data, resolved alike.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError
from pydantic_core import ErrorDetails

from knowledgepulse._util.jsonpath import describe
from knowledgepulse._util.settings import wrong_setting
from knowledgepulse._util.text import closest, counted, did_you_mean
from knowledgepulse.errors import KnowledgePulseError, Setting, SuiteError, UnknownPresetError
from knowledgepulse.evals.models import CASE_ID_PATTERN
from knowledgepulse.evals.scorer import (
    Scorer,
    builtin_scorer_types,
    get_scorer_class,
    ignored_params,
    unknown_scorer_message,
)
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.readers import ReadError, Source, open_source, read_all, read_stream
from knowledgepulse.trace.models import JSON_SCHEMA_DIALECT

Weight = Annotated[float, Field(ge=0, strict=True, allow_inf_nan=False)]
Threshold = Annotated[float, Field(ge=0, le=1, strict=True, allow_inf_nan=False)]


class ScorerEntry(BaseModel):
    """One scorer of a suite file, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="Scorer")

    type: StrictStr = Field(
        min_length=1,
        description="The scorer's registered type name (a built-in, your own, or a plugin's).",
    )
    name: StrictStr | None = Field(
        default=None,
        min_length=1,
        # A blank name keyed the results by spaces: a scorer without a name in every report.
        pattern=CASE_ID_PATTERN,
        description="Key of this scorer's results, not blank; needed when a type appears more "
        "than once.",
    )
    weight: Weight = Field(
        default=1.0,
        description="Weight in the case's weighted score (>= 0); never changes a verdict.",
    )
    threshold: Threshold | None = Field(
        default=None,
        description="Lowest passing score, in [0, 1]; the scorer's default when left out.",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="The scorer's parameters, validated by the scorer."
    )


class SuiteFile(BaseModel):
    """A suite file, as written: a name, a description and the scorers."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, title="knowledgepulse evaluation suite"
    )

    schema_ref: StrictStr | None = Field(
        default=None,
        alias="$schema",
        title="JSON Schema",
        description="The JSON Schema editors validate this file with.",
    )
    name: StrictStr | None = Field(default=None, description="The suite's name, shown in reports.")
    description: StrictStr | None = Field(default=None, description="What the suite checks.")
    scorers: list[ScorerEntry] = Field(
        min_length=1, description="The scorers; a case passes when every one reaches its threshold."
    )


def scorer_label(key: str, type_name: str, name: str | None) -> str:
    """How reports name a suite scorer: its key, with the type when the key is a name."""
    return f"{key} ({type_name})" if name is not None else key


@dataclass(frozen=True, slots=True)
class SuiteScorer:
    """One resolved scorer of a suite: the scorer, its key (``name``, else ``type``) and weights.

    ``threshold`` is the scorer's default when the entry gives none.
    """

    key: str
    type: str
    name: str | None
    weight: float
    threshold: float
    scorer: Scorer
    params: dict[str, Any] = field(default_factory=dict)
    """Every parameter of the scorer, defaults filled in, as plain data: what reports show
    (taken from the scorer when not given; ``kp eval`` shows them with any secret redacted,
    while the scorer keeps its own)."""

    def __post_init__(self) -> None:
        if not self.params:
            object.__setattr__(self, "params", self.scorer.params.model_dump(mode="json"))

    @property
    def label(self) -> str:
        """How reports name it (see :func:`scorer_label`)."""
        return scorer_label(self.key, self.type, self.name)


@dataclass(frozen=True, slots=True)
class Suite:
    """A resolved suite: its scorers built, in order, and where it came from (a file, a preset)."""

    scorers: tuple[SuiteScorer, ...]
    name: str | None = None
    description: str | None = None
    source: str = "<suite>"


def load_suite(path: str | Path) -> Suite:
    """Read a suite file (YAML or JSON) and build its scorers.

    Raises:
        InputFileError: the file cannot be read.
        SuiteError: listing every problem in the file, each with its line and path.
        SettingTypeError: ``path`` is not a path.
    """
    if not isinstance(path, str | Path):
        raise wrong_setting("path", path, "the suite file's path, a str or a Path", wrong_type=True)
    shape = "a suite file holds one mapping with a 'scorers' list"
    try:
        record = read_document(path, "suite file", "not a suite", shape)
    except SuiteError as error:
        raise _with_the_rest(error) from None
    return resolve_suite(record, source=record.location.file)


def is_suite_file(path: str | Path) -> bool:
    """Whether ``path`` is a suite file that loads (a YAML or JSON name): one given as cases."""
    if Path(path).suffix.lower() not in (".yaml", ".yml", ".json") or not Path(path).is_file():
        return False
    try:
        load_suite(path)
    except KnowledgePulseError:
        return False
    return True


def _with_the_rest(error: SuiteError) -> SuiteError:
    """``error``, with the other problems of a document the reader refused parts of.

    A ``.nan``, a tag or a key twice no longer hides the typos in the rest until the next run.
    The reader hands the document over with each refused part null; a problem found at or
    inside a refused part is the reader's, already said.
    """
    records = {id(problem.record): problem.record for problem in error.problems}
    partial = next(iter(records.values())) if len(records) == 1 else None
    if partial is None:
        return error
    try:
        resolve_suite(partial, source=partial.location.file)
    except SuiteError as more:
        refused = [problem.path for problem in error.problems]
        rest = [p for p in more.problems if not any(_within(p.path, at) for at in refused)]
        problems = sorted([*error.problems, *rest], key=lambda p: p.location.line or 0)
        where = Location(partial.location.file)
        return SuiteError(f"{where}: {counted(len(problems), 'problem')} in the suite", problems)
    return error


def _within(path: str, at: str) -> bool:
    """Whether the JSON path ``path`` is ``at`` or inside it (``a.b[0]`` is inside ``a.b``)."""
    return not at or path == at or path.startswith((f"{at}.", f"{at}["))


def read_document(
    path: str | Path, what: str, not_a: str, shape: str, *, mapping: bool = False
) -> Record:
    """The one YAML or JSON document of a file people write (a suite, an evaluation file).

    Raises:
        InputFileError: the file cannot be read.
        SuiteError: it cannot be parsed, or holds no single document (mapping, if asked).
    """
    # Read once, as bytes: the same text is parsed and looked at (a list?), from stdin or a .gz too.
    with open_source(path) as source:
        name = source.name  # <stdin> for -, as its problems say
        try:
            data = read_all(source.stream)
        except ReadError as failure:
            raise SuiteError(
                f"{Location(name)}: the {what} cannot be read",
                [Problem(Location(name), "", str(failure))],
            ) from None
    read = Source(name, io.BytesIO(data))
    items = list(read_stream(read, ("yaml", "json"), key_lines=True))
    # A warning (an unpaired surrogate escape, read as U+FFFD) rejects nothing.
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    # A part refused (a .nan, a tag, a key twice) leaves its document read, the rest null: its
    # shape is told with its problems, so a list is not said only once the .nan is fixed. A
    # problem with no document (a syntax error) leaves the shape unknown.
    records = _documents(items) if all(p.record is not None for p in problems) else None
    wrong = None if records is None else _shape_problem(records, data, name, shape, mapping)
    if wrong is not None:
        located = sorted([wrong, *problems], key=lambda problem: problem.location.line or 0)
        raise SuiteError(f"{Location(name)}: {not_a}", located)
    if problems or records is None:
        raise SuiteError(f"{Location(name)}: the {what} cannot be parsed", problems)
    return records[0]


def _documents(items: list[Record | Problem]) -> list[Record]:
    """The documents (or a list's items) read, in order, a record refused in part included."""
    documents: list[Record] = []
    for item in items:
        record = item if isinstance(item, Record) else item.record
        if record is not None and not (documents and documents[-1] is record):
            documents.append(record)
    return documents


def _shape_problem(
    records: list[Record], data: bytes, name: str, shape: str, mapping: bool
) -> Problem | None:
    """Why ``records`` are not the one document (a mapping, if asked) a file holds; else None."""
    # The reader gives a list's items as records, as it gives documents: the text tells them apart.
    listed = bool(records) and _starts_a_list(data)
    if len(records) == 1 and not listed and (not mapping or isinstance(records[0].value, Mapping)):
        return None
    if listed:
        found = f"a list ({counted(len(records), 'item')})"
        line = records[0].location.line
    elif len(records) == 1:
        found, line = type(records[0].value).__name__, None
    else:
        found = f"{len(records)} documents" if records else "nothing"
        line = records[1].location.line if len(records) > 1 else None
    return Problem(Location(name, line), "", f"{shape}; found {found}")


def _starts_a_list(data: bytes) -> bool:
    """Whether the text's first document is a list: YAML's ``- item`` or ``[...]``, JSON's."""
    text = data.decode("utf-8", errors="replace")
    for line in text.splitlines():
        content = line.strip()
        if content.startswith("---"):  # a document's start, perhaps with the document after it
            content = content[3:].strip()
        if content and not content.startswith(("#", "%")):
            return content == "-" or content.startswith(("- ", "["))
    return False


def suite_from_dict(data: Mapping[str, Any], *, source: str = "<suite>") -> Suite:
    """Build a suite from data shaped like a suite file (``{"scorers": [...]}``).

    Raises:
        SuiteError: listing every problem.
    """
    return resolve_suite(Record(Location(source), dict(data)), source=source)


def resolve_suite(record: Record, *, source: str) -> Suite:
    """Validate a parsed suite file and build its scorers (raises SuiteError listing all)."""
    value = record.value
    if not isinstance(value, Mapping):
        problem = record.problem((), "a suite is a mapping with a 'scorers' list of scorers")
        raise SuiteError(f"{Location(source)}: not a suite", [problem])
    problems: list[Problem] = []
    model: SuiteFile | None = None
    try:
        model = SuiteFile.model_validate(value)
    except ValidationError as error:
        problems.extend(_structure_problem(item, record) for item in error.errors())
    raw_entries = value.get("scorers")
    entries = list(raw_entries) if isinstance(raw_entries, list) else []
    built: dict[int, Scorer] = {}
    for index, raw in enumerate(entries):
        if isinstance(raw, Mapping):
            scorer = _build_scorer(index, raw, record, problems)
            if scorer is not None:
                built[index] = scorer
    problems.extend(_key_problems(entries, record))
    # All weights 0 leave no weighted score; said when every weight is a valid number.
    weights = [raw.get("weight", 1.0) if isinstance(raw, Mapping) else None for raw in entries]
    numbers = [w for w in weights if isinstance(w, int | float) and not isinstance(w, bool)]
    if entries and numbers == [0] * len(entries):
        problems.append(
            record.problem(
                ("scorers",),
                "every weight is 0, so no case could have a weighted score; give at least one "
                "scorer a weight above 0",
            )
        )
    if problems or model is None:
        # Structural and semantic checks run in two passes; report them in file order.
        problems.sort(key=lambda problem: problem.location.line or 0)
        count = len(problems)
        raise SuiteError(f"{Location(source)}: {counted(count, 'problem')} in the suite", problems)
    scorers = tuple(
        SuiteScorer(
            key=entry.name or entry.type,
            type=entry.type,
            name=entry.name,
            weight=float(entry.weight),
            threshold=float(
                entry.threshold if entry.threshold is not None else built[i].default_threshold
            ),
            scorer=built[i],
        )
        for i, entry in enumerate(model.scorers)
    )
    return Suite(scorers, name=model.name, description=model.description, source=source)


_ENTRY_FIELDS = tuple(ScorerEntry.model_fields)
_SUITE_FIELDS = ("name", "description", "scorers")


def _structure_problem(item: ErrorDetails, record: Record) -> Problem:
    loc = tuple(item["loc"])
    if item["type"] == "extra_forbidden" and loc:
        allowed = _ENTRY_FIELDS if len(loc) == 3 and loc[0] == "scorers" else _SUITE_FIELDS
        what = "a scorer entry takes" if allowed is _ENTRY_FIELDS else "a suite takes"
        return record.problem(loc, unknown_key(str(loc[-1]), allowed, what))
    if item["type"] == "missing" and loc == ("scorers",):
        return record.problem(loc, "required field is missing; list the scorers to run")
    if item["type"] == "too_short" and loc == ("scorers",):
        return record.problem(loc, "a suite needs at least one scorer")
    return record.problem(loc, describe(item))


def unknown_key(key: str, allowed: tuple[str, ...], what: str) -> str:
    """``unknown key; did you mean 'x'? <what>: <allowed>`` (``<what> no params``: none)."""
    if not allowed:
        return f"unknown key; {what} no params"
    near = closest(key, allowed)
    guess = f"did you mean {near!r}? " if near is not None else ""
    return f"unknown key; {guess}{what}: {', '.join(allowed)}"


def _build_scorer(
    index: int, raw: Mapping[str, Any], record: Record, problems: list[Problem]
) -> Scorer | None:
    type_name = raw.get("type")
    if not isinstance(type_name, str) or not type_name:
        return None  # the structural validation already reports it
    try:
        cls = get_scorer_class(type_name)
    except KnowledgePulseError:
        problems.append(
            record.problem(("scorers", index, "type"), unknown_scorer_message(type_name))
        )
        return None
    default = cls.default_threshold
    if raw.get("threshold") is None and not 0 <= default <= 1:
        problems.append(
            record.problem(
                ("scorers", index),
                f"{type_name}'s default threshold {default!r} is outside [0, 1]; give a threshold",
            )
        )
    raw_params = raw.get("params", {})
    if not isinstance(raw_params, Mapping):
        return None  # reported by the structural validation
    fields = tuple(cls.Params.model_fields)
    takes = f"{type_name} takes"
    ignored = ignored_params(cls.Params, raw_params)
    for key in ignored:
        problems.append(
            record.problem(("scorers", index, "params", key), unknown_key(key, fields, takes))
        )
    try:
        params = cls.Params.model_validate(dict(raw_params))
    except ValidationError as error:
        for item in error.errors():
            message = (
                unknown_key(str(item["loc"][-1]), fields, takes)
                if item["type"] == "extra_forbidden"
                else f"{describe(item)} ({takes}: {', '.join(fields) or 'no params'})"
            )
            problems.append(record.problem(("scorers", index, "params", *item["loc"]), message))
        return None
    if ignored:
        return None
    try:
        return cls(params)
    except Exception as error:  # a user's constructor may raise anything; report it with the rest
        problems.append(
            record.problem(
                ("scorers", index), f"{type_name} cannot be built: {type(error).__name__}: {error}"
            )
        )
        return None


def _key_problems(entries: list[Any], record: Record) -> list[Problem]:
    """A type given twice needs names on every entry of it, and every key must be distinct.

    There is no default name: one made from the entry's position (``max-steps-2``) would key
    another scorer's results after the suite is reordered or grows, and a comparison with a
    baseline would then set one scorer's scores against another's without a word. Each message
    suggests a name the suite does not use yet.
    """
    by_type: dict[str, list[int]] = defaultdict(list)
    keys: dict[str, list[int]] = defaultdict(list)
    names: dict[int, str | None] = {}
    for i, raw in enumerate(entries):
        if isinstance(raw, Mapping) and isinstance(raw.get("type"), str):
            name = names[i] = raw["name"] if isinstance(raw.get("name"), str) else None
            by_type[raw["type"]].append(i)
            keys[raw["type"] if name is None else name].append(i)
    problems = []
    unnamed = {
        i for indices in by_type.values() if len(indices) > 1 for i in indices if names[i] is None
    }
    taken = set(keys)
    for type_name, indices in by_type.items():
        problems += [
            record.problem(
                ("scorers", i),
                f"type {type_name!r} appears {len(indices)} times ({_where(indices)}); give "
                f"each a distinct 'name' saying how it differs ({_free_name(type_name, taken)} "
                "is free): results and baselines are keyed by it (a default from the position "
                "would match another scorer after a reorder)",
            )
            for i in indices
            if i in unnamed
        ]
    for key, indices in keys.items():
        # Unnamed repeats of a type are reported above; naming them may clear this clash too.
        reportable = [i for i in indices if i not in unnamed] if len(indices) > 1 else []
        problems += [
            record.problem(
                ("scorers", i, "name") if "name" in entries[i] else ("scorers", i),
                f"key {key!r} is used by {_where(indices)}; results are keyed by 'name' (else "
                "'type'), so every key must be distinct",
            )
            for i in reportable[1:] or reportable
        ]
    return problems


def _free_name(type_name: str, taken: set[str]) -> str:
    """``max-steps-2``, or ``-3``... : a name for an entry of ``type_name`` no key uses; taken."""
    number = 2
    while f"{type_name}-{number}" in taken:
        number += 1
    taken.add(name := f"{type_name}-{number}")
    return name


_NAMED_ENTRIES = 3
"""A problem names this many of the entries it is about, then counts the rest: each message is
short, however many entries repeat a type (1,000 repeats once printed 14 MB)."""


def _where(indices: list[int]) -> str:
    named = ", ".join(f"scorers[{i}]" for i in indices[:_NAMED_ENTRIES])
    more = len(indices) - _NAMED_ENTRIES
    return f"{named} and {more} more" if more > 0 else named


PRESETS: Mapping[str, Mapping[str, Any]] = {
    "standard": {
        "description": "The guide's standard evaluation (標準評価): operations, targets, content.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 1.0, "threshold": 0.8},
            {"type": "target-block-precision", "weight": 1.0, "threshold": 0.75},
            {"type": "content-quality", "weight": 1.0, "threshold": 0.6},
        ],
    },
    "strict": {
        "description": "The guide's strict evaluation (厳密評価): higher thresholds, and "
        "anti-hallucination at double weight.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 1.0, "threshold": 0.9},
            {"type": "target-block-precision", "weight": 1.0, "threshold": 0.9},
            {"type": "content-quality", "weight": 1.0, "threshold": 0.8},
            {"type": "anti-hallucination", "weight": 2.0, "threshold": 1.0},
        ],
    },
    "operation-focused": {
        "description": "The guide's operation-focused evaluation (操作重視): operations weigh "
        "more, content less.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 2.0, "threshold": 0.9},
            {"type": "target-block-precision", "weight": 1.5, "threshold": 0.85},
            {"type": "content-quality", "weight": 0.5, "threshold": 0.5},
        ],
    },
}
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def preset(name: str) -> Suite:
    """The built-in suite called ``name``.

    Raises:
        UnknownPresetError: listing the presets and the closest one.
    """
    try:
        data = PRESETS[name]
    except KeyError:
        hint = did_you_mean(name, PRESET_NAMES)
        raise UnknownPresetError(
            f"unknown preset {name!r}.{hint} Presets: {', '.join(PRESET_NAMES)}; "
            "or write your own suite file and load it (",
            Setting("load_suite"),
            ")",
        ) from None
    return suite_from_dict({"name": name, **data}, source=f"preset '{name}'")


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files, with the built-in scorers' ``params`` filled in."""
    schema = SuiteFile.model_json_schema(by_alias=True)
    entry = schema["$defs"]["ScorerEntry"]
    builtins = builtin_scorer_types()
    entry["properties"]["type"]["examples"] = list(builtins)
    entry["allOf"] = []
    for type_name in builtins:  # each type's params, validated against its own schema
        params = get_scorer_class(type_name).Params.model_json_schema()
        then: dict[str, Any] = {"properties": {"params": params}}
        if params.get("required"):
            then["required"] = ["params"]
        when = {"properties": {"type": {"const": type_name}}, "required": ["type"]}
        entry["allOf"].append({"if": when, "then": then})
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}
