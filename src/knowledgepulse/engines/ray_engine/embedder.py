"""Joining Ray, and ``RayEmbedder``: an :class:`~knowledgepulse.novelty.Embedder` run on Ray actors.

Ray is imported only when asked for, so ``import knowledgepulse`` and ``kp --help`` never pay
for it, and a missing install is one line naming the extra.

Each call's texts are cut into contiguous shards of about equal length, one per actor, embedded
in parallel and put back together in order. Embedding a text does not depend on the other
texts of its batch (the bundled model gives the same bits for a text alone or in any batch), so
the vectors are those of the embedder the actors hold, run in one process.
"""

from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse._util.settings import optional_positive_int
from knowledgepulse.engines.ray_engine.actor import EmbedderFactory, EmbedWorker, MiniLMFactory
from knowledgepulse.errors import (
    KnowledgePulseError,
    MissingDependencyError,
    ScorerParameterError,
    import_optional,
)
from knowledgepulse.novelty.windows import WindowedEmbeddings

INSTALL_HINT = 'pip install "knowledgepulse[ray]"'
CONNECT_TIMEOUT_S = 5.0
"""How long the reachability check of ``address`` waits; Ray itself retries for minutes."""


class RayClusterError(KnowledgePulseError):
    """Raised when the Ray cluster cannot be reached or cannot start the embedding actors.

    The message names the address or the resources that were missing and how to fix it.
    """


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        MissingDependencyError: Ray is not installed; the message gives the install command.
    """
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


def own_error(error: BaseException | None) -> KnowledgePulseError | None:
    """Our own error that a Ray error wraps (a model that does not load), found by its causes."""
    cause = error
    while cause is not None:
        if isinstance(cause, KnowledgePulseError):
            return cause
        cause = getattr(cause, "cause", None) or cause.__cause__
    return None


def actors_allowed(resources: dict[str, float], num_cpus: float, num_gpus: float) -> int:
    """How many actors of ``num_cpus`` CPUs and ``num_gpus`` GPUs ``resources`` hold (at least 1).

    Counted by GPUs when the actors ask for any, else by CPUs; an actor asking for no CPU
    counts as needing a sliver of one (no division by zero).
    """
    if num_gpus > 0:
        return max(1, int(resources.get("GPU", 0) // num_gpus))
    return max(1, int(resources.get("CPU", 1) // max(num_cpus, 1e-9)))


def check_reachable(address: str, *, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast when nothing listens at a ``host:port`` (or ``ray://host:port``) address.

    ``auto`` and ``local`` are Ray's own words and are left to it. Ray retries an unreachable
    address for minutes, printing a warning every few seconds; a user who mistyped a port
    deserves a one-line answer instead.

    Raises:
        RayClusterError: the address is malformed or nothing accepts connections there.
    """
    if address in ("auto", "local"):
        return
    bare = address.split("://", 1)[1] if "://" in address else address
    host, _, port_text = bare.rpartition(":")
    if not host or not port_text.isdigit():
        raise RayClusterError(
            f"--address {address!r} is not HOST:PORT (say 10.0.0.5:6379, or ray://10.0.0.5:10001 "
            "for Ray Client)"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port_text)), timeout=timeout):
            pass
    except OSError as error:
        raise RayClusterError(
            f"cannot connect to the Ray cluster at {address}: {error.strerror or error}; check "
            "the address (`ray status` on the head node prints it) or drop --address to start "
            "a local Ray"
        ) from None


class RayConnection:
    """A connection to Ray that shuts down only what it started.

    When Ray is already initialised in this process (a notebook, a test fixture) it is used as
    it is (``address`` is then only checked to be reachable) and left running; otherwise
    ``ray.init`` is called (joining ``address``, or starting a local Ray) and :meth:`close`
    shuts it down, so no local Ray outlives the caller.

    Args:
        address: a running cluster's address (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            ``None`` starts a local Ray unless one is already initialised.
        init_options: more keyword arguments for ``ray.init`` (``num_cpus``, ``runtime_env``...).
    """

    def __init__(self, address: str | None = None, **init_options: Any) -> None:
        self._address = address
        self._init_options = init_options
        self._owned = False
        self.ray = import_ray()

    def open(self) -> ModuleType:
        """Initialise Ray if this process has not; returns the ``ray`` module.

        Raises:
            RayClusterError: ``address`` cannot be reached.
        """
        ray = self.ray
        # Checked even when Ray is initialised: a mistyped address must not silently run on
        # whatever this process is connected to.
        if self._address is not None:
            check_reachable(self._address)
        if ray.is_initialized():
            return ray
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            **self._init_options,
        }
        try:
            ray.init(address=self._address, **options)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise RayClusterError(
                f"cannot start or join Ray{f' at {self._address}' if self._address else ''}: "
                f"{first_line(error)}"
            ) from None
        self._owned = True
        return ray

    def close(self) -> None:
        """Shut Ray down if :meth:`open` started it (a cluster is left running; only we leave)."""
        if self._owned:
            self._owned = False
            self.ray.shutdown()


