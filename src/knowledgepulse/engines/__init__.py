"""Engines: where scoring runs when one process is not enough.

:mod:`knowledgepulse.engines.ray_engine` embeds on a Ray cluster's actors and scores
``ray.data.Dataset`` objects. An engine's heavy library is imported on first use, so importing
its package never needs it.
"""
