"""What went wrong: the errors knowledgepulse raises, and the located problems of bad input.

Every error raised on purpose derives from :class:`KnowledgePulseError`; each message says what
is wrong, where and how to fix it, naming the parameters it is about as Python spells them (a
:class:`Setting`; the ``kp`` command shows its options instead). Every layer reports bad input as
a located :class:`Problem`.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import importlib
import importlib.metadata
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, ModuleType
from typing import TYPE_CHECKING, Any

from knowledgepulse._printable import printable

if TYPE_CHECKING:  # records sit above this module: the type is named, never imported
    from knowledgepulse.records import Record

# The errors a caller catches. The other errors report a wrong argument (each is also a ValueError
# or LookupError); Setting and the functions below build messages.
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
    "ReportFileError",
    "SuiteError",
    "TraceValidationError",
]


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record starts: its file, 1-based line, and 0-based index among the file's records.

    ``in_memory``: the record was handed over in memory (a Python caller's rows, a Ray
    Dataset's), so ``file`` only names it (``rows``) and no file of that name is ever read.
    """

    file: str
    line: int | None = None
    index: int | None = None
    in_memory: bool = False

    @classmethod
    def of_row(cls, name: str, index: int, *, in_memory: bool = False) -> Location:
        """Row ``index`` (0-based) of the table ``name``, told ``NAME:ROW`` (1-based, as a line).

        The one wording of a dataset row's place, whether read from a file, from rows in memory
        (``rows:3``, ``in_memory``) or from a Ray Dataset, so that a problem reads the same on
        every path.
        """
        return cls(name, index + 1, index, in_memory)

    def __str__(self) -> str:
        # The name comes from data (a file's, a folder's): shown on one line, its controls
        # escaped, so that a name with a newline cannot cut or forge the message it begins.
        file = printable(self.file, one_line=True)
        if self.line is not None:
            return f"{file}:{self.line}"
        if self.index is not None:
            return f"{file}[{self.index}]"
        return file

    def at_line(self, line: int | None) -> Location:
        """The same record, pointing at a more precise line when one is known."""
        return self if line is None else Location(self.file, line, self.index, self.in_memory)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the input: where, the JSON path inside the record, and why.

    A ``warning`` (a duplicate id, say) is reported and counted but rejects nothing.
    ``record``: the record it is about, when there is one (a dataset row that gives no trace
    is written back with its error, ``kp score --annotate``); not part of its value. ``row``:
    the record is a dataset row (a source of rows read it, or none recognised it), so it is
    written back even when no row of its file gave a trace.
    """

    location: Location
    path: str
    message: str
    warning: bool = False
    record: Record | None = field(default=None, compare=False, repr=False)
    row: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        label = "warning: " if self.warning else ""
        path = f"{self.path}: " if self.path else ""
        return f"{self.location}: {label}{path}{self.message}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON reports."""
        return {
            "file": self.location.file,
            "line": self.location.line,
            "index": self.location.index,
            "path": self.path,
            "message": self.message,
            "severity": "warning" if self.warning else "error",
        }


class _NoValue(enum.Enum):
    NO_VALUE = enum.auto()


