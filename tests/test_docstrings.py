r"""Every docstring in the repository's Python files is text UTF-8 can hold. From Python 3.13 the
compiler dedents a docstring through UTF-8 (python/cpython#142411): a lone surrogate in one (a
``"\ud83d"`` written in a docstring without its ``r`` prefix) makes its module fail to import
there, with a UnicodeEncodeError, while 3.11 and 3.12 import it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.paths import REPO

FOLDERS = ("src", "tests", "bench", "examples")
DOCUMENTED = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
# Python source is UTF-8, so a surrogate can only come from its escape: only a file with one is
# parsed (parsing all of them takes seconds).
SURROGATE_ESCAPE = re.compile(rb"\\(?:u|U0000)[dD][89a-fA-F]")


def python_files() -> list[Path]:
    """The Python files of the folders the wheel and the sdist ship."""
    return sorted(path for folder in FOLDERS for path in (REPO / folder).rglob("*.py"))


def docstrings(source: bytes) -> Iterator[tuple[int, str]]:
    """Each docstring of a module's source, with the line it starts on (1 for the module's)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, DOCUMENTED):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                yield (node.body[0].lineno, text)


def encodes(text: str) -> bool:
    """Whether UTF-8 holds ``text`` (it cannot hold a surrogate)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def test_the_check_finds_a_docstring_with_a_lone_surrogate() -> None:
    """The escape written as the compiler reads it: a real surrogate, found on its line."""
    source = b'x = 1\n\n\ndef f() -> None:\n    """A ``"\\ud83d"`` escape."""\n'
    assert SURROGATE_ESCAPE.search(source)
    assert [line for line, text in docstrings(source) if not encodes(text)] == [5]


def test_every_docstring_encodes_as_utf_8() -> None:
    """Else its module cannot be imported on Python 3.13 and later."""
    files = python_files()
    assert len(files) > 100  # the folders were found
    unencodable = [
        f"{path.relative_to(REPO)}:{line}"
        for path in files
        if SURROGATE_ESCAPE.search(source := path.read_bytes())
        for line, text in docstrings(source)
        if not encodes(text)
    ]
    assert unencodable == [], "write the escape in an r-docstring (r'''...''')"
