"""Secrets written in base64: a run that decodes to text holding a secret, a Basic credential.

Bounded on purpose: a run is decoded only if it is 16 to :data:`MAX_RUN` characters of the
base64 alphabet (standard or URL-safe) and decodes to printable UTF-8 text; the decoded text is
searched once, by the other secret rules, never decoded again.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
from collections.abc import Callable, Iterator

from knowledgepulse.redact.rules import Span

MAX_RUN = 2048
"""The longest base64 run (in characters) that is decoded; a longer one is an image or a file."""

# The standard library's engine: this pattern runs on every text with a digit, and re scans a
# character class about four times faster than regex. A run starts after a character outside
# the alphabet (the text is read with a space before it).
_RUN = re.compile(r"[^\w+/\-]([A-Za-z0-9+/_\-]{16," + str(MAX_RUN) + r"}={0,2})(?![\w+/=\-])")
# Most texts hold no run at all: a byte table finds that at C speed, before any pattern runs.
_ALPHABET = frozenset((string.ascii_letters + string.digits + "+/_-").encode())
_IN_ALPHABET = bytes(byte in _ALPHABET for byte in range(256))
_SHORTEST_RUN = b"\x01" * 16
_BASIC = re.compile(r"\b(?:[Bb]asic|BASIC)[ \t]+([A-Za-z0-9+/]{4,}={0,2})(?![\w+/=\-])")


def decode(run: str) -> str | None:
    """The text ``run`` encodes in base64 (standard or URL-safe), or ``None`` if it is not text."""
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    if "-" in body or "_" in body:
        if "+" in body or "/" in body:
            return None  # the two alphabets mixed: not base64
        body = body.replace("-", "+").replace("_", "/")
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    printable = decoded.replace("\n", "").replace("\r", "").replace("\t", "")
    return decoded if printable.isprintable() else None


def encoded_secrets(text: str, holds_secret: Callable[[str], bool]) -> Iterator[Span]:
    """The base64 runs of ``text`` whose decoded text ``holds_secret``."""
    if text.encode().translate(_IN_ALPHABET).find(_SHORTEST_RUN) < 0:
        return
    for match in _RUN.finditer(" " + text):
        decoded = decode(match.group(1))
        if decoded is not None and holds_secret(decoded):
            yield match.start(1) - 1, match.end(1) - 1


def basic_credentials(text: str) -> Iterator[Span]:
    """The credentials of ``Basic <base64 of user:password>`` (an HTTP Basic ``Authorization``)."""
    for match in _BASIC.finditer(text):
        decoded = decode(match.group(1))
        if decoded is not None and decoded.partition(":")[2]:
            yield match.span(1)
