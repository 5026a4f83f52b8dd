"""Cline's and Roo Code's task histories: what the real files of the corpus do not show.

The corpus (tests/conformance/files/cline) holds Roo Code tasks of the XML-tag era; the shapes
here are those the extensions' own code writes (Cline's ``formatResponse``, Roo Code's
``ApiMessage``): native tool calls, the error of a message that called no tool, a condensed
context's summary, a task in its own folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knowledgepulse.sources._steps import RESPOND
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from tests.sources.helpers import convert_file, recognise

ENVIRONMENT = (
    "<environment_details>\n# VSCode Visible Files\na.py\n\n# Current Mode\nACT MODE\n"
    "</environment_details>"
)


def task(text: str = "fix the retry loop") -> dict[str, Any]:
    """The first message of a task, as Cline writes it: the task, then the environment."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": f"<task>\n{text}\n</task>"},
            {"type": "text", "text": ENVIRONMENT},
        ],
        "ts": 1_760_000_000_000,
    }


def said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def results(*texts: str) -> dict[str, Any]:
    blocks = [{"type": "text", "text": text} for text in (*texts, ENVIRONMENT)]
    return {"role": "user", "content": blocks}


def read_history(
    tmp_path: Path, messages: list[dict[str, Any]], name: str = "h.json"
) -> ReasoningTrace:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(messages))
    (item,) = convert_file(path)
    assert isinstance(item, TraceItem), item
    return item.trace


def shape(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_task_history_is_recognised_by_its_first_message_and_no_other_message_is() -> None:
    """The task in ``<task>`` (or Roo Code's ``<user_message>``) tags; a bare message is no task.

    Any other chat message opens a saved conversation (the ``conversation`` source), not a task.
    """
    assert recognise(task()) == "cline"
    roo = {"role": "user", "content": "<user_message>\nadd a test\n</user_message>"}
    assert recognise(roo) == "cline"
    hello = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    assert recognise(hello) == "conversation"
    assert recognise({"role": "assistant", "content": "<task>\nx\n</task>"}) == "conversation"


def test_the_objective_is_the_task_without_the_environment_and_the_id_its_folder(
    tmp_path: Path,
) -> None:
    """``tasks/<taskId>/api_conversation_history.json``: the trace is the task's, by its id."""
    done = (
        "<attempt_completion>\n<result>\nThe loop backs off now.\n</result>\n</attempt_completion>"
    )
    trace = read_history(
        tmp_path, [task(), said(done)], name="tasks/1760000000000/api_conversation_history.json"
    )
    assert trace.id == "kp:trace:1760000000000"
    assert trace.task.objective == "fix the retry loop"
    assert trace.outcome.result_summary == "The loop backs off now."
    assert trace.metadata.success is True


def test_native_calls_are_calls_and_attempt_completion_is_the_answer_its_result_the_feedback(
    tmp_path: Path,
) -> None:
    """Native calls: ``tool_use`` / ``tool_result``; the completion's result is the user's."""
    call = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}
    done: dict[str, Any] = {"type": "tool_use", "id": "t2", "name": "attempt_completion"}
    done["input"] = {"result": "ok"}
    feedback = (
        "The user has provided feedback on the results. Consider their input to continue the "
        "task, and then attempt completion again.\n<feedback>\nadd a test too\n</feedback>"
    )
    trace = read_history(
        tmp_path,
        [
            task(),
            {"role": "assistant", "content": [{"type": "text", "text": "Reading it."}, call]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"}],
            },
            {"role": "assistant", "content": [done]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t2", "content": feedback}],
            },
            {"role": "assistant", "content": [{**done, "id": "t3", "input": {"result": "tested"}}]},
        ],
    )
    assert shape(trace) == [
        ("thought", None),
        ("tool_call", "read_file"),
        ("observation", "read_file"),
        ("tool_call", RESPOND),  # the first completion, which the user answered
        ("observation", RESPOND),
        ("thought", None),
    ]
    assert trace.steps[4].content == "add a test too"
    assert trace.outcome.result_summary == "tested"


def test_a_message_that_called_no_tool_is_an_error_its_next_action_the_recovery(
    tmp_path: Path,
) -> None:
    """``[ERROR] You did not use a tool``: an evident error outside a tool, then recovered."""
    trace = read_history(
        tmp_path,
        [
            task(),
            said("I think the loop is fine."),
            results("[ERROR] You did not use a tool in your previous response! Please retry."),
            said("<list_files>\n<path>.</path>\n</list_files>"),
            results("[list_files for '.'] Result:", "a.py"),
        ],
    )
    assert shape(trace) == [
        ("thought", None),
        ("observation", None),
        ("error_recovery", "list_files"),
        ("observation", "list_files"),
    ]
    assert trace.metadata.success is False  # it never completed


