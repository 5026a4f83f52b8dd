"""Embedding backends: where the model runs (one process, worker processes, PyTorch on a device).

The texts' word pieces are planned into batches once, in :class:`~knowledgepulse.novelty.
MiniLMEmbedder`; a backend only runs them. So every backend sees the same batches and gives the
same window embeddings, whichever runs them. :func:`knowledgepulse.novelty.embedder_for` picks
the embedder for a device. The modules are imported one by one: numpy, onnxruntime and torch
load only for a run that embeds.
"""
