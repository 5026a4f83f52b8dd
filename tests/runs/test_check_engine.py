"""The embedding engine's settings that contradict each other are refused, naming parameters."""

from __future__ import annotations

from typing import Any

import pytest

from knowledgepulse.cli.main import flag_of
from knowledgepulse.errors import ParameterConflictError
from knowledgepulse.runs.scoring import check_engine


@pytest.mark.parametrize(
    ("settings", "python", "kp"),
    [
        ({"address": "auto"}, "address names a Ray cluster; it needs engine='ray'", "--engine ray"),
        ({"engine": "ray", "no_embedder": True}, "with no_embedder=True", "with --no-embedder"),
        ({"engine": "ray", "kind": "static"}, "or kind='static'", "or --embedder static"),
        ({"kind": "static", "max_windows": 4}, "drop max_windows", "drop --max-windows"),
        ({"corpus": True, "no_embedder": True}, "drop no_embedder=True", "drop --no-embedder"),
    ],
)
def test_a_conflict_names_the_parameters_and_kp_its_options(
    settings: dict[str, Any], python: str, kp: str
) -> None:
    """Python reads its parameters in the message; ``kp`` the same message with its flags."""
    with pytest.raises(ParameterConflictError) as raised:
        check_engine(**settings)
    assert python in str(raised.value)
    assert kp in raised.value.message_with(flag_of)


def test_settings_that_agree_pass() -> None:
    """Ray with a cluster, the static embedder locally, a corpus with an embedder: no error."""
    check_engine(engine="ray", address="auto", max_windows=8)
    check_engine(kind="static", corpus=True)