def test_a_failed_xml_call_is_an_error_and_its_input_the_tags_parameters(tmp_path: Path) -> None:
    """``The tool execution failed...``: the call failed; its parameters are its child tags."""
    command = (
        "<execute_command>\n<command>pytest</command>\n"
        "<requires_approval>false</requires_approval>\n</execute_command>"
    )
    failed = "The tool execution failed with the following error:\n<error>\nno pytest\n</error>"
    trace = read_history(
        tmp_path,
        [
            task(),
            said(command),
            results("[execute_command for 'pytest'] Result:", failed),
            said("<execute_command>\n<command>pip install pytest</command>\n</execute_command>"),
        ],
    )
    call = trace.steps[0]
    assert call.tool is not None
    assert call.tool.name == "execute_command"
    assert call.input == {"command": "pytest", "requires_approval": "false"}
    assert trace.steps[1].type == "observation"
    assert "no pytest" in (trace.steps[1].content or "")
    assert trace.steps[2].type == "error_recovery"  # the next call answers the failure
    assert trace.metadata.success is False


def test_roo_codes_condensed_summary_is_left_out_and_its_reasoning_is_a_thought(
    tmp_path: Path,
) -> None:
    """``isSummary``: the extension's summary of the turns before; ``reasoning``: the model's."""
    summary = {"role": "assistant", "content": "## Summary of the task so far", "isSummary": True}
    reasoning = {"type": "reasoning", "text": "the loop never sleeps", "summary": []}
    done = "<attempt_completion>\n<result>fixed</result>\n</attempt_completion>"
    trace = read_history(
        tmp_path,
        [
            task(),
            summary,
            {"role": "assistant", "content": [reasoning, {"type": "text", "text": done}]},
        ],
    )
    assert [step.content for step in trace.steps] == ["the loop never sleeps", "fixed"]


def test_the_users_feedback_after_a_condensed_summary_is_a_reply_not_lost(
    tmp_path: Path,
) -> None:
    """Roo Code's condensation replaces the turns after the task by their summary: the user's
    ``<feedback>`` on the completion the summary stands for answers the agent. Merged into the
    task's first message (the summary left out between them) it was lost, neither the
    objective nor a step."""
    summary = {
        "role": "assistant",
        "content": "### 1. Previous Conversation: ...",
        "isSummary": True,
    }
    feedback = (
        "The user has provided feedback on the results. Consider their input to continue the "
        "task, and then attempt completion again.\n<feedback>\nnow check the tests too\n</feedback>"
    )
    trace = read_history(
        tmp_path,
        [
            task(),
            summary,
            results("[attempt_completion] Result:", feedback),
            said("<execute_command>\n<command>pytest</command>\n</execute_command>"),
        ],
    )
    assert trace.task.objective == "fix the retry loop"
    assert shape(trace) == [("observation", RESPOND), ("tool_call", "execute_command")]
    assert trace.steps[0].content == "now check the tests too"
    # The real task (jsboige/jsboige-mcp-servers): the feedback after its summary, then a call.
    corpus = Path(__file__).parents[1] / "conformance" / "files" / "cline"
    (item,) = convert_file(corpus / "roo_code_condensed_feedback_after_summary.json")
    assert isinstance(item, TraceItem)
    first = item.trace.steps[0]
    assert (first.type, first.tool.name if first.tool else None) == ("observation", RESPOND)
    assert (first.content or "").startswith("Je te passe en mode Code")
    assert "Je te passe" not in item.trace.task.objective


def test_text_cut_by_response_interrupted_comes_before_the_result_it_preceded() -> None:
    """The real task (jsboige/jsboige-mcp-servers): the model's text after its list_files call,
    cut by ``[Response interrupted by a tool use result...]``, came before the call's result;
    it was put after it."""
    corpus = Path(__file__).parents[1] / "conformance" / "files" / "cline"
    (item,) = convert_file(corpus / "roo_code_leaf_write_and_run.json")
    assert isinstance(item, TraceItem)
    first = [(step.type, step.tool.name if step.tool else None) for step in item.trace.steps[:4]]
    assert first == [
        ("thought", None),
        ("tool_call", "list_files"),
        ("thought", None),
        ("observation", "list_files"),
    ]
    assert (item.trace.steps[2].content or "").startswith("Maintenant, je vais créer le fichier")


