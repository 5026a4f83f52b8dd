"""Issue 29's "dedupe and select at scale": where ``kp dedupe``'s time and memory go.

    python bench/bench_curate_scale.py 10000 100000          # stages in one process, and the CLI
    python bench/bench_curate_scale.py 1000000 --cli-only    # the goal: kp dedupe on 1M traces
    python bench/bench_curate_scale.py 10000 --stages-only

Generated traces (deterministic, no download): tasks of topic words drawn from the bundled
tokenizer's vocabulary, several runs of each, and about one trace in ten a near-copy of an
earlier one (another id, one word changed), so dedupe has planted pairs to find. For each N:

- stages, in one process as :func:`~knowledgepulse.runs.dedupe` runs them, with the static
  embedder: read (parse and validate), embed, search (each trace's nearest other trace),
  group (the dedupe walk), and ``select`` with a budget of N/10 on the scored corpus; seconds
  and the peak RSS after each (a peak only grows), and the planted pairs found;
- ``kp dedupe --embedder static`` and ``kp select --embedder static --budget N/10`` as a user
  runs them: wall, CPU (user + system) and peak RSS from ``/usr/bin/time``.

Goal (issue 29): 1M traces, ``kp dedupe`` with the static embedder in <= 15 minutes on 2 cores,
peak memory < 4 GB. Asserts nothing.

2026-11-29, ``python bench/bench_curate_scale.py 100000 --stages-only``, load average 7 to 9 on
the 2 shared cores (CPU seconds are the figures; wall is the load's). The traces now act: every
other step is a tool call with a search query, so the objective, the actions and their terms all
count (before, every step was a thought, and the vectors were the objective's alone: 22,538
distinct among 100,000, each task's runs one vector). The index holds each vector's 64 leading
principal directions in int8 (it was 864 half-precision floats):
    read 24.9, embed 48.4, search 63.2, breakdowns 6.0, group 77.8, select (budget 10,000) 130.2
    CPU s; peak 4,577 MiB (the stages hold every item); 8,706 groups, 10,101 near-duplicates
    marked, 10,101 of 10,108 planted pairs in one group (the planted pairs' cosines go down to
    0.949, under the 0.95 threshold).
On the same 100,000 vectors, usearch alone (one thread, build + 16 neighbours of each): 864-wide
int8 rows 94.8 + 61.2 CPU s, the true nearest proposed for 94.9% of 1,000 sampled rows; 64
leading directions 31.3 + 17.3 s (32 proposed), 99.9%; 128 directions 32.1 + 18.6 s, 99.8%.
Against exact scans on the first 60,000 (``EXACT_LIMIT`` raised): leave-one-out search 37 CPU s
(exact 113), the same nearest cosine for 99.93% of rows (99.96% of those at 0.95 or more); the
dedupe walk 51 CPU s (exact 59), 5,195 of the 5,198 exact groups found whole, 6,009 members
against 6,012.
The CLI at 300,000 (the traces kept by a short script calling :func:`write_traces` and
:func:`cli`, as ``--cli-only`` does), load average 4 to 8:
    kp dedupe --embedder static: 1,039 s wall, 691 CPU s, 2,904 MiB peak, exit 0.
    kp select --embedder static --budget 30000: 589 s wall, 531 CPU s, 3,299 MiB peak, exit 0.
Not reached, and not run at 1M: from 300,000, about 2,300-2,500 CPU s (40 CPU minutes; read,
embed and breakdowns alone about 800 CPU s, on one core: 13 minutes) and about 9.5 GB (per
trace: its record, 1.7 KB, its vector, 864 float32 = 3.5 KB, and the walk's copy of it).
What is left, in order of yield: the dedupe walk taking
the novelty search's neighbours (a trace whose nearest other is under the threshold is never a
member, and a pick within it of a member is itself such a trace, so the walk needs only the
traces whose nearest other reaches it; needs that cosine carried from ``score_corpus`` to
``dedupe``), the walk holding its picks' row numbers instead of copies, vectors kept in float16,
and reading and embedding on both cores.

The walk bounded by each trace's nearest other (``kp dedupe`` since 2026-11-29: a trace whose
novelty's nearest is under the threshold is in no group), the same command, load 6 to 8, both
walks in one run: 18,807 of 100,000 traces walked; group 64.1 CPU s walking every trace, 7.2
bounded (read 17.0, embed 34.7, search 43.3, select 55.4 in that run).
``kp dedupe --embedder static`` on 1,000,000 of these traces (the command ``--cli-only`` runs),
the same day: exit 0, 84,516 groups, 1,463 s wall (a CI run beside it for the first 12
minutes), 1,573 CPU s, peak 9,037 MiB (the vectors held twice at the peak: joined from their
batches, and copied in canonical order for the leave-one-out search).

The vectors held once (``score_apart`` fills one array, grown in place, as the batches are
embedded; the leave-one-out search reads them through the canonical order, the index built and
searched in that order as before, instead of a copy in it), the outputs byte-identical. The
traces kept in files by a short script calling :func:`write_traces`, then
``/usr/bin/time -v kp dedupe --embedder static FILE -o OUT`` on each tree: 100,000 traces, peak
1,204 -> 797 MiB (138 and 149 CPU s, load 1 to 7), the same 8,704 groups byte for byte;
1,000,000 traces, load 4.5 to 7 throughout: exit 0, 84,516 groups (as many as before; that
run's output was not kept to compare), 2,268 s wall (68% of a core), 1,545 CPU s, peak 5,192 MiB
(was 9,037). Sampled every few seconds (RSS and the main
thread's stack): read and embed 895 s wall to 4.3 GB (the tokenizer's two threads 224 CPU s of
it: its batch parallelism is on; the rest is the main thread, parsing, validating and summing
pieces under the GIL), the index build (one thread, for a deterministic graph) 630 s, the
searches 540 s, breakdowns 35 s, the walk 130 s (the peak, 5.1 GB: every breakdown, the
candidates and the walk's picks beside the vectors). Still held at 1M: the vectors, 3,296 MiB
(float16 since, below), about 1.2 KB a trace of small objects
(tracemalloc at 30,000: the breakdown, its floats, novelty origin and dimensions, the held
item, record and location, the facts and digests, the id; none over 120 bytes), and the
usearch graph and the walk's transients. Not reached: 15 minutes (read and embed alone, on
one core but the tokenizer, pass it under this load) and 4 GB.

Past ``EXACT_LIMIT`` the vectors are held in float16 (``index.held_dtype``; each cosine a
float32 product), the walk's picks too, the index's proposals compared a column at a time, no
copy of each candidate for the ranking, and a static call embeds each distinct text once; below
the limit the outputs are byte-identical. The same ``/usr/bin/time -v kp dedupe`` command, main
and this tree in one session, load 7 to 15 from other jobs:
    100,000 traces: main 116.9 CPU s, 796 MiB; float16 127.0 CPU s, 741 MiB; 8,700 of 8,704
    groups the same (4 pairs at cosines 0.991-1.0 lost to index misses, none across the
    threshold; 7 groups under another representative; 38 traces changed group).
    100,000 traces, load below 5: main 119.7 CPU s, 798 MiB; every change 104.9 CPU s,
    529 MiB, the same bytes out as float16 alone.
    200,000 traces: main 358.4 CPU s, 1,220 MiB; this tree 350.1 CPU s, 897 MiB; 17,332 of
    17,345 groups the same (13 lost, 15 new, all at cosines 0.977-1.0: index misses both
    ways; 13 groups under another representative; 112 traces changed group). Quiet (load
    below 2): main 234.2 CPU s, 1,218 MiB, 196 s wall; this tree 229.6 CPU s, 897 MiB, 195 s.
1,000,000 traces, quiet (load about 1), after the merge: exit 0, 18 min 32 s wall, 1,305 CPU
s, peak 3,433 MiB (under 4 GB; the 15 minutes not reached: read and embed, the one-thread
build: see docs/performance.md); 84,483 groups (84,516 with float32 vectors).
No full garbage collection while the corpus is held, and the static embedder's batches
embedded in a forked worker past 20,000 traces (``curation/lane.py``), the same bytes out:
1,000,000 traces, quiet: 13 min 47 s wall, 1,126 CPU s, peak 3,411 MiB (the goal met), the same
84,483 groups; 200,000 (load about 3) 220.1 -> 179.4 s wall against a705e53.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from knowledgepulse.curation import corpus as corpus_module
from knowledgepulse.curation import dedupe, score_corpus, select
from knowledgepulse.novelty.minilm import bundled_tokenizer_path
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.runs.inputs import items_of
from knowledgepulse.runs.read import valid_items
from knowledgepulse.trace.item import TraceItem
from knowledgepulse.value import TraceValueScorer

KP = [sys.executable, "-m", "knowledgepulse.cli.main"]
RUNS_PER_TASK = 4
"""Runs of each task (each its own wording around the task's topic words)."""
COPY_SHARE = 0.1
"""The share of traces that are a near-copy of an earlier one."""


def vocabulary() -> list[str]:
    """Whole words of the bundled tokenizer (3 letters or more): the generator's words."""
    vocab = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(word for word in vocab if word.isalpha() and word.isascii() and len(word) >= 3)


def generated(count: int, seed: int = 29) -> Iterator[tuple[dict[str, Any], str | None]]:
    """``count`` traces, each with the id it copies (``None``: none); the same for a seed."""
    rng, words = random.Random(seed), vocabulary()
    recent: list[dict[str, Any]] = []  # copies come from the last few hundred traces
    topic: list[str] = []
    for number in range(count):
        original = None
        if recent and rng.random() < COPY_SHARE:
            document = json.loads(json.dumps(rng.choice(recent)))
            original = document["id"]
            document["id"] = f"kp:trace:scale-{number:07d}"
            step = rng.choice(document["steps"])
            content = step["content"].split()
            content[rng.randrange(len(content))] = rng.choice(words)
            step["content"] = " ".join(content)
        else:
            if number % RUNS_PER_TASK == 0 or not topic:
                topic = rng.sample(words, 12)

            def sentence(size: int) -> str:
                return " ".join(
                    rng.choice(topic) if rng.random() < 0.3 else rng.choice(words)  # noqa: B023
                    for _ in range(size)
                )

            def step(step_id: int) -> dict[str, Any]:
                # Every other step acts (a search for topic words and a numbered record), so
                # each part of the default novelty text has something to read.
                content = sentence(rng.randint(8, 30))
                if step_id % 2 == 0:
                    return {"step_id": step_id, "type": "thought", "content": content}
                query = f"{sentence(3)} rec-{rng.randrange(10**6)}"
                return {
                    "step_id": step_id,
                    "type": "tool_call",
                    "content": content,
                    "tool": {"name": "search"},
                    "input": {"query": query},
                }

            document = {
                "@context": "https://openknowledgepulse.org/schema/v1",
                "@type": "ReasoningTrace",
                "id": f"kp:trace:scale-{number:07d}",
                "metadata": {
                    "created_at": "2026-11-28T08:00:00Z",
                    "agent_id": f"agent-{number % 13}",
                    "task_domain": rng.choice(("code", "finance", "research")),
                    "success": rng.random() < 0.8,
                    "quality_score": 0,
                    "visibility": "network",
                    "privacy_level": "aggregated",
                },
                "task": {"objective": " ".join(topic[:8])},
                "steps": [step(step_id) for step_id in range(rng.randint(3, 8))],
                "outcome": {"result_summary": sentence(8), "confidence": 0.5},
            }
        recent.append(document)
        if len(recent) > 500:
            recent.pop(0)
        yield document, original


def write_traces(count: int, path: Path) -> list[tuple[str, str]]:
    """Write ``count`` generated traces as JSONL; the planted pairs (copy id, original id)."""
    planted = []
    with path.open("w", encoding="utf-8") as out:
        for document, original in generated(count):
            if original is not None:
                planted.append((document["id"], original))
            out.write(json.dumps(document, separators=(",", ":")) + "\n")
    return planted


def peak_mib() -> float:
    """This process's peak RSS so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stages(path: Path, count: int, planted: list[tuple[str, str]]) -> None:
    """Each stage of dedupe (and select with a budget), timed, in this process."""
    figures: list[tuple[str, float, float, float]] = []
    clock = (time.perf_counter(), time.process_time())

    def mark(stage: str) -> None:
        nonlocal clock
        now = (time.perf_counter(), time.process_time())
        figures.append((stage, now[0] - clock[0], now[1] - clock[1], peak_mib()))
        clock = now

    def timed(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            mark(f"{stage} (before)")
            found = function(*args, **kwargs)
            mark(stage)
            return found

        return run

    scorer = TraceValueScorer(embedder=StaticEmbedder())
    scorer.embedder.load()  # type: ignore[union-attr]
    mark("start")
    traces = [
        item for item in valid_items(items_of([str(path)]), [], None) if isinstance(item, TraceItem)
    ]
    mark("read")
    # score_corpus's two costly steps, timed where it calls them.
    scorer.embed_traces = timed("embed", scorer.embed_traces)  # type: ignore[method-assign]
    corpus_module.leave_one_out_nearest = timed("search", corpus_module.leave_one_out_nearest)
    corpus = score_corpus(scorer, traces)
    mark("breakdowns")
    assert corpus.vectors is not None
    whole = dedupe(corpus.candidates(), corpus.vectors, threshold=0.95)
    mark("group (every trace walked)")
    # As kp dedupe walks: a trace whose nearest other (its novelty's) is under 0.95 is left out.
    groups = dedupe(
        corpus.candidates(), corpus.vectors, threshold=0.95, nearest=corpus.nearest_cosines()
    )
    mark("group")
    nearest = corpus.nearest_cosines() or []
    walked = sum(1 for cosine in nearest if cosine >= 0.95 - 1e-5)
    print(f"group: {walked:,} of {count:,} traces walked; the same groups: {groups == whole}")
    select(corpus.candidates(), corpus.vectors, budget=count // 10, max_similarity=0.95)
    mark("select")
    print(f"\n== stages, {count:,} traces (wall s, CPU s, peak RSS MiB so far)")
    for stage, wall, cpu, peak in figures[1:]:  # "X (before)": from the last mark to X
        print(f"{stage:>15}: {wall:8.1f} s  {cpu:8.1f} s CPU  {peak:8.0f} MiB")
    grouped = sum(len(group.members) for group in groups)
    group_of: dict[str, int] = {}
    for number, group in enumerate(groups):
        for index in (group.representative, *(member for member, _ in group.members)):
            group_of[traces[index].trace.id] = number
    found = sum(1 for a, b in planted if a in group_of and group_of.get(b) == group_of[a])
    print(
        f"{len(groups):,} groups, {grouped:,} near-duplicates marked; "
        f"{found:,} of {len(planted):,} planted pairs in one group",
        flush=True,
    )


def cli(path: Path, count: int, command: list[str]) -> None:
    """Wall, CPU and peak RSS of one kp command on ``path``, output to a file."""
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "out.jsonl"
        timed = ["/usr/bin/time", "-f", "%e %U %S %M", *KP, *command, str(path), "-o", str(output)]
        run = subprocess.run(timed, capture_output=True, text=True, check=False)
        wall, user, system, peak = run.stderr.strip().splitlines()[-1].split()
        lines = sum(1 for _ in output.open()) if output.exists() else 0
    print(
        f"kp {' '.join(command)} on {count:,}: {float(wall):.1f} s wall, "
        f"{float(user) + float(system):.1f} s CPU, {int(peak) / 1024:.0f} MiB peak, "
        f"{lines:,} lines out, exit {run.returncode}",
        flush=True,
    )
    if run.returncode not in (0, 1):
        print(run.stderr[-2000:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("counts", nargs="+", type=int)
    parser.add_argument("--cli-only", action="store_true")
    parser.add_argument("--stages-only", action="store_true")
    parser.add_argument("--keep", type=Path, help="write the traces here (and keep them)")
    args = parser.parse_args()
    for count in args.counts:
        with tempfile.TemporaryDirectory() as scratch:
            path = args.keep or Path(scratch) / "traces.jsonl"
            started = time.perf_counter()
            planted = write_traces(count, path)
            took = time.perf_counter() - started
            print(f"generated {count:,} traces in {took:.0f} s ({path.stat().st_size >> 20} MiB)")
            if not args.cli_only:
                stages(path, count, planted)
            if not args.stages_only:
                cli(path, count, ["dedupe", "--embedder", "static"])
                cli(path, count, ["select", "--embedder", "static", "--budget", str(count // 10)])


if __name__ == "__main__":
    main()
