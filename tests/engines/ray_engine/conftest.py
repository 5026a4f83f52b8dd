"""One local Ray for the whole session, the shared corpora's traces, and ``kp`` in-process."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator
from typing import Any

import pytest
import ray

from tests.cli.conftest import kp  # the same in-process runner as the CLI tests
from tests.paths import CORPORA


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A local Ray of 2 CPUs, started once (about 3 s) and shut down after the last test."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=200 * 1024 * 1024,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def corpus_lines() -> list[str]:
    """A few dozen real traces (both shared corpora, interleaved), one JSON text each."""
    lines: list[str] = []
    for name, count in (("taubench.jsonl", 8), ("reflexion_hotpotqa.jsonl", 8)):
        with (CORPORA / name).open(encoding="utf-8") as file:
            lines.extend(line.strip() for _, line in zip(range(count), file, strict=False))
    # A near-duplicate pair, so some novelty is measured against a close neighbour.
    twin = json.loads(lines[3])
    twin["id"] = twin["id"] + "-twin"
    lines.append(json.dumps(twin))
    random.Random(9).shuffle(lines)
    return lines


def records(text: str) -> list[dict[str, Any]]:
    """The JSON Lines of a report."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


__all__ = ["corpus_lines", "kp", "ray_cluster", "records"]
