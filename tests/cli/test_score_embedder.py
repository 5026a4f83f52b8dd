"""``kp score`` with the real embedder: novelty sources, a saved cache, frozen mode, no extra."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID
from knowledgepulse.novelty.static import STATIC_MODEL_ID
from tests.cli.conftest import KpRunner

pytestmark = pytest.mark.embedder

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"

# What `--device cuda` says on this GPU-less machine: with torch, that it sees no GPU; without
# torch (the default test install), the `gpu` extra's install line.
NO_CUDA = (
    "no CUDA GPU found"
    if importlib.util.find_spec("torch") is not None
    else 'pip install -e ".[gpu]"'
)


def rows(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_novelty_comes_from_the_model(kp: KpRunner) -> None:
    """The first trace meets an empty cache; each later one names its nearest earlier trace."""
    run = kp("score", str(TRACES), "-f", "jsonl")
    assert run.code == 0
    scored = rows(run.out)
    assert scored[0]["novelty_source"] == "empty_cache"
    assert {r["novelty_source"] for r in scored[1:]} == {"embedding"}
    earlier = {r["id"] for r in scored}
    assert all(r["nearest_trace"] in earlier for r in scored[1:])


@pytest.mark.parametrize("name", ["session.kpcache", "session.kpcache.npz"])
def test_a_cache_file_carries_novelty_across_runs(kp: KpRunner, tmp_path: Path, name: str) -> None:
    """--cache (a ring file or an .npz) is loaded before and saved after: the second run meets
    the first run's traces, each all but its own vector: the leave-one-out (--corpus) novelty."""
    cache = tmp_path / name
    first = kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert first.code == 0
    assert "already in" not in first.err
    assert cache.exists()
    run = kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert f"kp: 8 traces of this input were already in {cache} (by id)" in run.err
    again = rows(run.out)
    corpus = rows(kp("score", str(TRACES), "-f", "jsonl", "--corpus").out)
    for row, alone in zip(again, corpus, strict=True):
        assert row["nearest_trace"] != row["id"]
        assert row["dimensions"]["novelty"] == pytest.approx(  # type: ignore[index]
            alone["dimensions"]["novelty"],  # type: ignore[index]
            abs=1e-5,
        )
        assert row["dimensions"]["novelty"] > 0.0  # type: ignore[index]


def test_one_trace_rescored_with_its_cache_is_told_no_other_trace(
    kp: KpRunner, tmp_path: Path
) -> None:
    """kp score --cache twice on one trace: the second run says no other trace, not empty."""
    one = tmp_path / "one.jsonl"
    one.write_text(TRACES.read_text("utf-8").splitlines()[0] + "\n", "utf-8")
    cache = ("--cache", str(tmp_path / "c.ring"))
    args = ("score", "--embedder", "static", "--explain", "-f", "table", *cache)
    first = kp(*args, str(one))
    assert "empty cache: nothing to compare with, so 0.5" in first.out
    assert "first trace: empty cache" in " ".join(first.out.split())
    again = kp(*args, str(one))
    assert again.code == 0, again.err
    shown = " ".join(again.out.split())
    assert "no other trace in the cache, only this trace's own vector" in shown
    assert "empty cache" not in shown


def test_a_rescore_counts_only_the_unexpired_vectors_as_already_in_the_cache(
    kp: KpRunner, tmp_path: Path
) -> None:
    """With --ttl, the traces whose vectors expired are not said to be already in the cache."""
    cache = tmp_path / "session.kpcache"
    static = ("--embedder", "static", "-f", "jsonl", "--cache", str(cache))
    assert kp("score", str(TRACES), *static).code == 0
    time.sleep(0.2)
    run = kp("score", str(TRACES), *static, "--ttl", "0.1")  # the first run's are 0.2 s old
    assert run.code == 0
    assert "already in" not in run.err
    kept = kp("score", str(TRACES), *static, "--ttl", "3600")  # this run's, not expired
    assert f"kp: 8 traces of this input were already in {cache} (by id)" in kept.err


