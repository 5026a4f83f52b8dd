"""What an embedding actor builds its embedder from: a picklable callable, sent to each actor.

An actor cannot receive a loaded model (an onnxruntime session does not pickle, and each actor
wants its own), so it receives a recipe and builds the embedder itself, once, when it starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from knowledgepulse.novelty.backends.devices import resolve_device
from knowledgepulse.novelty.embedder import Embedder, embedder_for
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS


@runtime_checkable
class EmbedderFactory(Protocol):
    """A picklable callable that makes an :class:`~knowledgepulse.novelty.Embedder`.

    Each actor calls it once. Any module-level function or a dataclass such as
    :class:`MiniLMFactory` will do; a lambda will not (it does not pickle by reference).
    """

    def __call__(self) -> Embedder:
        """A new embedder (it may load its model lazily, on first use)."""
        ...


@runtime_checkable
class NamesItsModel(Protocol):
    """A factory that can name its model on a machine that cannot run it (the driver).

    The driver's scorer needs an embedder only for its model id and dimensions (the cache
    records them); when the factory's own embedder needs what only the actors have (a GPU),
    this gives one of the same model that any machine can make. It is never run.
    """

    def naming_embedder(self) -> Embedder:
        """An embedder of the same model id and dimensions, not loaded."""
        ...


@dataclass(frozen=True, slots=True)
class MiniLMFactory:
    """Makes the bundled all-MiniLM-L6-v2 embedder (or another ONNX model) in each actor.

    Attributes:
        model_path: an ONNX model to use instead of the bundled one; it must exist at this path
            on every node of the cluster.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
        threads: onnxruntime threads per actor. One: N actors x 1 thread beat one process x N
            threads on CPU (measured for issue 9), and Ray gives each actor one CPU.
    """

    model_path: str | None = None
    max_windows: int | None = DEFAULT_MAX_WINDOWS
    threads: int = 1

    def __call__(self) -> Embedder:
        """A new, not yet loaded :class:`~knowledgepulse.novelty.MiniLMEmbedder`."""
        from knowledgepulse.novelty.minilm import MiniLMEmbedder  # noqa: PLC0415

        return MiniLMEmbedder(self.model_path, threads=self.threads, max_windows=self.max_windows)


@dataclass(frozen=True, slots=True)
class DeviceFactory:
    """Makes the embedder for a device in each actor (``kp score --engine ray --device``).

    ``cuda`` gives the fp16 PyTorch model (the ``gpu`` extra must be installed on the nodes):
    give the actors ``num_gpus`` so that Ray gives each its own GPU, which it then sees as
    ``cuda``. ``cpu`` (and ``auto`` on an actor without a GPU) is :class:`MiniLMFactory`'s.

    Attributes:
        device: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``, resolved on the actor's node.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
    """

    device: str = "cuda"
    max_windows: int | None = DEFAULT_MAX_WINDOWS

    def __call__(self) -> Embedder:
        """A new embedder for the device (its model loads on first use).

        Ray hides the GPUs from an actor that reserved none, so ``auto`` there is the CPU:
        the bundled model on one thread, as :class:`MiniLMFactory` makes it.
        """
        device = resolve_device(self.device)
        if device == "cpu":
            return MiniLMFactory(max_windows=self.max_windows)()
        return embedder_for(device, max_windows=self.max_windows)

    def naming_embedder(self) -> Embedder:
        """The bundled CPU model, not loaded: the GPU model's id and dimensions, on any machine.

        The fp16 PyTorch model shares the bundled model's id (the same weights), so a cache
        made with either is the other's.
        """
        return MiniLMFactory(max_windows=self.max_windows)()
