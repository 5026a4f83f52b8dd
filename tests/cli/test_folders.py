"""A folder given to a trace command reads the files in it (``~/.codex/sessions/``, a Claude Code
project's folder): the same as naming them, in path order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowledgepulse import select
from knowledgepulse.records import Location, Problem
from knowledgepulse.sources._read import STRAY, STRAY_HEAD, STRAY_LEAD, UNKEPT
from tests.cli.conftest import KpRunner
from tests.paths import REPO

TRACES = REPO / "examples" / "traces" / "traces.jsonl"
ROWS = REPO / "examples" / "datasets"
SESSION = (
    REPO / "tests" / "conformance" / "files" / "codex" / "agent_history_codex_0.135_exec.jsonl"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Traces, rows of two formats and a Codex session at three depths; a config to leave out."""
    root = tmp_path / "runs"
    (root / "2026" / "11").mkdir(parents=True)
    shutil.copy(TRACES, root / "b-traces.jsonl")
    shutil.copy(ROWS / "anthropic.jsonl", root / "2026" / "anthropic.jsonl")
    shutil.copy(ROWS / "openai_chat.parquet", root / "a-chat.parquet")
    shutil.copy(SESSION, root / "2026" / "11" / "rollout.jsonl")
    (root / "config.yaml").write_text("model: x\n")
    return root


def in_order(root: Path) -> list[str]:
    return [
        str(root / name)
        for name in ("2026/11/rollout.jsonl", "2026/anthropic.jsonl", "a-chat.parquet")
    ] + [str(root / "b-traces.jsonl")]


def rows_in(parquet: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(parquet).metadata.num_rows)


def ids(run_out: str) -> list[str]:
    return [row["id"] for row in map(json.loads, run_out.splitlines())]


def test_a_folder_scores_as_its_files_named_in_path_order(kp: KpRunner, folder: Path) -> None:
    by_folder = kp("score", "--no-embedder", str(folder), "-f", "jsonl")
    by_name = kp("score", "--no-embedder", *in_order(folder), "-f", "jsonl")
    assert by_folder.code == by_name.code == 0, by_folder.err
    assert by_folder.out == by_name.out
    # The session's one trace, then a trace a line or a row of each file.
    lines = [len(path.read_text().splitlines()) for path in (ROWS / "anthropic.jsonl", TRACES)]
    assert (
        len(ids(by_folder.out)) == 1 + lines[0] + rows_in(ROWS / "openai_chat.parquet") + lines[1]
    )


def test_rows_in_a_folder_are_written_back_with_every_file_named(
    kp: KpRunner, folder: Path, tmp_path: Path
) -> None:
    """``--annotate`` gives back each file's rows (rows in = rows out), as for the files named."""
    rows = tmp_path / "rows"
    rows.mkdir()
    shutil.copy(ROWS / "anthropic.jsonl", rows / "a.jsonl")
    shutil.copy(ROWS / "openai_chat.jsonl", rows / "b.jsonl")
    out = tmp_path / "out.jsonl"
    run = kp("score", "--no-embedder", "--from", "auto", str(rows), "--annotate", "-o", str(out))
    assert run.code == 0, run.err
    written = out.read_text().splitlines()
    given = [
        line
        for name in ("a.jsonl", "b.jsonl")
        for line in (rows / name).read_text().split("\n")
        if line
    ]
    assert len(written) == len(given) == 5
    own = [{k: v for k, v in json.loads(line).items() if k[:3] != "kp_"} for line in written]
    assert own == [json.loads(line) for line in given]
    assert all(json.loads(line)["kp_score"] is not None for line in written)


def test_the_python_api_reads_a_folder_as_the_cli_does(folder: Path) -> None:
    by_folder = select(folder, budget=4)
    by_name = select(in_order(folder), budget=4)
    picked = [scored.item.trace.id for scored in by_folder.selected]
    assert picked == [scored.item.trace.id for scored in by_name.selected]
    assert len(picked) == 4


