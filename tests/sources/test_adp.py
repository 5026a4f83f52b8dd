"""Agent Data Protocol trajectories: what the real files of the corpus do not pin.

The corpus (tests/conformance/files/adp) holds the standardized samples of eight datasets; the
shapes here are those ADP's schema allows that the samples chosen do not show together: a
failure the agent recovers from, the environment's error outside an action, a dataset's own
success label, a broken item, and the other languages' code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.records import Problem, Record
from knowledgepulse.records.readers import read_records
from knowledgepulse.sources import convert
from knowledgepulse.sources._inspect import inspect_file
from knowledgepulse.sources._sessions.adp import recognises
from knowledgepulse.trace import TraceItem
from knowledgepulse.trace.models import ReasoningTrace
from tests.sources.helpers import convert_file, recognise

CORPUS = Path(__file__).parents[1] / "conformance" / "files" / "adp"


def user(text: str) -> dict[str, Any]:
    return {"class_": "text_observation", "content": text, "name": None, "source": "user"}


def environment(text: str, name: str | None = None) -> dict[str, Any]:
    return {"class_": "text_observation", "content": text, "name": name, "source": "environment"}


def bash(command: str, description: str | None = None) -> dict[str, Any]:
    return {
        "class_": "code_action",
        "language": "bash",
        "content": command,
        "description": description,
    }


def api(function: str, **kwargs: Any) -> dict[str, Any]:
    return {"class_": "api_action", "function": function, "kwargs": kwargs, "description": None}


def message(content: str, description: str | None = None) -> dict[str, Any]:
    return {"class_": "message_action", "content": content, "description": description}


def trajectory(*content: dict[str, Any], **details: str) -> dict[str, Any]:
    return {"id": "run-1", "content": list(content), "details": details}


def one(document: dict[str, Any]) -> TraceItem:
    (item,) = list(convert([document], source="adp"))
    assert isinstance(item, TraceItem), item
    return item


def shape(trace: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in trace.steps]


def test_a_failed_result_makes_the_next_action_its_error_recovery() -> None:
    """An observation that says it failed is the call's error; the next call recovers from it."""
    item = one(
        trajectory(
            user("Fix the failing import."),
            bash("python -c 'import app'"),
            environment("Traceback (most recent call last):\n  ModuleNotFoundError: app"),
            api("open", path='"src/app.py"'),
            environment("[File: src/app.py (3 lines total)]"),
            message("<finish> Fixed. </finish>"),
        )
    )
    assert shape(item.trace) == [
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
        ("error_recovery", "open"),
        ("observation", "open"),
        ("thought", None),
    ]
    assert "Traceback" in (item.trace.steps[1].content or "")
    assert item.trace.outcome.result_summary == "Fixed."


def test_an_environment_error_that_answers_no_action_is_one_the_next_action_recovers() -> None:
    """The environment's error outside an action is an error step; other such text is context."""
    item = one(
        trajectory(
            environment("[tool declarations]", name="system"),
            user("List the files."),
            message("I will look."),
            environment("ERROR: the sandbox restarted"),
            bash("ls"),
            environment("a.py"),
            message("a.py"),
        )
    )
    assert shape(item.trace) == [
        ("thought", None),
        ("observation", None),
        ("error_recovery", "execute_bash"),
        ("observation", "execute_bash"),
        ("thought", None),
    ]
    assert item.trace.task.objective == "List the files."


def test_agentinstructs_priming_is_the_system_prompt_and_the_task_the_objective() -> None:
    """Instructions, the agent's scripted OK, then the task: the task is what was asked."""
    instructions = "You are web shopping. " * 30
    item = one(
        trajectory(
            user(instructions),
            message("Ok."),
            user("i want a noise cancelling headphone under 180 dollars"),
            api("search", keywords='"noise cancelling headphone"'),
            user("[SEP] B07T3G7L37 [SEP] $99"),
            message("<finish> </finish>", description="I bought it."),
        )
    )
    assert item.trace.task.objective == "i want a noise cancelling headphone under 180 dollars"
    assert item.system == instructions
    assert item.trace.outcome.result_summary == "I bought it."  # empty inside: its description
    assert item.trace.metadata.success is True