def test_rescoring_a_day_gives_the_same_scores_and_keeps_the_days_before(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A day's file scored again with --cache adds no copies of its vectors: a full cache keeps
    the earlier days, so every rescoring gives the scores the first rescoring gave."""
    from knowledgepulse.novelty.cache import VectorCache

    lines = TRACES.read_text().splitlines(keepends=True)
    monday, tuesday = tmp_path / "monday.jsonl", tmp_path / "tuesday.jsonl"
    monday.write_text("".join(lines[:4]))
    tuesday.write_text("".join(lines[4:]))
    cache = tmp_path / "seen.kpcache"
    options = ("-f", "jsonl", "--cache", str(cache), "--cache-size", "8")
    assert kp("score", str(monday), *options).code == 0
    assert kp("score", str(tuesday), *options).code == 0
    rescored = [kp("score", str(tuesday), *options) for _ in range(3)]
    assert all(run.code == 0 for run in rescored)
    assert rescored[1].out == rescored[0].out == rescored[2].out
    with VectorCache.open(cache, read_only=True) as held:
        ids = [str(entry.id) for entry in held.entries()]
    assert sorted(ids) == sorted(json.loads(line)["id"] for line in lines)


def test_the_run_says_what_the_cache_holds_added_evicted_and_expired(
    kp: KpRunner, tmp_path: Path
) -> None:
    """After a run, one line: the vectors that count of the cache's size, what the run added,
    the oldest its additions evicted, and those past --ttl (they no longer count)."""
    cache = tmp_path / "seen.kpcache"
    first = kp("score", str(TRACES), "--cache", str(cache), "--cache-size", "5", "--ttl", "0.001")
    assert first.code == 0
    assert re.search(
        rf"kp: {re.escape(str(cache))} holds \d of 5 vectors: 8 added by this run, 3 of the "
        r"oldest evicted",
        first.err,
    )
    frozen = kp("score", str(TRACES), "--cache", str(cache), "--frozen")
    assert f"kp: {cache} holds 0 of 5 vectors; nothing was added; 5 more expired" in frozen.err


def test_frozen_scoring_leaves_the_cache_file_and_ignores_order(
    kp: KpRunner, tmp_path: Path
) -> None:
    """--frozen scores against the saved cache without changing it; input order does not matter."""
    cache = tmp_path / "known.kpcache.npz"
    lines = TRACES.read_text().splitlines()
    seen = tmp_path / "seen.jsonl"
    seen.write_text("\n".join(lines[:3]) + "\n")
    kp("score", str(seen), "-f", "jsonl", "--cache", str(cache))
    before = cache.read_bytes()

    new = tmp_path / "new.jsonl"
    new.write_text("\n".join(lines[3:]) + "\n")
    backwards = tmp_path / "backwards.jsonl"
    backwards.write_text("\n".join(reversed(lines[3:])) + "\n")
    forward = rows(kp("score", str(new), "-f", "jsonl", "--cache", str(cache), "--frozen").out)
    reverse = rows(
        kp("score", str(backwards), "-f", "jsonl", "--cache", str(cache), "--frozen").out
    )

    assert cache.read_bytes() == before
    by_id = {r["id"]: (r["score"], r["nearest_trace"]) for r in reverse}
    assert {r["id"]: (r["score"], r["nearest_trace"]) for r in forward} == by_id
    first_three = {json.loads(line)["id"] for line in lines[:3]}
    assert {r["nearest_trace"] for r in forward} <= first_three


def test_a_cache_of_another_model_is_refused(kp: KpRunner, tmp_path: Path) -> None:
    """Vectors of another model are not comparable: exit 2 with both model names."""
    from knowledgepulse.novelty.cache import VectorCache

    cache = tmp_path / "other.kpcache.npz"
    VectorCache().save(cache, model_id="some-other-model")
    run = kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert run.code == 2
    assert "'some-other-model'" in run.err
    assert STATIC_MODEL_ID in run.err


def test_a_minilm_cache_under_the_static_default_says_to_choose_minilm(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A cache the model made (the default before the static table) is refused with the fix:
    both names, and --embedder minilm; with it, the cache is used."""
    cache = tmp_path / "old.kpcache.npz"
    assert kp("score", str(TRACES), "--embedder", "minilm", "--cache", str(cache)).code == 0
    run = kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert run.code == 2
    assert BUNDLED_MODEL_ID in run.err
    assert STATIC_MODEL_ID in run.err
    assert "choose that embedder (--embedder minilm)" in run.err
    again = kp("score", str(TRACES), "--embedder", "minilm", "--cache", str(cache))
    assert "8 traces of this input were already in" in again.err


def test_without_the_extra_novelty_is_one_half_and_one_line_says_why() -> None:
    """No tokenizers (which both embedders need): every trace is scored with N = 0.5 and stderr
    says why, once."""
    code = (
        "import sys; sys.modules['tokenizers'] = None\n"
        "from knowledgepulse.cli.main import main\n"
        f"sys.exit(main(['score', {str(TRACES)!r}, '-f', 'jsonl']))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0
    scored = rows(run.stdout)
    assert len(scored) == 8
    assert {r["novelty_source"] for r in scored} == {"no_embedder"}
    assert {r["dimensions"]["novelty"] for r in scored} == {0.5}  # type: ignore[index]
    warnings = [line for line in run.stderr.splitlines() if "novelty is 0.5" in line]
    assert len(warnings) == 1
    assert 'pip install -e ".[embeddings]" in the knowledgepulse checkout' in warnings[0]


def test_cache_size_and_ttl_shape_the_saved_cache(kp: KpRunner, tmp_path: Path) -> None:
    """--cache-size keeps only the newest N vectors; --ttl is saved with the cache."""
    from knowledgepulse.novelty.cache import VectorCache

    cache = tmp_path / "small.npz"
    args = ("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert kp(*args, "--cache-size", "3", "--ttl", "60").code == 0
    loaded = VectorCache.load(cache)
    assert (loaded.max_elements, loaded.size, loaded.ttl_ms) == (3, 3, 60_000)


@pytest.mark.parametrize("name", ["seen.kpcache", "seen.npz"])
@pytest.mark.parametrize("frozen", [False, True])
def test_a_smaller_cache_size_on_a_saved_cache_says_which_vectors_it_drops(
    kp: KpRunner, tmp_path: Path, name: str, frozen: bool
) -> None:
    """--cache-size below what a saved cache holds keeps its newest vectors and says how many of
    the oldest went (and, frozen, that the file is unchanged); before, they went silently."""
    from knowledgepulse.novelty.cache import VectorCache

    cache = tmp_path / name
    args = ("score", str(TRACES), "-f", "jsonl", "--cache", str(cache))
    assert kp(*args).code == 0
    run = kp(*args, "--cache-size", "3", *(["--frozen"] if frozen else []))
    assert run.code == 0, run.err
    fate = "left out of this run; the file keeps them" if frozen else "dropped from the file"
    assert f"kp: {cache} held 8 vectors; --cache-size 3 keeps the newest 3" in run.err
    assert f"the 5 oldest are {fate}" in run.err
    assert VectorCache.load(cache).size == (8 if frozen else 3)
    same = kp(*args, "--cache-size", "3" if not frozen else "8")
    assert "keeps the newest" not in same.err


def test_max_windows_caps_long_traces_and_says_so(kp: KpRunner, tmp_path: Path) -> None:
    """--max-windows 1 embeds only the first window of a long trace; the row says it was capped."""
    document = json.loads(TRACES.read_text().splitlines()[0])
    document["steps"][0]["content"] = "word " * 2000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(document) + "\n")
    windows = ("score", str(path), "-f", "jsonl", "--novelty-text", "windows")
    capped = rows(kp(*windows, "--max-windows", "1").out)[0]
    whole = rows(kp(*windows, "--max-windows", "none").out)[0]
    assert capped["inputs"]["novelty"]["capped"] is True  # type: ignore[index]
    assert capped["inputs"]["novelty"]["windows_embedded"] == 1  # type: ignore[index]
    assert whole["inputs"]["novelty"]["capped"] is False  # type: ignore[index]


def test_max_windows_must_be_a_count_or_none(kp: KpRunner) -> None:
    """A --max-windows that is neither a positive integer nor 'none' is a usage error."""
    run = kp("score", str(TRACES), "--max-windows", "lots")
    assert run.code == 2
    assert "'lots' is not a number of windows" in run.err


def test_a_cache_saved_under_one_novelty_text_is_refused_under_another(
    kp: KpRunner, tmp_path: Path
) -> None:
    """Vectors of different representations cannot be compared: the second run says so."""
    cache = tmp_path / "c.npz"
    assert kp("score", str(TRACES), "-f", "jsonl", "--cache", str(cache)).code == 0
    run = kp(
        "score", str(TRACES), "-f", "jsonl", "--cache", str(cache), "--novelty-text", "windows"
    )
    assert run.code == 2
    assert run.err.startswith("kp: error:")
    assert "novelty-text" in run.err


@pytest.mark.parametrize(
    ("option", "first", "second"),
    [
        # Two processes run the model: no score, novelty or neighbour changes.
        ("--workers", "1", "2"),
        # No GPU here: auto is the bundled CPU model.
        ("--device", "cpu", "auto"),
    ],
)
def test_how_the_model_runs_changes_no_row(
    kp: KpRunner, option: str, first: str, second: str
) -> None:
    """The same rows whichever way the embeddings are computed."""
    one = kp("score", str(TRACES), "-f", "jsonl", option, first)
    two = kp("score", str(TRACES), "-f", "jsonl", option, second)
    assert one.code == two.code == 0
    assert rows(two.out) == rows(one.out)
    assert {r["novelty_source"] for r in rows(two.out)[1:]} == {"embedding"}


def test_workers_or_a_device_without_an_embedder_is_a_usage_error(kp: KpRunner) -> None:
    """--no-embedder has no model to run: --workers and --device make no sense with it."""
    for option in (["--workers", "2"], ["--device", "cuda"]):
        run = kp("score", str(TRACES), "--no-embedder", *option)
        assert run.code == 2
        assert "--no-embedder" in run.err


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("gpu", "device must be one of auto, cpu, cuda or cuda:N"),
        ("cuda", NO_CUDA),
        ("cuda:3", NO_CUDA),
    ],
)
def test_a_device_that_cannot_run_is_one_line_before_any_work(
    kp: KpRunner, device: str, message: str
) -> None:
    """An unknown device, or a GPU this machine lacks: exit 2, what to do, no traceback."""
    run = kp("score", str(TRACES), "--device", device)
    assert run.code == 2
    assert message in run.err
    assert "Traceback" not in run.err
    assert run.out == ""


def test_a_small_input_starts_no_worker_processes(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 traces on 4 cores: the model runs in this process (starting workers costs 0.8 s)."""
    from knowledgepulse.novelty import minilm

    def no_pool(*args: object) -> None:
        raise AssertionError("a worker pool was started for 8 traces")

    monkeypatch.setattr(minilm, "available_threads", lambda: 4)
    monkeypatch.setattr(minilm, "WorkerPool", no_pool)
    run = kp("score", str(TRACES), "-f", "jsonl")
    assert run.code == 0, run.err
    assert len(rows(run.out)) == 8
