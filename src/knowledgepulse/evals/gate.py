"""What fails a run in CI: any failing case, only what is worse than a baseline, or nothing.

Against a baseline each failing case *stands* one of three ways: a ``regression`` (it passed
in the baseline), a ``new failure`` (the baseline has no such case, or it has no id to match
by) or an ``old failure`` (it failed in the baseline too). ``fail_on="regression"`` fails on
the first two only, so CI can tell "no worse than main" from "worse"; ``"failure"`` fails on
any failing case; ``"never"`` records a run (a baseline, say) without judging it. A case file
that could not be read in full fails every mode but ``never``: the run is not all there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from knowledgepulse.evals.compare import Comparison
from knowledgepulse.evals.results import EvalRun

FailOn = Literal["failure", "regression", "never"]
FAIL_ON: tuple[FailOn, ...] = ("failure", "regression", "never")

Standing = Literal["regression", "new failure", "old failure"]
WORSE: frozenset[Standing] = frozenset({"regression", "new failure"})
"""The standings that are worse than the baseline."""


@dataclass(frozen=True, slots=True)
class Gate:
    """How a run is judged: what fails it, and each case's standing against the baseline.

    Attributes:
        fail_on: ``failure``, ``regression`` or ``never``.
        standings: per case of the run, in order, how its failure stands against the baseline
            (``None`` for a passing case); empty without a baseline.
    """

    fail_on: FailOn
    standings: tuple[Standing | None, ...] = ()

    @classmethod
    def of(cls, run: EvalRun, comparison: Comparison | None, fail_on: FailOn) -> Gate:
        """The gate of a run, compared with its baseline or not.

        Raises:
            ValueError: ``fail_on="regression"`` without a comparison.
        """
        if fail_on == "regression" and comparison is None:
            raise ValueError("failing on regressions needs a baseline to compare with")
        standings = () if comparison is None else tuple(_standings(run, comparison))
        return cls(fail_on, standings)

    @property
    def worse(self) -> int:
        """Cases worse than the baseline: regressions and new failures."""
        return sum(standing in WORSE for standing in self.standings)

    def excused(self, index: int) -> bool:
        """Whether the run's ``index``-th case fails but does not fail the run."""
        if self.fail_on == "never":
            return True
        return self.fail_on == "regression" and self.standing(index) == "old failure"

    def standing(self, index: int) -> Standing | None:
        """The run's ``index``-th case against the baseline, or ``None`` (passed, no baseline)."""
        return self.standings[index] if self.standings else None


def _standings(run: EvalRun, comparison: Comparison) -> Iterator[Standing | None]:
    # The comparison holds the run's cases with an id, in the run's order, then removed ones.
    matched = iter(case for case in comparison.cases if case.new is not None)
    for result in run.cases:
        compared = next(matched) if result.case_id is not None else None
        if result.passed:
            yield None
        elif compared is None or compared.base is None:
            yield "new failure"
        elif compared.base.passed:
            yield "regression"
        else:
            yield "old failure"
