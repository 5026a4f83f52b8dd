"""The built-in scorers; importing this package registers them, as plugins are: by type name."""

# Each module registers its scorers as it is imported; nothing here is used by name.
from knowledgepulse.evals.scorers import (  # noqa: F401 - imported to register
    anti_hallucination,
    content,
    operation_accuracy,
    response_time,
    target_block_precision,
)
