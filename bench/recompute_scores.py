"""Recompute every corpus score by hand from the specification's formulas; asserts agreement.

    python bench/recompute_scores.py                     # both corpora, the static embedder
    python bench/recompute_scores.py --embedder minilm   # the model (a minute or two)
    python bench/recompute_scores.py --no-novelty-check  # the formulas only (seconds)

For each trace of ``corpora/*.jsonl`` this runs ``kp score -f json`` and, apart from kp's code,
counts the trace's steps, step types, error recoveries and distinct tool names from the raw JSON,
takes the weights of its ``metadata.task_domain`` from the specification's table, and computes
C, D, O, the weighted sum with the breakdown's N, the three overrides in order and the clamp.
Every dimension, the weighted sum, each override's before and after, and the score must agree
with kp's row within 1e-9. The novelty check then embeds the traces with kp's embedder and finds
each trace's nearest earlier trace with numpy: the row's cosine must be that maximum (within
1e-6, float32), ``unmapped_novelty`` must be ``1 - cosine`` clamped, and N that through the
embedder's calibration (none for the model). Prints the largest differences; exits 1 on any
disagreement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.value.spec_oracle import DIMENSION_NAMES, by_hand

from knowledgepulse.novelty.embedder import shared_embedder
from knowledgepulse.value.scorer import TraceValueScorer

ROOT = Path(__file__).resolve().parents[1]
CORPORA = sorted((ROOT / "corpora").glob("*.jsonl"))
TOLERANCE = 1e-9


def compare(row: dict[str, Any], trace: dict[str, Any]) -> list[tuple[str, float]]:
    """Each number of ``row`` with its difference from the hand computation."""
    mine = by_hand(trace, row["dimensions"]["novelty"])
    if row["profile"] != mine["profile"] or [o["name"] for o in row["override_effects"]] != [
        name for name, _, _ in mine["overrides"]
    ]:
        return [(f"{row['id']}: profile or overrides differ", float("inf"))]
    pairs = [
        *(
            (f"dimensions.{n}", row["dimensions"][n], v)
            for n, v in zip(DIMENSION_NAMES, mine["dimensions"], strict=True)
        ),
        *(
            (f"weights.{n}", row["weights"][n], v)
            for n, v in zip(DIMENSION_NAMES, mine["weights"], strict=True)
        ),
        ("weighted_sum", row["weighted_sum"], mine["weighted_sum"]),
        ("score", row["score"], mine["score"]),
    ]
    for effect, (name, before, after) in zip(
        row["override_effects"], mine["overrides"], strict=True
    ):
        pairs += [
            (f"{name}.before", effect["before"], before),
            (f"{name}.after", effect["after"], after),
        ]
    return [(f"{row['id']}: {what}", abs(theirs - ours)) for what, theirs, ours in pairs]


def novelty_differences(
    embedder: str, traces: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> list[tuple[str, float]]:
    """The row's cosine against numpy's maximum over the earlier traces, and N from it."""
    scorer = TraceValueScorer(embedder=shared_embedder(kind=embedder))
    vectors = np.asarray(scorer.embed_traces(traces), dtype=np.float64)
    found: list[tuple[str, float]] = []
    for position, row in enumerate(rows):
        inputs = row["inputs"]["novelty"]
        if position == 0:
            found.append(
                (f"{row['id']}: empty cache gives 0.5", abs(row["dimensions"]["novelty"] - 0.5))
            )
            continue
        earlier = [j for j in range(position) if traces[j]["id"] != row["id"]]
        cosines = vectors[earlier] @ vectors[position]
        best = float(cosines.max())
        # float32 vectors: numpy's sum in another order may differ in the 7th decimal.
        found.append((f"{row['id']}: max cosine (/1000)", abs(inputs["similarity"] - best) / 1e3))
        unmapped = min(1.0, max(0.0, 1.0 - inputs["similarity"]))
        found.append((f"{row['id']}: unmapped novelty", abs(inputs["unmapped_novelty"] - unmapped)))
        mapped = scorer.novelty_of(inputs["similarity"])
        found.append(
            (f"{row['id']}: N from the cosine", abs(row["dimensions"]["novelty"] - mapped))
        )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="static", choices=("static", "minilm"))
    parser.add_argument("--no-novelty-check", action="store_true")
    args = parser.parse_args()
    failed = False
    for corpus in CORPORA:
        command = [sys.executable, "-m", "knowledgepulse.cli.main", "score"]
        command += ["--embedder", args.embedder, "-f", "json", str(corpus.relative_to(ROOT))]
        report = json.loads(
            subprocess.run(
                command, cwd=ROOT, capture_output=True, check=True, env=os.environ
            ).stdout
        )
        traces = [
            json.loads(line)
            for line in corpus.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        rows = report["traces"]
        assert len(rows) == len(traces), (corpus, len(rows), len(traces))
        differences = [
            d for row, trace in zip(rows, traces, strict=True) for d in compare(row, trace)
        ]
        worst = max(differences, key=lambda pair: pair[1])
        line = f"formulas: largest difference {worst[1]:.3g} ({worst[0]})"
        if not args.no_novelty_check:
            found = novelty_differences(args.embedder, traces, rows)
            worst = max(found, key=lambda pair: pair[1])
            line += f"; novelty: largest {worst[1]:.3g} ({worst[0]})"
            differences += found
        bad = [d for d in differences if d[1] > TOLERANCE]
        print(
            f"{corpus.name} ({args.embedder}): {len(rows)} traces, {len(differences)} numbers; "
            f"{line}; {len(bad)} over {TOLERANCE}"
        )
        for what, difference in bad[:10]:
            print(f"  {what}: {difference:.3g}")
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
