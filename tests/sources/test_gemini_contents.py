"""Gemini API contents (``{role, parts}``) as traces: rows (``gemini``) and bare lists.

The files are the conformance corpus's real ones (tests/conformance/files/gemini and gemini-cli,
origins and licences in SOURCES.md there): a Gemini CLI ``/chat share`` list and Pydantic AI's
recorded ``generateContent`` requests as rows. A variant changes a real conversation to reach
a rule it does not show. The facts files cover objectives, tools, recoveries and answers; these
tests the steps, the rules and detection.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import convert
from knowledgepulse.trace import ReasoningTrace, TraceItem
from tests.sources.helpers import convert_file, recognise

FILES = Path(__file__).parents[1] / "conformance" / "files"
SHARED = FILES / "gemini-cli" / "gemini_cli_chat_trajectory.json"
"""Gemini CLI's API history: its context, a compression summary, thoughts, calls, an error."""
RETRY = FILES / "gemini" / "test_google_model_retry.jsonl"
"""One row: ``get_capital`` fails (``response.error``), the call again, the answer."""
OUTPUT = FILES / "gemini" / "test_google_tool_output.jsonl"
"""One row: a call, then Pydantic AI's ``final_result`` output call (the answer)."""


def one_trace(items: list[TraceItem | Problem]) -> ReasoningTrace:
    assert [item for item in items if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in items if isinstance(item, TraceItem)]
    return item.trace


def row(path: Path) -> dict[str, Any]:
    found = json.loads(path.read_text().splitlines()[0])
    assert isinstance(found, dict)
    return found


def kinds(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_chat_share_list_is_one_run_of_the_users_words_not_the_clis() -> None:
    trace = one_trace(convert_file(SHARED))
    assert trace.metadata.framework == "gemini-cli"
    assert trace.id == "kp:trace:gemini_cli_chat_trajectory"
    # <session_context> and <state_snapshot> are the CLI's: the first words typed are the task
    assert trace.task.objective == "agent teams shouldn't persist, I want it to ask me every boot"
    # the "Got it. Thanks for the additional context!" after the summary is the CLI's, not the
    # model's reply to the task: no step, where it was the first thought (the first assistant
    # turn of a training row)
    history = json.loads(SHARED.read_text())
    assert history[2]["parts"] == [{"text": "Got it. Thanks for the additional context!"}]
    assert all("Got it." not in (step.content or "") for step in trace.steps)
    assert (trace.steps[0].content or "").startswith(
        "**Eliminating Team Persistence**"
    )  # thought: true
    assert kinds(trace)[2] == ("tool_call", "read_file")
    assert trace.metadata.success is True
    assert trace.outcome.result_summary is not None
    assert trace.outcome.result_summary.startswith("I've updated the `TeamCreatorWizard`")


def test_a_response_error_is_an_error_and_the_next_call_recovers() -> None:
    trace = one_trace(list(convert([row(RETRY)], source="gemini")))
    assert kinds(trace) == [
        ("tool_call", "get_capital"),
        ("observation", "get_capital"),
        ("error_recovery", "get_capital"),
        ("observation", "get_capital"),
        ("thought", None),
    ]
    assert (trace.steps[1].content or "").startswith("The country is not supported.")
    assert trace.outcome.result_summary == "Paris"


def test_a_shell_result_whose_exit_code_is_not_0_is_an_error_the_next_call_recovers() -> None:
    """Gemini CLI hands back a failed command's output (``Exit Code: 1``) as no ``error``: the
    output says it failed, and the model's next call (reading the config) recovers."""
    trace = one_trace(convert_file(SHARED))
    failed = next(
        n
        for n, step in enumerate(trace.steps)
        if "npm error command failed" in (step.content or "")
    )
    assert kinds(trace)[failed] == ("observation", "run_shell_command")
    after = next(step for step in trace.steps[failed + 1 :] if step.type != "thought")
    assert (after.type, after.tool and after.tool.name) == ("error_recovery", "read_file")


def test_the_output_call_is_the_answer_and_the_system_instruction_is_read() -> None:
    trace = one_trace(list(convert([row(OUTPUT)], source="gemini")))
    assert trace.outcome.result_summary == '{"city": "Mexico City", "country": "Mexico"}'
    document = row(RETRY)
    system = document["systemInstruction"]["parts"][0]["text"]
    document["contents"][0]["parts"] = [{"text": ""}]  # no user's words: the instruction stands
    assert one_trace(list(convert([document], source="gemini"))).task.objective == system


def test_calls_without_ids_meet_their_results_by_name_and_a_top_level_error_fails() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "time", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "time", "response": {"output": "noon"}}},
                {"functionResponse": {"name": "weather", "error": {"message": "rate limited"}}},
            ],
        },
        {"role": "user", "parts": [{"text": "System: Please continue."}]},
        {"role": "model", "parts": [{"text": "It is noon; the weather failed."}]},
    ]
    trace = one_trace(list(convert([{"contents": contents}], source="gemini")))
    observed = {
        s.tool.name: s.content or "" for s in trace.steps if s.type == "observation" and s.tool
    }
    assert observed["time"] == "noon"
    assert "rate limited" in observed["weather"]
    assert trace.outcome.result_summary == "It is noon; the weather failed."  # the nudge: no reply


