"""Fixtures for the whole suite."""

from __future__ import annotations

import asyncio
import signal
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from knowledgepulse.evals import scorer as registry

# CI and developers run on shared 2-core machines: a slow draw or a slow example there is the
# machine's load, not a test's defect (speed is measured by bench/, never by a test's deadline).
settings.register_profile(
    "shared-machine", suppress_health_check=[HealthCheck.too_slow], deadline=None
)
settings.load_profile("shared-machine")

# A suite started in the background (`cmd &`, nohup) inherits an ignored SIGINT, and so would every
# process it starts: the Ctrl-C tests need Python's own handler, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def isolated_registry() -> Iterator[None]:
    """Let a test register scorers and reload entry points; restore the registry afterwards.

    A scorer registered by one test (a plugin file loaded) stays for the rest of the process:
    another test loading the same plugin from another copy of it would be refused.
    """
    registry.get_scorer_class("operation-accuracy")  # the built-ins are in the snapshot
    saved = dict(registry._scorers.classes)
    loaded = registry._scorers.entry_points_loaded
    yield
    registry._scorers.classes.clear()
    registry._scorers.classes.update(saved)
    registry._scorers.entry_points_loaded = loaded


@pytest.fixture(autouse=True)
def _no_leaked_event_loop() -> Iterator[None]:
    """Close an event loop a framework left set on the thread (the Agents SDK's run_sync does).

    Left open, it is collected during some later test as an unclosed-loop ResourceWarning,
    which ``filterwarnings = error`` turns into that unrelated test's failure.
    """
    yield
    policy = asyncio.get_event_loop_policy()
    loop = getattr(getattr(policy, "_local", None), "_loop", None)  # never creates one
    if isinstance(loop, asyncio.AbstractEventLoop) and not loop.is_running():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            if not loop.is_closed():
                loop.close()
        # A fresh default policy forgets the closed loop; set_event_loop(None) would instead make
        # the next asyncio.get_event_loop() raise instead of making a loop.
        asyncio.set_event_loop_policy(None)
