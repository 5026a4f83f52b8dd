"""Replay instrumentations' recorded runs through the frameworks; keep the spans as OTLP JSON.

Run by hand from the repository root (never by the test suite), with the cassettes laid out as
``CASSETTES/<owner>+<name>/<path in the repository>`` (``SOURCES.md`` names each one's commit),
one run (a key of ``RUNS``) and one tracing a process::

    python tests/conformance/otel_frameworks_traces.py CASSETTES RUN TRACING

Instrumentations keep, for their own tests, every HTTP exchange of a framework's run as a VCR
cassette (the model's replies, a search page, the framework's telemetry). Each run is made again
here as the recording's test made it, the same agents and tools defined as the test defines them,
under ``vcrpy`` replaying that cassette (nothing leaves the machine), and traced as ``TRACING``
says: ``openinference``, ``openllmetry`` or ``openlit`` (those instrumentations), ``contrib``
(opentelemetry-python-contrib's own for the OpenAI Agents SDK, written as
``otel_contrib_<framework>_<run>``), ``native`` (the framework's own spans: Microsoft Agent
Framework's, Strands'), ``latest`` (Strands' own in the GenAI conventions' newest shape).
The spans an in-memory exporter kept are written as the
OTel file exporter writes them (``tests/integrations/otel_helpers.otlp_json``) to
``files/otlp/<tracing>_<framework>_<run>.json`` (``<framework>_<run>.json`` for ``native``).

The frameworks pin what the others use: a virtual environment each, made on 2 December 2026 with
``pip install vcrpy opentelemetry-sdk pyyaml`` and

* Agno: ``agno openai ddgs yfinance openinference-instrumentation-agno
  opentelemetry-instrumentation-agno`` (OpenLIT: ``openlit`` in an environment of its own);
* Microsoft Agent Framework and Haystack: ``agent-framework-core agent-framework-openai
  openinference-instrumentation-agent-framework "haystack-ai<3"
  openinference-instrumentation-haystack``;
* Google ADK: ``"google-adk==2.10.*" openinference-instrumentation-google-adk``;
* the OpenAI Agents SDK: ``openai-agents opentelemetry-instrumentation-openai-agents``
  (``contrib``, made on 4 December 2026: ``openai-agents==0.24.0
  opentelemetry-instrumentation-openai-agents-v2==0.1.0``, on ``opentelemetry-util-genai`` 1.3b0;
  the same module name as OpenLLMetry's, so an environment of its own);
* the Anthropic SDK: ``anthropic openinference-instrumentation-anthropic``;
* LlamaIndex: ``llama-index-core llama-index-llms-openai opentelemetry-instrumentation-llamaindex
  opentelemetry-instrumentation-openai``;
* Strands: ``"strands-agents[openai]" httpx2`` (its replies are served from pydantic-ai's
  recording by ``replay_frameworks.replies``, as a stream: no cassette of Strands' own);
  ``openinference``: ``openinference-instrumentation-strands-agents`` too (made on 4 December
  2026: 0.1.12 on Strands 1.62.0), its span processor mapping Strands' own spans.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

OUT = Path(__file__).parent / "files"
INSTRUMENTATION = "Arize-ai+openinference/python/instrumentation/openinference-instrumentation-"
AGNO = INSTRUMENTATION + "agno/tests/openinference/instrumentation/agno/fixtures/"
AGENT_FRAMEWORK = INSTRUMENTATION + "agent-framework/tests/cassettes/test_processor/"
HAYSTACK = INSTRUMENTATION + "haystack/tests/openinference/haystack/cassettes/test_instrumentor/"
GOOGLE_ADK = INSTRUMENTATION + "google-adk/tests/cassettes/test_instrumentor/"
ANTHROPIC = INSTRUMENTATION + "anthropic/tests/openinference/anthropic/cassettes/test_instrumentor/"
AGNO_TEAM = (
    "traceloop+openllmetry/packages/opentelemetry-instrumentation-agno/tests/cassettes/test_team/"
)
LLAMA_INDEX = (
    "traceloop+openllmetry/packages/opentelemetry-instrumentation-llamaindex/tests/cassettes/"
    "test_agents/"
)
GOOGLE_RETRY = (
    "pydantic+pydantic-ai/tests/models/cassettes/test_google/test_google_model_retry.yaml"
)
OPENAI_AGENTS = (
    "traceloop+openllmetry/packages/opentelemetry-instrumentation-openai-agents/tests/cassettes/"
    "test_openai_agents/"
)


def recorded_tool_results(cassette: Path) -> list[str]:
    """The tool results the model was sent, in the order the recorded requests first sent them.

    ``ddgs`` now fetches with its own HTTP client (``primp``), which vcrpy does not see: the
    search page the cassette holds is never asked for. The results it gave are in the next
    request the recording holds, as the tool message Agno wrote, so they are served from there.
    """
    import yaml

    seen: list[str] = []
    for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
        if not interaction["request"]["uri"].endswith("/chat/completions"):
            continue
        for message in json.loads(interaction["request"]["body"])["messages"]:
            if message["role"] == "tool" and message["content"] not in seen:
                seen.append(message["content"])
    return seen


def news_agent(cassette: Path) -> Any:
    """``test_agno_instrumentation``: a DuckDuckGo search, then the answer."""
    from agno.agent import Agent  # type: ignore[import-not-found]
    from agno.models.openai.chat import OpenAIChat  # type: ignore[import-not-found]
    from agno.tools.duckduckgo import DuckDuckGoTools  # type: ignore[import-not-found]
    from ddgs.ddgs import DDGS  # type: ignore[import-not-found]

    results = recorded_tool_results(cassette)
    # Agno writes the list DDGS returned as ``json.dumps(results, indent=2)``: read back, the
    # same text again.
    DDGS.text = lambda self, **_: json.loads(results.pop(0))
    agent = Agent(name="News Agent", model=OpenAIChat(id="gpt-4o-mini"), tools=[DuckDuckGoTools()])
    return agent.run("What's trending on Twitter?")


def failing_tool_agent(cassette: Path) -> Any:
    """``test_agent_with_failing_tool_integration``: the one tool raises."""
    from agno.agent import Agent
    from agno.models.openai.chat import OpenAIChat
    from agno.tools.function import Function  # type: ignore[import-not-found]

    def unreliable_search(query: str) -> str:
        """A search tool that fails."""
        raise RuntimeError(f"Search service unavailable for: {query}")

    agent = Agent(
        name="Search Agent",
        model=OpenAIChat(id="gpt-4o-mini"),
        tools=[Function.from_callable(unreliable_search, name="unreliable_search")],
        user_id="test_user",
    )
    return agent.run("Search for Python tutorials", session_id="test_session")


def mixed_tools_agent(cassette: Path) -> Any:
    """``test_agent_with_mixed_tool_results_integration``: one tool works, the other raises."""
    from agno.agent import Agent
    from agno.models.openai.chat import OpenAIChat
    from agno.tools.function import Function

    def working_calculator(a: int, b: int) -> int:
        """A calculator that works."""
        return a + b

    def broken_weather(city: str) -> str:
        """A weather tool that's broken."""
        raise ConnectionError(f"Weather service down for: {city}")

    agent = Agent(
        name="Assistant Agent",
        model=OpenAIChat(id="gpt-4o-mini"),
        tools=[
            Function.from_callable(working_calculator, name="calculator"),
            Function.from_callable(broken_weather, name="weather_lookup"),
        ],
    )
    return agent.run("Calculate 2+2 and check weather in NYC", session_id="mixed_test")