def test_agentinstructs_short_webshop_priming_is_the_system_prompt_too() -> None:
    """AgentInstruct's WebShop rows prime the model in 248 characters, then say "Ok.": the
    instructions are still no request; the task after them is (the objective was the priming)."""
    instructions = (
        "You are web shopping.\nI will give you instructions about what to do.\nYou have to "
        "follow the instructions.\nEvery round I will give you an observation and a list of "
        "available actions, you have to respond an action based on the state and instruction.\n"
    )
    task = "WebShop [SEP] Instruction: [SEP] i want a on-ear headphone with noise cancelling"
    item = one(
        trajectory(
            user(instructions),
            message("Ok."),
            user(task),
            api("search", keywords='"on-ear headphone noise cancelling"'),
            user("[SEP] B07T3G7L37 [SEP] $99"),
            message("<finish> </finish>", description="I bought it."),
        )
    )
    assert item.trace.task.objective == task
    assert item.system == instructions


@pytest.mark.parametrize(
    ("language", "tool", "argument"),
    [
        ("bash", "execute_bash", "command"),
        ("python", "execute_ipython_cell", "code"),
        ("javascript", "execute_javascript", "code"),
    ],
)
def test_code_is_a_call_of_its_languages_executor(language: str, tool: str, argument: str) -> None:
    """A code_action is named as ADP's OpenHands converter names it, the code its argument."""
    code = {"class_": "code_action", "language": language, "content": "x", "description": "Run."}
    item = one(trajectory(user("Run x."), code, environment("ok"), message("done")))
    call = item.trace.steps[1]
    assert (call.type, call.tool.name if call.tool else None) == ("tool_call", tool)
    assert call.input == {argument: "x"}
    assert item.trace.steps[0].content == "Run."  # the description: the call's thought


@pytest.mark.parametrize(
    ("details", "ending", "success"),
    [
        ({"resolved": "False"}, message("<finish> Done. </finish>"), False),
        ({"resolved": "True"}, api("submit"), True),
        ({}, message("<finish> Done. </finish>"), True),
        ({}, api("submit"), False),
    ],
)
def test_success_is_details_resolved_else_whether_the_run_ends_in_its_answer(
    details: dict[str, str], ending: dict[str, Any], success: bool
) -> None:
    """SWE-Gym's ``resolved`` (text) is the outcome; without it, an answer at the end is."""
    item = one(trajectory(user("Fix it."), bash("make"), environment("built"), ending, **details))
    assert item.trace.metadata.success is success


def test_a_broken_item_is_a_problem_at_its_json_path_and_the_rest_are_read(
    tmp_path: Path,
) -> None:
    """A bad item names its trajectory's index and JSON path; the other trajectories convert."""
    good = trajectory(user("Say hi."), message("hi"))
    broken = trajectory(user("Say hi."), {"class_": "api_action", "kwargs": {}})
    odd = {"id": "run-3", "content": [user("Say hi."), "hi"]}
    path = tmp_path / "sample_std.json"
    path.write_text(json.dumps([good, broken, odd]))
    items = convert_file(path)
    assert isinstance(items[0], TraceItem)
    problems = [item for item in items if isinstance(item, Problem)]
    assert [(p.location.index, p.path) for p in problems] == [
        (1, "content[1].function"),
        (2, "content[1]"),
    ]
    assert "expected a function name" in problems[0].message
    assert "not an ADP action or observation" in problems[1].message


def test_a_record_of_another_shape_read_as_adp_says_what_a_trajectory_holds() -> None:
    """``--from adp`` on something else: the problem names the expected shape."""
    (problem,) = list(convert([{"messages": []}], source="adp"))
    assert isinstance(problem, Problem)
    assert "not an ADP trajectory" in problem.message
    assert '"class_": "text_observation"' in problem.message