DEFAULT_START_TIMEOUT_S = 120.0


def contiguous_shards(weights: Sequence[int], parts: int) -> list[range]:
    """Cut ``len(weights)`` items into at most ``parts`` non-empty runs of about equal weight.

    The runs are in order and cover every item once, so results put back run after run are in
    the items' order. A weight below 1 counts as 1 (an empty text still costs a call).
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

    It offers what :class:`~knowledgepulse.novelty.MiniLMEmbedder` offers (``embed_batch``,
    ``embed_windowed``, ``embed_leading``, ``dimensions``, ``model_id``, ``max_windows``) with the
    same results, so a :class:`~knowledgepulse.value.TraceValueScorer` given one scores exactly
    as with the local embedder. The actors start on first use (or :meth:`start`) and live until
    :meth:`close`; use it as a context manager.

    Args:
        factory: makes each actor's embedder (default: the bundled MiniLM, one thread per actor).
        concurrency: how many actors (default: as many as the cluster's free CPUs, or GPUs with
            ``num_gpus``, allow).
        num_cpus: CPUs Ray reserves for each actor.
        num_gpus: GPUs Ray reserves for each actor (a fraction shares one); give a factory of a
            GPU embedder with it.
        address: a running cluster to join (``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``);
            default: the Ray this process already initialised, else a new local one, shut down
            by :meth:`close`.
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
        self._connection = RayConnection(address, **(init_options or {}))
        self._actors: list[Any] = []
        self._description: tuple[int | None, str, int | None] | None = None

    @property
    def concurrency(self) -> int:
        """How many actors embed (starts them)."""
        return len(self._started())

    @property
    def dimensions(self) -> int | None:
        """The length of every embedding, as the actors' embedder declares it (starts them)."""
        return self._describe()[0]

    @property
    def model_id(self) -> str:
        """The actors' embedder's ``model_id`` (starts them)."""
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
        parts = self._spread("embed_batch", texts)
        return self._stack(parts)

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
        """Each text's first ``max_pieces`` word pieces as one window, (len(texts), dimensions)."""
        weights = [min(len(text), 16 * max_pieces) for text in texts]
        return self._stack(self._spread("embed_leading", texts, max_pieces, weights=weights))

    def close(self) -> None:
        """Stop the actors, and the local Ray if this embedder started it. Safe to call twice."""
        actors, self._actors = self._actors, []
        ray = self._connection.ray
        if actors and ray.is_initialized():
            for actor in actors:
                ray.kill(actor)
        self._connection.close()

    def __enter__(self) -> RayEmbedder:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _started(self) -> list[Any]:
        if self._actors:
            return self._actors
        ray = self._connection.open()
        count = self._concurrency or actors_allowed(
            ray.available_resources(), self._num_cpus, self._num_gpus
        )
        worker = ray.remote(num_cpus=self._num_cpus, num_gpus=self._num_gpus)(EmbedWorker)
        self._actors = [worker.remote(self._factory) for _ in range(count)]
        return self._actors

    def _describe(self) -> tuple[int | None, str, int | None]:
        if self._description is not None:
            return self._description
        actors = self._started()
        ray = self._connection.ray
        refs = [actor.describe.remote() for actor in actors]
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
        descriptions = self._gather(refs)
        self._description = descriptions[0]
        return self._description

    def _spread(
        self, method: str, texts: Sequence[str], *args: Any, weights: Sequence[int] | None = None
    ) -> list[Any]:
        """Each shard's result of ``method``, in the texts' order."""
        actors = self._started()
        self._describe()
        shards = contiguous_shards(weights or [len(text) for text in texts], len(actors))
        refs = [
            getattr(actor, method).remote([texts[i] for i in shard], *args)
            for actor, shard in zip(actors, shards, strict=False)
        ]
        return self._gather(refs)

    def _gather(self, refs: list[Any]) -> list[Any]:
        ray = self._connection.ray
        try:
            return list(ray.get(refs))
        except ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            ours = own_error(cause)
            if ours is not None:
                raise ours from None
            raise RayClusterError(
                f"an embedding actor failed: {type(cause).__name__}: {cause}"
            ) from None
        except ray.exceptions.RayActorError as error:
            raise RayClusterError(
                f"an embedding actor died ({first_line(error)}); a node may "
                "have run out of memory: ask for fewer workers or a smaller --batch-size"
            ) from None

    def _stack(self, parts: Sequence[NDArray[np.float32]]) -> NDArray[np.float32]:
        if not parts:
            return np.zeros((0, self._describe()[0] or 0), dtype=np.float32)
        return np.concatenate([np.asarray(part, dtype=np.float32) for part in parts])
