"""Secret rules run in time linear in the text, and find what gitleaks' own patterns find."""

from __future__ import annotations

import time

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.redact.detectors import _CODE_END, _PROSE_END, _read, default_rules
from knowledgepulse.redact.rules import Rule

# gitleaks' rules that begin with two lazy runs of name characters, one inside the other.
NESTED = ("cisco-meraki-api-key", "cohere-api-token", "okta-access-token", "privateai-api-token",
          "sumologic-access-id")  # fmt: skip
SECRET = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
PIECES = [
    *("cohere", "CO_API_KEY", "meraki", "Okta", "private_ai", "Sumo", "SUMO", "key", "token"),
    *("_", ".", "-", "x", " ", "=", ":", "\n", '"', "api_key", SECRET, SECRET.lower()[:32]),
]


def _rule(name: str) -> Rule:
    return next(rule for rule in default_rules().rules if rule.name == name)


def _gitleaks_pattern(name: str) -> regex.Pattern[str]:
    item = next(item for item in _read("gitleaks_rules.toml")["rules"] if item["id"] == name)
    return regex.compile(item["regex"].replace(_CODE_END, _PROSE_END))  # as in prose, no more


def test_a_long_line_holding_a_keyword_is_cleaned_in_linear_time() -> None:
    """A 47 KB tool output, an image in base64 after "coherent", "Meraki"...: under a second each.

    Before, cohere's and cisco-meraki's rules took 7 s of CPU each on it.
    """
    image = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
        "rkJggg"
    )
    line = "coherent Meraki Okta private_ai Sumo: " + image * 500
    for name in NESTED:
        start = time.process_time()
        list(_rule(name).spans(line))
        assert time.process_time() - start < 1.0, name


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(PIECES),
        max_size=30,
    )
)
def test_the_rules_find_the_spans_of_gitleaks_patterns(pieces: list[str]) -> None:
    """The shortened patterns match exactly where gitleaks' own do (whole match and secret)."""
    text = "".join(pieces)
    for name in NESTED:
        ours = [(m.span(), m.span(1)) for m in _rule(name).compiled.finditer(text)]
        theirs = [(m.span(), m.span(1)) for m in _gitleaks_pattern(name).finditer(text)]
        assert ours == theirs, name