def test_a_trajectory_is_recognised_by_adp_alone_and_others_are_not() -> None:
    """Detection: an id and content of ADP classes; a chat row or an empty content is not one."""
    assert recognise(trajectory(user("Hi."), message("Hello."))) == "adp"
    assert not recognises({"id": "x", "content": []})
    assert not recognises({"id": "x", "content": [{"role": "user", "content": "Hi."}]})
    assert not recognises({"content": [user("Hi.")]})  # ADP's schema requires the id


def test_each_corpus_file_is_recognised_by_adp_alone() -> None:
    """The first record of every real sample_std.json is claimed by one source: adp."""
    files = sorted(set(CORPUS.glob("*.json")) - set(CORPUS.glob("*.facts.json")))
    assert len(files) >= 4
    for path in files:
        first = next(item for item in read_records(path) if isinstance(item, Record))
        assert recognise(first.value) == "adp", path.name


def test_json_lines_of_trajectories_read_as_the_json_list_does(tmp_path: Path) -> None:
    """ADP's full datasets are JSON Lines of the same trajectories: the same traces."""
    path = CORPUS / "agenttuning_os_sample_std.json"
    lines = tmp_path / "full_std.jsonl"
    lines.write_text("".join(json.dumps(t) + "\n" for t in json.loads(path.read_text())))
    listed = [item.trace for item in convert_file(path) if isinstance(item, TraceItem)]
    read = [item.trace for item in convert_file(lines) if isinstance(item, TraceItem)]
    assert read == listed
    assert [trace.id for trace in read] == ["kp:trace:os_42", "kp:trace:os_116"]


def test_a_web_observation_is_its_actions_result_and_the_opening_page_no_step() -> None:
    """A page after an action is its result (URL, then the tree); the first page is context."""
    page = {
        "class_": "web_observation",
        "html": None,
        "axtree": "[1] RootWebArea 'Shop'",
        "url": "http://shop.example/",
        "image_observation": None,
        "viewport_size": None,
    }
    item = one(trajectory(user("Open the shop."), page, api("click", bid='"1"'), page))
    assert shape(item.trace) == [("tool_call", "click"), ("observation", "click")]
    assert item.trace.steps[1].content == "http://shop.example/\n\n[1] RootWebArea 'Shop'"
    assert item.trace.metadata.success is False  # it ends on a click, with no answer


def test_kp_inspect_names_the_class_it_recognised_and_the_fields_read(tmp_path: Path) -> None:
    """``kp inspect``: the evidence is the first item's class; the mapping names the fields."""
    path = tmp_path / "sample_std.json"
    path.write_text(json.dumps([trajectory(user("Fix it."), message("Done."), resolved="True")]))
    inspection = inspect_file(path)
    assert inspection.source == "adp"
    assert "content[0].class_ is 'text_observation'" in (inspection.evidence or "")
    fields = {part.name: part.field for part in inspection.parts}
    assert fields["steps"] == "content"
    assert fields["id"] == "id"
    assert fields["success"] == "details.resolved"
    assert inspection.trace_id == "kp:trace:run-1"
    assert inspection.read_as == (
        "read as adp (1 trace): Agent Data Protocol trajectories, steps from 'content', id from "
        "'id'; success from details.resolved"
    )


def test_adps_openhands_sft_rows_read_each_xml_calls_result_as_its_observation() -> None:
    """ADP's ``sample_sft_openhands.json`` rows (ShareGPT turns, OpenHands' ``<function=...>``
    calls in the ``gpt`` text): the ``human`` turn after a call is its result, no user's reply."""
    row = {
        "id": "os_42",
        "conversations": [
            {"from": "human", "value": "How many files are in /etc?"},
            {
                "from": "gpt",
                "value": "Count them.\n\n<function=execute_bash>\n<parameter=command>\n"
                "ls -1 /etc | wc -l\n</parameter>\n</function>",
            },
            {"from": "human", "value": "EXECUTION RESULT of [execute_bash]:\n220"},
            {
                "from": "gpt",
                "value": "<function=finish>\n<parameter=message>\n220\n</parameter>\n"
                "<parameter=task_completed>\ntrue\n</parameter>\n</function>",
            },
        ],
    }
    (item,) = list(convert([row]))
    assert isinstance(item, TraceItem), item
    assert shape(item.trace) == [
        ("thought", None),
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
        ("thought", None),
    ]
    assert item.trace.outcome.result_summary == "220"
    assert item.trace.metadata.success is True


