"""Reading user weight profiles from a YAML or JSON file: ``{domain: {complexity: .., ...}}``."""

from __future__ import annotations

from pathlib import Path

from knowledgepulse.errors import ProfileError
from knowledgepulse.records import Problem, read_records
from knowledgepulse.value.profiles import ScoringWeights


def load_profiles(path: str | Path) -> dict[str, ScoringWeights]:
    """Read weight profiles by domain, every one validated.

    Example file::

        legal:
          complexity: 0.3
          novelty: 0.3
          tool_diversity: 0.1
          outcome_confidence: 0.3

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
