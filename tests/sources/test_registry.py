"""The source registry: built-ins, a third party's source by decorator or entry point, misses."""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse import sources
from knowledgepulse._util import plugins
from knowledgepulse.cli.main import flag_of
from knowledgepulse.errors import InputFileError, UnknownSourceError
from knowledgepulse.records import Problem, Record
from knowledgepulse.sources import Source, StepBuilder, TraceOptions, assemble, register_source
from knowledgepulse.sources import _registry as registry
from knowledgepulse.sources._registry import get_source, source_names, unregister_source
from knowledgepulse.trace import TraceItem

BUILT_IN = (
    "reasoning-trace",
    "otlp",
    "langsmith",
    "openai-agents",
    "smolagents",
    "pydantic-ai",
    "adk",
    "browser-use",
    "langfuse",
    "phoenix",
    "jaeger",
    "otel-js",
    "mlflow",
    "swe-agent",
    "mini-swe-agent",
    "openhands",
    "claude-code",
    "codex",
    "gemini-cli",
    "droid",
    "kimi-code",
    "copilot-cli",
    "claude-managed-agents",
    "goose",
    "opencode",
    "hermes-agent",
    "letta",
    "cline",
    "pi",
    "sts",
    "opentraces",
    "atif",
    "adp",
    "inspect-ai",
    "tau2",
    "hermes",
    "gemini",
    "anthropic",
    "openai-responses",
    "openai-chat",
    "sharegpt",
)
CHAT_ROW = {
    "messages": [
        {"role": "user", "content": "Is it raining in Paris?"},
        {"role": "assistant", "content": "No, it is sunny."},
    ]
}


class PlainRuns(Source):
    """A third party's format: ``{"plain_run": [step text, ...], "answer": ...}``."""

    content_hint = "write the step texts"

    def recognises(self, value: Any) -> bool:
        return isinstance(value, dict) and isinstance(value.get("plain_run"), list)

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        for record in records:
            if isinstance(record, Problem):
                yield record
                continue
            builder = StepBuilder()
            for text in record.value["plain_run"]:
                builder.thought(text)
            builder.answer(record.value.get("answer"))
            yield assemble(
                builder,
                source=self.name,
                source_id=f"plain:{record.location.index}",
                success=True,
                options=options,
                location=record.location,
            )


class ChatToo(Source):
    """A third party's source that also claims chat rows (to be told apart by name)."""

    def recognises(self, value: Any) -> bool:
        return isinstance(value, dict) and "messages" in value

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        return get_source("openai-chat").convert(records, options)


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    """Let a test register sources and reload entry points; restore the registry afterwards."""
    source_names()  # the built-ins (and installed entry points) are in the snapshot
    saved = dict(registry._sources.classes)
    loaded = registry._sources.entry_points_loaded
    yield
    registry._sources.classes.clear()
    registry._sources.classes.update(saved)
    registry._sources.entry_points_loaded = loaded


def test_the_built_ins_are_registered_in_detection_order_a_reasoning_trace_first() -> None:
    """One ordered list: the names ``--from`` takes are the registry's, in its order."""
    assert source_names()[: len(BUILT_IN)] == BUILT_IN
    assert get_source("otlp").name == "otlp"
    assert sources.SOURCE_CHOICES[:2] == ("auto", "reasoning-trace")


@pytest.mark.usefixtures("isolated_registry")
def test_a_source_registered_by_decorator_is_detected_and_read() -> None:
    """A third party's format, registered in Python, is recognised with no source named."""
    register_source("plain-runs")(PlainRuns)
    said: list[str] = []
    rows = [{"plain_run": ["look it up", "found it"], "answer": "42"}]
    warning, item = sources.convert(rows, notes=said.append)
    assert isinstance(item, TraceItem)
    # Its runs name no task: the objective is the envelope's placeholder, and a law says so.
    assert isinstance(warning, Problem)
    assert "the objective is a placeholder ('agent run')" in warning.message
    assert [step.type for step in item.trace.steps] == ["thought", "thought", "thought"]
    assert item.trace.id == "kp:trace:plain:0"
    assert said == ["rows: read as plain-runs (1 trace)"]
    assert source_names()[-1] == "plain-runs"


@pytest.mark.usefixtures("isolated_registry")
def test_from_help_lists_each_source_with_the_shapes_it_declares() -> None:
    """``--from``'s help is built from the registry: a plugin's ``shapes`` line shows in it."""
    from knowledgepulse.cli._traces import shapes_help  # the shell's help, read here only

    class Described(PlainRuns):
        shapes = "plain_run step lists"

    register_source("plain-runs")(Described)
    text = shapes_help()
    assert "; plain-runs: plain_run step lists; auto:" in text
    assert "pydantic-ai: all_messages() JSON;" in text


