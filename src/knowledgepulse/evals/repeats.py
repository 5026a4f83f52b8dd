"""Statistics over repeated runs of a case, for workflows whose answers vary from call to call.

With ``repeat=K`` each case's task is called K times and each output scored. Per case and
scorer: the mean score over the runs that gave one, its standard error (sample standard
deviation / √n; ``None`` when n < 2), how many runs gave no score, and how many reached the
threshold. Per case: how many runs passed (k), the pass rate k/K, and pass@K (k ≥ 1: the
workflow can get it right). A run whose task failed has no score: it is left out of the means
(counted in ``errors``) and counts as a failed run. The case's verdict is taken on the means.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ScorerRepeat:
    """One scorer over the runs of one case.

    Attributes:
        mean: the mean score over the runs that gave one, or ``None`` when none did.
        stderr: the mean's standard error, or ``None`` when fewer than two runs gave a score.
        n: the runs that gave a score.
        errors: the runs that gave none.
        passed_runs: the runs whose score reached the threshold.
    """

    mean: float | None
    stderr: float | None
    n: int
    errors: int
    passed_runs: int

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return {
            "mean": self.mean,
            "stderr": self.stderr,
            "n": self.n,
            "errors": self.errors,
            "passed_runs": self.passed_runs,
        }


@dataclass(frozen=True, slots=True)
class RepeatStats:
    """One case run K times.

    Attributes:
        runs: K.
        passed_runs: the runs in which the case passed (k).
        scorers: per suite key, in suite order.
    """

    runs: int
    passed_runs: int
    scorers: Mapping[str, ScorerRepeat]

    @property
    def pass_rate(self) -> float:
        """The share of runs that passed: k / K."""
        return self.passed_runs / self.runs

    @property
    def pass_at_k(self) -> bool:
        """Whether the case passed in at least one of the K runs."""
        return self.passed_runs > 0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return {
            "runs": self.runs,
            "passed_runs": self.passed_runs,
            "pass_rate": self.pass_rate,
            "pass_at_k": self.pass_at_k,
            "scorers": {key: stats.to_dict() for key, stats in self.scorers.items()},
        }


@dataclass(frozen=True, slots=True)
class RepeatSummary:
    """Repeated runs over a whole run.

    Attributes:
        runs_per_case: K.
        pass_at_k: the share of cases (malformed ones included) that passed in at least one run.
        run_pass_rate: passed runs / runs, over the cases that ran.
    """

    runs_per_case: int
    pass_at_k: float | None
    run_pass_rate: float | None

    @classmethod
    def of(cls, stats: list[RepeatStats], cases: int) -> RepeatSummary:
        """The summary of the repeated cases among ``cases`` cases in all."""
        runs = sum(s.runs for s in stats)
        return cls(
            runs_per_case=max((s.runs for s in stats), default=0),
            pass_at_k=sum(s.pass_at_k for s in stats) / cases if cases else None,
            run_pass_rate=sum(s.passed_runs for s in stats) / runs if runs else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON report."""
        return {
            "runs_per_case": self.runs_per_case,
            "pass_at_k": self.pass_at_k,
            "run_pass_rate": self.run_pass_rate,
        }
