"""Secret rules run in time linear in the text, and find what gitleaks' own patterns find.

So does the e-mail rule, the one identifier rule written as a pattern that can scan far.
"""

from __future__ import annotations

import dataclasses
import json
import time
from functools import cache
from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledgepulse.redact.detectors import (
    _CODE_END,
    _EMAIL,
    _EMAIL_ANYWHERE,
    _PROSE_END,
    _read,
    default_rules,
    gitleaks_rules,
)
from knowledgepulse.redact.rules import Rule

# gitleaks' rules that begin with two lazy runs of name characters, one inside the other.
NESTED = ("cisco-meraki-api-key", "cohere-api-token", "okta-access-token", "privateai-api-token",
          "sumologic-access-id")  # fmt: skip
SAMPLES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "gitleaks_tps.jsonl").read_text().splitlines()
]
SECRET = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
PIECES = [
    *("_", ".", "-", "x", " ", "=", ":", "\n", '"', "api_key", SECRET, SECRET.lower()[:32]),
    *("\t", "'", "=>", "\\n", "SECRET", "token", "key"),
]


def _rule(name: str) -> Rule:
    return next(rule for rule in gitleaks_rules() if rule.name == name)


@cache
def _as_gitleaks(name: str) -> Rule:
    """The rule with gitleaks' own pattern (its end read as in prose, as ours is; no more)."""
    item = next(item for item in _read("gitleaks_rules.toml")["rules"] if item["id"] == name)
    return dataclasses.replace(_rule(name), pattern=item["regex"].replace(_CODE_END, _PROSE_END))


def _gitleaks_names() -> list[str]:
    return [item["id"] for item in _read("gitleaks_rules.toml")["rules"]]


def test_a_long_line_holding_a_keyword_is_cleaned_in_linear_time() -> None:
    """A 47 KB tool output, an image in base64 after "coherent", "Meraki"...: under a second each.

    Before, cohere's and cisco-meraki's rules took 7 s of CPU each on it.
    """
    image = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
        "rkJggg"
    )
    line = "coherent Meraki Okta private_ai Sumo jfrog etsy atlassian: " + image * 500
    for name in (*NESTED, "jfrog-api-key", "etsy-access-token", "atlassian-api-token"):
        start = time.process_time()
        list(_rule(name).spans(line))
        assert time.process_time() - start < 1.0, name


def test_gitleaks_true_positives_are_found_where_gitleaks_patterns_find_them() -> None:
    """Each rule's spans on gitleaks' samples, alone and after name characters, are gitleaks'."""
    names = set(_gitleaks_names())
    for row in SAMPLES:
        if row["rule"] not in names:
            continue
        for text in (row["sample"], f"my.app-{row['sample']}", f"x = 1\n{row['sample']} # ok"):
            ours = list(_rule(row["rule"]).spans(text))
            assert ours == list(_as_gitleaks(row["rule"]).spans(text)), row["rule"]


KEYWORDS = sorted({word for rule in gitleaks_rules() for word in rule.keywords})


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(KEYWORDS).flatmap(lambda word: st.sampled_from([word, word.upper()]))
        | st.sampled_from(PIECES),
        max_size=30,
    )
)
def test_the_rules_find_the_spans_of_gitleaks_patterns(pieces: list[str]) -> None:
    """On texts of keywords, names and values, every rule finds what gitleaks' pattern does."""
    text = "".join(pieces)
    for name in _gitleaks_names():
        assert list(_rule(name).spans(text)) == list(_as_gitleaks(name).spans(text)), name


def test_a_rule_whose_allowlist_reads_the_whole_match_keeps_its_start() -> None:
    """generic-api-key's allowlist reads the match: "random_access" before "key" is no secret."""
    text = 'random_access_key = "Xk92jf8Lq0ZpW3nB7vRtY"'
    assert list(_rule("generic-api-key").spans(text)) == []
    assert list(_as_gitleaks("generic-api-key").spans(text)) == []


def test_a_long_run_without_an_at_sign_is_searched_for_an_email_in_linear_time() -> None:
    """16 KB of "a.a.a..." then an "@": well under a second (before: 30 s for 8 KB, quadratic)."""
    email = next(rule for rule in default_rules().rules if rule.name == "email")
    found = email.compiled.finditer("a." * 8000 + " @ jane@example.com", timeout=1.0)
    assert [match.group() for match in found] == ["jane@example.com"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["a", ".", "@", "%40", "ü", "用户", " ", "-", "1", "com", "xn--p1ai", "例子"]
        ),
        max_size=14,
    ).map("".join)
)
def test_an_email_is_found_where_a_search_from_every_position_finds_it(text: str) -> None:
    """Trying only where a run of local-part characters starts finds the same addresses."""
    spans = [match.span() for match in regex.finditer(_EMAIL, text)]
    assert spans == [match.span() for match in regex.finditer(_EMAIL_ANYWHERE, text)]