def test_environment_tags_a_command_printed_stay_its_output(tmp_path: Path) -> None:
    """A command that prints a task's history prints the ``<environment_details>`` tags it holds.
    Before, they were read as the extension's environment: the output after them became the
    user's words (a reply); the environment is a block that opens with the tags, or a text's
    closing part."""
    printed = 'Exit code: 0\nOutput:\n{"text":"<environment_details>\\n# VSCode"}\ndone'
    trace = read_history(
        tmp_path,
        [
            task(),
            said("<execute_command>\n<command>cat history.json</command>\n</execute_command>"),
            results("[execute_command for 'cat history.json'] Result:", printed),
        ],
    )
    assert shape(trace) == [("tool_call", "execute_command"), ("observation", "execute_command")]
    assert trace.steps[1].content == printed
    trailing = f"[execute_command for 'ls'] Result:\n\nok\n{ENVIRONMENT}"  # one text, as 1.x
    ended = read_history(
        tmp_path,
        [
            task(),
            said("<execute_command>\n<command>ls</command>\n</execute_command>"),
            said_by(trailing),
        ],
        name="t.json",
    )
    assert [step.content for step in ended.steps if step.type == "observation"] == ["ok"]


def said_by(text: str) -> dict[str, Any]:
    """A user message of one text, the environment inside it."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def test_a_real_tasks_printed_environment_tags_are_no_reply() -> None:
    """jsboige's Roo Code task: the output of its command that printed task histories holds
    ``<environment_details>``; the task's replies are the user's two resumptions only."""
    corpus = Path(__file__).parents[1] / "conformance/files/cline"
    (item,) = convert_file(corpus / "roo_code_condensed_output_with_environment_tags.json")
    assert isinstance(item, TraceItem)
    replies = [
        step.content
        for step in item.trace.steps
        if step.type == "observation" and step.tool is not None and step.tool.name == RESPOND
    ]
    assert [(text or "")[:21] for text in replies] == [
        "Ah non tu te moques d",
        "Non tu veux juste les",
    ]


def native(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def test_cline_3s_native_calls_answered_by_text_sections_get_their_results(
    tmp_path: Path,
) -> None:
    """Cline 3.x calls tools natively (``tool_use``) but answers them as before, with text
    sections (``[read_file for 'a.py'] Result:``), no ``tool_result``. Before, a section answered
    only an XML call: every native call lost its result, silently. ``use_subagents``' section is
    ``[subagents] Result:``, a word no call has: it answers the waiting call whose name holds it."""
    trace = read_history(
        tmp_path,
        [
            task(),
            {
                "role": "assistant",
                "content": [
                    native("l1", "list_files", path="."),
                    native("s1", "use_subagents", prompt_1="look"),
                ],
            },
            results(
                "[subagents] Result:\nSubagent results:\nTotal: 1",
                "[list_files for '.'] Result:",
                "a.py",
            ),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading both."},
                    native("r1", "read_file", path="a.py"),
                    native("r2", "read_file", path="b.py"),
                ],
            },
            results(
                "[read_file for 'a.py'] Result:", "x = 1", "[read_file for 'b.py'] Result:", "y"
            ),
        ],
    )
    assert shape(trace) == [
        ("tool_call", "list_files"),
        ("observation", "list_files"),
        ("tool_call", "use_subagents"),
        ("observation", "use_subagents"),
        ("thought", None),
        ("tool_call", "read_file"),
        ("observation", "read_file"),
        ("tool_call", "read_file"),
        ("observation", "read_file"),
    ]
    assert [step.content for step in trace.steps if step.type == "observation"] == [
        "a.py",
        "Subagent results:\nTotal: 1",
        "x = 1",
        "y",
    ]


def test_cline_focus_chain_reminders_and_completion_notes_are_no_words_of_anyones(
    tmp_path: Path,
) -> None:
    """Cline's focus chain adds reminders for the model (``# task_progress RECOMMENDED``,
    ``# TODO LIST UPDATE REQUIRED``...) as text blocks of their own, and a resumed task says
    ``(The user did not provide a new message...)``: before, outside a result they were the
    user's replies. A completion's section holds Cline's ``Done`` and the output of the command
    it offered to run, then the user's ``<feedback>``: the feedback alone is the reply."""
    reminder = "\n# task_progress RECOMMENDED\n\nWhen starting a new task, include a todo list."
    todo = "\n\n\t\t\t\t# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter"
    resumed = "[TASK RESUMPTION] This task was interrupted 3 days ago."
    silent = "(The user did not provide a new message. Consider asking them how to proceed.)"
    done = native("c1", "attempt_completion", result="Fixed.")
    feedback = (
        "The user has provided feedback on the results. Consider their input to continue the "
        "task, and then attempt completion again."
    )
    trace = read_history(
        tmp_path,
        [
            task(),
            {"role": "assistant", "content": [native("r1", "read_file", path="a.py")]},
            results("[read_file for 'a.py'] Result:", "x = 1", todo),
            {"role": "assistant", "content": [native("q1", "ask_followup_question", question="?")]},
            results(resumed, silent, reminder),
            {"role": "assistant", "content": [done]},
            results(
                "[attempt_completion] Result: Done",
                "Command failed with exit code 1.\nOutput:\nEADDRINUSE",
                feedback,
                "<feedback>\nport 9002 is taken\n</feedback>",
            ),
        ],
    )
    assert shape(trace) == [
        ("tool_call", "read_file"),
        ("observation", "read_file"),
        ("tool_call", "ask_followup_question"),
        ("tool_call", RESPOND),
        ("observation", RESPOND),
    ]
    assert trace.steps[1].content == "x = 1"
    assert trace.steps[4].content == "port 9002 is taken"


