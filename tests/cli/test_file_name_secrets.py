"""A secret in an input file's name is redacted wherever kp shows the name: each problem's
``FILE:LINE`` on stderr and in reports, and the ``file`` of the redaction, selection and
``--against`` reports. The rest of the name is kept: it is how the user finds the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import trace_json
from tests.cli.conftest import KpRunner

TOKEN = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
EMAIL = "zelda.quartz@acme-mail.io"


def _file(directory: Path) -> Path:
    """Two traces (one holding an e-mail, so that kp redact reports it) and a refused record."""
    path = directory / f"runs_{TOKEN}_{EMAIL}.jsonl"
    planted = trace_json(trace_id="kp:trace:planted", objective=f"mail {EMAIL} the invoice")
    clean = trace_json(trace_id="kp:trace:0-clean", objective="mail the invoice")
    refused = trace_json(trace_id="kp:trace:refused")
    refused["metadata"]["success"] = "maybe"
    lines = (json.dumps(document) for document in (planted, clean, refused))
    path.write_text("\n".join(lines) + "\n")
    return path


COMMANDS = {
    "validate": ["validate"],
    "redact --report": ["redact", "-o", "OUT", "--report", "REPORT"],
    "select --report": ["select", "--budget", "1", "--no-embedder", "-o", "OUT",
                        "--report", "REPORT"],
    "dedupe --against --report": ["dedupe", "--against", "FILE", "--no-embedder", "--redact",
                                  "-o", "OUT", "--report", "REPORT"],
}  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_a_secret_in_the_file_name_is_shown_redacted(
    kp: KpRunner, tmp_path: Path, command: str
) -> None:
    """No part of the token is printed or reported; the name around it is, as given."""
    source = _file(tmp_path)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.json"
    places = {"OUT": str(out), "REPORT": str(report), "FILE": str(source)}
    arguments = [places.get(argument, argument) for argument in COMMANDS[command]]

    run = kp(arguments[0], str(source), *arguments[1:])

    shown = run.out + run.err + (report.read_text() if report.exists() else "")
    assert run.code == 1, run.err  # the refused record
    assert TOKEN[4:16] not in shown
    assert f"runs_[REDACTED:api_key]_{EMAIL}.jsonl:3: metadata.success" in run.err
    if report.exists():
        files = set(_files([json.loads(line) for line in report.read_text().splitlines()]))
        assert files == {str(tmp_path / f"runs_[REDACTED:api_key]_{EMAIL}.jsonl")}


def _files(report: object) -> list[object]:
    """Every file a report (JSON, or JSON Lines as a list) names, at any depth."""
    if isinstance(report, list):
        return [file for item in report for file in _files(item)]
    if not isinstance(report, dict):
        return []
    own = [value for key, value in report.items() if key in ("file", "matched_file")]
    return own + [file for value in report.values() for file in _files(value)]


CHAT = Path(__file__).parents[1] / "sources" / "data" / "chat" / "openai_chat.jsonl"


@pytest.mark.parametrize(
    "command",
    [
        ["redact"],
        ["convert", "--redact"],
        ["score", "--annotate", "--redact", "--no-embedder"],
        ["split", "--redact", "--test", "0.5", "--no-embedder"],
    ],
    ids=" ".join,
)
def test_a_run_that_redacts_says_what_a_file_was_read_as_without_its_secret(
    kp: KpRunner, tmp_path: Path, command: list[str]
) -> None:
    """The 'read as' line names the file with its secret redacted when the run redacts."""
    source = tmp_path / f"chat_{TOKEN}.jsonl"
    source.write_text(CHAT.read_text())
    out = tmp_path / ("sets" if command[0] == "split" else "out.jsonl")

    run = kp(command[0], str(source), *command[1:], "-o", str(out))

    assert run.code == 0, run.err
    assert "chat_[REDACTED:api_key].jsonl: read as openai-chat rows" in run.err
    assert TOKEN[4:16] not in run.err
