"""Alpaca rows: ``instruction`` (``input`` after it), ``output``, and LLaMA-Factory's ``system``
and ``history`` columns, read as LLaMA-Factory's alpaca converter reads them; Dolly's naming
(``context``, ``response``) and ms-swift's (``query``, ``response``) too.

Real files in ``tests/conformance/files/alpaca`` (LLaMA-Factory's demo data, axolotl's fixture);
their facts are checked by the conformance test. These tests pin what the facts do not say: the
system prompt, the history's turns, a bad history's located error, the rows written back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from knowledgepulse.cli.main import cli
from knowledgepulse.records import Problem
from knowledgepulse.sources import convert, read
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, source_of

ALPACA = CORPUS / "alpaca"
README_ROW = ALPACA / "llamafactory_readme_alpaca_sft.json"


def only_traces(rows: list[Any]) -> list[TraceItem]:
    items = list(convert(rows))
    assert [item for item in items if isinstance(item, Problem)] == []
    return [item for item in items if isinstance(item, TraceItem)]


def test_each_demo_row_asks_its_instruction_and_answers_its_output() -> None:
    """LLaMA-Factory's demo: ``instruction`` then ``input`` on a new line, ``output`` the answer."""
    path = ALPACA / "llamafactory_alpaca_en_demo.json"
    rows = json.loads(path.read_text())
    items = [item for item in read([path]) if isinstance(item, TraceItem)]
    asked = [row["instruction"] + ("\n" + row["input"] if row["input"] else "") for row in rows]
    assert [item.trace.task.objective for item in items] == asked
    assert [item.trace.outcome.result_summary for item in items] == [r["output"] for r in rows]
    assert {source_of(item)["format"] for item in items} == {"openai-chat"}
    assert any(row["input"] for row in rows)


def test_instruct_rows_in_dollys_naming_answer_their_response() -> None:
    """torchtune's instruct rows (Dolly's names): ``response`` is the answer, not a bad row."""
    path = ALPACA / "torchtune_instruct_tiny.json"
    rows = json.loads(path.read_text())
    items = [item for item in read([path]) if isinstance(item, TraceItem)]
    assert [item.trace.task.objective for item in items] == [r["instruction"] for r in rows]
    assert [item.trace.outcome.result_summary for item in items] == [r["response"] for r in rows]


def test_a_dolly_row_asks_its_instruction_then_its_context() -> None:
    """Databricks' Dolly rows: the ``context`` passage follows the request as alpaca's ``input``."""
    row = {"instruction": "When?", "context": "It began in 2000.", "response": "In 2000."}
    (item,) = only_traces([row])
    assert item.trace.task.objective == "When?\nIt began in 2000."
    assert item.trace.outcome.result_summary == "In 2000."


def test_ms_swift_query_rows_ask_their_history_first_then_their_query() -> None:
    """ms-swift's query-response rows: alpaca's with ``query`` for ``instruction``."""
    path = ALPACA / "ms_swift_query_response.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    items = [item for item in read([path]) if isinstance(item, TraceItem)]
    assert [item.trace.task.objective for item in items] == ["55555", "eeeee", "AAAAA"]
    assert [item.trace.outcome.result_summary for item in items] == [r["response"] for r in rows]
    assert items[0].system == rows[0]["system"]
    assert [step.content for step in items[2].trace.steps][1:4] == ["CCCCC", "DDDDD", "EEEEE"]


def test_a_query_without_a_reply_or_a_call_is_no_conversation() -> None:
    """A ``query`` alone is not read as alpaca; nor an xLAM row whose ``answers`` calls nothing
    (its irrelevance rows: no tool fits): the question alone, no run."""
    row = {"query": "Weather in Paris?", "tools": "[]", "answers": "[]"}
    assert [item for item in convert([row]) if isinstance(item, TraceItem)] == []


XLAM_ROW = {
    "id": 0,
    "query": "Where can I find live giveaways for beta access and games?",
    "answers": (
        '[{"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}, '
        '{"name": "live_giveaways_by_type", "arguments": {"type": "game"}}]'
    ),
    "tools": (
        '[{"name": "live_giveaways_by_type", "description": "Retrieve live giveaways.", '
        '"parameters": {"type": {"description": "The type.", "type": "str", "default": "game"}}}]'
    ),
}
"""xLAM-function-calling-60k's first row as the released file keeps it: JSON text columns."""


