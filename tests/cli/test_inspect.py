"""``kp inspect FILE``: how a file is read, on one screen, or as JSON; bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledgepulse.trace import TraceItem
from tests.cli.conftest import KpRunner
from tests.novelty.test_ring_file import interrupted_save
from tests.sources.helpers import INSPECTED, first_trace

SCREEN = 50
COLUMNS = 100


@pytest.fixture(autouse=True)
def _columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(COLUMNS))


@pytest.mark.parametrize(
    ("path", "source"),
    [pytest.param(path, source, id=path.name) for path, source in INSPECTED.items()],
)
def test_inspect_fits_one_screen_and_names_the_source_and_objective(
    kp: KpRunner, path: Path, source: str
) -> None:
    """At 100 columns the text is at most 50 lines, naming the source and the trace's objective."""
    result = kp("inspect", str(path))
    lines = result.out.splitlines()
    assert len(lines) <= SCREEN, result.out
    assert max(map(len, lines)) <= COLUMNS
    assert lines[1] == f"  source     {source} (recognised)"
    item = first_trace(path)
    if item is None:
        assert result.code == 1
        assert "no trace was read" in result.out
        return
    assert result.code == 0, result.err
    objective = " ".join(item.trace.task.objective.split())
    (shown,) = [line for line in lines if line.startswith("  objective  ")]
    value = shown.removeprefix("  objective  ").split("  <- ")[0]  # values hold no two spaces
    assert objective.startswith(value.removesuffix("…"))


def test_inspect_json_gives_every_part_and_the_records(kp: KpRunner) -> None:
    """--format json is the inspection as data: the source, the parts with fields, the record."""
    path = Path(__file__).parents[2] / "examples" / "datasets" / "sharegpt.jsonl"
    result = kp("inspect", "--format", "json", str(path))
    assert result.code == 0, result.err
    found = json.loads(result.out)
    item = first_trace(path)
    assert isinstance(item, TraceItem)
    parts = {part["name"]: part for part in found["parts"]}
    assert found["source"] == "sharegpt"
    assert parts["objective"]["value"] == item.trace.task.objective
    assert parts["steps"]["field"] == "conversations"
    assert found["source_records"][0]["value"] == item.row.value if item.row else False


def test_inspect_of_a_missing_file_is_a_one_line_error(kp: KpRunner, tmp_path: Path) -> None:
    """A file that is not there: exit 2, the path named, no traceback."""
    result = kp("inspect", str(tmp_path / "nowhere.jsonl"))
    assert result.code == 2
    assert "nowhere.jsonl" in result.err
    assert result.err.startswith("kp: error:")
    assert "Traceback" not in result.err


def test_inspect_of_a_file_no_source_knows_names_the_sources(kp: KpRunner, tmp_path: Path) -> None:
    """No source recognises the record: exit 2, the keys it has and the --from choices."""
    path = tmp_path / "odd.json"
    path.write_text('{"colour": "blue"}')
    result = kp("inspect", str(path))
    assert result.code == 2
    assert "not a trace file this tool knows: an object with keys colour" in result.err
    assert "--from" in result.err
    assert "Traceback" not in result.err


