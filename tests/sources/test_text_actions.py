"""Actions written on the line the instructions declare (AgentBench's tasks, AgentInstruct's rows).

AgentBench tells the model, in the instructions it opens with, to write each action on a line
of its own (ALFWorld's ``ACTION: your next action``, the OS task's ``Act: bash`` then a fenced
block, WebShop's ``Action:``, the DB task's ``Action: Answer`` then ``Final Answer: ...``), and the
environment answers as the user. The files are the conformance corpus's real rows (origins in
tests/conformance/SOURCES.md); a variant changes one part of a real row.
"""

from __future__ import annotations

import json
from typing import Any

from knowledgepulse import sources
from knowledgepulse.records import Problem
from knowledgepulse.trace import ReasoningTrace
from tests.sources.helpers import CORPUS

CHAT = CORPUS / "openai-chat"


def rows(name: str) -> list[dict[str, Any]]:
    found = json.loads((CHAT / f"agentinstruct_{name}_raw_sample.json").read_text())
    assert isinstance(found, list)
    return found


def trace(row: dict[str, Any], source: str = "openai-chat") -> ReasoningTrace:
    found = list(sources.convert([row], source=source))
    assert [item for item in found if isinstance(item, Problem) and not item.warning] == []
    (item,) = [item for item in found if not isinstance(item, Problem)]
    return item.trace


def kinds(found: ReasoningTrace) -> list[tuple[str, str | None]]:
    return [(step.type, step.tool.name if step.tool else None) for step in found.steps]


def test_an_os_action_is_a_bash_call_its_code_the_input_and_the_shell_its_observation() -> None:
    row = rows("os")[1]
    found = trace(row)
    assert kinds(found)[:3] == [("thought", None), ("tool_call", "bash"), ("observation", "bash")]
    # The task's first call: the worked problem before it (``ls /etc``) is no part of the run.
    assert found.steps[1].input == {"action": "bash", "code": 'find ~ -type f -name "*.txt"'}
    assert (found.steps[2].content or "").startswith("The output of the OS:")
    assert found.outcome.result_summary == "3"  # "Act: answer(3)"


def test_alfworlds_actions_are_calls_named_by_their_verb() -> None:
    found = trace(rows("alfworld")[0])
    called = [name for kind, name in kinds(found) if kind == "tool_call"]
    assert called[:4] == ["go", "take", "go", "put"]
    assert found.steps[1].input == {"action": "go to shelf 1"}
    assert not any(kind == "tool_call" and name == "respond" for kind, name in kinds(found))


def test_webshops_action_on_the_line_after_its_marker_is_read() -> None:
    found = trace(rows("webshop")[0])
    assert [name for kind, name in kinds(found) if kind == "tool_call"] == [
        "search",
        "click",
        "click",
    ]


def test_the_db_tasks_answer_action_gives_its_final_answer() -> None:
    assert trace(rows("db")[0]).outcome.result_summary == '["none"]'


def test_sharegpt_turns_of_the_same_row_read_the_same() -> None:
    """THUDM/AgentInstruct on Hugging Face keeps ``from`` / ``value`` turns."""
    row = rows("os")[1]
    speakers = {"user": "human", "assistant": "gpt"}
    shared = {
        "conversations": [
            {"from": speakers[turn["role"]], "value": turn["content"]}
            for turn in row["conversations"]
        ]
    }
    assert kinds(trace(shared, "sharegpt")) == kinds(trace(row))


def test_with_no_action_line_declared_the_text_stays_what_the_agent_said() -> None:
    """An ``ACTION:`` line the instructions never asked for is text: the user answers it."""
    row = rows("alfworld")[0]
    first = row["conversations"][0]
    first["content"] = first["content"].replace("ACTION", "MOVE")
    assert all(name in (None, "respond") for _, name in kinds(trace(row)))


def test_actions_the_environment_answers_with_observation_are_calls_undeclared() -> None:
    """The knowledge-graph task declares no action line, but its environment answers each
    ``Action: get_relations(...)`` with ``Observation: ...``, ReAct's convention: calls too, and
    the reply without that label (a call it could not run) still that call's result. (The run
    is the task's, after AgentBench's worked question.)"""
    second = trace(rows("kg")[1])
    called = [name for kind, name in kinds(second) if kind in ("tool_call", "error_recovery")]
    assert called == ["get_relations", "get_neighbors", "get_relations", "get_attributes"]
    failed = next(step for step in second.steps if "cannot be executed" in (step.content or ""))
    assert failed.type == "observation"
    assert failed.tool is not None
    assert failed.tool.name == "get_relations"


def fireact(number: int) -> dict[str, Any]:
    """A row of FireAct's fine-tuning data (ReAct's Wikipedia environment, OpenAI's format)."""
    lines = (CHAT / "fireact_multitask_multimethod.jsonl").read_text().splitlines()
    found = json.loads(lines[number])
    assert isinstance(found, dict)
    return found


def test_reacts_finish_is_the_answer_and_the_episodes_end_no_reply_of_the_user() -> None:
    """``Action: finish[X]`` ends the run with X; the environment's ``Observation: Episode
    finished, reward = 1`` after it closes the episode: no ``respond`` to a user, and the run
    the environment rewarded is a success."""
    found = trace(fireact(2))
    assert kinds(found) == [
        ("thought", None),
        ("tool_call", "search"),
        ("observation", "search"),
        ("thought", None),
        ("thought", None),
    ]
    assert found.outcome.result_summary == "1809"
    assert found.metadata.success is True


