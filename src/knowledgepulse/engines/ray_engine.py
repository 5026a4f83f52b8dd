"""Embedding on a Ray cluster (the ``ray`` extra; ``docs/ray.md``).

:class:`RayEmbedder` spreads each embedding call over a pool of Ray actors, for any scorer
(``kp score --engine ray``); a ``ray.data.Dataset`` is scored by the run layer
(:mod:`knowledgepulse.runs.on_ray`) on the same actors' embedders. An actor cannot receive a
loaded model (an onnxruntime session does not pickle): it gets a picklable
:class:`EmbedderFactory`. Ray itself is imported on first use, so importing this module never
needs it.
"""

from __future__ import annotations

import itertools
import logging
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from knowledgepulse import errors
from knowledgepulse._util.settings import optional_positive_int
from knowledgepulse.errors import (
    KnowledgePulseError,
    MissingDependencyError,
    ScorerParameterError,
    Setting,
    import_optional,
    install_hint,
)
from knowledgepulse.novelty.devices import resolve_device
from knowledgepulse.novelty.embedder import (
    Embedder,
    WindowedEmbedder,
    dimensions_of,
    embedder_for,
    model_id_of,
)
from knowledgepulse.novelty.representation import LeadingEmbedder
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS
from knowledgepulse.novelty.windows import WindowedEmbeddings

INSTALL_HINT = install_hint("ray")
CONNECT_TIMEOUT_S = 5.0
"""How long the reachability check of ``address`` waits; Ray itself retries for minutes."""
DEFAULT_START_TIMEOUT_S = 120.0


class RayClusterError(KnowledgePulseError):
    """Raised when the Ray cluster cannot be reached or cannot start the embedding actors."""