@pytest.mark.usefixtures("isolated_registry")
def test_a_source_published_as_an_entry_point_is_loaded_on_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``knowledgepulse.sources`` group is read once, when a name is not found."""
    entry = EntryPoint("plain-runs", f"{__name__}:PlainRuns", registry.ENTRY_POINT_GROUP)
    asked: list[str] = []

    def entry_points(*, group: str) -> list[EntryPoint]:
        asked.append(group)
        return [entry]

    monkeypatch.setattr(plugins, "entry_points", entry_points)
    registry._sources.entry_points_loaded = False
    assert get_source("plain-runs").name == "plain-runs"
    assert asked == [registry.ENTRY_POINT_GROUP]
    *_, item = sources.convert([{"plain_run": ["x"]}])  # after the placeholder's warning
    assert isinstance(item, TraceItem)


@pytest.mark.usefixtures("isolated_registry")
def test_a_broken_entry_point_is_logged_and_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A plugin that fails to import, or is no Source, never stops the others."""
    entries = [
        EntryPoint("missing", "kp_no_such_module:Nothing", registry.ENTRY_POINT_GROUP),
        EntryPoint("not-a-source", f"{__name__}:CHAT_ROW", registry.ENTRY_POINT_GROUP),
        EntryPoint("plain-runs", f"{__name__}:PlainRuns", registry.ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: entries)
    registry._sources.entry_points_loaded = False
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        names = source_names()
    assert "plain-runs" in names
    assert {"missing", "not-a-source"}.isdisjoint(names)
    messages = " ".join(record.getMessage() for record in caplog.records)
    assert "could not be loaded" in messages
    assert "is not a Source subclass" in messages


@pytest.mark.usefixtures("isolated_registry")
def test_two_sources_that_recognise_a_record_ask_which_to_read_it_with() -> None:
    """Ambiguous content is a located problem naming the candidates and a plugin's class."""
    register_source("chat-too")(ChatToo)
    (problem,) = sources.convert([CHAT_ROW, CHAT_ROW])
    assert isinstance(problem, Problem)
    assert not problem.warning
    assert str(problem) == (
        "rows:1: more than one source recognises this record (openai-chat, chat-too: the "
        "plugin tests.sources.test_registry.ChatToo), so the file is not read: name the one to "
        "read it with, source='openai-chat' (kp: --from openai-chat) or source='chat-too' "
        "(kp: --from chat-too)"
    )
    items = list(sources.convert([CHAT_ROW], source="openai-chat"))
    assert [type(item) for item in items] == [TraceItem]


@pytest.mark.usefixtures("isolated_registry")
def test_inspecting_a_record_two_sources_recognise_names_the_choice_as_each_caller_types_it(
    tmp_path: Path,
) -> None:
    """Python's message says source='openai-chat'; kp's, from the same error, --from openai-chat."""
    register_source("chat-too")(ChatToo)
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(CHAT_ROW) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError) as raised:
        sources.inspect_file(path)
    assert str(raised.value).endswith("source='openai-chat' or source='chat-too'")
    spelt = raised.value.message_with(flag_of)
    assert spelt.endswith("read it with, --from openai-chat or --from chat-too")
    assert "source=" not in spelt


@pytest.mark.usefixtures("isolated_registry")
def test_a_source_that_overrides_another_takes_the_records_both_recognise() -> None:
    """``overrides`` settles it: the special case reads what its general case also reads."""

    class ChatTooFirst(ChatToo):
        overrides = ("openai-chat",)

    register_source("chat-too")(ChatTooFirst)
    (item,) = sources.convert([CHAT_ROW])
    assert isinstance(item, TraceItem)
    assert registry.detect(CHAT_ROW) == [get_source("chat-too")]


def test_hermes_rows_are_hermes_though_sharegpt_and_chat_recognise_them_too() -> None:
    """The built-ins' one overlap is declared: Hermes tags sit inside ShareGPT or chat turns."""
    row = {"conversations": [{"from": "gpt", "value": "<tool_call>{}</tool_call>"}]}
    recognising = [name for name in BUILT_IN if get_source(name).recognises(row)]
    assert recognising == ["hermes", "sharegpt"]
    assert [source.name for source in registry.detect(row)] == ["hermes"]


def test_an_unknown_name_lists_the_sources_and_the_closest() -> None:
    """A lookup miss names every source, the nearest one, and how to add a source."""
    with pytest.raises(UnknownSourceError) as caught:
        get_source("otpl")
    message = str(caught.value)
    assert "unknown source 'otpl'. Did you mean 'otlp'?" in message
    assert "Known sources: auto, reasoning-trace, otlp," in message
    assert "@register_source('otpl')" in message
    assert "'knowledgepulse.sources' entry-point group" in message


