"""kp on real files: every fact counted from the raw file (count_facts.py) holds, or is a known gap.

Each corpus file is read with auto-detection, as a user would, and each fact of its facts file
is checked against the traces kp gives. Where kp is wrong today the fact is listed in
``KNOWN_GAPS`` with what kp gives and why; the test asserts that the failing facts are exactly
that table, so a fix and a new regression both fail until the table is updated. The same holds
for the invariants of :func:`knowledgepulse.sources._invariants.check` (``KNOWN_WARNINGS``).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from knowledgepulse.records import Problem
from knowledgepulse.runs.convert import convert_files
from knowledgepulse.sources import TraceOptions, read
from knowledgepulse.sources._invariants import check
from knowledgepulse.sources._steps import RESPOND, bounded
from knowledgepulse.trace.models import ReasoningTrace, Step
from tests.sources.helpers import langfuse_fetched

sys.path.insert(0, str(Path(__file__).parent))
from count_facts import FILES, corpus, name_of, origins, replayed  # type: ignore[import-not-found]

_COMPARED = 400
"""Objectives and answers are compared on their first characters, whitespace folded."""

KNOWN_GAPS: dict[tuple[str, str], str] = {
    # vercel/ai keeps the Responses API's replies alone, without the request: no record holds
    # the user's words; the placeholder says so.
    (
        "openai-responses/vercel_ai_openai_apply_patch_tool_1.json",
        "runs[0].objective",
    ): "'openai run'",
    ("openai-responses/vercel_ai_openai_custom_tool_1.json", "runs[0].objective"): "'openai run'",
    ("openai-responses/vercel_ai_openai_mcp_tool_1.json", "runs[0].objective"): "'openai run'",
    (
        "openai-responses/vercel_ai_openai_mcp_tool_approval_1.json",
        "runs[0].objective",
    ): "'openai run'",
    (
        "openai-responses/vercel_ai_openai_mcp_tool_approval_2.json",
        "runs[0].objective",
    ): "'openai run'",
    (
        "openai-responses/vercel_ai_openai_shell_container_1.json",
        "runs[0].objective",
    ): "'openai run'",
    # AReaL's geo_edit environment sends, after each call's result, a second user turn ("All
    # your tool calls were executed successfully... decide your next action"): the counter keeps
    # it with the call's output, kp reads the user turn after a result as the user answering the
    # agent (a `respond` observation). Whether every user turn up to the agent's next one is the
    # environment's waits on the user's word.
    (
        "conversation/reason_map_plus_924_areal_geo_edit_trajectory.json",
        "runs[0].replies",
    ): (
        "['All your tool calls were executed successfully. Tool outputs may include a new"
        " Observation image or text analysis resu"
    ),
    # vLLM's fixture keeps the model's turns and the tool's answer, not the user's request: no
    # record holds the user's words; the placeholder says so.
    ("conversation/vllm_harmony_file_search_trace.json", "runs[0].objective"): "'openai run'",
    # AgentOps's fixture is the Messages API's reply alone, without the request: the same.
    (
        "conversation/sdk_reply_agentops_anthropic_message.json",
        "runs[0].objective",
    ): "'anthropic run'",
    # An earlier nanobot kept of each turn's calls only the tools' names (`tools_used`), no
    # arguments and no results: kp makes no call it cannot show, so the calls are not steps.
    ("conversation/nanobot_session_qwen_think_tools_used.jsonl", "runs[0].tools"): "[]",
    # Pydantic AI sent an empty user text (the agent runs on its instructions alone): no user's
    # words to be the objective, so the row's systemInstruction stands in.
    (
        "gemini/test_google_instructions_only_with_tool_calls.jsonl",
        "runs[0].objective",
    ): "'Tell three jokes. Generate topics with the generate_topic tool.'",
    # The spec's reasoning example records only the output messages: no user text to be the
    # objective, and a span's name is no one's words: the placeholder says so.
    (
        "tests/sources/data/otel/genai_semconv_examples.otlp.jsonl",
        "runs[1].objective",
    ): "'semconv-example run'",
    # Copilot CLI records no message text unless content capture is on: its invoke_agent span's
    # github.copilot.user.message event says a user spoke, not what; the placeholder says so.
    ("otel-js/copilot_cli_1.0.83_create_issues_otel.jsonl", "runs[0].objective"): (
        "'github.copilot run'"
    ),
    # Google ADK with message content off keeps no word in any span or log record (its own
    # keys are "{}", the events "<elided>"): the agent's name stands for the request, and the
    # model's reply after the failed call is a span of tokens, with no text to be that recovery.
    ("otlp/agentevals_adk_v1_nolegacy_S5.json", "runs[0].objective"): "'weather_agent'",
    ("otlp/agentevals_adk_v1_nolegacy_S6b.json", "runs[0].objective"): "'stock_agent'",
    ("otlp/agentevals_adk_v1_nolegacy_S6b.json", "runs[0].recovered"): "0",
    # The input guardrail tripped before the model call: no span holds the user's words, and
    # the SDK's default workflow name ("Agent workflow") is none either: the placeholder says so.
    ("openai-agents/input_guardrail_tripwire.jsonl", "runs[0].objective"): "'openai-agents run'",
    # The SDK's exported response spans keep only an id and usage: the user's words and the
    # model's answer after the failed call are in no span, so no step can be that recovery.
    ("openai-agents/responses_model_retry.jsonl", "runs[0].objective"): "'openai-agents run'",
    ("openai-agents/responses_model_retry.jsonl", "runs[0].recovered"): "0",
    ("openai-agents/responses_thinking_with_tool_calls.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    # The SDK's own exporter sent these (OpenLLMetry's cassettes recorded the ingest requests):
    # its response spans keep an id and usage, no text, so no span holds the user's words.
    ("openai-agents/openllmetry_recipe_agents_hierarchy_ingest.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    ("openai-agents/openllmetry_router_analytics_handoff_ingest.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    ("openai-agents/langsmith_sdk_handoff.jsonl", "runs[0].objective"): "'openai-agents run'",
    ("openai-agents/langsmith_sdk_agent_as_tool.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    ("openai-agents/langsmith_sdk_traceable_in_tool.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    ("openai-agents/langsmith_sdk_wrap_openai_in_tool.jsonl", "runs[0].objective"): (
        "'openai-agents run'"
    ),
    # The headless streams do not write the prompt they were given on the command line (the
    # session's own file keeps it): no record holds the user's words; the placeholder says so.
    ("claude-code/gleam_sdk_claude_2.1.7_stream_json.jsonl", "runs[0].objective"): (
        "'claude-code run'"
    ),
    ("claude-code/untether_claude_2.1.285_autocompact.jsonl", "runs[0].objective"): (
        "'claude-code run'"
    ),
    ("claude-code/qwen_code_0.24.4_stream_tool_errors.jsonl", "runs[0].objective"): (
        "'qwen-code run'"
    ),
    ("claude-code/qwen_code_0.24.4_stream_api_error.jsonl", "runs[0].objective"): (
        "'qwen-code run'"
    ),
    ("claude-code/untether_amp_stream_success.jsonl", "runs[0].objective"): "'amp run'",
    ("claude-code/untether_amp_stream_error.jsonl", "runs[0].objective"): "'amp run'",
    ("claude-code/maestro_qwen_code_0.15.6_stream_json.jsonl", "runs[0].objective"): (
        "'qwen-code run'"
    ),
    ("opencode/mantis_opencode_stream_success.jsonl", "runs[0].objective"): "'opencode run'",
    ("opencode/mantis_opencode_stream_denied.jsonl", "runs[0].objective"): "'opencode run'",
    ("opencode/noldor_opencode_1.17_run_json.jsonl", "runs[0].objective"): "'opencode run'",
    # browser-use's saved history holds no task before 0.7.11 (the Agent was given it and
    # never wrote it): no record holds the user's words; the placeholder says so.
    ("browser-use/browser_use_own_draft_rerun_elon_musk.json", "runs[0].objective"): (
        "'browser-use run'"
    ),
    ("browser-use/jakkaj_tools_bfcl_leaderboard.json", "runs[0].objective"): "'browser-use run'",
    ("browser-use/pentest_agent_juice_shop_sqli.json", "runs[0].objective"): "'browser-use run'",
    ("browser-use/pentest_agent_navigation_timeout.json", "runs[0].objective"): (
        "'browser-use run'"
    ),
    ("codex/agentcmd_codex_exec_json_cat.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/agentcmd_codex_exec_json_file_change.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/agentcmd_codex_exec_json_ls.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/untether_codex_0.157_resume.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/untether_codex_0.157_web_search.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/untether_codex_turn_failed.jsonl", "runs[0].objective"): "'codex run'",
    ("codex/relay_codex_0.155_exec_json_spawn_agent.jsonl", "runs[0].objective"): "'codex run'",
    # takopi cut these Pi streams to the events its runner reads: no user message is left.
    ("pi/takopi_pi_stream_error.jsonl", "runs[0].objective"): "'pi run'",
    ("pi/takopi_pi_stream_success.jsonl", "runs[0].objective"): "'pi run'",
    # Its second session is an `init` and an error `result`: no message at all.
    ("claude-code/untether_claude_stream_json_two_sessions.jsonl", "runs[1].objective"): (
        "'claude-code run'"
    ),
    # OpenHands writes a tool call it could not read (FunctionCallValidationError) as an error
    # observation alone, no action: right after a failed edit, the model's attempt that failed
    # has no step of its own, so one recovery step follows the two errors.
    ("openhands/multi_swe_bench_ponyc_output.jsonl", "runs[1].recovered"): "23",
    # The SDK's authors sliced these events from a run: the user's message is not among them,
    # and the second failed command's action neither, so its observation is an error of its
    # own right after the first's: one recovery step follows the two errors.
    ("openhands/sdk_goal_pr_review_events.jsonl", "runs[0].objective"): "'openhands run'",
    ("openhands/sdk_goal_pr_review_events.jsonl", "runs[0].recovered"): "1",
    # Claude's two parallel text-editor server calls both fail; the model sees the two errors
    # at once and its next call (a retry) is one recovery step after them.
    ("anthropic/test_anthropic_text_editor_code_execution_tool.jsonl", "runs[0].recovered"): "1",
    # ADP's SWE-Gym writes one OpenHands response's two views as two actions, each result right
    # after its call: both fail, and the next response's view (a retry) is one recovery step.
    ("adp/swe_gym_openhands_sample_std.json", "runs[0].recovered"): "3",
}
"""(file, fact) -> what kp gives, and why, for every fact kp gets wrong today."""

KNOWN_WARNINGS: dict[tuple[str, int], str] = {
    # vercel/ai's Responses replies alone: no request, no user's words (see KNOWN_GAPS).
    ("openai-responses/vercel_ai_openai_apply_patch_tool_1.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("openai-responses/vercel_ai_openai_custom_tool_1.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("openai-responses/vercel_ai_openai_mcp_tool_1.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("openai-responses/vercel_ai_openai_mcp_tool_approval_1.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("openai-responses/vercel_ai_openai_mcp_tool_approval_2.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("openai-responses/vercel_ai_openai_shell_container_1.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    # NNetNav's web runs give the task as its prompt wraps it ("You are given the following
    # objective: ... Examine the current web page and perform the next appropriate action"):
    # the ADP trajectory's user text, kept as the file has it (its SFT rows' too, once the
    # tools' documentation before it is the system prompt's).
    ("adp/nnetnav_wa_sample_std.json", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    ("adp/nnetnav_wa_sample_std.json", 1): (
        "the objective reads as a system prompt, not the user's request"
    ),
    ("sharegpt/adp_nnetnav_wa_sample_sft.json", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    ("sharegpt/adp_nnetnav_wa_sample_sft.json", 1): (
        "the objective reads as a system prompt, not the user's request"
    ),
    (
        "jaeger/genai_test_trace.json",
        0,
    ): "the final answer appears 4 times among the steps (once is right)",
    # Phoenix's PXI fixture redacts every text to "redacted output": each model reply is the answer.
    ("otlp/phoenix_pxi_suggestion_mixed_annotation_config.json", 0): (
        "the final answer appears 5 times among the steps (once is right)"
    ),
    # crewAI's two tasks ask the same sum: the first task's answer, a thought, is the crew's too.
    ("otlp/openinference_crewai_two_tasks.jsonl", 0): (
        "the final answer appears 2 times among the steps (once is right)"
    ),
    ("otlp/openllmetry_crewai_two_tasks.jsonl", 0): (
        "the final answer appears 2 times among the steps (once is right)"
    ),
    # agent-sessions' Droid baseline answers both of its requests "Ok": the first answer, a
    # thought before the user's second request, says the same words as the last.
    ("droid/agent_sessions_droid_session_store_large.jsonl", 0): (
        "the final answer appears 2 times among the steps (once is right)"
    ),
    ("openai-agents/input_guardrail_tripwire.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/responses_model_retry.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/responses_thinking_with_tool_calls.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/openllmetry_recipe_agents_hierarchy_ingest.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/openllmetry_router_analytics_handoff_ingest.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/langsmith_sdk_handoff.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/langsmith_sdk_agent_as_tool.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/langsmith_sdk_traceable_in_tool.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    ("openai-agents/langsmith_sdk_wrap_openai_in_tool.jsonl", 0): (
        "the objective is a placeholder ('openai-agents run'), not the user's request"
    ),
    # GAIA's vampire riddle opens "You are Van Helsing, a renowned vampire hunter": the
    # question as the benchmark asks it, which reads like a system prompt.
    ("smolagents/benchmark_code_gaia_gpt-4o.jsonl", 1): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # GDPval's task opens "You are tasked with completing a specific assignment." and describes
    # the environment before the request: the user's turn as NeMo Gym sends it.
    ("openai-responses/nemo_gym_gdpval_rollout.jsonl", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # NeMo Gym's SWE-RL judge sends its whole task as the user's turn, opening "You are an
    # expert Python coder and are given: ...": the request as the environment words it.
    ("openai-responses/nemo_gym_swerl_judge_reasoning_leftover_think.jsonl", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    ("openai-responses/nemo_gym_swerl_judge_reasoning_leftover_think.jsonl", 1): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # PinchBench's daily-briefing task opens "You are an executive assistant preparing the daily
    # briefing.": the user's only turn, the task as the benchmark words it.
    ("openai-responses/nemo_gym_pinchbench_rollouts.jsonl", 3): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # Logfire's test gives its OpenAI Agents function tool the name `tool`: the file's own name.
    ("openai-responses/logfire_openai_agents_function_tool_exception.jsonl", 0): (
        "steps [0] call a tool with no real name (empty, '?', 'tool' or a step type)"
    ),
    # jaeger-ui's GenAI fixture sends its model one prompt as text, no roles: "You are an SRE
    # assistant. Analyse the following incident: ...", the persona and the request together.
    ("otlp/jaeger_ui_genai_agent_trace.json", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # OpenAgentSafety's BI task opens "You are an AI assistant supporting the Business
    # Intelligence (BI) team": the task as the benchmark words it, which reads like a system
    # prompt.
    ("openhands/openagentsafety_v1_output.jsonl", 1): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # The same benchmark's tasks "You are an AI agent assisting the leadership team..." and "You
    # are an AI agent who helps employees...", as it words them.
    ("openhands/openagentsafety_v1_critic_attempt_output.jsonl", 0): (
        "the objective reads as a system prompt, not the user's request"
    ),
    ("openhands/openagentsafety_v1_critic_attempt_output.jsonl", 4): (
        "the objective reads as a system prompt, not the user's request"
    ),
    # A slice of a run's events without the user's message (see KNOWN_GAPS).
    ("openhands/sdk_goal_pr_review_events.jsonl", 0): (
        "the objective is a placeholder ('openhands run'), not the user's request"
    ),
    # The headless streams hold no prompt (see KNOWN_GAPS).
    ("claude-code/gleam_sdk_claude_2.1.7_stream_json.jsonl", 0): (
        "the objective is a placeholder ('claude-code run'), not the user's request"
    ),
    ("claude-code/untether_claude_2.1.285_autocompact.jsonl", 0): (
        "the objective is a placeholder ('claude-code run'), not the user's request"
    ),
    ("claude-code/qwen_code_0.24.4_stream_tool_errors.jsonl", 0): (
        "the objective is a placeholder ('qwen-code run'), not the user's request"
    ),
    ("claude-code/qwen_code_0.24.4_stream_api_error.jsonl", 0): (
        "the objective is a placeholder ('qwen-code run'), not the user's request"
    ),
    ("claude-code/untether_amp_stream_success.jsonl", 0): (
        "the objective is a placeholder ('amp run'), not the user's request"
    ),
    ("claude-code/untether_amp_stream_error.jsonl", 0): (
        "the objective is a placeholder ('amp run'), not the user's request"
    ),
    ("claude-code/maestro_qwen_code_0.15.6_stream_json.jsonl", 0): (
        "the objective is a placeholder ('qwen-code run'), not the user's request"
    ),
    ("opencode/mantis_opencode_stream_success.jsonl", 0): (
        "the objective is a placeholder ('opencode run'), not the user's request"
    ),
    ("opencode/mantis_opencode_stream_denied.jsonl", 0): (
        "the objective is a placeholder ('opencode run'), not the user's request"
    ),
    ("opencode/noldor_opencode_1.17_run_json.jsonl", 0): (
        "the objective is a placeholder ('opencode run'), not the user's request"
    ),
    # browser-use's saved history before 0.7.11: no task in the file (see KNOWN_GAPS).
    ("browser-use/browser_use_own_draft_rerun_elon_musk.json", 0): (
        "the objective is a placeholder ('browser-use run'), not the user's request"
    ),
    ("browser-use/jakkaj_tools_bfcl_leaderboard.json", 0): (
        "the objective is a placeholder ('browser-use run'), not the user's request"
    ),
    ("browser-use/pentest_agent_juice_shop_sqli.json", 0): (
        "the objective is a placeholder ('browser-use run'), not the user's request"
    ),
    ("browser-use/pentest_agent_navigation_timeout.json", 0): (
        "the objective is a placeholder ('browser-use run'), not the user's request"
    ),
    ("codex/agentcmd_codex_exec_json_cat.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("codex/agentcmd_codex_exec_json_file_change.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("codex/agentcmd_codex_exec_json_ls.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("codex/untether_codex_0.157_resume.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("pi/takopi_pi_stream_error.jsonl", 0): (
        "the objective is a placeholder ('pi run'), not the user's request"
    ),
    ("pi/takopi_pi_stream_success.jsonl", 0): (
        "the objective is a placeholder ('pi run'), not the user's request"
    ),
    ("codex/untether_codex_0.157_web_search.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("codex/untether_codex_turn_failed.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("codex/relay_codex_0.155_exec_json_spawn_agent.jsonl", 0): (
        "the objective is a placeholder ('codex run'), not the user's request"
    ),
    ("claude-code/untether_claude_stream_json_two_sessions.jsonl", 1): (
        "the objective is a placeholder ('claude-code run'), not the user's request"
    ),
    ("conversation/vllm_harmony_file_search_trace.json", 0): (
        "the objective is a placeholder ('openai run'), not the user's request"
    ),
    ("conversation/sdk_reply_agentops_anthropic_message.json", 0): (
        "the objective is a placeholder ('anthropic run'), not the user's request"
    ),
    ("tests/sources/data/otel/genai_semconv_examples.otlp.jsonl", 1): (
        "the objective is a placeholder ('semconv-example run'), not the user's request"
    ),
    ("otel-js/copilot_cli_1.0.83_create_issues_otel.jsonl", 0): (
        "the objective is a placeholder ('github.copilot run'), not the user's request"
    ),
}
"""(file, trace index) -> the invariant warnings kp's trace raises today."""

