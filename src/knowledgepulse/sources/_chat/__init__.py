"""Conversation datasets as traces: one row, one conversation, its other columns beside it.

The formats curators keep agent runs in, one module each (source names in brackets): OpenAI
Chat Completions messages (``openai-chat``), OpenAI Responses items (``openai-responses``),
Anthropic Messages (``anthropic``), ShareGPT turns and their agent variants (``sharegpt``),
Hermes ``<tool_call>`` text (``hermes``). Each module says what its conversations look like
(``matches``) and what they hold (``tell``); what every format shares (the columns, the
envelope, the reading loop) is :class:`~knowledgepulse.sources._chat._row.ChatSource`. Rows come
from JSON, JSON Lines or Parquet files, or from Python (:func:`knowledgepulse.sources.convert`:
any iterable of row dicts, a ``datasets.Dataset`` included). Each trace keeps the row it came
from, so the row can be written back with ``kp_`` columns (``docs/integrations.md``).
"""
