"""``kp eval`` with a task or plugin that exits, interrupts, prints or hangs: the run goes on.

Each misdeed is a recorded failure of its case (or one line for a plugin that cannot load), the
exit code is kp's, and stdout holds the report alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledgepulse.cli.eval import task_timeout
from knowledgepulse.evals.evaluate import DEFAULT_TIMEOUT_S
from tests.cli.conftest import KpRunner
from tests.user_code import user_code_forgotten

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "summaries"
CASES = str(EXAMPLE / "cases.jsonl")
ARGS = ("eval", CASES, "--suite", str(EXAMPLE / "suite.yaml"), "--plugin")
PLUGIN = str(EXAMPLE / "summary_scorers.py")
KP = (sys.executable, "-m", "knowledgepulse.cli.main", *ARGS, PLUGIN)
TASK = """
import os, subprocess, sys, time
from pathlib import Path


def answer(task):
    print("thinking about", task.case_id)
    if task.case_id == "returns-policy":
        sys.exit(0)
    if task.case_id == "shipping-times":
        raise KeyboardInterrupt
    return str(task.input)


def chatty(task):
    print("a print from the task")
    sys.stdout.write("{not json\\n")
    subprocess.run([sys.executable, "-c", "print('a subprocess prints')"], check=True)
    return str(task.input)


def logs(task):
    import logging

    logging.getLogger("myapp.model").warning("retrying %s", task.case_id)
    return str(task.input)


def hangs(task):
    Path(__file__).with_name("started").touch()
    time.sleep(60 if task.case_id == "returns-policy" else 0)
    return str(task.input)
"""


@pytest.fixture(autouse=True)
def user_code() -> Iterator[None]:
    """Each test imports its modules afresh and leaves the registry as it found it."""
    with user_code_forgotten():
        yield


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "kp_misbehaving_task.py"
    path.write_text(TASK, encoding="utf-8")
    return path


def test_sys_exit_and_keyboard_interrupt_in_a_task_fail_only_their_case(
    kp: KpRunner, task_file: Path
) -> None:
    """sys.exit(0) and KeyboardInterrupt are two cases' errors; the report is written, exit 1."""
    run = kp(*ARGS, PLUGIN, "--task", f"{task_file}:answer", "-f", "json")
    assert run.code == 1
    cases = json.loads(run.out)["cases"]
    task = os.path.realpath(task_file)  # outside the working directory
    assert [case["task"]["error"] for case in cases[:2]] == [
        {"type": "SystemExit", "message": "sys.exit(0) was called", "at": f"{task}:9, in answer"},
        {"type": "KeyboardInterrupt", "message": "", "at": f"{task}:11, in answer"},
    ]
    assert [case["passed"] for case in cases[2:]] == [True, True]
    assert "case 'returns-policy': the task raised SystemExit: sys.exit(0) was called" in run.err


def test_what_a_task_prints_goes_to_stderr_and_stdout_stays_the_report(
    kp: KpRunner, task_file: Path
) -> None:
    """print() and sys.stdout.write in the task land on stderr; stdout parses as JSON."""
    run = kp(*ARGS, PLUGIN, "--task", f"{task_file}:chatty", "-f", "json")
    assert json.loads(run.out)["summary"]["cases"] == 4
    assert run.err.count("a print from the task") == 4
    assert "{not json" in run.err