LANGFUSE_VARIANT_GAPS: dict[tuple[str, str, str], str] = {
    # Langfuse takes a trace's output from its root observation (kp reads a page's lone root
    # and the rows' root so): the app's function returned the joke with its evaluation.
    ("langfuse/pydantic-ai-tools-2025-12-04.json", "page", "runs[0].final_answer"): "JSON",
    ("langfuse/pydantic-ai-tools-2025-12-04.json", "table", "runs[0].final_answer"): "JSON",
    ("langfuse/pydantic-ai-tools-2025-12-04.json", "rows", "runs[0].final_answer"): "JSON",
    ("langfuse/seeder-pydantic-ai-tools-2025-12-04.json", "page", "runs[0].final_answer"): "JSON",
    ("langfuse/seeder-pydantic-ai-tools-2025-12-04.json", "table", "runs[0].final_answer"): "JSON",
    ("langfuse/seeder-pydantic-ai-tools-2025-12-04.json", "rows", "runs[0].final_answer"): "JSON",
    # The agent's span (whose output is the trace's) hangs under a span the export left out, so
    # it is no root: the answer is the final_result call's arguments, the same comment wrapped
    # as ``{"input": ...}`` rather than the agent's ``{"response": ...}``.
    ("langfuse/csharp-agent-with-gemini-2026-03-09.json", "page", "runs[0].final_answer"): "JSON",
    ("langfuse/csharp-agent-with-gemini-2026-03-09.json", "table", "runs[0].final_answer"): "JSON",
    ("langfuse/csharp-agent-with-gemini-2026-03-09.json", "rows", "runs[0].final_answer"): "JSON",
}
"""(file, how its observations were fetched, fact) -> what kp gets wrong on that variant."""


