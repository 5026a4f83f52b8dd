"""``kp score --order time``, ``--corpus``, percentile thresholds and the HTML report."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.testing import HashingEmbedder
from tests.builders import trace_json
from tests.cli.conftest import KpRunner


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score with the fast fake embedder instead of MiniLM."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


def traces() -> list[dict[str, Any]]:
    made = []
    for n, (objective, created) in enumerate(
        [
            ("cheapest flight Lisbon Oslo", "2026-01-03T00:00:00Z"),
            ("cheapest flight Lisbon Oslo", "2026-01-01T00:00:00Z"),
            ("fix the flaky payment test", "2026-01-02T00:00:00Z"),
        ]
    ):
        data = trace_json(trace_id=f"kp:trace:{n}", objective=objective)
        data["metadata"]["created_at"] = created
        made.append(data)
    return made


def write(tmp_path: Path, items: list[dict[str, Any]], name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(t) + "\n" for t in items))
    return str(path)


def rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_order_time_scores_oldest_first_whatever_the_file_order(
    kp: KpRunner, tmp_path: Path
) -> None:
    """The oldest copy is the novel one, in file order or reversed; rows come oldest first."""
    forward = kp("score", write(tmp_path, traces()), "--order", "time", "-f", "jsonl")
    backward = kp("score", write(tmp_path, traces()[::-1]), "--order", "time", "-f", "jsonl")
    assert [r["id"] for r in rows(forward.out)] == ["kp:trace:1", "kp:trace:2", "kp:trace:0"]
    strip = [{k: v for k, v in r.items() if k != "line"} for r in rows(forward.out)]
    assert strip == [{k: v for k, v in r.items() if k != "line"} for r in rows(backward.out)]
    assert rows(forward.out)[2]["nearest_trace"] == "kp:trace:1"
    # In file order the first copy would have been the novel one.
    plain = {r["id"]: r for r in rows(kp("score", write(tmp_path, traces()), "-f", "jsonl").out)}
    assert plain["kp:trace:1"]["nearest_trace"] == "kp:trace:0"


def test_corpus_gives_both_copies_a_low_novelty(kp: KpRunner, tmp_path: Path) -> None:
    """Leave-one-out: each copy's nearest is the other; rows stay in input order."""
    run = kp("score", write(tmp_path, traces()), "--corpus", "-f", "jsonl")
    assert run.code == 0, run.err
    found = rows(run.out)
    assert [r["id"] for r in found] == ["kp:trace:0", "kp:trace:1", "kp:trace:2"]
    assert found[0]["nearest_trace"] == "kp:trace:1"
    assert found[1]["nearest_trace"] == "kp:trace:0"
    assert found[0]["dimensions"]["novelty"] < 1e-6
    assert found[1]["dimensions"]["novelty"] < 1e-6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--corpus", "--no-embedder"], "needs an embedder"),
        (["--corpus", "--order", "time"], "drop --order time"),
        (["--corpus", "--cache", "c.npz"], "not with a cache: drop --cache"),
        (["--min-score", "best"], "percentile"),
    ],
)
def test_contradictory_options_are_one_line_errors(
    kp: KpRunner, tmp_path: Path, args: list[str], message: str
) -> None:
    """Exit 2 with the reason, no traceback."""
    run = kp("score", write(tmp_path, traces()), *args, "-f", "jsonl")
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err


def test_json_summary_has_percentiles_per_domain(kp: KpRunner, tmp_path: Path) -> None:
    """summary.percentiles: all and by_domain, each with count, p10..p99, max."""
    items = traces()
    items[2]["metadata"]["task_domain"] = "code"
    run = kp("score", write(tmp_path, items), "--no-embedder", "-f", "json")
    summary = json.loads(run.out)["summary"]["percentiles"]
    assert summary["all"]["count"] == 3
    assert set(summary["by_domain"]) == {"code", "testing"}
    assert summary["by_domain"]["testing"]["count"] == 2
    assert {"p10", "p50", "p90", "p99", "max"} <= set(summary["by_domain"]["code"])


def test_min_score_percentile_sets_the_threshold_from_the_run(kp: KpRunner, tmp_path: Path) -> None:
    """--min-score p100: exactly the top score is shareable, and rows carry that threshold."""
    run = kp("score", write(tmp_path, traces()), "--min-score", "p100", "-f", "jsonl")
    found = rows(run.out)
    top = max(r["score"] for r in found)
    assert all(r["threshold"] == top for r in found)
    assert [r["shareable"] for r in found] == [r["score"] == top for r in found]
    assert f"the sharing threshold {top:g}" in run.err


def test_html_report_is_self_contained(kp: KpRunner, tmp_path: Path) -> None:
    """One page, no script or remote resource, with distributions, overrides and duplicates."""
    out = tmp_path / "report.html"
    run = kp("score", write(tmp_path, traces()), "--corpus", "-f", "html", "-o", str(out))
    assert run.code == 0, run.err
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    for section in ("Distributions by domain", "Overrides", "Near-duplicate groups", "Top traces"):
        assert section in page
    assert "kp:trace:0, kp:trace:1" in page
    assert "<script" not in page
    assert "://" not in page.replace("https://openknowledgepulse.org", "")


def _browser() -> str | None:
    return next(
        (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
    )


@pytest.mark.skipif(_browser() is None, reason="no chromium on PATH (CI installs it)")
def test_html_report_renders_in_a_headless_browser(kp: KpRunner, tmp_path: Path) -> None:
    """Chromium, offline, renders the page to a DOM that holds the report's title."""
    out = tmp_path / "report.html"
    kp("score", write(tmp_path, traces()), "--corpus", "-f", "html", "-o", str(out))
    browser = _browser()
    assert browser is not None
    result = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", out.as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Trace value report" in result.stdout
    assert "Uncaught" not in result.stderr
