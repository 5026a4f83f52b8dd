"""Real corpus files whose shared output held personal data: each published as a user would."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.conftest import KpRunner

FILES = Path(__file__).parents[1] / "conformance" / "files"


def test_a_home_path_under_google_s_workstation_root_leaves_no_user_name(
    kp: KpRunner, tmp_path: Path
) -> None:
    """ADK's eval set names its case by the file's path, /usr/local/google/home/<user>/...: the
    trace id, the row's id and metadata.source kept it (the home rule wanted /home/ first)."""
    eval_set = FILES / "adk" / "adk_samples_travel_concierge_intrip.test.json"
    assert re.search(r"/usr/local/google/home/\w+/", eval_set.read_text(encoding="utf-8"))
    for extra in ((), ("--to", "messages")):
        out = tmp_path / "out.jsonl"
        run = kp(
            "convert", str(eval_set), "--redact", "--privacy-level", "aggregated", *extra,
            "-o", str(out),
        )  # fmt: skip
        assert run.code == 0, run.err
        written = out.read_text(encoding="utf-8")
        assert "home/user" not in written
        assert "redacted-" in written  # the id is hashed whole, as every id a rule finds in
        assert "home/user" not in run.err
        back = kp("convert", str(out), "-o", str(tmp_path / "back.jsonl"))
        assert back.code == 0, back.err
