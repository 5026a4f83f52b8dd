"""smolagents runs as ``ReasoningTrace`` documents, from the run result or the agent's memory.

One line after a run::

    trace = kp.integrations.smolagents.to_trace(agent.run(task, return_full_result=True)).trace

smolagents keeps every step of a run in ``agent.memory`` and gives them as plain dicts
(``RunResult.steps``, ``agent.memory.get_full_steps()``), so nothing here imports smolagents. The
mapping (``docs/integrations.md``): the ``TaskStep``'s task is the objective; a ``PlanningStep``'s
plan and an ``ActionStep``'s ``model_output`` are thoughts; its ``tool_calls`` are tool calls
(``final_answer`` is the answer, not a tool), ``observations`` their result, and its ``error`` an
evident error; ``state == "success"`` is success.

A tool that raises leaves the step's ``tool_calls`` empty (smolagents records them only after every
call returned), so the calls the model asked for are read from ``model_output_message`` then.

The steps' shapes, their field readers and a run read step by step are ``_run.py``; files
``_files.py``; a run handed over live ``_result.py``.
"""

# The one public call: the readers the source registry uses are its private modules'.
from knowledgepulse.sources.smolagents._result import to_trace as to_trace
