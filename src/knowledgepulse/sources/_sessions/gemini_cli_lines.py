"""Gemini CLI's JSON Lines session file folded into the ``ConversationRecord`` its JSON form holds.

Since April 2026 (google-gemini/gemini-cli#23749) Gemini CLI appends a session to
``chats/session-*.jsonl`` as it goes: a metadata line (``sessionId``, ``projectHash``,
``startTime``, ``lastUpdated``, ``kind``), each message as a line of its own (a message written
again, its tool calls' results added, repeats its ``id``), ``{"$set": {...}}`` lines that update
the metadata (``lastUpdated``, or ``messages`` replacing all of them) and ``{"$rewindTo": id}``
lines (the user rewound: that message and those after it are gone). The fold is the CLI's own
reader's (``loadConversationRecord`` of ``chatRecordingService``, read in 0.61.0), line for line;
a line of another kind (a later version's) is passed over, as it passes it over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from knowledgepulse._util.jsonpath import as_string
from knowledgepulse.records import Location, Record


def recognises(value: Any) -> bool:
    """Whether a file's first record is a JSON Lines session's metadata line."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
        and isinstance(value.get("startTime"), str)
        and "messages" not in value
    )


@dataclass(slots=True)
class Folded:
    """The session the lines make, and the line (and the path in it) each message came from."""

    metadata: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, tuple[Any, Record, tuple[str | int, ...]]] = field(default_factory=dict)

    def session(self, first: Record) -> Record:
        """The folded ``ConversationRecord``, located at the file's first line."""
        value = {**self.metadata, "messages": [told for told, _, _ in self.messages.values()]}
        return Record(Location(first.location.file, first.location.line), value)

    def origin(self, index: int) -> tuple[Record, tuple[str | int, ...]]:
        """The line the session's message ``index`` was read from, and its path in that line."""
        _, record, path = list(self.messages.values())[index]
        return record, path


def fold(records: Iterable[Record]) -> Folded:
    """Apply each line in order, as Gemini CLI does when it loads the file."""
    folded = Folded()
    for record in records:
        value = record.value
        if not isinstance(value, dict):
            continue
        rewind = as_string(value.get("$rewindTo"))
        if rewind is not None:
            ids = list(folded.messages)
            kept = ids[: ids.index(rewind)] if rewind in ids else []  # an unknown id: all gone
            folded.messages = {key: folded.messages[key] for key in kept}
        elif isinstance(value.get("id"), str):
            folded.messages[value["id"]] = (value, record, ())  # a repeated id keeps its place
        elif isinstance(value.get("$set"), dict):
            update = value["$set"]
            if isinstance(update.get("messages"), list):
                folded.messages = {}
                _keep(folded, update["messages"], record, ("$set", "messages"))
            folded.metadata |= update
        elif isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
            folded.metadata |= value
            _keep(folded, value.get("messages"), record, ("messages",))
    return folded


def _keep(folded: Folded, messages: Any, record: Record, path: tuple[str | int, ...]) -> None:
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            folded.messages[message["id"]] = (message, record, (*path, index))
