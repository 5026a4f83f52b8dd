"""Another process saving into a vector cache file, for the tests of sharing one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OTHER_RUN = """
import sys, numpy as np
from knowledgepulse.novelty.cache import VectorCache
cache = VectorCache.open(sys.argv[1])
rng = np.random.default_rng(int(sys.argv[3]))
count = int(sys.argv[2])
rows = rng.normal(size=(count, cache.dimensions)).astype(np.float32)
cache.nearest_then_add_many(rows, ids=[f"other{sys.argv[3]}-{i}" for i in range(count)])
cache.flush()
"""


def other_run_saves(path: Path, count: int, seed: int = 0) -> None:
    """Another process opens the cache file at ``path``, adds ``count`` vectors, saves."""
    subprocess.run([sys.executable, "-c", OTHER_RUN, str(path), str(count), str(seed)], check=True)