def team_discussion(cassette: Path) -> Any:
    """OpenLLMetry's ``test_team_discussion``: a team leader delegates the question to both
    members (``delegate_to_all_members``), each answers, and the leader sums up."""
    from textwrap import dedent

    from agno.agent import Agent
    from agno.models.openai.chat import OpenAIChat
    from agno.team import Team  # type: ignore[import-not-found]

    def expert(name: str, role: str, view: str) -> Any:
        return Agent(
            name=name,
            role=role,
            model=OpenAIChat(id="gpt-4o-mini"),
            add_name_to_context=True,
            instructions=dedent(f"""
            Provide {view} perspective. Keep responses brief.
            """),
        )

    team = Team(
        name="DiscussionTeam",
        delegate_to_all_members=True,
        model=OpenAIChat(id="gpt-4o-mini"),
        members=[
            expert("TechnicalExpert", "Technical perspective", "technical"),
            expert("BusinessExpert", "Business perspective", "business"),
        ],
        instructions=["Gather perspectives from all members.", "Provide a brief synthesis."],
        markdown=True,
    )
    return team.run("Should we use microservices? Brief answer only.")


def weather_agent(cassette: Path) -> Any:
    """``test_agent_with_tool_calls`` of OpenInference's Agent Framework processor."""
    from agent_framework import tool  # type: ignore[import-not-found]

    @tool  # type: ignore[untyped-decorator]
    def get_weather(location: str) -> str:
        """Get the weather for a location."""
        return f"The weather in {location} is sunny and 72°F"

    agent = _agent_framework_client().as_agent(
        name="WeatherAgent",
        instructions=(
            "You are a weather assistant. Use the get_weather tool when asked about weather."
        ),
        tools=[get_weather],
    )
    return asyncio.run(agent.run("What's the weather in San Francisco?"))


