"""The tools a dataset row offered the model, as OpenAI function definitions.

Tool-calling datasets keep them beside the conversation: a ``tools`` column of OpenAI
definitions (``{"type": "function", "function": {...}}``: TRL, Azure AI Foundry, kp's own
training rows) or of bare ``{"name", "description", "parameters"}`` objects (LLaMA-Factory's and
Glaive's ShareGPT rows, xLAM; Anthropic's ``input_schema`` is written as ``parameters``), as a list
or a JSON string; Toucan-1.5M names the column
``available_tools``; ``verifiers`` rollouts keep them in ``info.oai_tools``. A training row
written from the trace lists them as they were (descriptions, required arguments, tools never
called), not as guessed from the calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledgepulse.sources._chat._text import json_or_value

_COLUMNS = ("tools", "available_tools")
_ROLLOUT_INFO = ("info", "oai_tools")


def row_tools(row: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The row's tool definitions, each as OpenAI's; none when it has no readable list."""
    found = next((row[name] for name in _COLUMNS if row.get(name) is not None), None)
    if found is None:
        info = json_or_value(row.get(_ROLLOUT_INFO[0]))
        found = info.get(_ROLLOUT_INFO[1]) if isinstance(info, dict) else None
    listed = json_or_value(found)
    if not isinstance(listed, list):
        return ()
    tools = [_definition(json_or_value(tool)) for tool in listed]
    # One definition that cannot be read makes the list unsure: none is kept, the calls decide.
    return tuple(tool for tool in tools if tool is not None) if all(tools) else ()


def _definition(tool: Any) -> dict[str, Any] | None:
    if not isinstance(tool, dict):
        return None
    function = tool.get("function") if tool.get("type") == "function" else tool
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    if not function["name"]:
        return None
    function = _without_nulls(function)
    if "parameters" not in function and isinstance(function.get("input_schema"), dict):
        # Anthropic's definition: the same JSON Schema under its own name, which chat
        # templates (that read ``parameters``) would leave out.
        schema = function.pop("input_schema")
        function = {**function, "parameters": schema}
    if tool.get("type") not in (None, "function", "custom") and "parameters" not in function:
        # A tool the provider defines and runs (Anthropic's ``{"type":
        # "web_search_20250305", "name": "web_search"}``, its code execution): no schema is
        # given, so it is no function definition a chat template could show.
        return None
    return {"type": "function", "function": function}


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


__all__ = ["row_tools"]