@pytest.mark.usefixtures("isolated_registry")
def test_a_name_taken_by_another_class_is_refused() -> None:
    """Registering a second class under a built-in's name fails at once, by name."""
    with pytest.raises(ValueError, match="'otlp' is already registered"):
        register_source("otlp")(PlainRuns)
    with pytest.raises(ValueError, match="not auto"):
        register_source("auto")


def test_unregistering_forgets_a_source() -> None:
    """A notebook that redefines a source can drop the old one."""
    register_source("plain-runs")(PlainRuns)
    unregister_source("plain-runs")
    assert "plain-runs" not in source_names()


def test_importing_the_sources_loads_no_scorer_embedder_or_numpy() -> None:
    """Every reader is pure: no value, novelty, curation, integrations or numpy is imported."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import knowledgepulse.sources as s\n"
        "s.source_names()\n"
        "for m in pkgutil.walk_packages(s.__path__, s.__name__ + '.'):\n"
        "    importlib.import_module(m.name)\n"
        "heavy = ('knowledgepulse.value', 'knowledgepulse.novelty', 'knowledgepulse.curation',\n"
        "         'knowledgepulse.integrations', 'numpy')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class RaisesOnSecond(PlainRuns):
    """A plugin whose conversion has a bug: it raises on the second record it is given."""

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        for index, item in enumerate(super().convert(records, options)):
            if index == 1:
                raise KeyError("plain_run")
            yield item


class YieldsDicts(PlainRuns):
    """A plugin that yields its own dicts where trace items belong."""

    def convert(self, records: Iterable[Record | Problem], options: TraceOptions) -> Iterator[Any]:
        for item in super().convert(records, options):
            yield {"not": "an item"}
            yield item


def _plain_files(tmp_path: Path) -> list[Path]:
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"plain_run": [f"step {i}"]}) + "\n" for i in range(3)))
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps(CHAT_ROW) + "\n")
    return [plain, chat]


@pytest.mark.usefixtures("isolated_registry")
def test_a_plugin_source_that_raises_is_an_error_naming_it_and_the_next_file_is_read(
    tmp_path: Path,
) -> None:
    """A bug in a plugin's convert() ends its file with a located error, never kp's crash."""
    register_source("plain-runs")(RaisesOnSecond)
    read = list(sources.read(_plain_files(tmp_path)))
    errors = [item for item in read if isinstance(item, Problem) and not item.warning]
    (error,) = errors
    assert error.location.file.endswith("plain.jsonl")
    assert error.location.line == 2
    assert "source 'plain-runs' (the plugin tests.sources.test_registry.RaisesOnSecond)" in str(
        error
    )
    assert "raised KeyError: 'plain_run' (at tests/sources/test_registry.py:" in str(error)
    assert "the rest of the file is not read" in str(error)
    traces = [item for item in read if isinstance(item, TraceItem)]
    assert [item.location.file.rsplit("/", 1)[-1] for item in traces] == [
        "plain.jsonl",
        "chat.jsonl",
    ]


@pytest.mark.usefixtures("isolated_registry")
def test_what_a_plugin_source_yields_that_is_no_trace_item_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    """A wrong type from a plugin is skipped with an error, its real items kept."""
    register_source("plain-runs")(YieldsDicts)
    read = list(sources.read(_plain_files(tmp_path)[:1]))
    errors = [str(item) for item in read if isinstance(item, Problem) and not item.warning]
    assert len(errors) == 3
    assert "gave a dict where its convert() yields trace items" in errors[0]
    assert "YieldsDicts" in errors[0]
    assert sum(isinstance(item, TraceItem) for item in read) == 3


@pytest.mark.usefixtures("isolated_registry")
def test_a_plugin_sources_describe_that_raises_is_a_warning_and_its_traces_are_kept(
    tmp_path: Path,
) -> None:
    """describe() only words a note: its bug costs the note, never the file's traces."""

    class BadNote(PlainRuns):
        def describe(self, first: Any, count: int, options: TraceOptions) -> str | None:
            raise ValueError("no words")

    register_source("plain-runs")(BadNote)
    read = list(sources.read(_plain_files(tmp_path)[:1]))
    assert sum(isinstance(item, TraceItem) for item in read) == 3
    (said,) = [str(p) for p in read if isinstance(p, Problem) and "describe()" in str(p)]
    assert "its describe() raised ValueError: no words (at tests/sources/test_registry.py:" in said


