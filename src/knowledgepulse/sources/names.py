"""The file formats ``--from`` takes, by name: light enough for the CLI to import at start-up."""

from __future__ import annotations

SOURCES: dict[str, str] = {
    "otlp": "knowledgepulse.sources.otel",
    "langsmith": "knowledgepulse.sources.langchain",
    "openai-agents": "knowledgepulse.sources.openai_agents",
    "smolagents": "knowledgepulse.sources.smolagents",
    "pydantic-ai": "knowledgepulse.sources.pydantic_ai",
    "langfuse": "knowledgepulse.sources.exports.langfuse",
    "phoenix": "knowledgepulse.sources.exports.phoenix",
    "jaeger": "knowledgepulse.sources.exports.jaeger",
    "otel-js": "knowledgepulse.sources.exports.otel_js",
    # Conversation datasets, one row a conversation; hermes first: its tags sit inside
    # ShareGPT or chat turns.
    "hermes": "knowledgepulse.sources.chat.hermes:FAMILY",
    "anthropic": "knowledgepulse.sources.chat.anthropic:FAMILY",
    "openai-responses": "knowledgepulse.sources.chat.openai_responses:FAMILY",
    "openai-chat": "knowledgepulse.sources.chat.openai_chat:FAMILY",
    "sharegpt": "knowledgepulse.sources.chat.sharegpt:FAMILY",
}
"""Each file format ``kp convert --from`` takes, and the module that reads it."""

SOURCE_CHOICES: tuple[str, ...] = ("auto", *SOURCES)
