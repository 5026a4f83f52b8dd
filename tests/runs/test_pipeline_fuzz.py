"""``bench/fuzz_pipelines.py`` on a few files, so that the mode keeps working.

Mutated corpus files through every writing pipeline (convert to traces, ATIF and messages,
redaction, scoring, and reading back what they wrote): no exception that is not kp's own, no
law broken.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from tests.paths import REPO

sys.path.insert(0, str(REPO / "bench"))
from fuzz_loaders import CORPUS
from fuzz_pipelines import fuzz_pipelines

FILES = [
    ("atif", CORPUS / "atif" / "simple_trajectory.json"),
    ("openai-chat", CORPUS / "openai-chat" / "tau_bench_gpt-4o-airline.json"),
    ("sharegpt", CORPUS / "sharegpt" / "glaive_toolcall_en_demo.json"),
]
"""A trajectory, chat rows, and rows holding secrets the redactor finds (a password)."""


def test_mutated_files_through_every_writing_pipeline_break_no_law() -> None:
    """Two mutations of each file, through each pipeline: no failure of any kind."""
    found = fuzz_pipelines(FILES, per_file=2, seed=0)
    assert found.inputs + found.unwritable == 2 * len(FILES)
    assert found.failures == Counter(), "\n".join(found.first.values())


def test_a_secret_left_in_what_is_written_breaks_the_no_secret_law(tmp_path: Path) -> None:
    """The law sees a leak: the input's secret, found by the same rule in the output."""
    from fuzz_pipelines import _leaked
    from knowledgepulse.redact.items import Redactor

    redactor = Redactor("aggregated")
    redactor.types["password"] += 1
    written = tmp_path / "out.jsonl"
    written.write_text('{"text": "login with password=hunter2hunter2"}\n')
    document = {"content": "password=hunter2hunter2"}
    assert _leaked(document, written, redactor) == {"hunter2hunter2"}
    written.write_text('{"text": "login with password=[REDACTED:password]"}\n')
    assert _leaked(document, written, redactor) == set()