def test_adps_older_sft_rows_that_label_the_agents_turn_function_call_read_as_that_turn() -> None:
    """ADP's published ``sample_sft.json`` files keep the agent's turn (its thought and an
    OpenHands ``<function=...>`` call) as ``function_call``: the turn it is, not JSON to parse,
    so that the row is read (every row was "expected a function call as JSON"). The page the
    browser call opened comes back as a ``human`` turn: its result, no reply of the user's."""
    row = {
        "id": "nnetnav_7",
        "conversations": [
            {"from": "human", "value": "Find the price of the Quest Lumaflex Band."},
            {
                "from": "function_call",
                "value": "I will open the product.\n\n<function=browser>\n<parameter=code>\n"
                'click(bid="867")\n</parameter>\n</function>',
            },
            {"from": "human", "value": "[Current URL: http://shop/product/20]\nPrice: $19.99"},
            {
                "from": "function_call",
                "value": "<function=finish>\n<parameter=message>\n19.99\n</parameter>\n"
                "<parameter=task_completed>\ntrue\n</parameter>\n</function>",
            },
        ],
    }
    (item,) = list(convert([row]))
    assert isinstance(item, TraceItem), item
    assert shape(item.trace) == [
        ("thought", None),
        ("tool_call", "browser"),
        ("observation", "browser"),
        ("thought", None),
    ]
    assert (item.trace.steps[2].content or "").endswith("Price: $19.99")
    assert item.trace.outcome.result_summary == "19.99"
    assert item.trace.metadata.success is True


def test_a_function_call_turn_of_json_that_mentions_a_function_tag_is_still_a_json_call() -> None:
    """Only text that is no JSON call is read as a written one: a call whose arguments quote
    ``<function=...>`` stays the call it is."""
    call = {"name": "write_doc", "arguments": {"text": "<function=x> is the syntax"}}
    row = {
        "conversations": [
            {"from": "human", "value": "Document the syntax."},
            {"from": "function_call", "value": json.dumps(call)},
            {"from": "observation", "value": "written"},
            {"from": "gpt", "value": "Done."},
        ]
    }
    (item,) = list(convert([row]))
    assert isinstance(item, TraceItem), item
    assert [s.tool.name for s in item.trace.steps if s.tool] == ["write_doc", "write_doc"]


def test_webarenas_closing_stop_is_the_answer_not_a_tool_call() -> None:
    """``stop(answer)`` ends a WebArena run: its answer is the final answer, the run a success
    (it ended in its answer); a ``stop`` that is not the last action stays a call."""
    page = {"class_": "web_observation", "url": "http://shop/admin", "axtree": "[1] link 'Reports'"}
    item = one(
        trajectory(
            user("What is the top-1 best-selling product in 2022?"),
            api("click", element_id="1121"),
            page,
            {**api("stop", answer="Quest Lumaflex Band"), "description": "It is in the table."},
        )
    )
    assert shape(item.trace) == [
        ("tool_call", "click"),
        ("observation", "click"),
        ("thought", None),
        ("thought", None),
    ]
    assert item.trace.outcome.result_summary == "Quest Lumaflex Band"
    assert item.trace.metadata.success is True
    early = one(trajectory(user("Look."), api("stop", answer="x"), page, api("click", bid="2")))
    assert [name for _, name in shape(early.trace) if name] == ["stop", "stop", "click"]


def test_a_stop_without_an_answer_says_its_description() -> None:
    """A task that asks for no answer (navigate somewhere) ends in ``stop("")``: what the agent
    says of it, its description, is the closing message, as an empty ``<finish>`` says it."""
    stop = {**api("stop", answer=""), "description": "The settings page is open."}
    item = one(trajectory(user("Open the settings."), stop))
    assert item.trace.outcome.result_summary == "The settings page is open."