@cache
def _conversions() -> dict[str, tuple[dict[str, Any], list[ReasoningTrace]]]:
    """Each corpus file's facts and the traces kp reads from it (auto-detected)."""
    found = {}
    for path, _, facts_path in corpus():
        items = [item for item in read([path]) if not isinstance(item, Problem)]
        traces = [item.trace for item in items]
        _REWARDS.update((id(item.trace), item.reward) for item in items)
        found[name_of(path)] = (json.loads(facts_path.read_text()), traces)
    return found


_REWARDS: dict[int, float | None] = {}
"""The reward kp read for each corpus trace (by the trace's identity): it rides on the item."""


def _fold(text: str | None) -> str:
    if text is None:
        return ""
    with contextlib.suppress(ValueError):  # structured answers are compared as JSON values
        text = json.dumps(json.loads(text), sort_keys=True)
    return re.sub(r"\s+", " ", text).strip()[:_COMPARED]


def _tools(trace: ReasoningTrace) -> list[str]:
    """The tools called, less the ``respond`` calls kp makes of what the agent said to the user."""
    return [
        step.tool.name
        for step in trace.steps
        if step.type in ("tool_call", "error_recovery")
        and step.tool is not None
        and not _told_the_user(step)
    ]


def _told_the_user(step: Step) -> bool:
    return step.tool is not None and step.tool.name == RESPOND and step.input is None


