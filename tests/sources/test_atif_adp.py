"""The ATIF Agent Data Protocol writes (``sample_atif.json``: a JSON list of trajectories).

The files are the conformance corpus's (tests/conformance/files/atif, origin and licence in
SOURCES.md there); a variant changes one part of one to reach a rule it does not show.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from knowledgepulse.sources import convert
from knowledgepulse.trace import TraceItem
from tests.sources.helpers import CORPUS, convert_file

TOUCAN = CORPUS / "atif" / "adp_toucan_1_5m_sample_atif.json"
"""ADP's ATIF of a Toucan row: one call, then its closing message in ``<finish>`` tags."""
AGENTTUNING_DB = CORPUS / "atif" / "adp_agenttuning_db_sample_atif.json"
"""An earlier ADP's ATIF of an AgentInstruct run, which opens by priming the model."""


def only(items: list[Any]) -> TraceItem:
    (item,) = items
    assert isinstance(item, TraceItem)
    return item


def test_adps_closing_message_is_the_answer_without_its_finish_tags() -> None:
    """Before: the answer was ``<finish> Based on my research ... </finish>``, ADP's tags kept."""
    trace = only(convert_file(TOUCAN)).trace
    answer = trace.outcome.result_summary
    assert answer is not None
    assert answer.startswith("Based on my research, StellarPay")
    assert answer.endswith("traditional banks.")
    assert [step.tool.name for step in trace.steps if step.type == "tool_call" and step.tool] == [
        "web_search_exa"
    ]
    assert trace.metadata.success is True


def test_adps_resolved_detail_labels_the_run() -> None:
    """ADP keeps a dataset's ``details`` as ``extra.adp_details``, text: ``resolved`` is the
    outcome, as in its standardized form (SWE-Gym's)."""
    documents: list[dict[str, Any]] = copy.deepcopy(json.loads(TOUCAN.read_text()))
    documents[0]["extra"]["adp_details"] = {"resolved": "False"}
    trace = only(list(convert(documents, source="atif"))).trace
    assert trace.metadata.success is False
    assert (trace.outcome.result_summary or "").startswith("Based on my research")


def test_agentinstructs_priming_is_the_system_prompt_and_the_task_the_objective() -> None:
    """Before: the objective was the SQL instructions, the scripted "Ok." a ``respond`` call and
    the question its result; now the question is the objective, the instructions the system."""
    item = only(convert_file(AGENTTUNING_DB))
    trace = item.trace
    assert (trace.task.objective or "").startswith("How many French drivers")
    assert item.system is not None
    assert item.system.startswith("I will ask you a question, then you should help me operate")
    assert "Ok." not in [step.content for step in trace.steps]
    assert (trace.outcome.result_summary or "").endswith("Final Answer: [0]")


def test_a_short_first_user_step_is_no_priming() -> None:
    """A run that opens with a short request, the agent's "Ok." and a second request is two
    requests of the user's: nothing is taken as a system prompt."""
    documents: list[dict[str, Any]] = copy.deepcopy(json.loads(AGENTTUNING_DB.read_text()))
    documents[0]["steps"][0]["message"] = "Help me with a database."
    item = only(list(convert(documents, source="atif")))
    assert item.trace.task.objective == "Help me with a database."
    assert item.system is None


def test_a_result_adp_keeps_that_says_it_failed_is_the_calls_error() -> None:
    """ADP's results carry no failure flag: one that says it failed is an error, the next
    action its recovery, as ADP's standardized observations are read."""
    documents: list[dict[str, Any]] = copy.deepcopy(json.loads(TOUCAN.read_text()))
    result = documents[0]["steps"][1]["observation"]["results"][0]
    result["content"] = "Error: the search service timed out"
    trace = only(list(convert(documents, source="atif"))).trace
    assert [step.type for step in trace.steps] == [
        "thought",
        "tool_call",
        "observation",
        "error_recovery",
    ]
    assert (trace.steps[2].content or "").startswith("Error: the search service timed out")


def test_a_result_whose_call_id_is_no_string_answers_the_call_in_order() -> None:
    """Before: a ``source_call_id`` that was an object raised TypeError (unhashable), found by
    fuzzing; ATIF's id is a string, so any other value names no call and the result answers
    the step's pending call, as a result without an id does."""
    documents: list[dict[str, Any]] = copy.deepcopy(json.loads(TOUCAN.read_text()))
    documents[0]["steps"][1]["observation"]["results"][0]["source_call_id"] = {}
    trace = only(list(convert(documents, source="atif"))).trace
    expected = only(convert_file(TOUCAN)).trace
    assert [(step.type, step.tool.name if step.tool else None) for step in trace.steps] == [
        (step.type, step.tool.name if step.tool else None) for step in expected.steps
    ]
    assert trace.outcome.result_summary == expected.outcome.result_summary


CODEACT = CORPUS / "atif" / "adp_codeactinstruct_sample_atif.json"
"""ADP's ATIF of a CodeActInstruct run: a wrong answer, calls, the answer; the same run as its
standardized form is ``adp/codeactinstruct_sample_std.json``'s second trajectory."""


def test_a_messages_description_is_its_thought_as_in_adps_standardized_form() -> None:
    """ADP writes a ``message_action``'s description (the model's reasoning before its answer)
    into the step's ``extra``: the thought before the message, as the same run read in ADP's
    own form gives it. Before, it was lost."""
    steps = json.loads(CODEACT.read_text())[0]["steps"]
    described = steps[1]["extra"]["description"]
    assert described.startswith("To solve this problem")
    atif = only(convert_file(CODEACT)).trace
    (native, *_) = [
        item.trace
        for item in convert_file(CORPUS / "adp" / "codeactinstruct_sample_std.json")
        if isinstance(item, TraceItem) and item.trace.task.objective == atif.task.objective
    ]
    assert atif.steps[0].type == "thought"
    assert atif.steps[0].content == described
    thoughts = [step.content for step in atif.steps if step.type == "thought"]
    assert thoughts == [step.content for step in native.steps if step.type == "thought"]
