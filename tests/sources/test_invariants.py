"""The invariants of a faithful conversion: they hold on what the step rules build, and say
so, one warning a law, where a converter breaks them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.sources import StepBuilder, TraceOptions, assemble
from knowledgepulse.sources._invariants import check
from knowledgepulse.trace.models import ReasoningTrace

_words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=40).filter(str.strip)
_tool_names = st.from_regex(r"[a-z][a-z_]{2,12}", fullmatch=True).filter(
    lambda name: name not in {"tool", "function", "unknown", "thought", "observation"}
)
_events = st.lists(
    st.one_of(
        st.tuples(st.just("thought"), _words),
        st.tuples(st.just("tool"), _tool_names),
        st.tuples(st.just("error"), _tool_names),
    ),
    max_size=8,
)


def _converted(events: list[tuple[str, str]], answer: str, objective: str) -> ReasoningTrace:
    builder = StepBuilder()
    for kind, value in events:
        if kind == "thought":
            builder.thought(value)
        else:
            builder.tool_result(value, output="ok", error="failed" if kind == "error" else None)
    builder.answer(answer)
    item = assemble(
        builder,
        source="test",
        source_id="t1",
        success=True,
        options=TraceOptions(),
        objective=objective,
    )
    return item.trace


@given(_events, _words.map(lambda text: f"The answer: {text}!"), _words)
def test_what_the_step_rules_build_keeps_every_invariant(
    events: list[tuple[str, str]], answer: str, objective: str
) -> None:
    """A run told to the step builder, whatever its actions, breaks no invariant."""
    assert check(_converted(events, answer, f"Please {objective}")) == []


@given(_events, _words.map(lambda text: f"The long final answer is {text}."))
def test_an_answer_told_twice_in_one_step_is_said(
    events: list[tuple[str, str]], answer: str
) -> None:
    """Two copies of the answer joined into one thought are two appearances."""
    trace = _converted([*events, ("thought", f"{answer}\n{answer}")], answer, "Please help")
    assert any("appears" in warning for warning in check(trace))


def test_reasoning_that_quotes_the_answer_is_no_second_appearance() -> None:
    """A thought that mentions the answer among other words (a model's reasoning) is no copy."""
    answer = "Hello from HermesWith!"
    reasoning = f'The user wants me to say exactly "{answer}" and nothing else.'
    trace = _converted([("thought", reasoning)], answer, "Please say hello")
    assert check(trace) == []


def test_a_tool_named_question_mark_is_said() -> None:
    """A tool call named ``?`` breaks the tool-name law."""
    trace = _converted([("tool", "?")], "done", "Please help")
    assert check(trace) == [
        "steps [0] call a tool with no real name (empty, '?', 'tool' or a step type)"
    ]


def test_an_objective_of_session_state_json_is_said() -> None:
    """An objective that is a JSON blob (ADK session state, say) is not the user's request."""
    trace = _converted([], "done", '{"user_id": "u1", "session_id": "s1"}')
    assert check(trace) == ["the objective is JSON, not the user's request"]


def test_a_placeholder_or_system_prompt_objective_is_said() -> None:
    """The envelope's fallback (``openai run``) and a system prompt are not a request."""
    placeholder = _converted([], "done", "openai run")
    system = _converted([], "done", "You are a helpful assistant.")
    assert check(placeholder) == [
        "the objective is a placeholder ('openai run'), not the user's request"
    ]
    assert check(system) == ["the objective reads as a system prompt, not the user's request"]


_ROLES = st.sampled_from(["system", "user", "assistant", "User", "Human", "Assistant", "AI"])


@given(st.lists(st.tuples(_ROLES, _words), min_size=2, max_size=5))
def test_an_objective_that_is_a_flattened_chat_is_said(turns: list[tuple[str, str]]) -> None:
    """A chat flattened into ``role: text`` lines (OpenLIT's prompt) is no one's request,
    whichever role opens it (``user: ...`` as well as ``system: You are...``)."""
    objective = "\n".join(f"{role}: {text}" for role, text in turns)
    assert check(_converted([], "done", objective)) == [
        "the objective is a chat flattened into 'role: text' turns, not the user's request"
    ]


def test_a_request_that_names_a_role_inside_it_is_no_flattened_chat() -> None:
    """A person's words that mention a role after the start (``... the user: hi``) are theirs."""
    objective = "Write a greeting for the user: hello\nand sign it as the assistant: me"
    assert check(_converted([], "done", objective)) == []
