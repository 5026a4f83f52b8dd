"""HashingEmbedder, the fake shipped for users' tests: deterministic, fast, meaningful enough."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from knowledgepulse.novelty import Embedder
from knowledgepulse.testing import HashingEmbedder


def test_it_is_an_embedder_of_unit_vectors() -> None:
    """It satisfies the Embedder protocol and returns one unit vector per text."""
    embedder = HashingEmbedder()
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed_batch(["one text", "another text"])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_shared_words_mean_similar_vectors() -> None:
    """Texts sharing most words are closer than texts sharing none."""
    a, b, c = HashingEmbedder().embed_batch(
        ["book a flight to seattle", "book a flight to oslo", "diagnose the memory leak"]
    )
    assert a @ b > a @ c


def test_vectors_are_the_same_in_every_process() -> None:
    """The hash is BLAKE2b, not Python's salted hash(): another interpreter agrees."""
    code = (
        "from knowledgepulse.testing import HashingEmbedder;"
        "print(HashingEmbedder(16).embed_batch(['same words here'])[0].tolist())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert other.strip() == str(HashingEmbedder(16).embed_batch(["same words here"])[0].tolist())


def test_text_without_words_is_the_zero_vector() -> None:
    """Nothing to hash gives a zero vector (similar to nothing)."""
    assert not HashingEmbedder(8).embed_batch(["  ...  "]).any()
