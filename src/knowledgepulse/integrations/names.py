"""The file formats ``--from`` takes, by name: light enough for the CLI to import at start-up."""

from __future__ import annotations

SOURCES: dict[str, str] = {
    "otlp": "knowledgepulse.integrations.otel",
    "langsmith": "knowledgepulse.integrations.langchain",
    "openai-agents": "knowledgepulse.integrations.openai_agents",
    "smolagents": "knowledgepulse.integrations.smolagents",
    "pydantic-ai": "knowledgepulse.integrations.pydantic_ai",
    "langfuse": "knowledgepulse.integrations.exports.langfuse",
    "phoenix": "knowledgepulse.integrations.exports.phoenix",
    "jaeger": "knowledgepulse.integrations.exports.jaeger",
    "otel-js": "knowledgepulse.integrations.exports.otel_js",
    # Conversation datasets, one row a conversation; hermes first: its tags sit inside
    # ShareGPT or chat turns.
    "hermes": "knowledgepulse.integrations.chat.hermes:FAMILY",
    "anthropic": "knowledgepulse.integrations.chat.anthropic:FAMILY",
    "openai-responses": "knowledgepulse.integrations.chat.openai_responses:FAMILY",
    "openai-chat": "knowledgepulse.integrations.chat.openai_chat:FAMILY",
    "sharegpt": "knowledgepulse.integrations.chat.sharegpt:FAMILY",
}
"""Each file format ``kp convert --from`` takes, and the module that reads it."""

SOURCE_CHOICES: tuple[str, ...] = ("auto", *SOURCES)
