"""Secret shapes as a trace writes them: in a sentence, in base64, after a secret's name.

``data/secret_examples.jsonl``: one or more examples of each rule that gitleaks' own examples
do not cover, and the shapes issue 28 found missed (Stripe restricted keys, PlanetScale and npm
tokens, a Google API key in a task's objective, base64-wrapped tokens, a lower-case token after
a secret's name).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.redact import clean_text
from knowledgepulse.redact.detectors import default_rules

DATA = Path(__file__).parent / "data"
RULES = {rule.name: rule for rule in default_rules().rules}


def _lines(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


EXAMPLES = _lines("secret_examples.jsonl")
GITLEAKS_SECRETS = sorted({row["secret"] for row in _lines("gitleaks_tps.jsonl")})


@pytest.mark.parametrize("example", EXAMPLES, ids=[row["rule"] for row in EXAMPLES])
def test_each_example_is_found_by_its_own_rule_and_never_survives(example: dict[str, str]) -> None:
    """The rule named finds the example by itself, and cleaning at private leaves no secret."""
    assert list(RULES[example["rule"]].spans(example["sample"]))
    assert example["secret"] not in clean_text(example["sample"], "private").text


# azure-ad-client-secret ends a secret its own way, and its secret may hold "." and "~".
_OWN_END = {"azure-ad-client-secret"}


@pytest.mark.parametrize(
    "sentence",
    [
        "Use {}.",
        "the key ({}), then",
        "it is {}!",
        "<{}>",
        'Response: {{"body": "{{\\"data\\": \\"{}\\"}}"}}',  # JSON escaped inside a text
        'got "{}"; expected a valid boolean',  # a problem quoting a value (escaped if quoted)
        'got "use \\"{}.\\""; expected',
    ],
)
def test_a_token_found_between_spaces_is_found_before_punctuation(sentence: str) -> None:
    """Every gitleaks secret found bare between spaces is found at the end of a sentence too,
    and between quotes escaped as a JSON text inside a text escapes them."""
    rules = {row["secret"]: row["rule"] for row in _lines("gitleaks_tps.jsonl")}
    found = [
        secret
        for secret in GITLEAKS_SECRETS
        if secret not in clean_text(f"the value is {secret} now", "private").text
    ]
    missed = [
        (rules[secret], secret)
        for secret in found
        if secret in clean_text(sentence.format(secret), "private").text
        and rules[secret] not in _OWN_END
    ]
    assert len(found) > 200
    assert missed == []


def test_a_google_api_key_ending_a_task_objective_is_redacted() -> None:
    """AIza + 35 at the end of a sentence (issue 28: it leaked from a task's objective)."""
    key = "AIza" + "Sy9xQ2mB7vK4pL1nR8tW3cZ6hJ0dF5gE2uY"
    cleaned = clean_text(f"Find cafes near Lisbon with the Places API, key {key}.")
    assert cleaned.text == "Find cafes near Lisbon with the Places API, key [REDACTED:api_key]."


def test_a_token_holding_the_alphabet_is_still_redacted() -> None:
    """gitleaks' stopword (the alphabet) marks examples in code; in a trace the token goes."""
    for token in (
        "rk_live_abcdefghijklmnopqrstuvwxyz0123",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    ):
        assert clean_text(f"use {token} here", "private").text == "use [REDACTED:api_key] here"


@pytest.mark.parametrize(
    "name",
    ["password", "DB_PASSWORD", "x-api-key", "API key", "clientSecret", "auth_key",
     "credentials", "secret_token", "session_id", "private-key", '"password"', "'api_key'"],
)  # fmt: skip
def test_a_lower_case_token_after_a_secret_s_name_is_redacted(name: str) -> None:
    """A 26-letter lower-case value (no digit, no entropy to speak of) after its name goes."""
    for separator in (": ", "=", " = "):
        text = f"{name}{separator}qwhxkzmvbtrlpyfneudsjaiocg"
        assert clean_text(text, "private").text == f"{name}{separator}[REDACTED:password]"


def test_a_base64_run_that_decodes_to_a_secret_is_redacted_whole() -> None:
    """A token in base64 (standard or URL-safe, padded or not) is found by decoding the run."""
    token = "ghp_" + "Zq4mB7vK4pL1nR8tW3cZ6hJ0dF5gE2uYx9Ab"
    for encoded in (
        base64.b64encode(token.encode()).decode(),
        base64.urlsafe_b64encode(f'{{"token": "{token}"}}'.encode()).decode().rstrip("="),
    ):
        cleaned = clean_text(f"payload {encoded} sent", "private")
        assert cleaned.text == "payload [REDACTED:encoded_secret] sent"


def test_a_base64_run_of_ordinary_text_is_kept() -> None:
    """Decoding finds only what a secret rule finds in the decoded text."""
    encoded = base64.b64encode(b"just an ordinary sentence, nothing to hide").decode()
    assert clean_text(f"payload {encoded}", "private").text == f"payload {encoded}"


def test_basic_credentials_are_redacted_whatever_they_decode_to() -> None:
    """Basic <base64 of user:password>: the credentials go, not only a known token shape."""
    encoded = base64.b64encode(b"deploy:hunter22").decode()
    cleaned = clean_text(f"Authorization: Basic {encoded}", "private")
    assert cleaned.text == "Authorization: Basic [REDACTED:password]"
    assert clean_text("Basic usage of the API", "private").text == "Basic usage of the API"


def test_a_private_key_cut_before_its_end_line_is_redacted() -> None:
    """A PEM key cut by a length limit (an output_summary's 500 characters) keeps no line of it."""
    lines = [f"TESTONLY{index:02d}" + "Ab0+/" * 11 for index in range(12)]
    key = "\n".join(["-----BEGIN ENCRYPTED PRIVATE KEY-----", "Proc-Type: 4,ENCRYPTED", "", *lines])
    for text in (key[:500] + "…", json.dumps({"stdout": key})[:500]):
        cleaned = clean_text(f"$ cat id_rsa\n{text}", "private").text
        assert "TESTONLY" not in cleaned
        assert "[REDACTED:private_key]" in cleaned


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Cookie: session=abc123def456ghi789", "Cookie: session=[REDACTED:password]"),
        (
            'curl -H "Cookie: session=eyJhbGciOi123; theme=dark" https://x',
            'curl -H "Cookie: session=[REDACTED:password]; theme=dark" https://x',
        ),
        (
            '{"Cookie": "session=abc123; uid=42"}',
            '{"Cookie": "session=[REDACTED:password]; uid=[REDACTED:password]"}',
        ),
        ('Cookie: a="quoted1"\r\nHost: x', 'Cookie: a="[REDACTED:password]"\r\nHost: x'),
        (
            "Set-Cookie: SID=31d4d96e407aad42; Path=/; Secure; HttpOnly",
            "Set-Cookie: SID=[REDACTED:password]; Path=/; Secure; HttpOnly",
        ),
    ],
)
def test_every_value_of_a_cookie_header_is_redacted(text: str, cleaned: str) -> None:
    """A Cookie header's values are sessions; a Set-Cookie's first pair only (then attributes);
    a short plain word is a setting (theme=dark), kept."""
    assert clean_text(text, "private").text == cleaned
    assert clean_text(cleaned, "private").text == cleaned


