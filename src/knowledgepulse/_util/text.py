"""Small text helpers for messages, summaries and reports."""

from __future__ import annotations

import re

# C0 and C1 controls but tab and newline, unpaired surrogates, and the two XML non-characters.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def counted(count: int, noun: str) -> str:
    """``1 trace``, ``2 traces``: a count and its noun, plural when it is not one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def printable(text: str) -> str:
    r"""Text safe for a terminal, a UTF-8 file and XML: controls as ``\x1b``, surrogates U+FFFD."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
