"""``--to messages``: training rows from any source, that trainers load and kp reads back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.testing import HashingEmbedder
from tests.builders import curation_traces
from tests.cli.conftest import KpRunner
from tests.paths import REPO

TRACES = REPO / "examples" / "traces" / "traces.jsonl"
LANGSMITH = REPO / "examples" / "integrations" / "langgraph" / "runs.json"


@pytest.fixture(autouse=True)
def hashing_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands embed with the fast fake instead of MiniLM."""
    monkeypatch.setattr(
        "knowledgepulse.novelty.shared_embedder", lambda *_, **__: HashingEmbedder(), raising=True
    )


def rows_in(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def trace_ids(kp: KpRunner, path: Path) -> list[str]:
    """The ids of the traces ``kp convert --from auto`` reads from ``path``."""
    run = kp("convert", "--from", "auto", str(path))
    assert run.code == 0, run.err
    return [trace["id"] for trace in rows_in(run.out)]


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_convert_to_messages_writes_rows_that_read_back_as_the_same_traces(
    kp: KpRunner, tmp_path: Path, suffix: str
) -> None:
    """JSON Lines or Parquet by -o's name; --from auto reads the rows back, same ids."""
    out = tmp_path / f"rows.{suffix}"
    run = kp("convert", "--from", "auto", str(TRACES), "--to", "messages", "-o", str(out))
    assert run.code == 0, run.err
    assert "converted 8 traces" in run.err
    assert trace_ids(kp, out) == trace_ids(kp, TRACES)


def test_convert_a_framework_file_to_messages(kp: KpRunner) -> None:
    """A LangSmith export becomes chat rows: a user turn first, the answer last."""
    run = kp("convert", "--from", "auto", str(LANGSMITH), "--to", "messages")
    assert run.code == 0, run.err
    [row] = rows_in(run.out)
    assert row["messages"][0]["role"] == "user"
    assert row["messages"][-1]["role"] == "assistant"
    assert any(message["role"] == "tool" for message in row["messages"])


@pytest.mark.parametrize("loader", ["json", "parquet"])
def test_training_rows_load_with_datasets(kp: KpRunner, tmp_path: Path, loader: str) -> None:
    """datasets.load_dataset reads the rows: messages a list of turns, tools a JSON string."""
    datasets = pytest.importorskip("datasets")
    out = tmp_path / ("rows.jsonl" if loader == "json" else "rows.parquet")
    run = kp("convert", "--from", "auto", str(TRACES), "--to", "messages", "-o", str(out))
    assert run.code == 0, run.err
    loaded = datasets.load_dataset(
        loader, data_files=str(out), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert loaded.num_rows == 8
    first = loaded[0]
    assert first["messages"][0]["role"] == "user"
    calls = [call for m in first["messages"] for call in m.get("tool_calls") or []]
    assert calls
    assert all(isinstance(call["function"]["arguments"], str) for call in calls)
    assert isinstance(json.loads(first["tools"]), list)


def test_select_to_messages_writes_the_selected_traces_scored(kp: KpRunner, tmp_path: Path) -> None:
    """The selected traces come out as chat rows with their kp_ columns."""
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in curation_traces()))
    run = kp("select", str(path), "--budget", "2", "--to", "messages")
    assert run.code == 0, run.err
    rows = rows_in(run.out)
    assert len(rows) == 2
    # The system prompt the source row had, then the user's turn.
    assert all(
        [m["role"] for m in row["messages"]][:2] in (["system", "user"], ["user", "assistant"])
        for row in rows
    )
    assert all(0 < row["kp_score"] <= 1 for row in rows)


def test_dedupe_to_messages_writes_the_kept_traces_only(kp: KpRunner, tmp_path: Path) -> None:
    """Of the two flight copies one row stays; the others are kept, as chat rows."""
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in curation_traces()))
    out = tmp_path / "kept.parquet"
    run = kp("dedupe", str(path), "--threshold", "0.95", "--to", "messages", "-o", str(out))
    assert run.code == 0, run.err
    assert trace_ids(kp, out) == ["kp:trace:flight-a", "kp:trace:code-1", "kp:trace:code-2"]


