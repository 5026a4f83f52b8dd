"""``sigterm_as_ctrl_c``: SIGTERM interrupts as Ctrl-C does, within the block only."""

from __future__ import annotations

import os
import signal

import pytest

from knowledgepulse._util.signals import Terminated, sigterm_as_ctrl_c


def test_sigterm_in_the_block_is_a_keyboard_interrupt_and_the_default_returns_after() -> None:
    """Inside, SIGTERM raises KeyboardInterrupt (cleanup runs); afterwards its handling is back."""
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_ctrl_c():
        assert signal.getsignal(signal.SIGTERM) is not before  # else the kill below ends pytest
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_sigterm_is_noted_as_one_and_a_ctrl_c_is_not() -> None:
    """The interrupt of a SIGTERM is told apart from a Ctrl-C's, for the exit code (143, 130)."""
    terminated, interrupted = Terminated(), Terminated()
    with sigterm_as_ctrl_c(terminated), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
    with sigterm_as_ctrl_c(interrupted), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
    assert (terminated.seen, interrupted.seen) == (True, False)
