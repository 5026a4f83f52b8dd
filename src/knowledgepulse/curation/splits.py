"""Splits by group: each group (a task, a session, a repository) goes to one part, whole.

Groups are taken in the order of a digest of the seed and their key, and each goes to the part
furthest below its share of the items assigned so far (counting the group). Nothing depends on
the input's order, the same seed gives the same split, and every part ends within one group's
size of its share (on 100k rows in groups of a few, well within 1 %).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping

PARTS = ("train", "validation", "test")
"""The parts, in the order ties between them go."""
BY_TASK = "task"
"""The group key ``task``: the task read with the item (a task column or ``task_field``; an item
without one, its objective), else inferred as :func:`~knowledgepulse.runs.select` infers it."""


def group_order(keys: list[str], seed: int) -> list[str]:
    """The keys in the order of a digest of ``seed`` and each key: a shuffle fixed by the seed."""

    def digest(key: str) -> bytes:
        return hashlib.blake2b(f"{seed}\0{key}".encode(errors="surrogatepass")).digest()

    return sorted(keys, key=lambda key: (digest(key), key))


def assign_groups(
    sizes: Mapping[str, int], fractions: Mapping[str, float], *, seed: int = 0
) -> dict[str, str]:
    """Each group's part: a hash-ordered greedy split of the groups by size.

    Args:
        sizes: each group's number of items.
        fractions: each part's share (see :data:`PARTS`), summing to 1; a part of share 0
            gets nothing.
        seed: another seed, another shuffle of the groups.

    Raises:
        ValueError: a share outside [0, 1], shares not summing to 1, or an unknown part.
    """
    unknown = set(fractions) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown parts {sorted(unknown)}: the parts are {', '.join(PARTS)}")
    if any(not 0.0 <= share <= 1.0 for share in fractions.values()):
        raise ValueError(f"each share is in [0, 1], got {dict(fractions)}")
    if abs(sum(fractions.values()) - 1.0) > 1e-9:
        raise ValueError(f"the shares sum to 1, got {sum(fractions.values())}")
    parts = [part for part in PARTS if fractions.get(part, 0.0) > 0.0]
    totals: Counter[str] = Counter()
    assigned = 0
    found: dict[str, str] = {}
    for key in group_order(list(sizes), seed):
        assigned += sizes[key]
        # The part furthest below its share once this group is counted (ties: PARTS order).
        part = max(parts, key=lambda p: fractions[p] * assigned - totals[p])
        totals[part] += sizes[key]
        found[key] = part
    return found
