"""Engines: where scoring runs when one process is not enough (``ray_engine``: a Ray cluster)."""
