"""Write Qwen Code's session files by running the real CLI against a scripted model.

Run by hand from the repository root (never by the test suite), with node 20 and npm::

    python tests/conformance/qwen_code_sessions.py /tmp/qwen [VERSION]

It installs ``@qwen-code/qwen-code@0.24.4`` (or VERSION, whose runs :data:`OLDER` holds) from
npm into that folder, then runs it headless (``-p``, ``--yolo``, ``--auth-type openai``,
``OPENAI_MODEL=qwen3-coder-plus``) against a local OpenAI-compatible endpoint that serves
:data:`RUNS`' replies in order, streamed as Chat Completions chunks (a request without tools, as
a title's, gets a short text). The CLI runs its real tools in a scratch project and its
``ChatRecordingService`` writes ``~/.qwen/projects/<project>/chats/<sessionId>.jsonl``; each is
copied into ``files/gemini-cli/`` with the run's folders renamed (``HOME`` :data:`HOME`, the
project the folder ``project`` in it). A run of two prompts sends the second with
``--continue``; a run of :data:`STREAMED` is made again with ``--output-format stream-json``,
what it prints kept.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

VERSION = "0.24.4"
OUT = Path(__file__).parent / "files" / "gemini-cli"
HOME = "/home/user"


def _call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


RUNS: dict[str, tuple[list[str], list[dict[str, Any]]]] = {
    # list_directory is off by default in 0.24 and read_file asks for file_path: both fail.
    "tool_errors": (
        ["How many lines does notes.txt have?"],
        [
            {
                "reasoning": "I should list the folder first.",
                "content": "I will list the folder.",
                "calls": [_call("call_1", "list_directory", path="PROJECT")],
            },
            {"calls": [_call("call_2", "read_file", absolute_path="PROJECT/notes.txt")]},
            {"calls": [_call("call_3", "read_file", file_path="PROJECT/notes.txt")]},
            {"content": "notes.txt has 3 lines: one, two and three."},
        ],
    ),
    "parallel_shell": (
        ["Count the lines of notes.txt and todo.md with wc, and tell me which is longer."],
        [
            {
                "content": "I will count both.",
                "calls": [
                    _call("call_a", "run_shell_command", command="wc -l notes.txt"),
                    _call("call_b", "run_shell_command", command="wc -l todo.md"),
                ],
            },
            {"content": "notes.txt has 3 lines and todo.md 2: notes.txt is longer."},
        ],
    ),
    # `@notes.txt`: the CLI inlines the file in the user's content, between its markers.
    "at_file": (
        ["How many lines has @notes.txt?"],
        [{"content": "It has 3 lines: one, two and three."}],
    ),
    # The API refuses the model's name: the CLI records the failure as telemetry alone.
    "api_error": (
        ["Say hi."],
        [{"status": 400, "error": "The model `qwen3-coder-plus` does not exist"}],
    ),
    "continued": (
        ["What is in todo.md?", "Add a third item, 'ship', to it."],
        [
            {"calls": [_call("call_r", "read_file", file_path="PROJECT/todo.md")]},
            {"content": "todo.md lists two items: write and test."},
            {
                "calls": [
                    _call(
                        "call_e",
                        "edit",
                        file_path="PROJECT/todo.md",
                        old_string="- test\n",
                        new_string="- test\n- ship\n",
                    )
                ]
            },
            {"content": "Added '- ship' as the third item."},
        ],
    ),
}


OLDER: dict[str, dict[str, tuple[list[str], list[dict[str, Any]]]]] = {
    # 0.7.1 (January 2026) writes no `provenance`, and its read_file takes absolute_path.
    "0.7.1": {
        "no_provenance": (
            ["How many lines does notes.txt have?"],
            [
                {
                    "reasoning": "I should list the folder first.",
                    "content": "I will list the folder.",
                    "calls": [_call("call_1", "list_directory", path="PROJECT")],
                },
                {"calls": [_call("call_2", "read_file", path="PROJECT/notes.txt")]},
                {"calls": [_call("call_3", "read_file", absolute_path="PROJECT/notes.txt")]},
                {"content": "notes.txt has 3 lines: one, two and three."},
            ],
        )
    }
}
"""Runs of older versions (``python qwen_code_sessions.py ROOT VERSION``)."""


class _Model(http.server.BaseHTTPRequestHandler):
    replies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        turn = self.replies.pop(0) if body.get("tools") and self.replies else {"content": "Notes"}
        if "status" in turn:  # the API refuses the request, as OpenAI's does
            self.send_response(int(turn["status"]))
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            error = {"message": turn["error"], "type": "invalid_request_error"}
            self.wfile.write(json.dumps({"error": error}).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0}
        deltas: list[dict[str, Any]] = []
        if turn.get("reasoning"):
            deltas.append({"role": "assistant", "reasoning_content": turn["reasoning"]})
        if turn.get("content"):
            deltas.append({"role": "assistant", "content": turn["content"]})
        for index, call in enumerate(turn.get("calls", [])):
            function = {"name": call["name"], "arguments": json.dumps(call["args"])}
            deltas.append(
                {
                    "tool_calls": [
                        {"index": index, "id": call["id"], "type": "function", "function": function}
                    ]
                }
            )
        for delta in deltas:
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        finish = "tool_calls" if turn.get("calls") else "stop"
        usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
        last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
        closing = json.dumps({**last, "usage": usage})
        self.wfile.write(f"data: {closing}\n\ndata: [DONE]\n\n".encode())


STREAMED = ("tool_errors", "api_error")
"""The runs also made with ``--output-format stream-json``: what the CLI prints is kept (in
``files/claude-code/``: the records are Claude Code's stream-json), not its session file."""


def _run(
    root: Path,
    name: str,
    prompts: list[str],
    replies: list[dict[str, Any]],
    *,
    streamed: bool,
    version: str = VERSION,
) -> None:
    home, project = root / name / "home", root / name / "project"
    shutil.rmtree(root / name, ignore_errors=True)
    project.mkdir(parents=True)
    home.mkdir()
    (project / "notes.txt").write_text("one\ntwo\nthree\n")
    (project / "todo.md").write_text("- write\n- test\n")
    _Model.replies = [
        json.loads(json.dumps(reply).replace("PROJECT", str(project))) for reply in replies
    ]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        **os.environ,
        "HOME": str(home),
        "OPENAI_API_KEY": "scripted",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        "OPENAI_MODEL": "qwen3-coder-plus",
        "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
    }
    cli = root / "node_modules" / "@qwen-code" / "qwen-code" / "cli.js"
    printed = []
    for number, prompt in enumerate(prompts):
        again = ["--continue"] if number else []
        again += ["--output-format", "stream-json"] if streamed else []
        command = ["node", str(cli), "-p", prompt, "--yolo", "--auth-type", "openai", *again]
        # The CLI exits 1 when the model's API failed (the api_error run): its file is written.
        run = subprocess.run(
            command, cwd=project, env=env, check=False, timeout=300, capture_output=True, text=True
        )
        printed.append(run.stdout)
    server.shutdown()
    (written,) = (home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    text = "".join(printed) if streamed else written.read_text()
    text = text.replace(str(project), f"{HOME}/project").replace(str(home), HOME)
    folder = OUT.parent / "claude-code" if streamed else OUT
    kind = "stream_" if streamed else ""
    (folder / f"qwen_code_{version}_{kind}{name}.jsonl").write_text(text)


def main(root: Path, version: str = VERSION) -> None:
    root.mkdir(parents=True, exist_ok=True)
    npm = ["npm", "install", f"@qwen-code/qwen-code@{version}", "--prefix", str(root)]
    subprocess.run([*npm, "--no-audit", "--no-fund"], check=True)
    for name, (prompts, replies) in OLDER.get(version, RUNS).items():
        _run(root, name, prompts, replies, streamed=False, version=version)
        if name in STREAMED and version == VERSION:
            _run(root, name, prompts, replies, streamed=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), *sys.argv[2:3])