def _replies(trace: ReasoningTrace) -> list[str]:
    """The user's later turns kp kept: the observations of ``respond``, folded."""
    return [
        _fold(step.content)
        for step in trace.steps
        if step.type == "observation" and step.tool is not None and step.tool.name == RESPOND
    ]


def _matching(
    run: dict[str, Any], number: int, traces: list[ReasoningTrace]
) -> ReasoningTrace | None:
    """The trace kp made of a run: by source trace id, else by row number, else by order."""
    if "trace_id" in run:
        wanted = f"kp:trace:{run['trace_id']}"
        return next((trace for trace in traces if trace.id == wanted), None)
    # Dataset rows without an id of their own: kp:trace:<file stem>:<row> (a row's own numeric
    # id, as Code-Feedback's, is kp:trace:<id>, no row number).
    if traces and all(re.search(r"^kp:trace:.+:\d+$", trace.id) for trace in traces):
        return next((trace for trace in traces if trace.id.endswith(f":{number}")), None)
    return traces[number] if number < len(traces) else None


def _failures(facts: dict[str, Any], traces: list[ReasoningTrace]) -> dict[str, str]:
    """Each fact that does not hold, and what kp gives for it."""
    failing: dict[str, str] = {}
    if len(traces) != facts["traces"]:
        failing["traces"] = f"{len(traces)} traces"
    for number, run in enumerate(facts["runs"]):
        trace = _matching(run, number, traces)
        if trace is None:
            failing[f"runs[{number}]"] = "no trace"
            continue
        given = {
            "objective": (_fold(run["objective"]), _fold(trace.task.objective)),
            "tools": (run["tools"], _tools(trace)),
            "replies": ([_fold(text) for text in run.get("replies", [])], _replies(trace)),
            "recovered": (
                run["recovered"],
                sum(step.type == "error_recovery" for step in trace.steps),
            ),
        }
        if run["final_answer"] is not None:
            given["final_answer"] = (
                _fold(run["final_answer"]),
                _fold(trace.outcome.result_summary),
            )
        if run["success"] is not None:
            given["success"] = (run["success"], trace.metadata.success)
        if "reward" in run:
            given["reward"] = (run["reward"], _REWARDS.get(id(trace)))
        if "model" in run:
            source = (trace.metadata.model_extra or {}).get("source", {})
            given["model"] = (run["model"], source.get("model"))
        if run["errors"] > run["recovered"]:  # a terminal error: the run failed
            given["success"] = (False, trace.metadata.success)
        for fact, (expected, got) in given.items():
            if expected != got:
                failing[f"runs[{number}].{fact}"] = repr(got)[:120]
    return failing


