"""Another process saving into a vector cache file, for the tests of sharing one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OTHER_RUN = """
import sys, numpy as np
from knowledgepulse.novelty.cache import VectorCache
model_id, dimensions = (sys.argv[4], int(sys.argv[5])) if len(sys.argv) > 4 else (None, None)
cache = VectorCache.open(sys.argv[1], model_id=model_id, dimensions=dimensions)
rng = np.random.default_rng(int(sys.argv[3]))
count = int(sys.argv[2])
rows = rng.normal(size=(count, cache.dimensions)).astype(np.float32)
cache.nearest_then_add_many(rows, ids=[f"other{sys.argv[3]}-{i}" for i in range(count)])
cache.flush()
"""


def other_run_saves(
    path: Path, count: int, seed: int = 0, *, model_id: str = "", dimensions: int = 0
) -> None:
    """Another process opens the cache file at ``path`` (made for ``model_id`` and
    ``dimensions`` when given), adds ``count`` vectors, saves."""
    made = [model_id, str(dimensions)] if dimensions else []
    command = [sys.executable, "-c", OTHER_RUN, str(path), str(count), str(seed), *made]
    subprocess.run(command, check=True)
