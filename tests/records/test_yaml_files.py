"""The YAML bounds where people write YAML by hand: weight-profile files."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledgepulse.errors import ProfileError
from knowledgepulse.value.profiles import load_profiles

WEIGHTS = "{complexity: 0.25, novelty: 0.25, tool_diversity: 0.25, outcome_confidence: 0.25}"


def test_a_domain_given_twice_is_an_error_at_its_line(tmp_path: Path) -> None:
    """The second ``legal:`` silently replaced the first; now the file is refused, located."""
    path = tmp_path / "profiles.yaml"
    path.write_text(f"legal: {WEIGHTS}\nmedical: {WEIGHTS}\nlegal: {WEIGHTS}\n")
    with pytest.raises(ProfileError) as raised:
        load_profiles(path)
    assert str(raised.value) == (
        f"{path}:3: legal: the key 'legal' appears twice in one mapping (lines 1 and 3); keep "
        "one (which one was meant is unknowable)"
    )


def test_a_nan_weight_is_an_error_at_its_path(tmp_path: Path) -> None:
    """``.nan`` is refused by the reader, at the weight that holds it."""
    path = tmp_path / "profiles.yaml"
    path.write_text("legal:\n  complexity: .nan\n")
    with pytest.raises(ProfileError, match=r"profiles.yaml:2: legal.complexity: NaN and infinite"):
        load_profiles(path)


def test_an_unpaired_surrogate_in_a_profile_file_is_only_a_warning(tmp_path: Path) -> None:
    r"""A ``\ud800`` escape is read as U+FFFD with a warning, which rejects nothing."""
    path = tmp_path / "profiles.yaml"
    path.write_text(f'"legal\\ud800": {WEIGHTS}\n')
    assert list(load_profiles(path)) == ["legal\ufffd"]
