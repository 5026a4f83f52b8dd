"""Turn a VCR cassette of model API calls into one dataset row: the recipe of the cassette rows.

Run from the repository root:
``python tests/conformance/from_cassette.py CASSETTE.yaml tests/conformance/files/FORMAT/x.jsonl``.

A framework's agent re-sends the whole conversation on every model call, so the last request
of a cassette, followed by the reply it got, is the whole run. The row is written in the shape
of the API the cassette recorded, which is a shape kp reads as dataset rows:

* Anthropic Messages (``/v1/messages``): ``{"system", "tools", "messages"}``, the reply's
  ``content`` appended as an assistant message;
* OpenAI Chat Completions (``/chat/completions``): ``{"messages", "tools"}``, the reply's
  ``choices[0].message`` appended;
* OpenAI Responses (``/responses``): ``{"input"}``, the reply's ``output`` items appended
  (``instructions`` kept);
* Gemini (``:generateContent``): ``{"contents", "systemInstruction", "tools"}``, the first
  candidate's ``content`` appended.

Nothing else is changed: no message is edited, dropped or added. Streaming calls are skipped
(their reply is a stream of events, not one message).

With ``--traces`` the file is instead what the OpenAI Agents SDK's own trace exporter sent
during the recording (``POST /v1/traces/ingest``, ``{"data": [...]}``): each exported trace and
span, one a line, in the order sent: the ``openai-agents`` format.

A Responses request that names a ``previous_response_id`` (Microsoft Agent Framework's, which
lets the server keep the conversation) sends only what is new: the conversation is that
response's own request and output, then these items. The chain is followed back through the
cassette's earlier calls, so the row is the whole run as the server held it.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml


def _json(body: Any) -> Any:
    if isinstance(body, dict) and "string" in body:
        body = body["string"]
    if isinstance(body, bytes) and body[:2] == b"\x1f\x8b":  # a gzip-encoded reply
        body = gzip.decompress(body)
    return json.loads(body) if isinstance(body, str | bytes) else body


def _api(uri: str) -> str | None:
    path = uri.split("?", maxsplit=1)[0].rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith(":generateContent"):
        return "gemini"
    return None


def row(cassette: Path) -> dict[str, Any]:
    """The row of a cassette's last (non-streaming) model call and its reply."""
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    calls = []
    replies: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}  # response id -> call
    for interaction in interactions:
        request = interaction["request"]
        api = _api(request["uri"])
        body = request.get("parsed_body") or _json(request.get("body"))
        if api is None or not isinstance(body, dict) or body.get("stream"):
            continue
        response = interaction["response"]
        reply = response.get("parsed_body") or _json(response["body"])
        calls.append((api, body, reply))
        if api == "openai-responses" and isinstance(reply, dict) and "id" in reply:
            replies[reply["id"]] = (body, reply)
    api, request, reply = calls[-1]
    if api == "anthropic":
        messages = [*request["messages"], {"role": "assistant", "content": reply["content"]}]
        kept = {key: request[key] for key in ("system", "tools") if key in request}
        return {**kept, "messages": messages}
    if api == "openai-chat":
        kept = {key: request[key] for key in ("tools",) if key in request}
        return {"messages": [*request["messages"], reply["choices"][0]["message"]], **kept}
    if api == "gemini":
        contents = [*request["contents"], reply["candidates"][0]["content"]]
        kept = {key: request[key] for key in ("systemInstruction", "tools") if key in request}
        return {"contents": contents, **kept}
    items = _items(request)
    earlier = request.get("previous_response_id")
    while earlier in replies:  # the server's conversation before this request
        before, said = replies[earlier]
        items = [*_items(before), *said["output"], *items]
        earlier = before.get("previous_response_id")
    kept = {key: request[key] for key in ("instructions",) if key in request}
    return {"input": [*items, *reply["output"]], **kept}


def _items(request: dict[str, Any]) -> list[Any]:
    items = request["input"]
    if isinstance(items, str):  # a bare string is the user's message
        return [{"role": "user", "content": items}]
    return list(items)


def exported(cassette: Path) -> list[dict[str, Any]]:
    """The traces and spans the Agents SDK exported in a cassette, in the order sent."""
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    return [
        item
        for interaction in interactions
        if interaction["request"]["uri"].split("?", maxsplit=1)[0].endswith("/traces/ingest")
        for item in _json(interaction["request"].get("body"))["data"]
    ]


def main() -> None:
    """Write the row of ``argv[1]`` (a cassette) to ``argv[2]`` (a JSON Lines file).

    ``--traces`` (a third argument): the Agents SDK's exported traces and spans instead.
    """
    cassette, out = Path(sys.argv[1]), Path(sys.argv[2])
    if sys.argv[3:] == ["--traces"]:
        lines = [json.dumps(item, ensure_ascii=False) for item in exported(cassette)]
        out.write_text("".join(f"{line}\n" for line in lines))
        return
    out.write_text(json.dumps(row(cassette), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
