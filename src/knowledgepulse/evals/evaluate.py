"""Running a task over cases, then the suite over its outputs: ``evaluate(task, cases, suite)``.

A call that still fails after its retries is that case's error result; the others go on. Outputs
are scored in the cases' order once every call is done, so the scores are ``run_suite``'s. A case
that cannot be scored never costs a call. Outputs may be kept in an output cache on disk.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ParamSpec

from pydantic import JsonValue

from knowledgepulse._util.atomic import atomic_text
from knowledgepulse._util.text import counted
from knowledgepulse.errors import KnowledgePulseError, OutputError, Setting
from knowledgepulse.evals.cases import (
    Cases,
    LoadedCase,
    case_inputs,
    check_case,
    fit_cases,
)
from knowledgepulse.evals.results import CaseResult, EvalRun
from knowledgepulse.evals.runner import collect_run, combine_runs, score_context, task_failed
from knowledgepulse.evals.scorer import CaseContext, recorded_duration
from knowledgepulse.evals.suite import Suite, load_suite
from knowledgepulse.evals.tasks import (
    TaskAnswer,
    TaskFunction,
    TaskInput,
    TaskRecord,
    call_task,
    check_options,
    check_task,
    task_name,
)

DEFAULT_CACHE_DIR = Path(".kp-cache") / "outputs"
"""Where outputs are cached unless told otherwise (relative to the working directory)."""
FORMAT = 1
"""The cache's format; part of every key, so a new format never reads an old file."""
DEFAULT_CONCURRENCY = 8
"""Task calls in flight at once, unless told otherwise."""
DEFAULT_TIMEOUT_S = 300.0
"""``kp eval --task``'s limit on one call: minutes for a slow model, never a hung CI job."""

_log = logging.getLogger("knowledgepulse")
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class TaskProgress:
    """How far the task calls of a run are: outputs in, of how many, and how many were cached."""

    done: int
    total: int
    cached: int


async def evaluate_async(
    task: TaskFunction,
    cases: Cases,
    suite: Suite | str | Path,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    retries: int = 0,
    retry_delay: float = 1.0,
    repeat: int = 1,
    task_version: str | None = None,
    cache_dir: str | Path | None = DEFAULT_CACHE_DIR,
    progress: Callable[[TaskProgress], object] | None = None,
    cacheable: Callable[[JsonValue], bool] | None = None,
) -> EvalRun:
    """Call ``task`` on every case and score its outputs with ``suite``; see the module docs.

    :func:`evaluate` is the same, run in an event loop of its own, for sync code.

    Args:
        task: a function, sync or async, taking a :class:`~knowledgepulse.evals.tasks.TaskInput`
            and returning the output (any JSON value, or a pydantic model).
        cases: case files, or cases (see :data:`Cases`); their ``actual`` is ignored.
        suite: a suite, or the path of a suite file.
        concurrency: the most task calls in flight at once.
        timeout: seconds one call of your code may take, the task's or a scorer's on one case
            (``None``: no limit); past it the call is abandoned and the case is an error.
        retries: how many times a call that raised or timed out is tried again.
        retry_delay: seconds before the first retry; each later one waits twice as long.
        repeat: calls per case; above 1, each scorer's mean ± standard error and pass@K.
        task_version: your name for this version of the task (change it when the task
            changes): outputs are cached under it; ``None``: nothing is cached.
        cache_dir: where outputs are cached; ``None`` turns the cache off.
        progress: told how far the calls are (:class:`TaskProgress`) once before the first
            and after each output, to draw a progress bar with (``kp eval`` does on a
            terminal); it runs in the event loop, so it should be quick.
        cacheable: whether an output may be written to the cache (``None``: every one);
            ``kp eval`` keeps off the disk an output holding what its report cleans (an API
            key; personal data with ``--redact``). One refused is called again next time.

    Raises:
        ScorerParameterError: a setting out of range.
        SettingTypeError: ``task`` cannot be called with the one ``TaskInput`` (before any call).
        SuiteError: the suite file has errors (before any call).
        InputFileError: a case file cannot be read at all.
        OutputError: the cache directory cannot be written (before any call).
    """
    check_options(concurrency, timeout, retries, retry_delay, repeat)
    check_task(task)
    resolved = suite if isinstance(suite, Suite) else load_suite(suite)
    inputs = list(fit_cases(case_inputs(cases), resolved, before_task=True))
    cache = None
    if task_version is not None and cache_dir is not None:
        cache = OutputCache(cache_dir, task=task_name(task), task_version=task_version)
        cache.prepare()
    jobs = {
        (index, run): TaskInput.of(item.case, run)
        for index, item in enumerate(inputs)
        if isinstance(item, LoadedCase)
        for run in range(repeat)
    }
    answers: dict[tuple[int, int], TaskAnswer] = {}
    limit = asyncio.Semaphore(concurrency)
    hits = 0  # outputs read from the cache
    refused = 0  # outputs not written to it, by ``cacheable``

    def tell() -> None:
        if progress is not None:
            progress(TaskProgress(len(answers), len(jobs), hits))

    async def answer(job: tuple[int, int], task_input: TaskInput) -> None:
        nonlocal hits, refused
        got = cache.get(task_input) if cache is not None else None
        if got is not None:
            hits += 1
        else:
            async with limit:
                got = await call_task(
                    task, task_input, timeout=timeout, retries=retries, retry_delay=retry_delay
                )
            keep = cache is not None and not got.record.failed
            if keep and cacheable is not None and not cacheable(got.output):
                keep, refused = False, refused + 1
            if keep and cache is not None:
                # Off the loop: a save syncs to disk, which would stall the other calls.
                await asyncio.to_thread(cache.put, task_input, got.output, got.duration_ms)
        answers[job] = got
        tell()

    tell()
    await asyncio.gather(*(answer(job, task_input) for job, task_input in jobs.items()))
    if refused:
        _log.warning(
            "output cache: %s not cached, holding what the report cleans (a secret, say): "
            "the task is called again for them next run",
            counted(refused, "output"),
        )

    def scored(index: int, item: LoadedCase) -> CaseResult:
        runs = [
            _score_answer(resolved, item, answers[index, run], timeout) for run in range(repeat)
        ]
        return runs[0] if repeat == 1 else combine_runs(resolved, runs)

    return collect_run(resolved, inputs, scored)


