"""The PyTorch backend on the CPU: it loads offline, agrees with fp32 and with the int8 ONNX model,
reads the same windows, and gives the same vectors whatever the batching or the overlap."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID, MiniLMEmbedder
from knowledgepulse.novelty.torch_minilm import TorchMiniLMEmbedder
from knowledgepulse.trace.load import parse_trace
from knowledgepulse.trace.text import actions_text, objective_text
from tests.paths import CORPORA

pytestmark = pytest.mark.embedder

torch = pytest.importorskip(
    "torch",
    reason="torch is not installed (the `gpu` extra; its CPU build: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu)",
)

DATA = Path(__file__).parents[1] / "data"
REFERENCE = json.loads((DATA / "minilm_reference.json").read_text(encoding="utf-8"))


def corpus_texts() -> list[str]:
    """Real objectives and actions: the first traces of each shared corpus (or the tests' own)."""
    texts: list[str] = []
    for name in ("taubench.jsonl", "reflexion_hotpotqa.jsonl"):
        path = CORPORA / name
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()[:6]
        traces = [parse_trace(json.loads(line)) for line in lines]
        texts += [objective_text(trace) for trace in traces]
        texts += [actions_text(trace) for trace in traces[:3]]
    return texts or list(REFERENCE["texts"])


@pytest.fixture(scope="module")
def torch_minilm() -> TorchMiniLMEmbedder:
    embedder = TorchMiniLMEmbedder(device="cpu")
    embedder.load()
    return embedder


@pytest.fixture(scope="module")
def onnx_minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_agrees_with_the_float32_sentence_transformers_model(
    torch_minilm: TorchMiniLMEmbedder,
) -> None:
    """The same float weights as sentence-transformers: cosine >= 0.9999 on the reference."""
    ours = torch_minilm.embed_batch(REFERENCE["texts"])
    theirs = np.array(REFERENCE["embeddings"], dtype=np.float32)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999


def test_agrees_with_the_int8_onnx_model_on_real_traces(
    torch_minilm: TorchMiniLMEmbedder, onnx_minilm: MiniLMEmbedder
) -> None:
    """Against the int8 ONNX path, the novelty parts of real traces: median >= 0.999, min >= 0.998.

    The gap is int8 quantisation (this backend matches fp32 to 1e-6); over all 1,470 objectives
    and actions of the corpora the minimum is 0.9984 (docs/embedding-backends.md).
    """
    texts = corpus_texts()
    ours = torch_minilm.embed_leading(texts, 254)
    theirs = onnx_minilm.embed_leading(texts, 254)
    cosines = (ours * theirs).sum(axis=1)
    assert np.median(cosines) >= 0.999
    assert cosines.min() >= 0.998


def test_long_texts_read_the_same_windows_as_the_onnx_path() -> None:
    """Window counts and the cap are the ONNX embedder's, and the long text's vector agrees."""
    texts = ["refund the booking " * 200, "short", ""]
    ours = TorchMiniLMEmbedder(device="cpu", max_windows=2).embed_windowed(texts)
    theirs = MiniLMEmbedder(max_windows=2).embed_windowed(texts)
    assert ours.windows == theirs.windows == (2, 1, 1)
    assert ours.capped == theirs.capped == (True, False, False)
    assert (ours.vectors * theirs.vectors).sum(axis=1).min() >= 0.996


def test_a_texts_vector_does_not_depend_on_its_batch(torch_minilm: TorchMiniLMEmbedder) -> None:
    """Alone, or padded among longer texts, a text's vector moves by float rounding (1e-6)."""
    texts = ["cancel my reservation", "word " * 120, "a b c d e f g", "x"]
    together = torch_minilm.embed_batch(texts)
    alone = np.concatenate([torch_minilm.embed_batch([text]) for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-6)


@pytest.fixture(scope="module")
def chunked() -> tuple[TorchMiniLMEmbedder, TorchMiniLMEmbedder]:
    """Two chunks of two texts: run one after the other, and overlapped."""
    return (
        TorchMiniLMEmbedder(device="cpu", chunk_texts=2, overlap=False),
        TorchMiniLMEmbedder(device="cpu", chunk_texts=2, overlap=True),
    )


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.text(alphabet="abc xyz.", max_size=40), min_size=1, max_size=7))
def test_overlap_gives_exactly_the_vectors_of_no_overlap(
    chunked: tuple[TorchMiniLMEmbedder, TorchMiniLMEmbedder],
    torch_minilm: TorchMiniLMEmbedder,
    texts: list[str],
) -> None:
    """Tokenizing the next chunk while the model runs is invisible in the output, bit for bit."""
    plain, overlapped = chunked
    expected, found = plain.embed_windowed(texts), overlapped.embed_windowed(texts)
    assert np.array_equal(found.vectors, expected.vectors)
    assert (found.windows, found.capped) == (expected.windows, expected.capped)
    assert np.array_equal(overlapped.embed_leading(texts, 6), plain.embed_leading(texts, 6))
    # Chunks only regroup the batches: the vectors of one chunk, within rounding.
    np.testing.assert_allclose(expected.vectors, torch_minilm.embed_batch(texts), atol=1e-6)


