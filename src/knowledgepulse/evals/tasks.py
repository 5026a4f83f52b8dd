"""The workflow under test: loaded by name, called on one case's input, timed, bounded, retried.

A task is a plain function, sync or async, that takes a :class:`TaskInput` (never what is
expected) and returns any JSON value, or a pydantic model (dumped as the case files write it).
After the last attempt a failure is the case's error, never the run's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any, TypeVar, cast

from pydantic import BaseModel, JsonValue
from pydantic_core import PydanticSerializationError, to_jsonable_python

from knowledgepulse._util.jsonpath import format_path
from knowledgepulse._util.raised import shown_path, user_frame
from knowledgepulse._util.settings import is_count, is_number, wrong_setting
from knowledgepulse._util.text import closest, cut
from knowledgepulse._util.user_modules import import_user_module
from knowledgepulse.errors import PluginLoadError, ScorerParameterError, Setting, SettingTypeError
from knowledgepulse.evals.models import Case, Page
from knowledgepulse.records.json_values import is_numpy

TaskFunction = Callable[["TaskInput"], Any]
"""A workflow under test: ``TaskInput -> output``, or ``TaskInput -> Awaitable[output]``."""

TASK_FAILURES = (Exception, SystemExit, KeyboardInterrupt)
"""What a task may raise that fails its case: ``sys.exit()`` in a task must not end the run."""

T = TypeVar("T")

MAX_RETRY_DELAY_S = 60.0
"""The longest wait between two attempts, however many retries came before."""


class TaskOutputError(TypeError):
    """Raised by :func:`output_json` when a task returned a value that is not JSON data.

    The task raised nothing: its case's error says what it returned, and where (a NaN's path).
    """


@dataclass(frozen=True, slots=True)
class TaskInput:
    """What a task receives for one case (never its expected output); ``run`` counts from 0."""

    case_id: str
    instruction: str | None
    input: JsonValue
    pages: tuple[Page, ...]
    metadata: Mapping[str, Any] | None
    run: int = 0

    @classmethod
    def of(cls, case: Case, run: int = 0) -> TaskInput:
        """The input a case gives its task, for repetition ``run``."""
        return cls(case.id, case.instruction, case.input, tuple(case.pages), case.metadata, run)

    def to_json(self) -> dict[str, Any]:
        """The input as JSON, the repetition left out (what a cached output is keyed by)."""
        return {
            "id": self.case_id,
            "instruction": self.instruction,
            "input": self.input,
            "pages": [page.model_dump(by_alias=True, exclude_none=True) for page in self.pages],
            "metadata": self.metadata,
        }


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """How the task call for one case (one run) went: 0 ``attempts`` when ``cached``.

    ``error_type`` and ``error_message`` say what the last attempt raised, when all failed;
    ``error_at`` the line of the user's code it raised from (``wf.py:12, in parse``), if any.
    ``timed_out``: it took longer than allowed; ``not_json``: it returned what is not JSON data.
    """

    attempts: int
    cached: bool = False
    error_type: str | None = None
    error_message: str | None = None
    timed_out: bool = False
    error_at: str | None = None
    not_json: bool = False

    @property
    def failed(self) -> bool:
        """Whether the task gave no output."""
        return self.error_type is not None

    @property
    def error(self) -> str | None:
        """``Type: message`` (with the attempts when there were several), or ``None``."""
        if self.error_type is None:
            return None
        text = f"{self.error_type}: {self.error_message}" if self.error_message else self.error_type
        at = f" (at {self.error_at})" if self.error_at is not None else ""
        return text + at + (f" (after {self.attempts} attempts)" if self.attempts > 1 else "")

    def reason(self, limit: int, *, attempts: bool = True) -> str | None:
        """Why the call gave no output, ``the task timed out: ...`` say; ``None`` if it gave one.

        The one wording of a failed call, in every view and on stderr: the task ``timed out``,
        ``returned data that is not JSON``, or ``raised`` its error (a timeout is no error the
        task raised, nor is a return value). The message is cut to ``limit`` characters, the
        rest counted; ``attempts``: say how many there were, when more than one.
        """
        if self.error_type is None:
            return None
        message = cut(self.error_message, limit) if self.error_message else ""
        if self.not_json:
            said = message
        elif self.timed_out:
            said = f"the task timed out: {message}" if message else "the task timed out"
        else:
            said = f"the task raised {self.error_type}" + (f": {message}" if message else "")
        said += f" (at {self.error_at})" if self.error_at is not None else ""
        return said + (
            f" (after {self.attempts} attempts)" if attempts and self.attempts > 1 else ""
        )


@dataclass(frozen=True, slots=True)
class TaskAnswer:
    """A task's answer for one case and run: the output (``None`` on an error) and its record."""

    output: JsonValue
    duration_ms: float | None
    record: TaskRecord


