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
    """Raised when an output file cannot be written (checked before any work, not after it)."""


class ProblemsError(KnowledgePulseError):
    """Base for errors that carry several located problems (``problems``), reported together."""

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
    """Raised when a baseline for ``kp compare`` or ``--baseline`` is not a ``kp eval`` report."""


class RedactionRulesError(ProblemsError, ValueError):
    """Raised when a file of custom redaction rules has errors; all of them are listed."""


class UnknownScorerError(KnowledgePulseError, LookupError):
    """Raised when a scorer type name is not registered; the message lists the known names."""


class UnknownPresetError(KnowledgePulseError, LookupError):
    """Raised when a suite preset name is not built in; the message lists the presets."""


class PluginLoadError(KnowledgePulseError, ImportError):
    """Raised when a ``--task`` or ``--plugin`` is missing, raises on import, or lacks the name."""


class ScorerParameterError(KnowledgePulseError, ValueError):
    """Raised when a scorer, embedder or vector cache gets a setting it does not take."""


class ProfileError(KnowledgePulseError, ValueError):
    """Raised when a weight profile is invalid (weights outside [0, 1] or not summing to 1)."""


class VectorError(KnowledgePulseError, ValueError):
    """Raised when a vector has the wrong length or holds NaN or infinity."""


class CacheFileError(KnowledgePulseError):
    """Raised when a saved vector cache cannot be loaded or does not fit the scorer's embedder."""


class EmbedderUnavailableError(KnowledgePulseError):
    """Raised when the embedder cannot be loaded; scoring falls back to novelty 0.5 without it."""


class MissingDependencyError(KnowledgePulseError, ImportError):
    """Raised when an optional dependency is not installed; the message names the extra."""


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
