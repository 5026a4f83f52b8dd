"""Google ADK's own files (a saved session, an eval set) as traces.

The files are the conformance corpus's real ones (tests/conformance/files/adk, origins and licences
in SOURCES.md there); a variant changes one event of a real file to reach a rule it does not show
(no file found holds a failed tool or a model error). The facts files cover objectives, tools and
answers; these tests the steps themselves.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import convert
from knowledgepulse.sources._registry import detect
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, source_of

ADK = Path(__file__).parents[1] / "conformance" / "files" / "adk"
CART = ADK / "adk_samples_customer_service_123.session.json"
"""A session of eleven user turns; ``modify_cart`` and cart lookups, text beside each call."""
SHOPPING = ADK / "adk_samples_shopping_image_search_denim_skirt.session.json"
"""A session with events of state changes only (no content), and ``long_running_tool_ids``."""
ORDERS = ADK / "adk_python_ecommerce_order_query.test.json"
"""An eval set: four invocations whose ``tool_uses`` hold the calls, no ``tool_responses``."""
ROLL_DIE = ADK / "adk_python_hello_world_roll_die.test.json"
"""An eval case whose last invocation ends in a ``roll_die`` call and an empty response."""
CONCIERGE = ADK / "adk_samples_travel_concierge_intrip.test.json"
"""An eval case with the sub-agents' ``intermediate_responses``."""


