"""The tools a dataset row offered the model, read in each shape datasets keep them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.reports.messages import chat_row
from knowledgepulse.sources import read
from knowledgepulse.sources._chat._tools import declaration_only, prompt_tools, row_tools
from knowledgepulse.trace.item import TraceItem
from tests.paths import REPO

WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "The weather of a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
OPENAI = {"type": "function", "function": WEATHER}


def test_openai_definitions_nested_or_as_a_json_string_are_kept_as_given() -> None:
    """TRL's and Azure AI Foundry's ``tools`` column: a list, or its JSON string."""
    assert row_tools({"tools": [OPENAI]}) == (OPENAI,)
    assert row_tools({"tools": json.dumps([OPENAI])}) == (OPENAI,)


def test_bare_definitions_of_sharegpt_rows_become_openai_definitions() -> None:
    """LLaMA-Factory's and Glaive's ``tools``: a JSON string of ``{name, parameters}``."""
    assert row_tools({"conversations": [], "tools": json.dumps([WEATHER])}) == (OPENAI,)


def test_anthropic_definitions_give_their_input_schema_as_parameters() -> None:
    """Anthropic's ``{name, description, input_schema}``: chat templates read ``parameters``."""
    anthropic = {
        "name": WEATHER["name"],
        "description": WEATHER["description"],
        "input_schema": WEATHER["parameters"],
    }
    assert row_tools({"tools": [anthropic]}) == (OPENAI,)


def test_a_provider_defined_tool_has_no_definition_so_the_list_is_unsure() -> None:
    """Anthropic's server tools name a type and no schema (Pydantic AI's cassettes)."""
    hosted = {"type": "code_execution_20250825", "name": "code_execution"}
    assert row_tools({"tools": [hosted, OPENAI]}) == ()


def test_every_conformance_rows_tools_have_parameters() -> None:
    """Each tool of each training row written from the real files has a ``parameters`` schema.

    (A span may describe a tool without one: the row gives it its calls' schema, or leaves it
    out.)
    """
    for path in sorted((REPO / "tests" / "conformance" / "files").glob("*/*.jsonl")):
        for item in read([path]):
            if isinstance(item, TraceItem):
                row = chat_row(item.trace, system=item.system, offered=item.tools, task=item.task)
                for tool in json.loads(row["tools"]):
                    assert isinstance(tool["function"].get("parameters"), dict), (path, tool)


def test_toucan_rows_name_the_column_available_tools() -> None:
    """Toucan-1.5M's rows: ``available_tools`` (and ``target_tools``, the names it should call)."""
    assert row_tools({"available_tools": [OPENAI], "target_tools": ["get_weather"]}) == (OPENAI,)


def test_a_verifiers_rollout_keeps_its_tools_in_info() -> None:
    """``info.oai_tools``, the info itself a JSON string in some rollouts."""
    assert row_tools({"info": {"oai_tools": [OPENAI]}}) == (OPENAI,)
    assert row_tools({"info": json.dumps({"oai_tools": [OPENAI]})}) == (OPENAI,)


def test_the_keys_a_parquet_struct_adds_as_null_are_dropped() -> None:
    """A Parquet struct column gives each definition every key of every row's."""
    mangled = {
        "type": "function",
        "function": {**WEATHER, "parameters": {**WEATHER["parameters"], "required": None}},
    }
    assert row_tools({"tools": [mangled]}) == (OPENAI,)


def test_a_list_with_a_definition_that_cannot_be_read_gives_none() -> None:
    """No tools rather than some: the calls then say which tools there were."""
    assert row_tools({"tools": [OPENAI, {"description": "no name"}]}) == ()
    assert row_tools({"tools": "not json"}) == ()
    assert row_tools({}) == ()


def test_a_responses_function_written_flat_is_an_openai_definition() -> None:
    """The Responses API's ``{"type": "function", "name", "parameters"}``, no ``function`` key."""
    flat = {"type": "function", **WEATHER, "strict": True}
    assert row_tools({"tools": [flat]}) == (
        {"type": "function", "function": {**WEATHER, "strict": True}},
    )


