"""A folder of many small session files, as a curator gives ``kp``: prints figures, asserts nothing.

    python bench/bench_folders.py 1000 10000              # medians of 3 runs of each command
    python bench/bench_folders.py 30000 --repeats 1 --commands convert
    python bench/bench_folders.py --faults                # the failure checks alone, quick
    python bench/bench_folders.py --make DIR 1000         # only write the tree (to profile)

The tree is made of the repository's own recordings (``tests/conformance/files/``): every Claude
Code session file and every Codex rollout (a ``session_meta`` line) of at most 64 KB, copied
round-robin, each copy's UUIDs (and its named session ids, ``session_b``) replaced by ones of its
own, so every copy is a distinct run. Claude Code copies go under
``claude/projects/-home-user-projNN/<uuid>.jsonl``, Codex ones under
``codex/sessions/YYYY/MM/DD/rollout-...-<uuid>.jsonl``, as ``~/.claude`` and ``~/.codex`` hold
them; beside them files kp must skip: a ``.yaml``, a ``.md``, a ``.hidden.jsonl`` and a
``.cache/`` folder of JSON Lines. The same Claude Code sessions are also written as one
concatenated file (Claude Code's reader splits a file by session; a Codex file is one session,
so Codex has no such twin), so that the cost of the file boundaries shows.

For each N and command (``kp convert``, ``kp select --budget 50``, ``kp score`` on the whole
tree and on its ``claude/`` folder, ``kp convert`` and ``kp score`` on the concatenated twin, and
``kp inspect`` on one file), run under ``ulimit -n 256`` as a user would, for each source tree
given (``--trees``: the runs take turns): wall seconds, CPU seconds (user + system), peak RSS
(``wait4``'s rusage, what ``/usr/bin/time -v`` prints), the most file descriptors the process
held at once (``/proc/PID/fd``, sampled every 20 ms), the exit code, the lines written, a digest
of them (byte for byte the same across trees, or not) and the summary, beside the runs put in
(each template's ``traces`` fact). ``--faults``: a bad JSON line, a JSON file no source knows
and then a dangling link among good files (what is said, and what is still read), whether the
files are read in path order, and whether a second run gives the same bytes.

2026-12-01, ``python bench/bench_folders.py 1000 10000 --trees BEFORE/src,src`` (BEFORE: a
checkout of 6811c71c), medians of 3, load average 5 to 7 on the 2 shared cores (CPU seconds
moved by +-10% from run to run: finer than that, see below). Every output byte for byte the same
before and after, every run counted (runs in = traces out, no problem), at most 6 descriptors
open, exit 0 throughout. CPU s before -> after, peak RSS:
    1,000 files (22 MiB, 1,143 runs): convert 2.91 -> 3.35 (46 MiB); claude/ 2.97 -> 2.53, its
    twin 2.21 -> 1.96 (82 MiB); select 6.83 -> 6.72 (168 MiB); score 3.98 -> 3.90 (170 MiB);
    score claude/ 3.32 -> 3.25, twin 2.72 -> 2.74; inspect of one file 0.84 -> 0.85.
    10,000 files (220 MiB, 11,428 runs): convert 21.2 -> 19.2 (53 MiB); claude/ 20.3 -> 16.0,
    its twin 11.1 -> 10.7 (419 MiB: a Claude Code file's sessions are held to its end); select
    45.2 -> 48.3 (320 MiB); score 29.1 -> 31.0 (318 MiB); score claude/ 22.2 -> 24.1, twin
    19.5 -> 19.3 (567 MiB); inspect 0.90 -> 0.92.
    30,000 files (661 MiB, 34,286 runs), after only, ``--repeats 1 --commands convert``: convert
    76.9 (61 MiB, 5 descriptors); claude/ 58.1 (58 MiB), its twin 40.1 (1,168 MiB).
A file costs about 0.5 ms more than its sessions in one file (convert claude/ against its twin:
8,571 files, 5.3 s), in kp's set-up per file: the note said of each file (rich, 80 us), asking
the 20 sources whether they know its first record (78 us, half of it the five row formats each
scanning the record's columns), opening it to check it before the run and again to read it.
The read path alone in one process (expand the folder, check every file twice as convert does,
read and convert), the two trees alternating, min of 3, on 5,000 files: 1,878 -> 1,774 and
1,651 -> 1,570 us a file (a check stats a file twice, not four times; os.path, not Path objects;
the first line's sniff by orjson).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "tests" / "conformance" / "files"
KP = [sys.executable, "-m", "knowledgepulse.cli.main"]
MAX_TEMPLATE_BYTES = 64_000
OPEN_FILES = 256
"""The limit on open files every command runs under (``ulimit -n 256``), set for this process."""
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SUMMARY = re.compile(rb"^(converted|\d+ traces? scored).*$", re.MULTILINE)


@dataclass(frozen=True)
class Template:
    """One recording to copy: its bytes, the runs it holds, its named (non-UUID) session ids."""

    source: str
    data: bytes
    runs: int
    names: tuple[str, ...]


def templates(source: str) -> list[Template]:
    """The recordings of ``source`` (``claude-code``, ``codex``) copied into the tree."""
    found = []
    for path in sorted((FILES / source).glob("*.jsonl")):
        data = path.read_bytes()
        if len(data) > MAX_TEMPLATE_BYTES or (source == "codex" and b'"session_meta"' not in data):
            continue
        facts = json.loads(Path(f"{path}.facts.json").read_text())
        ids = [run["trace_id"] for run in facts["runs"]]
        names = tuple(i for i in ids if "/" not in i and not UUID.fullmatch(i.encode()))
        found.append(
            Template(source, data if data.endswith(b"\n") else data + b"\n", facts["traces"], names)
        )
    return found


def varied(template: Template, copy: int) -> tuple[bytes, str]:
    """Copy ``copy`` of a template, its ids its own; and its first (session) UUID."""

    def new(match: re.Match[bytes]) -> bytes:
        digest = hashlib.sha256(match.group() + b":%d" % copy).hexdigest()
        return (
            f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}".encode()
        )

    data = UUID.sub(new, template.data)
    for name in template.names:
        data = data.replace(json.dumps(name).encode(), json.dumps(f"{name}-{copy}").encode())
    first = UUID.search(data)
    return data, (first.group().decode() if first else f"{copy:08x}")


def make_tree(root: Path, count: int) -> tuple[int, int, Path]:
    """Write ``count`` session files under ``root``; the runs in them, their bytes, the twin."""
    claude, codex = templates("claude-code"), templates("codex")
    pool = claude + codex
    runs = size = 0
    twin = root.parent / f"{root.name}-claude.jsonl"
    root.mkdir(parents=True)
    with twin.open("wb") as joined:
        for copy in range(count):
            template = pool[copy % len(pool)]
            data, session = varied(template, copy)
            if template.source == "claude-code":
                path = (
                    root
                    / "claude"
                    / "projects"
                    / f"-home-user-proj{copy % 97:02d}"
                    / f"{session}.jsonl"
                )
                joined.write(data)
            else:
                day = copy % 360
                path = (
                    root
                    / "codex"
                    / "sessions"
                    / "2026"
                    / f"{day // 30 + 1:02d}"
                    / f"{day % 30 + 1:02d}"
                    / f"rollout-2026-01-01T00-00-{copy % 60:02d}-{session}.jsonl"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            runs += template.runs
            size += len(data)
    (root / "kp.yaml").write_text("profile: default\n")
    (root / "README.md").write_text("# sessions\n")
    hidden = root / "claude" / "projects" / "-home-user-proj00"
    (hidden / ".hidden.jsonl").write_bytes(b"not json\n")
    (root / ".cache").mkdir()
    (root / ".cache" / "old.jsonl").write_bytes(b"not json\n")
    return runs, size, twin


@dataclass(frozen=True)
class Run:
    """One process: its figures, what it wrote (a digest) and what it said."""

    wall: float
    cpu: float
    rss_mib: float
    fds: int
    code: int
    out_lines: int
    summary: str
    said: bytes
    digest: str


def measure(command: list[str], out: Path, src: Path = ROOT / "src") -> Run:
    """Run ``command`` with ``src`` first on the path (under :data:`OPEN_FILES`); its figures."""

    env = {**os.environ, "PYTHONPATH": str(src)}
    most = 0
    with out.open("wb") as stdout, tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(
            command,
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
        done = threading.Event()

        def sample() -> None:
            nonlocal most
            while not done.wait(0.02):
                try:
                    most = max(most, len(os.listdir(f"/proc/{process.pid}/fd")))
                except OSError:
                    return

        sampler = threading.Thread(target=sample)
        sampler.start()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
        stderr.seek(0)
        said = stderr.read()
    # Read a chunk at a time: a child's peak RSS counts this process's, forked before its exec.
    digest, lines = hashlib.sha256(), 0
    with out.open("rb") as written:
        while chunk := written.read(1 << 20):
            digest.update(chunk)
            lines += chunk.count(b"\n")
    summary = SUMMARY.search(said)
    return Run(
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        most,
        process.returncode,
        lines,
        summary.group().decode() if summary else said[-300:].decode(errors="replace"),
        said,
        digest.hexdigest()[:12],
    )


def commands(tree: Path, twin: Path, one: Path, out: Path) -> dict[str, list[str]]:
    """The commands measured, by label."""
    return {
        "convert": [*KP, "convert", str(tree), "-o", str(out)],
        "convert claude/": [*KP, "convert", str(tree / "claude"), "-o", str(out)],
        "convert (twin)": [*KP, "convert", str(twin), "-o", str(out)],
        "select --budget 50": [*KP, "select", str(tree), "--budget", "50", "-o", str(out)],
        "score": [*KP, "score", str(tree), "--format", "jsonl", "-o", str(out)],
        "score claude/": [*KP, "score", str(tree / "claude"), "--format", "jsonl", "-o", str(out)],
        "score (twin)": [*KP, "score", str(twin), "--format", "jsonl", "-o", str(out)],
        "inspect (one file)": [*KP, "inspect", str(one)],
    }


def bench(count: int, repeats: int, chosen: list[str], trees: list[Path]) -> None:
    """Make a tree of ``count`` files, and print each command's medians for each source tree.

    The runs of the trees take turns, so that a change of load weighs on each alike; their
    outputs (stdout or ``-o``) and messages are compared byte for byte.
    """
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch, "sessions")
        runs, size, twin = make_tree(tree, count)
        one = next(tree.glob("claude/projects/*/*.jsonl"))
        print(
            f"\n{count:,} files, {size / 2**20:.1f} MiB, {runs:,} runs in; the Claude Code twin "
            f"{twin.stat().st_size / 2**20:.1f} MiB"
        )
        print(
            f"{'command':22} {'tree':>4} {'wall s':>7} {'CPU s':>7} {'ms/file':>7} {'RSS MiB':>8} "
            f"{'fds':>4} {'exit':>4} {'out':>6} {'digest':>12}  summary"
        )
        out = Path(scratch, "out")
        for label, command in commands(tree, twin, one, out).items():
            if label.split()[0] not in chosen:
                continue
            measured: list[list[Run]] = [[] for _ in trees]
            for _ in range(repeats):
                for runs_of, src in zip(measured, trees, strict=True):
                    runs_of.append(measure(command, out, src))
            for number, runs_of in enumerate(measured):
                cpu = statistics.median(m.cpu for m in runs_of)
                last = runs_of[-1]
                same = "" if last.said == measured[0][-1].said else " (messages differ)"
                print(
                    f"{label:22} {number:4} {statistics.median(m.wall for m in runs_of):7.2f} "
                    f"{cpu:7.2f} {1000 * cpu / count:7.2f} "
                    f"{statistics.median(m.rss_mib for m in runs_of):8.0f} "
                    f"{max(m.fds for m in runs_of):4} {last.code:4} {last.out_lines:6} "
                    f"{last.digest:>12}  {last.summary}{same}"
                )


def faults() -> None:
    """A bad file, a dangling link and a file no source knows among good ones; and the order."""
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch, "sessions")
        make_tree(tree, 20)
        files = [
            file
            for file in sorted(tree.rglob("*.jsonl"), key=lambda file: file.parts)
            if not any(part[:1] == "." for part in file.relative_to(tree).parts)
        ]
        files[5].write_bytes(files[5].read_bytes()[:-40] + b"\n{not json\n")
        files[9].with_name("settings.json").write_text('{"theme": "dark"}\n')
        out = Path(scratch, "out")
        convert = [*KP, "convert", str(tree), "-o", str(out)]
        first = measure(convert, out)
        shown = first.said.decode().replace(f"{tree}/", "")
        print(f"a bad line, a file no source knows: exit {first.code}, {first.out_lines} traces")
        print("".join(f"    {line}\n" for line in shown.splitlines() if "read as" not in line))
        read = [line.split(": read as")[0] for line in shown.splitlines() if ": read as" in line]
        in_order = read == sorted(read, key=lambda name: Path(name).parts)
        print(f"files read in path order: {in_order} ({len(read)} read)")
        again = measure(convert, out)
        same = again.digest == first.digest and again.said == first.said
        print(f"a second run the same bytes, output and messages: {same}")
        Path(files[12].parent, "gone.jsonl").symlink_to(Path(scratch, "nowhere.jsonl"))
        run = measure(convert, out)
        print(f"and a dangling link: exit {run.code}, {run.out_lines} traces out")
        print(f"    {run.said.decode().replace(f'{tree}/', '').strip()}")


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="*", type=int, default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--commands", default="convert,select,score,inspect")
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--make", type=Path, metavar="DIR")
    parser.add_argument(
        "--trees",
        default=str(ROOT / "src"),
        help="source trees to run, comma-separated (another checkout's src: before and after)",
    )
    arguments = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))
    if arguments.make:
        runs, size, twin = make_tree(arguments.make, arguments.counts[0])
        print(f"{runs} runs, {size} bytes; twin {twin}")
    elif arguments.faults:
        faults()
    else:
        for count in arguments.counts:
            trees = [Path(tree) for tree in arguments.trees.split(",")]
            bench(count, arguments.repeats, arguments.commands.split(","), trees)


if __name__ == "__main__":
    main()