def test_a_folder_with_nothing_to_read_is_a_usage_error(kp: KpRunner, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("model: x\n")
    run = kp("score", str(tmp_path))
    assert run.code == 2
    assert run.err.startswith(f"kp: error: {tmp_path}: is a folder holding no file kp reads")


KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
PROMPT = "my plan for the acme merger"


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    """A ``~/.codex``: a session, and beside it an API key and a prompt history no source reads."""
    home = tmp_path / ".codex"
    (home / "sessions" / "2026" / "11").mkdir(parents=True)
    shutil.copy(SESSION, home / "sessions" / "2026" / "11" / "rollout.jsonl")
    (home / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": KEY}))
    history = [{"session_id": "s1", "ts": n, "text": f"{PROMPT} {n}"} for n in range(3)]
    (home / "history.jsonl").write_text("".join(json.dumps(row) + "\n" for row in history))
    return home


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (("select", "--no-embedder", "--budget", "50"), "out.jsonl"),
        (("select", "--no-embedder", "--budget", "50"), "out.parquet"),
        (("score", "--no-embedder", "--annotate"), "out.jsonl"),
        (("score", "--no-embedder", "--annotate"), "out.parquet"),
        (("convert", "--to", "messages"), "out.jsonl"),
        (("redact",), "out.jsonl"),
    ],
)
def test_what_no_source_reads_in_a_folder_is_told_never_written_back(
    kp: KpRunner, codex_home: Path, tmp_path: Path, command: tuple[str, ...], output: str
) -> None:
    out = tmp_path / output
    run = kp(*command, str(codex_home), "-o", str(out))
    assert run.code == 0, run.err  # a stray is no record of the input: a warning, told once
    written = out.read_bytes()
    assert KEY.encode() not in written
    assert PROMPT.encode() not in written
    assert told_strays(run.err) == [
        str(codex_home / "auth.json"),
        str(codex_home / "history.jsonl"),
    ]


def told_strays(err: str) -> list[str]:
    return [line.split(": warning: ")[0] for line in err.splitlines() if line.endswith(STRAY)]


@pytest.mark.parametrize("output", ["out.jsonl", "out.parquet"])
def test_a_folder_read_with_a_source_named_writes_back_no_file_that_gave_no_row(
    kp: KpRunner, codex_home: Path, tmp_path: Path, output: str
) -> None:
    """``--from openai-chat`` names the rows' form, not the files: one that gives no row (the
    key's, the history's, here the session's too) is in no output. Claimed by the source named,
    each record is the user's to hear of: an error, told."""
    out = tmp_path / output
    run = kp(
        *("score", "--no-embedder", "--from", "openai-chat", "--annotate"),
        *(str(codex_home), "-o", str(out)),
    )
    assert run.code == 1, run.err
    assert KEY.encode() not in out.read_bytes()
    assert PROMPT.encode() not in out.read_bytes()
    rows = rows_in(out) if output.endswith(".parquet") else len(out.read_text().splitlines())
    assert rows == 0  # no file gave a row
    unkept = {line.split(":")[0] for line in run.err.splitlines() if line.endswith(UNKEPT)}
    assert unkept == {str(codex_home / "auth.json"), str(codex_home / "history.jsonl")} | {
        str(codex_home / "sessions" / "2026" / "11" / "rollout.jsonl")
    }
    assert not told_strays(run.err)