def test_every_fact_of_the_corpus_holds_but_the_known_gaps() -> None:
    """The facts kp gets wrong are exactly KNOWN_GAPS: no more (a regression), no fewer (a fix)."""
    failing = {
        (name, fact): got
        for name, (facts, traces) in _conversions().items()
        for fact, got in _failures(facts, traces).items()
    }
    unexpected = {key: got for key, got in failing.items() if key not in KNOWN_GAPS}
    fixed = sorted(key for key in KNOWN_GAPS if key not in failing)
    assert not unexpected, f"facts kp now gets wrong: {unexpected}"
    assert not fixed, f"known gaps now right (remove them from KNOWN_GAPS): {fixed}"


def test_the_invariants_hold_on_every_corpus_trace_but_the_known_ones() -> None:
    """Every trace kp reads from the corpus keeps the invariants, but those in KNOWN_WARNINGS."""
    warned = {
        (name, number): "; ".join(warnings)
        for name, (_, traces) in _conversions().items()
        for number, trace in enumerate(traces)
        if (warnings := check(trace))
    }
    assert warned == KNOWN_WARNINGS


def test_kp_reads_every_record_of_every_corpus_file() -> None:
    """No record of a real file is 'not a trace file this tool knows' or unreadable: the facts
    can all hold while kp drops lines (a Claude Code SDK session's opening ``queue-operation``
    records did)."""
    unread = {
        name_of(path): [
            item.message
            for item in read([path])
            if isinstance(item, Problem) and not item.warning  # a warning: read, with a caveat
        ]
        for path, _, _ in corpus()
    }
    assert {name: problems for name, problems in unread.items() if problems} == {}


