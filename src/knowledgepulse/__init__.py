"""knowledgepulse: judge AI agent traces and LLM workflow output, deterministically."""

from knowledgepulse._version import __version__

__all__ = ["__version__"]
