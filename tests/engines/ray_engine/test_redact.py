"""runs.on_ray with ``redact``: the actors redact each trace and row before they embed it.

The actor's step and the driver's are run in this process, on one batch (no Ray started): what
the actor gives the driver holds no secret, and the scores are a local ``redact=True`` run's.
"""

from __future__ import annotations

import itertools
import json
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa

from knowledgepulse.records import Problem
from knowledgepulse.redact.items import Redactor
from knowledgepulse.runs import score
from knowledgepulse.runs.on_ray import ConversationRows, TraceBatchEmbedder, TraceColumn
from knowledgepulse.runs.on_ray import _score_batch as score_batch
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import ScoredItem, TraceValueScorer
from tests.builders import trace_json

KEY = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
EXAMPLES = Path(__file__).parents[3] / "examples" / "datasets"


def _rows() -> list[dict[str, Any]]:
    """The example chat rows, a secret and an e-mail planted in the first's first message."""
    lines = (EXAMPLES / "openai_chat.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    first = rows[0]["trajectory"][1]
    first["content"] = f"{first['content']} Mail ann@corp.io, key {KEY}"
    return rows


def _run(rows: list[dict[str, Any]], reader: Any, redactor: Redactor) -> list[Any]:
    """One batch through the actor's step and the driver's, as score_dataset runs them."""
    scorer = TraceValueScorer(embedder=HashingEmbedder())
    sent = pickle.loads(pickle.dumps(redactor))  # as Ray gives it to the actor
    actor = TraceBatchEmbedder(HashingEmbedder, scorer.novelty_text, reader, None, sent)
    batch = actor(pa.Table.from_pylist(rows))
    # A problem's message is cleaned in the driver, as a local run's: checked on what it gives.
    sent_back = [batch[key].tolist() for key in batch if key not in ("_kp_row", "_kp_problems")]
    assert KEY not in repr(sent_back) + repr([pickle.loads(row) for row in batch["_kp_row"]])
    return list(score_batch(scorer, batch, itertools.count(), redactor))


def test_redacted_rows_score_as_a_local_redacted_run_and_are_counted() -> None:
    """The rows given back hold no secret nor e-mail, score as locally, and the driver counts."""
    rows = _rows()
    redactor = Redactor("aggregated")
    results = _run(rows, ConversationRows("openai-chat"), redactor)
    scored = [result for result in results if isinstance(result, ScoredItem)]
    local = score(
        rows,
        source="openai-chat",
        redact=Redactor("aggregated"),
        scorer=TraceValueScorer(embedder=HashingEmbedder()),
    )
    given_back = json.dumps([item.item.row.value for item in scored if item.item.row])
    assert KEY not in given_back
    assert "ann@corp.io" not in given_back
    assert "[REDACTED:api_key]" in given_back
    assert [item.breakdown.score for item in scored] == [item.breakdown.score for item in local]
    assert redactor.redacted == 1
    assert redactor.types["email"] >= 1


def test_a_bad_row_s_id_and_message_hold_no_secret() -> None:
    """A refused trace is told by its id as written (hashed) and its message without the key."""
    document = trace_json(trace_id=f"kp:trace:{KEY}")
    document["metadata"]["success"] = f"yes {KEY}"
    results = _run([{"trace": json.dumps(document)}], TraceColumn(), Redactor())
    assert results
    assert all(isinstance(result, Problem) for result in results)
    assert KEY not in repr([str(result) for result in results])