def test_the_corpus_has_files_of_every_folder_and_a_facts_file_each() -> None:
    """Every corpus file has its facts file, counted by count_facts.py (none stale, none lost)."""
    checked = _conversions()
    assert len(checked) >= 60
    assert all(facts["traces"] == len(facts["runs"]) for facts, _ in checked.values())


def test_every_corpus_file_has_its_origin_and_they_come_from_twenty_repositories() -> None:
    """SOURCES.md names each file's repository (one row a file); the public files (not those
    replayed through a framework) come from at least 20 of them."""
    found = origins()
    names = set(_conversions())
    assert names <= found.keys(), f"files without a SOURCES.md row: {names - found.keys()}"
    assert len({found[name] for name in names - replayed()}) >= 20


_BINARY = (".parquet", ".arrow", ".gz", ".zip", ".db", ".eval")
"""Files whose text is not their bytes: a model's name in them is not found by a search."""


def test_the_model_kp_names_is_one_its_file_names() -> None:
    """kp never invents a model: ``metadata.source.model``, when given, is written in the raw
    file (as its JSON text holds it), for every text file of the corpus; and most traces of
    the sources that record one name it."""
    invented, named = {}, 0
    for path, _, _ in corpus():
        if path.is_dir() or path.suffix in _BINARY:
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        for trace in _conversions()[name_of(path)][1]:
            model = (trace.metadata.model_extra or {}).get("source", {}).get("model")
            named += model is not None
            if model is not None and json.dumps(model)[1:-1] not in raw and model not in raw:
                invented[name_of(path)] = model
    assert invented == {}
    assert named >= 300


