"""Saved vector caches: atomic saves, and a load that gives a valid cache or one clear error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import CacheFileError, ScorerParameterError
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.novelty.cache.npz import CACHE_FILE_FORMAT
from tests.other_process import other_run_saves

fuzz = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def header(**changes: Any) -> dict[str, Any]:
    """The header of a valid 2-vector, 3-dimension cache, with ``changes`` applied."""
    data = {
        "format": CACHE_FILE_FORMAT,
        "model_id": "m",
        "dimensions": 3,
        "max_elements": 4,
        "ttl_ms": None,
        "ids": ["a", "b"],
    }
    data.update(changes)
    return data


def write_npz(path: Path, **arrays: Any) -> Path:
    """An .npz with the given parts; by default those of a valid cache."""
    parts: dict[str, Any] = {
        "header": np.array(json.dumps(header())),
        "vectors": np.eye(2, 3, dtype=np.float32),
        "added_at": np.zeros(2, dtype=np.float64),
    }
    parts.update(arrays)
    np.savez(path, **{name: value for name, value in parts.items() if value is not None})
    return path


def valid_cache_bytes(tmp_path: Path) -> bytes:
    cache = VectorCache(max_elements=4, dimensions=3)
    cache.add([1.0, 0.0, 0.0], id="a")
    cache.add([0.0, 2.0, 0.0], id="b")
    path = tmp_path / "valid.npz"
    cache.save(path, model_id="m")
    return path.read_bytes()


def load_or_error(path: Path) -> VectorCache | CacheFileError:
    """Load, returning the CacheFileError instead of raising it (any other error propagates)."""
    try:
        return VectorCache.load(path)
    except CacheFileError as error:
        return error


def assert_clear(error: CacheFileError, path: Path) -> None:
    """One line that names the file and says how to fix it."""
    message = str(error)
    assert "\n" not in message
    assert str(path) in message
    assert any(fix in message for fix in ("delete it", "give a file path", "another cache file"))


# --- loading what is not a valid cache ---------------------------------------------------


@pytest.mark.parametrize(
    ("arrays", "expected"),
    [
        ({"header": np.array('{"format": "something-else"}')}, "not a knowledgepulse vector cache"),
        ({"header": np.array("not json {")}, "header is not JSON"),
        ({"header": np.array("[" * 100_000 + "]" * 100_000)}, "header is not JSON"),
        ({"header": np.array(5)}, "header is a int64 array"),
        ({"header": np.array(json.dumps(header(dimensions="3")))}, "dimensions is '3'"),
        ({"header": np.array(json.dumps(header(dimensions=True)))}, "dimensions is True"),
        ({"header": np.array(json.dumps(header(max_elements=0)))}, "max_elements is 0"),
        ({"header": np.array(json.dumps(header(max_elements=1)))}, "holds 2 vectors"),
        ({"header": np.array(json.dumps(header(ttl_ms=-1)))}, "ttl_ms is -1"),
        ({"header": np.array(json.dumps(header(ttl_ms=float("nan"))))}, "ttl_ms is nan"),
        ({"header": np.array(json.dumps(header(model_id=7)))}, "model_id is 7"),
        ({"header": np.array(json.dumps(header(ids=["a"])))}, "expected float32 of shape (1, 3)"),
        ({"header": np.array(json.dumps(header(ids=[1, 2])))}, "ids are not a list of strings"),
        (
            {"header": np.array(json.dumps(header(dimensions=4)))},
            "expected float32 of shape (2, 4)",
        ),
        ({"vectors": np.eye(2, 3, dtype=np.int64)}, "int64 array"),
        ({"vectors": np.array([[np.nan, 0, 0], [0, 1, 0]], np.float32)}, "NaN or infinite"),
        ({"vectors": np.array([[1e300, 0, 0], [0, 1, 0]], np.float64)}, "NaN or infinite"),
        ({"added_at": np.array([0.0, np.inf])}, "NaN or infinite"),
        ({"added_at": np.zeros(3)}, "times are a float64 array of shape (3,)"),
        ({"added_at": None}, "no 'added_at' array"),
        ({"vectors": np.array([{"a": 1}], dtype=object)}, "pickled Python objects"),
    ],
)
def test_a_malformed_cache_is_refused_saying_what_is_wrong(
    tmp_path: Path, arrays: dict[str, Any], expected: str
) -> None:
    """Each kind of damage gets its own one-line CacheFileError, never another exception."""
    path = write_npz(tmp_path / "c.npz", **arrays)
    with pytest.raises(CacheFileError) as caught:
        VectorCache.load(path)
    assert expected in str(caught.value)
    assert_clear(caught.value, path)


def test_a_cache_of_a_newer_format_says_to_upgrade_not_to_delete(tmp_path: Path) -> None:
    """An .npz a newer knowledgepulse wrote is not damaged: the fix is an upgrade, the file kept."""
    newer = header(format=CACHE_FILE_FORMAT.replace("/1", "/2"))
    path = write_npz(tmp_path / "c.npz", header=np.array(json.dumps(newer)))
    with pytest.raises(CacheFileError, match="a newer knowledgepulse made") as caught:
        VectorCache.load(path)
    assert "pip install -U knowledgepulse" in str(caught.value)
    assert "delete" not in str(caught.value)
    assert_clear(caught.value, path)


def test_an_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    """A zero-byte cache (a save cut short) is a CacheFileError saying so, not "aborted"."""
    path = tmp_path / "c.npz"
    path.touch()
    with pytest.raises(CacheFileError, match="the file is empty") as caught:
        VectorCache.load(path)
    assert_clear(caught.value, path)


def test_a_truncated_file_is_not_a_readable_archive(tmp_path: Path) -> None:
    """A cache cut in half is refused with the archive's own complaint and the fix."""
    data = valid_cache_bytes(tmp_path)
    path = tmp_path / "c.npz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheFileError, match=r"not a readable \.npz archive") as caught:
        VectorCache.load(path)
    assert_clear(caught.value, path)