def test_a_found_trace_file_of_invalid_traces_is_an_error_not_a_stray(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A ReasoningTrace file in a folder whose every trace is invalid is the user's, not a
    stray: ``kp validate traces/`` fails on it, each record told."""
    traces = tmp_path / "traces"
    traces.mkdir()
    shutil.copy(TRACES, traces / "a.jsonl")
    broken = [json.loads(line) for line in TRACES.read_text().splitlines()[:2]]
    for document in broken:
        del document["outcome"]
    (traces / "b.jsonl").write_text("".join(json.dumps(document) + "\n" for document in broken))
    run = kp("validate", str(traces))
    assert run.code == 1, run.err
    told = [line for line in run.err.splitlines() if line.startswith(str(traces / "b.jsonl"))]
    assert [line.split(":")[1] for line in told] == ["1", "2"]
    assert not told_strays(run.err)


def test_a_split_of_a_folder_writes_no_stray_to_its_unread_part(
    kp: KpRunner, codex_home: Path, tmp_path: Path
) -> None:
    """``kp split`` writes the rows that gave no trace to ``unread.jsonl``: never a stray."""
    parts = tmp_path / "parts"
    run = kp("split", "--no-embedder", str(codex_home), "--test", "0.5", "-o", str(parts))
    assert run.code == 0, run.err
    assert sorted(path.name for path in parts.iterdir()) == ["test.jsonl", "train.jsonl"]
    written = b"".join(path.read_bytes() for path in parts.iterdir())
    assert KEY.encode() not in written
    assert PROMPT.encode() not in written


GEMINI_SESSION = (
    REPO
    / "tests"
    / "conformance"
    / "files"
    / "gemini-cli"
    / "agentcmd_session-2025-10-29T10-36-9c9a14e1.json"
)
TOKEN = "ya29." + "a0AfB_byC3dE4fG5hI6jK7lM8nO9pQ" * 2


@pytest.fixture
def gemini_home(tmp_path: Path) -> Path:
    """A ``~/.gemini``: a session under ``tmp/<project>/chats/``, and beside it the settings, the
    OAuth credentials, the install id and the project's prompt log (``logs.json``, the user's
    prompts alone, as Gemini CLI's ``Logger`` writes them): no run."""
    home = tmp_path / ".gemini"
    chats = home / "tmp" / "0f1e2d3c" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(GEMINI_SESSION, chats / "session-2025-10-29T10-36-9c9a14e1.json")
    (home / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "x"}}}))
    credentials = {"access_token": TOKEN, "refresh_token": "1//0g", "token_type": "Bearer"}
    (home / "oauth_creds.json").write_text(json.dumps(credentials))
    (home / "installation_id").write_text("4b9e2d1a-0c3f-4e5d-8a7b-6c5d4e3f2a1b\n")
    prompts = [
        {"sessionId": "s1", "messageId": n, "type": "user", "message": f"{PROMPT} {n}"}
        for n in range(2)
    ]
    (home / "tmp" / "0f1e2d3c" / "logs.json").write_text(json.dumps(prompts))
    return home


@pytest.mark.parametrize("command", [("convert",), ("score", "--no-embedder", "--annotate")])
def test_a_gemini_folder_gives_its_sessions_traces_and_nothing_else(
    kp: KpRunner, gemini_home: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """``kp convert ~/.gemini/``: each session is a trace; the settings, the credentials and
    the prompt log are told as files that give no trace, and written to no output."""
    out = tmp_path / "out.jsonl"
    run = kp(*command, str(gemini_home), "-o", str(out))
    assert run.code == 0, run.err  # the strays are warnings, one a file
    written = out.read_text()
    assert [row["id"] for row in map(json.loads, written.splitlines())] == [
        "kp:trace:9c9a14e1-2b8f-443b-8cec-61516ff39741"
    ]
    assert TOKEN not in written
    assert PROMPT not in written
    assert set(told_strays(run.err)) == {
        str(gemini_home / "settings.json"),
        str(gemini_home / "oauth_creds.json"),
        str(gemini_home / "tmp" / "0f1e2d3c" / "logs.json"),
    }


def test_a_file_named_keeps_its_rows_of_an_unknown_shape(kp: KpRunner, codex_home: Path) -> None:
    """Rows in = rows out: what the user named is theirs, written back with ``kp_error``."""
    out = codex_home.parent / "out.jsonl"
    history = codex_home / "history.jsonl"
    run = kp("score", "--no-embedder", str(history), "--annotate", "-o", str(out))
    assert run.code == 1
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["text"] for row in written] == [f"{PROMPT} {n}" for n in range(3)]
    assert all(row["kp_error"].startswith("not a trace file") for row in written)


