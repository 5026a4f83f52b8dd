"""Weight profiles: the built-in table, selection by domain, validated registration."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.errors import ProfileError
from knowledgepulse.value.profiles import (
    BUILTIN_PROFILES,
    ProfileRegistry,
    ScoringWeights,
    load_profiles,
    misspelt_profiles,
)
from tests.value.spec_oracle import SPEC_PROFILES


def test_builtin_profiles_are_the_spec_table() -> None:
    """The five built-in profiles hold exactly the spec's weights, in its order."""
    assert {name: w.as_tuple() for name, w in BUILTIN_PROFILES.items()} == SPEC_PROFILES
    assert list(BUILTIN_PROFILES) == list(SPEC_PROFILES)


@pytest.mark.parametrize(
    ("domain", "profile"),
    [
        ("finance", "finance"),
        ("code", "code"),
        ("code-review", "default"),
        ("Finance", "default"),
        ("", "default"),
    ],
)
def test_selection_is_an_exact_match_else_default(domain: str, profile: str) -> None:
    """code-review is not code, Finance is not finance: unknown domains use default."""
    name, weights = ProfileRegistry().select(domain)
    assert name == profile
    assert weights == BUILTIN_PROFILES[profile]


def test_registered_profile_is_selected_by_its_domain() -> None:
    """A user profile is used for its domain."""
    registry = ProfileRegistry()
    registry.register(
        "legal",
        {"complexity": 0.4, "novelty": 0.2, "tool_diversity": 0.1, "outcome_confidence": 0.3},
    )
    assert registry.select("legal") == ("legal", ScoringWeights(0.4, 0.2, 0.1, 0.3))


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ((0.5, 0.5, 0.5, 0.5), "sum to 1.0"),
        ((1.2, -0.2, 0.0, 0.0), "in \\[0, 1\\]"),
        ((1.5, 0.0, 0.0, 0.0), "'complexity' must be in \\[0, 1\\], got 1.5"),
        ((math.nan, 0.5, 0.25, 0.25), "in \\[0, 1\\]"),
        ((True, 0.0, 0.0, 0.0), "must be a number"),
    ],
)
def test_invalid_weights_are_refused(
    weights: tuple[float, float, float, float], message: str
) -> None:
    """Weights outside [0, 1], not numbers, or not summing to 1 fail with a clear error."""
    with pytest.raises(ProfileError, match=message):
        ScoringWeights(*weights)


def test_sum_tolerance_is_one_in_a_billion() -> None:
    """A sum off by less than 1e-9 is accepted; off by 1e-8 is not."""
    ScoringWeights(0.1, 0.2, 0.3, 0.4 + 5e-10)
    with pytest.raises(ProfileError):
        ScoringWeights(0.1, 0.2, 0.3, 0.4 + 1e-8)


@given(st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4), st.floats(0.5, 0.99))
def test_weights_summing_to_one_are_accepted_and_any_fewer_are_refused(
    raw: list[float], scale: float
) -> None:
    """Normalised weights are a profile; the same scaled below 1 are refused by their sum."""
    total = math.fsum(raw)
    weights = [value / total for value in raw]
    assert ScoringWeights(*weights).as_tuple() == tuple(weights)
    with pytest.raises(ProfileError, match=r"sum to 1\.0"):
        ScoringWeights(*(value * scale for value in weights))


WEIGHTS = {"complexity": 0.25, "novelty": 0.35, "tool_diversity": 0.15, "outcome_confidence": 0.25}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({**WEIGHTS, "threshold": 0.0}, "^legal: unknown threshold "),
        ({**WEIGHTS, "noveltyy": 0.0}, "unknown noveltyy .*Did you mean 'novelty'\\?$"),
        (
            {k: v for k, v in WEIGHTS.items() if k != "novelty"},
            "^legal: missing novelty \\(a profile gives exactly",
        ),
    ],
)
def test_a_mapping_with_a_name_too_many_or_too_few_is_refused_naming_it(
    data: dict[str, float], message: str
) -> None:
    """Valid weights do not excuse an extra or a missing name; an extra is matched to a name."""
    with pytest.raises(ProfileError, match=message):
        ScoringWeights.from_mapping(data, name="legal")


def test_mapping_with_a_misspelt_name_is_refused() -> None:
    """A profile mapping must name exactly the four dimensions."""
    with pytest.raises(ProfileError, match="missing novelty; unknown noveltty"):
        ScoringWeights.from_mapping(
            {
                "complexity": 0.25,
                "noveltty": 0.35,
                "tool_diversity": 0.15,
                "outcome_confidence": 0.25,
            }
        )


