"""Save ``openai_chat.jsonl`` as a Hugging Face dataset folder beside it (needs ``datasets``).

    python examples/datasets/make_hf_dataset.py

``datasets.Dataset.save_to_disk`` writes ``openai_chat_hf/``: ``dataset_info.json``,
``state.json`` and ``data-00000-of-00001.arrow`` (an Arrow IPC stream). The JSON builder
``load_dataset("json", ...)`` uses stores the messages, whose shapes differ, as JSON text (Arrow's
``arrow.json`` type); ``kp`` reads the folder, or its ``.arrow`` file, with pyarrow alone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import datasets

HERE = Path(__file__).parent


def main() -> None:
    """Write ``openai_chat_hf/`` from ``openai_chat.jsonl``."""
    with tempfile.TemporaryDirectory() as cache:  # nothing left in ~/.cache
        rows = datasets.Dataset.from_json(str(HERE / "openai_chat.jsonl"), cache_dir=cache)
        rows.save_to_disk(str(HERE / "openai_chat_hf"))
    print(f"openai_chat_hf/: {rows.num_rows} rows")


if __name__ == "__main__":
    main()
