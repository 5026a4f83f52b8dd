"""An agent's session id (a UUID naming the run) is shown; a web session's stays hidden."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from knowledgepulse.cli.main import cli
from knowledgepulse.redact import clean_text
from knowledgepulse.redact.walk import redact_value

FILES = sorted(
    path
    for path in (Path(__file__).parents[1] / "conformance" / "files" / "claude-code").glob("*")
    if path.suffix == ".jsonl"
)
UUID = "1af7fc5e-8455-4414-9ccd-011d40f70b2a"


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_a_claude_code_session_id_is_kept_in_every_record(path: Path) -> None:
    """Every record's sessionId (``session_id`` in stream-json output) comes out of redaction
    as it went in, at every level."""
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    key = "session_id" if "session_id" in records[0] else "sessionId"
    with_ids = [record for record in records if key in record]
    assert with_ids
    for level in ("aggregated", "private"):
        for record in with_ids:
            assert redact_value(record, level)[0][key] == record[key]


def test_kp_inspect_shows_the_session_id_its_trace_id_shows() -> None:
    """kp inspect's source records show the sessionId that the trace id above is made of."""
    path = next(path for path in FILES if path.name == "claude_code_viewer_init.jsonl")
    result = CliRunner().invoke(cli, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    trace_id = re.search(r"id kp:trace:(\S+)", shown)
    assert trace_id is not None
    assert f'"sessionId": "{trace_id.group(1)}"' in shown
    assert '"sessionId": "[REDACTED' not in shown


@pytest.mark.parametrize(
    "text",
    [
        f"Cookie: sessionid={UUID}; theme=dark",
        f"Set-Cookie: session={UUID}; Path=/; HttpOnly",
        f"Set-Cookie: sessionid={UUID}; Path=/",
        "sessionid=q8x2kd93jfh3k2l0zmx8c7v6b5n4m3l2",
        '{"sessionid": "q8x2kd93jfh3k2l0zmx8c7v6b5n4m3l2"}',
        f"session_id_token={UUID}",
    ],
)
def test_a_web_session_stays_hidden(text: str) -> None:
    """A cookie's session, a server's random session id, a token named after one: hidden."""
    cleaned = clean_text(text, "private").text
    assert "[REDACTED:password]" in cleaned
    assert UUID not in cleaned
    assert "q8x2kd93" not in cleaned


def test_a_random_session_id_under_a_json_key_stays_hidden() -> None:
    """{"sessionid": <a server's random string>} as a JSON value: hidden by its key."""
    value, _ = redact_value({"sessionid": "q8x2kd93jfh3k2l0zmx8c7v6b5n4m3l2"}, "private")
    assert value == {"sessionid": "[REDACTED:password]"}


def test_kp_inspect_shows_a_terminal_bench_session_id() -> None:
    """An ATIF session_id of words, a start time and a short hex (tbench-<ms>-<hex>) is shown."""
    path = Path(__file__).parents[1] / "conformance" / "files" / "atif"
    path = path / "openagents_tbench_claude_code_regex_log.json"
    session_id = json.loads(path.read_text("utf-8"))["session_id"]
    result = CliRunner().invoke(cli, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert f'"session_id": "{session_id}"' in shown
    assert '"session_id": "[REDACTED' not in shown


@pytest.mark.parametrize(
    "value",
    [
        "tbench-1765491470070-3679a2f1",  # a run's name, but under a password's key
        "run-1765491470070-3679a2f13679a2f1",  # more than 8 hex digits: 64 random bits
    ],
)
def test_a_run_name_shape_is_kept_only_under_a_session_id(value: str) -> None:
    """Words, a time, a short hex: kept under session_id; under a password or a long hex: hidden."""
    assert redact_value({"password": value}, "private")[0] == {"password": "[REDACTED:password]"}
    hidden = redact_value({"session_id": value + "0"}, "private")[0]
    assert hidden == {"session_id": "[REDACTED:password]"}


@pytest.mark.parametrize("run", ["s1", "test-session-123", "session_b", "run_0042", "run-v17-001"])
def test_a_run_named_by_words_and_a_small_number_is_shown(run: str) -> None:
    """A harness's or a fixture's session id of words and a counter names a run: before, "s1"
    and "test-session-123" (Claude Code fixtures' sessionId), and "run-v17-001" (ATIF v1.7's
    example) were hidden as a password."""
    value, _ = redact_value({"sessionId": run, "session_id": run}, "private")
    assert value == {"sessionId": run, "session_id": run}


@pytest.mark.parametrize(
    ("folder", "name", "key"),
    [
        ("hermes-agent", "hermes_agent_54laowang_weixin_fork_merge.json", "session_id"),
        ("opencode", "mantis_opencode_stream_success.jsonl", "sessionID"),
    ],
)
def test_kp_inspect_shows_hermes_agent_and_opencode_session_ids(
    folder: str, name: str, key: str
) -> None:
    """Hermes Agent's (its start time, 6 hex) and OpenCode's (ses_...) session ids name the run
    the trace id shows: before, kp inspect's source record hid them as a password."""
    path = Path(__file__).parents[1] / "conformance" / "files" / folder / name
    first = json.loads(
        path.read_text("utf-8").splitlines()[0] if key == "sessionID" else path.read_text("utf-8")
    )
    result = CliRunner().invoke(cli, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert f'"{key}": "{first[key]}"' in shown
    assert f'"{key}": "[REDACTED' not in shown


@pytest.mark.parametrize(
    "value",
    [
        "20260504_222136_1a2f0e99",  # a Hermes id's shape with more random hex
        "ses_09ec7fc10ffekAtgUWHv9M6Y0T1",  # an OpenCode id's with a letter more
        "09ec7fc10ffekAtgUWHv9M6Y0T",  # its random part without the prefix
    ],
)
def test_a_longer_or_unprefixed_random_session_id_stays_hidden(value: str) -> None:
    """Only the two agents' own shapes are shown: more random characters is a server's session."""
    assert redact_value({"sessionID": value}, "private")[0] == {"sessionID": "[REDACTED:password]"}