def task_name(task: Callable[..., Any]) -> str:
    """``module:qualified.name`` of a task (part of what a cached output is keyed by)."""
    module = getattr(task, "__module__", None) or type(task).__module__
    name = getattr(task, "__qualname__", None) or type(task).__qualname__
    return f"{module}:{name}"


def output_json(value: Any) -> JsonValue:
    """A task's return value as JSON data; a pydantic model as its file form (aliases, no nulls).

    Raises:
        TaskOutputError: the value is not JSON, or holds NaN or an infinity (a TypeError).
    """
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        plain = _json_data(_sets_sorted(value))
    except (PydanticSerializationError, ValueError, TypeError) as error:
        # In a dict of a dozen fields, "Unable to serialize unknown type" says neither which one
        # nor where: the first value that is not JSON is named by its path.
        found = _not_json(value, ())
        said = f"{format_path(found[0])} is {found[1]}" if found and found[0] else str(error)
        raise TaskOutputError(
            f"the task returned data that is not JSON ({type(value).__name__}): {said}; return "
            "a str, a finite number, bool, None, list or dict (or a pydantic model)"
        ) from None
    return plain


def _sets_sorted(value: Any) -> Any:
    """``value`` with each set in it (in dicts, lists, tuples, dataclasses) a sorted list.

    A set of strings iterates in another order in each process (hash randomisation): kept in
    that order, the same answer would give other report bytes, and another cached output, on
    each run. Items that do not compare (``{1, "a"}``) are ordered by their ``repr``.
    """
    if isinstance(value, set | frozenset):
        items = [_sets_sorted(item) for item in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=lambda item: (type(item).__name__, repr(item)))
    if isinstance(value, Mapping):
        return {key: _sets_sorted(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_sets_sorted(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _sets_sorted(getattr(value, field.name)) for field in fields(value)}
    return value


def _json_data(value: Any) -> JsonValue:
    plain = to_jsonable_python(value, fallback=_numpy_json)
    json.dumps(plain, allow_nan=False)
    return plain  # type: ignore[no-any-return]


def _numpy_json(value: Any) -> Any:
    """A NumPy scalar or array as Python numbers and lists (``np.argmax`` gives an ``int64``).

    NumPy is not imported for this: a value of its types has ``tolist``.
    """
    if is_numpy(value):
        return value.tolist()
    raise TypeError(f"Unable to serialize unknown type: {type(value)}")


def _not_json(value: Any, loc: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], str] | None:
    """The path of the first value inside ``value`` that is not JSON data, and what it is."""
    children: list[tuple[str | int, Any]] = []
    if isinstance(value, Mapping):
        children = [(str(key), item) for key, item in value.items()]
    elif isinstance(value, list | tuple):
        children = list(enumerate(value))
    elif is_numpy(value):  # an array's NaN is named by its index, as a list's
        return _not_json(value.tolist(), loc)
    elif isinstance(value, set | frozenset):
        # A set's order changes from run to run: its item is named by the set's path alone.
        for item in value:
            if (found := _not_json(item, ())) is not None:
                return loc, f"a set holding a value {found[1]}"
    for key, item in children:
        if (found := _not_json(item, (*loc, key))) is not None:
            return found
    try:
        _json_data(value)
    except (PydanticSerializationError, ValueError, TypeError):
        shown = repr(value) if isinstance(value, float) else f"of type {type(value).__name__}"
        return loc, shown
    return None


async def call_task(
    task: TaskFunction,
    task_input: TaskInput,
    *,
    timeout: float | None = None,
    retries: int = 0,
    retry_delay: float = 1.0,
) -> TaskAnswer:
    """Call the task on one input: timed, bounded by ``timeout`` seconds, retried on failure.

    Its failures, ``sys.exit()`` and ``KeyboardInterrupt`` included, become the answer's record;
    cancellation passes. (A real Ctrl-C reaches only the main thread, where no sync task runs.)
    """
    attempts = 0
    while True:
        attempts += 1
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                returned, duration = await _called(task, task_input)
                output = output_json(returned)
        except TimeoutError as error:
            ours = deadline.expired()  # else the task's own TimeoutError
            said = f"no answer within {timeout:g} s" if ours else str(error)
            failure = TaskRecord(
                attempts, error_type="TimeoutError", error_message=said, timed_out=ours
            )
        except TaskOutputError as error:  # it returned: nothing was raised in its code
            failure = TaskRecord(
                attempts, error_type=type(error).__name__, error_message=str(error), not_json=True
            )
        except TASK_FAILURES as error:  # a task's failure is its case's error, never the run's
            said = str(error)
            if isinstance(error, SystemExit):
                said = f"sys.exit({error.code!r}) was called"
            kind, at = type(error).__name__, _raised_at(error)
            failure = TaskRecord(attempts, error_type=kind, error_message=said, error_at=at)
        else:
            return TaskAnswer(output, duration, TaskRecord(attempts))
        if attempts > retries:
            return TaskAnswer(None, None, failure)
        await asyncio.sleep(min(retry_delay * 2 ** (attempts - 1), MAX_RETRY_DELAY_S))


def _raised_at(error: BaseException) -> str | None:
    """``editbot/parse.py:12, in parse``: the line of the user's code a task's failure came from.

    ``KeyError: 'content'`` alone leaves the user to guess which lookup of their workflow
    failed; a scorer's error names its line the same way.
    """
    found = user_frame(error)
    return None if found is None else f"{shown_path(found[0])}:{found[1]}, in {found[2]}"


async def _called(task: TaskFunction, task_input: TaskInput) -> tuple[Any, float]:
    # The task's result and its time in ms (awaited when async, else run in a thread). A sync
    # task is timed in its thread, so time spent waiting for the busy loop is not counted.
    started = time.perf_counter()
    if inspect.iscoroutinefunction(task) or inspect.iscoroutinefunction(
        getattr(task, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    ):
        result, elapsed = task(task_input), None
    else:
        result, elapsed = await _in_thread(task, task_input)
    while inspect.isawaitable(result):
        result, elapsed = await result, None
    return result, (time.perf_counter() - started if elapsed is None else elapsed) * 1000


async def _in_thread(task: TaskFunction, task_input: TaskInput) -> tuple[Any, float]:
    """``task(task_input)`` in a daemon thread, and its time in s; the thread outlives a timeout.

    Not ``asyncio.to_thread``: its pool threads are joined when the loop closes, so one call stuck
    past its timeout would hold ``evaluate()`` until it returns.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[Any, float]] = loop.create_future()

    def settle(result: tuple[Any, float] | None, failure: BaseException | None) -> None:
        if future.done():  # abandoned after a timeout: drop the answer
            return
        if isinstance(failure, StopIteration):  # a future refuses StopIteration itself
            failure = RuntimeError(f"StopIteration: {failure}")
        if failure is not None:
            future.set_exception(failure)
        elif result is not None:  # always, without a failure
            future.set_result(result)

    def timed() -> tuple[Any, float]:
        started = time.perf_counter()
        return task(task_input), time.perf_counter() - started

    def done(result: tuple[Any, float] | None, failure: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            loop.call_soon_threadsafe(settle, result, failure)

    in_thread(timed, done, "kp-task")
    return await future


def in_thread(
    call: Callable[[], T], done: Callable[[T | None, BaseException | None], object], name: str
) -> None:
    """Run ``call()`` in a daemon thread ``name``, then ``done(result, None)`` or ``done(None, e)``.

    A daemon thread, so one that never returns does not hold the process at exit. Whatever
    ``call`` raises, ``KeyboardInterrupt`` included, is handed to ``done``: a real Ctrl-C reaches
    the main thread only, never this one.
    """

    def work() -> None:
        try:
            result = call()
        except BaseException as error:  # handed on, to be that call's failure
            done(None, error)
        else:
            done(result, None)

    threading.Thread(target=work, name=name, daemon=True).start()


def call_bounded(
    call: Callable[[], T], timeout: float | None, name: str
) -> tuple[T | None, BaseException | None]:
    """``call()`` in a daemon thread (:func:`in_thread`): its result, or what it raised.

    Raises:
        TimeoutError: no answer within ``timeout`` seconds (``None``: no limit); the thread is
            abandoned, still running.
        KeyboardInterrupt: a real Ctrl-C while waiting.
    """
    answer: Future[tuple[T | None, BaseException | None]] = Future()
    in_thread(call, lambda result, failure: answer.set_result((result, failure)), name)
    return answer.result(timeout)


_TIMEOUT = "seconds > 0, or None for no limit"


def check_options(
    concurrency: int, timeout: float | None, retries: int, retry_delay: float, repeat: int
) -> None:
    """Refuse settings no run can use, naming each with its value and what it takes.

    Raises:
        ScorerParameterError: one or more of them, all named.
    """

    def seconds(value: object, *, zero: bool) -> bool:
        return is_number(value) and (zero or value != 0) and 0 <= cast(float, value) < math.inf

    wrong = [
        wrong_setting(name, value, allowed)
        for name, value, fits, allowed in (
            ("concurrency", concurrency, is_count(concurrency, 1), "an integer >= 1"),
            ("timeout", timeout, timeout is None or seconds(timeout, zero=False), _TIMEOUT),
            ("retries", retries, is_count(retries, 0), "an integer >= 0"),
            ("retry_delay", retry_delay, seconds(retry_delay, zero=True), "seconds >= 0"),
            ("repeat", repeat, is_count(repeat, 1), "an integer >= 1"),
        )
        if not fits
    ]
    if wrong:
        parts = [part for error in wrong for part in ("; ", *error.parts)][1:]
        raise ScorerParameterError(*parts)


# --- Loading the user's code by name: a task (``module:function``) and scorer plugins ----------
# Each module is tried in a child process first (see _util.user_modules): one that never finishes
# importing, or ends the process, is a PluginLoadError instead of a hung or silent run.


def load_task(spec: str) -> TaskFunction:
    """The function a ``module:function`` or ``path/to/file.py:function`` spec names.

    Raises:
        PluginLoadError: the spec is malformed, its module cannot be imported, or names nothing.
    """
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name or (len(where) == 1 and where.isalpha()):
        raise PluginLoadError(
            f"task {spec!r}: give MODULE:FUNCTION or path/to/file.py:FUNCTION, e.g. "
            "workflow:summarise"
        )
    module = import_user_module(where, what=f"task {spec!r}")
    found: Any = module
    for part in name.split("."):
        if not hasattr(found, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            near = closest(part, names)
            hint = f"; did you mean {near!r}?" if near is not None else ""
            raise PluginLoadError(f"task {spec!r}: {where} has no attribute {part!r}{hint}")
        found = getattr(found, part)
    if not callable(found):
        raise PluginLoadError(
            f"task {spec!r}: {name} is a {type(found).__name__}, not a function; name a "
            "function that takes a TaskInput and returns the output"
        )
    if (wrong := _not_one_argument(found)) is not None:
        raise PluginLoadError(f"task {spec!r}: {wrong}")
    task: TaskFunction = found
    return task


def check_task(task: Callable[..., Any]) -> None:
    """Refuse a task function that cannot be called with the one ``TaskInput``, before any call.

    A function given as itself (``evaluate(task=...)``, ``evaluate_cases(task=...)``) is held to
    what :func:`load_task` checks of one named by a spec.

    Raises:
        SettingTypeError: it takes no argument, or more than one that has no default.
    """
    if (wrong := _not_one_argument(task)) is not None:
        raise SettingTypeError(Setting("task"), f": {wrong}")


def _not_one_argument(task: Callable[..., Any]) -> str | None:
    """What is wrong with a task that cannot be called with the one ``TaskInput``, or ``None``.

    Found at load time, it is one error naming the definition, not the same ``TypeError`` as
    every case's result.
    """
    try:
        signature = inspect.signature(task)
    except (TypeError, ValueError):  # a builtin without a signature: its call will say
        return None
    try:
        signature.bind(None)
    except TypeError:
        pass
    else:
        return None
    name = getattr(task, "__name__", type(task).__name__)
    code = getattr(inspect.unwrap(task), "__code__", None)
    hint = f"def {name}(task: TaskInput) -> ..."
    if code is None:  # an object with a __call__ method
        code = getattr(type(task).__call__, "__code__", None)
        hint = "def __call__(self, task: TaskInput) -> ..."
    at = f" (at {shown_path(code.co_filename)}:{code.co_firstlineno})" if code else ""
    return (
        f"{name}{signature}{at} cannot be called with one argument; a task takes the case's "
        f"TaskInput alone: {hint}"
    )


def load_plugin(spec: str) -> ModuleType:
    """Import a plugin module or ``.py`` file, registering its scorers (or PluginLoadError)."""
    return import_user_module(spec, what=f"plugin {spec!r}")
