"""A scripted stand-in for an LLM summariser, and the few lines that evaluate it.

``summarise`` is what a model call would be in a real workflow: it gets a case's
``instruction`` and ``input`` (a ``TaskInput``) and returns the summary as text. Here it is
rules, so the example runs offline and always gives the same answers:

- ``summarise`` keeps the article's sentences in order while they fit the word budget the
  instruction names, and adds a support line when the instruction asks for one (with a
  "24/7" the article never said, which ``numbers-grounded`` catches);
- ``summarise_briefly`` is a "prompt change" that keeps only the first sentence (regressions);
- ``summarise_sampled`` varies with the run, as a model at a temperature above 0 does: every
  second run drops the last sentence (``--repeat``).

Run it: ``python examples/summaries/workflow.py`` (from the project's root).
"""

from __future__ import annotations

import re
from pathlib import Path

from knowledgepulse.evals import TaskInput

HERE = Path(__file__).parent
SUPPORT_LINE = "Still stuck? Our support team answers 24/7."


def sentences(text: str) -> list[str]:
    """The text's sentences, split after '.', '!' or '?'."""
    return [part for part in re.split(r"(?<=[.!?])\s+", text.strip()) if part]


def budget(instruction: str | None) -> int:
    """The word budget an instruction names ('in at most 50 words'), else 50."""
    found = re.search(r"(\d+) words", instruction or "")
    return int(found.group(1)) if found else 50


def summarise(task: TaskInput) -> str:
    """The article's sentences in order while they fit the budget, plus a support line if asked."""
    limit = budget(task.instruction)
    kept: list[str] = []
    for sentence in sentences(str(task.input)):
        if len(" ".join([*kept, sentence]).split()) <= limit:
            kept.append(sentence)
    if "contact support" in (task.instruction or ""):
        kept.append(SUPPORT_LINE)
    return " ".join(kept)


def summarise_briefly(task: TaskInput) -> str:
    """A worse prompt: only the first sentence survives."""
    return sentences(str(task.input))[0]


def summarise_sampled(task: TaskInput) -> str:
    """Like ``summarise``, but every second run (``task.run`` odd) drops the last sentence."""
    summary = sentences(summarise(task))
    return " ".join(summary[:-1] if task.run % 2 and len(summary) > 1 else summary)


if __name__ == "__main__":
    from knowledgepulse.evals import evaluate
    from knowledgepulse.evals.tasks import load_plugin
    from knowledgepulse.reports.evals import summary_line

    load_plugin(str(HERE / "summary_scorers.py"))
    run = evaluate(summarise, HERE / "cases.jsonl", HERE / "suite.yaml")
    for result in run.cases:
        print("PASS" if result.passed else "FAIL", result.case_id)
    print(summary_line(run))
