"""The output cache: a task's answers on disk, so a rerun re-scores without calling the model.

An output is keyed by a SHA-256 of what the task received (never what is expected), the task's
name, its version and the repetition: changing a suite or an expectation reuses every output.
Only answers are kept. One JSON file per output, ``<dir>/<2 hex>/<64 hex>.json``, written
atomically; a file that cannot be read back is a miss (and is rewritten), never an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from knowledgepulse._util.atomic import atomic_text
from knowledgepulse.errors import KnowledgePulseError, OutputError
from knowledgepulse.evals.tasks import TaskInput

DEFAULT_CACHE_DIR = Path(".kp-cache") / "outputs"
"""Where outputs are cached unless told otherwise (relative to the working directory)."""
FORMAT = 1
"""The cache's format; part of every key, so a new format never reads an old file."""

_log = logging.getLogger("knowledgepulse")


@dataclass(frozen=True, slots=True)
class CachedOutput:
    """An output read back from the cache, with how long the task took to give it."""

    output: JsonValue
    duration_ms: float | None


class OutputCache:
    """Outputs of one task at one version, on disk under ``directory``."""

    def __init__(self, directory: str | Path, *, task: str, task_version: str) -> None:
        self.directory = Path(directory)
        self.task = task
        self.task_version = task_version
        self._warned = False

    def prepare(self) -> None:
        """Create the directory, before any task runs.

        Raises:
            OutputError: it cannot be created or written.
        """
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe = self.directory / ".kp-probe"
            probe.touch()
            probe.unlink()
        except OSError as error:
            raise OutputError(
                f"cannot use {self.directory} as the output cache: {error.strerror or error}; "
                "give another directory (cache_dir, --cache-dir) or turn the cache off "
                "(--no-cache)"
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
        return hashlib.sha256(_canonical(identity).encode("ascii")).hexdigest()

    def path(self, task_input: TaskInput) -> Path:
        """The file an output is kept in."""
        key = self.key(task_input)
        return self.directory / key[:2] / f"{key}.json"

    def get(self, task_input: TaskInput) -> CachedOutput | None:
        """The cached output for this input, or ``None`` (never cached, or unreadable)."""
        path = self.path(task_input)
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
        duration = document.get("durationMs")
        if not (isinstance(duration, int | float) and math.isfinite(duration) and duration >= 0):
            duration = None
        return CachedOutput(document["output"], None if duration is None else float(duration))

    def put(self, task_input: TaskInput, output: JsonValue, duration_ms: float | None) -> None:
        """Keep an output; a failure to write is logged once, and the run goes on."""
        path = self.path(task_input)
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


def _canonical(value: Any) -> str:
    """One text per JSON value: sorted keys, no spaces, ASCII (so a lone surrogate hashes too)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
