"""JSON Schemas for the files people write: suites and cases, generated from the models.

The suite schema holds each built-in scorer's ``params`` schema too, so an editor flags a
missing ``max_acceptable_ms`` while typing. A test keeps ``schemas/suite.schema.json`` equal to
it (regenerate with ``kp schema suite > schemas/suite.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from knowledgepulse.evals.models import Case
from knowledgepulse.evals.registry import builtin_scorer_types, get_scorer_class
from knowledgepulse.evals.suite import SuiteFile

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files, with the built-in scorers' ``params`` filled in."""
    schema = SuiteFile.model_json_schema(by_alias=True)
    entry = schema["$defs"]["ScorerEntry"]
    builtins = builtin_scorer_types()
    entry["properties"]["type"]["examples"] = list(builtins)
    entry["allOf"] = [_params_rule(type_name) for type_name in builtins]
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def case_json_schema() -> dict[str, Any]:
    """The JSON Schema of one evaluation case (a JSONL line, or an item of a YAML list)."""
    return {"$schema": JSON_SCHEMA_DIALECT, **Case.model_json_schema(by_alias=True)}


SCHEMAS: Mapping[str, Callable[[], dict[str, Any]]] = {
    "suite": suite_json_schema,
    "case": case_json_schema,
}


def schema_text(name: str) -> str:
    """A schema as the committed file holds it: 2-space JSON, UTF-8 as is, a final newline."""
    return json.dumps(SCHEMAS[name](), indent=2, ensure_ascii=False) + "\n"


def _params_rule(type_name: str) -> dict[str, Any]:
    """``if type is T then params follows T's Params`` (and is required when it has to be)."""
    params = get_scorer_class(type_name).Params.model_json_schema()
    then: dict[str, Any] = {"properties": {"params": params}}
    if params.get("required"):
        then["required"] = ["params"]
    return {
        "if": {"properties": {"type": {"const": type_name}}, "required": ["type"]},
        "then": then,
    }