@pytest.mark.parametrize("weights", [1, [0.25, 0.25, 0.25, 0.25], None])
def test_weights_that_are_no_mapping_are_a_profile_error_naming_the_domain(weights: object) -> None:
    """``ProfileRegistry({'legal': 1})`` says what a profile takes, not a TypeError of its code."""
    with pytest.raises(ProfileError, match=r"^legal: expected the weights of complexity, novelty"):
        ProfileRegistry({"legal": weights})  # type: ignore[dict-item]


def test_changing_an_existing_profile_needs_replace() -> None:
    """Registering different weights for an existing domain needs replace=True."""
    registry = ProfileRegistry()
    new = ScoringWeights(0.25, 0.25, 0.25, 0.25)
    with pytest.raises(ProfileError, match="replace=True"):
        registry.register("finance", new)
    registry.register("finance", new, replace=True)
    assert registry["finance"] == new


def test_registering_the_same_weights_again_needs_no_replace() -> None:
    """Only a change needs replace=True: registering a profile's own weights again is harmless."""
    registry = ProfileRegistry()
    registry.register("legal", WEIGHTS)
    assert registry.register("legal", dict(WEIGHTS)) == ScoringWeights(**WEIGHTS)
    assert registry.register("finance", BUILTIN_PROFILES["finance"]) == BUILTIN_PROFILES["finance"]


def test_registries_are_independent() -> None:
    """A profile registered on one registry does not leak into another or the built-ins."""
    first = ProfileRegistry()
    first.register("legal", ScoringWeights(0.25, 0.25, 0.25, 0.25))
    assert "legal" not in ProfileRegistry()
    assert "legal" not in BUILTIN_PROFILES


def test_profiles_file_reports_every_bad_profile_with_its_line(tmp_path: Path) -> None:
    """A profiles file with two bad entries lists both, each with file and line."""
    path = tmp_path / "profiles.yaml"
    path.write_text(
        "legal:\n  complexity: 0.4\n  novelty: 0.2\n"
        "  tool_diversity: 0.1\n  outcome_confidence: 0.3\n"
        "bad_sum:\n  complexity: 0.5\n  novelty: 0.5\n"
        "  tool_diversity: 0.5\n  outcome_confidence: 0.5\n"
        "typo:\n  complexity: 0.25\n  novelty: 0.25\n"
        "  tool_diversty: 0.25\n  outcome_confidence: 0.25\n"
    )
    with pytest.raises(ProfileError) as caught:
        load_profiles(path)
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{path}:6: bad_sum: weights must sum to 1.0")
    assert lines[1].startswith(
        f"{path}:14: typo.tool_diversty: missing tool_diversity; unknown tool_diversty"
    )


def test_profiles_file_loads_valid_profiles(tmp_path: Path) -> None:
    """A valid profiles file gives validated weights by domain."""
    path = tmp_path / "profiles.json"
    path.write_text(
        '{"legal": {"complexity": 0.4, "novelty": 0.2, '
        '"tool_diversity": 0.1, "outcome_confidence": 0.3}}'
    )
    assert load_profiles(path) == {"legal": ScoringWeights(0.4, 0.2, 0.1, 0.3)}


def test_profiles_file_names_an_empty_domain_with_its_file_and_line(tmp_path: Path) -> None:
    """An empty domain name in a profiles file is an error at its file and line, like the rest."""
    path = tmp_path / "profiles.yaml"
    path.write_text(
        "legal:\n  complexity: 0.4\n  novelty: 0.2\n"
        "  tool_diversity: 0.1\n  outcome_confidence: 0.3\n"
        "'':\n  complexity: 0.25\n  novelty: 0.25\n"
        "  tool_diversity: 0.25\n  outcome_confidence: 0.25\n"
    )
    with pytest.raises(ProfileError) as caught:
        load_profiles(path)
    assert str(caught.value) == f"{path}:6: ['']: a profile needs a non-empty domain name"


def test_a_domain_without_a_profile_is_said_and_a_registered_one_is_not() -> None:
    """``unweighed`` says why a domain gets the default weights; a user's profile silences it."""
    registry = ProfileRegistry()
    said = registry.unweighed("legal")
    assert said is not None
    assert "'default' weights" in said
    assert ", ".join(BUILTIN_PROFILES) in said
    assert registry.unweighed("code") is None
    registry.register("legal", BUILTIN_PROFILES["finance"])
    assert registry.unweighed("legal") is None


def test_profiles_file_names_each_bad_weight_at_its_own_line_and_key(tmp_path: Path) -> None:
    """Every bad weight of a profile is said at once, each at its key's line and path."""
    path = tmp_path / "profiles.yaml"
    path.write_text(
        "legal:\n  complexity: -0.1\n  novelty: 0.5\n"
        "  tool_diversity: x\n  outcme_confidence: 0.3\n"
    )
    with pytest.raises(ProfileError) as caught:
        load_profiles(path)
    lines = str(caught.value).splitlines()
    assert (
        lines[0] == f"{path}:2: legal.complexity: weight 'complexity' must be in [0, 1], got -0.1"
    )
    assert (
        lines[1]
        == f"{path}:4: legal.tool_diversity: weight 'tool_diversity' must be a number, got 'x'"
    )
    assert lines[2].startswith(f"{path}:5: legal.outcme_confidence: missing outcome_confidence")
    assert lines[2].endswith("Did you mean 'outcome_confidence'?")
    assert len(lines) == 3


