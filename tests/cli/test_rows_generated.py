"""Rows in = rows out on the chat datasets ``bench/fuzz_rows.py`` generates (issue 27).

A few of its variants, fixed by the seed, through ``kp score --annotate`` to JSON Lines and to
Parquet: as many rows out as in, in order, each with the columns and values it had (same types,
same nested keys), ``kp_error`` on each row with no conversation, exit 0 (1 with such a row).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _bench_module(name: str) -> ModuleType:
    """``bench/NAME.py`` imported by its path: bench/ is scripts, not a package mypy maps."""
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).parents[2] / "bench" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules.setdefault(name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)  # its dataclass finds its module in sys.modules
    return module


fuzz_rows = _bench_module("fuzz_rows")

VARIANTS = ("extras-openai-chat", "extras-sharegpt", "missing-messages", "tool-calls-string", "n1")
"""Every column type of the generator, rows without a conversation, tool calls as JSON text."""


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("name", VARIANTS)
def test_generated_rows_come_back_whole_from_annotate(
    tmp_path: Path, name: str, suffix: str
) -> None:
    """Each input file of the variant, JSON Lines and Parquet, gives back every row unchanged."""
    variant = next(made for made in fuzz_rows.variants(seed=0) if made.name == name)
    for source in fuzz_rows.write_variant(variant, tmp_path):
        out = tmp_path / f"out{suffix}"
        assert fuzz_rows.check(variant, source, "annotate", out) == []
        assert len(fuzz_rows.read_output(out)) == len(variant.rows)
