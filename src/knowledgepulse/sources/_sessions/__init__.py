"""Agents' own logs and trajectory files, each module one format.

SWE-agent ``.traj`` files, mini-SWE-agent and OpenHands trajectories, Claude Code, Codex, Gemini
CLI and Cline sessions, ATIF and ADP trajectories, Inspect AI evaluation logs, tau2-bench
results files.

Each module reads its format into the shared step rules of
:class:`~knowledgepulse.sources._steps.StepBuilder`; reading needs no dependency.
"""
