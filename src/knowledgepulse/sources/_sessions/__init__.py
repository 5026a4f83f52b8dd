"""Coding agents' own logs: SWE-agent ``.traj`` files, Claude Code and Codex sessions, ATIF.

Each module reads one agent's file format into the shared step rules of
:class:`~knowledgepulse.sources._steps.StepBuilder`; reading needs no dependency.
"""
