"""The least a CPython program can do for the reference's job, validation included.

What ``evaluate_value.mjs`` does (the seed's formula, novelty 0.5, ``{id, score}`` a line),
with each line parsed and validated in one pass by msgspec against knowledgepulse's compiled
check (``TraceView``), and nothing else: no repeated-key check, no breakdown, no summary, no
start-up beyond msgspec's. ``bench_stream.py`` runs it beside ``kp score`` and node to show
how far from node CPython's floor is:  python bench/reference/python_floor.py TRACES.jsonl
"""

from __future__ import annotations

import sys

import msgspec

from knowledgepulse.trace.views import TraceView
from knowledgepulse.value.profiles import BUILTIN_PROFILES


def evaluate_value(trace: TraceView) -> float:
    """The seed's evaluateValue, without an embedder."""
    steps = trace.steps
    types = {step.type for step in steps}
    recoveries = sum(1 for step in steps if step.type == "error_recovery")
    tools = {step.tool.name for step in steps if step.tool is not None}
    length = len(steps) / 20 * 0.2
    complexity = min(1.0, len(types) / 4 * 0.5 + (0.3 if recoveries else 0.0) + length)
    diversity = min(1.0, len(tools) / max(1, len(steps)) * 3)
    outcome = trace.outcome.confidence * (1.0 if trace.metadata.success else 0.3)
    w = BUILTIN_PROFILES.get(trace.metadata.task_domain, BUILTIN_PROFILES["default"])
    score = (
        complexity * w.complexity
        + 0.5 * w.novelty
        + diversity * w.tool_diversity
        + outcome * w.outcome_confidence
    )
    if len(steps) == 1 and steps[0].type == "thought":
        score = 0.1
    if recoveries > 2 and trace.metadata.success:
        score = min(1.0, score + 0.1)
    if len(tools) <= 1 and any(step.tool is not None for step in steps):
        score = max(0.0, score - 0.1)
    return max(0.0, min(1.0, score))


def main() -> None:
    decode = msgspec.json.Decoder(TraceView).decode
    encode = msgspec.json.Encoder().encode
    out = []
    with open(sys.argv[1], "rb") as lines:
        for line in lines:
            if line.strip():
                trace = decode(line)
                out.append(encode({"id": trace.id, "score": evaluate_value(trace)}))
    sys.stdout.buffer.write(b"\n".join(out) + b"\n")


if __name__ == "__main__":
    main()