def weather_expert(cassette: Path) -> Any:
    """``test_multiple_tools``: two tools called in one turn, then the answer."""
    from agent_framework import tool

    @tool  # type: ignore[untyped-decorator]
    def get_temperature(location: str) -> str:
        """Get the temperature for a location."""
        temps = {"San Francisco": "72°F", "New York": "65°F", "London": "58°F"}
        return temps.get(location, "Unknown location")

    @tool  # type: ignore[untyped-decorator]
    def get_humidity(location: str) -> str:
        """Get the humidity for a location."""
        humidity = {"San Francisco": "65%", "New York": "70%", "London": "80%"}
        return humidity.get(location, "Unknown location")

    @tool  # type: ignore[untyped-decorator]
    def calculate_heat_index(temperature: str, humidity: str) -> str:
        """Calculate heat index from temperature and humidity."""
        return f"Heat index: Comfortable (based on {temperature} and {humidity})"

    agent = _agent_framework_client().as_agent(
        name="WeatherExpert",
        instructions=(
            "You are a weather expert. Use available tools to provide detailed weather information."
        ),
        tools=[get_temperature, get_humidity, calculate_heat_index],
    )
    return asyncio.run(
        agent.run(
            "What's the weather like in San Francisco? "
            "Give me temperature, humidity, and heat index."
        )
    )


def conversation(cassette: Path) -> Any:
    """``test_conversation_with_history``: two runs of one agent, each a trace."""
    agent = _agent_framework_client().as_agent(
        name="ConversationAgent", instructions="You are a friendly assistant."
    )

    async def both() -> Any:
        await agent.run("Hi, my name is Alice.")
        return await agent.run("What is my name?")

    return asyncio.run(both())


def _agent_framework_client() -> Any:
    from agent_framework.openai import OpenAIChatClient  # type: ignore[import-not-found]

    return OpenAIChatClient(model="gpt-4o-mini", api_key="sk-proj")


def haystack_agent(cassette: Path) -> Any:
    """``test_agent_run_component_spans[False]`` of OpenInference's Haystack instrumentor, the
    agent run as a pipeline's one component (haystack-ai 2.31; the instrumentor traces a
    component once a pipeline has run it: the agent on its own gives a root span per model call).
    """
    from haystack import Pipeline  # type: ignore[import-not-found]
    from haystack.components.agents import Agent  # type: ignore[import-not-found]
    from haystack.components.generators.chat import (  # type: ignore[import-not-found]
        OpenAIChatGenerator,
    )
    from haystack.dataclasses import ChatMessage  # type: ignore[import-not-found]
    from haystack.tools import Tool  # type: ignore[import-not-found]

    def search_documents(query: str, user_context: str) -> dict[str, Any]:
        """Search documents using query and user context."""
        return {"results": [f"Found results for '{query}' (user: {user_context})"]}

    search_tool = Tool(
        name="search",
        description="Search documents",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "user_context": {"type": "string"}},
            "required": ["query"],
        },
        function=search_documents,
        inputs_from_state={"user_name": "user_context"},
    )
    agent = Agent(
        chat_generator=OpenAIChatGenerator(),
        tools=[search_tool],
        state_schema={"user_name": {"type": str}, "search_results": {"type": list}},
    )
    pipeline = Pipeline()
    pipeline.add_component("agent", agent)
    return pipeline.run(
        {
            "agent": {
                "messages": [ChatMessage.from_user("Search for Python tutorials")],
                "user_name": "Alice",
            }
        }
    )


def get_weather(city: str) -> dict[str, str]:
    """Retrieves the current weather report for a specified city.

    Args:
        city (str): The name of the city for which to retrieve the weather report.

    Returns:
        dict: status and result or error msg.
    """
    return {
        "status": "success",
        "report": (
            f"The weather in {city} is sunny with a temperature of 25 degrees"
            " Celsius (77 degrees Fahrenheit)."
        ),
    }


def add(a: int, b: int) -> int:
    """Adds two numbers together.

    Args:
        a (int): The first number.
        b (int): The second number.

    Returns:
        int: The sum of the two numbers.
    """
    return a + b


def _adk_run(agent: Any, question: str) -> Any:
    """``agent`` run by an ``InMemoryRunner`` on one question, as the instrumentor's tests run;
    the session it made (``adk_sessions.py`` writes it)."""
    from google.adk.runners import InMemoryRunner  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from google.genai import types  # type: ignore[import-not-found, import-untyped, unused-ignore]

    async def run() -> Any:
        runner = InMemoryRunner(agent=agent, app_name="weather_app")
        await runner.session_service.create_session(
            app_name="weather_app", user_id="user", session_id="session"
        )
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for _ in runner.run_async(user_id="user", session_id="session", new_message=message):
            pass
        return await runner.session_service.get_session(
            app_name="weather_app", user_id="user", session_id="session"
        )

    return asyncio.run(run())


