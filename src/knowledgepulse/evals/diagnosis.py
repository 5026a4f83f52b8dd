"""The guide's diagnosis flow: what to check when a scorer falls below its threshold.

Each built-in scorer's flow starts with the guide's question (``check`` and ``analyze``), then
the scorer's own :meth:`~knowledgepulse.evals.scorer.Scorer.diagnose` lines answer it from the
result's details. A custom scorer gives its hint by overriding ``diagnose``; one whose
``diagnose`` raises gets a line saying so, and the report goes on.
"""

from __future__ import annotations

from collections.abc import Mapping

from knowledgepulse.evals.scorer import Scorer, ScoreResult

GUIDE_CHECKS: Mapping[str, str] = {
    "operation-accuracy": "check unmatchedOperations: is it the type, the target or the "
    "position that does not match?",
    "target-block-precision": "check incorrectTargets: why did the model not find the block "
    "it was meant to edit?",
    "content-quality": "check contentIssues: is a pattern too strict, is it a valid regular "
    "expression?",
    "operation-result": "check inapplicableOperations and contentIssues: could the operations "
    "be applied, and is the resulting content right?",
    "anti-hallucination": "check the input/output diff: what was added, deleted or changed "
    "that nothing asked for?",
    "response-time": "check responseTimeMs against maxAcceptableMs",
}


def diagnose(scorer: Scorer, result: ScoreResult) -> tuple[str, ...]:
    """The diagnosis lines for a result below its threshold; never raises.

    Built-in scorers (recognised by their class, not just their name) get the guide's check
    first; then come the scorer's own lines.
    """
    lines: list[str] = []
    check = GUIDE_CHECKS.get(scorer.type_name)
    if result.score is not None and check is not None and _is_builtin(scorer):
        lines.append(check)
    try:
        hints = scorer.diagnose(result)
        lines.extend(str(hint) for hint in hints)
    except Exception as error:  # a broken hint must not break the report
        lines.append(f"{scorer.type_name}.diagnose() raised {type(error).__name__}: {error}")
    return tuple(lines)


def _is_builtin(scorer: Scorer) -> bool:
    return type(scorer).__module__.startswith("knowledgepulse.evals.scorers.")
