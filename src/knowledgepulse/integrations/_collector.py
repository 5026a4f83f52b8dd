"""What every live collector shares: score each finished trace, keep it, hand it on, never fail.

A collector sits inside the user's agent run (a LangChain callback, an Agents SDK processor, an
OpenTelemetry span processor). Whatever goes wrong in it — a payload shape we did not expect, a
scorer error, the user's own ``on_trace`` raising — is logged and swallowed: the agent's run goes
on and returns what it returned (``docs/integrations.md``, "Never break the agent").

``kp.capture`` switches on every importable live hook for the duration of one call. For that,
each live module (``langchain``, ``openai_agents``, ``otel``) offers
``activate(collector) -> ContextManager``: while inside, runs *started in this context* (a
:mod:`contextvars` context: asyncio tasks started from it too, but not a plain
``threading.Thread``, which does not inherit the context) are converted and
given to ``collector.finish``; outside, the hook does nothing. A module whose framework is not
installed raises :class:`~knowledgepulse.errors.MissingDependencyError` from ``activate``.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, TypedDict, TypeVar, cast

from knowledgepulse._util.settings import count_of, wrong_setting
from knowledgepulse.errors import ConversionError, missing_extra
from knowledgepulse.records import Record
from knowledgepulse.sources._envelope import NO_TEXT, TraceOptions
from knowledgepulse.trace import ReasoningTrace, TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer, ValueBreakdown
from knowledgepulse.value.scorer import default_scorer

if TYPE_CHECKING:  # the rules, regex and ahocorasick_rs load only for a collector that redacts
    from knowledgepulse.redact.items import Redactor

logger = logging.getLogger("knowledgepulse.integrations")

T = TypeVar("T")

DEFAULT_KEEP = 1000
"""How many finished traces a collector keeps (the oldest go first); ``on_trace`` sees all."""


OnTrace = Callable[[ScoredItem], object]
"""Called with each captured run: its trace (scored), breakdown, warnings (``.item.warnings``)."""


class CollectorSettings(TypedDict, total=False):
    """The settings every live hook takes: :class:`Collector`'s arguments."""

    domain: str | None
    confidence: float | None
    scorer: TraceValueScorer | None
    on_trace: OnTrace | None
    keep: int
    redact: bool | Redactor


def imported(name: str) -> ModuleType | None:
    """The module ``name`` if its import has finished, else ``None``.

    A module is in ``sys.modules`` from the start of its import: another thread importing it
    (two first calls of a capture at once) would hand over a half-made module, which
    ``importlib.import_module`` waits for, as Python's own import does.
    """
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def live_module(name: str, framework: str, package: str, extra: str) -> ModuleType:
    """The live module ``name``, its ``framework`` imported first.

    When both are imported already they are looked up, not imported again: ``kp.capture`` makes
    its hooks at each step of a generator, and an import's locks cost some 15 µs each.

    Raises:
        MissingDependencyError: ``framework`` (the PyPI ``package``, in the ``extra``) is not
            installed, or is but fails to import.
    """
    module = imported(name)
    if module is not None and imported(framework) is not None:
        return module
    try:
        importlib.import_module(framework)
        return importlib.import_module(name)
    except ImportError as error:
        raise missing_extra(package, extra, error, framework) from error


def checked_on_trace(on_trace: object) -> OnTrace | None:
    """``on_trace`` as a collector was given it: a function, or ``None``.

    Raises:
        SettingTypeError: anything else, which would fail (logged) at every trace.
    """
    if on_trace is None or callable(on_trace):
        return cast(OnTrace | None, on_trace)
    raise wrong_setting(
        "on_trace", on_trace, "a function taking a ScoredItem, or None", wrong_type=True
    )


