"""kp.capture: real steps through the live hooks, and the user's function left exactly as it was."""

from __future__ import annotations

import asyncio
import logging
import sys
import types
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

import pytest

import knowledgepulse as kp
from knowledgepulse.errors import MissingDependencyError, ScorerParameterError
from knowledgepulse.integrations._collector import Collector
from knowledgepulse.integrations.capture import Capture, capture
from knowledgepulse.redact.items import Redactor
from knowledgepulse.sources import StepBuilder, TraceOptions
from knowledgepulse.sources._envelope import assemble
from knowledgepulse.value import ScoredItem
from tests.integrations.loops import run_fresh

HOOK = "knowledgepulse.integrations.langchain"


class FakeFramework:
    """A framework with a live hook: runs made while a collector is active are handed to it."""

    def __init__(self) -> None:
        self.active: ContextVar[Collector | None] = ContextVar("fake_active", default=None)
        self.entered = 0

    @contextmanager
    def activate(self, collector: Collector) -> Iterator[None]:
        self.entered += 1
        token = self.active.set(collector)
        try:
            yield
        finally:
            self.active.reset(token)

    def run(self, task: str) -> str:
        """An agent run: a failing tool, a retry, an answer; reported to the active collector."""
        collector = self.active.get()
        if collector is not None:
            options = collector.options
            collector.finish(lambda: build(task, options))
        return f"done: {task}"


def build(task: str, options: TraceOptions) -> Any:
    steps = StepBuilder()
    steps.thought("I will search.", at=1.0)
    steps.tool_result("search", arguments={"q": task}, error="timeout", at=2.0)
    steps.tool_result("search", arguments={"q": task}, output="3 hits", at=3.0)
    steps.answer("Found 3.")
    return assemble(
        steps, source="fake", source_id=task, success=True, options=options, objective=task
    )


def install(monkeypatch: pytest.MonkeyPatch, framework: Any, name: str = HOOK) -> None:
    module = types.ModuleType(name)
    module.activate = framework.activate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, name, module)


@pytest.fixture
def framework(monkeypatch: pytest.MonkeyPatch) -> FakeFramework:
    """A fake framework hooked in as the langchain module; the other hooks switched off."""
    fake = FakeFramework()
    install(monkeypatch, fake)
    for other in ("openai_agents", "otel"):
        monkeypatch.setitem(
            sys.modules, f"knowledgepulse.integrations.{other}", types.ModuleType(other)
        )
    return fake


def test_a_decorated_function_returns_as_before_and_its_run_is_captured(
    framework: FakeFramework,
) -> None:
    """The return value is unchanged; the run's real steps are scored and kept."""
    seen: list[ScoredItem] = []

    @kp.capture(domain="code", on_trace=seen.append)
    def solve(task: str) -> str:
        return framework.run(task)

    assert solve("find x") == "done: find x"
    cap: Capture = solve.kp_capture  # type: ignore[attr-defined]
    assert [trace.id for trace in cap.traces] == ["kp:trace:find x"]
    trace = cap.traces[0]
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
        "observation",
        "thought",
    ]
    assert trace.metadata.task_domain == "code"
    assert trace.metadata.quality_score == cap.breakdowns[0].score > 0
    assert [item.trace for item in seen] == cap.traces
    assert solve.__name__ == "solve"


def test_runs_outside_the_call_are_not_captured(framework: FakeFramework) -> None:
    """The hook is on only for the duration of the call."""
    cap = capture()
    wrapped = cap.wrap(framework.run)
    framework.run("before")
    wrapped("during")
    framework.run("after")
    assert [trace.task.objective for trace in cap.traces] == ["during"]


def test_an_exception_propagates_unchanged_and_the_run_is_still_kept(
    framework: FakeFramework,
) -> None:
    """The very exception the function raised reaches the caller."""
    error = KeyError("boom")

    @capture
    def solve() -> None:
        framework.run("partial")
        raise error

    with pytest.raises(KeyError) as raised:
        solve()
    assert raised.value is error
    assert len(solve.kp_capture.traces) == 1  # type: ignore[attr-defined]


