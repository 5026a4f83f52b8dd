"""Text from data made safe to show: its controls escaped, for a terminal, a file, XML.

The lowest layer: the errors below everything else show a file's name through it, as every
layer shows the text of data (:mod:`knowledgepulse._util.text` re-exports it).
"""

from __future__ import annotations

import re

# The invisible marks that reorder the text around them (bidirectional overrides, embeddings,
# isolates and marks): "evil\u202etxt.exe" shows as "evilexe.txt" (Trojan Source, CVE-2021-42574).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 and C1 controls but tab and newline, the bidi marks, unpaired surrogates, and the two XML
# non-characters.
_UNPRINTABLE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff\ufffe\uffff]")
# The same, and tab and newline too: for what must stay on one line (an id, a table cell).
_UNPRINTABLE_IN_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff\ufffe\uffff]")


def printable(text: str, *, one_line: bool = False) -> str:
    r"""Text safe for a terminal, a UTF-8 file and XML: controls as ``\x1b``, surrogates U+FFFD.

    Bidirectional marks are controls too (``\u202e``): they would make text read in another order.

    Every text from data goes through here on its way to a terminal, so an escape sequence is
    shown, not obeyed. ``one_line`` escapes newlines and tabs too, for an id or a table cell.
    """
    pattern = _UNPRINTABLE_IN_LINE if one_line else _UNPRINTABLE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code in (0x09, 0x0A):
        return "\\t" if code == 0x09 else "\\n"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