def test_fp16_agrees_with_fp32() -> None:
    """fp16 (the GPU's type, run here on the CPU as a proxy) agrees with fp32 to >= 0.999."""
    texts = REFERENCE["texts"]
    half = TorchMiniLMEmbedder(device="cpu", dtype="float16")
    full = np.array(REFERENCE["embeddings"], dtype=np.float32)
    assert half.backend == "torch-cpu-float16"
    assert (half.embed_batch(texts) * full).sum(axis=1).min() >= 0.999


def test_reports_the_bundled_model_id_and_its_backend(torch_minilm: TorchMiniLMEmbedder) -> None:
    """Caches are shared with the ONNX model (same id); the backend names device and type."""
    assert torch_minilm.model_id == BUNDLED_MODEL_ID
    assert torch_minilm.backend == "torch-cpu-float32"
    assert torch_minilm.dimensions == 384
    assert torch_minilm.embed_batch([]).shape == (0, 384)


def test_own_weights_are_named_by_their_hash(tmp_path: Path) -> None:
    """A model directory of your own gets a ``torch:`` id, never the bundled model's."""
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    embedder = TorchMiniLMEmbedder(device="cpu", model_dir=tmp_path)
    assert embedder.model_id.startswith("torch:")
    assert embedder.model_id != BUNDLED_MODEL_ID


def test_a_directory_without_a_model_fails_clearly(tmp_path: Path) -> None:
    """A wrong ``model_dir`` is an EmbedderUnavailableError naming it, on load."""
    embedder = TorchMiniLMEmbedder(device="cpu", model_dir=tmp_path)
    with pytest.raises(EmbedderUnavailableError, match="cannot read the model in") as error:
        embedder.load()
    assert str(tmp_path) in str(error.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"device": "gpu"}, "device must be one of auto, cpu, cuda or cuda:N"),
        ({"device": "cpu", "dtype": "float8"}, "dtype must be one of float16"),
        ({"device": "cpu", "chunk_texts": 0}, "chunk_texts must be"),
        ({"device": "cpu", "max_batch_tokens": -1}, "max_batch_tokens must be"),
    ],
)
def test_bad_settings_are_refused(options: dict[str, object], message: str) -> None:
    """Each unknown device, dtype or count fails at construction, naming the setting."""
    with pytest.raises(ScorerParameterError, match=message):
        TorchMiniLMEmbedder(**options)  # type: ignore[arg-type]


def test_cuda_without_a_gpu_fails_on_load_with_a_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """No GPU: loading on cuda says so and points at device='cpu'."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    embedder = TorchMiniLMEmbedder(device="cuda")
    assert embedder.backend == "torch-cuda-float16"
    with pytest.raises(EmbedderUnavailableError, match=r"no CUDA GPU found.*use device='cpu'"):
        embedder.load()
