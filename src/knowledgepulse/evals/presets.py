"""The three suites the guide ships: ``standard``, ``strict`` and ``operation-focused``.

They are written as suite-file data, exactly the guide's tables, and resolved through the same
path as a user's file, so a preset and its YAML twin behave alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from knowledgepulse.errors import UnknownPresetError
from knowledgepulse.evals.suite import Suite, suite_from_dict

PRESETS: Mapping[str, Mapping[str, Any]] = {
    "standard": {
        "name": "standard",
        "description": "The guide's standard evaluation (標準評価): operations, targets, content.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 1.0, "threshold": 0.8},
            {"type": "target-block-precision", "weight": 1.0, "threshold": 0.75},
            {"type": "content-quality", "weight": 1.0, "threshold": 0.6},
        ],
    },
    "strict": {
        "name": "strict",
        "description": "The guide's strict evaluation (厳密評価): higher thresholds, and "
        "anti-hallucination at double weight.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 1.0, "threshold": 0.9},
            {"type": "target-block-precision", "weight": 1.0, "threshold": 0.9},
            {"type": "content-quality", "weight": 1.0, "threshold": 0.8},
            {"type": "anti-hallucination", "weight": 2.0, "threshold": 1.0},
        ],
    },
    "operation-focused": {
        "name": "operation-focused",
        "description": "The guide's operation-focused evaluation (操作重視): operations weigh "
        "more, content less.",
        "scorers": [
            {"type": "operation-accuracy", "weight": 2.0, "threshold": 0.9},
            {"type": "target-block-precision", "weight": 1.5, "threshold": 0.85},
            {"type": "content-quality", "weight": 0.5, "threshold": 0.5},
        ],
    },
}
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def preset(name: str) -> Suite:
    """The built-in suite called ``name``.

    Raises:
        UnknownPresetError: listing the presets and the closest one.
    """
    try:
        data = PRESETS[name]
    except KeyError:
        closest = difflib.get_close_matches(name, PRESET_NAMES, n=1)
        hint = f" Did you mean {closest[0]!r}?" if closest else ""
        raise UnknownPresetError(
            f"unknown preset {name!r}.{hint} Presets: {', '.join(PRESET_NAMES)}; "
            "or write your own suite file and pass it with --suite"
        ) from None
    return suite_from_dict(data, source=f"preset '{name}'")