def test_adps_think_is_a_thought_and_generic_tool_a_call_of_the_tool_it_names() -> None:
    """ADP's own functions (SWE-chat's ``api.py``): ``think(thought)`` records "a private
    reasoning step", ``generic_tool(tool_name, tool_input, content)`` wraps a source's tool.

    Before, ``think`` was a tool call (OpenHands' think action, read by kp's OpenHands readers,
    is a thought) and every wrapped tool was called ``generic_tool``, its name repeated as a
    thought.
    """
    search = {**api("generic_tool", tool_name="WebSearch", tool_input={"q": "uuid"})}
    item = one(
        trajectory(
            user("Use a short uuid."),
            {**api("think", thought="Find where the name is made."), "description": "think"},
            {**search, "description": "WebSearch"},
            environment("uuid4().hex[:8]"),
            {**api("generic_tool", tool_name="Task", tool_input={}, content="raw call")},
            message("Done."),
        )
    )
    assert shape(item.trace) == [
        ("thought", None),
        ("tool_call", "WebSearch"),
        ("observation", "WebSearch"),
        ("tool_call", "Task"),
        ("thought", None),
    ]
    steps = item.trace.steps
    assert steps[0].content == "Find where the name is made."
    assert steps[1].input == {"q": "uuid"}
    assert steps[3].input == {"_raw": "raw call"}
    assert item.trace.outcome.result_summary == "Done."


def test_the_swe_chat_sample_reads_its_think_and_wrapped_tools() -> None:
    items = convert_file(CORPUS / "salt_nlp_swe_chat_sample_std.json")
    traces = [i.trace for i in items if isinstance(i, TraceItem)]
    tools = [s.tool.name for s in traces[2].steps if s.type == "tool_call" and s.tool]
    assert tools == ["str_replace_editor", "str_replace_editor", "WebSearch", "respond"]
    assert traces[2].steps[0].type == "thought"


def test_swe_chats_tool_names_kept_as_descriptions_are_no_thoughts() -> None:
    """SWE-chat's converter writes a source's ``Bash``, ``Read``, ``Write`` or ``edit_file`` as
    a shell or editor call and keeps the tool's name as the description. Before, each was a
    thought ("Read", "Bash") before its call, and a training row's assistant text."""
    path = CORPUS / "salt_nlp_swe_chat_sample_std.json"
    named = {
        action["description"]
        for trajectory in json.loads(path.read_text())
        for action in trajectory["content"]
        if action["class_"] in ("api_action", "code_action") and action.get("description")
    }
    assert {"Read", "Write", "Bash", "Edit", "read_file", "edit_file"} <= named
    traces = [i.trace for i in convert_file(path) if isinstance(i, TraceItem)]
    thoughts = {s.content for t in traces for s in t.steps if s.type == "thought"}
    assert thoughts.isdisjoint(named)
    assert "I'll inspect the references and draft the paper." in thoughts


def test_swe_chats_created_at_is_the_trajectorys_time() -> None:
    """SWE-chat's ``details.created_at`` says when the session was; before, only
    ``details.timestamp`` was read and every SWE-chat trace was dated 1970-01-01."""
    path = CORPUS / "salt_nlp_swe_chat_sample_std.json"
    said = [t["details"]["created_at"] for t in json.loads(path.read_text())]
    traces = [i.trace for i in convert_file(path) if isinstance(i, TraceItem)]
    assert [t.metadata.created_at.isoformat().replace("+00:00", "Z") for t in traces] == said


def test_a_class_that_is_no_text_is_a_problem_at_its_place() -> None:
    """``class_`` a list (a fuzzer's wrap): a problem naming the content item, never a crash.
    (Before: a TypeError, as a list cannot be looked up among the classes.)"""
    document = trajectory(user("Fix it."), {"class_": ["message_action"], "content": "x"})
    (problem,) = list(convert([document], source="adp"))
    assert isinstance(problem, Problem)
    assert "content[1]" in str(problem)
    assert "not an ADP action or observation" in str(problem)


IPYTHON_TRACEBACK = (
    "---------------------------------------------------------------------------\n"
    "NameError                                 Traceback (most recent call last)\n"
    "Cell In[1], line 1\n----> 1 foo\n\nNameError: name 'foo' is not defined"
)