def adk_weather(cassette: Path) -> Any:
    """``test_google_adk_instrumentor``: gemini-2.0-flash calls ``get_weather``, then answers."""
    from google.adk import Agent  # type: ignore[import-not-found, import-untyped, unused-ignore]

    agent = Agent(
        name="weather_agent",
        model="gemini-2.0-flash",
        description="Agent to answer questions using tools.",
        instruction="You must use the available tools to find an answer.",
        tools=[get_weather],
    )
    return _adk_run(agent, "What is the weather in New York?")


def adk_two_cities(cassette: Path) -> Any:
    """``test_google_adk_instrumentor_multi_tool_call``: ``get_weather`` twice, then the answer."""
    from google.adk import Agent

    agent = Agent(
        name="weather_agent",
        model="gemini-2.5-flash",
        description="Agent to answer questions using tools.",
        instruction="You must use the available tools to find an answer.",
        tools=[get_weather],
    )
    return _adk_run(agent, "What is the weather in New York and London?")


def adk_sub_agents(cassette: Path) -> Any:
    """``test_google_adk_instrumentor_multi_agent``: the root agent transfers the question to
    its weather agent (``transfer_to_agent``), which calls ``get_weather`` and answers."""
    from google.adk import Agent

    addition_agent = Agent(
        name="addition_agent",
        model="gemini-2.0-flash",
        description="Agent to add two numbers together.",
        instruction="You must add two numbers together.",
        tools=[add],
    )
    weather_agent = Agent(
        name="weather_agent",
        model="gemini-2.0-flash",
        description="Agent to answer questions using tools.",
        instruction="You must use the available tools to find an answer.",
        tools=[get_weather],
    )
    root_agent = Agent(
        name="root_agent",
        model="gemini-2.0-flash",
        description="Agent that routes the user's request to the appropriate agent.",
        instruction="You must route the user's request to the appropriate agent.",
        sub_agents=[addition_agent, weather_agent],
    )
    return _adk_run(root_agent, "What is the weather in New York?")


def agents_weather(cassette: Path) -> Any:
    """OpenLLMetry's ``test_agent_with_function_tool_spans``: gpt-4.1 on the Responses API calls
    ``get_weather``, then answers."""
    from agents import Agent, Runner, function_tool

    @function_tool
    async def get_weather(city: str) -> str:
        """Gets the current weather for a specified city."""
        if city == "London":
            return "It's cloudy with 15°C"
        return "Weather not available."

    agent = Agent(
        name="WeatherAgent",
        instructions="You get the weather for a city using the get_weather tool.",
        model="gpt-4.1",
        tools=[get_weather],
    )
    return Runner.run_sync(agent, "What is the weather in London?")


def agents_handoff(cassette: Path) -> Any:
    """OpenLLMetry's ``test_agent_with_handoff_spans``: a triage agent hands off to AgentA."""
    from agents import Agent, Runner

    agent_a = Agent(name="AgentA", instructions="Agent A does something.", model="gpt-4.1")
    agent_b = Agent(name="AgentB", instructions="Agent B does something else.", model="gpt-4.1")
    triage = Agent(
        name="TriageAgent",
        instructions="You decide which agent to handoff to.",
        model="gpt-4.1",
        handoffs=[agent_a, agent_b],
        tools=[
            agent_a.as_tool(
                tool_name="handoff_to_agent_a",
                tool_description="Handoff to Agent A for specific tasks",
            ),
            agent_b.as_tool(
                tool_name="handoff_to_agent_b",
                tool_description="Handoff to Agent B for different tasks",
            ),
        ],
    )
    return Runner.run_sync(triage, "Please handle this task by delegating to another agent.")


def agents_music_composer(cassette: Path) -> Any:
    """OpenLLMetry's ``test_music_composer_handoff_hierarchy``: gpt-4o as a conductor hands off
    to the Symphony Composer, which calls ``compose_music``, then answers (streamed)."""
    from agents import Agent, Runner, function_tool

    @function_tool
    async def compose_music(style: str, key: str) -> str:
        """Compose music in the specified style and key."""
        return f"Composed a beautiful {style} piece in {key} major"

    composer_agent = Agent(
        name="Symphony Composer",
        instructions="You compose and arrange symphonic music pieces using your composition tools.",
        model="gpt-4o",
        tools=[compose_music],
    )
    conductor_agent = Agent(
        name="Orchestra Conductor",
        instructions=(
            "You coordinate musical performances. When users ask for composition, hand off to the "
            "Symphony Composer."
        ),
        model="gpt-4o",
        handoffs=[composer_agent],
    )
    messages: Any = [{"role": "user", "content": "Can you create a new symphony in D major?"}]

    async def run() -> None:
        streamed = Runner().run_streamed(starting_agent=conductor_agent, input=messages)
        async for _ in streamed.stream_events():
            pass

    return asyncio.run(run())


