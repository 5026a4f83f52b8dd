"""The static embedder: the shipped table is the pinned one, its vectors obey the embedder's laws,
model2vec reads it as its own, and a damaged or mismatched table is refused."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from safetensors.numpy import load_file
from tokenizers import Tokenizer

import knowledgepulse.novelty.static as static_module
from knowledgepulse.errors import EmbedderUnavailableError, ScorerParameterError
from knowledgepulse.novelty.minilm import BUNDLED_MODEL_ID, bundled_tokenizer_path, file_sha256
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.settings import DEFAULT_MAX_WINDOWS, STATIC_BATCH_SIZE, WINDOW_PIECES
from knowledgepulse.novelty.static import (
    STATIC_MODEL_DIR,
    STATIC_MODEL_ID,
    STATIC_MODEL_SHA256,
    StaticEmbedder,
)
from knowledgepulse.novelty.windows import unit_rows
from knowledgepulse.testing import HashingEmbedder
from knowledgepulse.value import TraceValueScorer

pytestmark = pytest.mark.embedder

TEXTS = st.text(st.characters(codec="utf-8"), max_size=200)
SAMPLES = [
    "Refund the order #W2378156 to the original payment method.",
    "cancel reservation ZFA04Y and refund it",
    "Which magazine was started first, Arthur's Magazine or First for Women?",
    "",
    "🙂 ünïcödé \x00 text",
]


# Long texts too, so that reading the first pieces tokenizes a prefix and grows it.
LONG_TEXTS = st.lists(
    st.sampled_from(["refund", "order", "#W2378156", "ünïcödé", "unbelievably", "🙂", ",", "\n"]),
    max_size=1500,
).map(" ".join)


@functools.cache
def plain_parts() -> tuple[NDArray[np.int8], NDArray[np.float32], Tokenizer]:
    """The shipped table's rows and scale, and the bundled tokenizer, read on their own."""
    tensors = load_file(str(STATIC_MODEL_DIR / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(bundled_tokenizer_path()))
    tokenizer.no_truncation()
    return tensors["embeddings"], tensors["weights"].astype(np.float32), tokenizer


def plain_vectors(texts: list[str], max_pieces: int | None = None) -> NDArray[np.float32]:
    """The static embedder's definition, text by text from the whole text's word pieces: the
    unit mean of their rows weighted by the table's scale, ``[UNK]`` left out."""
    rows, scale, tokenizer = plain_parts()
    sums = np.zeros((len(texts), rows.shape[1]), dtype=np.float32)
    for row, text in enumerate(texts):
        ids = np.array(tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.intp)
        ids = ids[:max_pieces]
        ids = ids[ids != tokenizer.token_to_id("[UNK]")]
        if len(ids):
            unique, counts = np.unique(ids, return_counts=True)
            weights = (counts * scale[unique]).astype(np.float32)
            sums[row] = weights @ rows[unique].astype(np.float32)
    return unit_rows(sums)


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    embedder = StaticEmbedder()
    embedder.load()
    return embedder


def test_the_shipped_table_is_the_one_the_build_script_printed() -> None:
    """model.safetensors has the sha256 pinned in STATIC_MODEL_SHA256 (rebuild: see the docs)."""
    assert file_sha256(STATIC_MODEL_DIR / "model.safetensors") == STATIC_MODEL_SHA256


def test_the_shipped_table_names_itself_and_its_size(static: StaticEmbedder) -> None:
    """Caches record the table's name; its vectors have the table's width."""
    assert static.model_id == STATIC_MODEL_ID
    assert static.embed_batch(SAMPLES).shape == (len(SAMPLES), static.dimensions)


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(TEXTS, max_size=8))
def test_a_batch_gives_each_text_what_it_gets_alone(
    static: StaticEmbedder, texts: list[str]
) -> None:
    """A text's vector does not depend on the other texts of the call."""
    together = static.embed_batch(texts).reshape(len(texts), static.dimensions)
    for row, text in zip(together, texts, strict=True):
        np.testing.assert_array_equal(row, static.embed_batch([text])[0])


@settings(max_examples=25, deadline=None)
@given(
    texts=st.lists(TEXTS | LONG_TEXTS, max_size=6),
    max_pieces=st.sampled_from([None, 1, 7, 254]),
)
def test_the_vectors_are_the_plain_text_by_text_ones_to_the_bit(
    static: StaticEmbedder, texts: list[str], max_pieces: int | None
) -> None:
    """The batched path (prefixes, one count of pieces for all texts) is the plain definition."""
    found = (
        static.embed_batch(texts) if max_pieces is None else static.embed_leading(texts, max_pieces)
    )
    np.testing.assert_array_equal(
        found.reshape(len(texts), static.dimensions), plain_vectors(texts, max_pieces)
    )


