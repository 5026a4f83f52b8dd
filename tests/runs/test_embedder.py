"""The run layer's choice of embedder: shared on the CPU, refused where the model cannot run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.errors import ParameterConflictError, ScorerParameterError
from knowledgepulse.novelty.static import StaticEmbedder
from knowledgepulse.runs.embedder import (
    check_model,
    chosen_embedder,
    embedder_kind,
    ray_embedder,
    run_embedder,
)


def test_the_bundled_model_on_the_cpu_is_the_process_wide_embedder(tmp_path: Path) -> None:
    """Two runs with the same settings share one embedder (one model, one set of workers)."""
    small = tmp_path / "t.jsonl"
    small.write_text("{}\n")
    assert run_embedder(paths=[str(small)], kind="minilm") is run_embedder(workers=1)


def test_the_static_table_is_the_default_on_the_cpu_and_shared() -> None:
    """Without a kind, a run on the CPU gets the process-wide static table."""
    embedder = run_embedder()
    assert isinstance(embedder, StaticEmbedder)
    assert run_embedder(kind="static") is embedder


@pytest.mark.parametrize(
    ("options", "kind"),
    [
        ({}, "static"),
        ({"device": "cuda"}, "minilm"),
        ({"device": "cuda:1"}, "minilm"),
        ({"model_path": Path("model.onnx")}, "minilm"),
        ({"workers": 2}, "minilm"),
        ({"kind": "static", "workers": 2}, "static"),
        ({"kind": "minilm"}, "minilm"),
    ],
)
def test_an_option_only_the_model_takes_asks_for_the_model(
    options: dict[str, Any], kind: str
) -> None:
    """The static table on the CPU, MiniLM on a GPU or with a model file or workers; a named
    kind wins (and run_embedder then refuses what it cannot take)."""
    assert embedder_kind(**options) == kind


def test_an_onnx_model_on_ray_with_a_gpu_is_refused_by_its_parameter_names(
    tmp_path: Path,
) -> None:
    """An ONNX file runs on the CPU only: the error names model_path and the device."""
    pytest.importorskip("ray")
    with pytest.raises(ScorerParameterError, match=r"model_path is an ONNX file.*device='cuda'"):
        ray_embedder(model_path=tmp_path / "model.onnx", device="cuda")


def test_no_embedder_gives_none() -> None:
    """``no_embedder`` chooses no embedder at all."""
    assert chosen_embedder(no_embedder=True) is None


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"kind": "minilm"}, "model_path and kind choose the embedder, and no_embedder=True"),
        ({"device": "cuda"}, "workers and device choose how the model runs; with no_embedder=True"),
        ({"batch_size": 64}, "batch_size sets how many traces the model embeds at once; with no_"),
    ],
)
def test_no_embedder_with_a_model_setting_is_a_conflict_naming_both(
    settings: dict[str, Any], named: str
) -> None:
    """A setting that chooses or runs a model, given with ``no_embedder``, names both."""
    with pytest.raises(ParameterConflictError) as raised:
        chosen_embedder(no_embedder=True, **settings)
    assert named in str(raised.value)


def test_a_novelty_text_with_no_embedder_is_a_conflict_and_the_default_is_none() -> None:
    """A novelty text is what an embedder embeds: given with ``no_embedder`` it is refused, and
    left out (``None``) it is the default, as the CLI passes it."""
    with pytest.raises(ParameterConflictError) as raised:
        check_model({"no_embedder": True, "novelty_text": "windows"})
    assert "novelty_text chooses the text the embedder embeds; with no_embedder=True" in str(
        raised.value
    )
    check_model({"no_embedder": True, "novelty_text": None})