def test_a_compressed_archive_is_refused(tmp_path: Path) -> None:
    """Only knowledgepulse's uncompressed layout is read (its sizes can be checked first)."""
    path = tmp_path / "c.npz"
    np.savez_compressed(
        path,
        header=np.array(json.dumps(header())),
        vectors=np.eye(2, 3, dtype=np.float32),
        added_at=np.zeros(2),
    )
    with pytest.raises(CacheFileError, match="compressed"):
        VectorCache.load(path)


def test_a_directory_is_refused_with_a_hint(tmp_path: Path) -> None:
    """A directory given as the cache says to give a file path."""
    with pytest.raises(CacheFileError, match="is a directory") as caught:
        VectorCache.load(tmp_path)
    assert_clear(caught.value, tmp_path)


def _npy_with_header_shape(shape: tuple[int, ...]) -> bytes:
    """A float32 .npy that declares ``shape`` but holds only 24 bytes of data."""
    head = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}"
    head += " " * (118 - len(head)) + "\n"
    return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head.encode() + b"\0" * 24


def test_a_huge_declared_array_is_refused_before_any_allocation(tmp_path: Path) -> None:
    """An array header claiming 10**12 x 384 floats is damage, not a reason to ask for 1.5 PB."""
    path = write_npz(tmp_path / "c.npz")
    rebuilt = tmp_path / "huge.npz"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rebuilt, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "vectors.npy":
                data = _npy_with_header_shape((10**12, 384))
            target.writestr(info.filename, data)
    with pytest.raises(CacheFileError, match=r"declares shape \(1000000000000, 384\)"):
        VectorCache.load(rebuilt)


def test_a_huge_declared_cache_size_is_refused(tmp_path: Path) -> None:
    """A header asking for room for 10**12 vectors is refused instead of exhausting memory."""
    path = write_npz(tmp_path / "c.npz", header=np.array(json.dumps(header(max_elements=10**12))))
    with pytest.raises(CacheFileError, match=r"too large to load.*GiB") as caught:
        VectorCache.load(path)
    assert_clear(caught.value, path)


def test_a_bad_setting_given_to_load_is_the_callers_error(tmp_path: Path) -> None:
    """max_elements/ttl_ms passed to load are checked as settings, not blamed on the file."""
    path = write_npz(tmp_path / "c.npz")
    with pytest.raises(ScorerParameterError, match="max_elements"):
        VectorCache.load(path, max_elements=0)
    with pytest.raises(ScorerParameterError, match="ttl_ms"):
        VectorCache.load(path, ttl_ms=-1.0)


def test_a_valid_handmade_cache_loads(tmp_path: Path) -> None:
    """The builder's default parts are a valid cache (guards the tests above)."""
    loaded = VectorCache.load(write_npz(tmp_path / "c.npz"))
    assert [entry.id for entry in loaded.entries()] == ["a", "b"]


@fuzz
@given(st.binary(max_size=3000))
def test_random_bytes_load_as_a_cache_or_a_cache_file_error(tmp_path: Path, data: bytes) -> None:
    """Whatever bytes the file holds, load gives a valid cache or CacheFileError, nothing else."""
    path = tmp_path / "fuzz.npz"
    path.write_bytes(data)
    result = load_or_error(path)
    if isinstance(result, CacheFileError):
        assert_clear(result, path)


@fuzz
@given(st.data())
def test_damaged_saved_caches_load_or_fail_cleanly(tmp_path: Path, data: st.DataObject) -> None:
    """Truncations and bit flips of a real saved cache give a valid cache or CacheFileError."""
    original = bytearray(valid_cache_bytes(tmp_path))
    damaged = original[: data.draw(st.integers(0, len(original)), label="length")]
    flips = data.draw(st.lists(st.integers(0, 8 * len(original) - 1), max_size=4), label="flips")
    for bit in flips:
        if bit // 8 < len(damaged):
            damaged[bit // 8] ^= 1 << (bit % 8)
    path = tmp_path / "fuzz.npz"
    path.write_bytes(bytes(damaged))
    result = load_or_error(path)
    if isinstance(result, VectorCache):
        for entry in result.entries():
            assert np.isfinite(entry.vector).all()
            assert entry.vector.shape == (result.dimensions,)
    else:
        assert_clear(result, path)


# --- saving --------------------------------------------------------------------------------


def _dead_pid() -> int:
    """The id of a process that has exited and been reaped."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    pid = int(child.stdout)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    return pid


def test_a_crashed_saves_temporary_is_removed_by_the_next_save(tmp_path: Path) -> None:
    """A temporary left by a process that died mid-save is cleaned up; a live one's is kept."""
    path = tmp_path / "c.kpcache.npz"
    stale = tmp_path / f".c.kpcache.npz.abc123.{_dead_pid()}.kp-tmp"
    stale.write_bytes(b"\0" * 1000)
    alive = tmp_path / f".c.kpcache.npz.def456.{os.getppid()}.kp-tmp"
    alive.write_bytes(b"\0")
    VectorCache(dimensions=2).save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, alive.name])