def llama_index_react(cassette: Path) -> Any:
    """OpenLLMetry's ``test_agents_and_tools``: LlamaIndex's ``ReActAgent`` (gpt-4o-mini) calls
    ``multiply``, then answers in its ReAct text."""
    from llama_index.core.agent.workflow import ReActAgent  # type: ignore[import-not-found]
    from llama_index.core.tools import FunctionTool  # type: ignore[import-not-found]
    from llama_index.llms.openai import OpenAI  # type: ignore[import-not-found]

    def multiply(a: int, b: int) -> int:
        """Multiply two integers and returns the result integer"""
        return a * b

    agent = ReActAgent(
        tools=[FunctionTool.from_defaults(fn=multiply)],
        llm=OpenAI(model="gpt-4o-mini"),
        verbose=True,
        streaming=False,
    )

    async def run() -> Any:
        return await agent.run("What is 2 times 3?")

    return asyncio.run(run())


# The recipe editor's tools return these (OpenLLMetry's fixture); at module level, where the
# Agents SDK looks up the tools' annotations.
class Recipe(BaseModel):
    id: str
    name: str
    ingredients: list[str]
    instructions: list[str]
    prep_time: str
    cook_time: str
    servings: int


class SearchResponse(BaseModel):
    status: str
    message: str
    recipes: dict[str, Recipe] | None = None
    recipe_count: int | None = None
    query: str | None = None


class EditResponse(BaseModel):
    status: str
    message: str
    modified_recipe: Recipe | None = None
    changes_made: list[str] | None = None
    original_recipe: Recipe | None = None


def agents_recipe_editor(cassette: Path) -> Any:
    """OpenLLMetry's ``test_recipe_workflow_agent_handoffs_with_function_tools``: gpt-4o as a
    recipe editor calls ``search_recipes``, then ``plan_and_apply_recipe_modifications`` with
    the recipe found, then answers (the test's fixture, the tools returning pydantic models)."""
    from agents import Agent, Runner, function_tool

    # Mock recipe database
    recipes_found = {
        "spaghetti_carbonara": {
            "id": "spaghetti_carbonara",
            "name": "Spaghetti Carbonara",
            "ingredients": [
                "400g spaghetti",
                "200g pancetta",
                "4 large eggs",
                "100g Pecorino Romano cheese",
            ],
            "instructions": [
                "Cook spaghetti",
                "Dice pancetta",
                "Whisk eggs with cheese",
            ],
            "prep_time": "10 minutes",
            "cook_time": "15 minutes",
            "servings": 4,
        }
    }

    @function_tool
    async def search_recipes(query: str = "") -> SearchResponse:
        """Search and browse recipes in the database."""
        if "carbonara" in query.lower():
            recipe_data = recipes_found["spaghetti_carbonara"]
            recipes_dict = {"spaghetti_carbonara": Recipe(**recipe_data)}
            return SearchResponse(
                status="success",
                message=f'Found 1 recipes matching "{query}"',
                recipes=recipes_dict,
                recipe_count=1,
                query=query,
            )
        return SearchResponse(
            status="success",
            message="No recipes found",
            recipes={},
            recipe_count=0,
            query=query,
        )

    @function_tool
    async def plan_and_apply_recipe_modifications(
        recipe: Recipe, modification_request: str
    ) -> EditResponse:
        """Plan modifications to a recipe based on user request and apply them."""

        if "vegetarian" in modification_request.lower() and "carbonara" in recipe.name.lower():
            modified_recipe = Recipe(
                id=recipe.id,
                name="Vegetarian Carbonara",
                ingredients=[
                    "400g spaghetti",
                    "200g mushrooms",
                    "4 large eggs",
                    "100g Pecorino Romano cheese",
                ],
                instructions=[
                    "Cook spaghetti",
                    "Sauté mushrooms",
                    "Whisk eggs with cheese",
                ],
                prep_time=recipe.prep_time,
                cook_time=recipe.cook_time,
                servings=recipe.servings,
            )
            return EditResponse(
                status="success",
                message="Successfully modified Spaghetti Carbonara to be vegetarian",
                modified_recipe=modified_recipe,
                changes_made=["Replaced pancetta with mushrooms"],
                original_recipe=recipe,
            )

        return EditResponse(status="error", message="Could not modify recipe")

    recipe_editor_agent = Agent(
        name="Recipe Editor Agent",
        instructions=(
            "You are a recipe editor specialist. Help users search and modify recipes using "
            "your tools."
        ),
        model="gpt-4o",
        tools=[search_recipes, plan_and_apply_recipe_modifications],
    )

    # The test runs the editor on its own (its handoff from a chat agent aside).
    messages: Any = [
        {"role": "user", "content": "Can you edit the carbonara recipe to be vegetarian?"}
    ]
    return asyncio.run(Runner.run(starting_agent=recipe_editor_agent, input=messages))