def test_a_table_in_a_folder_keeps_its_rows_of_an_unknown_shape(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A Parquet file in a folder is a dataset's shard: its rows go back, as a named file's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shards = tmp_path / "data"
    shards.mkdir()
    pq.write_table(pa.table({"x": [1, 2]}), shards / "train-0.parquet")
    out = tmp_path / "out.parquet"
    run = kp("score", "--no-embedder", str(shards), "--annotate", "-o", str(out))
    assert run.code == 1
    assert pq.read_table(out).column("x").to_pylist() == [1, 2]


def test_the_python_api_lets_a_folders_strays_go(codex_home: Path) -> None:
    from knowledgepulse import TraceValueScorer, annotate

    told: list[str] = []
    rows = annotate(
        codex_home,
        scorer=TraceValueScorer(embedder=None),
        on_problem=lambda problem: told.append(str(problem)),
    )
    assert len(rows) == 1
    assert KEY not in json.dumps(rows)
    assert PROMPT not in json.dumps(rows)
    assert told == [
        f"{codex_home / name}: warning: {STRAY}" for name in ("auth.json", "history.jsonl")
    ]
    named = annotate(codex_home / "history.jsonl", scorer=TraceValueScorer(embedder=None))
    assert [row["text"] for row in named] == [f"{PROMPT} {n}" for n in range(3)]


def test_what_many_files_say_alike_is_told_for_the_first_few_then_counted(
    tmp_path: Path,
) -> None:
    """10,000 session files read alike say so in four lines; a file that says else is told."""
    from knowledgepulse import sources
    from knowledgepulse.trace import TraceItem

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for n in range(6):
        shutil.copy(SESSION, sessions / f"r{n}.jsonl")
    shutil.copy(ROWS / "anthropic.jsonl", sessions / "s-rows.jsonl")
    said: list[str] = []
    items = list(sources.read(sessions, notes=said.append))
    alike = "read as codex (1 trace)"
    assert said[:3] == [f"{sessions / f'r{n}.jsonl'}: {alike}" for n in range(3)]
    assert said[3].startswith(f"{sessions / 's-rows.jsonl'}: read as anthropic rows")
    assert said[4:] == [
        f"... and 3 more files: {alike} (first at {sessions / 'r3.jsonl'}, "
        f"last at {sessions / 'r5.jsonl'})"
    ]
    assert sum(1 for item in items if isinstance(item, TraceItem)) == 6 + 2


def test_a_folder_given_as_a_reference_reads_as_its_files_named(
    kp: KpRunner, tmp_path: Path
) -> None:
    """``kp dedupe NEW --against REF``: REF may be a folder, as an input may."""
    reference = tmp_path / "ref"
    (reference / "part").mkdir(parents=True)
    lines = TRACES.read_text().splitlines(keepends=True)
    (reference / "a.jsonl").write_text("".join(lines[:3]))
    (reference / "part" / "b.jsonl").write_text("".join(lines[3:5]))
    by = {
        "folder": ["--against", str(reference)],
        "name": [
            *("--against", str(reference / "a.jsonl")),
            *("--against", str(reference / "part" / "b.jsonl")),
        ],
    }
    runs = {
        how: kp("dedupe", "--no-embedder", str(TRACES), *against) for how, against in by.items()
    }
    assert runs["folder"].code == runs["name"].code == 0, runs["folder"].err
    assert runs["folder"].out == runs["name"].out
    assert "5 reference items: 5 removed" in runs["folder"].err
    assert len(runs["folder"].out.splitlines()) == len(lines) - 5


def test_a_shard_in_a_folder_keeps_its_bad_first_rows(kp: KpRunner, tmp_path: Path) -> None:
    """Rows no source recognises before the first one a source does are the shard's rows."""
    shards = tmp_path / "data"
    shards.mkdir()
    given = ['{"foo": 1}\n', *(ROWS / "openai_chat.jsonl").read_text().splitlines(keepends=True)]
    (shards / "a.jsonl").write_text("".join(given))
    out = tmp_path / "out.jsonl"
    run = kp("score", "--no-embedder", str(shards), "--annotate", "-o", str(out))
    assert run.code == 1
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [{k: v for k, v in row.items() if k[:3] != "kp_"} for row in written] == [
        json.loads(line) for line in given
    ]
    assert STRAY not in run.err


def test_a_found_file_holds_a_few_unknown_records_for_a_later_one_to_decide(
    tmp_path: Path,
) -> None:
    """Up to STRAY_LEAD are held (rows, as a record decides); past it, a file no source claims
    is skipped, and one a source claims read on."""
    from knowledgepulse import sources
    from knowledgepulse.trace import TraceItem

    chat = (ROWS / "openai_chat.jsonl").read_text().splitlines()
    for before in (STRAY_LEAD, STRAY_LEAD + 1):
        (tmp_path / str(before)).mkdir()
        rows = [json.dumps({"n": n}) for n in range(before)] + chat
        (tmp_path / str(before) / "a.jsonl").write_text("\n".join(rows) + "\n")
    held = list(sources.read(tmp_path / str(STRAY_LEAD)))
    assert [item.record is not None for item in held if isinstance(item, Problem)] == [
        True
    ] * STRAY_LEAD
    assert sum(isinstance(item, TraceItem) for item in held) == len(chat)
    (skipped,) = sources.read(tmp_path / str(STRAY_LEAD + 1))
    where = Location(str(tmp_path / str(STRAY_LEAD + 1) / "a.jsonl"))
    assert skipped == Problem(where, "", STRAY_HEAD, warning=True)
    # Claimed by the source named, the file is read on: its first rows in no output, told.
    named = list(sources.read(tmp_path / str(STRAY_LEAD + 1), source="openai-chat"))
    problems = [item for item in named if isinstance(item, Problem)]
    assert len(problems) == STRAY_LEAD + 1
    assert all(problem.record is None and problem.message.endswith(UNKEPT) for problem in problems)
    assert sum(isinstance(item, TraceItem) for item in named) == len(chat)


def test_a_folder_of_strays_is_told_in_a_few_lines(kp: KpRunner, tmp_path: Path) -> None:
    """A project's vendored packages: hundreds of files no source reads, three lines and a
    count, before the run's summary."""
    project = tmp_path / "project"
    for n in range(10):
        (project / "vendor" / f"p{n}").mkdir(parents=True)
        (project / "vendor" / f"p{n}" / "package.json").write_text('{"name": "p"}')
    shutil.copy(SESSION, project / "session.jsonl")
    run = kp("convert", str(project), "-o", str(tmp_path / "out.jsonl"))
    assert run.code == 0, run.err
    lines = run.err.splitlines()
    modules = project / "vendor"
    assert lines[0] == f"{project / 'session.jsonl'}: read as codex (1 trace)"
    assert lines[1:4] == [
        f"{modules / f'p{n}' / 'package.json'}: warning: {STRAY}" for n in range(3)
    ]
    assert lines[-2:] == [
        f"... and 7 more files with the same problem (first at {modules / 'p3' / 'package.json'}, "
        f"last at {modules / 'p9' / 'package.json'})",
        "converted 1 trace; 10 warnings",
    ]


def test_a_walk_enters_no_node_modules_folder(kp: KpRunner, tmp_path: Path) -> None:
    """A JavaScript project's packages are no runs of the user's: not read, not told."""
    project = tmp_path / "project"
    (project / "node_modules" / "p").mkdir(parents=True)
    (project / "node_modules" / "p" / "package.json").write_text('{"name": "p"}')
    shutil.copy(SESSION, project / "node_modules" / "p" / "session.jsonl")
    shutil.copy(SESSION, project / "session.jsonl")
    run = kp("convert", str(project), "-o", str(tmp_path / "out.jsonl"))
    assert (run.code, run.err.splitlines()) == (
        0,
        [f"{project / 'session.jsonl'}: read as codex (1 trace)", "converted 1 trace"],
    )


@pytest.mark.parametrize(
    "command",
    [
        ("score", "--no-embedder", "-f", "jsonl"),
        ("convert", "-o", "{out}"),
        ("select", "--no-embedder", "--budget", "50", "-o", "{out}"),
    ],
)
def test_a_found_file_that_cannot_be_opened_is_a_problem_and_the_rest_is_read(
    kp: KpRunner, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """A dangling link in a folder: the folder's other files read, the link told, exit 1."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(TRACES, runs / "b-traces.jsonl")
    (runs / "a-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    out = tmp_path / "out.jsonl"
    run = kp(*(part.format(out=out) for part in command), str(runs))
    assert run.code == 1, run.err
    assert f"{runs / 'a-gone.jsonl'}: no such file; found in a folder, so skipped" in run.err
    written = run.out if command[0] == "score" else out.read_text()
    assert len(written.splitlines()) == len(TRACES.read_text().splitlines())
    named = kp(*(part.format(out=out) for part in command), str(runs / "a-gone.jsonl"))
    assert named.code == 2  # a file the user named stops the run before it starts
