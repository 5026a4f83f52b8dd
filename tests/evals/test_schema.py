"""The suite JSON Schema: committed copies match the models, and it checks suite files.

jsonschema is not a dependency, so a small validator below covers exactly the keywords the
generated schema uses; a test fails if the schema starts using one it does not know.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledgepulse.evals.models import case_json_schema
from knowledgepulse.evals.suite import suite_json_schema

ROOT = Path(__file__).parents[2]
REGENERATE = "regenerate with: kp schema suite > schemas/suite.schema.json"
ANNOTATIONS = {"$schema", "$defs", "title", "description", "default", "examples"}
CHECKED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "pattern",
    "items",
    "anyOf",
    "allOf",
    "if",
    "then",
    "const",
    "$ref",
}
_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def errors(schema: dict[str, Any], value: Any, root: dict[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (the subset of JSON Schema the suite uses)."""
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return errors(target, value, root, path)
    kind = schema.get("type")
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return [f"{path}: not a number"]
    if kind not in (None, "number") and not isinstance(value, _TYPES[kind]):
        return [f"{path}: not {kind}"]
    found = _bounds(schema, value, path)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += errors(schema["items"], item, root, f"{path}[{i}]")
    if isinstance(value, dict):
        found += _object(schema, value, root, path)
    if "anyOf" in schema and all(errors(s, value, root, path) for s in schema["anyOf"]):
        found.append(f"{path}: matches none of anyOf")
    for rule in schema.get("allOf", []):
        found += errors(rule, value, root, path)
    if "if" in schema and not errors(schema["if"], value, root, path):
        found += errors(schema.get("then", {}), value, root, path)
    return found


def _bounds(schema: dict[str, Any], value: Any, path: str) -> list[str]:
    checks: dict[str, Callable[[Any], bool]] = {
        "const": lambda limit: value == limit,
        "minimum": lambda limit: value >= limit,
        "maximum": lambda limit: value <= limit,
        "exclusiveMinimum": lambda limit: value > limit,
        "minLength": lambda limit: len(value) >= limit,
        "minItems": lambda limit: len(value) >= limit,
        "pattern": lambda pattern: re.search(pattern, value) is not None,
    }
    return [
        f"{path}: breaks {key}"
        for key, ok in checks.items()
        if key in schema and not ok(schema[key])
    ]


def _object(
    schema: dict[str, Any], value: dict[str, Any], root: dict[str, Any], path: str
) -> list[str]:
    properties = schema.get("properties", {})
    found = [f"{path}.{k}: required" for k in schema.get("required", []) if k not in value]
    for key, item in value.items():
        if key in properties:
            found += errors(properties[key], item, root, f"{path}.{key}")
        elif schema.get("additionalProperties") is False:
            found.append(f"{path}.{key}: not allowed")
    return found


def keywords(schema: Any) -> Iterator[str]:
    """Every keyword used anywhere in a schema (property names are not keywords)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key
            if key in ("properties", "$defs"):
                for sub in value.values():
                    yield from keywords(sub)
            elif key not in ("const", "examples", "default", "required"):
                yield from keywords(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from keywords(item)


def check(suite: dict[str, Any]) -> list[str]:
    schema = suite_json_schema()
    return errors(schema, suite, schema)


def test_committed_schema_equals_the_generated_one() -> None:
    """schemas/suite.schema.json is exactly what the models generate."""
    committed = (ROOT / "schemas" / "suite.schema.json").read_text(encoding="utf-8")
    assert committed == json.dumps(suite_json_schema(), indent=2, ensure_ascii=False) + "\n", (
        REGENERATE
    )


def test_schema_uses_only_keywords_the_test_validator_checks() -> None:
    """If the generated schema grows a new keyword, the hand validator must learn it."""
    assert set(keywords(suite_json_schema())) <= CHECKED | ANNOTATIONS


def test_schema_accepts_the_example_suite() -> None:
    """examples/evals/suite.yaml is valid against the schema."""
    suite = yaml.safe_load((ROOT / "examples" / "evals" / "suite.yaml").read_text("utf-8"))
    assert check(suite) == []


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"type": "operation-accuracy", "treshold": 0.9}, "$.scorers[0].treshold: not allowed"),
        ({"type": "operation-accuracy", "threshold": 1.5}, "$.scorers[0].threshold: matches none"),
        ({"type": "operation-accuracy", "weight": -1}, "$.scorers[0].weight: breaks minimum"),
        ({"type": "operation-accuracy", "name": "  "}, "$.scorers[0].name: matches none"),
        ({"type": "response-time"}, "$.scorers[0].params: required"),
        (
            {"type": "response-time", "params": {"max_acceptable_ms": 0}},
            "$.scorers[0].params.max_acceptable_ms: breaks exclusiveMinimum",
        ),
        (
            {"type": "content-quality", "params": {"ignore_cse": True}},
            "$.scorers[0].params.ignore_cse: not allowed",
        ),
    ],
)
def test_schema_rejects_what_the_loader_rejects(entry: dict[str, Any], problem: str) -> None:
    """Typos, out-of-range values and missing or unknown params are flagged by the schema."""
    assert problem in "\n".join(check({"scorers": [entry]}))


def test_schema_allows_types_it_does_not_know() -> None:
    """Plugin types are any string; only the built-ins' params are constrained."""
    assert check({"scorers": [{"type": "my-plugin", "params": {"anything": 1}}]}) == []


def test_case_schema_is_valid_json_with_the_case_fields() -> None:
    """kp schema case describes a case: id, pages, actual, expected."""
    schema = case_json_schema()
    assert {"id", "pages", "actual", "expected"} <= set(schema["properties"])