def test_an_ipython_traceback_is_an_evident_error() -> None:
    """IPython (Jupyter, CodeActInstruct's interpreter) prints a traceback under a rule of
    dashes, the exception's name beside ``Traceback (most recent call last)``. Before, only a
    result starting ``Traceback`` was one: this one was an observation, and the next call
    recovered from nothing."""
    python = {"class_": "code_action", "language": "python", "description": None}
    item = one(
        trajectory(
            user("Print foo."),
            {**python, "content": "foo"},
            environment(IPYTHON_TRACEBACK),
            {**python, "content": "foo = 1; print(foo)"},
            environment("1"),
            message("<finish> 1 </finish>"),
        )
    )
    assert shape(item.trace) == [
        ("tool_call", "execute_ipython_cell"),
        ("observation", "execute_ipython_cell"),
        ("error_recovery", "execute_ipython_cell"),
        ("observation", "execute_ipython_cell"),
        ("thought", None),
    ]
    # a rule of dashes before other text is no traceback
    ruled = one(
        trajectory(user("Draw."), {**python, "content": "x"}, environment("-" * 30 + "\nok"))
    )
    assert [kind for kind, _ in shape(ruled.trace)] == ["tool_call", "observation"]


def test_results_join_their_actions_by_tool_call_id_wherever_they_come() -> None:
    """ADP 1.3's ``tool_call_id`` links an observation to the action that produced it (ADP's own
    test of its OpenHands SDK converter: two calls, answered in the other order). Before, the
    shell's result was the one right after it, and the search's was read as the environment's
    context, no result."""
    item = one(
        trajectory(
            user("Search for ADP and inspect the repo."),
            {**api("search", query="agent data protocol"), "tool_call_id": "source_call_search"},
            {**bash("ls"), "tool_call_id": "source_call_shell"},
            {**environment("README.md\nschema"), "tool_call_id": "source_call_shell"},
            {
                **environment("ADP standardizes agent trajectories."),
                "tool_call_id": "source_call_search",
            },
        )
    )
    assert shape(item.trace) == [  # each call told with its own result
        ("tool_call", "search"),
        ("observation", "search"),
        ("tool_call", "execute_bash"),
        ("observation", "execute_bash"),
    ]
    steps = item.trace.steps
    assert steps[0].output_summary == "ADP standardizes agent trajectories."
    assert steps[2].output_summary == "README.md\nschema"


def test_an_observation_naming_another_call_is_not_the_result_of_the_action_before_it() -> None:
    """Both have an id and they differ: the observation is no result of that action (an
    environment's text answering no action is context); without ids, the one right after it
    is, as before ADP 1.3."""
    linked = one(
        trajectory(
            user("List the files."),
            {**bash("ls"), "tool_call_id": "call_1"},
            {**environment("Welcome to the shell."), "tool_call_id": "call_9"},
            {**environment("README.md"), "tool_call_id": "call_1"},
            message("Done."),
        )
    )
    assert [step.output_summary for step in linked.trace.steps[:2]] == ["README.md", "README.md"]
    unlinked = one(
        trajectory(
            user("List the files."),
            {**bash("ls"), "tool_call_id": "call_1"},
            environment("README.md"),
            message("Done."),
        )
    )
    assert unlinked.trace.steps[0].output_summary == "README.md"


def test_an_actions_reasoning_content_is_a_thought_before_its_description() -> None:
    """ADP 1.3's ``reasoning_content`` (its converter writes it as a ``<think>`` block, then the
    description). Before, it was left out."""
    item = one(
        trajectory(
            user("Look at the alarm clock under the lamp."),
            {
                **api("perform_action", action="go to desk 1"),
                "reasoning_content": "The clock may be on the desk.",
                "description": "Go to the desk.",
            },
            environment("On the desk 1, you see a alarmclock 1."),
            {**message("I found it."), "reasoning_content": "The clock is here."},
        )
    )
    contents = [(step.type, step.content) for step in item.trace.steps]
    assert contents[:2] == [
        ("thought", "The clock may be on the desk."),
        ("thought", "Go to the desk."),
    ]
    assert ("thought", "The clock is here.") in contents
    assert item.trace.outcome.result_summary == "I found it."


