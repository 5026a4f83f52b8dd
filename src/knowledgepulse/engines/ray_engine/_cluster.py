"""Joining or starting Ray: the lazy import, the connection check, and who shuts it down.

Ray is imported only here and only when asked for, so ``import knowledgepulse`` and ``kp --help``
never pay for it, and a missing install is one line naming the extra.
"""

from __future__ import annotations

import logging
import socket
from types import ModuleType
from typing import Any

from knowledgepulse._util.optional import import_optional
from knowledgepulse.errors import KnowledgePulseError, MissingDependencyError

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
