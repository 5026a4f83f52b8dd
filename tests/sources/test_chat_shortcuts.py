"""The checks chat rows skip when a text lacks their words still find what those words say.

Each pattern and parse runs only where its literal words are (most rows hold none of them): a
text that holds them is read as before, escapes and all.
"""

from __future__ import annotations

from knowledgepulse.sources._chat._text import declared_action, error_text
from knowledgepulse.sources._envelope import request


def test_a_result_whose_error_key_is_written_with_an_escape_is_still_an_error() -> None:
    """JSON may spell a key with ``\\u`` escapes: ``{"\\u0065rror": ...}`` is an error key."""
    escaped = '{"\\u0065rror": "boom"}'
    assert error_text(escaped) == escaped
    assert error_text('{"error": "boom"}') == '{"error": "boom"}'
    assert error_text('{"ok": true, "items": 3}') is None


def test_a_shell_result_is_failed_by_its_exit_code_only_where_it_says_one() -> None:
    """nanobot's ``Exit code: N`` last: not 0 is a failure; a result without it is none."""
    assert error_text("built\nExit code: 2") == "built\nExit code: 2"
    assert error_text("built\nExit code: 0") is None
    assert error_text("built") is None


def test_each_declared_action_line_is_found_and_a_prompt_without_one_declares_none() -> None:
    """AgentBench's ``ACTION:``, ``Act:`` and ``Action:`` lines; a plain prompt has none."""
    assert declared_action("Reply with\nACTION: your next action") == "ACTION"
    assert declared_action("Then write 'Act: bash' and the code") == "Act"
    assert declared_action("Action: Operation") == "Action"
    assert declared_action("You are a helpful assistant.") is None
    assert declared_action("Actually, reply briefly.") is None
    assert declared_action(None) is None


def test_a_dspy_request_gives_its_input_fields_and_plain_text_stays_as_written() -> None:
    """DSPy's ``[[ ## field ## ]]`` markers are read; text without one is the request."""
    dspy = (
        "[[ ## question ## ]]\nWhat is 2 + 2?\n\nRespond with the corresponding output fields, "
        "starting with the field `[[ ## answer ## ]]`."
    )
    assert request(dspy) == "What is 2 + 2?"
    assert request("Please book a flight.") == "Please book a flight."