def test_the_tools_a_trajectory_declares_are_the_tools_offered() -> None:
    """SWE-Gym's ``details.tools`` (OpenHands' definitions as JSON text) and Toucan's Kimi
    ``tool_declare`` opening text declare the tools offered; the training row lists them as
    given. Before, both were left out and a schema was guessed from the calls: no description,
    Toucan's ``numResults`` an integer where it declares a number, SWE-Gym's ``finish`` lost."""
    gym = CORPUS / "swe_gym_openhands_sample_std.json"
    (run,) = json.loads(gym.read_text(encoding="utf-8"))
    declared = json.loads(run["details"]["tools"])
    (item,) = [i for i in convert_file(gym) if isinstance(i, TraceItem)]
    assert [t["function"]["name"] for t in item.tools] == [t["function"]["name"] for t in declared]
    assert item.tools[0]["function"]["description"] == declared[0]["function"]["description"]
    toucan = CORPUS / "toucan_1_5m_sample_std.json"
    (run,) = json.loads(toucan.read_text(encoding="utf-8"))
    opening = run["content"][0]["content"]
    written = opening.removeprefix("<|im_system|>tool_declare<|im_middle|>")
    (item,) = [i for i in convert_file(toucan) if isinstance(i, TraceItem)]
    assert list(item.tools) == json.loads(written.removesuffix("<|im_end|>"))
    assert item.tools[0]["function"]["parameters"]["properties"]["numResults"]["type"] == "number"


def test_one_responses_calls_tell_its_text_once_and_none_recovers_a_sibling() -> None:
    """ADP's SWE-Gym converter writes an OpenHands response that made several calls as one
    action a call, each with the response's text as its description and its result right after
    it. Before, kp told that text again before every call, and a call made beside a failed one
    (before the model saw the error) was that error's recovery."""
    gym = CORPUS / "swe_gym_openhands_sample_std.json"
    (run,) = json.loads(gym.read_text(encoding="utf-8"))
    described = [
        action["description"]
        for action in run["content"]
        if action["class_"] in ("api_action", "code_action") and action["description"]
    ]
    assert len(described) > len(set(described))  # the file repeats a response's text
    (item,) = [i for i in convert_file(gym) if isinstance(i, TraceItem)]
    thoughts = [step.content for step in item.trace.steps if step.type == "thought"]
    assert all(thoughts.count(text) == 1 for text in described)
    # One response viewed two files from line 0; both views failed, and the next response's
    # view (from line 1) recovers: the second failed view is no recovery of the first.
    calls = [s for s in item.trace.steps if s.type in ("tool_call", "error_recovery")]
    ranges = [(s.type, (s.input or {}).get("view_range")) for s in calls]
    at = ranges.index(("tool_call", [0, 40]))
    assert ranges[at : at + 3] == [
        ("tool_call", [0, 40]),
        ("tool_call", [0, 40]),
        ("error_recovery", [1, 40]),
    ]


def test_a_call_agentbenchs_knowledge_graph_cannot_run_failed_and_the_next_recovers() -> None:
    """AgentBench's KG environment answers a call it cannot run "get_relations(X) cannot be
    executed. You may make a mistake and need to fix it.": a failed call, the agent's next
    call its error recovery (it says "I misunderstood..."). Before, a result like any other."""
    path = CORPUS / "agenttuning_kg_sample_std.json"
    traces = [i.trace for i in convert_file(path) if isinstance(i, TraceItem)]
    steps = traces[1].steps
    refused = next(n for n, s in enumerate(steps) if "cannot be executed" in (s.content or ""))
    assert steps[refused].type == "observation"
    called = steps[refused - 1].tool
    assert called is not None
    assert called.name == "get_relations"
    recovery = next(s for s in steps[refused:] if s.type in ("tool_call", "error_recovery"))
    assert recovery.type == "error_recovery"
    assert recovery.tool is not None
    assert recovery.tool.name == "get_attributes"
