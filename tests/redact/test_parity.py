"""Every case of the reference SDK's ``cleanPii`` tests, translated: they all hold.

From chesterkuo/OpenKnowledgePulse, ``packages/sdk/src/utils/pii-cleaner.test.ts``: each
``expect`` is kept (``toBe`` as ``==``, ``toContain`` as ``in``, ``toContainEqual`` on a
redaction as a count).
"""

from __future__ import annotations

import pytest

from knowledgepulse.redact import clean_text

OPENAI = "sk-abc123def456ghi789jkl012mno345"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

# (test name, input, level, expected text, expected {type: count} within the redactions)
EXACT = [
    (
        "OpenAI API keys",
        f"My key is {OPENAI}",
        None,
        "My key is [REDACTED:api_key]",
        {"api_key": 1},
    ),
    (
        "GitHub personal access tokens (ghp_)",
        "Token: ghp_" + "A" * 36,
        None,
        "Token: [REDACTED:api_key]",
        {"api_key": 1},
    ),
    ("GitHub OAuth tokens (gho_)", "OAuth: gho_" + "B" * 36, None, "OAuth: [REDACTED:api_key]", {}),
    ("GitHub app tokens (ghs_)", "App: ghs_" + "C" * 36, None, "App: [REDACTED:api_key]", {}),
    (
        "AWS access keys",
        "AWS key: AKIAIOSFODNN7EXAMPLE",
        None,
        "AWS key: [REDACTED:api_key]",
        {"api_key": 1},
    ),
    (
        "KP API keys",
        "API key: kp_a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6",
        None,
        "API key: [REDACTED:api_key]",
        {"api_key": 1},
    ),
    (
        "Slack bot tokens (xoxb-)",
        "Slack: xoxb-fake-token-for-testing",
        None,
        "Slack: [REDACTED:api_key]",
        {"api_key": 1},
    ),
    (
        "Slack user tokens (xoxp-)",
        "Token: xoxp-123-456-789-abcdef",
        None,
        "Token: [REDACTED:api_key]",
        {},
    ),
    (
        "password=value patterns",
        "password=mysecretpass123",
        None,
        "password=[REDACTED:password]",
        {"password": 1},
    ),
    ("secret=value patterns", "secret=topsecretvalue", None, "secret=[REDACTED:password]", {}),
    ("token=value patterns", "token=abc123def456", None, "token=[REDACTED:password]", {}),
    ("api_key=value patterns", "api_key=myapikey123", None, "api_key=[REDACTED:password]", {}),
    (
        "PostgreSQL connection strings",
        "DB_URL=postgresql://admin:secret@db.example.com:5432/mydb",
        None,
        "DB_URL=[REDACTED:connection_string]",
        {"connection_string": 1},
    ),
    (
        "Redis connection strings",
        "REDIS_URL=redis://:mypassword@redis.example.com:6379/0",
        None,
        "REDIS_URL=[REDACTED:connection_string]",
        {},
    ),
    (
        "MongoDB+SRV connection strings",
        "MONGO=mongodb+srv://user:pass@cluster.mongodb.net/db",
        None,
        "MONGO=[REDACTED:connection_string]",
        {},
    ),
    (
        "connection strings are redacted before generic password patterns",
        "postgresql://user:password=test@host:5432/db",
        None,
        "[REDACTED:connection_string]",
        {},
    ),
    (
        "Bearer tokens",
        f"Authorization: Bearer {JWT}",
        None,
        "Authorization: Bearer [REDACTED:bearer_token]",
        {"bearer_token": 1},
    ),
    (
        "Bearer kp_ tokens are KP keys, not bearer tokens",
        "Authorization: Bearer kp_a1b2c3d4e5f6a7b8",
        None,
        "Authorization: Bearer [REDACTED:api_key]",
        {},
    ),
    (
        "email addresses",
        "Contact: alice@example.com for details",
        None,
        "Contact: [REDACTED:email] for details",
        {"email": 1},
    ),
    (
        "multiple email addresses",
        "From: a@b.com to c@d.org",
        None,
        "From: [REDACTED:email] to [REDACTED:email]",
        {"email": 2},
    ),
    (
        "US phone numbers",
        "Call me at (555) 123-4567",
        None,
        "Call me at [REDACTED:phone]",
        {"phone": 1},
    ),
    ("phone numbers with dashes", "Phone: 555-234-5678", None, "Phone: [REDACTED:phone]", {}),
    (
        "international phone numbers with + prefix",
        "WhatsApp: +441234567890",
        None,
        "WhatsApp: [REDACTED:phone]",
        {},
    ),
    (
        "IPv4 addresses",
        "Server at 192.168.1.100 is down",
        None,
        "Server at [REDACTED:ip] is down",
        {"ip": 1},
    ),
    (
        "multiple IPv4 addresses",
        "From 10.0.0.1 to 10.0.0.2",
        None,
        "From [REDACTED:ip] to [REDACTED:ip]",
        {"ip": 2},
    ),
    (
        "/home/<user>/ paths",
        "Found at /home/alice/documents/secret.txt",
        None,
        "Found at [REDACTED:filepath]",
        {"filepath": 1},
    ),
    (
        "/Users/<user>/ macOS paths",
        "Config at /Users/bob/.config/app.json",
        None,
        "Config at [REDACTED:filepath]",
        {},
    ),
    (
        "C:\\Users\\<user>\\ Windows paths",
        "File: C:\\Users\\charlie\\Desktop\\report.xlsx",
        None,
        "File: [REDACTED:filepath]",
        {},
    ),
    (
        "clean text passes through unchanged",
        "This is perfectly clean text with no PII whatsoever.",
        None,
        "This is perfectly clean text with no PII whatsoever.",
        {},
    ),
    (
        "markdown content passes through unchanged",
        "# Title\n\n- item 1\n- item 2\n\n```code block```",
        None,
        "# Title\n\n- item 1\n- item 2\n\n```code block```",
        {},
    ),
    ("empty string returns empty result", "", None, "", {}),
    (
        "defaults to aggregated level when no level specified",
        "Email: test@test.com",
        None,
        "Email: [REDACTED:email]",
        {},
    ),
]

