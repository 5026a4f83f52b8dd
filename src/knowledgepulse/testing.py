"""Helpers for testing code that uses knowledgepulse: a fake embedder and ``assert_passes``."""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Sequence

import numpy as np
import regex
from numpy.typing import NDArray
from rich.console import Console, Group

from knowledgepulse._util.settings import count_of
from knowledgepulse._util.text import printable
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.reports import evals as report

__all__ = ["HashingEmbedder", "assert_passes", "failure_message"]

_WORD = regex.compile(r"\w+")


class HashingEmbedder:
    """A stand-in for the real model in unit tests: nothing to load, the same in every process.

    Bag-of-words feature hashing: each word adds +-1 (by its BLAKE2b hash) to one of
    ``dimensions`` (384: MiniLM's) slots, so texts sharing words get similar vectors; rows are
    L2-normalised, and a text without words gives a zero row.
    """

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = count_of(dimensions, "dimensions", least=1)
        self.model_id = f"hashing-{dimensions}"

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text."""
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                slot, sign = _slot(word, self.dimensions)
                vectors[row, slot] += sign
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


@functools.lru_cache(maxsize=65536)
def _slot(word: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
    return digest % dimensions, 1.0 if (digest >> 63) & 1 else -1.0


def assert_passes(result: CaseResult | EvalRun) -> None:
    """Fail the calling test unless the case, or every case of the run, passed.

    A run passes when it holds at least one case, every case passed, and every case file was
    read in full; the ``AssertionError`` holds :func:`failure_message`'s text.
    """
    __tracebackhide__ = True
    if not isinstance(result, CaseResult | EvalRun):
        got = type(result).__name__
        # evaluate_cases' outcome is the natural thing to pass: say what to pass instead.
        hint = "; pass its .run (or assert on .passed, its gate)" if hasattr(result, "run") else ""
        raise TypeError(f"assert_passes takes a CaseResult or an EvalRun, got {got}{hint}")
    if isinstance(result, EvalRun) and not result.cases and result.passed:
        raise AssertionError("the run evaluated no cases, so it shows nothing")
    if not result.passed:
        raise AssertionError(failure_message(result))


def failure_message(result: CaseResult | EvalRun, *, width: int = 100) -> str:
    """Why a case (or a run) did not pass: a one-line reason, then the report's diagnosis.

    For a case: ``2 scorers below threshold: operation-accuracy 0.667 < 0.800, ...``, then the
    case as the table report shows it. For a run: its summary line, then each case that did not
    pass, then the parts of files that could not be read. Long lines wrap at ``width``.
    """
    if isinstance(result, CaseResult):
        failed, lost = [result], []
        head = report.failure_headline(result) or "passed"
    else:
        head = report.summary_line(result)
        failed = [case for case in result.cases if not case.passed]
        lost = [problem for problem in result.file_problems if not problem.warning]
    lines = [printable(head)]
    if failed:
        buffer = io.StringIO()
        console = Console(
            file=buffer, width=width, color_system=None, markup=False, emoji=False, highlight=False
        )
        console.print(Group(*(part for case in failed for part in report.failing_case(case))))
        lines.extend(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())
    if lost:
        lines.append("Not read in full")
        lines.extend(f"  {printable(str(problem))}" for problem in lost)
    return "\n".join(lines)