def test_an_episode_the_environment_did_not_reward_is_no_success() -> None:
    """``reward = False`` (or ``0``): the answer the agent finished with was wrong."""
    for number in (3, 4):
        found = trace(fireact(number))
        assert found.outcome.result_summary is not None
        assert found.metadata.success is False
        assert not any(name == "respond" for _, name in kinds(found))


def test_the_episodes_end_reads_the_same_in_sharegpt_turns() -> None:
    row = fireact(4)
    speakers = {"user": "human", "assistant": "gpt"}
    shared = {
        "conversations": [
            {"from": speakers[turn["role"]], "value": turn["content"]} for turn in row["messages"]
        ]
    }
    found = trace(shared, "sharegpt")
    assert found.outcome.result_summary == trace(row).outcome.result_summary == "A"
    assert found.metadata.success is False


def test_an_episodes_end_the_agent_wrote_itself_is_its_text_and_finish_still_the_answer() -> None:
    """FireAct rows 240 and 994: after ``finish[X]`` GPT-4 wrote ``Observation: Episode
    finished, reward = 1`` as its own turn, then the environment gave its verdict. ReAct's
    observations are the environment's: the agent's is its own text, no answer and no reply the
    environment's line answers; X is the answer and the environment's reward the verdict."""
    for number, answer, rewarded in ((5, "no", False), (6, "B", True)):
        row = fireact(number)
        invented = row["messages"][-2]
        assert invented["role"] == "assistant"
        assert invented["content"].startswith("Observation: Episode finished")
        found = trace(row)
        # before: the agent's line was a respond call answered by the environment's, no answer
        # was left ("failed"), and row 994, rewarded 1, no success
        assert not any(name == "respond" for _, name in kinds(found))
        assert kinds(found)[-2:] == [("thought", None), ("thought", None)]
        assert found.steps[-2].content == invented["content"]
        assert found.outcome.result_summary == answer
        assert found.metadata.success is rewarded
        speakers = {"user": "human", "assistant": "gpt"}
        turns = [{"from": speakers[m["role"]], "value": m["content"]} for m in row["messages"]]
        shared = trace({"conversations": turns}, "sharegpt")
        assert (shared.outcome.result_summary, shared.metadata.success) == (answer, rewarded)


def test_an_observation_after_an_answer_that_is_no_episodes_end_is_still_the_users_turn() -> None:
    """Only the environment's closing line is read as it: other words after ``finish[X]`` are
    the user answering the agent, as before."""
    row = fireact(2)
    row["messages"][-1]["content"] = "Why 1809?"
    found = trace(row)
    assert ("tool_call", "respond") in kinds(found)
    assert found.metadata.success is False


def fireact_alpaca(number: int) -> dict[str, Any]:
    """A row of FireAct's alpaca-form rows: the whole ReAct run is the ``output``."""
    found = json.loads(
        (CORPUS / "alpaca" / "fireact_multitask_multimethod_alpaca.json").read_text()
    )
    row = found[number]
    assert isinstance(row, dict)
    return row


def test_a_react_run_written_out_whole_as_the_reply_is_the_turns_it_transcribes() -> None:
    """An alpaca ``output`` of ``Thought:`` / ``Action:`` lines with the environment's
    ``Observation:`` lines between them reads as the chat rows of the same run do."""
    found = trace(fireact_alpaca(0))
    assert kinds(found) == [
        ("thought", None),
        ("tool_call", "search"),
        ("observation", "search"),
        ("thought", None),
        ("thought", None),
    ]
    assert found.outcome.result_summary == "Badr Hari"
    assert found.metadata.success is True
    assert trace(fireact_alpaca(4)).metadata.success is False  # "reward = False"


def test_a_reply_whose_observations_follow_no_action_stays_its_text() -> None:
    """Only a reply whose every observation answers an action is a run written out: other text
    with an ``Observation:`` line is the answer as it is; so is a model's own completion that
    writes observations (it invented them)."""
    row = fireact_alpaca(0)
    for output in (
        "Thought: I know this.\nObservation: nothing ran\nThought: so it is 3.",
        "The note says:\nObservation: the sky is blue.",
    ):
        found = trace({**row, "output": output})
        assert found.outcome.result_summary == output
        assert not any(kind == "tool_call" for kind, _ in kinds(found))
    invented = "Thought: look it up.\nAction: search[x]\nObservation: x is 3\nAction: finish[3]"
    found = trace({"prompt": row["instruction"], "completion": invented})
    assert found.outcome.result_summary == invented


def test_the_question_left_in_the_reply_before_the_run_is_the_agents_first_turn() -> None:
    """FireAct's converter left the lines of a question after its first (a choice's options) at
    the start of the ``output``, before the run: the run is still read, its calls and answer."""
    row = fireact_alpaca(0)
    output = "A. Badr Hari\nB. Peter Aerts\n" + row["output"]
    found = trace({**row, "output": output})
    assert [name for kind, name in kinds(found) if kind == "tool_call"] == ["search"]
    assert found.outcome.result_summary == "Badr Hari"
    options = trace(fireact_alpaca(2))  # the real row: the options A to D, then the run
    assert options.outcome.result_summary == "D"
    assert options.metadata.success is True


def test_the_last_episode_end_is_the_environments_verdict() -> None:
    """An agent that wrote an episode's end itself (``reward = 1``) before the environment's
    own (``reward = 0``): the last line is the environment's, and the run failed."""
    row = fireact_alpaca(0)
    output = row["output"].replace(
        "Observation: Episode finished, reward = True",
        "Observation: Episode finished, reward = 1\nObservation: Episode finished, reward = 0",
    )
    found = trace({**row, "output": output})
    assert found.outcome.result_summary == "Badr Hari"
    assert found.metadata.success is False
