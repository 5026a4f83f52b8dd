"""``kp.capture``: score the real steps of any agent function, through the live collectors.

The TypeScript SDK's ``KPCapture.wrap(fn)`` records two made-up steps around the call, which can
never reach the sharing threshold (the project's specification, "Why step-level capture"). This one
has the same shape — a decorator, also usable as ``with`` / ``async with`` — but records what the
agent really did: for the duration of the call it switches on every live collector whose framework
is installed (``langchain``, ``openai_agents``, ``otel``: each module's ``activate(collector)``,
see ``_collector.py``), so each run the function makes is converted, scored and handed to
``on_trace``::

    @kp.capture(domain="code", on_trace=print)
    def solve(task): ...

    with kp.capture() as cap:
        graph.invoke(inputs)
    cap.traces

It never changes what the function returns or raises; a collector that fails is logged. When a
call ends and no collector caught a run, it says so once, naming what to install or switch on; it
never invents steps.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Iterator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack, cast, overload

from knowledgepulse._util.settings import function_of, one_of
from knowledgepulse.errors import MissingDependencyError, install_hint
from knowledgepulse.integrations._collector import (
    Collector,
    CollectorSettings,
    checked_on_trace,
    imported,
    logger,
)

HOOKS: tuple[str, ...] = ("langchain", "openai_agents", "otel")
"""The live modules ``capture`` switches on, each through its ``activate(collector)``."""

NOTHING_CAUGHT = (
    "kp.capture: no trace was captured during %s. It records the runs of a framework it hooks "
    "into: LangChain / LangGraph (the langchain extra: " + install_hint("langchain") + "), the "
    "OpenAI Agents SDK (the openai-agents extra), or OpenTelemetry GenAI spans (the otel extra; "
    "Pydantic AI: Agent.instrument_all()). For smolagents or Pydantic "
    "AI results, call kp.integrations.smolagents.to_trace / pydantic_ai.to_trace. A run started "
    "in another thread (threading.Thread, a ThreadPoolExecutor) is not seen, since a thread does "
    "not inherit the context: start it with contextvars.copy_context().run(fn, ...), or capture "
    "inside the thread. Hooks active: %s"
)

P = ParamSpec("P")
R = TypeVar("R")


class Capture(Collector):
    """Collects, scores and keeps the runs made inside a call or a ``with`` block.

    Use it as a decorator (sync or async functions, generators), as a context manager, or through
    :meth:`wrap` (the TS SDK's name). The traces stay on it: :attr:`traces`, :attr:`breakdowns`,
    :attr:`captured`. Arguments as :class:`~knowledgepulse.integrations._collector.Collector`.
    """

    def __init__(
        self, *, hooks: tuple[str, ...] = HOOKS, **settings: Unpack[CollectorSettings]
    ) -> None:
        on_trace = settings.get("on_trace")
        settings["on_trace"] = self._caught  # which counts the runs, then calls the user's
        super().__init__(**settings)
        self._user_on_trace = checked_on_trace(on_trace)
        # A misspelt hook would switch nothing on, and only "no trace was captured" would tell.
        self._hooks = tuple(one_of(name, "hooks", HOOKS) for name in hooks)
        self._count = 0
        self._count_lock = threading.Lock()
        self._warned_nothing = False
        self._open: contextvars.ContextVar[tuple[_Session, ...]] = contextvars.ContextVar(
            f"kp_capture_{id(self)}", default=()
        )
        # Whether a session of this capture has its hooks on in this context: one started inside
        # it (a decorated function calling another, a recursive one, `with cap` around a call of
        # a function `cap` decorates) leaves them to it, or each run would be kept twice.
        self._hooked: contextvars.ContextVar[bool] = contextvars.ContextVar(
            f"kp_capture_hooked_{id(self)}", default=False
        )

    def _caught(self, captured: Any) -> None:
        with self._count_lock:
            self._count += 1
        if self._user_on_trace is not None:
            self._user_on_trace(captured)  # the collector logs what it raises

    def __enter__(self) -> Capture:
        session = _Session(self, "the with block")
        self._open.set((*self._open.get(), session))
        session.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        sessions = self._open.get()
        if sessions:
            self._open.set(sessions[:-1])
            sessions[-1].__exit__(kind, error, traceback)

    async def __aenter__(self) -> Capture:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, traceback)

    def __call__(self, function: Callable[P, R]) -> Callable[P, R]:
        """``function``, recording the runs of each call; it returns and raises as before."""
        label = f"{getattr(function, '__qualname__', function)!s}()"
        wrapper: Callable[..., Any]
        if inspect.isasyncgenfunction(function):
            wrapper = _async_generator_wrapper(self, function, label)
        elif inspect.iscoroutinefunction(function):

            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with _Session(self, label):
                    return await function(*args, **kwargs)

            wrapper = async_wrapper
        elif inspect.isgeneratorfunction(function):
            wrapper = _generator_wrapper(self, function, label)
        else:

            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                with _Session(self, label):
                    return function(*args, **kwargs)

            wrapper = sync_wrapper
        wrapped = functools.wraps(function)(wrapper)
        wrapped.kp_capture = self  # type: ignore[attr-defined]
        return cast(Callable[P, R], wrapped)

    def wrap(self, function: Callable[P, R]) -> Callable[P, R]:
        """The TS SDK's ``KPCapture.wrap``: the same as decorating ``function``."""
        return self(function)


def _async_generator_wrapper(
    capture: Capture, function: Callable[..., AsyncGenerator[Any, Any]], label: str
) -> Callable[..., AsyncGenerator[Any, Any]]:
    """``function``'s wrapper: the hooks on while a step of the generator runs.

    Not across its yields: a consumer that breaks out of its loop would otherwise keep them on
    in its own context, catching its own later runs, and the generator, closed later from
    another task, could not reset them. What the consumer sends or throws in goes on to it.
    """

    async def wrapper(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, Any]:
        session = _Session(capture, label)
        session.begin()
        inner = function(*args, **kwargs)
        try:
            step: Callable[[], Awaitable[Any]] = functools.partial(inner.asend, None)
            while True:
                with session.running_step():
                    try:
                        item = await step()
                    except StopAsyncIteration:
                        return
                try:
                    step = functools.partial(inner.asend, (yield item))
                except GeneratorExit:
                    raise
                except BaseException as error:
                    step = functools.partial(inner.athrow, error)
        finally:
            await inner.aclose()
            session.end()

    return wrapper


def _generator_wrapper(
    capture: Capture, function: Callable[..., Generator[Any, Any, Any]], label: str
) -> Callable[..., Generator[Any, Any, Any]]:
    """``function``'s wrapper: as :func:`_async_generator_wrapper`, for a generator."""

    def wrapper(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        session = _Session(capture, label)
        session.begin()
        inner = function(*args, **kwargs)
        try:
            step: Callable[[], Any] = functools.partial(inner.send, None)
            while True:
                with session.running_step():
                    try:
                        item = step()
                    except StopIteration as stop:
                        return stop.value
                try:
                    step = functools.partial(inner.send, (yield item))
                except GeneratorExit:
                    raise
                except BaseException as error:
                    step = functools.partial(inner.throw, error)
        finally:
            inner.close()
            session.end()

    return wrapper


class _Session:
    """One call (or ``with`` block): the hooks it switched on, and the traces count at its start.

    A fresh session per call, so calls may overlap; ``with`` switches its hooks on for the call.
    """

    def __init__(self, capture: Capture, label: str) -> None:
        self._capture = capture
        self._label = label
        self._entered: list[tuple[str, AbstractContextManager[Any]]] = []
        self._count_at_start = 0
        self._inner = False
        self._active: list[str] = []  # the hooks it switched on, for the nothing-caught warning

    def __enter__(self) -> None:
        self.begin()
        self.hook()

    def begin(self) -> None:
        """Note how many traces were caught before the call."""
        self._count_at_start = self._capture._count

    def hook(self) -> None:
        """Switch the hooks on in this context."""
        self._inner = self._capture._hooked.get()
        if self._inner:
            return  # the session around this one routes its runs here already
        self._capture._hooked.set(True)
        for name in self._capture._hooks:
            manager = _activate(name, self._capture)
            if manager is None:
                continue
            try:
                manager.__enter__()
            except Exception:
                logger.exception("kp.capture: the %s hook failed to start; the call goes on", name)
                continue
            self._entered.append((name, manager))
            if name not in self._active:
                self._active.append(name)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.unhook(kind, error, traceback)
        self.end()

    def unhook(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Switch the hooks off, in the context that switched them on."""
        # Each hook is closed even if another fails; what a hook returns is ignored, so it can
        # never swallow the user's exception.
        if self._inner:
            return  # the outer session routes the runs
        for name, manager in reversed(self._entered):
            try:
                manager.__exit__(kind, error, traceback)
            except Exception:
                logger.exception("kp.capture: the %s hook failed to stop; the call goes on", name)
        self._entered.clear()
        self._capture._hooked.set(False)

    def end(self) -> None:
        """Say so (once per capture) if the call caught nothing."""
        capture = self._capture
        if self._inner or capture._count > self._count_at_start or capture._warned_nothing:
            return  # an inner session: the outer one says what it caught
        capture._warned_nothing = True
        logger.warning(NOTHING_CAUGHT, self._label, ", ".join(self._active) or "none")

    @contextlib.contextmanager
    def running_step(self) -> Iterator[None]:
        """The hooks on for one step of a generator."""
        self.hook()
        try:
            yield
        except BaseException as error:
            self.unhook(type(error), error, error.__traceback__)
            raise
        self.unhook(None, None, None)


def _activate(name: str, collector: Collector) -> AbstractContextManager[Any] | None:
    """The hook ``name`` switched on for ``collector``, or ``None`` when it cannot be."""
    try:
        qualified = f"knowledgepulse.integrations.{name}"
        module = imported(qualified) or importlib.import_module(qualified)
    except ImportError:
        return None  # this knowledgepulse has no such hook
    activate = getattr(module, "activate", None)
    if activate is None:
        return None
    try:
        return cast(AbstractContextManager[Any], activate(collector))
    except MissingDependencyError:
        return None  # its framework is not installed: nothing of it can run
    except Exception:
        logger.exception("kp.capture: the %s hook could not be made; the call goes on", name)
        return None


@overload
def capture(function: Callable[P, R], /) -> Callable[P, R]: ...


@overload
def capture(function: None = None, /, **settings: Unpack[CollectorSettings]) -> Capture: ...


def capture(
    function: Callable[P, R] | None = None, /, **settings: Unpack[CollectorSettings]
) -> Capture | Callable[P, R]:
    """Record, score and keep the real steps of the agent runs made inside a call or block.

    ``@kp.capture`` or ``@kp.capture(domain="code")`` on a function (sync, async, generator);
    ``with kp.capture() as cap:`` (or ``async with``) around code; ``kp.capture().wrap(fn)`` as
    the TS SDK. The captured traces are on the returned :class:`Capture` (``cap.traces``; for a
    decorated function, ``fn.kp_capture.traces``).

    Args:
        function: the function to wrap, when used as ``@kp.capture`` without arguments.
        domain: the ``task_domain`` of every trace (else the run's ``kp.task_domain``, else
            ``default``).
        confidence: the outcome confidence (else ``kp.confidence``, else 0.8 / 0.2).
        scorer: scores each trace; the process-wide default scorer when ``None``.
        on_trace: called with each :class:`~knowledgepulse.value.ScoredItem`; what it
            raises is logged.
        keep: how many captured traces are kept (the oldest dropped first).
        redact: ``True``: redact each trace before it is scored and kept, secrets always and
            personal identifiers by its ``metadata.privacy_level`` (a captured trace's is
            ``private``: secrets only); a :class:`~knowledgepulse.redact.items.Redactor`
            (``Redactor("aggregated")``): at its level, by its rules (see
            :mod:`knowledgepulse.redact`). Only novelty reads the text, so only novelty can
            change.

    Raises:
        SettingTypeError: ``function`` is not callable (``kp.capture("code")``: the domain is
            ``domain="code"``), or a setting is of the wrong type or out of range.
    """
    if function is not None:
        # kp.capture("code") would wrap the text, and fail only when the "function" is called.
        wanted = "the function to wrap, or only keywords: @kp.capture(domain='code')"
        function_of(function, "function", wanted)
    made = Capture(**settings)
    return made if function is None else made(function)
