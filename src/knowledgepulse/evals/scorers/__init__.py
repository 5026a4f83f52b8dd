"""The built-in scorers; importing this package registers them, as plugins are: by type name."""

from knowledgepulse.evals.scorers.anti_hallucination import AntiHallucination
from knowledgepulse.evals.scorers.content import ContentQuality, OperationResult
from knowledgepulse.evals.scorers.operation_accuracy import OperationAccuracy
from knowledgepulse.evals.scorers.response_time import ResponseTime, ResponseTimeParams
from knowledgepulse.evals.scorers.target_block_precision import TargetBlockPrecision

__all__ = [
    "AntiHallucination",
    "ContentQuality",
    "OperationAccuracy",
    "OperationResult",
    "ResponseTime",
    "ResponseTimeParams",
    "TargetBlockPrecision",
]