def _as_stream(reply: dict[str, Any]) -> bytes:
    """A Chat Completions reply as the event stream it would have come as (Strands streams).

    One chunk with the message (its text, its calls whole), one with the finish reason, one
    with the usage, then ``[DONE]``: what the client puts back together is the reply.
    """
    choice = reply["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [
            {"index": index, **call} for index, call in enumerate(message["tool_calls"])
        ]
    head = {key: reply[key] for key in ("id", "created", "model")}
    chunks = [
        {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]},
        {
            **head,
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
        },
        {**head, "object": "chat.completion.chunk", "choices": [], "usage": reply["usage"]},
    ]
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(events).encode()


def strands_capital(cassette: Path) -> Any:
    """The recording of a tool that fails (pydantic-ai's ``test_google_model_retry``: gemini-2.5
    asks ``get_capital`` for "France", is told to use "La France", asks again, answers), its
    replies served as a Chat Completions stream to a Strands agent's ``OpenAIModel``; the tool
    raises as the recording's did, and Strands hands the model the error."""
    import httpx
    import openai
    from replay_frameworks import replies  # type: ignore[import-not-found]
    from strands import Agent, tool  # type: ignore[import-not-found]
    from strands.models.openai import OpenAIModel  # type: ignore[import-not-found]

    queue = replies(cassette)

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path.endswith("/chat/completions"), request.url
        stream = _as_stream(queue.pop(0))
        return httpx.Response(200, content=stream, headers={"content-type": "text/event-stream"})

    @tool  # type: ignore[untyped-decorator]
    def get_capital(country: str) -> str:
        """Get the capital of a country.

        Args:
            country: The country name.
        """
        if country == "La France":
            return "Paris"
        raise ValueError('The country is not supported. Use "La France" instead.')

    # Strands pins an openai on httpx (openai 3 moved to httpx2): typed loosely for either.
    transport: Any = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = openai.AsyncOpenAI(api_key="-", http_client=transport)
    agent = Agent(
        model=OpenAIModel(client=client, model_id="gemini-2.5-pro"),
        system_prompt="You are a helpful chatbot.",
        tools=[get_capital],
        callback_handler=None,
    )
    result = agent("What is the capital of France?")
    assert not queue, "every recorded reply is served"
    return result


def anthropic_tool_result(cassette: Path) -> Any:
    """OpenInference's ``test_anthropic_instrumentation_tool_use_in_input[with_blocks]``: the
    Messages API sent the user's question, the assistant's text and ``get_weather`` call, and
    the tool's result; claude-sonnet-4-6 answers from it."""
    import anthropic  # type: ignore[import-not-found, unused-ignore]

    client = anthropic.Anthropic(api_key="sk-ant-fake")
    said = (
        "Certainly! I can help you get the current weather information for San Francisco in"
        " Fahrenheit. To do this, I'll use the get_weather function. Let me fetch that"
        " information for you right away."
    )
    call_id = "toolu_01KBqpqR73qWGsMaW3vBzEjz"
    arguments = {"location": "San Francisco, CA", "unit": "fahrenheit"}
    messages: Any = [
        {"role": "user", "content": "What is the weather like in San Francisco in Fahrenheit?"},
        {
            "role": "assistant",
            "content": [
                {"text": said, "type": "text"},
                {"id": call_id, "input": arguments, "name": "get_weather", "type": "tool_use"},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "tool_use_id": call_id,
                    "content": '{"weather": "sunny", "temperature": "75"}',
                    "type": "tool_result",
                    "is_error": False,
                }
            ],
        },
    ]
    unit = {
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
        "description": 'The unit of temperature, either "celsius" or "fahrenheit"',
    }
    location = {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}
    return client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        tools=[
            {
                "name": "get_weather",
                "description": "Get the current weather in a given location",
                "input_schema": {
                    "type": "object",
                    "properties": {"location": location, "unit": unit},
                    "required": ["location"],
                },
            }
        ],
        messages=messages,
    )


