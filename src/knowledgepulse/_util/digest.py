"""A string's stable 64-bit hash: the same in every process and on every machine."""

from __future__ import annotations

import hashlib


def stable_hash64(text: str) -> int:
    """The 8-byte BLAKE2b digest of ``text``'s UTF-8 bytes, as a little-endian integer.

    Unlike ``hash``, it is not salted per process, so it can be stored (a ring file's id
    hashes) or compared across runs (hashed terms). Lone surrogates are encoded as they are.
    """
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")
