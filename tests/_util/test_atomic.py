"""Outputs replace regular files atomically, and write devices and FIFOs in place."""

from __future__ import annotations

import os
import signal
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse._util.atomic import (
    atomic_text,
    check_destination,
    check_destinations,
    remove_together,
    together,
)
from knowledgepulse.cli.main import EXIT_USAGE, main
from knowledgepulse.errors import OutputError

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"


def test_a_regular_file_is_replaced_by_a_new_inode(tmp_path: Path) -> None:
    """The file the run writes is a new one, renamed over the old (readers never see half)."""
    path = tmp_path / "out.txt"
    path.write_text("old")
    before = path.stat().st_ino
    with atomic_text(path) as stream:
        stream.write("new")
    assert path.read_text() == "new"
    assert path.stat().st_ino != before


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    """An output kept private (0600) is not made world-readable by the umask's 0644."""
    path = tmp_path / "private.jsonl"
    path.write_text("old")
    path.chmod(0o600)
    with atomic_text(path) as stream:
        stream.write("new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path: Path) -> None:
    """Writing onto a FIFO feeds its reader; the FIFO is not replaced by a regular file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    check_destination(fifo)
    with atomic_text(fifo) as stream:
        stream.write("through the pipe\n")
    reader.join(timeout=10)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A null device safe to test on: as root, a node of our own, since a kp without the fix
    would rename a file over the machine's /dev/null; otherwise /dev/null, which only root
    could replace."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        if not os.path.exists(os.devnull):
            pytest.skip("needs a null device")
        return Path(os.devnull)
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as error:  # a container without CAP_MKNOD
        pytest.skip(f"cannot make a device node: {error}")
    return device


def test_a_device_as_output_stays_a_character_device(
    capsys: pytest.CaptureFixture[str], null_device: Path
) -> None:
    """``-o /dev/null`` writes into the device; it is never renamed over (as root it could be)."""
    code = main(["score", str(TRACES), "--no-embedder", "-f", "jsonl", "-o", str(null_device)])
    assert code == 0, capsys.readouterr().err
    assert stat.S_ISCHR(null_device.stat().st_mode)
    assert null_device.read_bytes() == b""  # a null device, not a file holding the report


def test_an_input_of_the_run_is_refused_as_its_destination(tmp_path: Path) -> None:
    """The input, by another spelling too, cannot be the output; data and ``-`` are no file."""
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    again = tmp_path / "sub" / ".." / "in.jsonl"
    (tmp_path / "sub").mkdir()
    with pytest.raises(OutputError, match="it is an input of this run, which it would replace"):
        check_destination(again, inputs=["-", {"rows": 1}, str(source)])
    check_destination(tmp_path / "out.jsonl", inputs=["-", str(source)])


def test_a_destination_under_a_missing_folder_or_a_file_says_which(tmp_path: Path) -> None:
    """A folder that does not exist is to be made; a file where a folder should be is no folder
    (before, it too was said not to exist)."""
    with pytest.raises(OutputError, match=r"the directory .*gone does not exist; create it first"):
        check_destination(tmp_path / "gone" / "out.jsonl")
    (tmp_path / "afile").write_text("")
    with pytest.raises(OutputError, match="afile is not a directory; give a path inside one"):
        check_destination(tmp_path / "afile" / "out.jsonl")
    with pytest.raises(OutputError, match="afile is not a directory; give a path inside one"):
        check_destination(tmp_path / "afile" / "sub" / "out.jsonl")  # no folder can be made


def test_two_outputs_naming_one_file_are_refused(tmp_path: Path) -> None:
    """Two outputs of a run at one path (by any spelling) fail; a device may take both."""
    (tmp_path / "sub").mkdir()
    out = tmp_path / "out.jsonl"
    with pytest.raises(OutputError, match="two outputs of this run to"):
        check_destinations([out, None, tmp_path / "sub" / ".." / "out.jsonl"])
    check_destinations([out, tmp_path / "report.jsonl"])
    check_destinations([Path(os.devnull), Path(os.devnull)])


@pytest.mark.parametrize(
    "command",
    [
        ("select", "--no-embedder"),
        ("dedupe", "--against", str(TRACES), "--no-embedder"),
    ],
    ids=lambda c: c[0],
)
def test_a_report_on_the_output_file_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    """-o and --report naming one file: a usage error, not an output the report replaced."""
    out = tmp_path / "out.jsonl"
    code = main([command[0], str(TRACES), *command[1:], "-o", str(out), "--report", str(out)])
    assert code == EXIT_USAGE
    assert "two outputs of this run" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ("score", "--no-embedder"),
        ("select", "--no-embedder"),
        ("convert",),
        ("redact",),
        ("dedupe", "--by", "task", "--no-embedder"),
    ],
)
def test_a_command_writing_over_its_input_leaves_it_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    """``-o`` naming the input is a usage error before any work; the input stays as it was."""
    source = tmp_path / "traces.jsonl"
    source.write_bytes(TRACES.read_bytes())
    code = main([command[0], str(source), *command[1:], "-o", str(source)])
    assert code == EXIT_USAGE
    assert "it is an input of this run" in capsys.readouterr().err
    assert source.read_bytes() == TRACES.read_bytes()


def test_files_written_together_appear_only_when_the_block_succeeds(tmp_path: Path) -> None:
    """In together(): no file is in place until the block ends; then every one is."""
    first, second, old = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "old.txt"
    old.write_text("earlier")
    with together():
        with atomic_text(first) as stream:
            stream.write("a")
        assert not first.exists()
        with atomic_text(second) as stream:
            stream.write("b")
        remove_together(old)
        assert old.exists()
    assert (first.read_text(), second.read_text(), old.exists()) == ("a", "b", False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_an_interrupt_in_a_together_block_writes_and_removes_nothing(tmp_path: Path) -> None:
    """Ctrl-C after one file of two: neither is written, the file to remove stays, no temporary."""
    old = tmp_path / "old.txt"
    old.write_text("earlier")

    def stopped() -> None:
        with together():
            with atomic_text(tmp_path / "a.txt") as stream:
                stream.write("a")
            remove_together(old)
            with together(), atomic_text(tmp_path / "b.txt"):  # joins the outer block
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stopped()
    assert [path.name for path in tmp_path.iterdir()] == ["old.txt"]


def test_ctrl_c_while_together_commits_comes_after_every_file_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGINT during the renames is delivered once they are all made: all files or none."""
    replace = os.replace

    def signalled(source: Any, destination: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        replace(source, destination)

    monkeypatch.setattr(os, "replace", signalled)

    def written() -> None:
        with together():
            for name in ("a.txt", "b.txt"):
                with atomic_text(tmp_path / name) as stream:
                    stream.write(name)

    with pytest.raises(KeyboardInterrupt):
        written()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt", "b.txt"]