def test_a_nemo_gym_rollout_keeps_its_tools_in_the_request_made() -> None:
    """NeMo Gym's ``responses_create_params.tools``, of the Responses API's flat functions."""
    request = {"input": "Weather in Paris?", "tools": [{"type": "function", **WEATHER}]}
    assert row_tools({"responses_create_params": request}) == (OPENAI,)
    assert row_tools({"responses_create_params": json.dumps(request)}) == (OPENAI,)


def test_geminis_function_declarations_are_a_definition_each() -> None:
    """Gemini's tool lists its functions, the schema in ``parameters`` or ``..._json_schema``."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    second = {"name": "get_time", "parameters_json_schema": schema}
    gemini = [{"functionDeclarations": [WEATHER, second]}]
    assert row_tools({"tools": gemini}) == (
        OPENAI,
        {"type": "function", "function": {"name": "get_time", "parameters": schema}},
    )
    assert row_tools({"tools": [{"function_declarations": [WEATHER]}]}) == (OPENAI,)


def test_a_gemini_built_in_tool_has_no_definition_so_the_list_is_unsure() -> None:
    """``codeExecution`` and ``googleSearch`` name no function: the calls decide, as for hosted."""
    assert row_tools({"tools": [{"codeExecution": {}}, {"functionDeclarations": [WEATHER]}]}) == ()


def test_a_glm4_row_declares_its_tools_on_the_system_message() -> None:
    """GLM-4's fine-tuning rows: the ``system`` message's ``tools``, beside an empty content."""
    path = REPO / "tests" / "conformance" / "files" / "sharegpt"
    path /= "glm4_finetune_readme_tool_sample.jsonl"
    row = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    declared = row["messages"][0]["tools"]
    (item,) = [item for item in read([path]) if isinstance(item, TraceItem)]
    # before: a schema guessed from the call (no description, `interests` of no item type)
    assert list(item.tools) == declared


def test_a_hermes_system_prompt_declares_its_tools_between_tools_tags() -> None:
    """NousResearch's format puts the definitions in the system prompt, after instructions that
    name the tags: JSON (a list, or an object a line) or a Python list's repr, as its card's
    example writes them; the training row lists them, descriptions kept."""
    instructions = "You are provided with function signatures within <tools> </tools> XML tags."
    for written in (json.dumps([OPENAI]), json.dumps(OPENAI), repr([OPENAI])):
        system = f"{instructions}\n<tools>\n{written}\n</tools>\nUse them."
        assert prompt_tools(system) == (OPENAI,), written
    assert prompt_tools(f"{instructions}\n<tools>\n[]\n</tools>") == ()
    assert prompt_tools("<tools> not a list </tools>") == ()
    card = REPO / "tests/conformance/files/hermes/hermes_function_calling_v1_card_examples.json"
    (first, *_) = [item for item in read([card]) if isinstance(item, TraceItem)]
    names = [tool["function"]["name"] for tool in first.tools]
    assert names == ["search_flights"]
    assert first.tools[0]["function"]["description"]


def test_a_glaive_system_prompt_declares_its_tools_after_its_fixed_sentence() -> None:
    """Glaive's function-calling rows write the definitions after "Use them if required -" (JSON
    objects one after another): the training row lists them, descriptions and required kept,
    where a schema guessed from the call had none."""
    path = REPO / "tests/conformance/files/sharegpt/function_calling_chatml_card_example.json"
    system = json.loads(path.read_text(encoding="utf-8"))["conversations"][0]["value"]
    declared = json.loads(system.split("Use them if required -", 1)[1])
    (item,) = [item for item in read([path]) if isinstance(item, TraceItem)]
    assert list(item.tools) == [{"type": "function", "function": declared}]
    assert item.tools[0]["function"]["description"] == "Create a new contact"
    two = f"{system}\n\n{json.dumps(WEATHER)}"
    assert [tool["function"]["name"] for tool in prompt_tools(two)] == [
        "create_contact",
        "get_weather",
    ]
    assert prompt_tools("Use them if required - not JSON") == ()


def test_geminis_upper_case_schema_types_are_written_as_json_schemas() -> None:
    """Gemini's ``"type": "OBJECT"`` is JSON Schema's ``object``; a default, enum stays as given."""
    declared = {
        "name": "get_weather",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "type": {"type": "STRING", "enum": ["STRING"], "default": "OBJECT"},
                "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
            },
        },
    }
    (tool,) = row_tools({"tools": [{"functionDeclarations": [declared]}]})
    assert tool["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["STRING"], "default": "OBJECT"},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
    }


def test_every_conformance_rows_tools_name_json_schema_types() -> None:
    """No tool of a training row written from the real files (Gemini's too) says ``OBJECT``."""
    gemini = REPO / "tests" / "conformance" / "files" / "gemini"
    upper = '"type": "OBJECT"'
    assert any(upper in path.read_text() for path in gemini.glob("*.jsonl"))  # they give some
    for path in sorted((REPO / "tests" / "conformance" / "files").glob("*/*.jsonl")):
        for item in read([path]):
            if isinstance(item, TraceItem):
                for tool in item.tools:
                    written = json.dumps(tool["function"].get("parameters"))
                    assert not any(f'"type": "{name}"' in written for name in _UPPER), (path, tool)


_UPPER = ("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT")


def test_the_older_hermes_prompt_declares_its_tools_between_functions_tags() -> None:
    """MarketDataGenie's deprecated example writes the definitions after ``tools:`` between
    ``<functions>`` tags, its instructions naming the (empty) tags first: the training row
    lists both tools offered, descriptions kept. Before, a schema was guessed from the one call
    made: no description, ``get_n_day_weather_forecast`` lost."""
    folder = REPO / "tests/conformance/files/sharegpt"
    path = folder / "marketdatagenie_hermes_fc_sharegpt_example_deprecated.json"
    system = json.loads(path.read_text(encoding="utf-8"))[0]["conversations"][0]["value"]
    written = system.rsplit("<functions>tools:", 1)[1].removesuffix("</functions>")
    (first, _) = [item for item in read([path]) if isinstance(item, TraceItem)]
    assert list(first.tools) == json.loads(written)
    assert [tool["function"]["name"] for tool in first.tools] == [
        "get_current_weather",
        "get_n_day_weather_forecast",
    ]


def test_a_system_message_that_only_declares_kimis_tools_is_no_system_prompt() -> None:
    """Toucan-1.5M's system message is Kimi K2's ``tool_declare`` message, the template's own
    tokens around the tools: the training row lists the tools and opens with no system turn.
    Before, the row told them twice, once as literal ``<|im_system|>`` tokens."""
    path = REPO / "tests/conformance/files/openai-chat/toucan_1_5m_sample.json"
    (row,) = json.loads(path.read_text(encoding="utf-8"))
    assert row["messages"][0]["content"].startswith("<|im_system|>tool_declare<|im_middle|>")
    (item,) = [item for item in read([path]) if isinstance(item, TraceItem)]
    assert item.system is None
    assert list(item.tools) == row["available_tools"]
    assert declaration_only(row["messages"][0]["content"])
    assert not declaration_only("<|im_system|>tool_declare<|im_middle|>not JSON<|im_end|>")
    assert not declaration_only(f"Be brief.\n{row['messages'][0]['content']}")


_FILES = REPO / "tests" / "conformance" / "files"


def _written_parameters(path: Path) -> dict[str, Any]:
    """The ``parameters`` of each tool the training rows written from ``path`` list, by name."""
    return {
        tool["function"]["name"]: tool["function"]["parameters"]
        for item in read([path])
        if isinstance(item, TraceItem)
        for tool in item.tools
    }


def _gorilla_named(schema: Any) -> Any:
    """A Gorilla schema with BFCL's renames of its types, as ``GORILLA_TO_OPENAPI`` makes them."""
    renames = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}
    if isinstance(schema, list):
        return [_gorilla_named(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: renames.get(value, value)
        if key == "type" and isinstance(value, str)
        else {name: _gorilla_named(item) for name, item in value.items()}
        if key == "properties"
        else _gorilla_named(value)
        if key == "items"
        else value
        for key, value in schema.items()
    }


def test_gorillas_dict_schemas_are_written_as_json_schema_objects() -> None:
    """When2Call's and LLaMA-Factory's rows give BFCL's ``"type": "dict"`` (its nested objects
    too), which BFCL renames to JSON Schema's ``object`` before a model is offered them: the
    training row's schema is an object schema, its descriptions and defaults as given. Before,
    ``dict`` was written, a schema no validator or chat template takes for an object."""
    for name in (
        "openai-chat/when2call_readme_sft_example.json",
        "preference/when2call_readme_preference_example.json",
    ):
        (row,) = [json.loads((_FILES / name).read_text(encoding="utf-8"))]
        given = {tool["name"]: tool["parameters"] for tool in row["tools"]}
        assert {schema["type"] for schema in given.values()} == {"dict"}
        assert _written_parameters(_FILES / name) == {
            tool: _gorilla_named(schema) for tool, schema in given.items()
        }
    path = _FILES / "openai-chat" / "reason_tool_use_demo.jsonl"
    written = _written_parameters(path)
    assert written["get_team_info"]["type"] == "object"
    campaign = written["email_schedule_campaign"]["properties"]["campaign_details"]
    assert campaign["type"] == "object"
    assert '\\"dict\\"' in path.read_text(encoding="utf-8")  # as the file gives them
    assert '"dict"' not in json.dumps(written)


def test_xlams_parameters_are_the_properties_of_an_object_schema() -> None:
    """xLAM's card gives a tool's parameters as the properties alone (no ``type``): the training
    row's schema is the object schema of those properties, each as given."""
    path = _FILES / "xlam" / "xlam_function_calling_60k_card_example.json"
    (row,) = json.loads(path.read_text(encoding="utf-8"))
    assert _written_parameters(path) == {
        tool["name"]: {"type": "object", "properties": tool["parameters"]} for tool in row["tools"]
    }


def test_mlflows_copy_of_a_schema_with_properties_is_an_object_schema() -> None:
    """MLflow's ``mlflow.chat.tools`` copy of a Gemini declaration leaves out its ``type``; the
    request the span records sent it as an object schema (``parameters_json_schema``), and the
    training row's schema is that one."""
    path = _FILES / "mlflow" / "gemini_google_model_retry.json"
    sent = {
        declared["name"]: declared["parameters_json_schema"]
        for declared in _values_under(json.loads(path.read_text(encoding="utf-8")))
        if declared.get("parameters_json_schema")
    }
    assert sent
    assert _written_parameters(path) == sent


def test_a_schema_that_is_none_stays_as_given() -> None:
    """An empty schema (hermes-agent's ``{}``) or a ``$ref`` alone is no object schema to build."""
    for schema in ({}, {"$ref": "#/$defs/Point"}, {"items": {"type": "string"}}):
        (tool,) = row_tools({"tools": [{"name": "look", "parameters": schema}]})
        assert tool["function"]["parameters"] == schema


def _values_under(value: Any) -> list[dict[str, Any]]:
    """Every object in a JSON value, the JSON text its strings hold read too."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if isinstance(value, dict):
        return [value, *(found for item in value.values() for found in _values_under(item))]
    if isinstance(value, list):
        return [found for item in value for found in _values_under(item)]
    return []


def test_an_xlam_parameter_named_type_is_one_of_its_properties() -> None:
    """xLAM's properties alone may name one ``type``: it is a property, not the schema's type."""
    given = {"type": {"type": "str", "description": "The kind."}, "q": {"type": "str"}}
    (tool,) = row_tools({"tools": [{"name": "search", "parameters": given}]})
    assert tool["function"]["parameters"] == {"type": "object", "properties": given}
    listed = {"type": ["object", "null"], "properties": {"q": {"type": "string"}}}
    (tool,) = row_tools({"tools": [{"name": "search", "parameters": listed}]})
    assert tool["function"]["parameters"] == listed
