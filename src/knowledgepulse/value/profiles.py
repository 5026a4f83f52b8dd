"""Weight profiles: how much each dimension counts, chosen by ``metadata.task_domain``.

The five built-in profiles, and a user's from a YAML or JSON file (:func:`load_profiles`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from knowledgepulse._util.text import did_you_mean
from knowledgepulse.errors import ProfileError
from knowledgepulse.records import Problem
from knowledgepulse.records.readers import read_records
from knowledgepulse.value.dimensions import Dimensions

DEFAULT_PROFILE = "default"
WEIGHT_SUM_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class ScoringWeights(Dimensions):
    """The weight of each dimension in the composite score; each in [0, 1], summing to 1.

    Raises:
        ProfileError: a weight is outside [0, 1], not a finite number, or the sum is not 1.
    """

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ProfileError(f"weight {field.name!r} must be a number, got {value!r}")
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ProfileError(f"weight {field.name!r} must be in [0, 1], got {value!r}")
        total = math.fsum(self.as_tuple())
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ProfileError(
                f"weights must sum to 1.0, these sum to {total!r} "
                f"({' + '.join(str(weight) for weight in self.as_tuple())})"
            )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, name: str = "profile") -> ScoringWeights:
        """Build weights from a mapping with exactly the four dimension names.

        Raises:
            ProfileError: a name is missing or unknown, or the weights are invalid.
        """
        expected = [field.name for field in fields(cls)]
        if not isinstance(data, Mapping):
            raise ProfileError(
                f"{name}: expected the weights of {', '.join(expected)} (a mapping or "
                f"ScoringWeights), got {type(data).__name__} {data!r:.80}"
            )
        missing = [key for key in expected if key not in data]
        unknown = sorted(str(key) for key in data if key not in expected)
        parts = [
            f"{word} {', '.join(keys)}"
            for word, keys in (("missing", missing), ("unknown", unknown))
            if keys
        ]
        if parts:
            raise ProfileError(
                f"{name}: {'; '.join(parts)} (a profile gives exactly {', '.join(expected)})"
            )
        try:
            return cls(**{key: data[key] for key in expected})
        except ProfileError as error:
            raise ProfileError(f"{name}: {error}") from None


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
        for domain, weights in (profiles or {}).items():
            self.register(domain, weights, replace=True)

    def register(
        self, domain: str, weights: ScoringWeights | Mapping[str, Any], *, replace: bool = False
    ) -> ScoringWeights:
        """Add a profile for ``domain`` (weights validated); returns the weights stored.

        Raises:
            ProfileError: the weights are invalid, the domain is empty, or the profile exists and
                ``replace`` is false.
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


def load_profiles(path: str | Path) -> dict[str, ScoringWeights]:
    """Read weight profiles by domain (``legal: {complexity: 0.3, novelty: 0.3, ...}``).

    Raises:
        ProfileError: listing every bad profile with its file and line.
        InputFileError: the file cannot be read.
    """
    items = list(read_records(path, formats=("yaml", "json")))
    # A warning (an unpaired surrogate escape, read as U+FFFD) rejects nothing.
    problems = [item for item in items if isinstance(item, Problem) and not item.warning]
    records = [item for item in items if not isinstance(item, Problem)]
    if not problems and (len(records) != 1 or not isinstance(records[0].value, dict)):
        raise ProfileError(f"{path}: expected one mapping of domain names to weights")
    profiles: dict[str, ScoringWeights] = {}
    for record in records[:1]:
        for domain, weights in record.value.items():
            if not domain:
                problems.append(record.problem(("",), "a profile needs a non-empty domain name"))
                continue
            if not isinstance(weights, dict):
                problems.append(
                    record.problem((str(domain),), "expected a mapping of the four weights")
                )
                continue
            try:
                profiles[str(domain)] = ScoringWeights.from_mapping(weights, name=str(domain))
            except ProfileError as error:
                message = str(error).removeprefix(f"{domain}: ")
                problems.append(record.problem((str(domain),), message))
    if problems:
        raise ProfileError("\n".join(str(problem) for problem in problems))
    return profiles