def test_detection_rows_are_gemini_a_bare_list_gemini_cli_sharegpt_gives_way() -> None:
    document = row(RETRY)
    assert recognise(document) == "gemini"
    assert recognise(document["contents"][0]) == "gemini-cli"
    openai_row = {"messages": [{"role": "user", "content": "hi"}]}
    assert recognise(openai_row) == "openai-chat"


def test_a_content_that_is_no_content_is_a_located_problem_and_the_batch_goes_on() -> None:
    broken = copy.deepcopy(row(RETRY))
    del broken["contents"][1]["parts"][0]["functionCall"]["name"]
    items = list(convert([broken, row(OUTPUT)], source="gemini"))
    problem, item = items
    assert isinstance(problem, Problem)
    assert "contents[1].parts[0].functionCall.name" in str(problem)
    assert isinstance(item, TraceItem)


def test_a_bare_list_read_as_gemini_rows_is_a_problem_naming_its_reader() -> None:
    items = convert_file(SHARED, source="gemini")
    assert items
    assert all(isinstance(item, Problem) for item in items)
    assert "--from gemini-cli" in str(items[0])


def test_a_checkpoint_of_history_and_auth_type_is_a_row_of_its_history() -> None:
    """``/chat save`` now writes ``{history, authType}`` (the bare list is its legacy form): one
    row, its ``history`` the contents, read by the same rules."""
    contents = json.loads(SHARED.read_text())
    checkpoint = {"history": contents, "authType": "oauth-personal"}
    assert recognise(checkpoint) == "gemini"
    trace = one_trace(list(convert([checkpoint], source="gemini")))
    shared = one_trace(convert_file(SHARED))
    assert trace.task.objective == shared.task.objective
    assert [step.type for step in trace.steps] == [step.type for step in shared.steps]


def test_the_id_pairing_code_with_its_result_is_no_argument_of_the_call() -> None:
    """Pydantic AI's recording: each ``executableCode`` part has an ``id``, as its
    ``codeExecutionResult`` has, which the model did not write as part of the code it ran."""
    path = FILES / "gemini" / "test_code_execution.jsonl"
    written = [
        part["executableCode"]
        for content in row(path)["contents"]
        for part in content["parts"]
        if "executableCode" in part
    ]
    assert all("id" in code for code in written)
    trace = one_trace(convert_file(path))
    inputs = [step.input for step in trace.steps if step.type == "tool_call" and step.input]
    # before: the id too (`"id": "7lr99y60"`), an argument a trainer would teach the model
    assert inputs == [{"language": code["language"], "code": code["code"]} for code in written]


def test_code_execution_is_a_call_and_its_result_a_failed_outcome_an_error() -> None:
    """``executableCode`` (run on Google's side, in the model's turn) is a ``code_execution``
    call, the ``codeExecutionResult`` after it its observation; an outcome other than
    ``OUTCOME_OK`` is an evident error, and the next run of code recovers from it."""
    code = "print(sum(primes(50)))"
    contents = [
        {"role": "user", "parts": [{"text": "What is the sum of the first 50 primes?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me compute it."},
                {"executableCode": {"language": "PYTHON", "code": code[:-1]}},
                {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "SyntaxError"}},
                {"executableCode": {"language": "PYTHON", "code": code}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5117\n"}},
                {"text": "The sum is 5117."},
            ],
        },
    ]
    trace = one_trace(list(convert([{"contents": contents}], source="gemini")))
    assert kinds(trace) == [
        ("thought", None),
        ("tool_call", "code_execution"),
        ("observation", "code_execution"),
        ("error_recovery", "code_execution"),
        ("observation", "code_execution"),
        ("thought", None),
    ]
    assert trace.steps[3].input == {"language": "PYTHON", "code": code}
    assert trace.steps[2].content == "OUTCOME_FAILED: SyntaxError"
    assert trace.steps[4].content == "5117\n"
    assert trace.outcome.result_summary == "The sum is 5117."  # not "Let me compute it." too