# (test name, input, level, substrings the result holds, substrings it must not hold)
CONTAINS = [
    (
        "password patterns with colon separator",
        'password: "hunter2"',
        None,
        ["[REDACTED:password]"],
        [],
    ),
    (
        '"private" level only redacts secrets, keeps emails',
        f"User alice@example.com has key {OPENAI}",
        "private",
        ["alice@example.com", "[REDACTED:api_key]"],
        ["sk-"],
    ),
    (
        '"private" level keeps IPv4 addresses',
        "Server 192.168.1.1 with password=secret123",
        "private",
        ["192.168.1.1", "[REDACTED:password]"],
        [],
    ),
    (
        '"private" level keeps phone numbers',
        "Call (555) 123-4567, token=mysecret",
        "private",
        ["(555) 123-4567", "[REDACTED:password]"],
        [],
    ),
    (
        '"private" level keeps file paths',
        "Path /home/alice/file.txt with secret=abc",
        "private",
        ["/home/alice/file.txt", "[REDACTED:password]"],
        [],
    ),
    (
        '"aggregated" level redacts everything',
        f"alice@example.com at 192.168.1.1 with key {OPENAI} in /home/alice/app",
        "aggregated",
        ["[REDACTED:email]", "[REDACTED:ip]", "[REDACTED:api_key]", "[REDACTED:filepath]"],
        ["alice@example.com", "192.168.1.1", "sk-", "/home/alice"],
    ),
    (
        '"federated" level redacts identifiers and secrets',
        "Email: bob@test.org, IP: 10.0.0.5, Key: AKIAIOSFODNN7EXAMPLE",
        "federated",
        ["[REDACTED:email]", "[REDACTED:ip]", "[REDACTED:api_key]"],
        [],
    ),
    (
        "Bearer kp_ tokens keep the word Bearer and are no bearer_token",
        "Authorization: Bearer kp_a1b2c3d4e5f6a7b8",
        None,
        ["Bearer"],
        ["bearer_token"],
    ),
    (
        "mixed secrets and identifiers in one string",
        "Config: postgresql://admin:pass@db:5432/app\nContact: admin@corp.com\n"
        "Server: 10.20.30.40\nPath: /home/deploy/app/config.yml",
        None,
        [
            "[REDACTED:connection_string]",
            "[REDACTED:email]",
            "[REDACTED:ip]",
            "[REDACTED:filepath]",
        ],
        [],
    ),
]


@pytest.mark.parametrize(
    ("text", "level", "expected", "counts"),
    [case[1:] for case in EXACT],
    ids=[case[0] for case in EXACT],
)
def test_clean_pii_case_gives_the_reference_text(
    text: str, level: str | None, expected: str, counts: dict[str, int]
) -> None:
    """The cleaned text is the reference's, and each count it names is the reference's."""
    result = clean_text(text, level)
    assert result.text == expected
    for kind, count in counts.items():
        assert result.redactions[kind] == count
    if expected == text:
        assert result.redactions == {}


@pytest.mark.parametrize(
    ("text", "level", "present", "absent"),
    [case[1:] for case in CONTAINS],
    ids=[case[0] for case in CONTAINS],
)
def test_clean_pii_case_holds_and_leaves_out_what_the_reference_says(
    text: str, level: str | None, present: list[str], absent: list[str]
) -> None:
    """The cleaned text holds every expected part and none of the hidden ones."""
    cleaned = clean_text(text, level).text
    for part in present:
        assert part in cleaned
    for part in absent:
        assert part not in cleaned


def test_multiple_redactions_accumulate_counts() -> None:
    """Three keys in one text count three api_key redactions."""
    text = f"Keys: ghp_{'A' * 36} and ghp_{'B' * 36} plus {OPENAI}"
    assert clean_text(text).redactions["api_key"] >= 3


def test_mixed_content_has_at_least_four_kinds_of_redaction() -> None:
    """A text with a connection string, an e-mail, an IP and a path names four types."""
    text = (
        "Config: postgresql://admin:pass@db:5432/app\nContact: admin@corp.com\n"
        "Server: 10.20.30.40\nPath: /home/deploy/app/config.yml"
    )
    assert len(clean_text(text).redactions) >= 4