def test_a_call_longer_than_a_batch_gives_each_text_what_it_gets_alone(
    static: StaticEmbedder,
) -> None:
    """Texts past the first batch of a call (it is tokenized a batch at a time) are not shifted."""
    texts = [f"{SAMPLES[i % len(SAMPLES)]} {i}" for i in range(STATIC_BATCH_SIZE + 3)]
    together = static.embed_batch(texts)
    for index in (0, STATIC_BATCH_SIZE - 1, STATIC_BATCH_SIZE, len(texts) - 1):
        np.testing.assert_array_equal(together[index], static.embed_batch([texts[index]])[0])


def test_a_new_embedder_gives_the_same_vectors(static: StaticEmbedder) -> None:
    """Deterministic: another instance (another load of the table) gives identical vectors."""
    np.testing.assert_array_equal(
        StaticEmbedder().embed_batch(SAMPLES), static.embed_batch(SAMPLES)
    )


@settings(max_examples=30, deadline=None)
@given(text=TEXTS)
def test_vectors_are_unit_length_or_zero_for_a_text_without_word_pieces(
    static: StaticEmbedder, text: str
) -> None:
    """Every vector has length 1, or 0 for a text without word pieces (an empty one, say)."""
    norm = float(np.linalg.norm(static.embed_batch([text])[0]))
    assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0
    if not text.strip():
        assert norm == 0.0


def test_embed_leading_reads_only_the_first_pieces(static: StaticEmbedder) -> None:
    """The first N word pieces of a long text give the vector of those pieces alone."""
    start = "refund the order"
    pieces = Tokenizer.from_file(str(bundled_tokenizer_path())).encode(start).ids[1:-1]
    leading = static.embed_leading([f"{start} and then book a flight to paris"], len(pieces))
    np.testing.assert_allclose(leading, static.embed_batch([start]), atol=1e-6)


def test_a_text_past_minilms_windows_is_read_as_far_as_they_reach(static: StaticEmbedder) -> None:
    """A whole text is read as MiniLM reads it by default: the pieces of its first 32 windows,
    the rest not at all (a trace of megabytes costs what those pieces do)."""
    words = ["order"] * (DEFAULT_MAX_WINDOWS * WINDOW_PIECES)  # one word piece each
    tokenizer = Tokenizer.from_file(str(bundled_tokenizer_path()))
    assert len(tokenizer.encode(" ".join(words)).ids) - 2 == len(words)
    past = " ".join([*words, *["paris"] * 100])
    np.testing.assert_array_equal(static.embed_batch([past]), static.embed_batch([" ".join(words)]))
    last_one_counts = static.embed_batch([" ".join([*words[:-1], "paris"])])
    assert not np.array_equal(last_one_counts, static.embed_batch([" ".join(words)]))


def test_similar_texts_are_nearer_than_unrelated_ones(static: StaticEmbedder) -> None:
    """Two refund requests are closer to each other than to a trivia question."""
    vectors = static.embed_batch(SAMPLES[:3])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_model2vec_reads_the_table_and_gives_the_same_vectors(
    static: StaticEmbedder, tmp_path: Path
) -> None:
    """The table is in model2vec's format: its StaticModel embeds as StaticEmbedder does."""
    model2vec = pytest.importorskip("model2vec")
    for name in ("model.safetensors", "config.json"):
        shutil.copyfile(STATIC_MODEL_DIR / name, tmp_path / name)
    shutil.copyfile(bundled_tokenizer_path(), tmp_path / "tokenizer.json")
    model = model2vec.StaticModel.from_pretrained(tmp_path)
    theirs = model.encode(SAMPLES[:3], max_length=None, use_multiprocessing=False)
    np.testing.assert_allclose(theirs, static.embed_batch(SAMPLES[:3]), atol=1e-5)


def test_a_damaged_table_is_refused_with_the_fix(tmp_path: Path) -> None:
    """A table whose bytes changed fails to load, naming both checksums and the reinstall."""
    shutil.copytree(STATIC_MODEL_DIR, tmp_path / "static")
    table = tmp_path / "static" / "model.safetensors"
    data = bytearray(table.read_bytes())
    data[-1] ^= 0xFF
    table.write_bytes(bytes(data))
    with pytest.raises(EmbedderUnavailableError, match="--force-reinstall") as error:
        StaticEmbedder(tmp_path / "static", sha256=STATIC_MODEL_SHA256).load()
    assert STATIC_MODEL_SHA256 in str(error.value)


def test_another_folder_is_named_by_its_checksum(tmp_path: Path) -> None:
    """A model2vec folder of one's own gets ``static:`` and its sha256's start as its id."""
    shutil.copytree(STATIC_MODEL_DIR, tmp_path / "mine")
    assert StaticEmbedder(tmp_path / "mine").model_id == f"static:{STATIC_MODEL_SHA256[:16]}"


