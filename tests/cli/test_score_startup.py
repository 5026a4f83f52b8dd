"""``kp score`` loads only what the run needs: start-up is most of a one-trace run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples" / "traces"

_PROBE = """
import json, sys
from knowledgepulse.cli.main import main
code = main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""

# Each is a tenth of a one-trace run or more, or brings numpy: loaded only by the runs that
# need them (an embedder or a cache, YAML input, the async API, --min-score, --order time or
# --corpus, the table). pydantic loads always: its models are the one definition of a trace.
NOT_NEEDED = (
    "numpy",
    "yaml",
    "asyncio",
    "knowledgepulse.curation",
    "knowledgepulse.records.yaml",
    "knowledgepulse.reports.value_table",
    "knowledgepulse.redact",  # the rules, regex and ahocorasick_rs: only with --redact
)


def _loaded(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, check=False
    )
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    return done, modules


def test_scoring_json_lines_without_an_embedder_loads_no_numpy_yaml_or_curation(
    tmp_path: Path,
) -> None:
    """One trace, --no-embedder, JSON Lines out: none of the modules that run does not use."""
    trace = tmp_path / "one.jsonl"
    trace.write_text((EXAMPLES / "traces.jsonl").read_text().splitlines()[0] + "\n")
    done, modules = _loaded("score", "--no-embedder", "-f", "jsonl", str(trace))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["threshold"] == 0.75  # the default, applied by the command
    assert [name for name in NOT_NEEDED if name in modules] == []


def test_an_invalid_record_is_reported_with_the_models_message(tmp_path: Path) -> None:
    """An invalid record is reported, located, by the models' validation; the run exits 1."""
    done, modules = _loaded(
        "score", "--no-embedder", "-f", "jsonl", str(EXAMPLES / "invalid.jsonl")
    )
    assert done.returncode == 1
    assert "knowledgepulse.trace.models" in modules
    assert "invalid.jsonl:" in done.stderr


def test_a_percentile_min_score_still_loads_curation(tmp_path: Path) -> None:
    """The lazy imports load when asked for: p50 needs curation's percentiles."""
    trace = tmp_path / "one.jsonl"
    trace.write_text((EXAMPLES / "traces.jsonl").read_text().splitlines()[0] + "\n")
    done, modules = _loaded(
        "score", "--no-embedder", "-f", "jsonl", "--min-score", "p50", str(trace)
    )
    assert done.returncode == 0, done.stderr
    assert "knowledgepulse.curation" in modules
