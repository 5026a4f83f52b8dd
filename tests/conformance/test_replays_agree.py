"""One recording replayed through several frameworks is one conversation: its facts agree.

``replay_frameworks.py`` serves one recorded model conversation (a cassette) to several
frameworks and writes what each records. Each file's facts are counted by its own format's
reader of ``count_facts.py``, and kp is checked against them file by file; but a reader that
took the wrong user turn (the OpenAI Agents SDK's second run of a conversation read as asking
the first question again) agreed with kp and with itself. Across the replays of a recording
the objectives must agree, run by run, wherever a file records one (an Agents SDK export of a
Responses run keeps no text).

kp's own traces of the replays agree too, on what every format records: the tools called in
order (with their arguments, wherever a file keeps them), the final answer and the success
wherever the file records them (its facts say so), and the number of recoveries from errors.
A replay that ran otherwise (an agent capped at one step, one not catching the tool's error)
or a format that keeps less is named in ``GAPS``. A reader can agree with the naive counter of
its own format and still lose what the other formats of the same run keep.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from functools import cache
from typing import Any

from knowledgepulse.records import Problem
from knowledgepulse.sources import read
from knowledgepulse.sources._steps import RESPOND
from knowledgepulse.trace.models import ReasoningTrace
from tests.conformance.count_facts import FILES, HERE

# A replayed file of one recording: | `file` | owner/repo | `path` | `commit` | licence | replayed
_REPLAYED = re.compile(
    r"^\| `([^`]+)` \| ([^ |]+) \| `([^`]+)` \| `([0-9a-f]+)` \| [^|]+ \| replayed", re.MULTILINE
)


def _objectives_by_recording() -> dict[tuple[str, int], dict[str, list[str | None]]]:
    """For each recording and run count, each replayed file's objectives in run order."""
    found: dict[tuple[str, int], dict[str, list[str | None]]] = defaultdict(dict)
    for name, repository, path, _ in _REPLAYED.findall((HERE / "SOURCES.md").read_text()):
        facts = FILES / f"{name}.facts.json"
        if facts.exists():
            runs = json.loads(facts.read_text())["runs"]
            found[(f"{repository}/{path}", len(runs))][name] = [run["objective"] for run in runs]
    return found


def test_the_replays_of_a_recording_agree_on_each_runs_objective() -> None:
    groups = _objectives_by_recording()
    compared = 0
    for (recording, _), files in groups.items():
        for run in range(len(next(iter(files.values())))):
            said = {name: objectives[run] for name, objectives in files.items()}
            recorded = {text for text in said.values() if text is not None}
            assert len(recorded) <= 1, (recording, run, said)
            compared += len(said) > 1 and bool(recorded)
    assert compared >= 20  # the replays of many recordings, not a pattern that matched none


_MAX_STEPS = "replayed with max_steps: smolagents' max-steps error ends the run, which fails"
_GUARDRAIL = "the output guardrail tripped on the answer: the run fails"
_RAISES = "the agent does not catch the tool's error: the run ends at the first call, failed"
_NO_MODEL_TEXT = (
    "the Agents SDK's export keeps no model text: nothing after the failed call is a recovery"
)
GAPS: dict[tuple[str, str], str] = {
    ("smolagents/google_model_retry.json", "success"): _MAX_STEPS,
    ("smolagents/openai_instructions_with_tool_calls.json", "success"): _MAX_STEPS,
    ("smolagents/planning_openai_instructions_with_tool_calls.json", "success"): _MAX_STEPS,
    ("openai-agents/langsmith_sdk_output_guardrail.jsonl", "success"): _GUARDRAIL,
    ("langsmith/openai_agents_output_guardrail.json", "success"): _GUARDRAIL,
    ("mlflow/openai_agent_tool_raises.json", "tools"): _RAISES,
    ("mlflow/openai_agent_tool_raises.json", "success"): _RAISES,
    ("mlflow/openai_agent_tool_raises.json", "recovered"): _RAISES,
    ("langsmith/traceable_tool_raises.json", "tools"): _RAISES,
    ("langsmith/traceable_tool_raises.json", "success"): _RAISES,
    ("langsmith/traceable_tool_raises.json", "recovered"): _RAISES,
    ("mlflow/anthropic_tool_raises.json", "success"): _RAISES,
    ("langsmith/traceable_anthropic_tool_raises.json", "success"): _RAISES,
    ("openai-agents/responses_model_retry.jsonl", "recovered"): _NO_MODEL_TEXT,
    # The tool caught the wrapped client's 401 and returned "Error: ..." as its output, its span
    # no error; LangSmith alone keeps the inner ChatOpenAI run's error.
    ("openai-agents/langsmith_sdk_wrap_openai_in_tool.jsonl", "recovered"): _NO_MODEL_TEXT,
    # Strands' replay was served "The capital of France is Paris." as the last reply (its file
    # holds no reply "Paris"), the other replays of the recording "Paris".
    ("otlp/strands_capital_retry.json", "answer"): "another reply served",
    ("otlp/strands_genai_latest_capital_retry.json", "answer"): "another reply served",
    # Pydantic AI keeps the final_result call's arguments as the model wrote them ("30\\u00b0C",
    # its key order); OpenInference and Phoenix the validated output, serialised again.
    ("pydantic-ai/bedrock_model_structured_output.json", "answer"): "the arguments as written",
    # The GenAI conventions' retrieval span names no retriever class (OpenInference's does).
    ("otlp/otel_genai_langchain_retriever.json", "tools"): "no retriever's name",
    # Semantic Kernel names a plugin's function by its qualified name (the one it offers the
    # model), where the recording's replies ask for get_capital.
    ("otlp/semantic_kernel_google_model_retry.json", "tools"): "the plugin's qualified name",
}
"""Replays whose fact differs from the recording's other replays, and why: each is legitimate."""


