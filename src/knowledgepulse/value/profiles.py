"""Weight profiles: how much each dimension counts, chosen by ``metadata.task_domain``.

The five built-in profiles, and a user's from a YAML or JSON file (:func:`load_profiles`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from knowledgepulse._util.settings import path_of
from knowledgepulse._util.text import closest, counted, did_you_mean
from knowledgepulse.errors import ProfileError
from knowledgepulse.records import Location, Problem
from knowledgepulse.records.json_values import LONE_SURROGATE, REPEATED_ENDING
from knowledgepulse.records.readers import read_records
from knowledgepulse.value.dimensions import DIMENSION_NAMES, Dimensions

DEFAULT_PROFILE = "default"
WEIGHT_SUM_TOLERANCE = 1e-9


WeightProblem = tuple[str | None, str]
"""What is wrong with a profile's weights: the key it is about (``None``: the whole), and why."""


def _value_problems(values: Mapping[str, Any]) -> list[WeightProblem]:
    """Each weight that is not a number in [0, 1]; else the sum, if it is not 1."""
    problems: list[WeightProblem] = []
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.append((name, f"weight {name!r} must be a number, got {value!r}"))
        elif not (math.isfinite(value) and 0.0 <= value <= 1.0):
            problems.append((name, f"weight {name!r} must be in [0, 1], got {value!r}"))
    if problems:  # a sum of bad weights says nothing more
        return problems
    total = math.fsum(values.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        problems.append(
            (
                None,
                f"weights must sum to 1.0, these sum to {total!r} "
                f"({' + '.join(str(value) for value in values.values())}); change them so that "
                f"they sum to 1 (within 1e-9)",
            )
        )
    return problems


def weight_problems(data: Mapping[Any, Any]) -> list[WeightProblem]:
    """Every reason ``data`` is not the weights of a profile, each with the key it is about.

    A misspelt name is one problem (missing and unknown together, at the unknown key, with the
    name it is closest to); only a mapping with exactly the four names has its values checked.
    """
    missing = [name for name in DIMENSION_NAMES if name not in data]
    unknown = [str(key) for key in data if key not in DIMENSION_NAMES]
    known = {name: data[name] for name in DIMENSION_NAMES if name in data}
    if not (missing or unknown):
        return _value_problems(known)
    # The values given under known names are checked too, so that one pass finds everything.
    values = [problem for problem in _value_problems(known) if problem[0] is not None]
    parts = [
        f"{word} {', '.join(keys)}"
        for word, keys in (("missing", missing), ("unknown", unknown))
        if keys
    ]
    hints = "".join(did_you_mean(key, missing or DIMENSION_NAMES) for key in unknown)
    message = f"{'; '.join(parts)} (a profile gives exactly {', '.join(DIMENSION_NAMES)}).{hints}"
    return [(unknown[0] if unknown else None, message.rstrip(".")), *values]


def _joined(problems: list[WeightProblem]) -> str:
    return "; ".join(message for _, message in problems)


@dataclass(frozen=True, slots=True)
class ScoringWeights(Dimensions):
    """The weight of each dimension in the composite score; each in [0, 1], summing to 1.

    Raises:
        ProfileError: a weight is outside [0, 1], not a finite number, or the sum is not 1
            (every such problem named).
    """

    def __post_init__(self) -> None:
        problems = _value_problems({name: getattr(self, name) for name in DIMENSION_NAMES})
        if problems:
            raise ProfileError(_joined(problems))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, name: str = "profile") -> ScoringWeights:
        """Build weights from a mapping with exactly the four dimension names.

        Raises:
            ProfileError: a name is missing or unknown, or the weights are invalid.
        """
        if not isinstance(data, Mapping):
            raise ProfileError(
                f"{name}: expected the weights of {', '.join(DIMENSION_NAMES)} (a mapping or "
                f"ScoringWeights), got {type(data).__name__} {data!r:.80}"
            )
        problems = weight_problems(data)
        if problems:
            raise ProfileError(f"{name}: {_joined(problems)}")
        return cls(**{key: data[key] for key in DIMENSION_NAMES})