NO_VALUE = _NoValue.NO_VALUE
"""A :class:`Setting` named without a value (``max_elements``, not ``max_elements=10``)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """A parameter an error message names, with the value it has or should have, if any.

    ``str()`` spells it as Python does: ``device='cuda:3'``, ``read_only=False``, or the bare
    name (which may be a call's: ``VectorCache.open``). A shell spells it as its own option
    instead (``kp``: ``--device cuda:3``), so that each reader sees what they would type; a
    user's value is shown as it is, never rewritten.
    """

    name: str
    value: str | int | float | bool | _NoValue | None = NO_VALUE

    def __str__(self) -> str:
        return self.name if self.value is NO_VALUE else f"{self.name}={self.value!r}"


_SPELLING: ContextVar[Callable[[Setting], str]] = ContextVar("knowledgepulse_spelling", default=str)


def spelt(setting: Setting) -> str:
    """A setting named in a text that is no error (a case's reason), as the caller spells it.

    Python's name (``timeout``) by default; under :func:`spelling_settings` (``kp`` runs each
    command under it) the shell's option (``--timeout``), as :meth:`KnowledgePulseError.
    message_with` spells an error's.
    """
    return _SPELLING.get()(setting)


@contextlib.contextmanager
def spelling_settings(spell: Callable[[Setting], str]) -> Iterator[None]:
    """Spell the settings :func:`spelt` names with ``spell`` while the block runs."""
    token = _SPELLING.set(spell)
    try:
        yield
    finally:
        _SPELLING.reset(token)


class KnowledgePulseError(Exception):
    """Base class of every error knowledgepulse raises on purpose.

    The message is given in parts (kept as :attr:`parts`): text, and the settings it names
    (:class:`Setting`). ``str()`` spells the settings as Python does; :meth:`message_with` lets
    a shell spell them as its options.
    """

    def __init__(self, *parts: str | Setting) -> None:
        self.parts: tuple[str | Setting, ...] = parts
        super().__init__("".join(map(str, parts)))

    def message_with(self, spell: Callable[[Setting], str]) -> str:
        """The message with each setting in it spelt by ``spell``, the rest as it is."""
        return "".join(
            spell(part) if isinstance(part, Setting) else str(part) for part in self.parts
        )

    @property
    def also(self) -> tuple[str, ...]:
        """The errors found together with this one, added to it as notes (:pep:`678`)."""
        return tuple(getattr(self, "__notes__", ()))


class InputFileError(KnowledgePulseError):
    """Raised when an input file cannot be read at all (missing, unreadable, unknown format)."""


class OutputError(KnowledgePulseError):
    """Raised when an output file cannot be written (checked before any work, not after it)."""


class ProblemsError(KnowledgePulseError):
    """Base for errors that carry several located problems (``problems``), reported together."""

    def __init__(self, summary: str, problems: Sequence[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join([summary, *(f"  {problem}" for problem in self.problems)]))


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


class UnknownSourceError(KnowledgePulseError, LookupError):
    """Raised when a source name (``--from``) is not registered; the message lists the known."""


class UnknownPresetError(KnowledgePulseError, LookupError):
    """Raised when a suite preset name is not built in; the message lists the presets."""


class PluginLoadError(KnowledgePulseError, ImportError):
    """Raised when a ``--task`` or ``--plugin`` is missing, raises on import, or lacks the name."""


class ParameterConflictError(KnowledgePulseError, ValueError):
    """Raised when parameters given together contradict each other (a shell's usage error)."""


class ConversionError(KnowledgePulseError, ValueError):
    """Raised when a source's record holds too little to make a trace of (no step at all, say).

    What a source's ``to_trace`` raises on an object it cannot convert.
    """


class ScorerParameterError(KnowledgePulseError, ValueError):
    """Raised when a call gets a setting it does not take: out of range, or none of the names.

    A scorer's, an embedder's or a vector cache's; a run's (``select(budget=-1)``), a source's.
    """


class SettingTypeError(ScorerParameterError, TypeError):
    """Raised when a setting is of the wrong type (``budget="3"``); a TypeError, as Python's own."""


class ProfileError(KnowledgePulseError, ValueError):
    """Raised when a weight profile is invalid (weights outside [0, 1] or not summing to 1)."""


class VectorError(KnowledgePulseError, ValueError):
    """Raised when a vector has the wrong length or holds NaN or infinity."""


class CacheFileError(KnowledgePulseError):
    """Raised when a saved vector cache cannot be loaded or does not fit the scorer's embedder."""


class EmbedderUnavailableError(KnowledgePulseError):
    """Raised when the embedder cannot be loaded; scoring falls back to novelty 0.5 without it."""


class MissingDependencyError(KnowledgePulseError, ImportError):
    """Raised when an optional dependency is missing or fails to import; the message says which.

    Not installed: it names the extra. Installed but failing: its error and the reinstall line.
    """


# Where this package was imported from: a checkout's src/ or an installed wheel's site-packages.
_PACKAGE = Path(__file__).parent


def os_message(error: OSError) -> str:
    """What the system refused, on the file it names, and what to do when that is known.

    ``out.jsonl: No space left on device; free some space, or write elsewhere``.
    """
    where = f"{Location(str(error.filename))}: " if error.filename else ""
    fix = _OS_FIXES.get(error.errno or 0, "")
    return f"{where}{error.strerror or error}{fix}"


_OS_FIXES = {
    errno.ENOSPC: "; free some space, or write elsewhere",
    errno.EDQUOT: "; free some space within your quota, or write elsewhere",
    errno.EFBIG: "; the file system takes no file this large: write elsewhere",
    errno.EACCES: "; check its permissions, or use another path",
    errno.EPERM: "; check its permissions, or use another path",
}


def install_hint(extra: str, package: Path = _PACKAGE) -> str:
    """How to add an optional extra, the way this knowledgepulse was installed.

    From a checkout (an editable install, or ``src`` on the path): ``pip install -e ".[x]"``
    there. From a wheel: ``pip install 'knowledgepulse[x]'``, which keeps the knowledgepulse
    installed (no package index need have it) and adds the extra's packages; a wheel user has
    no checkout to run the other in.
    """
    if _in_checkout(package):
        return f'pip install -e ".[{extra}]" in the knowledgepulse checkout'
    return f"pip install 'knowledgepulse[{extra}]'"


def _in_checkout(package: Path) -> bool:
    """Whether the package folder is a checkout's ``src/knowledgepulse`` (beside pyproject.toml)."""
    return package.parent.name == "src" and (package.parent.parent / "pyproject.toml").is_file()


def missing_extra(
    package: str, extra: str, error: ImportError, framework: str
) -> MissingDependencyError:
    """The error for a live collector whose ``framework`` (the PyPI ``package``) fails to import."""
    if not not_installed(framework, error):
        return MissingDependencyError(cannot_import(package, error))
    return MissingDependencyError(
        f"this needs {package}, which is not installed ({error}); "
        f"install it with: {install_hint(extra)}"
    )


def not_installed(name: str, error: ImportError) -> bool:
    """Whether ``error``, raised importing the module ``name``, says that it is not installed.

    Only a ModuleNotFoundError for ``name`` or a package above it does. Any other ImportError
    (``numpy.core.multiarray failed to import``, a shared library that does not load), or a
    ModuleNotFoundError for another module, was raised by the package's own code as it ran:
    it is installed, and an install line would send the user to add what is there already.
    """
    absent = error.name if isinstance(error, ModuleNotFoundError) else None
    return absent is not None and (name == absent or name.startswith(f"{absent}."))


def cannot_import(package: str, error: ImportError) -> str:
    """What to do about the PyPI ``package``, installed, whose import raised ``error``.

    The error's last line: numpy's runs to a paragraph, and a C extension's ends with the
    ``failed to import`` that says what broke.
    """
    lines = str(error).strip().splitlines()
    why = lines[-1].strip() if lines else repr(error)
    return (
        f"{package} is installed but cannot be imported: {why}; this is usually a version "
        f"clash with a package it was built against (numpy, say), or a damaged install: "
        f"reinstall it with: pip install -U --force-reinstall {package}, and run pip check "
        "to see which packages clash"
    )


def distribution_of(name: str) -> str:
    """The PyPI package that installs the module ``name`` (``yaml``: ``PyYAML``), else its top."""
    top = name.partition(".")[0]
    return importlib.metadata.packages_distributions().get(top, [top])[0]


def import_optional(name: str, missing: Callable[[ImportError], Exception]) -> ModuleType:
    """The optional module ``name``; if missing, ``missing(error)``, unchained (no traceback).

    Installed but failing to import (:func:`not_installed`), the error is of ``missing``'s
    type, so that its callers catch it as before (the embedder's fall back to novelty 0.5),
    but says so, with the reinstall line instead of the install one.

    A Ctrl-C during the import stays one: C extensions (numpy's, onnxruntime's) turn the
    ``KeyboardInterrupt`` into an ``ImportError``, which would pass for a missing package and
    let an interrupted run go on without it and exit 0.
    """
    with _ctrl_c_noted() as noted:
        try:
            return importlib.import_module(name)
        except ImportError as error:
            if noted:
                raise KeyboardInterrupt from None
            problem = missing(error)
            if not not_installed(name, error):
                problem = type(problem)(cannot_import(distribution_of(name), error))
            raise problem from None


@contextlib.contextmanager
def _ctrl_c_noted() -> Iterator[list[int]]:
    """In this block a Ctrl-C is noted in the list yielded, then handled as before.

    Only the main thread may handle a signal; elsewhere, or with Ctrl-C ignored, nothing changes.
    """
    noted: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous) or threading.current_thread() is not threading.main_thread():
        yield noted
        return

    def note(signum: int, frame: FrameType | None) -> Any:
        noted.append(signum)
        return previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)