RUNS: dict[str, tuple[str, str, Callable[[Path], Any]]] = {
    "news_agent_duckduckgo": ("agno", AGNO + "agent_run.yaml", news_agent),
    "failing_tool": ("agno", AGNO + "agent_with_failing_tool.yaml", failing_tool_agent),
    "mixed_tools": ("agno", AGNO + "agent_with_mixed_tools.yaml", mixed_tools_agent),
    "team_discussion": ("agno", AGNO_TEAM + "test_team_discussion.yaml", team_discussion),
    "weather_agent": (
        "agent_framework",
        AGENT_FRAMEWORK + "test_agent_with_tool_calls.yaml",
        weather_agent,
    ),
    "multiple_tools": (
        "agent_framework",
        AGENT_FRAMEWORK + "test_multiple_tools.yaml",
        weather_expert,
    ),
    "conversation": (
        "agent_framework",
        AGENT_FRAMEWORK + "test_conversation_with_history.yaml",
        conversation,
    ),
    "weather": ("google_adk", GOOGLE_ADK + "test_google_adk_instrumentor.yaml", adk_weather),
    "two_cities": (
        "google_adk",
        GOOGLE_ADK + "test_google_adk_instrumentor_multi_tool_call.yaml",
        adk_two_cities,
    ),
    "sub_agents": (
        "google_adk",
        GOOGLE_ADK + "test_google_adk_instrumentor_multi_agent.yaml",
        adk_sub_agents,
    ),
    "weather_tool": (
        "openai_agents",
        OPENAI_AGENTS + "test_agent_with_function_tool_spans.yaml",
        agents_weather,
    ),
    "recipe_editor": (
        "openai_agents",
        OPENAI_AGENTS + "test_recipe_workflow_agent_handoffs_with_function_tools.yaml",
        agents_recipe_editor,
    ),
    "handoff": (
        "openai_agents",
        OPENAI_AGENTS + "test_agent_with_handoff_spans.yaml",
        agents_handoff,
    ),
    "music_composer": (
        "openai_agents",
        OPENAI_AGENTS + "test_music_composer_handoff_hierarchy.yaml",
        agents_music_composer,
    ),
    "react_multiply": (
        "llama_index",
        LLAMA_INDEX + "test_agents_and_tools.yaml",
        llama_index_react,
    ),
    "capital_retry": ("strands", GOOGLE_RETRY, strands_capital),
    "tool_result": (
        "anthropic",
        ANTHROPIC + "test_anthropic_instrumentation_tool_use_in_input[with_blocks].yaml",
        anthropic_tool_result,
    ),
    "agent_search": (
        "haystack",
        HAYSTACK + "test_agent_run_component_spans[False].yaml",
        haystack_agent,
    ),
}


def _instrumentor(framework: str, tracing: str) -> Any:
    """The one instrumentor that traces ``framework`` as ``tracing`` says."""
    if framework == "haystack":
        from openinference.instrumentation.haystack import (  # type: ignore[import-not-found]
            HaystackInstrumentor,
        )

        return HaystackInstrumentor()
    if framework == "openai_agents":
        from agents import set_trace_processors
        from opentelemetry.instrumentation.openai_agents import (  # type: ignore[import-not-found]
            OpenAIAgentsInstrumentor,
        )

        set_trace_processors([])  # the SDK's own exporter to OpenAI's backend: none
        return OpenAIAgentsInstrumentor()
    if framework == "anthropic":
        from openinference.instrumentation.anthropic import (  # type: ignore[import-not-found]
            AnthropicInstrumentor,
        )

        return AnthropicInstrumentor()
    if framework == "google_adk":
        from openinference.instrumentation.google_adk import (  # type: ignore[import-not-found]
            GoogleADKInstrumentor,
        )

        return GoogleADKInstrumentor()
    if tracing == "openinference":
        from openinference.instrumentation.agno import (  # type: ignore[import-not-found]
            AgnoInstrumentor,
        )

        return AgnoInstrumentor()
    from opentelemetry.instrumentation.agno import (  # type: ignore[import-not-found]
        AgnoInstrumentor as OpenLLMetryAgnoInstrumentor,
    )

    return OpenLLMetryAgnoInstrumentor()


def _globally(framework: str, tracing: str, provider: Any) -> None:
    """Trace into the global tracer provider, where the framework's own tracing (or OpenLIT)
    writes."""
    from opentelemetry import trace as trace_api

    trace_api.set_tracer_provider(provider)
    if framework == "strands":
        # Strands' own spans; ``latest``: the GenAI conventions' newest shape
        # (``gen_ai_latest_experimental``), else its default; ``openinference``: its default,
        # given OpenInference's attributes as they end by OpenInference's processor.
        if tracing == "latest":
            os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        if tracing == "openinference":
            from openinference.instrumentation.strands_agents import (  # type: ignore[import-not-found]
                StrandsAgentsToOpenInferenceProcessor,
            )

            provider._active_span_processor._span_processors = (  # run before the exporter
                StrandsAgentsToOpenInferenceProcessor(),
                *provider._active_span_processor._span_processors,
            )
    elif framework == "agent_framework":
        # The Agent Framework writes GenAI spans of its own; OpenInference's processor gives
        # them its attributes as they end (``native``: the spans as the framework wrote them).
        from agent_framework.observability import (  # type: ignore[import-not-found]
            enable_instrumentation,
        )

        if tracing == "openinference":
            from openinference.instrumentation.agent_framework import (  # type: ignore[import-not-found]
                AgentFrameworkToOpenInferenceProcessor,
            )

            provider._active_span_processor._span_processors = (  # run before the exporter
                AgentFrameworkToOpenInferenceProcessor(),
                *provider._active_span_processor._span_processors,
            )
        enable_instrumentation(enable_sensitive_data=True)
    else:
        # OpenLIT instruments every library it knows that is installed (here Agno and OpenAI),
        # into the global tracer provider when one is set; no metrics, no log events (each
        # would want an exporter of its own).
        import openlit  # type: ignore[import-not-found]

        openlit.init(disable_metrics=True, disable_events=True, capture_message_content=True)


