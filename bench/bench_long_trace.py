"""One long trace through kp's commands: does each cost grow with its length, or faster?

    python bench/bench_long_trace.py                       # 4,000, 16,000 and 64,000 steps
    python bench/bench_long_trace.py --steps 4000 16000

A coding agent's session can run to thousands of tool calls. Each size writes one trace of that
many steps (a tool call and its result, one result in ten an error the next call recovers from),
runs each command on it in a fresh ``kp`` process and reports its CPU time, less the same
command's on a one-step trace (the interpreter's start and imports), per 1,000 steps. A column
that stays level as the steps grow is a linear cost; one that grows with them is not.

Measured on the 2-core development machine, 2026-12-02, load about 0.1 (CPU seconds per 1,000
steps at 4,000, 16,000 and 64,000 steps): score 0.012, 0.036, 0.025; score-static 0.013, 0.037,
0.034; messages 0.052, 0.043, 0.047; read-back 0.075, 0.076, 0.073; redact 0.108, 0.100, 0.094;
select 0.021, 0.029, 0.030: every one linear. Before an observation's row stopped copying the
rest of the trace, ``messages`` was not (``--steps 2000 8000 32000``: -0.030, 0.029, 0.111; a
32,000-step trace's row took 3.6 s, now 0.65 s).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS = {
    "score": ("score", "--no-embedder", "-f", "json", "-o", "{out}.json"),
    "score-static": ("score", "--embedder", "static", "-f", "json", "-o", "{out}.json"),
    "messages": ("convert", "--to", "messages", "-o", "{out}.jsonl"),
    "read-back": ("convert", "{messages}", "-o", "{out}.jsonl"),
    "redact": ("redact", "-o", "{out}.jsonl"),
    "select": ("select", "--no-embedder", "-o", "{out}.jsonl"),
}
"""Each command's arguments after ``kp`` (``read-back`` reads the ``messages`` row, not the
trace; the others read the trace)."""


def long_trace(steps: int) -> dict[str, object]:
    """A trace of ``steps`` steps: tool calls and their results, one in ten failing."""
    made: list[dict[str, object]] = []
    for number in range(max(1, steps // 2)):
        tool = f"tool_{number % 7}"
        failed = number % 10 == 9
        made.append(
            {
                "step_id": len(made),
                "type": "error_recovery" if number % 10 == 0 and number else "tool_call",
                "content": f"{tool}(page={number})",
                "tool": {"name": tool},
                "input": {"page": number, "query": f"term{number % 311} other{number % 17}"},
            }
        )
        made.append(
            {
                "step_id": len(made),
                "type": "observation",
                "content": f"Error: timeout on page {number}" if failed else f"page {number}: ok",
            }
        )
    return {
        "@context": "https://openknowledgepulse.org/schema/v1",
        "@type": "ReasoningTrace",
        "id": f"kp:trace:long-{steps}",
        "metadata": {
            "created_at": "2026-12-02T10:00:00Z",
            "task_domain": "coding",
            "success": True,
            "quality_score": 0,
            "visibility": "network",
            "privacy_level": "aggregated",
        },
        "task": {"objective": "Fix the failing tests in the repository"},
        "steps": made[:steps],
        "outcome": {"result_summary": "The tests pass.", "confidence": 0.9},
    }


def cpu_seconds(argv: list[str]) -> float:
    """The CPU time (user and system) ``argv`` took in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(command: str, trace: Path, scratch: Path) -> float:
    """``command``'s CPU time on ``trace`` (its messages row, for ``read-back``)."""
    messages = trace.with_suffix(".messages.jsonl")
    arguments = [
        part.format(out=scratch / f"{command}-{trace.stem}", messages=messages)
        for part in COMMANDS[command]
    ]
    source = [] if command == "read-back" else [str(trace)]
    return cpu_seconds([sys.executable, "-m", "knowledgepulse.cli.main", *arguments, *source])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--steps", type=int, nargs="+", default=[4000, 16000, 64000])
    parser.add_argument("--commands", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        traces = {}
        for steps in [1, *args.steps]:
            trace = scratch / f"trace-{steps}.jsonl"
            trace.write_text(json.dumps(long_trace(steps)) + "\n")
            subprocess.run(
                [sys.executable, "-m", "knowledgepulse.cli.main", "convert", "--to", "messages",
                 str(trace), "-o", str(trace.with_suffix(".messages.jsonl"))],
                check=True, capture_output=True,
            )  # fmt: skip
            traces[steps] = trace
        print("CPU seconds per 1,000 steps, less a one-step trace's (a level row is linear)")
        print(f"{'command':<14}" + "".join(f"{steps:>10,}" for steps in args.steps))
        for command in args.commands:
            start = run(command, traces[1], scratch)
            costs = [
                (run(command, traces[steps], scratch) - start) / steps * 1000
                for steps in args.steps
            ]
            print(f"{command:<14}" + "".join(f"{cost:>10.3f}" for cost in costs))


if __name__ == "__main__":
    main()
