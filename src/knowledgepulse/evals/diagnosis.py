"""The guide's diagnosis flow: what to check when a scorer falls below its threshold.

Each scorer's flow starts with its ``diagnosis_check`` (for the built-ins, the guide's ``check``
and ``analyze``), then its own :meth:`~knowledgepulse.evals.scorer.Scorer.diagnose` lines answer
it from the result's details. A custom scorer gives its hint by overriding ``diagnose``; one whose
``diagnose`` raises gets a line saying so, and the report goes on.
"""

from __future__ import annotations

from knowledgepulse.evals.scorer import Scorer, ScoreResult


def diagnose(scorer: Scorer, result: ScoreResult) -> tuple[str, ...]:
    """The diagnosis lines for a result below its threshold; never raises.

    The scorer's ``diagnosis_check`` (the guide's question) comes first, when there is a score
    to diagnose; then the scorer's own lines.
    """
    lines: list[str] = []
    if result.score is not None and scorer.diagnosis_check:
        lines.append(scorer.diagnosis_check)
    try:
        hints = scorer.diagnose(result)
        lines.extend(str(hint) for hint in hints)
    except Exception as error:  # a broken hint must not break the report
        lines.append(f"{scorer.type_name}.diagnose() raised {type(error).__name__}: {error}")
    return tuple(lines)
