"""The built-in rules: the reference SDK's patterns, gitleaks' rules, checked identifiers.

Beyond the reference's ``cleanPii`` patterns and gitleaks' secret rules, identifiers are checked
by their checksums (cards, IBANs) or by a phone-number library (phonenumbers).

The order is the reference's, widened: connection strings, bearer tokens and the reference's
provider keys first (their markers are the reference's), then gitleaks' 221 rules, credentials
in URLs, and ``password=``-style assignments last among the secrets; then the identifiers: the
checksummed ones and IP addresses before the phone patterns that would take their digits.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from functools import cache

import regex

from knowledgepulse.redact.gitleaks import gitleaks_rules
from knowledgepulse.redact.rules import Rule, RuleSet, Span

SECRET_NAMES = (
    "password|passwd|passphrase|pwd|secret|token|api_key|apikey|api_secret|access_token|"
    "auth_token|access_key|secret_key|private_key|client_secret|refresh_token"
)
"""The names whose value ``name=value``, ``name: value`` or ``"name": "value"`` hides."""

# The reference's pattern, which also takes the JSON form ("password": "x": a quote may close
# the name) and never a value that is already a marker.
_ASSIGNMENT = (
    rf"(?i)(?<![a-z0-9])(?:{SECRET_NAMES})['\"]?\s*[=:]\s*(?!\[REDACTED)"
    r"(?:(?P<quote>['\"])(?P<value>[^'\"]*)(?P=quote)|(?P<value>[^\s'\"`,;)}\[\]]{2,}))"
)

_UNTIL_END = r"[^\s'\"`,;)}\]]"  # what may follow in a path or a URL: up to a space or a quote


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: regex.Match[str], found: str) -> bool:
    digits = "".join(char for char in found if char.isdigit())
    # 13 digits starting with 1 are a millisecond timestamp, not a card (presidio's rule).
    if len(digits) == 13 and digits[0] == "1":
        return False
    return 13 <= len(digits) <= 19 and _luhn(digits) and len(set(digits)) > 1


def _iban(match: regex.Match[str], found: str) -> bool:
    compact = found.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in moved)
    return int(number) % 97 == 1


_IPV6_CANDIDATE = regex.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}"
    r"(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}|[0-9A-Fa-f]{1,4})?"
    r"(?:%[\w.]+)?(?![\w:])"
)


def _ipv6(text: str) -> Iterator[Span]:
    for match in _IPV6_CANDIDATE.finditer(text):
        found = match.group()
        address = found.split("%", 1)[0]
        # "::1" alone is also Python's slice a[::1]: an address needs two groups.
        if sum(1 for group in address.split(":") if group) < 2:
            continue
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            continue
        yield match.span()


_PHONE_HINT = regex.compile(r"\d(?:[\s().\-/]{0,3}\d){6}")
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "BR", "IL", "JP", "CN")
"""Where a number written without ``+`` is read as local (a ``+`` number reads in any region)."""


def _phones(text: str) -> Iterator[Span]:
    if _PHONE_HINT.search(text) is None:
        return
    # phonenumbers holds metadata for every region: loaded on the first text with a number.
    import phonenumbers  # noqa: PLC0415

    taken: list[Span] = []
    for region in PHONE_REGIONS:
        for found in phonenumbers.PhoneNumberMatcher(text, region, phonenumbers.Leniency.VALID):
            span = (found.start, found.end)
            if _looks_like_phone(text, *span) and not any(
                start < span[1] and span[0] < end for start, end in taken
            ):
                taken.append(span)
    yield from sorted(taken)


def _looks_like_phone(text: str, start: int, end: int) -> bool:
    # What the library reads as a valid number in some region but a trace means otherwise:
    # ids (gift_card_1647044), prices and sums (1690, 1200 - 500 - 300), Unix times.
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return False
    if end < len(text) and (text[end].isalnum() or text[end] == "_"):
        return False
    found = text[start:end]
    digits = sum(char.isdigit() for char in found)
    if digits < 7 or " - " in found:
        return False
    if found.isdigit():  # written without a separator: only a long one, not a Unix time
        return digits >= 10 and not (digits == 10 and found[0] == "1")
    return True


@cache
def reference_secrets() -> tuple[Rule, ...]:
    """The reference SDK's secret patterns, with their markers, a little widened."""
    return (
        Rule(
            "connection-string",
            "connection_string",
            True,
            r"(?i)(?:postgresql|postgres|mysql|redis|rediss|mongodb|mongodb\+srv|amqp|amqps)://"
            + _UNTIL_END
            + "+",
            keywords=("postgres", "mysql", "redis", "mongodb", "amqp"),
        ),
        Rule(
            "bearer-token",
            "bearer_token",
            True,
            r"(?i:bearer)\s+(?!kp_)([A-Za-z0-9_\-.~+/=]{20,})",
            keywords=("bearer",),
        ),
        Rule(
            "openai-key",
            "api_key",
            True,
            r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
            keywords=("sk-",),
        ),
        Rule("github-token", "api_key", True, r"gh[pousr]_[A-Za-z0-9]{36,}", keywords=("gh",)),
        Rule("aws-key", "api_key", True, r"AKIA[A-Z0-9]{16}", keywords=("akia",)),
        Rule("kp-key", "api_key", True, r"kp_[a-f0-9]{16,}", keywords=("kp_",)),
        Rule("slack-token", "api_key", True, r"xox[bpras]-[A-Za-z0-9\-]+", keywords=("xox",)),
    )


