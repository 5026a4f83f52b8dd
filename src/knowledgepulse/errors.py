"""Every error knowledgepulse raises on purpose derives from :class:`KnowledgePulseError`.

Each message says what is wrong, where (file, line, JSON path) and how to fix it; the CLI turns
these into one-line messages and exit codes in one place (``knowledgepulse.cli.main``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType

from knowledgepulse.problems import Problem

__all__ = [
    "CacheFileError",
    "CaseValidationError",
    "EmbedderUnavailableError",
    "InputFileError",
    "KnowledgePulseError",
    "MissingDependencyError",
    "OutputError",
    "PluginLoadError",
    "ProblemsError",
    "ProfileError",
    "RedactionRulesError",
    "ReportFileError",
    "ScorerParameterError",
    "SuiteError",
    "TraceValidationError",
    "UnknownPresetError",
    "UnknownScorerError",
    "VectorError",
    "missing_extra",
]


class KnowledgePulseError(Exception):
    """Base class of every error knowledgepulse raises on purpose."""


class InputFileError(KnowledgePulseError):
    """Raised when an input file cannot be read at all (missing, unreadable, unknown format)."""


class OutputError(KnowledgePulseError):
    """Raised when an output file (report, annotated traces, cache) cannot be written.

    Commands check their destinations before any work, so this reaches users before, not after,
    a long run.
    """


class ProblemsError(KnowledgePulseError):
    """Base for errors that carry several located problems, reported together.

    Attributes:
        problems: every problem found, each with its location and JSON path.
    """

    def __init__(self, summary: str, problems: Sequence[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        lines = [summary, *(f"  {problem}" for problem in self.problems)]
        super().__init__("\n".join(lines))


class TraceValidationError(ProblemsError, ValueError):
    """Raised when a document is not a valid ``ReasoningTrace`` (each problem names its path)."""


class CaseValidationError(ProblemsError, ValueError):
    """Raised when an evaluation case is malformed (each problem names its path)."""


class SuiteError(ProblemsError):
    """Raised before any case runs when a suite file has errors; all of them are listed."""


class ReportFileError(ProblemsError):
    """Raised when a file given as a ``kp eval`` JSON report (a baseline) is not one.

    ``kp compare`` and ``kp eval --baseline`` raise it before comparing; each problem names the
    JSON path that is wrong.
    """


class RedactionRulesError(ProblemsError, ValueError):
    """Raised when a file of custom redaction rules has errors; all of them are listed."""


class UnknownScorerError(KnowledgePulseError, LookupError):
    """Raised when a scorer type name is not registered; the message lists the known names."""


class UnknownPresetError(KnowledgePulseError, LookupError):
    """Raised when a suite preset name is not built in; the message lists the presets."""


class PluginLoadError(KnowledgePulseError, ImportError):
    """Raised when a task or scorer plugin (``--task``, ``--plugin``) cannot be loaded.

    The module or file is missing, raises when imported, or has no such callable; the message
    names the spec as given and how to fix it.
    """


class ScorerParameterError(KnowledgePulseError, ValueError):
    """Raised when a scorer, embedder or vector cache gets a setting it does not take.

    Also for a value out of range; the message names the setting and the value given.
    """


class ProfileError(KnowledgePulseError, ValueError):
    """Raised when a weight profile is invalid (weights outside [0, 1] or not summing to 1)."""


class VectorError(KnowledgePulseError, ValueError):
    """Raised when a vector has the wrong length or holds NaN or infinity."""


class CacheFileError(KnowledgePulseError):
    """Raised when a saved vector cache cannot be loaded or does not fit the scorer's embedder."""


class EmbedderUnavailableError(KnowledgePulseError):
    """Raised when the embedder cannot be loaded (extra not installed, model file missing or bad).

    Scoring catches it and falls back to novelty 0.5; it reaches users only when they ask for the
    embedder explicitly.
    """


class MissingDependencyError(KnowledgePulseError, ImportError):
    """Raised when a live collector is used without its framework; the message names the extra.

    Reading a framework's files never needs it: only the live hooks (a LangChain tracer, an
    Agents SDK processor, an OpenTelemetry span processor) import the framework.
    """


def missing_extra(package: str, extra: str, error: ImportError) -> MissingDependencyError:
    """The error for a live collector whose framework is not installed."""
    return MissingDependencyError(
        f"this needs {package}, which is not installed ({error}); "
        f'install it with: pip install "knowledgepulse[{extra}]"'
    )


def import_optional(name: str, missing: Callable[[ImportError], Exception]) -> ModuleType:
    """The optional module ``name``, imported on first use rather than with knowledgepulse.

    Raises:
        Exception: what ``missing`` builds from the ``ImportError`` (the caller's error, with
            the ``pip install`` line), unchained: a traceback would bury that line.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise missing(error) from None
