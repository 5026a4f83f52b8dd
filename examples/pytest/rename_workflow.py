"""A stand-in for the workflow under test: the plugin calls `rename` once per case.

A real one would prompt a model with `task.instruction` and `task.pages` and parse its answer
into edit operations; this one renames "Cart" to "Basket" by rule, so the example runs offline.
"""

from typing import Any

from knowledgepulse.evals.tasks import TaskInput


def rename(task: TaskInput) -> dict[str, Any]:
    """One update for every block that mentions Cart, in the bulk-edit output form."""
    return {
        "operations": [
            {
                "type": "update",
                "pageId": page.id,
                "targetBlockId": block.id,
                "content": block.content.replace("Cart", "Basket"),
            }
            for page in task.pages
            for block in page.blocks
            if "Cart" in block.content
        ]
    }
