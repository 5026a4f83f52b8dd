"""One policy for mistakes: how a command line is written is a usage error, a file a ``kp`` line.

A usage error is click's: ``Usage:``, ``Try 'kp X --help'``, ``Error: ...``, exit 2, whether click
or the library found it (options that conflict, a value the library refuses). A file that cannot
be read is the input's: one ``kp: error:`` line, exit 2 (docs/specification.md's exit codes).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import KpRunner

TRACES = str(Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl")
SPLIT = ("split", "--test", "0.2", "--no-embedder")
USAGE, INPUT = "usage", "input"

CASES = [
    (("score", "--embedder", "static", "--workers", "2"), USAGE, "--workers choose how the"),
    (("score", "--embedder", "static", "--device", "cuda"), USAGE, "drop them or use the MiniLM"),
    (("select", "--embedder", "static", "--model", "TRACES"), USAGE, "the static embedder is a"),
    (("score", "--embedder", "static", "--max-windows", "3"), USAGE, "drop --max-windows"),
    (("score", "--max-windows", "abc"), USAGE, "give --max-windows a positive integer"),
    (("score", "--order", "time", "--corpus"), USAGE, "drop --order time"),
    (("score", "--frozen"), USAGE, "--frozen scores against a saved cache: give --cache"),
    # Before, the novelty text was recorded in every breakdown though nothing was embedded.
    (("score", "--no-embedder", "--novelty-text", "windows"), USAGE, "nothing is embedded: drop"),
    (("select", "--no-embedder", "--novelty-text", "truncate"), USAGE, "--novelty-text chooses"),
    (("split", "--test", "0.6", "--validation", "0.5"), USAGE, "--validation 0.5: give a share"),
    ((*SPLIT, "--by", "nokey"), USAGE, "--by nokey: no item has it"),
    ((*SPLIT, "--stratify", "nokey"), USAGE, "--stratify nokey: no item has it"),
    (("dedupe", "--against", "TRACES", "--similarity-histogram"), USAGE, "one set: drop it"),
    (("dedupe", "--against", "TRACES", "--by", "task"), USAGE, "one set: drop --against"),
    (("select", "--top", "200%"), USAGE, "Invalid value for '--top': '200%': give a percentage"),
    # Before, inf went to the library, whose refusal told a shell user to give None.
    (("eval", "--preset", "standard", "--timeout", "inf"), USAGE, "seconds, or 0 for no limit"),
    (("score", "--model", "missing.onnx"), INPUT, "missing.onnx does not exist"),
    (("redact", "--rules", "missing.yaml"), INPUT, "missing.yaml: no such file"),
    (("score", "--redact", "--redact-rules", "missing.yaml"), INPUT, "missing.yaml: no such file"),
    (("score", "--profiles", "missing.yaml"), INPUT, "missing.yaml: no such file"),
    (("score", "--frozen", "--cache", "missing.npz"), INPUT, "missing.npz does not exist; build"),
]


@pytest.mark.parametrize(("args", "kind", "said"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_mistake_is_shown_by_its_kind(
    kp: KpRunner, tmp_path: Path, args: tuple[str, ...], kind: str, said: str
) -> None:
    """A mistake in the command line reads as click's usage error; an unreadable file, one line."""
    output = ("-o", str(tmp_path / "sets")) if args[0] == "split" else ()
    run = kp(*(TRACES if arg == "TRACES" else arg for arg in args), *output, TRACES)
    lines = run.err.splitlines()
    assert run.code == 2
    if kind == USAGE:
        assert lines[0].startswith(f"Usage: kp {args[0]} [OPTIONS]")
        assert lines[1] == f"Try 'kp {args[0]} --help' for help."
        assert lines[-1].startswith("Error: ")
        assert said in lines[-1]
    else:
        assert len(lines) == 1
        assert lines[0].startswith("kp: error: ")
        assert said in lines[0]