def test_a_missing_folder_says_so(tmp_path: Path) -> None:
    """A folder without model.safetensors fails to load with its path."""
    with pytest.raises(EmbedderUnavailableError, match="does not exist"):
        StaticEmbedder(tmp_path).embed_batch(["text"])


def test_a_count_of_pieces_that_is_not_positive_is_refused(static: StaticEmbedder) -> None:
    """embed_leading names max_pieces when it is zero or negative."""
    with pytest.raises(ScorerParameterError, match="max_pieces"):
        static.embed_leading(["text"], 0)


def test_the_shipped_table_maps_its_novelty_onto_minilms_scale(static: StaticEmbedder) -> None:
    """The default novelty text has a calibration onto the bundled MiniLM, lowering mid values
    (the static scale runs higher: docs/novelty.md); other texts keep the table's own scale."""
    calibration = static.novelty_calibration(DEFAULT_NOVELTY_TEXT)
    assert calibration is not None
    assert calibration.onto == BUNDLED_MODEL_ID
    assert calibration(0.5) < 0.5
    assert static.novelty_calibration("windows") is None


def test_a_malformed_calibration_is_refused_with_the_file(tmp_path: Path) -> None:
    """A config.json whose novelty_calibration does not rise is an EmbedderUnavailableError."""
    shutil.copytree(STATIC_MODEL_DIR, tmp_path, dirs_exist_ok=True)
    config = json.loads((tmp_path / "config.json").read_text())
    config["novelty_calibration"]["knots"][DEFAULT_NOVELTY_TEXT] = [[0, 0], [0.5, 0.9], [0.6, 0.1]]
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(EmbedderUnavailableError, match=r"config\.json.*novelty_calibration"):
        StaticEmbedder(tmp_path).novelty_calibration(DEFAULT_NOVELTY_TEXT)


def test_a_cosine_threshold_on_minilms_scale_is_lowered_to_the_tables_own(
    static: StaticEmbedder,
) -> None:
    """The static table's cosines run higher than MiniLM's: a threshold set on MiniLM's scale
    is taken to the cosine whose novelty the calibration maps onto the same one."""
    scorer = TraceValueScorer(embedder=static)
    for reference in (0.65, 0.95):
        own = scorer.cosine_of(reference)
        assert own < reference
        assert scorer.novelty_of(own) == pytest.approx(1.0 - reference, abs=1e-9)
    assert TraceValueScorer(embedder=HashingEmbedder()).cosine_of(0.65) == 0.65


def test_a_text_repeated_in_a_call_is_tokenized_once(
    static: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of one task share their objective: it is read once and each copy gets its vector."""
    read: list[str] = []
    encode = static._encode

    def counted(texts: list[str]) -> list[list[int]]:
        read.extend(texts)
        return encode(texts)

    monkeypatch.setattr(static, "_encode", counted)
    texts = [SAMPLES[0], SAMPLES[1], SAMPLES[0], SAMPLES[0]]
    found = static.embed_leading(texts, 254)
    assert sorted(read) == sorted(SAMPLES[:2])
    np.testing.assert_array_equal(found, plain_vectors(texts, 254))


def test_the_table_and_its_config_are_read_once_while_they_are_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second embedder (each scorer asks the config) reads no file; a changed one is read.

    Before, each scorer read config.json and each embedder the whole table (about 40 ms).
    """
    shutil.copytree(STATIC_MODEL_DIR, tmp_path, dirs_exist_ok=True)
    first = StaticEmbedder(tmp_path)
    first.load()
    calibration = first.novelty_calibration(DEFAULT_NOVELTY_TEXT)
    read: list[str] = []
    real_read_text, real_read_bytes = Path.read_text, Path.read_bytes

    def counted_text(path: Path, *args: Any, **kwargs: Any) -> str:
        read.append(path.name)
        return real_read_text(path, *args, **kwargs)

    def counted_bytes(path: Path) -> bytes:
        read.append(path.name)
        return real_read_bytes(path)

    monkeypatch.setattr(Path, "read_text", counted_text)
    monkeypatch.setattr(Path, "read_bytes", counted_bytes)
    monkeypatch.setattr(static_module, "file_sha256", lambda path: read.append(path.name))
    monkeypatch.setattr(static_module, "open_tokenizer", lambda *args: read.append("tokenizer"))
    monkeypatch.setattr(static_module, "optional_module", lambda *args: read.append("table"))
    second = StaticEmbedder(tmp_path)
    second.load()
    assert second.novelty_calibration(DEFAULT_NOVELTY_TEXT) == calibration
    assert read == []
    np.testing.assert_array_equal(second.embed_batch(SAMPLES), first.embed_batch(SAMPLES))
    (tmp_path / "config.json").write_text('{"normalize": false}')
    with pytest.raises(EmbedderUnavailableError, match="normalize: false"):
        StaticEmbedder(tmp_path).load()
    assert read.count("config.json") == 1  # changed, so read again