@pytest.mark.usefixtures("isolated_registry")
def test_a_plugin_whose_recognises_raises_is_logged_once_not_once_a_record(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file of many records gives one warning naming the plugin, and the other files read."""

    class Raising(PlainRuns):
        def recognises(self, value: Any) -> bool:
            raise KeyError("plain_run")

    register_source("plain-runs")(Raising)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        read = list(sources.read(_plain_files(tmp_path)))
    said = [r.getMessage() for r in caplog.records if "'plain-runs'" in r.getMessage()]
    assert len(said) == 1
    assert "<locals>.Raising): its recognises() raised KeyError" in said[0]
    assert sum(isinstance(item, TraceItem) for item in read) == 1  # the chat file's


@pytest.mark.usefixtures("isolated_registry")
def test_a_class_registered_under_a_second_name_keeps_only_that_one(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A decorator's name and another entry-point name never make a source its own rival."""
    register_source("plain")(PlainRuns)  # the module's decorator, run when the entry point loads
    entry = EntryPoint("plain-runs", f"{__name__}:PlainRuns", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda *, group: [entry])
    registry._sources.entry_points_loaded = False
    with caplog.at_level(logging.WARNING, logger="knowledgepulse"):
        names = source_names()
    assert "plain" not in names
    assert "plain-runs" in names
    *_, item = sources.convert([{"plain_run": ["x"]}])  # not "more than one source"
    assert isinstance(item, TraceItem)
    (said,) = [r.getMessage() for r in caplog.records if "a class has one name" in r.getMessage()]
    assert "test_registry.PlainRuns, registered as 'plain', is 'plain-runs' now" in said


class PlainRows(PlainRuns):
    """A third party's source of rows, one trace a row, that passes over rows marked ``skip``."""

    reads_rows = True

    def convert(
        self, records: Iterable[Record | Problem], options: TraceOptions
    ) -> Iterator[TraceItem | Problem]:
        kept = (
            record
            for record in records
            if not (isinstance(record, Record) and record.value.get("skip"))
        )
        for item in super().convert(kept, options):
            yield item if isinstance(item, Problem) else replace(item, row=item.record)


class PlainRowsRaising(RaisesOnSecond, PlainRows):
    """A source of rows that raises on the second record it converts."""


def _unwarned(read: Iterable[TraceItem | Problem]) -> list[TraceItem | Problem]:
    return [item for item in read if not (isinstance(item, Problem) and item.warning)]


def _plain_rows(skipped: set[int]) -> list[dict[str, Any]]:
    return [{"plain_run": [f"step {i}"], "skip": i in skipped} for i in range(4)]


@pytest.mark.usefixtures("isolated_registry")
def test_a_row_a_source_of_rows_passes_over_is_an_error_at_that_row_naming_it() -> None:
    """Each row that gave no trace and no problem is a row problem, in its place.

    Before, the rows a plugin's convert() yielded nothing for were gone without a word.
    """
    register_source("plain-rows")(PlainRows)
    read = _unwarned(sources.convert(_plain_rows({0, 2})))
    kinds = [type(item).__name__ for item in read]
    assert kinds == ["Problem", "TraceItem", "Problem", "TraceItem"]
    errors = [item for item in read if isinstance(item, Problem)]
    assert [error.location.index for error in errors] == [0, 2]
    assert all(error.row and error.record is not None for error in errors)
    assert "source 'plain-rows' (the plugin tests.sources.test_registry.PlainRows) gave no " in str(
        errors[0]
    )


@pytest.mark.usefixtures("isolated_registry")
def test_the_rows_after_a_row_source_raised_are_errors_each_its_own() -> None:
    """A source of rows that raises leaves no row unsaid: its last and every later one an error."""
    register_source("plain-rows")(PlainRowsRaising)
    read = _unwarned(sources.convert(_plain_rows(set())))
    assert [item.location.index for item in read] == [0, 1, 2, 3]
    assert isinstance(read[0], TraceItem)
    errors = [item for item in read if isinstance(item, Problem)]
    assert all(error.record is not None and not error.warning for error in errors)
    assert "raised KeyError" in errors[0].message
    assert "stopped before this row" in errors[1].message


@pytest.mark.usefixtures("isolated_registry")
def test_a_source_that_groups_records_is_not_asked_for_a_trace_a_record() -> None:
    """A source that declares no rows (spans, session logs) may make one trace of many records."""

    class Grouped(PlainRuns):
        def convert(
            self, records: Iterable[Record | Problem], options: TraceOptions
        ) -> Iterator[TraceItem | Problem]:
            given = [record for record in records if isinstance(record, Record)]
            yield from itertools.islice(super().convert(given, options), 1)

    register_source("grouped")(Grouped)
    read = _unwarned(sources.convert(_plain_rows(set())))
    assert [type(item).__name__ for item in read] == ["TraceItem"]