def test_async_functions_are_awaited_and_captured(framework: FakeFramework) -> None:
    """An async function stays async; concurrent calls each get their run captured."""
    cap = capture()

    @cap
    async def solve(task: str) -> str:
        await asyncio.sleep(0)
        return framework.run(task)

    async def main() -> list[str]:
        return list(await asyncio.gather(solve("a"), solve("b")))

    assert asyncio.iscoroutinefunction(solve)
    assert run_fresh(main()) == ["done: a", "done: b"]
    assert sorted(trace.task.objective for trace in cap.traces) == ["a", "b"]


def test_generators_yield_and_return_as_before(framework: FakeFramework) -> None:
    """A generator keeps its items and its return value; the runs it makes are captured."""
    cap = capture()

    @cap
    def steps(n: int) -> Generator[str, None, str]:
        for index in range(n):
            yield framework.run(f"t{index}")
        return "finished"

    def drive() -> tuple[list[str], Any]:
        generator = steps(2)
        items = []
        while True:
            try:
                items.append(next(generator))
            except StopIteration as stop:
                return items, stop.value

    assert drive() == (["done: t0", "done: t1"], "finished")
    assert len(cap.traces) == 2


def test_a_generator_catches_only_its_own_runs(framework: FakeFramework) -> None:
    """The consumer's runs between items, and after it left the loop early, are not caught.

    Before, the hooks stayed on from the first item until the generator was closed: a run the
    consumer made while iterating (or after a ``break``, the generator not yet collected) was
    recorded as the generator's.
    """
    cap = capture()

    @cap
    def stream() -> Generator[str, None, None]:
        for task in ("s0", "s1", "s2"):
            yield framework.run(task)

    generator = stream()
    for item in generator:
        framework.run(f"consumer after {item}")
        if item == "done: s1":
            break
    framework.run("after the loop")
    assert [trace.task.objective for trace in cap.traces] == ["s0", "s1"]
    generator.close()
    assert framework.active.get() is None


def test_what_is_thrown_into_a_generator_reaches_it(framework: FakeFramework) -> None:
    """A captured generator under ``contextmanager`` still sees the block's exception."""
    handled: list[str] = []

    @contextmanager
    @capture
    def guarded(task: str) -> Iterator[str]:
        try:
            yield framework.run(task)
        except ValueError as error:
            handled.append(str(error))
            framework.run("recovering")

    with guarded("g") as value:
        raise ValueError("inside the block")
    assert value == "done: g"
    assert handled == ["inside the block"]
    with pytest.raises(KeyError), guarded("h"):
        raise KeyError("not handled")


def test_async_generators_are_not_broken(framework: FakeFramework) -> None:
    """An async generator still yields its items."""
    cap = capture()

    @cap
    async def stream() -> AsyncIterator[str]:
        yield framework.run("s")

    async def main() -> list[str]:
        return [item async for item in stream()]

    assert run_fresh(main()) == ["done: s"]
    assert len(cap.traces) == 1


def test_an_async_generator_left_early_switches_its_hooks_off_without_errors(
    framework: FakeFramework, caplog: pytest.LogCaptureFixture
) -> None:
    """A consumer that breaks out of its loop (a client gone) keeps no hook on, logs nothing.

    Before, the hooks stayed on in the consumer's context, catching its later runs, and the
    generator, closed later from another task, logged a traceback for each hook.
    """
    cap = capture()
    closed: list[bool] = []

    @cap
    async def stream() -> AsyncGenerator[str, str | None]:
        try:
            for task in ("s0", "s1", "s2"):
                yield framework.run(task)
        finally:
            closed.append(True)

    async def main() -> tuple[str, str, list[str]]:
        first = ""
        async for item in stream():
            first = item
            break
        after = framework.run("after the loop")
        sent = stream()
        second = [await sent.asend(None), await sent.asend("ignored")]
        await sent.aclose()
        return first, after, second

    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        first, _, second = run_fresh(main())
    assert first == "done: s0"
    assert second == ["done: s0", "done: s1"]
    assert [trace.task.objective for trace in cap.traces] == ["s0", "s0", "s1"]
    assert closed == [True, True]
    assert caplog.records == []