def test_the_models_inline_data_is_said_and_the_users_dropped() -> None:
    """An image the model made is no text: said as Gemini CLI shows it (``<image/png>``), so an
    answer that is an image is not lost; the user's image is a binary part of the request."""
    contents = [
        {
            "role": "user",
            "parts": [
                {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
                {"text": "Draw this cat as a cartoon."},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo"}},
                {"fileData": {"mimeType": "image/png", "fileUri": "gs://bucket/cat.png"}},
            ],
        },
    ]
    trace = one_trace(list(convert([{"contents": contents}], source="gemini")))
    assert trace.task.objective == "Draw this cat as a cartoon."
    assert trace.outcome.result_summary == "<image/png>[File Data: gs://bucket/cat.png]"
    assert "iVBOR" not in trace.model_dump_json()


PROTO_NAMES = FILES / "gemini" / "llm_gemini_tools.jsonl"
"""simonw/llm-gemini's request: ``function_call`` / ``function_response`` parts (proto names)."""


def test_parts_by_their_proto_names_are_calls_and_results_as_by_their_json_names() -> None:
    # llm-gemini sends `function_call` and `function_response` (with ids): read by the JSON
    # names alone, both calls were lost and the run was its answer alone
    trace = one_trace(list(convert([row(PROTO_NAMES)], source="gemini")))
    assert kinds(trace) == [
        ("tool_call", "pelican_name_generator"),
        ("observation", "pelican_name_generator"),
        ("tool_call", "pelican_name_generator"),
        ("observation", "pelican_name_generator"),
        ("thought", None),
    ]
    assert [s.content for s in trace.steps if s.type == "observation"] == ["Charles", "Sammy"]
    assert trace.outcome.result_summary == "How about Charles and Sammy?"
    # an SDK's dump of every field: a null under the JSON name leaves the proto name read
    contents = [
        {"role": "user", "parts": [{"text": "Run it", "function_call": None}]},
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": None,
                    "executable_code": {"language": "PYTHON", "code": "print(1)"},
                },
                {"code_execution_result": {"outcome": "OUTCOME_FAILED", "output": "boom"}},
                {"inline_data": {"mime_type": "image/png", "data": "AAAA"}},
            ],
        },
    ]
    trace = one_trace(list(convert([{"contents": contents}], source="gemini")))
    assert kinds(trace)[:2] == [("tool_call", "code_execution"), ("observation", "code_execution")]
    assert "OUTCOME_FAILED" in (trace.steps[1].content or "")
    assert trace.outcome.result_summary == "<image/png>"


def test_a_bare_content_given_as_a_row_says_the_source_to_name_in_python_terms() -> None:
    """Rows given as contents to source="gemini" name source='gemini-cli', not only kp's flag."""
    contents = json.loads(SHARED.read_text("utf-8"))[:2]
    found = list(convert(contents, source="gemini"))
    assert len(found) == 2
    for problem in found:
        assert isinstance(problem, Problem)
        assert "a Gemini content, not a row of contents" in problem.message
        assert "source='gemini-cli' (kp: --from gemini-cli;" in problem.message


def test_the_clis_reply_to_its_own_summary_is_no_step_but_the_same_words_to_the_user_are() -> None:
    """Gemini CLI's compression leaves its ``<state_snapshot>`` and a scripted "Got it." in the
    model's name: not the model's words. The same words said to the user are the model's."""
    ack = "Got it. Thanks for the additional context!"
    contents = [
        {"role": "user", "parts": [{"text": "<state_snapshot>the task so far</state_snapshot>"}]},
        {"role": "model", "parts": [{"text": ack}]},
        {"role": "user", "parts": [{"text": "Go on."}]},
        {"role": "model", "parts": [{"text": "Reading it."}]},
        {"role": "user", "parts": [{"text": "Here is some context."}]},
        {"role": "model", "parts": [{"text": ack}]},
    ]
    trace = one_trace(list(convert([{"contents": contents}], source="gemini")))
    assert trace.task.objective == "Go on."
    assert trace.steps[0].content == "Reading it."
    assert [step.content for step in trace.steps].count(ack) == 1  # the last, said to the user
    assert trace.outcome.result_summary == ack


def test_pydantic_ais_return_value_wrapper_is_not_the_tools_result() -> None:
    """A tool's result is what it returned (Mexico), not Pydantic AI's {"return_value": ...}."""
    sent = row(OUTPUT)["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert sent == {"return_value": "Mexico"}
    trace = one_trace(list(convert([row(OUTPUT)], source="gemini")))
    assert kinds(trace)[:2] == [
        ("tool_call", "get_user_country"),
        ("observation", "get_user_country"),
    ]
    assert trace.steps[1].content == "Mexico"
    assert trace.steps[0].output_summary == "Mexico"
