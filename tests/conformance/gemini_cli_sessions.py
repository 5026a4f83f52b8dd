"""Write Gemini CLI's JSON Lines session files by running the real CLI with a scripted model.

Run by hand from the repository root (never by the test suite), with node 20 and npm::

    python tests/conformance/gemini_cli_sessions.py /tmp/gcli

It installs ``@google/gemini-cli@0.61.0`` from npm into that folder, then runs it headless
(``-p``, ``--yolo``, ``-m gemini-2.5-flash`` so that no model router asks the model first) with
``--fake-responses``: the flag Gemini CLI's own integration tests use, whose file holds one
``{"method": "generateContentStream", "response": [chunks]}`` a line, served in order instead of
the Gemini API (``FakeContentGenerator``; no network, the API key a dummy). ``HOME`` and the
project folder are inside that folder, so nothing of this machine is read. The CLI runs its real
tools (``list_directory``, ``read_file``, ``run_shell_command``) in a scratch project and its
``ChatRecordingService`` writes ``~/.gemini/tmp/project/chats/session-*.jsonl``; each is copied
into ``files/gemini-cli/`` (and, for :data:`STREAMED`, what the same run prints with
``--output-format stream-json``) with the run's folders renamed: ``HOME`` as :data:`HOME`, the
project the folder ``project`` in it (the ``projectHash`` is left as written, the hash of the
real path).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

VERSION = "0.61.0"
OUT = Path(__file__).parent / "files" / "gemini-cli"
HOME = "/home/user"
"""The neutral home folder the written files name instead of the run's."""


def _turn(*parts: dict[str, Any]) -> str:
    """One streamed model reply: its parts in one chunk, then the chunk that stops it."""
    chunks = [
        {"candidates": [{"content": {"parts": list(parts), "role": "model"}, "index": 0}]},
        {
            "candidates": [
                {"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 900, "candidatesTokenCount": 20},
        },
    ]
    return json.dumps({"method": "generateContentStream", "response": chunks})


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}}


def _thought(text: str) -> dict[str, Any]:
    return {"text": text, "thought": True}


RUNS: dict[str, tuple[str, list[str]]] = {
    "tools": (
        "How many lines does notes.txt have, and what is in this folder?",
        [
            _turn(
                _thought("**Looking around**\n\nI should list the folder first."),
                {"text": "I will list the folder."},
                _call("list_directory", dir_path="."),
            ),
            _turn(_call("read_file", file_path="notes.txt")),
            _turn(_call("run_shell_command", command="wc -l notes.txt", description="Count")),
            _turn({"text": "notes.txt has 3 lines; the folder holds notes.txt and src/."}),
        ],
    ),
    "missing_file": (
        "Show me what config.toml says.",
        [
            _turn(_call("read_file", file_path="config.toml")),
            _turn(
                _thought("**No such file**\n\nconfig.toml is missing; I will look for it."),
                _call("list_directory", dir_path="."),
            ),
            _turn(_call("read_file", file_path="notes.txt")),
            _turn({"text": "There is no config.toml here; notes.txt is the only file."}),
        ],
    ),
    "no_tool": (
        "What is the capital of France?",
        [_turn({"text": "Paris is the capital of France."})],
    ),
}


STREAMED = ("tools", "missing_file")
"""The runs also written as ``gemini -p --output-format stream-json`` prints them (stdout)."""


def run(root: Path) -> None:
    """Install the CLI under ``root``, run each scripted session, copy the files it writes."""
    root = root.resolve()
    cli = root / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"
    if not cli.exists():
        subprocess.run(
            ["npm", "install", f"@google/gemini-cli@{VERSION}", "--no-audit", "--no-fund"],
            cwd=root,
            check=True,
        )
    home, project = root / "home", root / "project"
    chats = home / ".gemini" / "tmp" / "project" / "chats"
    for name, (prompt, turns) in RUNS.items():
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(chats, ignore_errors=True)
        (project / "src").mkdir(parents=True)
        (project / "notes.txt").write_text("alpha\nbeta\ngamma\n")
        responses = root / f"{name}.responses"
        responses.write_text("\n".join(turns) + "\n")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "GEMINI_API_KEY": "offline-fake-key",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "NO_COLOR": "1",
        }
        command = ["node", str(cli), "-m", "gemini-2.5-flash", "--yolo"]
        command += ["--fake-responses", str(responses), "-p", prompt]
        subprocess.run(command, cwd=project, env=env, check=True, timeout=300)
        (written,) = chats.glob("session-*.jsonl")
        text = written.read_text()
        text = text.replace(str(project), f"{HOME}/project").replace(str(home), HOME)
        (OUT / f"gemini_cli_{VERSION}_{name}.jsonl").write_text(text)
        if name in STREAMED:  # the same run headless, as --output-format stream-json prints it
            streamed = subprocess.run(
                [*command[:-2], "--output-format", "stream-json", *command[-2:]],
                cwd=project,
                env=env,
                check=True,
                timeout=300,
                capture_output=True,
                text=True,
            ).stdout
            streamed = streamed.replace(str(project), f"{HOME}/project").replace(str(home), HOME)
            (OUT / f"gemini_cli_{VERSION}_stream_{name}.jsonl").write_text(streamed)


if __name__ == "__main__":
    run(Path(sys.argv[1]))
