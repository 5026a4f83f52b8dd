"""The tools a dataset row offered the model, as OpenAI function definitions.

Tool-calling datasets keep them beside the conversation: a ``tools`` column of OpenAI
definitions (``{"type": "function", "function": {...}}``: TRL, Azure AI Foundry, kp's own
training rows) or of bare ``{"name", "description", "parameters"}`` objects (LLaMA-Factory's and
Glaive's ShareGPT rows, xLAM; Anthropic's ``input_schema`` is written as ``parameters``), as a list
or a JSON string. The Responses API writes a function flat (``{"type": "function", "name",
"parameters"}``), and a Gemini tool lists the functions it declares (``functionDeclarations``, the
schema in ``parameters``, its types in upper case and written in JSON Schema's lower case, or in
``parameters_json_schema``). A Gorilla (BFCL) schema's types (``"type": "dict"``) are written
as JSON Schema's, and a schema with no ``type`` (xLAM's properties alone, MLflow's copy) as an
object's. Toucan-1.5M names the column ``available_tools``;
``verifiers`` rollouts keep them in ``info.oai_tools``, NeMo Gym's rollouts in
the request made (``responses_create_params.tools``); GLM-4's rows declare them on the ``system``
message (its ``tools`` key, beside an empty ``content``), and Hermes-format rows in the system
prompt, between ``<tools>`` tags (JSON, or the Python repr NousResearch's card shows). A
training row
written from the trace lists them as they were (descriptions, required arguments, tools never
called), not as guessed from the calls.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from knowledgepulse.sources._chat._text import json_or_value

_COLUMNS = ("tools", "available_tools")
_NESTED = (("info", "oai_tools"), ("responses_create_params", "tools"))
"""An object column, and its key that holds the list: a ``verifiers`` rollout's, NeMo Gym's."""
_DECLARATIONS = ("functionDeclarations", "function_declarations")
"""Gemini's tool: the functions it declares (by their JSON or proto names)."""
_SCHEMAS = ("input_schema", "parameters_json_schema", "parametersJsonSchema", "inputSchema")
"""A definition's JSON Schema under another name than ``parameters``: Anthropic's, Gemini's,
the Vercel AI SDK's (5 and later); Bedrock Converse's and Strands' ``inputSchema`` wraps it as
``{"json": schema}``."""
_GEMINI_TYPES = {
    name: name.lower()
    for name in ("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
}
"""Gemini's ``Schema.type``: an OpenAPI subset's enum, in upper case as its SDKs write a
declaration's ``parameters`` (``"type": "OBJECT"``). JSON Schema, which chat templates show and
validators check, names the same types in lower case."""
_GORILLA_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "any": "string",
    "list": "array",
    "bool": "boolean",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}
"""The Gorilla (BFCL) function docs' type names that JSON Schema names otherwise (``"type":
"dict"`` for the parameters' object), with JSON Schema's: BFCL's handlers rename them so
(``GORILLA_TO_OPENAPI``) before a model is offered the tools, and datasets written from its
docs keep them (When2Call's rows). A name it has no JSON Schema name for stays as written."""
_SCHEMA_TYPES = (_GEMINI_TYPES, _GORILLA_TYPES)
"""The type names of the dialects whose schemas a definition's own ``type`` marks."""
_SUBSCHEMAS = frozenset({"items", "anyOf", "oneOf", "allOf", "not", "additionalProperties"})
"""A schema's keys whose value is a schema, or a list of them."""
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""A schema's keys whose value maps names to schemas (a property may be named ``type``)."""
_KEYWORDS = _SUBSCHEMAS | _NAMED_SCHEMAS | {"if", "then", "else", "contains", "propertyNames"}
"""A schema's keys whose value may be a schema with a ``type``: never an xLAM parameter's name."""