class Collector:
    """Scores the traces a live hook finishes, keeps the last ``keep`` of them, calls ``on_trace``.

    Args:
        domain: the ``task_domain`` of every trace (else the root's ``kp.task_domain``, else
            ``default``).
        confidence: the outcome confidence of every trace (else ``kp.confidence``, else 0.8 on
            success and 0.2 on failure).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each captured run, a :class:`~knowledgepulse.value.ScoredItem`;
            an exception in it is logged.
        keep: how many captured traces :attr:`captured` keeps (the oldest dropped first).
        redact: ``True``: redact each trace before it is scored and kept, secrets always and
            personal identifiers by its ``metadata.privacy_level`` (a captured trace's is
            ``private``: secrets only); a :class:`~knowledgepulse.redact.items.Redactor`
            (``Redactor("aggregated")``): at its level, by its rules, counting what it
            redacted. Only novelty reads the text, so only novelty can change.

    A ``domain`` that names none of the scorer's weight profiles is logged as a warning (its
    traces get the ``default`` weights), as ``kp`` says it for ``--domain``.

    Raises:
        ScorerParameterError: a setting out of range or of the wrong type (an ``on_trace``
            that is no function, a ``keep`` below 1, a ``redact`` that is no bool or Redactor).
    """

    def __init__(
        self,
        *,
        domain: str | None = None,
        confidence: float | None = None,
        scorer: TraceValueScorer | None = None,
        on_trace: OnTrace | None = None,
        keep: int = DEFAULT_KEEP,
        redact: bool | Redactor = False,
    ) -> None:
        self.options = TraceOptions(domain=domain, confidence=confidence)
        # Checked here: a level's name given as redact="aggregated" would otherwise fail, logged,
        # at every trace, and nothing would be captured.
        if not isinstance(redact, bool) and not callable(getattr(redact, "redact", None)):
            raise wrong_setting(
                "redact",
                redact,
                "True, False, or a Redactor (for a privacy level: "
                "knowledgepulse.redact.items.Redactor('aggregated'))",
                wrong_type=True,
            )
        self.redact = redact
        self._redactor: Redactor | None = None if isinstance(redact, bool) else redact
        if scorer is not None and not callable(getattr(scorer, "score", None)):
            raise wrong_setting(
                "scorer", scorer, "a TraceValueScorer, or None for the default", wrong_type=True
            )
        self._scorer = scorer
        if domain and (said := (scorer or default_scorer()).profiles.unweighed(domain)):
            logger.warning("knowledgepulse: %s", said)
        self._on_trace = checked_on_trace(on_trace)
        self._captured: deque[ScoredItem] = deque(maxlen=count_of(keep, "keep", least=1))
        self._lock = threading.Lock()
        self._warned_no_text = False

    @property
    def captured(self) -> list[ScoredItem]:
        """The traces captured so far (the last ``keep``), oldest first."""
        with self._lock:
            return list(self._captured)

    @property
    def traces(self) -> list[ReasoningTrace]:
        """The captured traces, oldest first."""
        return [item.trace for item in self.captured]

    @property
    def breakdowns(self) -> list[ValueBreakdown]:
        """The captured traces' breakdowns, oldest first."""
        return [item.breakdown for item in self.captured]

    def clear(self) -> None:
        """Forget the captured traces."""
        with self._lock:
            self._captured.clear()

    def finish(self, build: Callable[[], TraceItem]) -> None:
        """Convert, score, keep and hand on one finished trace; log (never raise) any failure."""
        try:
            captured = self._score(build())
        except ConversionError as error:
            # A run that holds no step (a stream left before any output, a chain with no model):
            # said in one line; a traceback is for what kp did not expect.
            logger.warning(
                "knowledgepulse could not capture a trace: %s; the agent run goes on", error
            )
            return
        except Exception:
            logger.exception("knowledgepulse could not capture a trace; the agent run goes on")
            return
        no_text = next((w for w in captured.item.warnings if NO_TEXT in w), None)
        if no_text is not None and not self._warned_no_text:
            self._warned_no_text = True
            logger.warning("knowledgepulse: %s", no_text)
        with self._lock:
            self._captured.append(captured)
        if self._on_trace is not None:
            try:
                self._on_trace(captured)
            except Exception:
                logger.exception("knowledgepulse: on_trace raised; the agent run goes on")

    def _score(self, item: TraceItem) -> ScoredItem:
        if self.redact is not False:
            item = self._redacted(item)
        trace = item.trace
        breakdown = (self._scorer or default_scorer()).score(trace)
        trace = trace.model_copy(
            update={
                "metadata": trace.metadata.model_copy(update={"quality_score": breakdown.score})
            }
        )
        # The document written for the item is the trace as kept: redacted, with its score.
        document = trace.model_dump(mode="json", by_alias=True, exclude_none=True)
        record = Record(item.location, document)
        return ScoredItem(replace(item, record=record, trace=trace), breakdown)

    def kept_value(self, value: T) -> T:
        """``value`` (a run as the framework gave it, kept to be saved) redacted as traces are.

        A collector that does not redact gives it back as it is; one that does cleans it at its
        redactor's level, else at ``private`` (secrets only), the level of a captured trace.
        """
        if self.redact is False:
            return value
        from knowledgepulse.redact.walk import redact_value  # noqa: PLC0415 - the rules load

        redactor = self._made_redactor()
        cleaned, _ = redact_value(value, redactor.level or "private", redactor.rules)
        return cast(T, cleaned)

    def _made_redactor(self) -> Redactor:
        if self._redactor is None:  # redact=True: by each trace's privacy level
            from knowledgepulse.redact.items import Redactor  # noqa: PLC0415 - the rules load

            self._redactor = Redactor()
        return self._redactor

    def _redacted(self, item: TraceItem) -> TraceItem:
        """The item redacted, and counted in the redactor (``types``) under the lock."""
        redactor = self._made_redactor()
        cleaned, findings = redactor.redact(item, count=False)
        with self._lock:
            redactor.count(item, findings)
        return cleaned
