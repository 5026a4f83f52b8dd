"""The console blocks of docs/ show what ``kp`` prints: each block is run, command by command, in
a temporary folder beside the bundled examples, as on an 80-column terminal, and the text it
shows is compared with what ``kp`` printed (spaces and line wrapping aside; a ``...`` stands for
text left out). A command the block shows no output of runs without a usage error (exit 2) or an
internal error (exit 3): an option renamed, a file moved, a shorthand left in.

A block that cannot run here says why on the line before it:
``<!-- docs-test: not run: REASON -->``. The README's blocks need the embedding model:
tests/test_readme.py runs them.
"""

from __future__ import annotations

import io
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from knowledgepulse.cli.main import main
from tests.paths import REPO

PAGES = sorted((REPO / "docs").glob("*.md"))
BLOCK = re.compile(r"^(?:<!-- docs-test: not run: (.+?) -->\n)?```console\n(.*?)^```", re.S | re.M)
ELIDED = "..."
BUNDLED = ("examples", "corpora")


@dataclass
class Step:
    """One ``$ command`` of a block and the lines the block shows after it."""

    command: str
    shown: list[str] = field(default_factory=list)


@dataclass
class Block:
    """A console block: where it is, its steps, and why it is not run (``None``: it is)."""

    where: str
    steps: list[Step]
    not_run: str | None


def steps(body: str) -> list[Step]:
    """A block's commands (``\\`` continues one) and the output shown after each."""
    found: list[Step] = []
    continued = False
    for line in body.splitlines():
        if continued:
            found[-1].command += " " + line.strip().removesuffix("\\").strip()
        elif line.startswith("$ "):
            found.append(Step(line[2:].removesuffix("\\").strip()))
        elif line.strip() and not line.startswith("#") and found:
            found[-1].shown.append(line)
        continued = line.endswith("\\") and (line.startswith("$ ") or continued)
    return found


def blocks() -> list[Block]:
    """Every console block of docs/."""
    found = []
    for page in PAGES:
        text = page.read_text("utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start(2))
            found.append(Block(f"{page.name}:{line}", steps(match.group(2)), match.group(1)))
    return found


class Terminal(io.StringIO):
    """Standard output as a terminal: kp draws its tables there, as a reader's console shows."""

    def isatty(self) -> bool:
        return True


def run(command: str, last_code: int) -> tuple[int, str]:
    """One step's exit code and what it printed (standard output, then standard error)."""
    words = shlex.split(command, comments=True)
    if words == ["echo", "$?"]:
        return 0, f"{last_code}\n"
    assert words[0] == "kp", f"{command!r}: only kp runs here; say why the block is not run"
    into = None
    if ">" in words or ">>" in words:
        at = words.index(">") if ">" in words else words.index(">>")
        into, mode, words = Path(words[at + 1]), "a" if words[at] == ">>" else "w", words[:at]
    out, err = (io.StringIO() if into else Terminal()), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = main(words[1:])
    finally:
        sys.stdout, sys.stderr = saved
    if into is not None:
        with into.open(mode, encoding="utf-8") as file:
            file.write(out.getvalue())
        return code, err.getvalue()
    return code, out.getvalue() + err.getvalue()


def words_of(text: str) -> str:
    """The text with every run of spaces and line breaks as one space."""
    return " ".join(text.split())


def shows(shown: list[str], printed: str) -> bool:
    """Whether the shown lines are what was printed, or, with ``...``, parts of it in order."""
    text = words_of("\n".join(shown))
    pieces = [words_of(piece) for piece in re.split(r"(?:^|(?<=\s))\.\.\.(?=\s|$)", text)]
    if len(pieces) == 1:
        return pieces[0] == words_of(printed)
    rest = words_of(printed)
    # Shown text before the first ``...`` is where the output starts, and after the last one where
    # it ends: a block that opens on its second failing case reads as if that case came first.
    if not rest.startswith(pieces[0]) or not rest.endswith(pieces[-1]):
        return False
    for piece in filter(None, pieces):
        at = rest.find(piece)
        if at < 0:
            return False
        rest = rest[at + len(piece) :]
    return True


BLOCKS = blocks()


@pytest.mark.parametrize(
    "block",
    # A block marked not run says why on its page (BLOCK reads the reason); it is not collected.
    [pytest.param(block, id=block.where) for block in BLOCKS if block.not_run is None],
)
def test_a_console_block_shows_what_kp_prints(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command of the block runs; the output the block shows is what it printed, and one
    whose output it does not show ends neither in a usage error nor in an internal error."""
    for name in BUNDLED:
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    for variable, value in {"NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "80"}.items():
        monkeypatch.setenv(variable, value)
    code = 0
    for step in block.steps:
        code, printed = run(step.command, code)
        if step.shown:
            assert shows(step.shown, printed), (step.command, printed)
        else:
            assert code not in (2, 3), (step.command, printed)


def test_the_blocks_found_are_every_console_block() -> None:
    """The parser finds the blocks, with output or not, commands joined across ``\\`` lines."""
    assert len(BLOCKS) >= 14
    assert sum(block.not_run is None for block in BLOCKS) >= 9
    assert any(not any(step.shown for step in block.steps) for block in BLOCKS)
    (tasks,) = steps("$ kp eval a \\\n    --suite s.yaml \\\n    -o b.json\nok\n")
    assert tasks == Step("kp eval a --suite s.yaml -o b.json", ["ok"])


@pytest.mark.parametrize(
    ("shown", "printed", "expected"),
    [
        (["a b", "c"], "a\nb c\n", True),  # wrapped differently: the same words
        (["a b"], "a b c", False),  # all of it shown, unless elided
        (["a", "...", "c"], "a b c", True),
        (["Known types: ..."], "Known types: x, y", True),
        (["c", "...", "a"], "a b c", False),  # in order
        (["b", "...", "c"], "a b c", False),  # what is shown first is what is printed first
        (["a", "...", "b"], "a b c", False),  # and what is shown last, last
        (["...", "b", "..."], "a b c", True),
    ],
)
def test_shown_output_matches_words_and_elisions(
    shown: list[str], printed: str, expected: bool
) -> None:
    """Line wrapping does not count; ``...`` stands for anything; the rest must be there."""
    assert shows(shown, printed) is expected