@cache
def assignment_rules() -> tuple[Rule, ...]:
    """Credentials in URLs and ``password=`` assignments: after every provider's format."""
    return (
        Rule(
            "url-credentials",
            "password",
            True,
            r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://[^\s/:@'\"`]+:([^\s/@'\"`]+)@",
            keywords=("://",),
        ),
        Rule(
            "password-assignment",
            "password",
            True,
            _ASSIGNMENT,
            group="value",
            keywords=("pass", "pwd", "secret", "token", "key"),
        ),
    )


@cache
def identifier_rules() -> tuple[Rule, ...]:
    """Personal identifiers: kept at ``private``, redacted at ``aggregated`` and ``federated``."""
    return (
        Rule(
            "email",
            "email",
            False,
            r"[a-zA-Z0-9._%+\-]+@[a-zA-Z0-9.\-]+\.(?:[a-zA-Z]{2,}|xn--[a-zA-Z0-9\-]+)",
            keywords=("@",),
        ),
        Rule(
            "iban",
            "iban",
            False,
            r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b",
            digits=True,
            accept=_iban,
        ),
        Rule(
            "credit-card",
            "credit_card",
            False,
            r"(?<![\w\-.])[1-6]\d{3}(?:[ \-]?\d{3,4}){2}[ \-]?\d{1,7}(?![\w\-])",
            digits=True,
            accept=_card,
        ),
        Rule(
            "us-ssn",
            "ssn",
            False,
            r"(?<![\w\-.])(?!000|666|9\d\d)\d{3}([\-. ])(?!00)\d{2}\1(?!0000)\d{4}(?![\w\-])",
            digits=True,
            group=0,
        ),
        Rule("ipv6", "ip", False, keywords=(":",), digits=True, finder=_ipv6),
        Rule(
            "ipv4",
            "ip",
            False,
            r"\b(?:25[0-5]|2[0-4]\d|[01]?\d\d?)(?:\.(?:25[0-5]|2[0-4]\d|[01]?\d\d?)){3}\b",
            keywords=(".",),
            digits=True,
        ),
        Rule(
            "phone",
            "phone",
            False,
            r"(?<![\w.\-+])(?:\+?1[\-.\s]?)?\(?\d{3}\)?[\-.\s]?\s?\d{3}[\-.\s]\d{4}\b",
            digits=True,
        ),
        Rule("phone-international", "phone", False, r"\+[1-9]\d{6,14}\b", keywords=("+",)),
        Rule("phone-number", "phone", False, digits=True, finder=_phones),
        Rule(
            "home-path",
            "filepath",
            False,
            r"(?<![\w.\-])/(?:home|Users)/[a-zA-Z0-9._\-]+(?:/" + _UNTIL_END + "*)?",
            keywords=("/home/", "/users/"),
        ),
        Rule(
            "windows-home-path",
            "filepath",
            False,
            r"\b[A-Za-z]:[\\/]Users[\\/][a-zA-Z0-9._\-]+(?:[\\/]" + _UNTIL_END + "*)*",
            keywords=("\\users\\", "/users/"),
        ),
    )


@cache
def default_rules() -> RuleSet:
    """Every built-in rule, in the order they run."""
    return RuleSet(reference_secrets() + gitleaks_rules() + assignment_rules() + identifier_rules())