def test_a_profile_named_twice_in_a_json_file_is_an_error(tmp_path: Path) -> None:
    """JSON keeps the last of two equal keys: in a profiles file that hid a profile unseen."""
    path = tmp_path / "profiles.json"
    weights = (
        '{"complexity": 0.4, "novelty": 0.2, "tool_diversity": 0.1, "outcome_confidence": 0.3}'
    )
    other = weights.replace("0.4", "0.1").replace("0.3", "0.6")
    path.write_text(f'{{"legal": {weights},\n "legal": {other}}}')
    with pytest.raises(
        ProfileError, match=r"the key 'legal' appears twice in one object; .* keep one"
    ):
        load_profiles(path)


@pytest.mark.parametrize(("text", "got"), [("", "the file is empty"), ("[1, 2]", "got 2 values")])
def test_a_profiles_file_that_is_no_mapping_says_what_it_holds(
    tmp_path: Path, text: str, got: str
) -> None:
    """An empty file or a list is refused with what a profiles file looks like and what it got."""
    path = tmp_path / "profiles.json"
    path.write_text(text)
    with pytest.raises(ProfileError, match=f"legal: {{complexity: 0.3.*{got}"):
        load_profiles(path)


def test_a_registry_names_every_bad_profile_at_once() -> None:
    """``TraceValueScorer(profiles=...)`` with two bad profiles says both, not the first only."""
    good = {"complexity": 0.4, "novelty": 0.2, "tool_diversity": 0.1, "outcome_confidence": 0.3}
    with pytest.raises(ProfileError) as caught:
        ProfileRegistry({"a": good | {"novelty": 0.9}, "b": good, "c": good | {"complexity": -1}})  # type: ignore[dict-item]
    lines = str(caught.value).splitlines()
    assert [line.split(":")[0] for line in lines] == ["a", "c"]


def test_weights_off_their_sum_say_how_to_fix_them() -> None:
    """The sum error says what the sum is and what it must be."""
    with pytest.raises(ProfileError, match=r"sum to 1\.1 .*change them so that they sum to 1"):
        ScoringWeights(0.3, 0.3, 0.2, 0.3)


def test_a_profile_spelt_nearly_as_a_scored_domain_it_weighed_none_of_is_said() -> None:
    """custmer_service weighed nothing while customer_service got other weights: a typo, said."""
    registry = ProfileRegistry({"custmer_service": ScoringWeights(0.1, 0.2, 0.3, 0.4)})
    (said,) = misspelt_profiles(registry, {"customer_service": 200, "finance": 3})
    assert "'custmer_service' weighed no trace" in said
    assert "200 traces of domain 'customer_service' got the 'customer_service' weights" in said
    assert said.endswith("did you mean 'customer_service'?")


def test_a_profile_for_a_domain_absent_from_the_input_is_not_a_typo() -> None:
    """A team's file covers many domains: one unused and near no scored domain is not said."""
    registry = ProfileRegistry({"legal": ScoringWeights(0.1, 0.2, 0.3, 0.4)})
    assert misspelt_profiles(registry, {"customer_service": 200}) == []
    registry.register("customer_service", ScoringWeights(0.1, 0.2, 0.3, 0.4), replace=True)
    assert misspelt_profiles(registry, {"customer_service": 200}) == []


@pytest.mark.parametrize(("key", "said"), [("threshold", "--min-score"), ("rules", "fixed")])
def test_a_threshold_or_rules_in_a_profiles_file_says_where_they_are_set(
    tmp_path: Path, key: str, said: str
) -> None:
    """``threshold: 0.8`` in a profiles file is refused with where the threshold is set."""
    path = tmp_path / "profiles.yaml"
    path.write_text(f"{key}: 0.8\n")
    with pytest.raises(ProfileError, match=f":1: {key}: expected a mapping .*{said}"):
        load_profiles(path)


@pytest.mark.parametrize("text", ["[1, 2]\n{", "[1, 2", "{"])
def test_a_profiles_file_cut_short_is_a_profile_error_naming_its_line(
    tmp_path: Path, text: str
) -> None:
    """A JSON array cut short (its first values read) is refused with where it breaks.

    Before, its first value, no mapping, was read as the profiles: an AttributeError, which kp
    called a bug of its own.
    """
    path = tmp_path / "profiles.json"
    path.write_text(text)
    with pytest.raises(ProfileError, match=r"profiles\.json:\d+: "):
        load_profiles(path)
