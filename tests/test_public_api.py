"""The public API: the names each public package exports, written down in a file so that a
change to the surface shows in a diff and is made on purpose, and the rules every export follows."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = [
    "knowledgepulse",
    "knowledgepulse.records",
    "knowledgepulse.trace",
    "knowledgepulse.value",
    "knowledgepulse.novelty",
    "knowledgepulse.novelty.cache",
    "knowledgepulse.evals",
    "knowledgepulse.curation",
    "knowledgepulse.runs",
    "knowledgepulse.sources",
    "knowledgepulse.integrations",
    "knowledgepulse.redact",
    "knowledgepulse.engines.ray_engine",
    "knowledgepulse.runs",
    "knowledgepulse.runs.on_ray",
    "knowledgepulse.testing",
    "knowledgepulse.pytest_plugin",
    "knowledgepulse.errors",
]
SRC = Path(__file__).resolve().parents[1] / "src"
SURFACE_FILE = Path(__file__).parent / "data" / "public_api.txt"
"""Each public package's ``__all__``, one ``package: name`` a line. After a change made on
purpose, rewrite it with ``python tests/test_public_api.py``."""


def surface() -> list[str]:
    """The public names as the packages export them now, one ``package: name`` a line."""
    return [
        f"{name}: {item}" for name in PACKAGES for item in importlib.import_module(name).__all__
    ]


def test_the_public_surface_is_the_one_written_down() -> None:
    """The packages export exactly the names in tests/data/public_api.txt, in that order."""
    assert surface() == SURFACE_FILE.read_text(encoding="utf-8").splitlines()


def test_every_public_module_that_lists_names_is_written_down() -> None:
    """A public module (no ``_`` part in its path) with an ``__all__`` is one of PACKAGES."""
    listing = set()
    for path in (SRC / "knowledgepulse").rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(part.startswith("_") for part in parts) and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
        ):
            listing.add(".".join(parts))
    assert listing <= set(PACKAGES), sorted(listing - set(PACKAGES))


@pytest.mark.parametrize("name", PACKAGES)
def test_every_export_exists_and_is_ours_and_public(name: str) -> None:
    """Each exported name resolves and is not private; its class or function is defined here.

    Nothing of a third party is re-exported as if it were ours, and no ``_private`` name leaks.
    """
    package = importlib.import_module(name)
    for exported in package.__all__:
        assert not exported.startswith("_") or exported == "__version__", f"{name}.{exported}"
        value = getattr(package, exported)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("knowledgepulse."), f"{name}.{exported}"
        elif inspect.ismodule(value):
            assert value.__name__.startswith("knowledgepulse."), f"{name}.{exported}"


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
    code = (
        "import sys, knowledgepulse; "
        "print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


if __name__ == "__main__":
    SURFACE_FILE.write_text("".join(f"{line}\n" for line in surface()), encoding="utf-8")


def test_the_top_package_offers_a_completer_its_public_names_only() -> None:
    """``dir(knowledgepulse)`` (what IPython completes) is ``__all__``, not ``importlib``."""
    import knowledgepulse

    offered = {name for name in dir(knowledgepulse) if name[:2] != "__"}
    assert offered == {*knowledgepulse.__all__, "integrations"} - {"__version__"}
