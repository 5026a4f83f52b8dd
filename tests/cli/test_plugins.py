"""Third-party plugins installed as packages: what ``kp`` says when one is broken.

Each test installs a package the way pip does for ``kp`` to find (a ``dist-info`` with its
entry points, on ``PYTHONPATH``) and runs ``kp`` in a child process, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"

PLUGIN = """
from knowledgepulse.records import Problem
from knowledgepulse.sources import Source, StepBuilder, assemble


class Lines(Source):
    def recognises(self, value):
        return isinstance(value, dict) and "acme_line" in value

    def convert(self, records, options):
        for record in records:
            if isinstance(record, Problem):
                yield record
                continue
            if record.location.line == 2:
                raise KeyError("acme_line")
            steps = StepBuilder()
            steps.thought(record.value["acme_line"])
            steps.answer("done")
            yield assemble(steps, source=self.name, source_id=str(record.location.line),
                           success=True, options=options, location=record.location)
"""


def _installed(site: Path, entry_points: str, module: str = "") -> dict[str, str]:
    """The environment of a ``kp`` that finds the package ``acme-kp`` installed in ``site``."""
    info = site / "acme_kp-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-kp\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    if module:
        (site / "acme_kp_plugin.py").write_text(module)
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _kp(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "knowledgepulse.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def test_a_plugin_that_cannot_be_imported_is_one_kp_line_naming_its_package(
    tmp_path: Path,
) -> None:
    """A broken package is skipped with a ``kp:`` line saying which to fix; the run is clean."""
    env = _installed(
        tmp_path / "site", "[knowledgepulse.sources]\nbad = kp_no_such_module:Nothing\n"
    )
    done = _kp(env, "score", "--no-embedder", str(EXAMPLES / "traces" / "finance-tsmc.json"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "kp: source plugin 'bad' (kp_no_such_module:Nothing, of acme-kp 0.1.0) could not be "
        "loaded, so it is skipped: ModuleNotFoundError: No module named 'kp_no_such_module'; "
        "fix or uninstall it"
    )


def test_a_plugin_source_that_raises_is_an_error_of_its_file_not_of_kp(tmp_path: Path) -> None:
    """Exit 1 with a located line naming the plugin, the other file scored; no internal error."""
    env = _installed(
        tmp_path / "site", "[knowledgepulse.sources]\nacme = acme_kp_plugin:Lines\n", PLUGIN
    )
    acme = tmp_path / "acme.jsonl"
    acme.write_text("".join(json.dumps({"acme_line": f"step {i}"}) + "\n" for i in range(3)))
    trace = EXAMPLES / "traces" / "finance-tsmc.json"
    done = _kp(env, "score", "--no-embedder", "-f", "jsonl", str(acme), str(trace))
    assert done.returncode == 1, done.stderr
    assert "internal error" not in done.stderr
    assert f"{acme}:2: source 'acme' (the plugin acme_kp_plugin.Lines) raised KeyError" in (
        done.stderr
    )
    scored = [json.loads(line)["file"] for line in done.stdout.splitlines()]
    assert scored == [str(acme), str(trace)]


def test_inspect_names_a_plugin_source_and_the_package_that_publishes_it(tmp_path: Path) -> None:
    """kp inspect (text and JSON) says the source is a third party's, which class and package;
    a built-in's inspection names none. Before, a plugin's source read as one of kp's own."""
    env = _installed(
        tmp_path / "site", "[knowledgepulse.sources]\nacme = acme_kp_plugin:Lines\n", PLUGIN
    )
    acme = tmp_path / "acme.jsonl"
    acme.write_text(json.dumps({"acme_line": "step 0"}) + "\n")
    text = _kp(env, "inspect", str(acme)).stdout.splitlines()
    assert text[1:3] == [
        "  source     acme (recognised)",
        "  plugin     a third party's source: acme_kp_plugin.Lines, of acme-kp 0.1.0",
    ]
    shown = json.loads(_kp(env, "inspect", str(acme), "-f", "json").stdout)
    assert shown["plugin"] == "acme_kp_plugin.Lines, of acme-kp 0.1.0"
    trace = str(EXAMPLES / "traces" / "finance-tsmc.json")
    assert json.loads(_kp(env, "inspect", trace, "-f", "json").stdout)["plugin"] is None
    assert "plugin" not in _kp(env, "inspect", trace).stdout
