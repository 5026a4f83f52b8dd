"""Fixtures for the whole suite."""

from __future__ import annotations

import asyncio
import signal
import warnings
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

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