def test_the_saved_file_gets_the_umask_mode(tmp_path: Path) -> None:
    """The cache is readable as the user's umask says (0644 under umask 022), not 0600."""
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "c.npz"
    VectorCache(dimensions=2).save(path)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_save_leaves_the_old_cache_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error while writing keeps the previous file intact and removes the temporary."""
    path = tmp_path / "c.npz"
    cache = VectorCache(dimensions=2)
    cache.add([1.0, 0.0], id="kept")
    cache.save(path)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", fail)
    with pytest.raises(OSError, match="disk full"):
        VectorCache(dimensions=2).save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["c.npz"]
    monkeypatch.undo()
    assert [e.id for e in VectorCache.load(path).entries()] == ["kept"]


def test_a_data_file_named_as_the_cache_is_not_advised_deleted_outright(tmp_path: Path) -> None:
    """A file of other content may be the user's data given as the cache by mistake: the error
    offers another path first, and deleting only if knowledgepulse made the file."""
    data = tmp_path / "traces.jsonl"
    data.write_text('{"id": "kp:trace:1"}\n')
    with pytest.raises(CacheFileError) as caught:
        VectorCache.open(data, model_id="m", dimensions=3)
    message = str(caught.value)
    assert message.startswith(f"{data}: not a knowledgepulse vector cache")
    assert "give another cache path" in message
    assert "if knowledgepulse made this file, delete it" in message
    assert data.read_text() == '{"id": "kp:trace:1"}\n'


def test_a_ring_file_is_not_held_to_the_in_memory_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memory limit (check_cache_size) binds caches held in memory; a ring file is mapped."""
    path = tmp_path / "vectors.kpcache"
    VectorCache.open(path, model_id="m", dimensions=2, max_elements=64).flush()
    monkeypatch.setattr("knowledgepulse.novelty.settings.MAX_CACHE_BYTES", 8 * 4)
    with pytest.raises(ScorerParameterError, match="max_elements"):
        VectorCache(max_elements=64, dimensions=2)  # held in memory: refused
    cache = VectorCache.open(path, model_id="m", dimensions=2)
    cache.add(np.array([1.0, 0.0], dtype=np.float32), id="a")
    assert (cache.max_elements, len(cache)) == (64, 1)


@pytest.mark.parametrize("made_first", [True, False])
def test_an_npz_another_process_saved_meanwhile_keeps_its_vectors(
    tmp_path: Path, made_first: bool
) -> None:
    """A save after another process's (which made or rewrote the file
    since this one read it) merges its vectors in by time instead of replacing them."""
    path = tmp_path / "c.npz"
    if made_first:
        first = VectorCache.open(path, dimensions=4, model_id="m")
        first.add([0.0, 0.0, 0.0, 1.0], id="first")
        first.flush()
    mine = VectorCache.open(path, dimensions=4, model_id="m")
    mine.add([1.0, 0.0, 0.0, 0.0], id="mine")
    other_run_saves(path, 2, model_id="m", dimensions=4)
    mine.flush()
    held = [e.id for e in VectorCache.open(path).entries()]
    assert held == ["first"] * made_first + ["mine", "other0-0", "other0-1"]


@pytest.mark.parametrize("made_first", [True, False])
def test_npz_saves_at_the_same_moment_keep_each_other_s_vectors(
    tmp_path: Path, made_first: bool
) -> None:
    """Eight threads (a service's requests) each open one .npz, add, and save at once: all kept.

    Before, a save read the file, then rewrote it, unlocked: saves at the same moment each
    missed the others', and about half the vectors were lost.
    """
    path = tmp_path / "c.npz"
    if made_first:
        VectorCache.open(path, dimensions=4, model_id="m").flush()
    caches = [VectorCache.open(path, dimensions=4, model_id="m") for _ in range(8)]
    for index, cache in enumerate(caches):
        cache.add(np.eye(4, dtype=np.float32)[index % 4], id=f"request{index}")
    start = threading.Barrier(len(caches))

    def save(cache: VectorCache) -> None:
        start.wait()
        cache.flush()

    with ThreadPoolExecutor(len(caches)) as pool:
        list(pool.map(save, caches))
    held = sorted(e.id or "" for e in VectorCache.open(path).entries())
    assert held == [f"request{index}" for index in range(8)]
