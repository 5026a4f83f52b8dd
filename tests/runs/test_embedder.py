"""The run layer's choice of embedder: shared on the CPU, refused where the model cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import ScorerParameterError
from knowledgepulse.runs.embedder import ray_embedder, run_embedder


def test_the_bundled_model_on_the_cpu_is_the_process_wide_embedder(tmp_path: Path) -> None:
    """Two runs with the same settings share one embedder (one model, one set of workers)."""
    small = tmp_path / "t.jsonl"
    small.write_text("{}\n")
    assert run_embedder(paths=[str(small)]) is run_embedder(workers=1)


def test_an_onnx_model_on_ray_with_a_gpu_is_refused_by_its_parameter_names(
    tmp_path: Path,
) -> None:
    """An ONNX file runs on the CPU only: the error names model_path and the device."""
    pytest.importorskip("ray")
    with pytest.raises(ScorerParameterError, match=r"model_path is an ONNX file.*device='cuda'"):
        ray_embedder(model_path=tmp_path / "model.onnx", device="cuda")