def weight_text(weight: float) -> str:
    """A weight as shown to people: two decimals at least, and as many more as it has, up to six.

    ``0.20``, ``0.125``, ``0.333333``: two decimals alone showed 0.125 as 0.12, so neither the
    profiles table nor an explanation's ``value x weight = term`` could be checked by hand.
    """
    head, _, decimals = f"{weight + 0.0:.6f}".rstrip("0").partition(".")  # + 0.0: no -0.00
    return f"{head}.{decimals:0<2}"


BUILTIN_PROFILES: Mapping[str, ScoringWeights] = {
    "default": ScoringWeights(0.25, 0.35, 0.15, 0.25),
    "finance": ScoringWeights(0.20, 0.25, 0.10, 0.45),
    "code": ScoringWeights(0.20, 0.30, 0.30, 0.20),
    "medical": ScoringWeights(0.15, 0.20, 0.10, 0.55),
    "customer_service": ScoringWeights(0.20, 0.30, 0.20, 0.30),
}


class ProfileRegistry(Mapping[str, ScoringWeights]):
    """The profiles one scorer knows: the five built-ins (in the seeds' order), then the user's.

    A domain selects the profile of exactly its name, else ``default`` (``code-review`` is not
    ``code``).
    """

    def __init__(self, profiles: Mapping[str, ScoringWeights] | None = None) -> None:
        self._profiles: dict[str, ScoringWeights] = dict(BUILTIN_PROFILES)
        errors: list[str] = []
        for domain, weights in (profiles or {}).items():
            try:
                self.register(domain, weights, replace=True)
            except ProfileError as error:  # every bad profile is said at once
                errors.append(str(error))
        if errors:
            raise ProfileError("\n".join(errors))

    def register(
        self, domain: str, weights: ScoringWeights | Mapping[str, Any], *, replace: bool = False
    ) -> ScoringWeights:
        """Add a profile for ``domain`` (weights validated); returns the weights stored.

        Raises:
            ProfileError: the weights are invalid, the domain is empty, or the profile exists
                with other weights and ``replace`` is false (its own weights again are kept).
        """
        if not isinstance(domain, str) or not domain:
            raise ProfileError(f"a profile needs a non-empty domain name, got {domain!r}")
        if not isinstance(weights, ScoringWeights):
            weights = ScoringWeights.from_mapping(weights, name=domain)
        if domain in self._profiles and not replace and self._profiles[domain] != weights:
            raise ProfileError(
                f"profile {domain!r} already exists; pass replace=True to change its weights"
            )
        self._profiles[domain] = weights
        return weights

    def select(self, domain: str) -> tuple[str, ScoringWeights]:
        """The profile name and weights for a domain (``default`` when none matches exactly)."""
        name = domain if domain in self._profiles else DEFAULT_PROFILE
        return name, self._profiles[name]

    def unweighed(self, domain: str) -> str | None:
        """Why ``domain``'s traces get the ``default`` weights; ``None`` if a profile has its name.

        Domains are open (a trace may carry any, for its own sake), so this is said, not raised:
        a misspelt ``--domain coding`` would otherwise be weighed as ``default`` unnoticed.
        """
        if domain in self._profiles:
            return None
        return (
            f"the domain {domain!r} names no weight profile, so the traces given it are scored "
            f"with the {DEFAULT_PROFILE!r} weights (the profiles: {', '.join(self)}; add one from "
            f"a profiles file, or with register_profile).{did_you_mean(domain, [*self])}"
        )

    def __getitem__(self, name: str) -> ScoringWeights:
        return self._profiles[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._profiles)

    def __len__(self) -> int:
        return len(self._profiles)