def test_what_is_thrown_into_an_async_generator_reaches_it(framework: FakeFramework) -> None:
    """A captured async generator under ``asynccontextmanager`` sees the block's exception.

    Before, the exception stopped at the wrapper, which closed the generator: its ``except``
    never ran, and the block's exception went on as if unhandled.
    """
    handled: list[str] = []

    @asynccontextmanager
    @capture
    async def guarded(task: str) -> AsyncIterator[str]:
        try:
            yield framework.run(task)
        except ValueError as error:
            handled.append(str(error))

    async def main() -> str:
        async with guarded("g") as value:
            raise ValueError("inside the block")
        return value

    assert run_fresh(main()) == "done: g"
    assert handled == ["inside the block"]


def test_with_and_async_with_capture_the_block(framework: FakeFramework) -> None:
    """The context manager forms capture the runs made in the block."""
    with kp.capture(domain="finance") as cap:
        framework.run("sync block")
    assert [trace.metadata.task_domain for trace in cap.traces] == ["finance"]

    async def main() -> Capture:
        async with capture() as inner:
            framework.run("async block")
        return inner

    assert [trace.task.objective for trace in run_fresh(main()).traces] == ["async block"]


def test_when_nothing_is_caught_it_says_so_once(
    framework: FakeFramework, caplog: pytest.LogCaptureFixture
) -> None:
    """No run made: one warning naming what to install; no synthetic steps are invented."""

    @capture
    def plain() -> int:
        return 1

    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        assert plain() == 1
        assert plain() == 1
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1
    assert "no trace was captured during" in warnings[0]
    assert 'pip install -e ".[langchain]"' in warnings[0]
    assert "Hooks active: langchain" in warnings[0]
    assert plain.kp_capture.traces == []  # type: ignore[attr-defined]


def test_a_hook_whose_framework_is_missing_is_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """activate raising MissingDependencyError: the call runs, the warning lists no hook."""
    for name in ("langchain", "openai_agents", "otel"):
        module = types.ModuleType(name)

        def activate(collector: Collector) -> Any:
            raise MissingDependencyError("not installed")

        module.activate = activate  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"knowledgepulse.integrations.{name}", module)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        assert capture(lambda: 5)() == 5
    assert "Hooks active: none" in caplog.records[-1].getMessage()


class BrokenHook:
    """A hook that fails in a chosen place."""

    def __init__(self, where: str) -> None:
        self.where = where

    def activate(self, collector: Collector) -> Any:
        if self.where == "make":
            raise RuntimeError("cannot make")
        return self

    def __enter__(self) -> None:
        if self.where == "enter":
            raise RuntimeError("cannot enter")

    def __exit__(self, *args: object) -> bool:
        if self.where == "exit":
            raise RuntimeError("cannot exit")
        return self.where == "swallow"  # a hook that would swallow the user's exception


@pytest.mark.parametrize("where", ["make", "enter", "exit"])
def test_a_failing_hook_is_logged_and_the_call_goes_on(
    framework: FakeFramework,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    where: str,
) -> None:
    """A hook that raises is logged; the other hooks and the function still work."""
    install(monkeypatch, BrokenHook(where), "knowledgepulse.integrations.otel")
    cap = capture()
    with caplog.at_level(logging.ERROR, logger="knowledgepulse.integrations"):
        assert cap.wrap(framework.run)("x") == "done: x"
    assert len(cap.traces) == 1
    assert any("otel hook" in record.getMessage() for record in caplog.records)