def test_a_subprocess_of_the_task_prints_on_stderr_too(task_file: Path, tmp_path: Path) -> None:
    """A real kp process: descriptor 1 points at stderr while the task runs, the report alone
    reaches stdout."""
    done = subprocess.run(
        [*KP, "--task", f"{task_file}:chatty", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert json.loads(done.stdout)["summary"]["cases"] == 4
    assert done.stderr.count("a subprocess prints") == 4


def test_what_a_task_logs_is_named_by_its_logger_not_kp(task_file: Path, tmp_path: Path) -> None:
    """A real kp process: the task's warning reads 'myapp.model: ...', never 'kp: ...', which
    would pass it off as kp's own."""
    done = subprocess.run(
        [*KP, "--task", f"{task_file}:logs", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert "myapp.model: retrying returns-policy\n" in done.stderr
    assert "kp: retrying" not in done.stderr


def test_vv_logs_kp_s_debug_lines_and_a_task_s_warnings_not_every_library_s(
    tmp_path: Path,
) -> None:
    """kp -vv (a real process) shows kp's debug lines (a scorer's failure) and user code's
    warnings by their logger's name, not another library's debug lines; before, -vv lowered
    the root logger, so every imported library's (httpx, asyncio) came too."""
    args = _scored_by(
        tmp_path,
        "import logging; logging.getLogger('httpx').debug('a library line'); "
        "logging.getLogger('myapp').warning('a warning'); raise ValueError('boom')",
    )
    done = subprocess.run(
        [*KP[:3], "-vv", *args], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert "kp: scorer 'kp-test-own' raised on case 'a'\n" in done.stderr
    assert "myapp: a warning\n" in done.stderr
    assert "httpx: " not in done.stderr


def test_sys_exit_in_a_plugin_module_is_a_one_line_error(kp: KpRunner, tmp_path: Path) -> None:
    """A plugin that exits while imported: exit 2 and one line, not a silent exit 0."""
    plugin = tmp_path / "kp_exiting_plugin.py"
    plugin.write_text("import sys\nsys.exit(0)\n")
    run = kp(*ARGS, str(plugin), "-f", "json")
    assert run.code == 2
    assert run.out == ""
    assert run.err.strip() == (
        f"kp: error: plugin '{plugin}': importing it raised SystemExit: 0 (at {plugin}:2); "
        "fix the module (run it with python to see the traceback)"
    )


def test_sys_exit_in_a_plugin_scorer_is_that_scorer_s_error(kp: KpRunner, tmp_path: Path) -> None:
    """A scorer that calls sys.exit fails its cases as an error result; the run is reported."""
    plugin = tmp_path / "kp_exiting_scorer.py"
    plugin.write_text(
        "import sys\nfrom knowledgepulse.evals import Scorer, register_scorer\n\n"
        "@register_scorer('kp-test-exits')\nclass Exits(Scorer):\n"
        "    def evaluate(self, actual, expected, pages):\n        sys.exit(3)\n"
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers: [{type: kp-test-exits}, {type: content-quality}]\n")
    cases = tmp_path / "cases.jsonl"
    case = {"actual": "a text", "expected": {"contentPatterns": ["text"]}}
    cases.write_text("".join(json.dumps({"id": i, **case}) + "\n" for i in "ab"))
    run = kp("eval", str(cases), "--suite", str(suite), "--plugin", str(plugin), "-f", "json")
    assert run.code == 1
    document = json.loads(run.out)
    assert [len(case["scorers"]) for case in document["cases"]] == [2, 2]
    exits, content = document["cases"][1]["scorers"]
    at = f"(at {os.path.realpath(plugin)}:7, in evaluate)"  # outside the working directory
    assert exits["error"] == f"the scorer raised SystemExit: 3 {at}"
    assert content["score"] == 1.0


def test_a_hung_task_times_out_by_default(
    kp: KpRunner, task_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --timeout a call still has a limit (here shortened); the others are scored.

    The limit leaves the quick calls room on a loaded machine (0.3 s left little); the hung
    call sleeps past it in a thread the run abandons.
    """
    monkeypatch.setattr("knowledgepulse.cli.eval.DEFAULT_TIMEOUT_S", 1.5)
    started = time.perf_counter()
    run = kp(*ARGS, PLUGIN, "--task", f"{task_file}:hangs", "-f", "json")
    assert time.perf_counter() - started < 30  # the hung call's 60 s, unless abandoned
    first = json.loads(run.out)["cases"][0]["task"]
    assert first["timed_out"] is True
    assert first["error"]["message"] == "no answer within 1.5 s"


def test_timeout_zero_means_no_limit() -> None:
    """--timeout not given: the default; 0: none; a number: itself."""
    assert task_timeout(None) == DEFAULT_TIMEOUT_S == 300
    assert task_timeout(0) is None
    assert task_timeout(2.5) == 2.5


def _scored_by(tmp_path: Path, evaluate: str) -> tuple[str, ...]:
    """``kp eval`` of cases 'a' and 'b' (actual "a text", "b text") by a plugin scorer whose
    evaluate() body is given, and content-quality."""
    plugin = tmp_path / "kp_own_scorer.py"
    plugin.write_text(
        "import os, signal, time\nfrom knowledgepulse.evals import Scorer, register_scorer\n\n"
        "@register_scorer('kp-test-own')\nclass Own(Scorer):\n"
        f"    def evaluate(self, actual, expected, pages):\n        {evaluate}\n"
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers: [{type: kp-test-own, threshold: 0}, {type: content-quality}]\n")
    cases = tmp_path / "cases.jsonl"
    rows = [
        {"id": i, "actual": f"{i} text", "expected": {"contentPatterns": ["text"]}} for i in "ab"
    ]
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return ("eval", str(cases), "--suite", str(suite), "--plugin", str(plugin), "-f", "json")


def test_a_hung_scorer_is_that_case_s_error_past_the_timeout(kp: KpRunner, tmp_path: Path) -> None:
    """A plugin scorer past --timeout fails its case with an error naming it and the limit.

    The limit leaves the quick scorers room on a loaded machine (0.2 s left little); the hung
    one sleeps past it in a thread the run abandons.
    """
    hangs = "time.sleep(60 if actual == 'a text' else 0)\n        return ScoreResult(1.0)"
    args = _scored_by(tmp_path, f"from knowledgepulse.evals import ScoreResult\n        {hangs}")
    started = time.perf_counter()
    run = kp(*args, "--timeout", "1.5")
    assert time.perf_counter() - started < 30  # the hung scorer's 60 s, unless abandoned
    assert run.code == 1
    a, b = json.loads(run.out)["cases"]
    assert a["scorers"][0]["error"] == (
        "scorer 'kp-test-own' gave no result within 1.5 s; make it faster, or give it more time "
        "(--timeout)"  # as kp spells run_suite's timeout
    )
    assert a["scorers"][1]["score"] == 1.0
    assert [scorer["score"] for scorer in b["scorers"]] == [1.0, 1.0]


def test_keyboard_interrupt_in_a_scorer_is_that_scorer_s_error(
    kp: KpRunner, tmp_path: Path
) -> None:
    """A scorer raising KeyboardInterrupt fails its case; the run is reported, exit 1, not 130."""
    run = kp(*_scored_by(tmp_path, "raise KeyboardInterrupt('from the scorer')"))
    assert run.code == 1
    cases = json.loads(run.out)["cases"]
    errors = [case["scorers"][0]["error"] for case in cases]
    at = f"(at {os.path.realpath(tmp_path / 'kp_own_scorer.py')}:7, in evaluate)"
    assert errors == [f"the scorer raised KeyboardInterrupt: from the scorer {at}"] * 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_real_ctrl_c_while_a_scorer_runs_stops_the_run(kp: KpRunner, tmp_path: Path) -> None:
    """SIGINT to kp while a plugin scorer runs: exit 130 and one line, as for any Ctrl-C."""
    run = kp(*_scored_by(tmp_path, "os.kill(os.getpid(), signal.SIGINT); time.sleep(10)"))
    assert run.code == 130
    assert run.out == ""
    assert run.err == "kp: interrupted\n"


def test_a_plugin_whose_import_never_ends_is_a_one_line_error(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin looping at import: exit 2 and one line naming the limit (here shortened)."""
    monkeypatch.setattr("knowledgepulse._util.user_modules.IMPORT_TIMEOUT_S", 0.5)
    plugin = tmp_path / "kp_looping_plugin.py"
    plugin.write_text(
        "import time\nend = time.monotonic() + 10\nwhile time.monotonic() < end:\n    pass\n"
    )
    run = kp(*ARGS, str(plugin), "-f", "json")
    assert (run.code, run.out) == (2, "")
    assert run.err.strip() == (
        f"kp: error: plugin '{plugin}': importing it did not finish within 0.5 s; fix the "
        "module (an endless loop, or a wait, at import?)"
    )


def test_a_plugin_that_ends_the_process_at_import_is_an_error_not_a_pass(tmp_path: Path) -> None:
    """os._exit(0) in a plugin's import: kp says so and exits 2, never 0 with no report."""
    plugin = tmp_path / "kp_exiting_plugin.py"
    plugin.write_text("import os\nos._exit(0)\n")
    done = subprocess.run(
        [*KP[:-1], str(plugin), "-f", "json"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == (
        f"kp: error: plugin '{plugin}': it exited the process during import (exit code 0), "
        "which would end kp with no report; fix the module (run it with python)"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    ("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_a_real_ctrl_c_or_sigterm_stops_the_run_with_128_plus_its_number_and_one_line(
    task_file: Path, tmp_path: Path, sent: signal.Signals, code: int
) -> None:
    """SIGINT (130) or SIGTERM (143, a cancelled CI job) to kp while a task call hangs: one
    line on stderr, no report; before, SIGTERM also exited 130, which CI reads as a Ctrl-C."""
    process = subprocess.Popen(
        [*KP, "--task", f"{task_file}:hangs", "-f", "json", "--concurrency", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    started = task_file.with_name("started")
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(process.pid, sent)
    out, err = process.communicate(timeout=30)
    assert process.returncode == code
    assert out == ""
    assert err == "kp: interrupted\n"