def test_a_history_without_ts_starts_when_its_cline_task_id_says(tmp_path: Path) -> None:
    """Cline names a task by its start, ``Date.now()`` in milliseconds; a history without ``ts``
    (Cline before 3.x, or its messages' ``ts`` left out) started then, not at the epoch. A Roo
    Code task's id is a UUID: no time."""
    first = {key: value for key, value in task().items() if key != "ts"}
    done = said("<attempt_completion>\n<result>done</result>\n</attempt_completion>")
    cline = read_history(
        tmp_path, [first, done], name="tasks/1769053680585/api_conversation_history.json"
    )
    assert cline.metadata.created_at.isoformat() == "2026-01-22T03:48:00.585000+00:00"
    uuid = "tasks/ac8aa7b4-319c-4925-a139-4f4adca81921/api_conversation_history.json"
    roo = read_history(tmp_path, [first, done], name=uuid)
    assert roo.metadata.created_at.year == 1970


def test_cline_3s_newer_tools_written_as_xml_are_calls(tmp_path: Path) -> None:
    """Cline 3.x added ``web_search``, ``use_subagents``, ``use_skill``, ``act_mode_respond``
    and ``generate_explanation`` (src/shared/tools.ts); a model without native tool calling
    writes them as XML tags like the others. Before, their tags were text: no call."""
    trace = read_history(
        tmp_path,
        [
            task(),
            said("Searching.\n<web_search>\n<query>otel genai</query>\n</web_search>"),
            results("[web_search for 'otel genai'] Result:", "3 results"),
        ],
    )
    assert shape(trace) == [
        ("thought", None),
        ("tool_call", "web_search"),
        ("observation", "web_search"),
    ]
    assert trace.steps[1].input == {"query": "otel genai"}


def test_an_assistant_block_of_no_type_or_no_object_is_passed_over_as_the_anthropic_reader_does(
    tmp_path: Path,
) -> None:
    # Found by bench/fuzz_pipelines.py: a block without "type" beside Cline's own crashed the
    # reader with a KeyError. Blocks of no known kind are left to the Anthropic rows' reader,
    # which passes over what is not a block (a later Anthropic block kind, say).
    answer = "<attempt_completion>\n<result>done</result>\n</attempt_completion>"
    odd = {
        "role": "assistant",
        "content": [{"text": "no type"}, 5, {"type": "text", "text": answer}],
    }
    trace = read_history(tmp_path, [task(), odd])
    assert trace.outcome.result_summary == "done"
    assert shape(trace) == shape(read_history(tmp_path, [task(), said(answer)], name="plain.json"))


def test_a_call_the_extension_refused_to_run_is_a_failed_call_not_text_after_the_result() -> None:
    """Roo Code stopped the model inside an ``<attempt_completion>`` written after its
    ``<write_to_file>``, ran the write alone and said ``Tool [attempt_completion] was not
    executed because a tool has already been used in this message``. Before: the open tags were
    a thought after the write's result and the refusal was lost; now the call is the model's,
    its result the refusal, a failure, and the completion the model wrote next the answer."""
    corpus = Path(__file__).parents[1] / "conformance" / "files" / "cline"
    (item,) = convert_file(corpus / "roo_code_leaf_second_tool_not_run.json")
    assert isinstance(item, TraceItem)
    trace = item.trace
    assert shape(trace)[1:5] == [
        ("tool_call", "write_to_file"),
        ("observation", "write_to_file"),
        ("tool_call", "attempt_completion"),
        ("observation", "attempt_completion"),
    ]
    assert (trace.steps[4].content or "").startswith("Tool [attempt_completion] was not executed")
    assert not any("<attempt_completion>" in (step.content or "") for step in trace.steps)
    assert trace.steps[5].type == "error_recovery"
    assert (trace.outcome.result_summary or "").startswith("J'ai créé le fichier")
    assert trace.metadata.success is True
