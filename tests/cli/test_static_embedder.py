"""``--embedder static``: kp score, select and dedupe run on the static table end to end, a cache
of its vectors refuses the MiniLM model's, and the options only the model takes are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID
from knowledgepulse.novelty.static import STATIC_MODEL_ID
from tests.cli.conftest import KpRunner

pytestmark = pytest.mark.embedder

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


def rows(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_score_takes_novelty_from_the_static_embedder(kp: KpRunner) -> None:
    """The first trace meets an empty cache; each later one is compared by its static vector."""
    run = kp("score", str(TRACES), "-f", "jsonl", "--embedder", "static")
    assert run.code == 0, run.err
    scored = rows(run.out)
    assert len(scored) == 8
    assert scored[0]["novelty_source"] == "empty_cache"
    assert {r["novelty_source"] for r in scored[1:]} == {"embedding"}


@pytest.mark.parametrize("command", ["select", "dedupe"])
def test_select_and_dedupe_run_on_the_static_embedder(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """Both commands finish with --embedder static and write their output."""
    output = tmp_path / "out.jsonl"
    run = kp(command, str(TRACES), "--embedder", "static", "-o", str(output))
    assert run.code == 0, run.err
    assert output.exists()


def test_a_cache_of_static_vectors_refuses_the_minilm_model(kp: KpRunner, tmp_path: Path) -> None:
    """Vectors of the two embedders are not comparable: the second run exits 2 naming both."""
    cache = tmp_path / "static.kpcache.npz"
    first = kp("score", str(TRACES), "-f", "jsonl", "--embedder", "static", "--cache", str(cache))
    assert first.code == 0, first.err
    run = kp("score", str(TRACES), "-f", "jsonl", "--embedder", "minilm", "--cache", str(cache))
    assert run.code == 2
    assert STATIC_MODEL_ID in run.err
    assert BUNDLED_MODEL_ID in run.err
    assert "choose that embedder (--embedder static)" in run.err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--workers", "2"], "--workers"),
        (["--device", "cuda"], "--device"),
        (["--no-embedder"], "--no-embedder"),
        (["--max-windows", "4"], "--max-windows"),
    ],
)
def test_options_of_the_model_are_refused_with_the_static_embedder(
    kp: KpRunner, options: list[str], named: str
) -> None:
    """What only the MiniLM model takes fails in one line, exit 2, naming the option."""
    run = kp("score", str(TRACES), "-f", "jsonl", "--embedder", "static", *options)
    assert run.code == 2
    assert named in run.err
    assert "Traceback" not in run.err


@pytest.mark.parametrize(("made_with", "scored_with"), [("windows", None), (None, "truncate")])
def test_a_cache_of_another_novelty_text_names_the_text_to_choose(
    kp: KpRunner, tmp_path: Path, made_with: str | None, scored_with: str | None
) -> None:
    """The same embedder under another --novelty-text is refused with the option that fits the
    cache; before, the error named only model ids, one of them the bare embedder's, so the user
    could not tell that the novelty text was what differed. With that option the cache is used."""
    cache = tmp_path / "seen.kpcache"
    made = ["--novelty-text", made_with] if made_with else []
    scored = ["--novelty-text", scored_with] if scored_with else []
    assert kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache), *made).code == 0
    run = kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache), *scored)
    assert run.code == 2
    fitting = made_with or "objective-actions-terms"
    assert f"(--novelty-text {fitting})" in run.err
    again = kp(
        "score", str(TRACES), "-f", "jsonl", "--cache", str(cache), "--novelty-text", fitting
    )
    assert again.code == 0, again.err
