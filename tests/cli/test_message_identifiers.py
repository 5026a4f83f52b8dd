"""With redaction asked for, messages about records carry no identifier from them either."""

from __future__ import annotations

import json
from pathlib import Path

from tests.builders import trace_json
from tests.cli.conftest import KpRunner

EMAIL = "jane.doe@example.com"
PHONE = "+1 415 555 0132"


def bad_records(folder: Path) -> Path:
    """A good trace, then one refused: its success a sentence holding an e-mail and a phone."""
    bad = trace_json(trace_id="kp:trace:bad")
    bad["metadata"]["success"] = f"ask {EMAIL} or {PHONE}"
    path = folder / "traces.jsonl"
    path.write_text(json.dumps(trace_json()) + "\n" + json.dumps(bad) + "\n")
    return path


def test_kp_redact_tells_a_refused_record_without_its_identifiers(
    kp: KpRunner, tmp_path: Path
) -> None:
    """kp redact: stderr and the --report hold neither the e-mail nor the phone."""
    report = tmp_path / "report.json"
    out = tmp_path / "out.jsonl"
    run = kp("redact", str(bad_records(tmp_path)), "-o", str(out), "--report", str(report))
    assert run.code == 1
    assert "metadata.success" in run.err
    assert "[REDACTED:email]" in run.err
    for text in (run.out, run.err, report.read_text(), out.read_text()):
        assert EMAIL not in text
        assert "555 0132" not in text


def test_score_with_redact_reports_a_refused_record_without_its_identifiers(
    kp: KpRunner, tmp_path: Path
) -> None:
    """kp score --redact: stderr and the JSON report's problems hold no e-mail or phone."""
    path = bad_records(tmp_path)
    run = kp("score", str(path), "--no-embedder", "-f", "json", "--annotate", "--redact")
    assert run.code == 1
    assert "metadata.success" in run.err
    for text in (run.out, run.err):
        assert EMAIL not in text
        assert "555 0132" not in text


def test_without_redact_a_message_keeps_identifiers_and_hides_secrets(
    kp: KpRunner, tmp_path: Path
) -> None:
    """kp score without --redact: the message still quotes the e-mail (secrets only, as before)."""
    run = kp("score", str(bad_records(tmp_path)), "--no-embedder", "-f", "jsonl")
    assert EMAIL in run.err


def test_privacy_level_private_keeps_identifiers_in_messages(kp: KpRunner, tmp_path: Path) -> None:
    """kp redact --privacy-level private keeps e-mails in records, and so in their messages."""
    out = tmp_path / "out.jsonl"
    run = kp("redact", str(bad_records(tmp_path)), "--privacy-level", "private", "-o", str(out))
    assert EMAIL in run.err


def tau2_results(folder: Path) -> Path:
    """A real tau2 results file whose domain and models hold an e-mail and a phone, as its
    note (``FILE: read as tau2 (... of domain '...', agent ...)``) quotes them."""
    real = Path(__file__).parents[1] / "conformance" / "files" / "tau2" / "filtro_gastelo_10.json"
    results = json.loads(real.read_text(encoding="utf-8"))
    info = results["info"]
    info["environment_info"]["domain_name"] += f" {EMAIL}"
    info["agent_info"]["llm"] += f" {PHONE}"
    path = folder / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    return path


def test_a_files_note_quoting_its_values_loses_identifiers_when_the_run_redacts(
    kp: KpRunner, tmp_path: Path
) -> None:
    """convert, score --annotate and redact with redaction: the note on stderr holds neither
    the e-mail nor the phone (before, it was said as read, identifiers and all)."""
    path = str(tau2_results(tmp_path))
    out = str(tmp_path / "out.jsonl")
    runs = [
        kp("convert", path, "--redact", "-o", out),
        kp("convert", path, "--redact", "--privacy-level", "aggregated", "-o", out),
        kp("score", path, "--annotate", "--no-embedder", "--redact", "-o", out),
        kp("redact", path, "--privacy-level", "aggregated", "-o", out),
    ]
    for run in runs:
        assert "read as tau2" in run.err
        assert "[REDACTED:email]" in run.err
        assert EMAIL not in run.err
        assert "555 0132" not in run.err
