"""runs.annotate holds no scored item once its row's place and columns are taken."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from datasets import Dataset

from knowledgepulse.runs import annotate, api
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.value import TraceValueScorer
from knowledgepulse.value.item import ScoredItem

CHAT = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"
ROWS = [json.loads(line) for line in CHAT.read_text().splitlines()]
FORMS = {
    "pandas": pd.DataFrame,
    "arrow": pa.Table.from_pylist,
    "datasets": Dataset.from_list,
    "dicts": list,
}


@pytest.mark.parametrize("redact", [False, True])
@pytest.mark.parametrize("form", FORMS)
def test_each_scored_item_is_let_go_before_the_next_is_scored(
    form: str, redact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No item but the last is alive when the next is scored, nor any once annotate returns.

    A table keeps each row's place (its redacted row) and columns, a list its output dict: at
    1M rows, holding every item (its trace, document and row) took 15 KB or more a row.
    """
    traces: list[weakref.ref[ReasoningTrace]] = []
    scored = api._scored

    def watched(*args: Any) -> Iterator[ScoredItem]:
        for item in scored(*args):
            # the one before may be held until this one takes its name, in each loop it passes
            assert [ref() for ref in traces[:-1]] == [None] * len(traces[:-1])
            traces.append(weakref.ref(item.item.trace))
            yield item

    monkeypatch.setattr(api, "_scored", watched)
    back = annotate(FORMS[form](ROWS), scorer=TraceValueScorer(embedder=None), redact=redact)
    assert len(traces) == len(ROWS) == len(back)
    assert [ref() for ref in traces] == [None] * len(ROWS)
