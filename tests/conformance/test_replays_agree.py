"""One recording replayed through several frameworks is one conversation: its facts agree.

``replay_frameworks.py`` serves one recorded model conversation (a cassette) to several
frameworks and writes what each records. Each file's facts are counted by its own format's
reader of ``count_facts.py``, and kp is checked against them file by file; but a reader that
took the wrong user turn (the OpenAI Agents SDK's second run of a conversation read as asking
the first question again) agreed with kp and with itself. Across the replays of a recording
the objectives must agree, run by run, wherever a file records one (an Agents SDK export of a
Responses run keeps no text).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

from tests.conformance.count_facts import FILES, HERE

# A replayed file of one recording: | `file` | owner/repo | `path` | `commit` | licence | replayed
_REPLAYED = re.compile(
    r"^\| `([^`]+)` \| ([^ |]+) \| `([^`]+)` \| `[0-9a-f]+` \| [^|]+ \| replayed", re.MULTILINE
)


def _objectives_by_recording() -> dict[tuple[str, int], dict[str, list[str | None]]]:
    """For each recording and run count, each replayed file's objectives in run order."""
    found: dict[tuple[str, int], dict[str, list[str | None]]] = defaultdict(dict)
    for name, repository, path in _REPLAYED.findall((HERE / "SOURCES.md").read_text()):
        facts = FILES / f"{name}.facts.json"
        if facts.exists():
            runs = json.loads(facts.read_text())["runs"]
            found[(f"{repository}/{path}", len(runs))][name] = [run["objective"] for run in runs]
    return found


def test_the_replays_of_a_recording_agree_on_each_runs_objective() -> None:
    groups = _objectives_by_recording()
    compared = 0
    for (recording, _), files in groups.items():
        for run in range(len(next(iter(files.values())))):
            said = {name: objectives[run] for name, objectives in files.items()}
            recorded = {text for text in said.values() if text is not None}
            assert len(recorded) <= 1, (recording, run, said)
            compared += len(said) > 1 and bool(recorded)
    assert compared >= 20  # the replays of many recordings, not a pattern that matched none
