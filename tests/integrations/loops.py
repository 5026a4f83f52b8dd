"""Running a coroutine in a test without disturbing the thread's default event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_fresh(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a new event loop, then close it, leaving the thread's default loop alone.

    Not asyncio.run nor run_sync: the Agents SDK's Runner.run_sync leaves the thread's default
    loop open on purpose, and replacing or reusing it raises ResourceWarnings here.
    """
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
