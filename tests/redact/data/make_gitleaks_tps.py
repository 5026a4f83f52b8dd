"""Rebuild ``gitleaks_tps.jsonl``: the true positives of gitleaks' own rule definitions.

    python tests/redact/data/make_gitleaks_tps.py GITLEAKS > tests/redact/data/gitleaks_tps.jsonl

(GITLEAKS: a checkout of github.com/gitleaks/gitleaks.)

gitleaks (MIT; see THIRD_PARTY_NOTICES.md) checks each rule against examples written in Go in
``cmd/generate/config/rules/*.go``: literal samples, and samples made by
``utils.GenerateSampleSecrets(id, secret)`` (one secret in 20-odd config and code contexts)
around secrets drawn from a regular expression (``secrets.NewSecret``). This script reads those
Go expressions (string literals, ``+``, ``fmt.Sprintf``, the ``utils`` pattern helpers), draws
each random secret with a fixed seed, and writes one JSON line per sample: the rule, the sample
and its secret (what the rule's own pattern takes as the secret in it), at most
:data:`PER_RULE` samples a rule (distinct secrets first). Samples whose expression uses anything
else (a local variable) are left out and counted on stderr.
"""

from __future__ import annotations

import json
import random
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from knowledgepulse.redact.rules import Rule

PER_RULE = 4

# utils.GenerateSampleSecrets' templates (cmd/generate/config/utils/generate.go).
TEMPLATES = (
    '{i}Token="{s}"',
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    'string {i}Token = "{s}";',
    "{i}Token := `{s}`",
    "{i}Token = '{s}'",
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
)
HELPERS = {
    "utils.Numeric": "[0-9]{%s}",
    "utils.Hex": "[a-f0-9]{%s}",
    "utils.AlphaNumeric": "[a-z0-9]{%s}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
    "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
    "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
}
TOKEN = re.compile(
    r"\s+|//[^\n]*|`[^`]*`|\"(?:[^\"\\\n]|\\.)*\"|\.\.\.|[A-Za-z_][\w.]*|\d+|[(){}\[\],+:=]"
)


class UnsupportedError(Exception):
    """An expression this reader does not evaluate."""


def tokens(source: str) -> list[str]:
    found = []
    for match in TOKEN.finditer(source):
        text = match.group()
        if not text.isspace() and not text.startswith("//"):
            found.append(text)
    return found


def go_string(token: str) -> str:
    if token.startswith("`"):
        return token[1:-1]
    return str(json.loads(token.replace("\\'", "'")))


def sample(pattern: str, rng: random.Random) -> str:
    parsed = re._parser.parse(pattern)  # type: ignore[attr-defined]
    return _draw(parsed, rng)


def _draw(items: Any, rng: random.Random) -> str:
    constants = re._constants  # type: ignore[attr-defined]
    out = []
    for op, arg in items:
        if op is constants.LITERAL:
            out.append(chr(arg))
        elif op is constants.IN:
            out.append(_pick(arg, rng))
        elif op is constants.ANY:
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
        elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT):
            low, high, inner = arg
            high = low + 6 if high is constants.MAXREPEAT else high
            out.extend(_draw(inner, rng) for _ in range(rng.randint(low, max(low, high))))
        elif op is constants.SUBPATTERN:
            out.append(_draw(arg[-1], rng))
        elif op is constants.BRANCH:
            out.append(_draw(rng.choice(arg[1]), rng))
        elif op is constants.AT:
            continue
        else:
            raise UnsupportedError(f"regex op {op}")
    return "".join(out)


