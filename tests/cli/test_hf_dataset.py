"""A Hugging Face ``save_to_disk`` folder, and its ``.arrow`` file, scored like the JSON Lines rows
it was saved from (``examples/datasets/make_hf_dataset.py`` made it from ``openai_chat.jsonl``)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import KpRunner
from tests.paths import REPO

EXAMPLES = REPO / "examples" / "datasets"
FOLDER = EXAMPLES / "openai_chat_hf"


def scores(kp: KpRunner, path: str) -> list[tuple[str, float]]:
    """Each trace's id and score from ``kp score --no-embedder PATH -f jsonl``."""
    run = kp("score", "--no-embedder", path, "-f", "jsonl")
    assert run.code == 0, run.err
    assert "read as openai-chat rows (3 traces)" in run.err
    return [(row["id"], row["score"]) for row in map(json.loads, run.out.splitlines())]


@pytest.mark.parametrize("path", [FOLDER, FOLDER / "data-00000-of-00001.arrow"])
def test_a_saved_dataset_scores_as_its_json_lines_rows(kp: KpRunner, path: object) -> None:
    """The folder and its Arrow file give the JSON Lines file's ids and scores, in order."""
    expected = scores(kp, str(EXAMPLES / "openai_chat.jsonl"))
    assert len(expected) == 3
    assert scores(kp, str(path)) == expected
