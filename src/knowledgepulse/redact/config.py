"""Custom redaction rules from a YAML (or JSON) file: a company's own token formats.

Each rule is a regular expression (``pattern``) or a Python function (``callable``,
``module:function``, text -> spans); they run before the built-in ones. Every mistake of the
file is reported at once, with the file, line and JSON path (``docs/redaction.md``).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Annotated

import regex
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from knowledgepulse._util.jsonpath import describe, describe_value
from knowledgepulse._util.text import PATTERN_TIMEOUT_MS
from knowledgepulse.errors import RedactionRulesError
from knowledgepulse.records import Location, Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.redact.detectors import default_rules
from knowledgepulse.redact.rules import Finder, Rule, RuleSet

_TYPE = r"^[A-Za-z0-9_\-]+$"
_SHAPE = (
    "expected one mapping with the rules listed under rules: (rules: [{name: ..., pattern: ...}])"
)


def _compiles(value: str) -> str:
    try:
        regex.compile(value)
    except regex.error as error:
        raise ValueError(f"the pattern does not compile: {error}") from None
    return value


class RuleSpec(BaseModel):
    """One custom rule as the file writes it (``docs/redaction.md``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    pattern: Annotated[str, AfterValidator(_compiles)] | None = None  # Python's regex syntax
    callable: str | None = None  # module:function, a function text -> [(start, end)]
    type: str | None = Field(default=None, pattern=_TYPE)  # the marker's [default: the name]
    secret: bool = True  # false: an identifier, kept at private
    keywords: list[str] = Field(default_factory=list)  # run only on a text holding one

    def rule(self) -> Rule:
        """The rule this spec describes (a ``ValueError`` if it cannot be made)."""
        if (self.pattern is None) == (self.callable is None):
            raise ValueError("give one of pattern (a regular expression) or callable")
        kind = self.type or regex.sub(r"[^A-Za-z0-9_\-]", "_", self.name)
        keywords = tuple(word.lower() for word in self.keywords)
        finder = None if self.callable is None else _import(self.callable)
        # A user's pattern may be catastrophic: bounded as a suite's patterns are.
        return Rule(
            self.name,
            kind,
            self.secret,
            self.pattern,
            keywords,
            group=0,
            finder=finder,
            timeout_ms=PATTERN_TIMEOUT_MS,
        )


def _import(spec: str) -> Finder:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"callable {spec!r}: write it as module:function")
    try:  # not pkgutil.resolve_name: its own ValueError for a name like my-tool:find
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"callable {spec!r}: cannot import {module_name!r} ({error})") from None
    try:
        found = functools.reduce(getattr, attribute.split("."), module)
    except AttributeError:
        raise ValueError(f"callable {spec!r}: {module_name} has no {attribute!r}") from None
    if not callable(found):
        raise ValueError(f"callable {spec!r}: not a function")
    finder: Finder = found
    return finder


def load_rules(path: str | Path) -> RuleSet:
    """The custom rules of ``path`` followed by every built-in rule.

    Raises:
        RedactionRulesError: listing every problem of the file with its line and JSON path.
        InputFileError: the file cannot be read.
    """
    items = list(read_records(path, formats=("yaml", "json")))
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    records = [item for item in items if isinstance(item, Record)]
    if not problems and len(records) != 1:
        # The reader gives a top-level list's items as records: a bare list of rules, mostly.
        found = f"{len(records)} values (a list, or several YAML documents)" if records else "none"
        raise RedactionRulesError(f"{Location(str(path))}: {_SHAPE}; found {found}", [])
    custom: list[Rule] = []
    for record in records[:1]:
        if not isinstance(record.value, dict):
            problems.append(record.problem((), f"{_SHAPE}; found {describe_value(record.value)}"))
            continue
        if record.value and set(record.value) <= set(RuleSpec.model_fields):
            problems.append(record.problem((), f"one rule alone; {_SHAPE}"))
            continue
        entries = record.value.get("rules")
        extra = sorted(set(record.value) - {"rules"})
        for key in extra:
            problems.append(record.problem((key,), "unknown field; the file holds only rules"))
        if not isinstance(entries, list):
            problems.append(record.problem(("rules",), "expected a list of rules"))
            continue
        # Each rule is checked on its own, so that every mistake of the file is told at once.
        for index, entry in enumerate(entries):
            try:
                custom.append(RuleSpec.model_validate(entry).rule())
            except ValidationError as error:
                problems.extend(
                    record.problem(("rules", index, *item["loc"]), describe(item))
                    for item in error.errors()
                )
            except ValueError as error:
                problems.append(record.problem(("rules", index), str(error)))
    if problems:
        raise RedactionRulesError(
            f"{Location(str(path))}: the redaction rules have errors", problems
        )
    return RuleSet((*custom, *default_rules().rules))
