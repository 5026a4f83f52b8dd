"""The pure parts of joining Ray: how many actors fit, and one line of Ray's long errors."""

from __future__ import annotations

from knowledgepulse.engines.ray_engine import (
    DeviceFactory,
    MiniLMFactory,
    actors_allowed,
    first_line,
)
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
