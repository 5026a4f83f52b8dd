"""Orders that do not come from the input: by content, and by creation time.

Two copies of one trace id are told apart by a digest of their whole document, so even they
land in the same places however the input was shuffled.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from knowledgepulse.trace.load import LoadedTrace


def content_digest(document: Any) -> bytes:
    """A digest of a JSON document that does not depend on the order of its keys."""
    try:
        data = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits, a lone surrogate
        data = json.dumps(document, sort_keys=True, ensure_ascii=True).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


def canonical_order(traces: Sequence[LoadedTrace]) -> list[int]:
    """Indexes of ``traces`` by id, then content: the same sequence for any input order."""
    digests = [content_digest(loaded.record.value) for loaded in traces]
    return sorted(range(len(traces)), key=lambda i: (traces[i].trace.id, digests[i]))


def time_order(traces: Sequence[LoadedTrace]) -> list[int]:
    """Indexes of ``traces`` by ``metadata.created_at``, then id, then content."""
    digests = [content_digest(loaded.record.value) for loaded in traces]

    def key(i: int) -> tuple[datetime, str, bytes]:
        trace = traces[i].trace
        return trace.metadata.created_at, trace.id, digests[i]

    return sorted(range(len(traces)), key=key)