def row_tools(row: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The row's tool definitions, each as OpenAI's; none when it has no readable list."""
    found = next((row[name] for name in _COLUMNS if row.get(name) is not None), None)
    for column, key in _NESTED:
        if found is None:
            holder = json_or_value(row.get(column))
            found = holder.get(key) if isinstance(holder, dict) else None
    listed = json_or_value(found)
    if not isinstance(listed, list):
        return ()
    tools = [_definition(tool) for tool in _declared(listed)]
    # One definition that cannot be read makes the list unsure: none is kept, the calls decide.
    return tuple(tool for tool in tools if tool is not None) if all(tools) else ()


def message_tools(messages: list[Any]) -> tuple[dict[str, Any], ...]:
    """The tools a ``system`` message declares in its own ``tools`` key (GLM-4's rows)."""
    for message in messages:
        declared = message.get("tools") if isinstance(message, dict) else None
        if declared is not None and message.get("role") == "system":
            return row_tools({"tools": declared})
    return ()


_TOOLS_TAG = re.compile(r"<tools>\s*(.*?)\s*</tools>", re.DOTALL)
"""The tools of a Hermes-format system prompt (NousResearch's function-calling format)."""


_FUNCTIONS_TAG = re.compile(r"<functions>\s*(?:tools:\s*)?(.*?)\s*</functions>", re.DOTALL)
"""The tools of the Hermes format's older system prompt, between ``<functions>`` tags after
``tools:`` (MarketDataGenie's deprecated ShareGPT example), its instructions naming the tags
first ("delimited within XML tags <functions></functions>")."""


_GLAIVE_TOOLS = re.compile(
    r"with access to the following functions\. Use them if required -\s*(\{.*\})\s*\Z", re.DOTALL
)
"""The tools of a Glaive function-calling system prompt: JSON objects one after another after
its fixed sentence, to the prompt's end (glaive-function-calling-v2, and the datasets made of it:
Locutusque's function-calling-chatml)."""


_KIMI_TOOLS = re.compile(r"<\|im_system\|>tool_declare<\|im_middle\|>(.*?)<\|im_end\|>", re.DOTALL)
"""The tools of Kimi K2's chat template: a ``tool_declare`` system message of its tokens around
a JSON list (Toucan-1.5M writes its rows' system message so, and ADP's standardized Toucan
keeps it as the environment's opening text)."""


def prompt_tools(system: str | None) -> tuple[dict[str, Any], ...]:
    """The tools a system prompt declares, as OpenAI's; none when it declares none.

    Between ``<tools>`` tags (the Hermes format): the prompt names the tags in its instructions
    first ("within <tools> </tools> XML tags"), so the first pair holding a readable list is the
    declaration; so between the older ``<functions>`` tags. Else in Kimi K2's ``tool_declare``
    message; else after Glaive's "Use them if required -".
    """
    tagged = (_TOOLS_TAG, _FUNCTIONS_TAG, _KIMI_TOOLS)
    for found in (match for tag in tagged for match in tag.finditer(system or "")):
        tools = row_tools({"tools": _values(found.group(1))})
        if tools:
            return tools
    glaive = _GLAIVE_TOOLS.search(system or "")
    return row_tools({"tools": _values(glaive.group(1))}) if glaive else ()


def declaration_only(system: str | None) -> bool:
    """Whether a system prompt is nothing but Kimi K2's ``tool_declare`` message of readable tools.

    That message is how Kimi's chat template writes the tools offered, in its own tokens
    (Toucan-1.5M's rows keep it as their system message): the tools are listed as the row's
    tools, and a chat template writes them again; kept as the system prompt too, they would be
    told twice, the second time as literal template tokens.
    """
    found = _KIMI_TOOLS.fullmatch((system or "").strip())
    return found is not None and bool(row_tools({"tools": _values(found.group(1))}))


def _values(text: str) -> list[Any] | None:
    """The definitions written between the tags, as a list; ``None`` when none can be read.

    A JSON list, JSON objects one after another, or a Python list's repr (single quotes,
    ``None``), as the format's examples write them.
    """
    try:
        value = ast.literal_eval(text) if text.startswith("[{'") else json.loads(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = _objects(text)
    return value if isinstance(value, list) else [value] if isinstance(value, dict) else None


def _objects(text: str) -> list[Any] | None:
    """JSON values one after another (an object a line); ``None`` when the text is not so."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return None
        found.append(value)
        at = len(text) - len(text[at:].lstrip())
    return found or None


def _declared(listed: list[Any]) -> list[Any]:
    """The list's definitions, each Gemini tool's declared functions one each."""
    found: list[Any] = []
    for tool in map(json_or_value, listed):
        declared = (
            next((tool[key] for key in _DECLARATIONS if key in tool), None)
            if isinstance(tool, dict)
            else None
        )
        if isinstance(declared, list):
            found += declared
        else:
            found.append(tool)
    return found


def _definition(tool: Any) -> dict[str, Any] | None:
    if not isinstance(tool, dict):
        return None
    if tool.get("type") == "function":
        # Chat Completions nests the function; the Responses API writes it flat.
        function = tool.get("function", {k: v for k, v in tool.items() if k != "type"})
    else:
        function = tool
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    if not function["name"]:
        return None
    function = _without_nulls(function)
    schema_key = next((key for key in _SCHEMAS if isinstance(function.get(key), dict)), None)
    if "parameters" not in function and schema_key is not None:
        # The same JSON Schema under another name (Anthropic's, Gemini's), which chat
        # templates (that read ``parameters``) would leave out.
        function["parameters"] = _unwrapped(function.pop(schema_key))
    if isinstance(parameters := function.get("parameters"), dict):
        function["parameters"] = _typed(parameters)  # a fresh dict, _without_nulls' own
    if tool.get("type") not in (None, "function", "custom") and "parameters" not in function:
        # A tool the provider defines and runs (Anthropic's ``{"type":
        # "web_search_20250305", "name": "web_search"}``, its code execution): no schema is
        # given, so it is no function definition a chat template could show.
        return None
    return {"type": "function", "function": function}


def _unwrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """An ``inputSchema``'s JSON Schema, less the wrapper Bedrock Converse puts around it.

    Converse's ``ToolInputSchema`` is ``{"json": schema}``, and Strands, whose ``ToolSpec`` is
    Converse's, writes its tools so in ``gen_ai.tool.definitions``: a chat template, or a
    validator, reads the schema itself (``"type": "object"``).
    """
    inner = schema.get("json")
    if len(schema) == 1 and isinstance(inner, dict):
        return inner
    return schema


def _typed(parameters: dict[str, Any]) -> dict[str, Any]:
    """A parameters schema as a JSON Schema object's; the same dict when it is one already.

    Only a schema with no ``type`` (:func:`_object_schema`) or with a type of its dialect's own
    (:data:`_SCHEMA_TYPES`: Gemini's ``OBJECT``, Gorilla's ``dict``) is rebuilt.
    """
    marker = parameters.get("type")
    if not isinstance(marker, str):
        # None, or an xLAM parameter named ``type``; a list of types stays as written.
        return _object_schema(parameters) if parameters else parameters
    names = next((names for names in _SCHEMA_TYPES if marker in names), None)
    return parameters if names is None else _json_schema(parameters, names)


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A parameters schema that gives no ``type``, as the object schema it declares.

    With ``properties`` it is one (MLflow's ``mlflow.chat.tools`` copy of a Gemini declaration
    leaves the type out); xLAM's rows give the properties alone (``{"count": {"type": "int",
    "description": ...}}``, the dataset card's format), which the object schema of those
    properties declares the same. Any other (``{"$ref": ...}``, an ``anyOf``) stays as written.
    """
    if "type" not in parameters and isinstance(parameters.get("properties"), dict):
        return {"type": "object", **parameters}
    declared = all(
        name not in _KEYWORDS and isinstance(value, dict) and isinstance(value.get("type"), str)
        for name, value in parameters.items()
    )
    return {"type": "object", "properties": parameters} if declared else parameters


def _json_schema(schema: Any, names: dict[str, str]) -> Any:
    """A parameters schema with its dialect's type ``names`` (:data:`_SCHEMA_TYPES`) renamed.

    Only the types change: a default, an enum or an example is data, and stays as written.
    """
    if isinstance(schema, list):
        return [_json_schema(item, names) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {key: _schema_value(key, value, names) for key, value in schema.items()}


def _schema_value(key: str, value: Any, names: dict[str, str]) -> Any:
    """One key's value of a schema, its types (and its subschemas' types) JSON Schema's."""
    if key == "type" and isinstance(value, str):
        return names.get(value, value)
    if key in _NAMED_SCHEMAS and isinstance(value, dict):
        return {name: _json_schema(item, names) for name, item in value.items()}
    return _json_schema(value, names) if key in _SUBSCHEMAS else value


def _without_nulls(value: Any) -> Any:
    """The value less its keys set to null.

    A Parquet struct column gives every definition every key any row's has (``"period": null``
    in a tool that takes no period).
    """
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


__all__ = ["declaration_only", "message_tools", "prompt_tools", "row_tools"]
