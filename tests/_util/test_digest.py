"""The stable 64-bit hash: the same value in every process, one of 2**64."""

from __future__ import annotations

import subprocess
import sys

from knowledgepulse._util.digest import stable_hash64


def test_the_hash_is_64_bits_and_tells_strings_apart() -> None:
    """Equal strings hash equal, different ones (lone surrogates too) differently."""
    digest = stable_hash64("kp:trace:1")
    assert digest == stable_hash64("kp:trace:1")
    assert digest != stable_hash64("kp:trace:2")
    assert 0 <= digest < 2**64
    assert stable_hash64("\ud800") != stable_hash64("\ud801")


def test_another_process_gets_the_same_hash() -> None:
    """Unlike hash(), it is not salted: ring files store it and term vectors compare it."""
    code = (
        "from knowledgepulse._util.digest import stable_hash64; print(stable_hash64('kp:trace:1'))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(other.stdout) == stable_hash64("kp:trace:1")
