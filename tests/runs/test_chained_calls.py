"""One call's result is the next one's input: the items a run gave are read as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import SettingTypeError
from knowledgepulse.records import Problem
from knowledgepulse.runs import decontaminate, dedupe, items_of, score, select, split
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.trace import TraceItem
from knowledgepulse.value import TraceValueScorer

ROOT = Path(__file__).parents[2]
CHAT = ROOT / "examples" / "datasets" / "openai_chat.jsonl"
TRACES = ROOT / "examples" / "traces" / "traces.jsonl"


def scorer() -> TraceValueScorer:
    return TraceValueScorer(embedder=HashingEmbedder())


def chat_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CHAT.read_text().splitlines()]


def test_select_takes_what_score_gave_and_chooses_as_on_the_data() -> None:
    """select(score(rows)) picks what select(rows) picks, rows and tasks kept (none refused)."""
    rows = chat_rows()
    scored = score(rows, scorer=scorer())
    again = select(scored, per_task=1, scorer=scorer())
    direct = select(rows, per_task=1, scorer=scorer())
    assert again.problems == ()
    assert [s.trace.id for s in again.selected] == [s.trace.id for s in direct.selected]
    assert again.tasks == direct.tasks
    assert again.rows == direct.rows


def test_dedupe_split_and_decontaminate_take_trace_items() -> None:
    """items_of's TraceItems (a result's kept items, say) go into every call, none lost."""
    items = [item for item in items_of(TRACES) if isinstance(item, TraceItem)]
    groups = dedupe(items, scorer=scorer())
    assert len(groups.corpus.items) == len(items) == 8
    parts = split(items, test=0.25, by="domain")
    assert sum(parts.sizes.values()) == 8
    clean = decontaminate(items, against_texts=[items[0].trace.task.objective])
    assert [item.trace.id for item in select(clean.kept, scorer=scorer()).selected] != []
    assert len(clean.kept) == 7


def test_a_task_field_gives_given_items_their_task() -> None:
    """task_field reads a task for items that came without one, as when they were read."""
    items = score(TRACES, scorer=scorer())
    result = select(items, task_field="metadata.task_domain", per_task=1, scorer=scorer())
    assert not result.tasks_inferred
    assert len(result.selected) == len({item.trace.metadata.task_domain for item in items})


def test_rows_mixed_with_items_are_refused_naming_the_row() -> None:
    """A row among items is a mistake in the call, named by its place, not a silent problem."""
    items = [item for item in items_of(TRACES) if isinstance(item, TraceItem)]
    with pytest.raises(SettingTypeError, match=r"data\[1\] is a dict among trace items"):
        list(items_of([items[0], {"messages": []}]))


@settings(max_examples=15, deadline=None)
@given(st.permutations(range(8)), st.integers(min_value=1, max_value=8))
def test_selecting_scored_items_is_order_independent(order: list[int], budget: int) -> None:
    """Given back in any order, score()'s items select the same traces as the files do."""
    scored = score(TRACES, scorer=scorer())
    shuffled = [scored[index] for index in order]
    want = select(TRACES, budget=budget, scorer=scorer())
    got = select(shuffled, budget=budget, scorer=scorer())
    assert [s.trace.id for s in got.selected] == [s.trace.id for s in want.selected]


def test_a_record_no_source_knows_names_the_parameter_to_give() -> None:
    """The problem says source= for a Python caller, beside kp's --from."""
    (problem,) = list(items_of([{"question": "what?"}]))
    assert isinstance(problem, Problem)
    assert "name its source (source=; kp: --from" in problem.message


@pytest.mark.parametrize(
    "order", [(TRACES, CHAT), (CHAT, TRACES)], ids=["traces-first", "chat-first"]
)
def test_kept_rows_of_files_of_both_forms_tell_split_to_take_kept(order: tuple[Path, Path]) -> None:
    """decontaminate(files of traces and of chat rows).kept_rows mixes both forms: split reads
    .kept whole, and each row of .kept_rows it cannot read is refused saying to pass .kept."""
    clean = decontaminate(list(order), against_texts=["no task says this at all"], scorer=scorer())
    assert clean.removed == ()
    whole = split(clean.kept, test=0.4, scorer=scorer())
    assert whole.problems == ()
    assert sum(whole.sizes.values()) == len(clean.kept)
    parts = split(clean.kept_rows, test=0.4, scorer=scorer())
    other = order[1].read_text().count("\n")
    told = [p for p in parts.problems if "result.kept, not result.kept_rows" in p.message]
    assert len(told) == other == len({p.location for p in parts.problems})
    assert sum(parts.sizes.values()) + other == len(clean.kept)


def test_rows_of_one_form_are_told_nothing_of_mixing() -> None:
    """Chat rows alone, and one refused among them, get no word about mixed forms."""
    rows = [*chat_rows(), {"messages": "not a list"}]
    problems = [item for item in items_of(rows) if isinstance(item, Problem)]
    assert problems
    assert not any("kept_rows" in problem.message for problem in problems)