def test_dedupe_against_to_messages_writes_the_kept_traces_as_chat_rows(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Decontamination with --to messages gives training rows, not the traces as they came."""
    reference = tmp_path / "eval.txt"
    reference.write_text(json.loads(TRACES.read_text().splitlines()[0])["task"]["objective"])
    run = kp(
        "dedupe", str(TRACES), "--against", str(reference), "--no-embedder", "--to", "messages"
    )
    assert run.code == 0, run.err
    rows = rows_in(run.out)
    assert len(rows) == len(TRACES.read_text().splitlines()) - 1
    assert all(row["messages"][0]["role"] == "user" and "@type" not in row for row in rows)


@pytest.mark.parametrize("corpus", sorted((REPO / "corpora").glob("*.jsonl")), ids=lambda p: p.stem)
def test_training_rows_score_as_the_traces_they_came_from(
    kp: KpRunner, tmp_path: Path, corpus: Path
) -> None:
    """kp score --no-embedder gives each corpus trace and its training row the same score."""
    rows = tmp_path / "rows.parquet"
    assert kp("convert", str(corpus), "--to", "messages", "-o", str(rows)).code == 0
    scores = []
    for path in (corpus, rows):
        run = kp("score", str(path), "--no-embedder", "--format", "jsonl")
        assert run.code == 0, run.err
        scores.append({row["id"]: row["score"] for row in rows_in(run.out) if "score" in row})
    assert scores[0]
    assert scores[0].keys() == scores[1].keys()
    assert all(abs(scores[0][key] - scores[1][key]) <= 1e-9 for key in scores[0])


@pytest.mark.parametrize(
    "command",
    [
        ("select", "--no-embedder"),
        ("dedupe", "--by", "task", "--no-embedder"),
        ("dedupe", "--against", "REF", "--no-embedder"),
        ("convert",),
    ],
    ids=lambda c: "-".join(c[:2]),
)
def test_training_rows_of_parquet_input_go_to_standard_output_as_json_lines(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """--to messages without -o writes JSON Lines whatever the input's form, as documented."""
    source = REPO / "examples" / "datasets" / "openai_chat.parquet"
    reference = tmp_path / "eval.txt"
    reference.write_text("a task no row of the dataset copies in any of its words at all\n")
    given = [str(reference) if arg == "REF" else arg for arg in command]
    run = kp(given[0], str(source), *given[1:], "--to", "messages")
    assert run.code == 0, run.err
    rows = rows_in(run.out)
    assert rows
    # The system prompt where the source row had one, then the user's turn.
    opening = [[m["role"] for m in row["messages"]][:2] for row in rows]
    assert all(roles in (["system", "user"], ["user", "assistant"]) for roles in opening)


def test_a_training_row_keeps_each_text_whole_where_its_trace_keeps_8_kb(
    kp: KpRunner, tmp_path: Path
) -> None:
    """``--to messages`` keeps a 26 KB prompt, a tool's long result and a long answer whole (a
    row was written from the trace, which keeps 8 KB of a text: a training row came back cut,
    ending ``…``); the trace itself, to share, is still cut."""
    passage = " ".join(f"word{index}" for index in range(3000))  # about 26 KB
    output = "line\n" * 4000  # 20 KB
    answer = "Summary: " + "fine " * 3000
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    row = {
        "messages": [
            {"role": "user", "content": passage},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": output},
            {"role": "assistant", "content": answer},
        ]
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    run = kp("convert", "--to", "messages", str(path))
    assert run.code == 0, run.err
    (written,) = rows_in(run.out)
    texts = [message.get("content") for message in written["messages"]]
    assert texts == [passage, "", output, answer]
    traced = kp("convert", str(path))
    (trace,) = rows_in(traced.out)
    assert len(trace["task"]["objective"].encode()) <= 8192 < len(passage.encode())
    assert trace["task"]["objective"].endswith("…")


@pytest.mark.parametrize("stored", ["nested", "json"])
def test_a_rows_tools_and_system_prompt_stay_in_its_training_row(
    kp: KpRunner, tmp_path: Path, stored: str
) -> None:
    """A function-calling row's ``tools`` (descriptions, required arguments, tools never
    called; nested or a JSON string) and system prompt are its training row's, as given."""
    offered = [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"The {name} tool.",
                "parameters": {
                    "type": "object",
                    "properties": {"symbol": {"type": "string"}},
                    "required": ["symbol"],
                },
            },
        }
        for name in ("get_current_price", "get_last_prices")
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_last_prices", "arguments": '{"symbol": "GS"}'},
    }
    row: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "Ask when the ticker is unclear."},
            {"role": "user", "content": "What did GS trade at last week?"},
            {"role": "assistant", "tool_calls": [call]},
        ],
        "tools": offered if stored == "nested" else json.dumps(offered),
    }
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n")
    run = kp("convert", "--to", "messages", str(path))
    assert run.code == 0, run.err
    (written,) = rows_in(run.out)
    assert json.loads(written["tools"]) == offered
    assert written["messages"] == [
        row["messages"][0],
        row["messages"][1],
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": "call00000"}]},
    ]


def test_the_model_that_wrote_a_run_is_a_training_rows_model_and_reads_back(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A Claude Code session names its model on each reply: the training row's ``model``
    column says it, and the row read back is the trace of that model again."""
    session = (
        REPO / "tests/conformance/files/claude-code/spotter_claude_2.1.38_plan_mode_task.jsonl"
    )
    replies = [json.loads(line) for line in session.read_text().splitlines() if line.strip()]
    models = {r["message"]["model"] for r in replies if r.get("type") == "assistant"}
    run = kp("convert", "--to", "messages", str(session), "-o", str(tmp_path / "rows.jsonl"))
    assert run.code == 0, run.err
    (row,) = rows_in((tmp_path / "rows.jsonl").read_text())
    assert models == {row["model"]} == {"claude-opus-4-6"}
    back = kp("convert", str(tmp_path / "rows.jsonl"))
    (trace,) = rows_in(back.out)
    assert trace["metadata"]["source"]["model"] == row["model"]
