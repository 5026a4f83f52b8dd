"""Rebuild ``presidio_cases.jsonl``: the PII cases of presidio's own recognizer tests.

    python tests/redact/data/make_presidio_cases.py PRESIDIO > presidio_cases.jsonl

(PRESIDIO: a checkout of github.com/microsoft/presidio; MIT, see THIRD_PARTY_NOTICES.md.) Each
parametrized case of the e-mail, credit card, IBAN, IP, phone and US SSN recognizer tests becomes
one JSON line: the entity, the text, and the spans presidio expects (none: a negative case). The
phone cases with another leniency than presidio's default are left out.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

# test file -> (entity, index of the expected spans in each case's tuple)
FILES = {
    "test_email_recognizer.py": ("email", 2),
    "test_credit_card_recognizer.py": ("credit_card", 3),
    "test_iban_recognizer.py": ("iban", 2),
    "test_ip_recognizer.py": ("ip", 2),
    "test_phone_recognizer.py": ("phone", 3),
    "test_us_ssn_recognizer.py": ("ssn", 2),
}


def cases(path: Path, spans_at: int) -> list[tuple[str, list[str]]]:
    """Every (text, expected substrings) of the file's parametrize lists."""
    found: list[tuple[str, list[str]]] = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and len(decorator.args) == 2):
                continue
            names = ast.literal_eval(decorator.args[0])
            if "leniency" in str(names):
                continue
            try:
                rows = ast.literal_eval(decorator.args[1])
            except ValueError:
                continue
            for row in rows:
                if not isinstance(row, tuple) or not isinstance(row[0], str):
                    continue
                text, count = row[0], row[1]
                positions = row[spans_at] if count else ()
                if count and len(positions) != count:
                    continue  # positions not listed: the count alone says nothing of where
                found.append((text, [text[start:end] for start, end in positions]))
    return found


def main(root: Path) -> None:
    tests = root / "presidio-analyzer" / "tests"
    for name, (entity, spans_at) in FILES.items():
        for text, expected in cases(tests / name, spans_at):
            print(json.dumps({"entity": entity, "text": text, "expected": expected}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
