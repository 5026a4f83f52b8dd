"""The scorer interface (one aspect of quality, a score in [0, 1], its details) and registry.

Scorers are registered by type name: the built-ins through the same decorator users call, and
the ``knowledgepulse.scorers`` entry points, loaded the first time a name is not found.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, ClassVar, Literal, Self, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from knowledgepulse._util.jsonpath import describe, format_path
from knowledgepulse._util.plugins import Registry
from knowledgepulse._util.settings import wrong_setting
from knowledgepulse._util.text import did_you_mean
from knowledgepulse.errors import (
    CaseValidationError,
    KnowledgePulseError,
    ScorerParameterError,
    UnknownScorerError,
)
from knowledgepulse.evals.models import ActualOutput, Case, ExpectedOutput, Page
from knowledgepulse.evals.operations import CasePages
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.json_values import is_numpy

CasePart = Literal["pages", "actual", "expected"]
"""A part of a case a scorer may read in the bulk-edit form."""
BULK_EDIT: frozenset[CasePart] = frozenset({"pages", "actual", "expected"})
"""Every part: what a bulk-edit scorer (the built-ins that judge operations) declares."""


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """What a scorer says about one case: a score in [0, 1] and JSON-able details explaining it.

    ``score`` is ``None`` when the scorer could not compute (``error`` says why; the case fails).
    """

    score: float | None
    details: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def failed(cls, reason: str, details: Mapping[str, Any] | None = None) -> ScoreResult:
        """A result that says the scorer could not compute, and why."""
        return cls(score=None, details=dict(details or {}), error=reason)


class NoParams(BaseModel):
    """Parameters of a scorer that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ScorerError(KnowledgePulseError):
    """Raised by :meth:`Scorer.score` when the scorer could not compute a score."""


@dataclass(frozen=True)
class CaseContext:
    """One case as a scorer sees it: its ``actual`` is the output scored (recorded, or a task's).

    ``duration_ms``: the task's measured time, or the case's ``actual.durationMs``, or ``None``.
    ``scorer_key``: how the suite names the scorer reading it (its ``name``, else its type), for
    the scorer's messages; ``None`` outside a suite.
    """

    case: Case
    duration_ms: float | None = None
    scorer_key: str | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """What the properties read once, shared by every scorer's view of the case."""

    @classmethod
    def of(cls, case: Case, measured_ms: float | None = None) -> CaseContext:
        """The context of a case: its duration ``actual.durationMs``, else ``measured_ms``."""
        recorded = recorded_duration(case.actual)
        return cls(case, recorded if recorded is not None else measured_ms)

    def seen_by(self, key: str) -> CaseContext:
        """The same case as the suite's scorer ``key`` sees it (what was read once is shared)."""
        return replace(self, scorer_key=key)

    def _once(self, name: str, read: Callable[[], Any]) -> Any:
        if name not in self._cache:
            self._cache[name] = read()
        return self._cache[name]

    @property
    def pages(self) -> CasePages:
        """The case's pages, their blocks indexed once for all its scorers."""
        return cast(CasePages, self._once("pages", partial(CasePages, self.case.pages)))

    @property
    def bulk_actual(self) -> ActualOutput:
        """``actual`` read as bulk-edit output (checked before by the runner)."""
        read = partial(ActualOutput.model_validate, self.case.actual)
        return cast(ActualOutput, self._once("actual", read))

    @property
    def bulk_expected(self) -> ExpectedOutput:
        """``expected`` read as a bulk-edit expectation (checked before by the runner)."""
        read = partial(ExpectedOutput.model_validate, self.case.expected)
        return cast(ExpectedOutput, self._once("expected", read))


def recorded_duration(actual: JsonValue) -> float | None:
    """``actual.durationMs`` when the output is an object holding a finite number >= 0."""
    if not isinstance(actual, Mapping):
        return None
    value = actual.get("durationMs")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


DETAILS_CHARS = 300
"""The most characters of a result's details the default diagnosis shows."""


def ignored_params(params: type[BaseModel], raw: Mapping[str, Any]) -> list[str]:
    """The keys of ``raw`` that ``params`` would drop without a word (pydantic's default).

    A ``Params`` model without ``extra="forbid"`` ignores unknown keys, so a misspelt parameter
    of a user's scorer (``max_word``) ran with the default: they are refused like the built-ins'.
    A model with ``extra="allow"`` keeps them, on purpose.
    """
    if params.model_config.get("extra") in ("allow", "forbid"):
        return []
    names = set(params.model_fields) | {
        alias
        for field in params.model_fields.values()
        for alias in (field.alias, field.validation_alias)
        if isinstance(alias, str)
    }
    return [key for key in raw if key not in names]


