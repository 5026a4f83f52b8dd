"""``sigterm_as_ctrl_c``: SIGTERM interrupts as Ctrl-C does, within the block only."""

from __future__ import annotations

import os
import signal

import pytest

from knowledgepulse._util.signals import sigterm_as_ctrl_c


def test_sigterm_in_the_block_is_a_keyboard_interrupt_and_the_default_returns_after() -> None:
    """Inside, SIGTERM raises KeyboardInterrupt (cleanup runs); afterwards its handling is back."""
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_ctrl_c():
        assert signal.getsignal(signal.SIGTERM) is not before  # else the kill below ends pytest
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before
