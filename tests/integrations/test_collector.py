"""What every live collector shares: score, keep and hand on each trace; never raise."""

from __future__ import annotations

import importlib
import logging
import sys
import threading
import types
from pathlib import Path

import pytest

from knowledgepulse.errors import SettingTypeError
from knowledgepulse.integrations._collector import Collector, live_module
from knowledgepulse.sources import StepBuilder, TraceOptions
from knowledgepulse.sources._envelope import assemble
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import ScoredItem, TraceValueScorer


def convert(source_id: str = "run-1") -> TraceItem:
    builder = StepBuilder()
    builder.tool_result("search", arguments={"q": "x"}, output="found")
    builder.answer("x is found")
    return assemble(
        builder,
        source="test",
        source_id=source_id,
        success=True,
        options=TraceOptions(),
        objective="find x",
        created_at=1_700_000_000.0,
    )


def test_a_collector_scores_keeps_and_hands_on_each_trace() -> None:
    """quality_score is set to the score; keep bounds what is kept, on_trace sees all."""
    seen: list[ScoredItem] = []
    collector = Collector(scorer=TraceValueScorer(embedder=None), on_trace=seen.append, keep=2)
    for run in ("a", "b", "c"):
        collector.finish(lambda run=run: convert(source_id=run))  # type: ignore[misc]
    assert [item.trace.id for item in seen] == ["kp:trace:a", "kp:trace:b", "kp:trace:c"]
    assert [trace.id for trace in collector.traces] == ["kp:trace:b", "kp:trace:c"]
    assert collector.traces[0].metadata.quality_score == collector.breakdowns[0].score > 0


def test_a_collector_never_raises_into_the_agent(caplog: pytest.LogCaptureFixture) -> None:
    """A conversion failure and an on_trace that raises are logged; nothing propagates."""

    def broken_callback(_: ScoredItem) -> None:
        raise RuntimeError("user callback bug")

    def broken_conversion() -> TraceItem:
        raise KeyError("unexpected payload")

    collector = Collector(scorer=TraceValueScorer(embedder=None), on_trace=broken_callback)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        collector.finish(broken_conversion)
        collector.finish(convert)
    assert len(collector.traces) == 1
    messages = [record.getMessage() for record in caplog.records]
    assert any("could not capture a trace" in message for message in messages)
    assert any("on_trace raised" in message for message in messages)


def test_a_run_without_message_text_is_logged_once_with_its_hint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The item's no-text warning (with the switch that records text) is logged once."""

    def bare() -> TraceItem:
        builder = StepBuilder()
        builder.tool_result("search", arguments={"q": "x"})  # a name and no output
        options = TraceOptions()
        return assemble(
            builder, source="test", source_id="bare", success=True, options=options,
            content_hint="switch X on",
        )  # fmt: skip

    collector = Collector(scorer=TraceValueScorer(embedder=None))
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        collector.finish(bare)
        collector.finish(bare)
    (message,) = [record.getMessage() for record in caplog.records]
    assert "the test traces hold no message text" in message
    assert message.endswith("; switch X on")
    assert all("switch X on" in captured.item.warnings[-1] for captured in collector.captured)


def test_the_captured_item_holds_the_scored_trace_as_its_document() -> None:
    """What ``on_trace`` gets is a ScoredItem whose document is the trace as kept."""
    collector = Collector(scorer=TraceValueScorer(embedder=None))
    collector.finish(convert)
    (captured,) = collector.captured
    document = captured.item.document
    assert document["metadata"]["quality_score"] == captured.breakdown.score
    assert captured.trace.metadata.quality_score == captured.breakdown.score


def test_a_domain_without_a_weight_profile_is_warned_once_at_set_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``tracer(domain="custmer_service")``: logged with the closest profile, as kp says it.

    A known domain, or a profile the user registered on the scorer, is not warned about.
    """
    scorer = TraceValueScorer(embedder=None)
    with caplog.at_level(logging.WARNING, logger="knowledgepulse.integrations"):
        Collector(domain="custmer_service", scorer=scorer)
        Collector(domain="customer_service", scorer=scorer)
        scorer.register_profile("legal", scorer.profiles["finance"])
        Collector(domain="legal", scorer=scorer)
    [warning] = caplog.records
    assert "'custmer_service' names no weight profile" in warning.getMessage()
    assert "Did you mean 'customer_service'?" in warning.getMessage()
    assert "--" not in warning.getMessage()  # the library names no kp option


@pytest.mark.parametrize("redact", ["aggregated", "yes", 1, ["secrets"]])
def test_a_redact_that_is_no_bool_or_redactor_is_refused_at_set_up(redact: object) -> None:
    """``redact="aggregated"`` names a level, not a redactor: refused, saying how to give one."""
    with pytest.raises(SettingTypeError) as raised:
        Collector(redact=redact)  # type: ignore[arg-type]
    assert "redact" in str(raised.value)
    assert "Redactor('aggregated')" in str(raised.value)


def test_a_live_module_another_thread_is_importing_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two first captures at once: the second gets the hook module whole, not half made."""
    gate = types.ModuleType("kp_import_gate")
    started, go = threading.Event(), threading.Event()
    gate.started, gate.go = started, go  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kp_import_gate", gate)
    body = "import kp_import_gate as gate\ngate.started.set()\ngate.go.wait(10)\nready = True\n"
    (tmp_path / "kp_slow_hook.py").write_text(body, "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kp_slow_hook", raising=False)
    importer = threading.Thread(target=importlib.import_module, args=("kp_slow_hook",))
    importer.start()
    try:
        assert started.wait(10)
        threading.Timer(0.2, go.set).start()
        whole = hasattr(live_module("kp_slow_hook", "json", "kp-slow-hook", "slow"), "ready")
    finally:
        go.set()
        importer.join()
        sys.modules.pop("kp_slow_hook", None)
    assert whole
