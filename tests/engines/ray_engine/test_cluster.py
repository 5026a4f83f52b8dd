"""The pure parts of joining Ray: how many actors fit, and what of Ray's long errors is told."""

from __future__ import annotations

from knowledgepulse.engines.ray_engine import (
    DeviceFactory,
    MiniLMFactory,
    RayClusterError,
    actors_allowed,
    first_line,
    reraised,
)
from knowledgepulse.errors import EmbedderUnavailableError
from knowledgepulse.novelty.embedder import model_id_of
from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID, MiniLMEmbedder


def test_actors_are_counted_by_gpus_when_they_ask_for_any() -> None:
    """Four GPUs hold four 1-GPU actors, eight half-GPU ones; the CPUs do not count then."""
    resources = {"CPU": 64.0, "GPU": 4.0}
    assert actors_allowed(resources, num_cpus=1, num_gpus=1) == 4
    assert actors_allowed(resources, num_cpus=1, num_gpus=0.5) == 8
    assert actors_allowed(resources, num_cpus=1, num_gpus=0) == 64
    assert actors_allowed(resources, num_cpus=4, num_gpus=0) == 16


def test_at_least_one_actor_even_when_nothing_is_free() -> None:
    """A busy cluster still gets one actor (Ray queues it) rather than none."""
    assert actors_allowed({}, num_cpus=1, num_gpus=1) == 1
    assert actors_allowed({"CPU": 0.5}, num_cpus=1, num_gpus=0) == 1


def test_first_line_of_a_many_line_error_and_of_an_empty_one() -> None:
    """Ray's errors run to pages: one line is kept; an empty message falls back to the repr."""
    assert first_line(RuntimeError("\n  head failed\nTraceback ...\n")) == "head failed"
    assert first_line(ConnectionError()) == "ConnectionError()"


def test_a_gpu_factory_names_the_bundled_model_on_any_machine() -> None:
    """DeviceFactory's naming embedder: the bundled model's id, not loaded, no GPU needed."""
    naming = DeviceFactory("cuda:3").naming_embedder()
    assert hasattr(DeviceFactory(), "naming_embedder")
    assert not hasattr(MiniLMFactory(), "naming_embedder")
    assert model_id_of(naming) == BUNDLED_MODEL_ID
    assert isinstance(naming, MiniLMEmbedder)
    assert naming.dimensions == 384


def test_our_error_that_ray_keeps_as_text_only_is_raised_as_ours() -> None:
    """A model that does not load in a Ray Data actor reaches the driver as Ray's text only
    (its last line ours): the caller gets our error, its message; other text: the fallback."""
    died = RuntimeError(
        "The actor died because of an error raised in its creation task, "
        "ray::MapWorker(MapBatches(TraceBatchEmbedder)).__init__() (pid=6041)\n"
        '  File "on_ray.py", line 268, in __init__\n'
        "    self._embedder: Embedder = factory()\n"
        "knowledgepulse.errors.EmbedderUnavailableError: the model at m.onnx cannot be loaded\n"
    )
    fallback = RayClusterError("scoring the dataset failed on the cluster")
    ours = reraised(died, fallback)
    assert isinstance(ours, EmbedderUnavailableError)
    assert str(ours) == "the model at m.onnx cannot be loaded"
    assert reraised(RuntimeError("ray::MapWorker\nValueError: bad block"), fallback) is fallback
