"""``kp eval --task``: calling the user's workflow for each case's output, and ``--plugin``.

The task and the plugins are imported before anything else, so a bad spec is a one-line usage
error (exit 2) that costs nothing; task settings without ``--task`` are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click

from knowledgepulse.cli._options import Command, option_group
from knowledgepulse.evals.cases import CaseInput
from knowledgepulse.evals.evaluate import (
    DEFAULT_CACHE_DIR,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    evaluate,
)
from knowledgepulse.evals.results import EvalRun
from knowledgepulse.evals.runner import run_suite
from knowledgepulse.evals.suite import Suite
from knowledgepulse.evals.tasks import Task, load_plugin, load_task


def task_options(command: Command) -> Command:
    """``--plugin``, ``--task`` and the task's settings."""
    return option_group(
        command,
        click.option(
            "--plugin",
            "plugins",
            multiple=True,
            metavar="MODULE|FILE.py",
            help="Import a module or .py file that registers custom scorers (repeatable).",
        ),
        click.option(
            "--task",
            "task_spec",
            metavar="MODULE:FUNCTION",
            help="Call this function (or path/to/file.py:FUNCTION) on each case's input "
            "and score what it returns, instead of the cases' recorded actual outputs.",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(min=1),
            help=f"With --task: calls in flight at once [default: {DEFAULT_CONCURRENCY}].",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0),
            metavar="SECONDS",
            help="With --task: the longest one call may take; past it the case is an error, "
            f"so a hung call cannot hang CI [default: {DEFAULT_TIMEOUT_S:g}; 0: no limit].",
        ),
        click.option(
            "--retries",
            type=click.IntRange(min=0),
            help="With --task: retries of a call that raised or timed out, with backoff "
            "[default: 0].",
        ),
        click.option(
            "--repeat",
            type=click.IntRange(min=1),
            metavar="K",
            help="With --task: call K times per case; report each scorer's mean ± stderr "
            "and pass@K.",
        ),
        click.option(
            "--task-version",
            help="With --task: cache outputs under this version (change it when the task "
            "changes); a rerun then calls only for new inputs.",
        ),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="With --task-version: where outputs are cached [default: .kp-cache/outputs].",
        ),
        click.option(
            "--no-cache", is_flag=True, help="With --task: neither read nor write the cache."
        ),
    )


@dataclass(frozen=True)
class TaskSettings:
    """The task options as given (``None``: not given)."""

    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    repeat: int | None = None
    task_version: str | None = None
    cache_dir: Path | None = None
    no_cache: bool = False

    def given(self) -> list[str]:
        """The options given, by their command-line names."""
        values = {
            "--concurrency": self.concurrency,
            "--timeout": self.timeout,
            "--retries": self.retries,
            "--repeat": self.repeat,
            "--task-version": self.task_version,
            "--cache-dir": self.cache_dir,
            "--no-cache": self.no_cache or None,
        }
        return [name for name, value in values.items() if value is not None]


@dataclass(frozen=True)
class TaskRunner:
    """How the outputs are had: the cases' recorded ones, or a task's (with its settings)."""

    task: Task | None
    settings: TaskSettings

    @classmethod
    def load(
        cls, plugins: Iterable[str], task_spec: str | None, settings: TaskSettings
    ) -> TaskRunner:
        """Import the plugins and the task, first of all, so a bad spec costs nothing.

        Raises:
            click.UsageError: a task setting without --task.
            PluginLoadError: a plugin or the task cannot be loaded.
        """
        given = settings.given()
        if task_spec is None and given:
            raise click.UsageError(f"{', '.join(given)} only apply with --task MODULE:FUNCTION")
        for plugin in plugins:
            load_plugin(plugin)
        return cls(load_task(task_spec) if task_spec is not None else None, settings)

    def run(
        self,
        suite: Suite,
        inputs: Iterable[CaseInput],
        *,
        quiet: bool,
        report: Callable[[str], object],
    ) -> EvalRun:
        """Score the recorded outputs, or call the task and score its outputs."""
        if self.task is None:
            return run_suite(suite, inputs)
        settings = self.settings
        run = evaluate(
            self.task,
            inputs,
            suite,
            concurrency=settings.concurrency or DEFAULT_CONCURRENCY,
            timeout=task_timeout(settings.timeout),
            retries=settings.retries or 0,
            repeat=settings.repeat or 1,
            task_version=None if settings.no_cache else settings.task_version,
            cache_dir=settings.cache_dir or Path(DEFAULT_CACHE_DIR),
            progress=False if quiet else None,
        )
        if not quiet:
            for line in task_failures(run):
                report(line)
        return run


def task_timeout(given: float | None) -> float | None:
    """``--timeout`` as ``evaluate`` takes it: the default when not given, ``None`` for 0."""
    if given is None:
        return DEFAULT_TIMEOUT_S
    return given or None


def task_failures(run: EvalRun) -> Iterator[str]:
    """``FILE:LINE: case 'x': the task raised ...`` for each run whose task gave no output."""
    for result in run.cases:
        for number, one in enumerate(result.runs or (result,), start=1):
            if one.task is not None and one.task.failed:
                which = f" (run {number})" if result.runs else ""
                yield (
                    f"{result.location}: case {result.case_id!r}{which}: the task raised "
                    f"{one.task.error}"
                )