def instrumented(framework: str, tracing: str, provider: Any) -> Callable[[], None]:
    """Trace ``framework`` as ``tracing`` says into ``provider``; what undoes it."""
    if framework in ("strands", "agent_framework") or tracing == "openlit":
        _globally(framework, tracing, provider)
        return lambda: None
    if framework == "llama_index":
        # As the recording's test: LlamaIndex's instrumentation and OpenAI's, both OpenLLMetry's.
        from opentelemetry.instrumentation.llamaindex import (  # type: ignore[import-not-found]
            LlamaIndexInstrumentor,
        )
        from opentelemetry.instrumentation.openai import (  # type: ignore[import-not-found]
            OpenAIInstrumentor,
        )

        both: list[Any] = [OpenAIInstrumentor(), LlamaIndexInstrumentor()]
    else:
        both = [_instrumentor(framework, tracing)]
    for each in both:
        each.instrument(tracer_provider=provider)

    def undo() -> None:
        for each in both:
            each.uninstrument()

    return undo


def traced(framework: str, tracing: str, cassette: Path, run: Callable[[Path], Any]) -> Any:
    """The spans of ``run`` replayed from ``cassette``, traced as ``tracing`` says, as OTLP JSON."""
    import vcr  # type: ignore[import-not-found]
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tests.integrations.otel_helpers import otlp_json

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource(attributes={}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    undo = instrumented(framework, tracing, provider)
    # Google's client (aiohttp) writes the method in lower case: matched as the recording's
    # test matches it, whatever its case.
    replay = vcr.VCR(serializer="yaml", record_mode="none", match_on=["any_case_method", "uri"])
    replay.register_matcher(
        "any_case_method", lambda one, other: one.method.upper() == other.method.upper()
    )
    try:
        # Strands is served the replies itself (a stream made of each): no HTTP to replay.
        with (
            contextlib.nullcontext()
            if framework == "strands"
            else replay.use_cassette(str(cassette))
        ):
            try:
                run(cassette)
            except Exception as error:  # a run a tool ends is still traced
                print(f"  the run raised {error!r}")
    finally:
        undo()
    return otlp_json(exporter.get_finished_spans())


def _write(name: str, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
    # A stack trace names this machine's paths: kept from the repository root, from
    # ``site-packages/`` and from ``lib/python3.N/`` (the standard library) on.
    text = text.replace(str(Path(__file__).parents[2]) + "/", "")
    text = re.sub(r'[^"\s]*/site-packages/', "site-packages/", text)
    text = re.sub(r'[^"\s]*/(lib/python3\.\d+/)', r"\1", text)
    path = OUT / "otlp" / name
    path.write_text(text)
    print(f"wrote {path.relative_to(OUT)}")


def main(cassettes: Path, name: str, tracing: str) -> None:
    """One run, traced by ``openinference`` or ``openllmetry``: each in a process of its own, so
    that no instrumentor's context is left behind for the next run's spans."""
    sys.path.insert(0, str(Path(__file__).parents[2]))
    sys.path.insert(0, str(Path(__file__).parent))  # replay_frameworks' served replies
    os.environ["OPENAI_API_KEY"] = "fake_key"  # never sent: vcrpy answers every request
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    os.environ["GOOGLE_API_KEY"] = "xyz"  # never sent either
    framework, cassette, run = RUNS[name]
    document = traced(framework, tracing, cassettes / cassette, run)
    if tracing == "native":  # the framework's own spans
        _write(f"{framework}_{name}.json", document)
    elif tracing == "latest":  # its own spans in the conventions' newest shape
        _write(f"{framework}_genai_latest_{name}.json", document)
    elif tracing == "contrib":  # opentelemetry-python-contrib's instrumentation
        _write(f"otel_contrib_{framework}_{name}.json", document)
    else:
        _write(f"{tracing}_{framework}_{name}.json", document)


if __name__ == "__main__":
    # otel_frameworks_traces.py CASSETTES RUN openinference|openllmetry|contrib|native (see RUNS)
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