def _blocking(run: Callable[P, Coroutine[Any, Any, EvalRun]]) -> Callable[P, EvalRun]:
    @functools.wraps(run)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> EvalRun:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run(*args, **kwargs))
        raise RuntimeError(
            "evaluate() runs its own event loop, and one is running already; in async code "
            "(a notebook, say) use: await evaluate_async(...)"
        )

    blocking.__name__ = blocking.__qualname__ = run.__name__.removesuffix("_async")
    return blocking


evaluate = _blocking(evaluate_async)
""":func:`evaluate_async` in an event loop of its own: the same arguments, the same result."""


def _score_answer(
    suite: Suite, item: LoadedCase, answer: TaskAnswer, timeout: float | None
) -> CaseResult:
    # A scorer that cannot read the output in the form it needs gets an error result; the others
    # still score. The duration is the output's own durationMs, else the task's time.
    case, location = item.case, item.location
    if answer.record.failed:
        return task_failed(suite, case, location, answer.record)
    scored = case.with_actual(answer.output)
    fit = check_case(scored, suite, location, require_actual=False)
    context = CaseContext.of(scored, answer.duration_ms)
    result = score_context(suite, context, location, unfit=fit.by_scorer, timeout=timeout)
    # What the answer says that cannot be meant (a misspelt operation type) is warned about,
    # as it is in a recorded output, not only in the scorers' details.
    return replace(
        result, duration_ms=answer.duration_ms, task=answer.record, warnings=fit.warnings
    )


# --- The output cache --------------------------------------------------------------------------
# An output is keyed by a SHA-256 of what the task received (never what is expected), the task's
# name, its version and the repetition: changing a suite or an expectation reuses every output.
# One JSON file per output, <dir>/<2 hex>/<64 hex>.json, written atomically; a file that cannot
# be read back is a miss (and is rewritten), never an error.


class OutputCache:
    """Outputs of one task at one version, on disk under ``directory``."""

    def __init__(self, directory: str | Path, *, task: str, task_version: str) -> None:
        self.directory = Path(directory)
        self.task = task
        self.task_version = task_version
        self._warned = False

    def prepare(self) -> None:
        """Create the directory, before any task runs (OutputError: it cannot be written)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe = self.directory / ".kp-probe"
            probe.touch()
            probe.unlink()
        except OSError as error:
            raise OutputError(
                f"cannot use {self.directory} as the output cache: {error.strerror or error}; "
                "give another directory (",
                Setting("cache_dir"),
                ") or turn the cache off (",
                Setting("cache_dir", None),
                ")",
            ) from None

    def key(self, task_input: TaskInput) -> str:
        """The SHA-256 (hex) an output is kept under."""
        identity = {
            "format": FORMAT,
            "task": self.task,
            "version": self.task_version,
            "input": task_input.to_json(),
            "run": task_input.run,
        }
        # One text per JSON value: sorted keys, no spaces, ASCII (a lone surrogate hashes too).
        text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    def _path(self, task_input: TaskInput) -> Path:
        key = self.key(task_input)
        return self.directory / key[:2] / f"{key}.json"

    def get(self, task_input: TaskInput) -> TaskAnswer | None:
        """The cached answer for this input, or ``None`` (never cached, or unreadable)."""
        path = self._path(task_input)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            _log.warning("output cache: ignoring %s, which cannot be read: %s", path, error)
            return None
        if not isinstance(document, dict) or "output" not in document:
            _log.warning("output cache: ignoring %s, which holds no output", path)
            return None
        cached = TaskRecord(attempts=0, cached=True)
        return TaskAnswer(document["output"], recorded_duration(document), cached)

    def put(self, task_input: TaskInput, output: JsonValue, duration_ms: float | None) -> None:
        """Keep an output; a failure to write is logged once, and the run goes on."""
        path = self._path(task_input)
        document = {
            "format": FORMAT,
            "task": self.task,
            "taskVersion": self.task_version,
            "caseId": task_input.case_id,
            "run": task_input.run,
            "durationMs": duration_ms,
            "output": output,
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_text(path) as stream:
                stream.write(json.dumps(document, ensure_ascii=True, indent=1) + "\n")
        except (OSError, KnowledgePulseError) as error:
            if not self._warned:
                self._warned = True
                _log.warning(
                    "output cache: cannot write %s (%s); outputs are not kept", path, error
                )