def test_texts_read_whole_and_then_cut_are_the_traces_read_cut() -> None:
    """``TraceOptions(text_limit=None)`` (a training row's reading) changes nothing but the
    texts' length: each text cut to 8 KB gives the trace read by default, for every corpus
    file; and some corpus texts are longer than that."""
    longer = 0
    for path, _, _ in corpus():
        whole = [
            item.trace
            for item in read([path], options=TraceOptions(text_limit=None))
            if not isinstance(item, Problem)
        ]
        cut = _conversions()[name_of(path)][1]
        assert len(whole) == len(cut), name_of(path)
        for trace, expected in zip(whole, cut, strict=True):
            document = trace.model_dump(mode="json")
            longer += document != expected.model_dump(mode="json")
            document["task"]["objective"] = bounded(document["task"]["objective"])
            document["outcome"]["result_summary"] = bounded(document["outcome"]["result_summary"])
            for step in document["steps"]:
                if step.get("content") is not None:
                    step["content"] = bounded(step["content"])
            assert document == expected.model_dump(mode="json"), name_of(path)
    assert longer >= 40


def test_every_corpus_file_converts_to_the_same_traces_each_time() -> None:
    """A second reading gives the same documents: nothing (a time of conversion) varies."""
    for path, _, _ in corpus():
        again = [item.trace for item in read([path]) if not isinstance(item, Problem)]
        first = _conversions()[name_of(path)][1]
        assert [t.model_dump(mode="json") for t in again] == [
            t.model_dump(mode="json") for t in first
        ], name_of(path)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_every_corpus_trace_written_as_a_trace_file_reads_back_as_itself(
    tmp_path: Path, suffix: str
) -> None:
    """convert -> ReasoningTrace file -> read gives each corpus file's traces again, field for
    field (what ``kp convert`` writes is what ``kp score`` of the converted file reads)."""
    changed = []
    for path, _, _ in corpus():
        target = tmp_path / f"converted{suffix}"
        convert_files([str(path)], target)
        back = [item.trace for item in read([target]) if not isinstance(item, Problem)]
        first = _conversions()[name_of(path)][1]
        if [t.model_dump(mode="json") for t in back] != [t.model_dump(mode="json") for t in first]:
            changed.append(name_of(path))
    assert changed == []


