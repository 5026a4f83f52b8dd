"""young_collections_only: no full collection in the block; fewer_young_collections: fewer young
ones; the caller's thresholds after each."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator

import pytest

from knowledgepulse._util.collector import (
    YOUNG_ALLOCATIONS,
    fewer_young_collections,
    young_collections_only,
)
from knowledgepulse.cli import main as cli_main


@pytest.fixture(autouse=True)
def thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(600, 8, 11)
    yield gc.get_threshold()
    gc.set_threshold(*before)


def full_collections_during(action: Callable[[], object]) -> int:
    """How many full collections Python ran while ``action`` ran."""
    full = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal full
        full += phase == "start" and info["generation"] == 2

    gc.callbacks.append(count)
    try:
        action()
    finally:
        gc.callbacks.remove(count)
    return full


def make_old_objects() -> None:
    """Enough long-lived containers (held across many young collections) to set off full ones."""
    held: list[list[int]] = []
    for _ in range(200_000):
        held.append([])


def test_without_the_block_many_objects_set_off_full_collections() -> None:
    assert full_collections_during(make_old_objects) > 0


def test_in_the_block_no_full_collection_runs_and_young_ones_do(
    thresholds: tuple[int, int, int],
) -> None:
    young = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal young
        young += phase == "start" and info["generation"] == 0

    def held() -> None:
        with young_collections_only():
            assert gc.get_threshold()[:2] == thresholds[:2]
            make_old_objects()

    gc.callbacks.append(count)
    try:
        assert full_collections_during(held) == 0
    finally:
        gc.callbacks.remove(count)
    assert young > 0
    assert gc.get_threshold() == thresholds


def test_nested_blocks_and_a_decorated_function_give_the_thresholds_back_at_the_last_exit(
    thresholds: tuple[int, int, int],
) -> None:
    @young_collections_only()
    def inner() -> tuple[int, int, int]:
        return gc.get_threshold()

    with young_collections_only():
        assert inner()[2] > thresholds[2]
        assert gc.get_threshold()[2] > thresholds[2]  # the inner exit did not restore early
    assert gc.get_threshold() == thresholds


def test_blocks_in_threads_that_overlap_give_the_thresholds_back(
    thresholds: tuple[int, int, int],
) -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with young_collections_only():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with young_collections_only():
            second_in.set()
            first_out.wait(5)
            assert gc.get_threshold()[2] > thresholds[2]  # still held: the second is inside

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert gc.get_threshold() == thresholds


def test_an_error_in_the_block_gives_the_thresholds_back(
    thresholds: tuple[int, int, int],
) -> None:
    with pytest.raises(RuntimeError), young_collections_only():
        raise RuntimeError("stop")
    assert gc.get_threshold() == thresholds


def test_fewer_young_collections_raises_the_youngest_threshold_alone_and_gives_it_back(
    thresholds: tuple[int, int, int],
) -> None:
    with fewer_young_collections():
        assert gc.get_threshold() == (YOUNG_ALLOCATIONS, *thresholds[1:])
    assert gc.get_threshold() == thresholds


def test_fewer_young_collections_keeps_a_higher_threshold_the_caller_set() -> None:
    gc.set_threshold(50_000, 8, 11)
    with fewer_young_collections(allocations=10_000):
        assert gc.get_threshold() == (50_000, 8, 11)


def test_a_kp_command_runs_with_fewer_young_collections_and_gives_the_thresholds_back(
    thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector's thresholds while a command runs in kp's process are the raised ones."""
    seen: list[tuple[int, int, int]] = []

    def command(**_: object) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(cli_main.cli, "main", command)
    assert cli_main.main(["profiles"]) == 0
    assert seen == [(YOUNG_ALLOCATIONS, *thresholds[1:])]
    assert gc.get_threshold() == thresholds