@pytest.mark.parametrize(
    "text",
    [
        "Cookie: theme=dark; consent=yes; lang=en-GB; cookieconsent_status=dismiss",
        "Set-Cookie: sid=deleted; Path=/; Max-Age=0",
    ],
)
def test_a_cookie_that_is_a_short_plain_word_is_kept(text: str) -> None:
    """A setting (a theme, a consent flag, a language) is no session: nothing to hide."""
    assert clean_text(text, "private").text == text


@pytest.mark.parametrize("text", ["The cookie: it was eaten", "cookie: none set", "cookies: 3"])
def test_the_word_cookie_without_a_pair_redacts_nothing(text: str) -> None:
    """Only name=value pairs after a Cookie header's colon are values."""
    assert clean_text(text, "private").text == text


def test_a_percent_encoded_query_keeps_its_escapes_around_the_marker() -> None:
    """A logged redirect's query is matched as its server decodes it; only the value goes, and
    the escapes around it (%3D, %26page%3D2) are written as they were."""
    url = "/start?next=https%3A%2F%2Fx.io%2Fcb%3Ftoken%3DS9wZ6lsorvrqibWG%26page%3D2"
    assert clean_text(url, "private").text == (
        "/start?next=https%3A%2F%2Fx.io%2Fcb%3Ftoken%3D[REDACTED:password]%26page%3D2"
    )


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p orders",  # -p alone asks for the password; "orders" is the database
        "mysql -h db -P 3306 -uroot -p$MYSQL_PWD",
        "docker run -p 8080:80 nginx",
        "ssh -p 2222 deploy@build-3",
        "curl -u user:pass https://api.example.com",  # gitleaks' curl-auth-user allows it
        'sshpass -p "$SSHPASS" ssh host',
    ],
)
def test_a_short_option_that_is_no_password_is_kept(text: str) -> None:
    """A port, a prompt, a variable, gitleaks' placeholder: command-password-option keeps them."""
    assert clean_text(text, "private").text == text