def misspelt_profiles(registry: ProfileRegistry, domains: Mapping[str, int]) -> list[str]:
    """What to say of each user profile that weighed no trace, spelt nearly as a scored domain.

    ``domains``: each domain scored, with its count of traces. A profile for a domain this input
    lacks is normal (a team's file covers many); one a few letters from a domain whose traces
    got other weights (``custmer_service``) is a typo that changed nothing, unsaid before.
    """
    said = []
    for name in (name for name in registry if name not in BUILTIN_PROFILES):
        unweighed = [domain for domain in domains if registry.select(domain)[0] != name]
        near = None if name in domains else closest(name, unweighed, max_edits=2)
        if near is not None:
            traces = counted(domains[near], "trace")
            said.append(
                f"the profile {name!r} weighed no trace, and the {traces} of domain "
                f"{near!r} got the {registry.select(near)[0]!r} weights; a profile weighs the "
                f"traces whose metadata.task_domain is exactly its name: did you mean {near!r}?"
            )
    return said


def load_profiles(path: str | Path) -> dict[str, ScoringWeights]:
    """Read weight profiles by domain (``legal: {complexity: 0.3, novelty: 0.3, ...}``).

    Raises:
        ProfileError: listing every bad profile with its file and line.
        InputFileError: the file cannot be read.
        SettingTypeError: ``path`` is not a path (a str or a Path).
    """
    path = path_of(path, "path", "a YAML or JSON file's path, a str or a Path")
    items = list(read_records(path, formats=("yaml", "json")))
    # A warning is an error here but for a lone surrogate, read as U+FFFD: the others say that
    # a value was never read (a JSON key given twice), and a profile must not vanish unseen.
    problems = [
        _as_error(item)
        for item in items
        if isinstance(item, Problem) and item.message != LONE_SURROGATE
    ]
    records = [item for item in items if not isinstance(item, Problem)]
    if not problems and (len(records) != 1 or not isinstance(records[0].value, dict)):
        got = (
            f"got {type(records[0].value).__name__} {records[0].value!r:.60}"
            if len(records) == 1
            else "the file is empty"
            if not records
            else f"got {len(records)} values (a list, or several YAML documents)"
        )
        raise ProfileError(
            f"{Location(str(path))}: expected one mapping of domain names to weights "
            f"(legal: {{complexity: 0.3, novelty: 0.3, tool_diversity: 0.2, "
            f"outcome_confidence: 0.2}}), {got}"
        )
    profiles: dict[str, ScoringWeights] = {}
    # With problems, the first value may be no mapping (a JSON array cut short): they are told.
    for record in (record for record in records[:1] if isinstance(record.value, dict)):
        for domain, weights in record.value.items():
            if not domain:
                problems.append(record.problem(("",), "a profile needs a non-empty domain name"))
            elif not isinstance(weights, dict):
                why = _NOT_IN_A_PROFILES_FILE.get(str(domain), "")
                problems.append(
                    record.problem((str(domain),), f"expected a mapping of the four weights{why}")
                )
            elif found := weight_problems(weights):
                problems += [
                    record.problem((str(domain),) if key is None else (str(domain), key), why)
                    for key, why in found
                ]
            else:
                profiles[str(domain)] = ScoringWeights.from_mapping(weights, name=str(domain))
    if problems:
        problems.sort(key=lambda problem: problem.location.line or 0)  # in the file's order
        raise ProfileError("\n".join(str(problem) for problem in problems))
    return profiles


# What a user tuning the score may write at the top of a profiles file, where only profiles go.
_NOT_IN_A_PROFILES_FILE = dict.fromkeys(
    ("threshold", "min_score"),
    "; a profiles file holds only profiles: the sharing threshold is kp's --min-score "
    "(TraceValueScorer(threshold=...) in Python)",
) | dict.fromkeys(
    ("overrides", "rules"),
    "; a profiles file holds only profiles: the rule overrides are the specification's, "
    "fixed (docs/scoring.md), and each one that fires is in the breakdown",
)


def _as_error(problem: Problem) -> Problem:
    """A reader's warning as an error of a profiles file, saying how to fix it."""
    if not problem.warning:
        return problem
    message = problem.message.removesuffix(REPEATED_ENDING)
    fix = "; a profiles file names each profile and each weight once: keep one"
    return replace(problem, message=message + fix, warning=False)