def import_ray() -> ModuleType:
    """The ``ray`` module; a :class:`MissingDependencyError` with the install line without it."""
    return import_optional(
        "ray",
        lambda error: MissingDependencyError(
            f"Ray is not installed ({error}); install it with: {INSTALL_HINT}"
        ),
    )


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message (Ray's run to pages), or its repr when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else repr(error)


def reraised(error: BaseException | None, fallback: RayClusterError) -> KnowledgePulseError:
    """Our own error that a Ray error wraps (a model that does not load), else ``fallback``.

    Ray Data's actors (``map_batches``) give the driver only the text of an error raised in
    them (a ``UserCodeException``, an ``ActorDiedError`` of the constructor), which names ours
    on its own line (``knowledgepulse.errors.EmbedderUnavailableError: ...``): it is made again.
    """
    cause = error
    while cause is not None:
        if isinstance(cause, KnowledgePulseError):
            return cause
        cause = getattr(cause, "cause", None) or cause.__cause__
    return _named_in(error) or fallback


_OURS = re.compile(r"^knowledgepulse\.errors\.(\w+): (.+)$", re.MULTILINE)


def _named_in(error: BaseException | None) -> KnowledgePulseError | None:
    """Our error named in ``error``'s text (:func:`reraised`), when its message alone makes it."""
    found = None if error is None else _OURS.search(str(error))
    kind = None if found is None else getattr(errors, found[1], None)
    if found is None or not (isinstance(kind, type) and issubclass(kind, KnowledgePulseError)):
        return None
    try:
        return kind(found[2])
    except TypeError:  # one that takes more than a message (a SettingTypeError's Setting)
        return None


def actors_allowed(resources: dict[str, float], num_cpus: float, num_gpus: float) -> int:
    """How many actors ``resources`` hold (at least 1): by GPUs when the actors ask for any."""
    if num_gpus > 0:
        return max(1, int(resources.get("GPU", 0) // num_gpus))
    return max(1, int(resources.get("CPU", 1) // max(num_cpus, 1e-9)))


def check_reachable(address: str) -> None:
    """Fail fast when nothing listens at a ``host:port`` (or ``ray://host:port``) address.

    ``auto`` and ``local`` are left to Ray, which retries an unreachable address for minutes.

    Raises:
        RayClusterError: the address is malformed or nothing accepts connections there.
    """
    if address in ("auto", "local"):
        return
    bare = address.split("://", 1)[1] if "://" in address else address
    host, _, port_text = bare.rpartition(":")
    if not host or not port_text.isdigit():
        raise RayClusterError(
            Setting("address", address),
            " is not HOST:PORT (say 10.0.0.5:6379, or ray://10.0.0.5:10001 for Ray Client)",
        )
    try:
        connection = (host.strip("[]"), int(port_text))
        socket.create_connection(connection, timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise RayClusterError(
            f"cannot connect to the Ray cluster at {address}: {error.strerror or error}; check "
            "the address (`ray status` on the head node prints it) or drop ",
            Setting("address"),
            " to start a local Ray",
        ) from None


EmbedderFactory: TypeAlias = Callable[[], Embedder]
"""A picklable callable that makes an :class:`~knowledgepulse.novelty.Embedder`, once per actor
(its model may load on first use): a module-level function or a dataclass such as
:class:`MiniLMFactory` will do; a lambda will not (it does not pickle by reference)."""


@dataclass(frozen=True, slots=True)
class MiniLMFactory:
    """Makes the bundled all-MiniLM-L6-v2 embedder (or another ONNX model) in each actor.

    Attributes:
        model_path: an ONNX model instead of the bundled one, at this path on every node.
        max_windows: embed at most this many 254-piece windows of a text (``None``: all).
        threads: onnxruntime threads per actor (N actors x 1 thread beat one x N on CPU).
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

    ``device`` (``cpu``, ``cuda``, ``cuda:N`` or ``auto``) is resolved on the actor's node.
    ``cuda`` gives the fp16 PyTorch model (the ``gpu`` extra on the nodes; give the actors
    ``num_gpus``); ``cpu``, and ``auto`` on an actor that reserved no GPU, is
    :class:`MiniLMFactory`'s.
    """

    device: str = "cuda"
    max_windows: int | None = DEFAULT_MAX_WINDOWS

    def __call__(self) -> Embedder:
        """A new embedder for the device (its model loads on first use)."""
        device = resolve_device(self.device)
        if device == "cpu":
            return self.naming_embedder()
        return embedder_for(device, max_windows=self.max_windows)

    def naming_embedder(self) -> Embedder:
        """The bundled CPU model, not loaded: it shares the fp16 model's id (the same weights)."""
        return MiniLMFactory(max_windows=self.max_windows)()


class EmbedWorker:
    """The actor serving one embedder's calls for a :class:`RayEmbedder`."""

    def __init__(self, factory: EmbedderFactory) -> None:
        self._embedder: Embedder = factory()

    def describe(self) -> tuple[int | None, str, int | None]:
        """Load the model now, and say its ``dimensions``, ``model_id`` and ``max_windows``."""
        load = getattr(self._embedder, "load", None)
        if callable(load):
            load()
        max_windows = getattr(self._embedder, "max_windows", None)
        return (
            dimensions_of(self._embedder),
            model_id_of(self._embedder),
            max_windows if isinstance(max_windows, int) else None,
        )

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The embedder's ``embed_batch``."""
        return np.asarray(self._embedder.embed_batch(texts), dtype=np.float32)

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """The embedder's ``embed_windowed``; without one, its vectors and no window counts."""
        if isinstance(self._embedder, WindowedEmbedder):
            return self._embedder.embed_windowed(texts)
        return WindowedEmbeddings(self.embed_batch(texts), (), ())

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """The embedder's ``embed_leading``; without one, ``embed_batch`` (as the scorer does)."""
        if isinstance(self._embedder, LeadingEmbedder):
            return np.asarray(self._embedder.embed_leading(texts, max_pieces), dtype=np.float32)
        return self.embed_batch(texts)


def contiguous_shards(weights: Sequence[int], parts: int) -> list[range]:
    """Cut ``len(weights)`` items into at most ``parts`` non-empty runs of about equal weight.

    The runs are in order and cover every item once. A weight below 1 counts as 1 (an empty
    text still costs a call).
    """
    count = len(weights)
    parts = min(parts, count)
    if parts <= 0:
        return []
    cumulative = np.cumsum(np.maximum(np.asarray(weights, dtype=np.int64), 1))
    total = int(cumulative[-1])
    cuts = [0]
    for part in range(1, parts):
        cut = int(np.searchsorted(cumulative, part * total / parts, side="left")) + 1
        # Clamped so that this run and each run after it keep at least one item.
        cuts.append(min(max(cut, cuts[-1] + 1), count - (parts - part)))
    cuts.append(count)
    return [range(start, end) for start, end in itertools.pairwise(cuts)]


class RayEmbedder:
    """An embedder that spreads each call over a pool of Ray actors, one embedder in each.

    It offers what :class:`~knowledgepulse.novelty.MiniLMEmbedder` offers with the same results,
    so a :class:`~knowledgepulse.value.TraceValueScorer` given one scores as with the local
    embedder. The actors start on first use (or :meth:`start`) and live until :meth:`close`;
    use it as a context manager.

    Args:
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread per actor).
        concurrency: how many actors (default: as many as the cluster's free CPUs, or GPUs with
            ``num_gpus``, allow).
        num_cpus: CPUs Ray reserves for each actor.
        num_gpus: GPUs Ray reserves for each actor (a fraction shares one).
        address: a running cluster to join (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            default: the Ray this process already initialised, else a new local one.
        start_timeout_s: how long to wait for the actors to start before giving up.
        init_options: more keyword arguments for ``ray.init``.

    Raises:
        MissingDependencyError: Ray is not installed.
        ScorerParameterError: a count or resource out of range.
    """

    def __init__(
        self,
        factory: EmbedderFactory | None = None,
        *,
        concurrency: int | None = None,
        num_cpus: float = 1.0,
        num_gpus: float = 0.0,
        address: str | None = None,
        start_timeout_s: float = DEFAULT_START_TIMEOUT_S,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        optional_positive_int(concurrency, "concurrency", none_means="what the cluster allows")
        for name, value in (("num_cpus", num_cpus), ("num_gpus", num_gpus)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ScorerParameterError(f"{name} must be a number >= 0, got {value!r}")
        self._factory: EmbedderFactory = factory or MiniLMFactory()
        self._concurrency = concurrency
        self._num_cpus = float(num_cpus)
        self._num_gpus = float(num_gpus)
        self._start_timeout_s = start_timeout_s
        self._address = address
        self._init_options = init_options or {}
        self._owned = False  # whether this embedder started Ray (and so shuts it down)
        self._ray = import_ray()
        self._actors: list[Any] = []
        self._description: tuple[int | None, str, int | None] | None = None

    @property
    def concurrency(self) -> int:
        """How many actors embed (starts them, as the three properties below do)."""
        return len(self._started())

    @property
    def dimensions(self) -> int | None:
        """The length of every embedding, as the actors' embedder declares it."""
        return self._describe()[0]

    @property
    def model_id(self) -> str:
        """The actors' embedder's ``model_id``."""
        return self._describe()[1]

    @property
    def max_windows(self) -> int | None:
        """The actors' embedder's ``max_windows`` (``None``: every window, or not said)."""
        return self._describe()[2]

    def start(self) -> None:
        """Connect to Ray and start the actors now, loading each one's model.

        Raises:
            RayClusterError: the cluster cannot be reached, or the actors did not start in
                time (too few free CPUs or GPUs); the message says which.
            EmbedderUnavailableError: the model cannot be loaded on the cluster.
        """
        self._describe()

    def embed_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One unit vector per text, (len(texts), dimensions), in the texts' order."""
        return self._stack(self._spread("embed_batch", texts))

    def embed_windowed(self, texts: Sequence[str]) -> WindowedEmbeddings:
        """The vectors, with how many windows of each text were read and whether it was capped."""
        parts: list[WindowedEmbeddings] = self._spread("embed_windowed", texts)
        vectors = self._stack([part.vectors for part in parts])
        windows = tuple(count for part in parts for count in part.windows)
        capped = tuple(flag for part in parts for flag in part.capped)
        if len(windows) != len(texts) or len(capped) != len(texts):
            windows, capped = (), ()  # the actors' embedder does not count windows
        return WindowedEmbeddings(vectors, windows, capped)

    def embed_leading(self, texts: Sequence[str], max_pieces: int) -> NDArray[np.float32]:
        """Each text's first ``max_pieces`` word pieces as one window."""
        weights = [min(len(text), 16 * max_pieces) for text in texts]
        return self._stack(self._spread("embed_leading", texts, max_pieces, weights=weights))

    def close(self) -> None:
        """Stop the actors, and the local Ray if this embedder started it. Safe to call twice."""
        actors, self._actors = self._actors, []
        if actors and self._ray.is_initialized():
            for actor in actors:
                self._ray.kill(actor)
        if self._owned:
            self._owned = False
            self._ray.shutdown()

    def __enter__(self) -> RayEmbedder:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _started(self) -> list[Any]:
        if self._actors:
            return self._actors
        ray = self._open()
        count = self._concurrency or actors_allowed(
            ray.available_resources(), self._num_cpus, self._num_gpus
        )
        worker = ray.remote(num_cpus=self._num_cpus, num_gpus=self._num_gpus)(EmbedWorker)
        self._actors = [worker.remote(self._factory) for _ in range(count)]
        return self._actors

    def _describe(self) -> tuple[int | None, str, int | None]:
        if self._description is not None:
            return self._description
        refs = [actor.describe.remote() for actor in self._started()]
        ray = self._ray
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=self._start_timeout_s)
        if pending:
            resources = ray.cluster_resources()
            self.close()
            raise RayClusterError(
                f"{len(pending)} of {len(refs)} embedding actors did not start within "
                f"{self._start_timeout_s:g} s; each needs {self._num_cpus:g} CPU and "
                f"{self._num_gpus:g} GPU, the cluster has {resources.get('CPU', 0):g} CPUs and "
                f"{resources.get('GPU', 0):g} GPUs in all: ask for fewer workers or add nodes"
            )
        self._description = self._gather(refs)[0]
        return self._description

    def _spread(
        self, method: str, texts: Sequence[str], *args: Any, weights: Sequence[int] | None = None
    ) -> list[Any]:
        actors = self._started()
        self._describe()
        shards = contiguous_shards(weights or [len(text) for text in texts], len(actors))
        refs = [
            getattr(actor, method).remote([texts[i] for i in shard], *args)
            for actor, shard in zip(actors, shards, strict=False)
        ]
        return self._gather(refs)

    def _open(self) -> ModuleType:
        """Ray, initialised: the one this process has (a notebook's), else joined or started."""
        ray = self._ray
        # Checked even when Ray is initialised: a mistyped address must not silently run on
        # whatever this process is connected to.
        if self._address is not None:
            check_reachable(self._address)
        if ray.is_initialized():
            return ray
        quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        try:
            ray.init(address=self._address, **{**quiet, **self._init_options})
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise RayClusterError(
                f"cannot start or join Ray{f' at {self._address}' if self._address else ''}: "
                f"{first_line(error)}"
            ) from None
        self._owned = True
        return ray

    def _gather(self, refs: list[Any]) -> list[Any]:
        ray = self._ray
        try:
            return list(ray.get(refs))
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            failed = RayClusterError(f"an embedding actor failed: {type(cause).__name__}: {cause}")
            raise reraised(cause, failed) from None
        except ray.exceptions.RayActorError as error:
            raise RayClusterError(
                f"an embedding actor died ({first_line(error)}); a node may have run out of "
                "memory: ask for fewer workers or a smaller ",
                Setting("batch_size"),
            ) from None

    def _stack(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
        if not parts:
            return np.zeros((0, self._describe()[0] or 0), dtype=np.float32)
        return np.concatenate([np.asarray(part, dtype=np.float32) for part in parts])


__all__ = [
    "EmbedderFactory",
    "MiniLMFactory",
    "RayClusterError",
    "RayEmbedder",
]