def document(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value


def items(value: Any) -> list[TraceItem | Problem]:
    return list(convert([value], source="adk"))


def one_trace(found: list[TraceItem | Problem]) -> ReasoningTrace:
    assert [item for item in found if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in found if isinstance(item, TraceItem)]
    return item.trace


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def calls(trace: ReasoningTrace) -> list[str]:
    return [name for kind, name in kinds(trace) if kind in ("tool_call", "error_recovery") and name]


def test_a_session_and_an_eval_set_are_detected_as_adk() -> None:
    """Nothing else claims them: before this source kp refused both."""
    for path in (CART, SHOPPING, ORDERS, ROLL_DIE):
        assert [source.name for source in detect(document(path))] == ["adk"]


def test_a_session_is_one_trace_its_calls_in_order_and_its_last_text_the_answer() -> None:
    """The user's first words the objective, the app the agent, its id the trace's."""
    (item,) = convert_file(CART)
    assert isinstance(item, TraceItem)
    trace = item.trace
    assert trace.task.objective == "hi"
    assert [name for name in calls(trace) if name != "respond"] == [
        "modify_cart",
        "access_cart_information",
        "check_product_availability",
        "access_cart_information",
        "modify_cart",
        "access_cart_information",
    ]
    assert trace.id == "kp:trace:f7e81523-cd34-4202-821e-a1f44d9cef94"
    assert trace.metadata.agent_id == "customer_service_agent"
    assert source_of(item)["user_id"] == "test_user"
    assert (trace.outcome.result_summary or "").startswith("I apologize, it seems like")
    assert trace.metadata.success is True


def test_events_without_content_say_nothing() -> None:
    """ADK's state-change events (``actions.state_delta`` only) are no step, no turn."""
    trace = one_trace(convert_file(SHOPPING))
    assert trace.task.objective == "I really like this one, can you help me find something similar?"
    assert calls(trace)[:2] == ["search", "respond"]


def _camel(value: Any) -> Any:
    """A value with its keys as ADK's API server writes them (the models' camel-case aliases)."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m[1].upper(), k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


def test_what_the_api_server_serves_in_camel_case_reads_the_same() -> None:
    """``GET /apps/{app}/users/{user}/sessions/{id}``: ``appName``, ``functionCall``..."""
    snake = one_trace(convert_file(CART))
    camel = one_trace(items(_camel(document(CART))))
    assert kinds(camel) == kinds(snake)
    assert camel.outcome.result_summary == snake.outcome.result_summary
    assert camel.metadata.agent_id == "customer_service_agent"


def _response(session: dict[str, Any], name: str) -> dict[str, Any]:
    """The first function response of ``name`` in a session's events."""
    for event in session["events"]:
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("function_response")
            if response and response["name"] == name:
                assert isinstance(response, dict)
                return response
    raise AssertionError(name)


def test_a_tools_status_error_is_an_error_and_the_next_call_the_recovery() -> None:
    """ADK's tools report a failure as ``{"status": "error", "error_message": ...}``."""
    session = document(CART)
    _response(session, "modify_cart")["response"] = {
        "status": "error",
        "error_message": "Product not found: arbequina-olive",
    }
    trace = one_trace(items(session))
    failed = next(
        n
        for n, step in enumerate(trace.steps)
        if step.content == "Product not found: arbequina-olive"
    )
    assert kinds(trace)[failed] == ("observation", "modify_cart")
    recovery = next(step for step in trace.steps[failed + 1 :] if step.type != "thought")
    assert (recovery.type, recovery.tool and recovery.tool.name) == (
        "error_recovery",
        "access_cart_information",
    )


def test_an_events_error_code_is_an_error_and_a_session_ending_in_it_failed() -> None:
    """The model's call failed (``MALFORMED_FUNCTION_CALL``): an error outside a tool."""
    session = document(CART)
    last = session["events"][-1]
    failed = {
        "author": last["author"],
        "invocation_id": last["invocation_id"],
        "error_code": "MALFORMED_FUNCTION_CALL",
        "error_message": "Malformed function call: print(default_api.modify_cart(",
        "timestamp": last["timestamp"] + 1,
    }
    session["events"] = [*session["events"][:-1], failed]
    trace = one_trace(items(session))
    assert trace.steps[-1].content == (
        "MALFORMED_FUNCTION_CALL: Malformed function call: print(default_api.modify_cart("
    )
    assert trace.metadata.success is False
    assert trace.outcome.result_summary != last["content"]["parts"][0]["text"]


def test_a_streamed_chunk_is_no_step() -> None:
    """A ``partial`` event is a piece of the text the next one holds whole."""
    session = document(CART)
    last = copy.deepcopy(session["events"][-1])
    last["partial"] = True
    last["content"]["parts"][0]["text"] = "I apolog"
    session["events"].insert(len(session["events"]) - 1, last)
    assert kinds(one_trace(items(session))) == kinds(one_trace(convert_file(CART)))


def test_an_eval_case_is_a_trace_of_its_invocations_a_reference_run() -> None:
    """The calls of ``tool_uses`` in order; the last ``final_response`` the answer; no verdict."""
    (item,) = convert_file(ORDERS)
    assert isinstance(item, TraceItem)
    trace = item.trace
    assert (
        trace.task.objective
        == "Send an email to user user_a whose email address is alice@example.com"
    )
    assert [name for name in calls(trace) if name != "respond"] == [
        "send_email",
        "get_order_status",
        "get_order_ids_for_user",
        "get_order_status",
        "get_order_status",
        "cancel_order",
        "get_order_ids_for_user",
    ]
    assert trace.outcome.result_summary == "User user_b has placed one order with order ID 2.\n"
    assert source_of(item)["reference"] is True
    assert source_of(item)["eval_id"].endswith("order_query.test.json")


def test_an_eval_case_ending_in_a_call_has_no_answer() -> None:
    """``roll_die``'s reference response is one empty part: the case ends in the call."""
    trace = one_trace(convert_file(ROLL_DIE))
    assert kinds(trace)[-1] == ("tool_call", "roll_die")
    assert trace.metadata.success is False


def test_the_sub_agents_intermediate_responses_are_thoughts() -> None:
    """``[author, parts]``: what a sub-agent said on the way, never the answer."""
    case = document(CONCIERGE)["eval_cases"][0]
    said = [
        part["text"]
        for turn in case["conversation"]
        for _author, parts in turn["intermediate_data"]["intermediate_responses"]
        for part in parts
        if part.get("text")
    ]
    assert said
    trace = one_trace(convert_file(CONCIERGE))
    thoughts = [step.content for step in trace.steps if step.type == "thought"]
    assert all(text in thoughts for text in said)
    assert trace.outcome.result_summary not in said


def test_invocation_events_are_read_as_a_sessions_events() -> None:
    """ADK's newer ``intermediate_data``: the invocation's events, calls and results in order."""
    case = {
        "eval_id": "weather",
        "conversation": [
            {
                "invocation_id": "e-1",
                "user_content": {"parts": [{"text": "Weather in Paris?"}]},  # no role: the user's
                "intermediate_data": {
                    "invocation_events": [
                        {
                            "author": "weather_agent",
                            "content": {
                                "role": "model",
                                "parts": [{"function_call": {"id": "c1", "name": "get_weather"}}],
                            },
                        },
                        {
                            "author": "weather_agent",
                            "content": {
                                "parts": [
                                    {
                                        "function_response": {
                                            "id": "c1",
                                            "name": "get_weather",
                                            "response": {
                                                "status": "error",
                                                "error_message": "down",
                                            },
                                        }
                                    }
                                ]
                            },
                        },
                        {
                            "author": "weather_agent",
                            "content": {
                                "role": "model",
                                "parts": [{"function_call": {"id": "c2", "name": "search"}}],
                            },
                        },
                    ]
                },
                "final_response": {"role": "model", "parts": [{"text": "Sunny, 21 C."}]},
            }
        ],
    }
    trace = one_trace(items({"eval_set_id": "s", "eval_cases": [case]}))
    assert trace.task.objective == "Weather in Paris?"
    assert kinds(trace) == [
        ("tool_call", "get_weather"),
        ("observation", "get_weather"),
        ("error_recovery", "search"),
        ("thought", None),
    ]
    assert trace.steps[1].content == "down"
    assert trace.outcome.result_summary == "Sunny, 21 C."
    assert trace.id == "kp:trace:s/weather"


def test_a_case_with_no_turn_of_the_agents_is_a_problem_the_others_convert() -> None:
    """A case written by hand (prompts and rubrics) or a user simulator's scenario: no run."""
    eval_set = document(ROLL_DIE)
    real = eval_set["eval_cases"][0]
    written = {
        "eval_id": "rubrics",
        "conversation": [{"user_content": {"parts": [{"text": "Hi"}]}}],
    }
    scenario = {"eval_id": "sim", "conversation_scenario": {"starting_prompt": "Hi"}}
    eval_set["eval_cases"] = [written, real, scenario]
    found = items(eval_set)
    problems = [item for item in found if isinstance(item, Problem)]
    assert [problem.path for problem in problems] == [
        "eval_cases[0].conversation",
        "eval_cases[2]",
    ]
    assert "no turn of the agent's" in problems[0].message
    assert "conversation_scenario" in problems[1].message
    assert sum(isinstance(item, TraceItem) for item in found) == 1


def test_a_bad_part_is_a_problem_at_its_event() -> None:
    """A ``function_call`` without a name: said where it is in the file, the batch goes on."""
    session = document(CART)
    call = next(
        part
        for event in session["events"]
        for part in (event.get("content") or {}).get("parts") or []
        if part.get("function_call")
    )
    call["function_call"]["name"] = None
    (problem,) = items(session)
    assert isinstance(problem, Problem)
    assert problem.path.startswith("events[11].content.parts[1].functionCall.name")
    assert "expected a function name" in problem.message


def test_an_eval_cases_malformed_user_content_is_a_problem_at_its_place_not_a_crash() -> None:
    """Found by ``bench/fuzz_loaders.py --structured``: ``parts`` that is no list, or a ``role``
    that is no name, was a ``TypeError``; now the first is said at its place and the second
    reads as content without a role (the author decides, as for a hand-written case)."""
    no_parts = document(ORDERS)
    no_parts["eval_cases"][0]["conversation"][2]["user_content"]["parts"] = True
    (problem, *_) = items(no_parts)
    assert isinstance(problem, Problem)
    assert "conversation[2].user_content" in problem.path
    assert "not a Gemini content" in problem.message

    odd_role = document(ORDERS)
    odd_role["eval_cases"][0]["conversation"][1]["user_content"]["role"] = ["user"]
    assert calls(one_trace(items(odd_role))) == calls(one_trace(items(document(ORDERS))))


def eval_result(path: Path, statuses: list[int]) -> dict[str, Any]:
    """An eval result (``*.evalset_result.json``) as ADK's ``EvalSetResult`` writes it, whose
    case results ran a real eval set's conversations: no public result file under a licence
    that lets it be kept was found (the shape: adk-python's ``evaluation/eval_result.py``)."""
    eval_set = document(path)
    cases = eval_set["eval_cases"][: len(statuses)]
    return {
        "eval_set_result_id": "app_set_1764535556.37",
        "eval_set_result_name": "app_set_1764535556.37",
        "eval_set_id": eval_set["eval_set_id"],
        "eval_case_results": [
            {
                "eval_set_file": eval_set["eval_set_id"],
                "eval_set_id": eval_set["eval_set_id"],
                "eval_id": case["eval_id"],
                "final_eval_status": status,
                "eval_metric_results": None,
                "overall_eval_metric_results": [
                    {"metric_name": "tool_trajectory_avg_score", "threshold": 1.0, "score": 0.5}
                    | {"eval_status": status, "details": {"rubric_scores": None}}
                ],
                "eval_metric_result_per_invocation": [
                    {"actual_invocation": turn, "expected_invocation": turn}
                    for turn in case["conversation"]
                ],
                "session_id": "___eval___session___1",
                "session_details": None,
                "user_id": "eval_user",
            }
            for case, status in zip(cases, statuses, strict=True)
        ],
        "creation_timestamp": 1764535556.37,
    }


def test_an_eval_result_is_a_trace_per_case_its_actual_run_and_adk_verdict() -> None:
    """The actual invocations read as an eval set's (the same steps); success is ADK's
    ``final_eval_status`` (2 failed, though the run answered), the metrics kept beside it."""
    result = eval_result(ORDERS, [2])
    (reference,) = items(document(ORDERS))
    (item,) = items(result)
    assert isinstance(item, TraceItem)
    assert isinstance(reference, TraceItem)
    assert kinds(item.trace) == kinds(reference.trace)
    assert item.trace.task.objective == reference.trace.task.objective
    assert reference.trace.metadata.success
    assert not item.trace.metadata.success
    extra = source_of(item)
    assert extra["eval_status"] == "failed"
    assert "reference" not in extra
    assert extra["metrics"] == {
        "tool_trajectory_avg_score": {"score": 0.5, "threshold": 1.0, "eval_status": "failed"}
    }


def test_an_eval_result_written_as_a_json_string_is_read_as_the_object(tmp_path: Path) -> None:
    """ADK's local results manager wrote ``json.dumps(model_dump_json())``: a JSON string."""
    result = eval_result(ROLL_DIE, [1])
    path = tmp_path / "app_set_1764535556.37.evalset_result.json"
    path.write_text(json.dumps(json.dumps(result)))
    assert [source.name for source in detect(json.dumps(result))] == ["adk"]
    (item,) = convert_file(path)
    (same,) = items(result)
    assert isinstance(item, TraceItem)
    assert isinstance(same, TraceItem)
    assert kinds(item.trace) == kinds(same.trace)
    assert item.trace.metadata.success


def test_a_case_not_evaluated_says_so_and_is_read_as_a_reference_run() -> None:
    """Status 3 (no metric ran) is no verdict: success is whether the run ends in an answer."""
    (item,) = items(eval_result(ORDERS, [3]))
    assert isinstance(item, TraceItem)
    assert item.trace.metadata.success
    assert source_of(item)["eval_status"] == "not evaluated"


def test_ids_and_scores_of_another_type_are_not_kept_as_they_are() -> None:
    """Found by fuzzing: a ``user_id`` of 2**64 went into ``metadata.source`` as it was, a
    number no JSON writer of 64 bits holds. ADK's ids are strings and its scores numbers."""
    session = document(CART)
    session["user_id"] = 2**64
    (item,) = items(session)
    assert isinstance(item, TraceItem)
    assert "user_id" not in source_of(item)


def test_a_sessions_model_is_the_one_its_last_reply_names() -> None:
    """ADK before 1.0 logged each model call (``event_logs``: gemini-1.5-flash asked,
    gemini-1.5-flash-001 replied): the trace names the model, camel case or snake. Before, a
    session named none; a session with no log or version still names none."""
    path = ADK / "adk_python_context_update_successful_test.session.json"
    session = document(path)
    versions = {log["model_response"]["model_version"] for log in session["event_logs"]}
    assert versions == {"gemini-1.5-flash-001"}
    for value in (session, _camel(session)):
        assert _model(one_trace(items(value))) == "gemini-1.5-flash-001"
    assert _model(one_trace(convert_file(CART))) is None
    events = copy.deepcopy(document(CART))
    events["events"][-1]["model_version"] = "gemini-2.0-flash-001"
    assert _model(one_trace(items(events))) == "gemini-2.0-flash-001"


def _model(trace: ReasoningTrace) -> Any:
    return (trace.metadata.model_extra or {})["source"].get("model")


HELM = ADK / "agentevals_evalset_helm_3_2026-02-23.evalset.json"
"""An eval set agentevals made from a kagent trace: an MCP call whose response is the MCP
``CallToolResult`` dumped in snake case (``{content: [text block], is_error: false}``)."""


def test_an_mcp_tools_response_is_the_text_its_result_gave_the_model() -> None:
    """Before: the observation was the whole result dumped as JSON (``{"content": [{"type":
    "text", "text": ...}], "is_error": false}``); now it is the text an MCP client gives the
    model, and ``is_error: true`` makes the call a failure with that text."""
    value = document(HELM)
    trace = one_trace(items(value))
    (result,) = [step for step in trace.steps if step.type == "observation"]
    response = value["eval_cases"][0]["conversation"][0]["intermediate_data"]["tool_responses"][0]
    (block,) = response["response"]["content"]
    assert result.content == block["text"]
    failing = copy.deepcopy(value)
    turn = failing["eval_cases"][0]["conversation"][0]["intermediate_data"]
    turn["tool_responses"][0]["response"] = {
        "content": [{"type": "text", "text": "release not found"}],
        "is_error": True,
    }
    failed = one_trace(items(failing))
    assert [(step.type, step.content) for step in failed.steps[1:]][:1] == [
        ("observation", "release not found")
    ]
    assert failed.steps[2].type == "error_recovery"  # the answer after the failed call
