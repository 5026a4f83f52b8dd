"""Recall on public rule sets' own test data: gitleaks' true positives, presidio's PII cases.

``data/gitleaks_tps.jsonl``: 811 samples of 212 gitleaks rules (``make_gitleaks_tps.py``);
``data/presidio_cases.jsonl``: presidio's e-mail, card, IBAN, IP, phone and SSN recognizer
cases (``make_presidio_cases.py``). Both MIT, see THIRD_PARTY_NOTICES.md.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.redact import clean_text, redact_document
from tests.builders import trace_json

DATA = Path(__file__).parent / "data"


def _lines(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


GITLEAKS = _lines("gitleaks_tps.jsonl")
PRESIDIO = _lines("presidio_cases.jsonl")


def test_secrets_recall_on_gitleaks_true_positives_is_at_least_0_98() -> None:
    """Each sample's secret is gone, even at private (secrets are always redacted)."""
    missed = [
        (row["rule"], row["sample"])
        for row in GITLEAKS
        if row["secret"] in clean_text(row["sample"], "private").text
    ]
    assert len({row["rule"] for row in GITLEAKS}) >= 200
    assert 1 - len(missed) / len(GITLEAKS) >= 0.98, missed


def _no_one_s(part: str) -> bool:
    # The loopback and unspecified addresses (::1, 0.0.0.0): presidio finds them, we keep them.
    try:
        address = ipaddress.ip_address(part.split("%", maxsplit=1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None) or address
    return bool(mapped.is_loopback or mapped.is_unspecified)


def test_pii_recall_on_presidio_cases_is_at_least_0_95() -> None:
    """Each identifier presidio expects to find is gone at the aggregated level (but the
    loopback and unspecified addresses, which name no one: 11 of its 282)."""
    expected = [
        (row["text"], part) for row in PRESIDIO for part in row["expected"] if not _no_one_s(part)
    ]
    missed = [(text, part) for text, part in expected if part in clean_text(text).text]
    assert len(expected) > 250
    assert 1 - len(missed) / len(expected) >= 0.98, missed


def test_at_private_no_presidio_identifier_is_redacted() -> None:
    """Nothing but secrets is redacted at private: presidio's texts come back as they were."""
    changed = [
        row["text"] for row in PRESIDIO if clean_text(row["text"], "private").text != row["text"]
    ]
    assert changed == []


_SAMPLES = [row["sample"] for row in GITLEAKS]
_SECRETS = [row["secret"] for row in GITLEAKS]
_PLAIN_KEYS = st.sampled_from(["query", "args", "config", "body", "data", "env", "text"])


@st.composite
def _nested(draw: st.DrawFn, leaf: str) -> Any:
    """``leaf`` at a random depth of lists and objects under ordinary keys."""
    value: Any = leaf
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        if draw(st.booleans()):
            value = [draw(st.integers(-1000, 1000)), value] if draw(st.booleans()) else [value]
        else:
            value = {draw(_PLAIN_KEYS): value, "n": draw(st.integers(-1000, 1000))}
    return value


@given(index=st.integers(min_value=0, max_value=len(GITLEAKS) - 1), data=st.data())
def test_a_secret_planted_in_its_context_anywhere_in_a_tool_input_never_survives(
    index: int, data: st.DataObject
) -> None:
    """A gitleaks sample planted at any depth of a tool input: its secret is gone."""
    document = trace_json()
    document["steps"][1]["input"] = {"payload": data.draw(_nested(_SAMPLES[index]))}
    document["metadata"]["privacy_level"] = data.draw(
        st.sampled_from(["private", "aggregated", "federated"])
    )
    redacted, _ = redact_document(document)
    assert _SECRETS[index] not in orjson.dumps(redacted).decode()


@given(
    index=st.integers(min_value=0, max_value=len(GITLEAKS) - 1),
    key=st.sampled_from(
        ["password", "api_key", "apiKey", "token", "client_secret", "Authorization"]
    ),
    data=st.data(),
)
def test_a_bare_secret_under_a_key_naming_a_secret_never_survives(
    index: int, key: str, data: st.DataObject
) -> None:
    """A bare secret, no context around it, under a secret's key at any depth: gone."""
    document = trace_json()
    document["steps"][1]["input"] = data.draw(_nested({key: _SECRETS[index]}))  # type: ignore[arg-type]
    redacted, _ = redact_document(document)
    assert _SECRETS[index] not in orjson.dumps(redacted).decode()
