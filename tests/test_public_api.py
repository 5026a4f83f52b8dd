"""The public API: what the package exports, and that it is sorted and importable."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "knowledgepulse",
    "knowledgepulse.trace",
    "knowledgepulse.value",
    "knowledgepulse.novelty",
    "knowledgepulse.evals",
    "knowledgepulse.engines.ray_engine",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_every_export_once(name: str) -> None:
    """Each public package's __all__ names each export once, and each name is there.

    (Its order, constants then classes then functions, is ruff's RUF022.)
    """
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert len(set(exported)) == len(exported)
    for item in exported:
        assert hasattr(module, item), f"{name}.{item}"


def test_the_seeds_api_is_at_the_top_level() -> None:
    """evaluate_value, VectorCache and the weight type come straight from knowledgepulse."""
    import knowledgepulse

    assert (
        knowledgepulse.evaluate_value
        is importlib.import_module("knowledgepulse.value").evaluate_value
    )
    assert knowledgepulse.VectorCache(max_elements=10, dimensions=4).size == 0
    assert knowledgepulse.ScoringWeights(0.25, 0.25, 0.25, 0.25).novelty == 0.25


def test_importing_the_package_loads_no_model() -> None:
    """Nothing heavy is imported until an embedding is needed."""
    import subprocess
    import sys

    code = (
        "import sys, knowledgepulse; "
        "print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
