"""Coding agents' own logs: SWE-agent ``.traj`` files, Claude Code sessions, Harbor's ATIF.

Each module reads one agent's file format into the shared step rules of
:class:`~knowledgepulse.sources._steps.StepBuilder`; reading needs no dependency.
"""