def test_an_xlam_row_is_its_query_then_its_calls_with_no_result_and_no_answer() -> None:
    """xLAM's ``answers`` are the calls the query needs; the row keeps no result nor reply, so
    the trace ends in them, unanswered, as a chat row whose last turn is the target call."""
    (item,) = only_traces([XLAM_ROW])
    trace = item.trace
    assert trace.id == "kp:trace:0"
    assert trace.task.objective == XLAM_ROW["query"]
    assert [(step.type, step.tool and step.tool.name, step.input) for step in trace.steps] == [
        ("tool_call", "live_giveaways_by_type", {"type": "beta"}),
        ("tool_call", "live_giveaways_by_type", {"type": "game"}),
    ]
    assert trace.metadata.success is False  # no label, and no answer
    assert [tool["function"]["name"] for tool in item.tools] == ["live_giveaways_by_type"]


def test_the_xlam_card_lists_its_calls_as_values_and_they_read_the_same() -> None:
    path = CORPUS / "xlam" / "xlam_function_calling_60k_card_example.json"
    (row,) = json.loads(path.read_text())
    (item,) = (item for item in read([path]) if isinstance(item, TraceItem))
    assert [step.tool.name for step in item.trace.steps if step.tool] == [
        call["name"] for call in row["answers"]
    ]
    called = [call["arguments"] for call in row["answers"]]
    assert [step.input for step in item.trace.steps] == called


def test_an_xlam_row_whose_answers_are_no_calls_is_a_located_problem() -> None:
    rows = [XLAM_ROW, {**XLAM_ROW, "id": 1, "answers": '[{"arguments": {}}]'}]
    items = list(convert(rows))
    assert isinstance(items[0], TraceItem)
    assert isinstance(items[1], Problem)
    assert "answers" in str(items[1])
    assert "name, arguments" in str(items[1])


def test_output_is_the_reply_when_a_row_has_a_response_column_too() -> None:
    (item,) = only_traces([{"instruction": "2+2?", "output": "4", "response": "four"}])
    assert item.trace.outcome.result_summary == "4"


def test_the_system_column_is_the_system_prompt_and_the_history_comes_first() -> None:
    (item,) = (item for item in read([README_ROW]) if isinstance(item, TraceItem))
    (row,) = json.loads(README_ROW.read_text())
    assert item.system == row["system"]
    assert item.trace.task.objective == row["history"][0][0]
    said = [step.content for step in item.trace.steps]
    assert said.index(row["history"][0][1]) < said.index(row["history"][1][1])
    assert item.trace.outcome.result_summary == row["output"]


def test_a_kto_alpaca_row_answers_its_output_and_takes_its_tag_as_the_success() -> None:
    """LLaMA-Factory's alpaca KTO rows: ``output`` is the reply, ``kto_tag`` whether it is good."""
    (item,) = only_traces([{"instruction": "2+2?", "input": "", "output": "5", "kto_tag": False}])
    assert item.trace.outcome.result_summary == "5"
    assert item.trace.metadata.success is False


@pytest.mark.parametrize(
    ("history", "path", "found"),
    [
        ("earlier", "history", "found a string"),
        ([["a question", "a reply"], ["a question only"]], "history[1]", "found a list"),
        ([["a question", 7]], "history[0]", "found a list"),
    ],
)
def test_a_history_that_is_no_list_of_pairs_is_a_located_error(
    history: Any, path: str, found: str
) -> None:
    row = {"instruction": "Now?", "output": "Yes.", "history": history}
    (problem,) = list(convert([row]))
    assert isinstance(problem, Problem)
    assert problem.path == path
    assert "[query, reply] pair" in problem.message
    assert found in problem.message


def test_a_null_history_is_none() -> None:
    """A Parquet column of histories is null or empty on rows without one."""
    (item,) = only_traces([{"instruction": "Now?", "output": "Yes.", "history": None}])
    assert item.trace.task.objective == "Now?"


def test_parquet_alpaca_rows_are_read_and_written_back_whole(tmp_path: Path) -> None:
    """``--annotate`` keeps every column, ``history`` included, and adds kp's."""
    bare = {"instruction": "Hi", "input": "", "output": "Hello", "system": "", "history": []}
    rows = [*json.loads(README_ROW.read_text()), bare]
    source, out = tmp_path / "alpaca.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    result = CliRunner().invoke(
        cli, ["score", str(source), "--annotate", "--no-embedder", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    written = pq.read_table(out).to_pylist()
    assert [row["history"] for row in written] == [row["history"] for row in rows]
    assert all(row["kp_error"] is None and row["kp_score"] is not None for row in written)
