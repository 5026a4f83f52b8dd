"""Deterministic synthetic ReasoningTraces for the streaming and speed benchmarks.

    python bench/generate_traces.py 20000 > /tmp/traces.jsonl

Each trace has 3-14 steps of every type, tools from a small pool, and a few sentences of
content, so its size (about 2 KB) is that of a short real agent trace.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from typing import Any

DOMAINS = ("finance", "code", "medical", "customer_service", "testing", "research")
TOOLS = ("search", "sql", "python", "browser", "calculator", "email", "calendar", "")
WORDS = (
    "revenue",
    "margin",
    "latency",
    "refund",
    "patient",
    "dosage",
    "invoice",
    "cluster",
    "query",
    "index",
    "customer",
    "order",
    "shipment",
    "ticket",
    "deploy",
    "rollback",
    "failover",
    "budget",
    "forecast",
    "schema",
    "migration",
    "test",
    "flaky",
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def trace(number: int, rng: random.Random) -> dict[str, Any]:
    """One valid trace, different for every ``number``."""
    steps: list[dict[str, Any]] = []
    for step_id in range(rng.randint(3, 14)):
        kind = rng.choice(("thought", "tool_call", "observation", "tool_call", "error_recovery"))
        step: dict[str, Any] = {
            "step_id": step_id,
            "type": kind,
            "content": _sentence(rng, rng.randint(6, 30)),
        }
        if kind == "tool_call":
            step["tool"] = {"name": rng.choice(TOOLS)}
            step["input"] = {"query": _sentence(rng, 4)}
            step["latency_ms"] = rng.randint(5, 2000)
        steps.append(step)
    return {
        "@context": "https://openknowledgepulse.org/schema/v1",
        "@type": "ReasoningTrace",
        "id": f"kp:trace:synthetic-{number:07d}",
        "metadata": {
            "created_at": "2026-11-23T08:00:00Z",
            "agent_id": f"agent-{number % 17}",
            "task_domain": rng.choice(DOMAINS),
            "success": rng.random() < 0.8,
            "quality_score": 0,
            "visibility": "network",
            "privacy_level": "aggregated",
        },
        "task": {"objective": _sentence(rng, rng.randint(5, 15))},
        "steps": steps,
        "outcome": {"result_summary": _sentence(rng, 8), "confidence": round(rng.random(), 2)},
    }


def traces(count: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """``count`` traces, the same ones for the same seed."""
    rng = random.Random(seed)
    for number in range(count):
        yield trace(number, rng)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    out = sys.stdout
    for document in traces(count):
        out.write(json.dumps(document, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