def test_inspect_of_binary_junk_shows_the_bad_record_as_kp_score_does(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record not in UTF-8 is a bad record at its line: exit 1 as in kp score, no traceback."""
    monkeypatch.chdir(tmp_path)  # a short name: the one-screen view folds a long one
    path = Path("junk.jsonl")
    path.write_bytes(b"\xff\xfe\x00garbage\n")
    result = kp("inspect", str(path))
    assert result.code == 1
    assert f"{path}:1: not UTF-8 text" in result.out
    assert "Traceback" not in result.err


def test_inspect_from_names_the_source_and_says_so(kp: KpRunner) -> None:
    """--from reads with the source named, and the header says it was named."""
    path = Path(__file__).parents[2] / "examples" / "datasets" / "hermes.jsonl"
    result = kp("inspect", "--from", "sharegpt", str(path))
    assert result.code == 0, result.err
    assert "  source     sharegpt (named with --from)\n" in result.out


def test_a_busy_file_still_fits_one_screen(kp: KpRunner, tmp_path: Path) -> None:
    """Stray records, errors, warnings and a long run: the steps and records give way."""
    rows = (Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl").read_text()
    first = json.loads(rows.splitlines()[0])
    first["trajectory"] += first["trajectory"][2:] * 6  # a long run
    stray = "".join(f'{{"note {n}": "{"x" * 300}"}}\n' for n in range(5))
    path = tmp_path / "busy.jsonl"
    path.write_text(stray + (json.dumps(first) + "\n") * 3 + rows)
    result = kp("inspect", str(path))
    lines = result.out.splitlines()
    assert len(lines) <= SCREEN, result.out
    assert max(map(len, lines)) <= COLUMNS
    assert "unsure" in result.out
    assert "errors (first 3 of 5)" in result.out
    assert "warnings (first" in result.out
    assert "more steps" in result.out


def test_inspect_of_standard_input_is_refused_with_the_way_round(kp: KpRunner) -> None:
    """``-`` cannot be read twice: exit 2, saying to save it to a file."""
    result = kp("inspect", "-", stdin='{"colour": "blue"}')
    assert result.code == 2
    assert "save it to a file" in result.err


def test_control_characters_in_the_file_are_shown_escaped(kp: KpRunner, tmp_path: Path) -> None:
    """A tool name holding an escape sequence is printed escaped, not obeyed."""
    call = {"id": "c1", "type": "function", "function": {"name": "get\x1b[2J", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"messages": messages}) + "\n")
    result = kp("inspect", str(path))
    assert result.code == 0, result.err
    assert "\x1b" not in result.out
    assert "tool_call get\\x1b[2J" in result.out


def test_a_file_that_gives_only_warnings_points_to_the_warnings(kp: KpRunner) -> None:
    """No trace and no error: the screen says the warnings below say why, not the errors."""
    spans = Path(__file__).parents[1] / "conformance/files/otlp/otlp2jaeger-in-error.json"
    run = kp("inspect", str(spans))
    assert "no trace was read: the warnings below say why" in run.out
    assert "\nerrors (" not in run.out


@pytest.mark.parametrize("source", [(), ("--from", "openai-chat")])
def test_an_empty_file_gives_no_trace_exit_1_with_or_without_from(
    kp: KpRunner, tmp_path: Path, source: tuple[str, ...]
) -> None:
    """kp --help's codes: no trace is 1 (0 with --allow-empty), not 2, detected or named."""
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    run = kp("inspect", str(path), *source)
    assert (run.code, run.err) == (1, "")
    assert "0 records -> 0 traces" in run.out
    assert kp("inspect", str(path), *source, "--allow-empty").code == 0


def test_a_file_of_bad_records_only_is_no_trace_and_shows_its_errors(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every record an error: exit 1 with the errors listed, as with --from; no source named."""
    monkeypatch.chdir(tmp_path)  # a short name: the one-screen view folds a long one
    path = Path("bad.jsonl")
    path.write_text("{bad\n")
    run = kp("inspect", str(path))
    assert run.code == 1
    assert "source     none: the file holds no record" in run.out
    assert f"{path}:1: invalid JSON" in run.out


SECRET = "ghp_4fG7hJ2kL9mN3pQ6rS8tV1wX5yZ0aB2cD4eF"
CHAT = Path(__file__).parents[1] / "sources" / "data" / "chat" / "openai_chat.jsonl"


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_inspect_shows_no_secret_of_the_file_without_being_asked(
    kp: KpRunner, tmp_path: Path, output_format: str
) -> None:
    """Its output is pasted in bug reports: a secret in the records is redacted, as in messages."""
    path = tmp_path / "in.jsonl"
    row = json.loads(CHAT.read_text().splitlines()[0])
    row["notes"] = f"token {SECRET}"
    row["trajectory"][1]["content"] = f"Mail dana@corp.io the key {SECRET}"
    path.write_text(json.dumps(row) + "\n")
    result = kp("inspect", "--format", output_format, str(path))
    assert result.code == 0, result.err
    assert SECRET[:12] not in result.out
    assert "dana@corp.io" in result.out  # an identifier only with --redact
    redacted = kp("inspect", "--format", output_format, "--redact", "--privacy-level",
                  "aggregated", str(path))  # fmt: skip
    assert redacted.code == 0, redacted.err
    assert "dana@corp.io" not in redacted.out
    assert "[REDACTED:email]" in redacted.out


def test_redact_on_a_private_trace_says_that_its_identifiers_were_kept(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A converted trace is private: --redact keeps its e-mail, and says so on stderr as kp
    convert --redact does; before, the output was as without --redact, and nothing was said
    (a trial of option combinations)."""
    path = tmp_path / "in.jsonl"
    row = json.loads(CHAT.read_text().splitlines()[0])
    row["trajectory"][1]["content"] = "Mail dana@corp.io the log"
    path.write_text(json.dumps(row) + "\n")
    kept = "personal identifiers kept in 1 private trace (--privacy-level aggregated redacts"
    redacted = kp("inspect", "--redact", str(path))
    assert redacted.code == 0, redacted.err
    assert "dana@corp.io" in redacted.out
    assert kept in redacted.err
    assert kept not in kp("inspect", str(path)).err  # nothing asked, nothing said
    aggregated = kp("inspect", "--redact", "--privacy-level", "aggregated", str(path))
    assert "dana@corp.io" not in aggregated.out
    assert kept not in aggregated.err


def test_a_vector_cache_is_described_not_read_as_traces(kp: KpRunner, tmp_path: Path) -> None:
    """kp inspect CACHE says which embedder made it, how full it is and its ids (exit 0); before,
    it was read as a trace file ('not UTF-8 text', exit 1)."""
    traces = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
    cache = tmp_path / "seen.kpcache"
    assert kp("score", str(traces), "--cache", str(cache), "--cache-size", "6").code == 0
    run = kp("inspect", str(cache))
    assert run.code == 0, run.err
    assert "--embedder static, --novelty-text objective-actions-terms" in run.out
    assert "6 of 6 vectors count" in run.out
    assert "6 distinct ids" in run.out
    described = json.loads(kp("inspect", "-f", "json", str(cache)).out)
    assert (described["format"], described["live"], described["capacity"]) == ("ring file", 6, 6)
    assert described["repeated_ids"] == 0


def test_a_cache_with_an_interrupted_save_says_what_finishes_it_not_an_option_of_inspect(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kp inspect only reads: it names kp score's --cache as the fix and leaves the file as it
    was; before, it said to run 'without --frozen', an option kp inspect does not have."""
    path = tmp_path / "c.kpcache"
    interrupted_save(path, monkeypatch)
    before = path.read_bytes()
    run = kp("inspect", str(path))
    assert run.code == 2
    assert run.err.startswith(f"kp: error: {path}: a save into this cache was interrupted")
    assert "kp score TRACES --cache FILE, without --frozen" in run.err
    assert "(without --frozen)" not in run.err
    assert path.read_bytes() == before


def test_inspect_of_a_saved_conversation_says_the_chat_format_it_was_read_in(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A conversation file is read by the format its messages are in, which the trace keeps as
    ``metadata.source.format``: the summary says it. Before, it said ``read as conversation (1
    trace)`` alone."""
    path = tmp_path / "saved.json"
    call = {"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "Sunny"}
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
    ]
    path.write_text(json.dumps(messages))
    shown = kp("inspect", str(path))
    assert shown.code == 0, shown.err
    (line,) = [line for line in shown.out.splitlines() if line.startswith("  read as ")]
    assert line == "  read as    conversation (1 trace), in the anthropic format"


def test_inspect_of_a_file_no_source_knows_names_the_from_option(
    kp: KpRunner, tmp_path: Path
) -> None:
    """The error tells a kp user to give --from, not the library's source= spelling."""
    path = tmp_path / "unknown.json"
    path.write_text('{"a": 1}\n', encoding="utf-8")
    run = kp("inspect", str(path))
    assert run.code == 2
    assert "not a trace file this tool knows" in run.err
    assert "name its source (--from, whose help says the shapes each reads)" in run.err
    assert "source=" not in run.err