def _check_reads(cls: type) -> None:
    """Refuse a scorer class whose ``reads`` is no set of case parts, as its class is made.

    ``reads = "actual"`` (a text, not a set) was read letter by letter, or as a substring test,
    and each case then failed with a pydantic error whose only pointer was a URL.
    """
    if "reads" not in cls.__dict__ or isinstance(reads := cls.__dict__["reads"], property):
        return
    parts = get_args(CasePart)
    many = isinstance(reads, Collection) and not isinstance(reads, str | bytes)
    if many and all(part in parts for part in reads):
        return
    given = f"{reads!r}, which holds a part no case has" if many else repr(reads)
    example = {reads} if isinstance(reads, str) and reads in parts else {"actual"}
    raise ScorerParameterError(
        f"scorer class {cls.__qualname__}: reads = {given}; give a set of the parts it reads "
        f"in the bulk-edit form, such as {example!r} ({', '.join(map(repr, parts))}), or "
        "frozenset() for none"
    )


class Scorer:
    """Base class of every scorer, built-in or user-defined.

    Subclasses set ``default_threshold``, ``Params`` (the suite's ``params``, a pydantic model
    with ``extra="forbid"``) and ``reads``, and implement :meth:`evaluate` (the guide's ``score``
    and ``details`` derive from it) or :meth:`score_case`, to see the whole case. The parts named
    in ``reads`` arrive in the bulk-edit form (:class:`ActualOutput`, ...), checked first; the
    rest as JSON.
    """

    type_name: ClassVar[str] = ""
    default_threshold: ClassVar[float] = 1.0
    Params: ClassVar[type[BaseModel]] = NoParams
    diagnosis_check: ClassVar[str | None] = None
    """What to check first when a score falls below its threshold (the guide's ``check``)."""
    reads: ClassVar[frozenset[CasePart]] = frozenset()
    """The parts read in the bulk-edit form (``BULK_EDIT``: all); by default none, any JSON."""
    reads_duration: ClassVar[bool] = False
    """Whether it judges the output's ``durationMs`` (``response-time``): a bad one is its issue."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_reads(cls)

    def __init__(self, params: BaseModel | None = None) -> None:
        cls = type(self)
        if cls.evaluate is Scorer.evaluate and cls.score_case is Scorer.score_case:
            raise TypeError(f"{cls.__qualname__} must implement evaluate() or score_case()")
        self.params = params if params is not None else self.Params()

    @classmethod
    def from_params(cls, raw: Mapping[str, Any] | None = None) -> Self:
        """Build the scorer from YAML-style parameters (ScorerParameterError names each bad one)."""
        name = cls.type_name or cls.__name__
        ignored = ignored_params(cls.Params, dict(raw or {}))
        if ignored:
            takes = ", ".join(cls.Params.model_fields) or "no params"
            unknown = "; ".join(f"{key}: unknown field ({name} takes: {takes})" for key in ignored)
            raise ScorerParameterError(f"{name}: {unknown}")
        try:
            params = cls.Params.model_validate(dict(raw or {}))
        except ValidationError as error:
            reasons = "; ".join(
                f"{format_path(tuple(item['loc']))}: {describe(item)}" for item in error.errors()
            )
            raise ScorerParameterError(f"{name}: {reasons}") from None
        return cls(params)

    def evaluate(self, actual: Any, expected: Any, pages: Sequence[Page]) -> ScoreResult:
        """Score one case: the actual output against the expected one, given the original pages."""
        raise NotImplementedError(f"{type(self).__qualname__} implements score_case() only")

    def parts_read(self, actual: JsonValue) -> frozenset[CasePart]:
        """The parts read in the bulk-edit form for this output (``content-quality`` adapts)."""
        return self.reads

    def score_case(self, context: CaseContext) -> ScoreResult:
        """Score one case as the runner does; override it to read more of the case."""
        reads = self.parts_read(context.case.actual)
        actual = context.bulk_actual if "actual" in reads else context.case.actual
        expected = context.bulk_expected if "expected" in reads else context.case.expected
        return self.evaluate(actual, expected, context.pages)

    def score(self, actual: Any, expected: Any, pages: Sequence[Page | JsonValue] = ()) -> float:
        """The score alone, in [0, 1] (the guide's interface; ScorerError when there is none).

        ``actual``, ``expected`` and ``pages`` may be models or JSON as a case file holds them.

        Raises:
            CaseValidationError: a part this scorer reads in the bulk-edit form is not in it.
        """
        result = self.evaluate(*self._read(actual, expected, pages))
        if result.score is None:
            raise ScorerError(f"{self.type_name}: {result.error}")
        return result.score

    def details(
        self, actual: Any, expected: Any, pages: Sequence[Page | JsonValue] = ()
    ) -> Mapping[str, Any]:
        """The details that explain the score, for debugging (the guide's interface)."""
        return self.evaluate(*self._read(actual, expected, pages)).details

    def _read(
        self, actual: Any, expected: Any, pages: Sequence[Page | JsonValue]
    ) -> tuple[Any, Any, CasePages]:
        # The parts the scorer reads in the bulk-edit form, read from JSON as the runner reads
        # a case's: JSON given to the guide's score(actual, expected) raised AttributeError.
        reads = self.parts_read(actual)
        parts: dict[str, Any] = {"actual": actual, "expected": expected}
        models: dict[str, type[BaseModel]] = {"actual": ActualOutput, "expected": ExpectedOutput}
        record = Record(Location(f"{self.type_name or type(self).__name__}.score()"), None)
        problems: list[Problem] = []

        def read(value: Any, model: type[BaseModel], *at: str | int) -> Any:
            try:
                return model.model_validate(value)
            except ValidationError as error:
                problems.extend(
                    record.problem((*at, *item["loc"]), describe(item)) for item in error.errors()
                )
                return value

        for part, model in models.items():
            if part in reads and not isinstance(parts[part], model):
                parts[part] = read(parts[part], model, part)
        read_pages = (
            pages  # indexed already
            if isinstance(pages, CasePages)
            else [
                page if isinstance(page, Page) else read(page, Page, "pages", index)
                for index, page in enumerate(pages)
            ]
        )
        if problems:
            raise CaseValidationError(f"{self.type_name}: cannot read its input", problems)
        return parts["actual"], parts["expected"], CasePages.of(read_pages)

    def diagnose(self, result: ScoreResult) -> list[str]:
        """What to check when this scorer falls below its threshold, one line each.

        By default the result's details, cut to :data:`DETAILS_CHARS`: a failure then explains
        itself wherever it is shown (pytest, JUnit, Markdown), not only in the JSON report.
        Override it with hints of your own (``[]``: none).
        """
        return details_diagnosis(result)


def details_diagnosis(result: ScoreResult) -> list[str]:
    """The default diagnosis: ``result``'s details as JSON, cut to :data:`DETAILS_CHARS`."""
    if result.score is None or not result.details:
        return []
    try:
        text = json.dumps(result.details, ensure_ascii=False, default=_shown)
    except (ValueError, TypeError):  # a dict or list inside itself; a key JSON has not (a tuple)
        text = repr(result.details)
    cut = text if len(text) <= DETAILS_CHARS else f"{text[: DETAILS_CHARS - 3]}..."
    return [f"details: {cut}"]


def _shown(value: Any) -> Any:
    """What JSON cannot write, in the default diagnosis: NumPy's as numbers, the rest as repr.

    ``3``, not ``np.int64(3)``, as the JSON report writes it.
    """
    return value.tolist() if is_numpy(value) else repr(value)


# --- The registry: scorers by type name ------------------------------------------------------

ENTRY_POINT_GROUP = "knowledgepulse.scorers"

S = TypeVar("S", bound=type[Scorer])


def _check_type_name(type_name: str) -> None:
    if not isinstance(type_name, str) or not type_name or type_name != type_name.strip():
        raise wrong_setting(
            "type_name",
            type_name,
            "a scorer type name: non-empty without spaces around",
            wrong_type=not isinstance(type_name, str),
        )


_scorers = Registry(
    kind="scorer",
    base=Scorer,
    name_attr="type_name",
    builtins="knowledgepulse.evals.scorers",
    group=ENTRY_POINT_GROUP,
    taken="scorer type {name!r} is already registered by {holder}; choose another type name",
    check_name=_check_type_name,
)


def register_scorer(type_name: str) -> Callable[[S], S]:
    """Class decorator: make a scorer usable from suites as ``type: <type_name>``.

    Raises:
        ValueError: the name is empty or taken by a different class.
    """
    return _scorers.register(type_name)


def unregister_scorer(type_name: str) -> None:
    """Remove a registered scorer (for tests and notebooks that redefine one)."""
    _scorers.unregister(type_name)


def get_scorer_class(type_name: str) -> type[Scorer]:
    """The scorer class registered under ``type_name`` (UnknownScorerError lists the known)."""
    cls = _scorers.get(type_name)
    if cls is None:
        raise UnknownScorerError(unknown_scorer_message(type_name))
    return cls


def scorer_types() -> list[str]:
    """Every registered type name, sorted (built-ins, the user's own, and entry points)."""
    return sorted(name for name, _ in _scorers.items())


def builtin_scorer_types() -> tuple[str, ...]:
    """The type names of the scorers that ship with knowledgepulse, sorted."""
    _scorers.load_builtins()
    return tuple(sorted(n for n, cls in _scorers.classes.items() if _scorers.is_builtin(cls)))


def is_builtin(scorer: Scorer) -> bool:
    """Whether ``scorer`` is one that ships with knowledgepulse (a subclass of one is not)."""
    return _scorers.is_builtin(type(scorer))


def unknown_scorer_message(type_name: str) -> str:
    """Say that a type is unknown, which exist, which is closest, and how to load or add one.

    Loading comes first: a suite naming a plugin's scorer, read without the plugin given, is
    the usual miss.
    """
    known = scorer_types()
    return (
        f"unknown scorer type {type_name!r}.{did_you_mean(type_name, known)} "
        f"Known types: {', '.join(known)}. A scorer of your own file is known once the file "
        "is loaded: give it as a plugin (kp eval --plugin FILE.py; plugins: in a .kp.yaml "
        f"file; plugins= in Python). {_scorers.how_to_add(type_name)}"
    )