def test_a_hook_cannot_swallow_the_users_exception(
    framework: FakeFramework, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a hook's __exit__ returns, the exception reaches the caller."""
    install(monkeypatch, BrokenHook("swallow"), "knowledgepulse.integrations.otel")

    @capture
    def solve() -> None:
        raise ValueError("mine")

    with pytest.raises(ValueError, match="mine"):
        solve()


def test_an_on_trace_that_raises_is_logged_not_raised(
    framework: FakeFramework, caplog: pytest.LogCaptureFixture
) -> None:
    """The user's callback failing never breaks the call."""

    def explode(item: ScoredItem) -> None:
        raise RuntimeError("callback bug")

    with caplog.at_level(logging.ERROR, logger="knowledgepulse.integrations"):
        assert capture(on_trace=explode).wrap(framework.run)("x") == "done: x"
    assert any("on_trace raised" in record.getMessage() for record in caplog.records)


def test_kp_capture_and_kp_integrations_are_at_the_top_level() -> None:
    """kp.capture is the decorator; kp.integrations the subpackage."""
    assert kp.capture is capture
    assert kp.integrations.capture.Capture is Capture
    assert "capture" in kp.__all__
    assert "integrations" in dir(kp)


def test_capture_with_redact_keeps_and_hands_on_the_redacted_trace(
    framework: FakeFramework,
) -> None:
    """With redact=True, the text the collector keeps and on_trace sees holds no secret.

    The fake framework makes the trace's id from the task, and ids are never redacted: the
    check reads the text fields.
    """
    seen: list[ScoredItem] = []
    key = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
    with capture(on_trace=seen.append, redact=True) as cap:
        framework.run(f"Deploy with token {key}")
    trace = cap.traces[0]
    texts = [trace.task.objective, *(step.content or "" for step in trace.steps)]
    assert not any(key in text for text in texts)
    assert trace.task.objective == "Deploy with token [REDACTED:api_key]"
    assert seen[0].trace == trace


def test_capture_with_a_redactor_redacts_at_its_level_and_counts(
    framework: FakeFramework,
) -> None:
    """redact=True keeps identifiers (a captured trace is private); Redactor("aggregated") not."""
    with capture(redact=True) as by_trace:
        framework.run("Mail alice@example.com")
    assert by_trace.traces[0].task.objective == "Mail alice@example.com"
    redactor = Redactor("aggregated")
    with capture(redact=redactor) as aggregated:
        framework.run("Mail alice@example.com")
    assert aggregated.traces[0].task.objective == "Mail [REDACTED:email]"
    assert redactor.types["email"] >= 1
    assert redactor.redacted == 1


def test_a_collector_without_redact_keeps_the_text_as_it_was(framework: FakeFramework) -> None:
    """Redaction is asked for: by default the captured trace keeps its text."""
    with capture() as cap:
        framework.run("Mail alice@example.com")
    assert "alice@example.com" in cap.traces[0].model_dump_json()


def test_a_misspelt_hook_is_refused_with_the_hooks_it_could_be() -> None:
    """``Capture(hooks=("langchian",))`` would capture nothing: an error names the hooks."""
    with pytest.raises(ScorerParameterError, match=r"hooks='langchian'.*'otel'.*'langchain'\?"):
        Capture(hooks=("langchian",))
    assert Capture(hooks=("otel",)) is not None


@pytest.mark.parametrize("given", ["code", 0.9, ["code"]])
def test_a_positional_that_is_no_function_is_refused_naming_the_keywords(given: object) -> None:
    """``kp.capture("code")`` meant ``domain="code"``: refused at once, not when called."""
    with pytest.raises(ScorerParameterError) as raised:
        kp.capture(given)  # type: ignore[call-overload]
    assert "domain='code'" in str(raised.value)