def test_langfuse_observations_fetched_without_their_trace_keep_the_facts(tmp_path: Path) -> None:
    """Each Langfuse export's observations alone (an API page, the UI's observations table
    export, blob storage rows) give its facts.

    Without the trace object the objective is the user's message inside the observations: not
    AutoGen's model call input as OpenLIT flattens it (``system: You are...\nuser: Say 'Hello
    World!'``), nor LlamaIndex's run name where its completion call holds the prompt.
    """
    failing = {}
    for path, folder, facts_path in corpus():
        if folder != "langfuse" or not path.is_relative_to(FILES):
            continue
        observations = json.loads(path.read_text())["observations"]
        facts = json.loads(facts_path.read_text())
        for how in ("page", "table", "rows"):
            fetched = tmp_path / f"{path.stem}.{how}.{'jsonl' if how == 'rows' else 'json'}"
            fetched.write_text(langfuse_fetched(observations, how))
            traces = [item.trace for item in read([fetched]) if not isinstance(item, Problem)]
            failing.update(
                {(name_of(path), how, fact): got for fact, got in _failures(facts, traces).items()}
            )
    assert failing.keys() == LANGFUSE_VARIANT_GAPS.keys(), {
        key: got for key, got in failing.items() if key not in LANGFUSE_VARIANT_GAPS
    }
