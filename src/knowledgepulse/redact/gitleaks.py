"""gitleaks' secret rules (``data/gitleaks_rules.toml``) as redaction rules.

gitleaks keeps the largest well-tested list of secret formats (cloud keys, VCS and CI tokens,
payment, messaging, AI providers, JWTs, private keys): 221 rules, each with the keywords that
must appear for it to run, the capture group that is the secret, a minimum entropy and
allowlists of known non-secrets. We apply them as gitleaks does: the secret is the rule's
``secretGroup``, else its first non-empty group, else the whole match; a secret below the
rule's entropy, matching an allowlist regex or containing a stopword is kept; a ``generic-*``
rule's secret needs a digit.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import regex

from knowledgepulse.redact.rules import Rule, shannon_entropy

RULES_FILE = "gitleaks_rules.toml"

# What a rule id says the secret is; the marker names it. Anything else is an API key.
_TYPES = (
    ("private-key", "private_key"),
    ("jwt", "jwt"),
    ("generic", "password"),
    ("curl-auth", "password"),
)


@dataclass(frozen=True)
class _Allowlist:
    target: str  # "secret", "match" or "line": what the regexes look at
    regexes: tuple[regex.Pattern[str], ...]
    stopwords: tuple[str, ...]

    def allows(self, match: regex.Match[str], secret: str) -> bool:
        if self.stopwords:
            lowered = secret.lower()
            if any(word in lowered for word in self.stopwords):
                return True
        if not self.regexes:
            return False
        target = secret
        if self.target == "match":
            target = match.group()
        elif self.target == "line":
            text = match.string
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            target = text[start : end if end >= 0 else len(text)]
        return any(pattern.search(target) for pattern in self.regexes)


@dataclass(frozen=True)
class _Check:
    """gitleaks' checks of one rule's secret: entropy, digits, allowlists (global and own)."""

    entropy: float
    needs_digit: bool
    allowlists: tuple[_Allowlist, ...]

    def __call__(self, match: regex.Match[str], secret: str) -> bool:
        if self.entropy and shannon_entropy(secret) < self.entropy:
            return False
        if self.needs_digit and not any(char.isdigit() for char in secret):
            return False
        return not any(allowlist.allows(match, secret) for allowlist in self.allowlists)


def _allowlist(data: dict[str, Any]) -> _Allowlist:
    return _Allowlist(
        data.get("regexTarget", "secret"),
        tuple(regex.compile(pattern) for pattern in data.get("regexes", ())),
        tuple(word.lower() for word in data.get("stopwords", ())),
    )


def _type(rule_id: str) -> str:
    for prefix, kind in _TYPES:
        if rule_id.startswith(prefix):
            return kind
    return "api_key"


@cache
def gitleaks_rules() -> tuple[Rule, ...]:
    """The gitleaks rules, in its file's order, each with its checks (read once per process)."""
    data = tomllib.loads((files("knowledgepulse.redact") / "data" / RULES_FILE).read_text("utf-8"))
    shared = _allowlist(data["allowlist"])
    rules = []
    for item in data["rules"]:
        rule_id = item["id"]
        check = _Check(
            float(item.get("entropy", 0.0)),
            rule_id.startswith("generic"),
            (shared, *(_allowlist(entry) for entry in item.get("allowlists", ()))),
        )
        rules.append(
            Rule(
                name=rule_id,
                type=_type(rule_id),
                secret=True,
                pattern=item["regex"],
                keywords=tuple(item["keywords"]),
                group=item.get("secretGroup"),
                accept=check,
            )
        )
    return tuple(rules)
