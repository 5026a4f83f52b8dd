"""Scoring on a Ray cluster (extra ``ray``: ``pip install "knowledgepulse[ray]"``).

:class:`RayEmbedder` is an embedder whose calls run on a pool of Ray actors, for any scorer
(``kp score --engine ray``); :func:`score_dataset` scores a ``ray.data.Dataset`` of traces.
Ray itself is imported on first use. See ``docs/ray.md``.
"""

from knowledgepulse.engines.ray_engine.dataset import (
    TRACE_COLUMN,
    DatasetScores,
    RowConverter,
    ScoredRow,
    TraceBatchEmbedder,
    iter_dataset_scores,
    score_dataset,
)
from knowledgepulse.engines.ray_engine.embedder import (
    INSTALL_HINT,
    DeviceFactory,
    EmbedderFactory,
    EmbedWorker,
    MiniLMFactory,
    RayClusterError,
    RayEmbedder,
    check_reachable,
    contiguous_shards,
)

__all__ = [
    "INSTALL_HINT",
    "TRACE_COLUMN",
    "DatasetScores",
    "DeviceFactory",
    "EmbedWorker",
    "EmbedderFactory",
    "MiniLMFactory",
    "RayClusterError",
    "RayEmbedder",
    "RowConverter",
    "ScoredRow",
    "TraceBatchEmbedder",
    "check_reachable",
    "contiguous_shards",
    "iter_dataset_scores",
    "score_dataset",
]
