"""LangGraph's structured response: the rule that tells its forced call from a tool call.

LangGraph's prebuilt agent given a ``response_format`` ends its loop when the model replies with
text and no call (the answer), then asks the model once more, its reply forced into a call of
the schema (``generate_structured_response``: ``with_structured_output`` by function calling).
No tool runs it: its arguments are the run's structured output, as Pydantic AI's
``final_result``'s are, and no tool call. The span reader (OTel, Langfuse) and the LangSmith runs
reader see the same run and read it by this one rule.
"""

from __future__ import annotations

from collections.abc import Sequence

CALL_KINDS = frozenset({"tool_call", "server_tool_call"})
"""The part kinds that ask for a call."""


def is_structured_extraction(
    last: Sequence[str],
    before: Sequence[str],
    *,
    ran_after: bool,
    sent_last_by_model: bool | None,
) -> bool:
    """Whether the last model call is the extraction of the answer into a structured output.

    ``last`` and ``before`` are the kinds of the parts (``text``, ``reasoning``, ``tool_call``...)
    the last model call and the one before it replied with. The last asks for one call and
    nothing else, no tool started after it (``ran_after``), the model call before it replied in
    text alone, and what the last was sent last (where recorded: ``sent_last_by_model`` is
    ``None`` where not) is that reply, no user's turn or tool result.
    """
    return (
        list(last) == ["tool_call"]
        and "text" in before
        and not any(kind in CALL_KINDS for kind in before)
        and not ran_after
        and sent_last_by_model is not False
    )


__all__ = ["CALL_KINDS", "is_structured_extraction"]