@cache
def _traces(name: str) -> list[ReasoningTrace]:
    return [item.trace for item in read([FILES / name]) if not isinstance(item, Problem)]


def _calls(trace: ReasoningTrace) -> list[tuple[str, Any]]:
    """The tools called in order, each with its arguments (``None`` where the file keeps none),
    less the ``respond`` steps kp makes of what the agent told the user."""
    return [
        (step.tool.name, step.input)
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery")
        and step.tool is not None
        and not (step.tool.name == RESPOND and step.input is None)
    ]


def _fact(fact: str, run: dict[str, Any], trace: ReasoningTrace) -> Any:
    """What kp says of a run's fact; ``None`` where the file does not record it."""
    if fact == "tools":
        return [name for name, _ in _calls(trace)]
    if fact == "arguments":
        return [arguments for _, arguments in _calls(trace)]
    if fact == "answer":
        answer = re.sub(r"\s+", " ", trace.outcome.result_summary).strip()
        return answer if run["final_answer"] is not None else None
    if fact == "success":
        return trace.metadata.success if run["success"] is not None else None
    return sum(step.type == "error_recovery" for step in trace.steps)


def _replays() -> dict[tuple[str, ...], list[tuple[str, list[dict[str, Any]]]]]:
    """Each recording (its repository, path and commit, and run count) and its replays' runs."""
    found: dict[tuple[str, ...], list[tuple[str, list[dict[str, Any]]]]] = defaultdict(list)
    for name, *recording in _REPLAYED.findall((HERE / "SOURCES.md").read_text()):
        facts = FILES / f"{name}.facts.json"
        if facts.exists():
            runs = json.loads(facts.read_text())["runs"]
            found[(*recording, str(len(runs)))].append((name, runs))
    return found


def _disagreements(fact: str, said: dict[str, Any]) -> bool:
    """Whether the replays' values of a fact differ; arguments agree where each file keeps some."""
    if fact != "arguments":
        return len({json.dumps(value, sort_keys=True) for value in said.values()}) > 1
    kept = [
        arguments for arguments in said.values() if len(arguments) == len(next(iter(said.values())))
    ]
    return any(
        len({json.dumps(call[n], sort_keys=True) for call in kept if call[n] is not None}) > 1
        for n in range(len(kept[0]) if kept else 0)
    )


def test_kps_traces_of_the_replays_of_a_recording_agree_on_what_each_file_records() -> None:
    """Run by run, kp's traces of one recording's replays call the same tools in order with the
    same arguments, recover from as many errors, and give the same answer and success wherever
    the file records them; but for the replays named in GAPS."""
    compared, disagreeing = 0, {}
    for recording, files in _replays().items():
        for number in range(int(recording[-1])):
            for fact in ("tools", "arguments", "answer", "success", "recovered"):
                said = {
                    name: value
                    for name, runs in files
                    if (name, "tools" if fact == "arguments" else fact) not in GAPS
                    and len(_traces(name)) == len(runs)
                    and (value := _fact(fact, runs[number], _traces(name)[number])) is not None
                }
                if len(said) > 1 and _disagreements(fact, said):
                    disagreeing[(recording[1], number, fact)] = said
                compared += len(said) > 1
    assert disagreeing == {}
    replayed = {name for files in _replays().values() for name, _ in files}
    assert {name for name, _ in GAPS} <= replayed  # no gap of a file gone
    assert compared >= 100  # many recordings' replays, not a pattern that matched none
