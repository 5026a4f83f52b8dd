"""The built-in presets: exactly the scorer design guide's three tables."""

from __future__ import annotations

import pytest

from knowledgepulse.errors import UnknownPresetError
from knowledgepulse.evals.suite import PRESET_NAMES, preset

# (type, weight, threshold), transcribed from the guide's スコアラー組み合わせパターン.
GUIDE_TABLES = {
    "standard": [
        ("operation-accuracy", 1.0, 0.8),
        ("target-block-precision", 1.0, 0.75),
        ("content-quality", 1.0, 0.6),
    ],
    "strict": [
        ("operation-accuracy", 1.0, 0.9),
        ("target-block-precision", 1.0, 0.9),
        ("content-quality", 1.0, 0.8),
        ("anti-hallucination", 2.0, 1.0),
    ],
    "operation-focused": [
        ("operation-accuracy", 2.0, 0.9),
        ("target-block-precision", 1.5, 0.85),
        ("content-quality", 0.5, 0.5),
    ],
}


def test_the_three_presets_ship_in_the_guides_order() -> None:
    """standard, strict and operation-focused, and nothing else."""
    assert PRESET_NAMES == ("standard", "strict", "operation-focused")


@pytest.mark.parametrize("name", list(GUIDE_TABLES))
def test_preset_equals_the_guides_table(name: str) -> None:
    """Each preset has the guide's types, weights and thresholds, in order."""
    suite = preset(name)
    assert [(s.type, s.weight, s.threshold) for s in suite.scorers] == GUIDE_TABLES[name]
    assert suite.name == name
    assert suite.source == f"preset '{name}'"


def test_unknown_preset_lists_the_presets_and_the_closest() -> None:
    """A misspelt preset name suggests the closest and lists all three."""
    with pytest.raises(UnknownPresetError) as raised:
        preset("strcit")
    message = str(raised.value)
    assert "Did you mean 'strict'?" in message
    assert "standard, strict, operation-focused" in message
