"""The stable 64-bit hash (the same in every process) and SeenIds, a set of ids kept as hashes."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse._util import digest as digest_module
from knowledgepulse._util.digest import SeenIds, stable_hash64


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


@settings(max_examples=200, deadline=None)
@given(items=st.lists(st.text(max_size=6), max_size=400), batch=st.sampled_from([1, 2, 3, 64]))
def test_behaves_like_a_set(items: list[str], batch: int) -> None:
    """add() says "seen before" exactly when a Python set would, through every merge."""
    with mock.patch.object(digest_module, "_BATCH", batch):
        seen, reference = SeenIds(), set()
        for item in items:
            assert seen.add(item) == (item in reference)
            reference.add(item)
    assert all(seen.add(item) for item in reference)


def test_ids_take_about_8_bytes_each_past_the_newest_batch() -> None:
    """300k ids: 8 bytes an id, plus the newest batch's set (a set of all takes ~85 an id)."""
    ids = [f"kp:trace:synthetic-{i:07d}" for i in range(300_000)]
    tracemalloc.start()
    try:
        seen = SeenIds()
        for item in ids:
            seen.add(item)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen.add(ids[0])
    assert not seen.add("kp:trace:new")
    assert held < 8 * len(ids) + 6 * 2**20