def _pick(items: Any, rng: random.Random) -> str:
    constants = re._constants  # type: ignore[attr-defined]
    chars: list[str] = []
    for op, arg in items:
        if op is constants.LITERAL:
            chars.append(chr(arg))
        elif op is constants.RANGE:
            chars.extend(chr(code) for code in range(arg[0], arg[1] + 1))
        elif op is constants.CATEGORY:
            chars.extend("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        else:
            raise UnsupportedError(f"class op {op}")
    return rng.choice(chars)


class Reader:
    """Evaluates the Go expressions of one rule's true positives."""

    def __init__(self, items: list[str], rng: random.Random) -> None:
        self.items = items
        self.position = 0
        self.rng = rng

    def peek(self) -> str:
        return self.items[self.position] if self.position < len(self.items) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if expected is not None and token != expected:
            raise UnsupportedError(f"expected {expected!r}, got {token!r}")
        self.position += 1
        return token

    def expression(self) -> Any:
        value = self.term()
        while self.peek() == "+":
            self.take()
            right = self.term()
            if not isinstance(value, str) or not isinstance(right, str):
                raise UnsupportedError("+ of lists")
            value += right
        return value

    def arguments(self) -> list[Any]:
        self.take("(")
        values = []
        while self.peek() != ")":
            values.append(self.expression())
            if self.peek() == "...":
                self.take()
            if self.peek() == ",":
                self.take()
        self.take(")")
        return values

    def term(self) -> Any:
        token = self.take()
        if token.startswith(("`", '"')):
            return go_string(token)
        if token == "[":
            self.take("]")
            self.take("string")
            self.take("{")
            values = []
            while self.peek() != "}":
                values.append(self.expression())
                if self.peek() == ",":
                    self.take()
            self.take("}")
            return values
        if token == "append":
            args = self.arguments()
            return [item for arg in args[1:] for item in (arg if isinstance(arg, list) else [arg])]
        if token == "tps":
            return []
        if token.startswith("utils.") and token != "utils.GenerateSampleSecrets":
            return self.helper(token)
        if token == "secrets.NewSecret":
            (pattern,) = self.arguments()
            return sample(pattern, self.rng)
        if token == "fmt.Sprintf":
            form, *args = self.arguments()
            return form.replace("%%", "\0") % tuple(args) if args else form
        if token == "strings.ToUpper":
            (text,) = self.arguments()
            return text.upper()
        if token == "utils.GenerateSampleSecrets":
            identifier, secret = self.arguments()
            return [
                template.replace("{i}", identifier)
                .replace("{I}", identifier.upper())
                .replace("{s}", secret)
                for template in TEMPLATES
            ]
        raise UnsupportedError(token)

    def helper(self, token: str) -> Any:
        """A ``utils`` function: a pattern helper, or the one-sample generator."""
        args = self.arguments()
        if token in HELPERS:
            return HELPERS[token] % args[0]
        if token == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if token == "utils.GenerateSampleSecret":
            return [f'{args[0]}_api_token = "{args[1]}"']
        raise UnsupportedError(token)


def flatten(value: Any) -> list[str]:
    if isinstance(value, list):
        return [text for item in value for text in flatten(item)]
    return [value]


def statements(body: list[str]) -> list[tuple[int, int]]:
    """Where each ``tps := ...`` / ``tps = ...`` expression starts and ends in ``body``."""
    spans = []
    for index, token in enumerate(body[:-1]):
        if token == "tps" and body[index + 1] in (":", "="):
            start = index + (3 if body[index + 1] == ":" else 2)
            spans.append((start, len(body)))
    return spans


def main(root: Path) -> None:
    rng = random.Random(20)
    rules = {
        item["id"]: item
        for item in tomllib.loads((root / "config" / "gitleaks.toml").read_text())["rules"]
        if "regex" in item
    }
    written = skipped = unmatched = 0
    for path in sorted((root / "cmd/generate/config/rules").glob("*.go")):
        source = path.read_text()
        for function in re.split(r"\nfunc ", source)[1:]:
            found = re.search(r'RuleID:\s*"([^"]+)"', function)
            if found is None or found.group(1) not in rules:
                continue
            rule_id = found.group(1)
            checker = Rule(
                rule_id, "x", True, rules[rule_id]["regex"], group=rules[rule_id].get("secretGroup")
            )
            body = tokens(function)
            kept: list[dict[str, str]] = []
            for start, _ in statements(body):
                reader = Reader(body, rng)
                reader.position = start
                try:
                    value = reader.expression()
                except (UnsupportedError, ValueError, TypeError, KeyError) as error:
                    print(f"{path.name} {rule_id}: left out ({error})", file=sys.stderr)
                    skipped += 1
                    continue
                for text in flatten(value):
                    spans = list(checker.spans(text))
                    if not spans:
                        unmatched += 1
                        continue
                    secret = text[spans[0][0] : spans[0][1]]
                    kept.append({"rule": rule_id, "sample": text, "secret": secret})
            # Distinct secrets first, each in another context, then the rest in order.
            firsts = {line["secret"]: line for line in reversed(kept)}
            ordered = [line for line in kept if firsts[line["secret"]] is line]
            ordered += [line for line in kept if line not in ordered]
            for line in ordered[:PER_RULE]:
                print(json.dumps(line, ensure_ascii=False))
                written += 1
    print(
        f"{written} samples; {skipped} expressions left out; {unmatched} samples the rule's own "
        "pattern does not take in Python",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
